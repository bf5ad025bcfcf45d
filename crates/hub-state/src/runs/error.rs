//! Why a run of many writers cannot go on.

use super::records::RunRecord;
use crate::StateError;
use std::path::PathBuf;

/// Why a run of many writers cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    State(#[from] StateError),
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    #[error("`{place}` is not a record of hub's: {reason}")]
    Damaged { place: String, reason: String },
    #[error("the state `{state}` is held by {run}, not by this plan")]
    OtherRun { state: String, run: Box<RunRecord> },
    #[error(
        "the state `{state}` is held by {run}, whose components are deployed by pipeline jobs"
    )]
    Open { state: String, run: Box<RunRecord> },
    #[error("no run of plan `{plan}` is open on the state `{state}`")]
    NotOpen { state: String, plan: String },
    #[error("the component `{component}` is being deployed by another job: {holder}")]
    LeaseHeld { component: String, holder: String },
    #[error("the job of `{component}` lost its lease: {reason}")]
    LeaseLost { component: String, reason: String },
    #[error("{run} is being closed by `hub run finish`: no job starts or records any more")]
    Closing { run: Box<RunRecord> },
}

impl RunError {
    pub fn hint(&self) -> Option<String> {
        match self {
            RunError::State(e) => e.hint(),
            RunError::OtherRun { state, run } | RunError::Open { state, run } => Some(format!(
                "close it with `hub run finish --plan {} -s {state}` (also when its pipeline was cancelled: it records what the jobs deployed)",
                run.plan_file
            )),
            RunError::NotOpen { .. } => Some(
                "the run opens with its first job (`hub deploy --plan PLAN -c NAME`); check the plan file and `-s`".into(),
            ),
            RunError::LeaseHeld { .. } => Some(
                "wait for that job to end; a job that is gone leaves its lease to expire (or `hub unlock --force` on it)".into(),
            ),
            RunError::LeaseLost { .. } => Some(
                "nothing more was started or recorded by this job; re-run the job once the other one is done".into(),
            ),
            RunError::Closing { .. } => Some(
                "make a new plan for what is left once `hub run finish` is done".into(),
            ),
            RunError::Io { .. } | RunError::Damaged { .. } => None,
        }
    }

    /// 2 when the state's records could not be written, as a run's.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::State(e) => e.exit_code(),
            RunError::Io { .. } | RunError::LeaseLost { .. } => 2,
            _ => 1,
        }
    }
}

/// The id of a plan: the first 16 hexadecimal digits of the SHA-256 of
/// its file.
pub fn plan_id(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(bytes);
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}
