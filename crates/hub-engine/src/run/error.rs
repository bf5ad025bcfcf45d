//! What stops a deploy, undeploy or invoke, with where to look and how to
//! fix it.

use crate::child::interrupt::signal_name;
use crate::child::process::{Exit, ProcessError};
use hub_elaborate::ElaborateError;
use hub_manifest::diag::Location;
use hub_manifest::ManifestError;
use hub_params::ParamsError;
use hub_plan::error::PlanningError;
use hub_plan::order::requirements::RequirementError;
use hub_plan::order::schedule::ScheduleError;
use hub_plan::source::discover::DiscoverError;
use hub_plan::source::error::SourceError;
use hub_state::StateError;
use std::path::PathBuf;

/// The exit code of a run stopped by `signal`, as a shell reports a
/// process the signal ended: 130 for SIGINT, 143 for SIGTERM.
pub(crate) fn interrupted_exit(signal: i32) -> i32 {
    128 + signal
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Elaborate(Box<ElaborateError>),
    /// What stops planning (reading the stack and the state, locking the
    /// parameters, the checks before the first component), with its own
    /// message, hint, location and exit code.
    #[error(transparent)]
    Planning(#[from] PlanningError),
    /// The parameters alone would take the state past the size every
    /// command reads it with (see [`super::size`]).
    #[error("the state this deploy would write is about {}, more than the {} a state is read with:\n{}", super::size::mebibytes(*estimate), super::size::mebibytes(*limit), heaviest.iter().map(|w| format!("  - {}", super::size::describe(w))).collect::<Vec<_>>().join("\n"))]
    StateTooLarge {
        estimate: u64,
        limit: u64,
        heaviest: Vec<super::size::Weight>,
    },
    #[error("plan is stale: the state `{}` changed while the deploy waited for its lock; run `hub plan` again", path.display())]
    StateMoved { path: PathBuf },
    /// `--prune`: removed components whose undeploy failed; their entries
    /// are kept.
    #[error("{} could not be pruned: {}{}", if failed.len() == 1 { "a removed component" } else { "removed components" }, failures_text(failed), cancelled_text(cancelled))]
    PruneFailed {
        failed: Vec<(String, String)>,
        /// Removed components left because one that depends on them failed.
        cancelled: Vec<String>,
    },
    /// The preflight found what the run would stop on: nothing ran.
    #[error("{}", preflight_text(problems))]
    Preflight {
        problems: Vec<hub_plan::plan::preflight::PreflightProblem>,
    },
    #[error("component `{component}`: {source}")]
    Implementation {
        component: String,
        source: DiscoverError,
    },
    #[error("component `{component}` failed: {reason}")]
    ComponentFailed {
        component: String,
        reason: String,
        /// What to change, when the reason alone does not tell it.
        fix: Option<String>,
    },
    #[error(
        "the stack is incomplete: {}{}",
        failures_text(failed),
        cancelled_text(cancelled)
    )]
    Incomplete {
        failed: Vec<(String, String)>,
        cancelled: Vec<String>,
        verb: &'static str,
    },
    #[error("{} by {}; the state records the run as interrupted", match component { Some(c) => format!("`{c}` was interrupted"), None => "the run was interrupted".to_string() }, signal_name(*signal))]
    Interrupted {
        component: Option<String>,
        signal: i32,
    },
    #[error(transparent)]
    Process(#[from] ProcessError),
    #[error("`{component}` does not implement verb `{verb}` (its `lifecycle.verbs`: {})", verbs.join(", "))]
    VerbNotListed {
        component: String,
        verb: String,
        verbs: Vec<String>,
    },
    #[error("component `{component}` is not in the stack (components: {})", available.join(", "))]
    UnknownComponent {
        component: String,
        available: Vec<String>,
    },
    #[error("`{component} {verb}` {exit}")]
    InvokeFailed {
        component: String,
        verb: String,
        exit: crate::child::process::Exit,
    },
    #[error("`{component} {verb}` {limit}")]
    InvokeTimedOut {
        component: String,
        verb: String,
        limit: hub_plan::timeout::Limit,
    },
    #[error("{what} is required: {how}")]
    Missing {
        what: &'static str,
        how: &'static str,
    },
    #[error("the stack is not ready: {reason}")]
    NotReady { reason: String },
    #[error("cannot watch for interrupts: {0}")]
    Signals(std::io::Error),
    #[error(transparent)]
    BadRetry(#[from] hub_plan::decide::retry::BadRetry),
}

/// The errors planning wraps, met by the engine too (`?` on a state
/// read, a schedule): the engine's error through the planning one, with
/// the same message, hint, location and exit code.
macro_rules! through_planning {
    ($($error:ty),* $(,)?) => {$(
        impl From<$error> for EngineError {
            fn from(error: $error) -> Self {
                EngineError::Planning(PlanningError::from(error))
            }
        }
    )*};
}

through_planning!(
    ScheduleError,
    SourceError,
    RequirementError,
    ParamsError,
    StateError,
    hub_plan::decide::prune::FolderGone,
    Box<hub_plan::plan::moved::MovedError>,
    Box<hub_plan::plan::guard::Refused>,
);

impl From<ElaborateError> for EngineError {
    fn from(error: ElaborateError) -> Self {
        EngineError::Elaborate(Box::new(error))
    }
}

impl EngineError {
    /// 130 after SIGINT, 143 after SIGTERM, 2 when the state could not be written, the
    /// component's own code for a failed invoke, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            EngineError::Interrupted { signal, .. } => interrupted_exit(*signal),
            EngineError::Planning(e) => e.exit_code(),
            EngineError::InvokeFailed { exit, .. } => match exit.shell_code() {
                0 => 1,
                code => code,
            },
            EngineError::InvokeTimedOut { .. } => Exit::TimedOut.shell_code(),
            _ => 1,
        }
    }

    pub fn location(&self) -> Option<Location> {
        match self {
            EngineError::Manifest(e) => e.location(),
            EngineError::Elaborate(e) => e.location(),
            EngineError::Planning(e) => e.location(),
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            EngineError::Manifest(e) => e.hint(),
            EngineError::Elaborate(e) => e.hint(),
            EngineError::Planning(e) => e.hint(),
            EngineError::Process(e) => e.hint(),
            EngineError::StateMoved { .. } => Some("nothing was run and the state is untouched: another run wrote it after the plan was checked".into()),
            EngineError::StateTooLarge { .. } => Some(
                "nothing ran; give the components a file that holds a large value (its path as the parameter) instead of the value, or give the value to fewer components (or raise the limit with `HUB_MAX_STATE_BYTES`, a number of bytes, the same for every command that reads this state)".into(),
            ),
            EngineError::PruneFailed { .. } => Some(
                "their entries are kept: see their output above and their log files, fix them and run `hub deploy --prune` again".into(),
            ),
            EngineError::Implementation { source, .. } => source.hint(),
            EngineError::Preflight { problems } => Some(preflight_hint(problems)),
            EngineError::ComponentFailed { component, reason, fix } => {
                Some(component_failed_hint(component, reason, fix.as_deref()))
            }
            EngineError::Incomplete { verb: "deploy", .. } => Some(
                "the other components finished; after fixing the failures, `hub deploy --changed` runs only what did not deploy or changed".into(),
            ),
            EngineError::Incomplete { verb, .. } => Some(format!(
                "the other components finished; `hub {verb}` again after fixing the failures"
            )),
            EngineError::Interrupted { component: Some(c), .. } => {
                Some(format!("run again to finish; `--offset {c}` resumes at the interrupted component"))
            }
            EngineError::Interrupted { .. } => Some("run again to finish".into()),
            EngineError::VerbNotListed { .. } => {
                Some("add the verb to the component's `lifecycle.verbs`, or add `--force`".into())
            }
            EngineError::InvokeTimedOut { component, limit, .. } => Some(limit.fix(component)),
            EngineError::UnknownComponent { .. } => Some("use a name from the stack's `components:` list".into()),
            EngineError::NotReady { .. } => {
                Some("check the stack's `lifecycle.readyConditions`; `--force` accepts a stack that is not ready".into())
            }
            EngineError::BadRetry(bad) => Some(bad.hint()),
            _ => None,
        }
    }
}

