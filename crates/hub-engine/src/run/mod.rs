//! The engine: a deploy, undeploy or invoke run.
//!
//! The engine walks the plan with the scheduler, runs each component's
//! implementation in its folder and records every step in the state.
//!
//! * [`engine`] — a deploy or undeploy run and each component's pipeline;
//!   [`setup`] — what is checked and read before the first component.
//! * [`known`] — the outputs and capabilities each component sees;
//!   [`records`] — what a run writes into the state; [`logs_ahead`] — the
//!   component log files, created ahead of the components;
//!   [`outputs`] — stack outputs; [`upstream`] — what each component of a
//!   parallel run waits for, directly or not.
//! * [`ready`] — ready conditions (`lifecycle.readyConditions`);
//!   [`hooks`] — scripts run before and after a component (`hooks:`).
//! * [`action`] — what a deploy does with a component (`create`,
//!   `update`, `no-op`, `replace`…), decided once for the engine and
//!   `hub plan`; [`fingerprint`] — what a component's deploy was made of,
//!   for `--changed`; [`digest_cache`] — the digests of unchanged files
//!   kept between runs (`STATE.fingerprints`); [`prune`] — `deploy
//!   --prune`: components the state holds and the stack no longer lists.
//! * [`error`] — what stops a run (the signals a run hears are in
//!   [`crate::child::interrupt`], how long a component may run in
//!   [`hub_plan::timeout`]).
//! * [`invoke`] — `hub invoke`; [`render`] — `hub render`; [`check`] —
//!   `hub check`: each deployed component's `check` verb and its health.

pub mod check;
pub mod engine;
pub mod error;
pub mod hooks;
pub mod invoke;
pub mod job;
pub mod logs_ahead;
pub mod outputs;
pub mod prune;
pub mod ready;
pub(crate) mod recorder;
pub mod render;
pub mod retry;
pub mod setup;
pub mod size;

// Moved to the planning crate (issue 40 item 1), re-exported for the
// engine's paths and the command line.
pub use hub_plan::decide::{action, digest_cache, fingerprint, known, records, upstream};
