//! Running components: the deploy, undeploy and invoke lifecycle. What
//! to do is decided by the planning crate, `hub_plan` (the stack, the
//! schedule, the action plan); this crate executes it. What a person reads
//! about a run is rendered by `hub_view`, which depends on planning alone;
//! the outcome data both speak is `hub_plan::outcome`.
//!
//! * [`run`] — the engine that executes the plan, what each component
//!   sees, and what a run writes into the state; `hub invoke`, `hub
//!   render`, `hub check` and background jobs;
//! * [`child`] — one component's process: its templates, the capture of
//!   its output, the signals that interrupt it;
//! * [`options`] — what a run gets from the process it runs in
//!   ([`options::Host`]);
//! * [`trace`] — OpenTelemetry spans of a run;
//! * [`ci`] — `hub ci`: the pull request's plan and apply, and their
//!   comment.

pub mod child;
pub mod options;
pub mod plan_step;
pub mod run;
pub mod trace;
