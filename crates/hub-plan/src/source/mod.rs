//! Where a run's components come from.
//!
//! * [`stack`] — an elaborated file, or `hub.yaml` and parameters files
//!   elaborated in memory; component folders; [`error`] — what stops
//!   reading it.
//! * [`renamed`] — outputs a component renamed (its `moved`).
//! * [`stale`] — an elaborated file older than what it was made from.
//! * [`discover`] — which implementation a component folder holds.
//! * [`affected`] — the components whose inputs changed in git
//!   (`--affected`).
//! * [`folders`] — `-c` entries that name folders.

pub mod affected;
pub mod discover;
pub mod error;
pub mod folders;
pub mod renamed;
pub mod stack;
pub mod stale;
