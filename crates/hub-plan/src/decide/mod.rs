//! The decisions and facts the planner works from, shared with the engine
//! that executes the plan.
//!
//! * [`fingerprint`] — what a component's deploy was made of, for
//!   `--changed`; [`digest_cache`] — the digests of unchanged files kept
//!   between runs (`STATE.fingerprints`);
//! * [`known`] — the outputs and capabilities each component sees;
//!   [`upstream`] — what each component of a parallel run waits for,
//!   directly or not;
//! * [`records`] — what a run writes into the state (computed here, written
//!   by the engine).

pub mod digest_cache;
pub mod fingerprint;
pub mod known;
pub mod records;
pub mod upstream;
