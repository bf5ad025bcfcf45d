//! What stops planning: reading the stack and the state, locking the
//! parameters, and the checks before a run's first component. The
//! engine's `EngineError` wraps it whole (`EngineError::Planning`), so its
//! message, hint, location and exit code are said here only.

use crate::decide::prune::FolderGone;
use crate::order::requirements::RequirementError;
use crate::order::schedule::ScheduleError;
use crate::plan::guard::Refused;
use crate::plan::moved::MovedError;
use crate::source::error::SourceError;
use hub_manifest::diag::Location;
use hub_params::ParamsError;
use hub_state::{Inconsistency, StateError};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum PlanningError {
    #[error(transparent)]
    Plan(#[from] ScheduleError),
    /// The stack a run works on could not be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    #[error(transparent)]
    Requirements(#[from] RequirementError),
    #[error(transparent)]
    Params(#[from] ParamsError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error("{}", state_required_text(flag, path.as_deref()))]
    StateRequired {
        flag: &'static str,
        path: Option<PathBuf>,
    },
    #[error("{}", state_mismatch_text(problems))]
    StateMismatch {
        path: PathBuf,
        problems: Vec<Inconsistency>,
        /// How to get the recorded values back, when parameters differ.
        fix: Option<String>,
    },
    /// `--prune`: a removed component whose folder is not there to run
    /// its undeploy from.
    #[error(transparent)]
    PruneFolderGone(#[from] FolderGone),
    /// The stack's `moved` entries, against the stack or the state.
    #[error(transparent)]
    Moved(#[from] Box<MovedError>),
    /// `lifecycle.protected`: the plan would destroy a protected component.
    #[error(transparent)]
    Protected(#[from] Box<Refused>),
}

/// `` `-c` needs a state file, and … ``.
fn state_required_text(flag: &str, path: Option<&Path>) -> String {
    format!(
        "`{flag}` needs a state file, and {}",
        match path {
            Some(p) => format!("`{}` does not exist", p.display()),
            None => "`-n/--no-state` was given".to_string(),
        }
    )
}

/// What to do without the state a partial run needs.
const STATE_REQUIRED_HINT: &str =
    "deploy the whole stack first, give the state with `-s`, or add `--force` to run without it";

/// The state's inconsistencies with the stack, one a line.
fn state_mismatch_text(problems: &[Inconsistency]) -> String {
    format!(
        "the state does not belong to this stack:\n{}",
        problems
            .iter()
            .map(|p| format!("  - {p}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// What to do about a state that does not belong to the stack, when no
/// parameter value would fix it.
const STATE_MISMATCH_HINT: &str = "check the `-s` path; add `--force` to use this state anyway";

/// What to do about a schedule error: [`ScheduleError::hint`], and for `-l`
/// before `-o` the swap.
fn plan_hint(error: &ScheduleError) -> Option<String> {
    match error {
        ScheduleError::LimitBeforeOffset {
            offset,
            limit,
            verb,
        } => Some(format!(
            "swap them: `--offset {limit} --limit {offset}`{}",
            if *verb == "undeploy" {
                "; undeploy runs the components in reverse order"
            } else {
                ""
            }
        )),
        e => e.hint(),
    }
}

impl PlanningError {
    /// 2 when the state could not be read as it must be, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            PlanningError::State(e) => e.exit_code(),
            _ => 1,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            PlanningError::Plan(e) => plan_hint(e),
            PlanningError::Source(e) => e.hint(),
            PlanningError::Requirements(e) => Some(e.hint()),
            PlanningError::Params(e) => e.hint(),
            PlanningError::State(e) => e.hint(),
            PlanningError::StateRequired { .. } => Some(STATE_REQUIRED_HINT.into()),
            PlanningError::StateMismatch { fix: Some(fix), .. } => Some(fix.clone()),
            PlanningError::StateMismatch { .. } => Some(STATE_MISMATCH_HINT.into()),
            PlanningError::PruneFolderGone(gone) => gone.hint(),
            PlanningError::Protected(refused) => Some(refused.hint()),
            PlanningError::Moved(moved) => Some(moved.problem.hint()),
        }
    }

    pub fn location(&self) -> Option<Location> {
        match self {
            PlanningError::Params(e) => e.location(),
            PlanningError::State(e) => e.location(),
            PlanningError::StateMismatch { path, .. } => Some(Location::file(path)),
            PlanningError::Source(e) => e.location(),
            PlanningError::Protected(refused) => refused.at.clone(),
            PlanningError::Moved(moved) => moved.at.clone(),
            _ => None,
        }
    }
}
