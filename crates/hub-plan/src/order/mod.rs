//! What runs, and in which order.
//!
//! * [`schedule`] — the [`Schedule`] of a run: structural checks, order,
//!   selection (`-c`, `-o`, `-l`, the undeploy guess), optional components,
//!   requirement tuning. Not the action plan ([`crate::plan::Plan`]).
//! * [`select`] — the `-c` entries, `--affected`, and what they pull in
//!   (`app+`, `+app`, `lifecycle.wants`).
//! * [`edges`] — why a component waits for another (depends, requires,
//!   outputs read, the written order).
//! * [`scheduler`] — who waits for whom, waves, the scheduler (`-j`).
//! * [`requirements`] — the stack's `requires` against the environment;
//!   [`clouds`] — `--clouds`: the cloud requirements that are checked.

pub mod clouds;
pub mod edges;
pub mod requirements;
pub mod schedule;
pub mod scheduler;
pub(crate) mod select;
pub(crate) mod verb;

pub use schedule::{Schedule, ScheduleError, Selection};
pub use verb::Verb;
