//! The decisions and facts the planner works from, shared with the engine
//! that executes the plan.
//!
//! * [`action`] — what a deploy does with a component, decided once for
//!   `hub plan` and the engine;
//! * [`fingerprint`] — what a component's deploy was made of, for
//!   `--changed`; [`digest_cache`] — the digests of unchanged files kept
//!   between runs (`STATE.fingerprints`);
//! * [`hooks`] — which hooks a verb triggers and where their scripts are;
//! * [`known`] — the outputs and capabilities each component sees;
//!   [`upstream`] — what each component of a parallel run waits for,
//!   directly or not;
//! * [`prune`] — the components the state holds and the stack no longer
//!   lists;
//! * [`retry`] — `lifecycle.retry` read and described;
//! * [`records`] — what a run writes into the state (computed here, written
//!   by the engine).

pub mod action;
pub mod digest_cache;
pub mod fingerprint;
pub mod hooks;
pub mod known;
pub mod prune;
pub mod records;
pub mod retry;
pub mod upstream;
