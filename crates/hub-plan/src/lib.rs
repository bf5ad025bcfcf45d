//! Planning: everything hub decides before a component runs. It reads, and
//! never runs a component's process.
//!
//! * [`source`] — the stack of a run and its component folders;
//! * [`order`] — which components are selected and in which order and
//!   waves they run (the schedule), its edges, the scheduler, and the
//!   requirements the environment must meet;
//! * [`plan`] — the action plan: what happens to each component and on
//!   what condition, made once by the planner, then rendered, saved or
//!   executed; its guards, `moved`, the preflight and saved plans;
//! * [`options`] — what a run is asked to do;
//! * [`checks`] — the checks and reads before a run's first component that
//!   `hub plan` shares with the engine; [`error`] — what stops planning
//!   ([`error::PlanningError`]);
//! * [`timeout`] — how long a component may run (`lifecycle.timeouts`,
//!   `--timeout`), read by the schedule, the planner and the engine;
//! * [`env`](mod@env) — the environment a component's process will see
//!   (computed here, used by the engine when it starts the process);
//! * [`terraform`] — which Terraform binary a component uses;
//! * [`decide`] — fingerprints, the digest cache, upstream ancestry, the
//!   outputs each component sees and what a run records;
//! * [`outcome`] — what a run reports (each component's outcome, the
//!   summary, where output lines go, log marks): made by the running
//!   crate, rendered by the views, so neither depends on the other;
//! * [`change`] — the change (pull or merge request) a plan is made for.
//!
//! The running crate, `hub-engine`, depends on this one; this crate never
//! imports it.

pub mod change;
pub mod checks;
pub mod decide;
pub mod env;
pub mod error;
pub mod options;
pub mod order;
pub mod outcome;
pub use order::{Schedule, Verb};
pub mod plan;
pub mod source;
pub mod terraform;
pub mod timeout;

/// Whether a `-c` entry names a folder (it has a `/`, or is `.` or `..`)
/// rather than a component: what the command line's parser of `-c` asks.
pub use source::folders::is_folder;
