//! Where a run's components come from.
//!
//! * [`stack`] — an elaborated file, or `hub.yaml` and parameters files
//!   elaborated in memory; component folders.
//! * [`stale`] — an elaborated file older than what it was made from.
//! * [`discover`] — which implementation a component folder holds.

pub mod discover;
pub mod stack;
pub mod stale;
