//! The engine: a deploy, undeploy or invoke run.
//!
//! The engine walks the plan with the scheduler, runs each component's
//! implementation in its folder and records every step in the state.
//!
//! * [`engine`] — a deploy or undeploy run and each component's pipeline;
//!   [`setup`] — what is checked and read before the first component.
//! * [`logs_ahead`] — the component log files, created ahead of the
//!   components; [`outputs`] — stack outputs. What each component sees,
//!   what a run records and what a component of a parallel run waits for
//!   are decided in `hub_plan::decide`.
//! * [`ready`] — ready conditions (`lifecycle.readyConditions`);
//!   [`hooks`] — scripts run before and after a component (`hooks:`).
//! * [`prune`] — `deploy --prune`: undeploying components the state holds
//!   and the stack no longer lists (which ones: `hub_plan::decide::prune`).
//!   What a deploy does with a component, fingerprints and the digest
//!   cache are the planner's (`hub_plan::decide`).
//! * [`error`] — what stops a run (the signals a run hears are in
//!   [`crate::child::interrupt`], how long a component may run in
//!   [`hub_plan::timeout`]).
//! * [`invoke`] — `hub invoke`; [`render`] — `hub render`; [`check`] —
//!   `hub check`: each deployed component's `check` verb and its health.

pub mod check;
pub mod engine;
pub mod error;
pub(crate) mod hooks;
pub mod invoke;
pub mod job;
pub(crate) mod logs_ahead;
pub(crate) mod outputs;
pub(crate) mod prune;
pub(crate) mod ready;
pub(crate) mod recorder;
pub mod render;
pub(crate) mod retry;
pub(crate) mod setup;
pub(crate) mod size;
