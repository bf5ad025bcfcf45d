//! The run of a saved plan deployed by many writers: pipeline jobs, one
//! per component (`hub deploy --plan PLAN -c NAME`), closed by
//! `hub run finish`.
//!
//! Beside the state, `STATE.run/` (a folder; on object storage the
//! objects under `KEY.run/`) holds:
//!
//! * `run.json` — the run record: which plan (its id, the digest of the
//!   plan file), its file, the stack, when and by whom it was opened.
//!   Created only if absent by the first job; every later job of the same
//!   plan joins it, a job of another plan is refused. While it is there,
//!   other plans and deploys of the state are refused, naming the command
//!   that closes it.
//! * `NAME.lock` — the lease of the job deploying the component `NAME`:
//!   a lock like the state's own (`STATE.lock`: created only if absent,
//!   the same checks against links and other users' files, a lease
//!   renewed on object storage), on this one component. A job proves it
//!   still holds it before starting the component and before recording
//!   the result (fencing).
//! * `NAME.job` — what the job recorded: the component's state entry
//!   after the run, its outputs and capabilities, whether it deployed or
//!   failed. One object per component, written only under its lease, so
//!   two jobs never write the same object: records never conflict across
//!   writers. The next jobs read them; `hub run finish` folds them into
//!   the state, under the state's own lock (single writer, conditional
//!   write), and removes the folder.

mod error;
mod lease;
mod place;
mod records;

pub use error::{plan_id, RunError};
pub use lease::{busy, Lease};
pub use place::{Opened, RunPlace};
pub use records::{JobRecord, RunRecord, DEPLOYED, FAILED};

#[cfg(test)]
mod tests;
