//! Running components: the deploy, undeploy and invoke lifecycle.
//!
//! Data flows one way, through five rooms:
//!
//! * [`source`] — the stack of a run and its component folders;
//! * [`order`] — what runs and in which order: the plan, its edges, the
//!   scheduler, and the requirements the environment must meet;
//! * [`run`] — the engine that walks the plan, what each component sees,
//!   and what a run writes into the state;
//! * [`child`] — one component's process: its environment, its templates,
//!   the capture of its output;
//! * [`view`] — what a person or a script reads about a run: live progress,
//!   the summary, the JSON report, `hub graph` and `hub plan`.

pub mod child;
pub mod options;
pub mod order;
pub mod outcome;
pub mod plan;
pub mod run;
pub mod source;
pub mod view;
