//! Running components: the deploy, undeploy and invoke lifecycle. What
//! to do is decided by the planning crate, `hub_plan` (the stack, the
//! schedule, the action plan); this crate executes it.
//!
//! Data flows one way:
//!
//! * [`source`] — the stack of a run and its component folders;
//! * [`order`] — which components are selected and in which order and
//!   waves they run (the schedule), its edges, the scheduler, and the
//!   requirements the environment must meet;
//! * [`plan`] — the action plan: what happens to each component and on
//!   what condition, made once by the planner, then rendered, saved or
//!   executed;
//! * [`run`] — the engine that executes the plan, what each component
//!   sees, and what a run writes into the state;
//! * [`child`] — one component's process: its environment, its templates,
//!   the capture of its output, the signals that interrupt it;
//! * [`timeout`] — how long a component may run (`lifecycle.timeouts`,
//!   `--timeout`), read by the schedule, the planner and the engine;
//! * [`outcome`] and [`options`] — plain data between the command line,
//!   the engine and the views;
//! * [`view`] — what a person or a script reads about a run: live progress,
//!   the summary, the JSON report, `hub graph` and `hub plan`. The engine
//!   never imports a view, and a view never imports the engine.

pub mod change;
pub mod child;
pub mod options;
pub mod outcome;
pub(crate) mod plan;
pub mod policy;
pub mod run;
pub mod trace;
pub mod view;
