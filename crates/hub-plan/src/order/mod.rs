//! What runs, and in which order.
//!
//! * [`plan`] — structural checks, order, selection (`-c`, `-o`, `-l`, the
//!   undeploy guess), optional components, requirement tuning.
//! * [`select`] — the `-c` entries, `--affected`, and what they pull in
//!   (`app+`, `+app`, `lifecycle.wants`).
//! * [`edges`] — why a component waits for another (depends, requires,
//!   outputs read, the written order).
//! * [`schedule`] — who waits for whom, waves, the scheduler (`-j`).
//! * [`requirements`] — the stack's `requires` against the environment;
//!   [`clouds`] — `--clouds`: the cloud requirements that are checked.

pub mod clouds;
pub mod edges;
pub mod plan;
pub mod requirements;
pub mod schedule;
pub(crate) mod select;
pub(crate) mod verb;
