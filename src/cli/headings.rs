//! The headings `--help` groups the rarer flags under; `-h` leaves the
//! flags under them out (`hide_short_help`), so that it fits a screen.

/// The flags `-h` leaves out: how the stack is read, how the state is
/// written, how components run.
pub(super) const MORE: &str = "More options (not in -h)";
/// The flags that apply a saved plan or a change.
pub(super) const PLANS: &str = "Saved plans, pipelines and changes (not in -h)";
/// The Hub CLI's flags that are accepted and have no effect.
pub(super) const COMPATIBILITY: &str = "Hub CLI compatibility (not in -h)";
