//! The top-level error: what `main` turns into a message and an exit code.

use hub_elaborate::ElaborateError;
use hub_manifest::diag::Location;
use hub_manifest::ManifestError;
use hub_params::ParamsError;
use hub_state::edit::EditError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Elaborate(Box<ElaborateError>),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Params(#[from] ParamsError),
    #[error(transparent)]
    State(#[from] hub_state::StateError),
    #[error("invalid `{flag}` value `{value}`: {reason}")]
    Usage {
        flag: &'static str,
        value: String,
        reason: String,
    },
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot serialise the result: {0}")]
    Serialise(#[from] yaml_serde::Error),
    #[error("{failed} of {total} file(s) failed validation")]
    Invalid { failed: usize, total: usize },
    #[error(transparent)]
    Process(#[from] hub_engine::child::process::ProcessError),
    #[error(transparent)]
    Otp(#[from] hub_engine::child::otp::OtpError),
    #[error("`{label}` {exit}")]
    ChildExit {
        label: String,
        exit: hub_engine::child::process::Exit,
    },
    #[error("cannot watch for SIGINT and SIGTERM: {0}")]
    Signals(std::io::Error),
    #[error(transparent)]
    Lifecycle(Box<hub_engine::run::error::EngineError>),
    #[error(transparent)]
    Report(#[from] hub_view::report::ReportError),
    #[error(transparent)]
    Render(Box<hub_engine::run::render::RenderError>),
    #[error(transparent)]
    Explain(#[from] crate::explain::ExplainError),
    #[error(transparent)]
    StateCommand(#[from] StateCommandError),
    #[error(transparent)]
    SavedPlan(#[from] hub_plan::plan::saved::SavedPlanError),
    #[error(transparent)]
    Affected(#[from] hub_plan::source::affected::AffectedError),
    #[error(transparent)]
    Folder(#[from] hub_plan::source::folders::NoComponentsThere),
    #[error(transparent)]
    Policy(#[from] hub_policy::PolicyError),
    /// A pipeline job, `hub run finish` (branch `writers`).
    #[error(transparent)]
    Job(Box<hub_engine::run::job::JobError>),
    #[error(transparent)]
    Run(#[from] hub_state::runs::RunError),
    #[error(transparent)]
    Pipeline(#[from] hub_view::pipeline::PipelineError),
    /// `plan --detailed-exitcode` when something would change: exit
    /// status 2; `main` prints nothing for it.
    #[error("the plan would deploy or undeploy components")]
    PlanChanges,
    /// `plan --detailed-exitcode` when components would fail: exit status 1.
    #[error("the plan has {0} problem(s) that would fail the run")]
    PlanFailures(usize),
    /// `--status` matched no component: the run does nothing (and exits
    /// 0; see `commands::check::nothing_with_health`).
    #[error("no component has the health {}", health_words(.0))]
    NoneWithHealth(Vec<hub_state::HealthStatus>),
    /// `hub check` when checks failed: exit status 1.
    #[error("{0} check(s) failed")]
    CheckFailures(usize),
    #[error(transparent)]
    Change(#[from] hub_state::changes::ChangeError),
    /// `ci.apply.requires` of the stack refused an apply of a change.
    #[error(transparent)]
    Requirement(#[from] RequirementError),
    #[error(transparent)]
    ChangeCommand(#[from] ChangeCommandError),
    #[error(transparent)]
    Ci(#[from] crate::ci::CiError),
    /// `hub ci` when the operation failed (1) or was refused (3): the
    /// status line said why; `main` prints nothing more.
    #[error("hub ci: exit status {0}")]
    CiStatus(u8),
    /// An error of `plan --detailed-exitcode`: exit status 1, since 2
    /// means "changes".
    #[error(transparent)]
    Detailed(Box<Error>),
}

impl From<hub_engine::run::error::EngineError> for Error {
    fn from(error: hub_engine::run::error::EngineError) -> Self {
        Error::Lifecycle(Box::new(error))
    }
}

impl From<hub_plan::error::PlanningError> for Error {
    fn from(error: hub_plan::error::PlanningError) -> Self {
        Error::from(hub_engine::run::error::EngineError::from(error))
    }
}

impl From<hub_plan::source::error::SourceError> for Error {
    fn from(error: hub_plan::source::error::SourceError) -> Self {
        Error::from(hub_engine::run::error::EngineError::from(error))
    }
}

impl From<ElaborateError> for Error {
    fn from(error: ElaborateError) -> Self {
        Error::Elaborate(Box::new(error))
    }
}

impl Error {
    /// 1 for every failure the user can fix in their files; 2 for misuse of
    /// the command line.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => 2,
            Error::State(e) => e.exit_code(),
            Error::Lifecycle(e) => e.exit_code(),
            Error::Render(e) => e.exit_code(),
            Error::Job(e) => e.exit_code(),
            Error::Run(e) => e.exit_code(),
            Error::Process(e) => e.exit_code(),
            Error::ChildExit { exit, .. } => exit.shell_code(),
            Error::PlanChanges => 2,
            Error::Pipeline(hub_view::pipeline::PipelineError::LocalState { .. }) => 2,
            Error::Change(e) => e.exit_code(),
            Error::ChangeCommand(ChangeCommandError::NoState) => 2,
            Error::CiStatus(code) => i32::from(*code),
            _ => 1,
        }
    }

    pub fn location(&self) -> Option<Location> {
        match self {
            Error::Elaborate(e) => e.location(),
            Error::Manifest(e) => e.location(),
            Error::Params(e) => e.location(),
            Error::State(e) => e.location(),
            Error::Lifecycle(e) => e.location(),
            Error::Explain(e) => e.location(),
            Error::Detailed(e) => e.location(),
            Error::Policy(e) => e.location(),
            Error::Ci(e) => e.location(),
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Elaborate(e) => e.hint(),
            Error::Manifest(e) => e.hint(),
            Error::Params(e) => e.hint(),
            Error::State(e) => e.hint(),
            Error::Lifecycle(e) => e.hint(),
            Error::Process(e) => e.hint(),
            Error::Otp(e) => e.hint(),
            Error::Report(e) => e.hint(),
            Error::Render(e) => e.hint(),
            Error::Job(e) => e.hint(),
            Error::Run(e) => e.hint(),
            Error::Explain(e) => e.hint(),
            Error::StateCommand(e) => e.hint(),
            Error::SavedPlan(e) => e.hint(),
            Error::Affected(e) => e.hint(),
            Error::Folder(e) => Some(e.hint()),
            Error::Policy(e) => e.hint(),
            Error::Pipeline(e) => Some(e.hint()),
            Error::Usage { flag: "-e", .. } => {
                Some("write overrides as `-e NAME=value,OTHER=value`".into())
            }
            Error::Usage {
                flag: "--encrypted",
                ..
            } => hub_state::crypto::CryptoError::EncryptedWithoutPassword.hint(),
            Error::Usage { flag: "-a", .. } => {
                Some("write additional values as `-a NAME=value,OTHER=value`".into())
            }
            Error::Write { .. } => Some("check that the folder exists and is writable".into()),
            Error::PlanFailures(_) => Some("the plan says why for each of them, under the component it stops or under `would fail before any component starts`".into()),
            Error::CheckFailures(_) => Some(
                "each failed check's output is in `STATE.logs/NAME.check.log`, beside the state"
                    .into(),
            ),
            Error::Detailed(e) => e.hint(),
            Error::Change(e) => e.hint(),
            Error::Requirement(e) => Some(e.hint()),
            Error::ChangeCommand(e) => e.hint(),
            Error::Ci(e) => e.hint(),
            _ => None,
        }
    }
}

/// What `hub state rm` and `mv` refuse, or fail to ask.
#[derive(Debug, thiserror::Error)]
pub enum StateCommandError {
    #[error(transparent)]
    Edit(#[from] EditError),
    #[error("not forgetting {}: there is no terminal to confirm on", quoted(.components))]
    NeedsYes { components: Vec<String> },
    #[error("nothing was forgotten: not confirmed")]
    Declined,
    #[error("cannot ask for confirmation: {0}")]
    Prompt(String),
}

impl StateCommandError {
    pub fn hint(&self) -> Option<String> {
        match self {
            StateCommandError::Edit(error) => error.hint(),
            StateCommandError::NeedsYes { .. } => Some(
                "pass --yes to forget them without asking (nothing is undeployed either way)"
                    .into(),
            ),
            StateCommandError::Declined | StateCommandError::Prompt(_) => None,
        }
    }
}

/// What `hub change unlock` refuses, or fails to ask.
#[derive(Debug, thiserror::Error)]
pub enum ChangeCommandError {
    #[error(
        "the apply lock of change `{id}` was not released: there is no terminal to confirm on"
    )]
    NeedsYes { id: String, state: String },
    #[error("the apply lock was not released: not confirmed")]
    Declined,
    #[error("cannot ask for confirmation: {0}")]
    Prompt(String),
    #[error("`--change` needs a state: the registry of changes is kept beside it (`-n` has none)")]
    NoState,
    #[error("the plan `{plan}` cannot apply: change `{holder}` holds the apply lock since {since} ({why})")]
    LockHeld {
        plan: String,
        holder: String,
        since: String,
        why: &'static str,
        state: String,
    },
}

impl ChangeCommandError {
    pub fn hint(&self) -> Option<String> {
        match self {
            ChangeCommandError::NeedsYes { id, state } => Some(format!(
                "pass --yes to release it without asking: `hub change unlock {id} -s {state} --yes`"
            )),
            ChangeCommandError::NoState => Some("give the state with `-s STATE`".into()),
            ChangeCommandError::LockHeld { holder, state, .. } => {
                let state = hub_state::shell_word(std::path::Path::new(state));
                Some(format!(
                    "once change `{holder}` is merged, run `hub change merged {holder} -s {state}`, then plan again; to release its lock anyway (the stack keeps its work): `hub change unlock {holder} -s {state} --yes`"
                ))
            }
            _ => None,
        }
    }
}

/// The names quoted, comma-separated.
pub(crate) fn quoted(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    names.join(", ")
}

impl From<hub_engine::run::render::RenderError> for Error {
    fn from(error: hub_engine::run::render::RenderError) -> Self {
        Error::Render(Box::new(error))
    }
}

impl From<hub_engine::run::job::JobError> for Error {
    fn from(error: hub_engine::run::job::JobError) -> Self {
        Error::Job(Box::new(error))
    }
}

/// One requirement an apply misses: which, why, and how to meet it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miss {
    pub requirement: &'static str,
    pub reason: String,
    pub fix: String,
}

/// An apply refused by `ci.apply.requires`.
#[derive(Debug, thiserror::Error)]
#[error("change `{id}` cannot be applied: the stack's `ci.apply` requires {}", describe(.misses))]
pub struct RequirementError {
    pub id: String,
    pub misses: Vec<Miss>,
}

fn describe(misses: &[Miss]) -> String {
    misses
        .iter()
        .map(|m| format!("`{}`, and {}", m.requirement, m.reason))
        .collect::<Vec<_>>()
        .join("; it also requires ")
}

impl RequirementError {
    pub fn hint(&self) -> String {
        self.misses
            .iter()
            .map(|m| format!("`{}`: {}", m.requirement, m.fix))
            .collect::<Vec<_>>()
            .join("; ")
    }
}

/// `healthy, drifted`: the words of `--status`, as given.
pub(crate) fn health_words(healths: &[hub_state::HealthStatus]) -> String {
    let words: Vec<&str> = healths.iter().map(|h| h.as_str()).collect();
    words.join(", ")
}