/// What to do about a failed component, by what its failure says, and how
/// to resume.
fn component_failed_hint(component: &str, reason: &str, fix: Option<&str>) -> String {
    let spawn_failure = reason
        .strip_prefix("cannot run `")
        .and_then(|rest| rest.split_once('`'))
        .filter(|(_, rest)| rest.contains("Permission denied"))
        .map(|(program, _)| program);
    // A saved plan's refusal: resuming the same plan does not help.
    if let (Some(fix), true) = (fix, reason.starts_with("refused: ")) {
        return fix.to_string();
    }
    let fix = if let Some(fix) = fix {
        fix.to_string()
    } else if let Some(program) = spawn_failure {
        format!("make the script executable: `chmod +x {program}`")
    } else if reason.contains("cannot be expanded:") {
        "declare or fix the parameters listed above in the stack or a parameters file".to_string()
    } else {
        "see the component's output above and its log file, and fix it".to_string()
    };
    format!("{fix}; then run again with `--offset {component}` to resume there, or add `--force` to go on after failures")
}

/// "`b` failed: exit code 3; `c` failed: …"
fn failures_text(failed: &[(String, String)]) -> String {
    failed
        .iter()
        .map(|(name, reason)| {
            let first = reason.lines().next().unwrap_or_default();
            format!("`{name}` failed: {first}")
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// "; not run because of them: `d`, `e`"
fn cancelled_text(cancelled: &[String]) -> String {
    if cancelled.is_empty() {
        return String::new();
    }
    let names: Vec<String> = cancelled.iter().map(|n| format!("`{n}`")).collect();
    format!("; not run because of them: {}", names.join(", "))
}

/// One problem as it is; several as a list.
fn preflight_text(problems: &[hub_plan::plan::preflight::PreflightProblem]) -> String {
    match problems {
        [one] => one.to_string(),
        many => {
            // A problem of several lines keeps them under its own bullet.
            let lines: Vec<String> = many
                .iter()
                .map(|p| format!("\n  - {}", under_bullet(&p.to_string())))
                .collect();
            format!(
                "{} problems found before any component started:{}",
                many.len(),
                lines.concat()
            )
        }
    }
}

/// The lines after a problem's first, set under its bullet.
fn under_bullet(text: &str) -> String {
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default().to_string();
    lines.fold(head, |all, line| {
        format!("{all}\n    {}", line.trim_start())
    })
}

/// Nothing ran; what to do about each problem, each once.
fn preflight_hint(problems: &[hub_plan::plan::preflight::PreflightProblem]) -> String {
    let mut hints: Vec<&str> = Vec::new();
    for problem in problems {
        if !hints.contains(&problem.hint.as_str()) {
            hints.push(&problem.hint);
        }
    }
    format!(
        "{}; nothing ran and the state is untouched (`hub plan` shows the same)",
        hints.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A planning error says the same as the engine's error made from it.
    fn same(planning: PlanningError) {
        let (text, hint, location, code) = (
            planning.to_string(),
            planning.hint(),
            planning.location().map(|l| l.to_string()),
            planning.exit_code(),
        );
        let engine = EngineError::from(planning);
        assert_eq!(engine.to_string(), text);
        assert_eq!(engine.hint(), hint);
        assert_eq!(engine.location().map(|l| l.to_string()), location);
        assert_eq!(engine.exit_code(), code);
    }

    #[test]
    fn a_planning_error_keeps_its_message_hint_and_location_in_the_engine() {
        same(PlanningError::StateRequired {
            flag: "-c",
            path: Some(PathBuf::from("/no/such/state")),
        });
        same(PlanningError::StateRequired {
            flag: "-o",
            path: None,
        });
        same(PlanningError::StateMismatch {
            path: PathBuf::from("state.yaml"),
            problems: Vec::new(),
            fix: Some("give `x` the value `1` again".into()),
        });
        same(PlanningError::StateMismatch {
            path: PathBuf::from("state.yaml"),
            problems: Vec::new(),
            fix: None,
        });
        same(PlanningError::Plan(ScheduleError::LimitBeforeOffset {
            offset: "b".into(),
            limit: "a".into(),
            verb: "undeploy",
        }));
    }
}
