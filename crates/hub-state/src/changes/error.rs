//! What the change registry refuses, or fails to read or write.

use crate::{beside::Planted, StateError};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ChangeError {
    #[error("cannot {action} `{}`: {source}", path.display())]
    Io {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    #[error("the change registry's document `{path}` cannot be read: {reason}")]
    Corrupt { path: String, reason: String },
    #[error("cannot encode a change record: {0}")]
    Encode(String),
    #[error(transparent)]
    State(#[from] StateError),
    /// `shown` is the value made inert ([`super::inert`]) and cut short.
    #[error("`{shown}` is not {}: {reason} (from `{given}`)", field.what())]
    BadValue {
        field: super::field::Field,
        /// Where it came from: `--change`, `--sha`, `$GITHUB_ACTOR`, ….
        given: String,
        shown: String,
        reason: &'static str,
    },
    #[error("change `{id}` cannot apply: another apply of it is running: {holder}")]
    Applying {
        id: String,
        holder: Box<crate::lock::LockInfo>,
    },
    /// A plan refused while an apply runs (`error`: the state's lock
    /// error that says who).
    #[error("{error}")]
    ApplyWaiting {
        error: Box<StateError>,
        change: String,
        path: String,
        state: String,
        elsewhere: bool,
    },
    #[error("the marker of an apply about to run, `{path}`, cannot be read: {reason}")]
    UnreadableWaiting { path: String, reason: String },
    #[error("change `{id}` has no plan to apply: `hub deploy --change` applies the latest plan recorded for it")]
    NoPlan {
        id: String,
        state: String,
        stack: Box<str>,
    },
    #[error("change `{id}` cannot apply: its latest plan (made at {time}) failed: {reason}")]
    PlanFailed {
        id: String,
        time: String,
        reason: String,
        state: String,
        /// The stack's files, as a command line gives them.
        stack: Box<str>,
    },
    #[error("change `{id}` cannot apply: its latest plan (made at {time}) is stale: {reason}")]
    PlanStale {
        id: String,
        time: String,
        reason: String,
        state: String,
        /// The stack's files, as a command line gives them.
        stack: Box<str>,
    },
    #[error("change `{id}` cannot apply: its latest plan is a plan to {planned}, not to {verb}")]
    WrongVerb {
        id: String,
        planned: String,
        verb: String,
        state: String,
        /// The stack's files, as a command line gives them.
        stack: Box<str>,
    },
    #[error(
        "change `{id}` cannot apply: change `{holder}` holds the apply lock since {since} ({why})"
    )]
    Held {
        id: String,
        holder: String,
        since: String,
        why: &'static str,
        state: String,
    },
    #[error("`hub {verb}` refused: change `{holder}` holds the apply lock since {since} ({why})")]
    HeldAgainstRun {
        verb: &'static str,
        holder: String,
        since: String,
        why: &'static str,
        state: String,
        /// The stack's files, as a command line gives them.
        stack: Box<str>,
    },
    #[error("change `{id}` cannot be closed while it holds the apply lock: it applied at {time}, so the stack holds its unmerged work")]
    ClosedWithApplies {
        id: String,
        time: String,
        state: String,
    },
    #[error("change `{id}` has no records in `{registry}`")]
    Unknown { id: String, registry: String },
}

impl ChangeError {
    pub(super) fn corrupt(path: String, error: serde_json::Error) -> ChangeError {
        ChangeError::Corrupt {
            path,
            reason: error.to_string(),
        }
    }

    pub(super) fn encode(error: serde_json::Error) -> ChangeError {
        ChangeError::Encode(error.to_string())
    }

    /// 1: every refusal is the user's to resolve; a state error keeps its
    /// own.
    pub fn exit_code(&self) -> i32 {
        match self {
            ChangeError::State(e) => e.exit_code(),
            ChangeError::ApplyWaiting { error, .. } => error.exit_code(),
            ChangeError::Io { .. } => 2,
            _ => 1,
        }
    }

    /// The command that resolves it.
    pub fn hint(&self) -> Option<String> {
        let s = |state: &String| crate::shell_word(std::path::Path::new(state));
        Some(match self {
            ChangeError::State(e) => return e.hint(),
            ChangeError::Io { source, .. } => match Planted::of(source) {
                Some(_) => Planted::hint().to_string(),
                None => return None,
            },
            ChangeError::Corrupt { .. } => "the registry is hub's own JSON; restore the document from a backup, or remove it (its record is then forgotten)".into(),
            ChangeError::Encode(_) => return None,
            ChangeError::BadValue { field, .. } => field.fix().into(),
            ChangeError::Applying { .. } => "wait for that apply to end, then look at its outcome with `hub change show`; nothing was run or recorded for this one".into(),
            ChangeError::ApplyWaiting { change, path, state, elsewhere, .. } => {
                let mut hint = format!("an apply of change `{change}` runs on this state: plan again once it ends (`--lock-timeout 5m` waits up to five minutes); `hub change show {change} -s {}` shows its outcome", s(state));
                if *elsewhere {
                    hint.push_str(&format!("; it runs on another host: its marker `{path}` stops counting a minute after that apply's wait for the state's lock, or remove the marker if that apply is gone"));
                }
                hint
            }
            ChangeError::UnreadableWaiting { path, .. } => format!("hub writes this marker while an apply of a change runs, and removes it after; if no apply runs on this state, remove `{path}` (after finding out who wrote it)"),
            ChangeError::NoPlan { id, state, stack } => format!("plan it first: `hub plan {stack} -s {} --change {id}`", s(state)),
            ChangeError::PlanFailed { id, state, stack, .. } => format!("fix what failed, then plan again: `hub plan {stack} -s {} --change {id}`", s(state)),
            ChangeError::PlanStale { id, state, stack, .. } => format!("plan again on top of what is deployed now: `hub plan {stack} -s {} --change {id}`", s(state)),
            ChangeError::WrongVerb { id, verb, state, stack, .. } => format!("plan it as it is to run: `hub plan {stack} -s {} --change {id}{}`", s(state), if verb == "undeploy" { " --undeploy" } else { "" }),
            ChangeError::Held { holder, state, .. } => format!("once change `{holder}` is merged, run `hub change merged {holder} -s {}`; to release its lock anyway (the stack keeps its work): `hub change unlock {holder} -s {} --yes`", s(state), s(state)),
            ChangeError::HeldAgainstRun { verb, holder, state, stack, .. } => format!("the stack holds change `{holder}`'s work, not merged yet: {verb} through that change (`hub plan {stack} --change {holder} -s {0}`, then `hub {verb} {stack} --change {holder} -s {0}`), or once it is merged run `hub change merged {holder} -s {0}`; `--ignore-change-lock` runs anyway, over that work", s(state)),
            ChangeError::ClosedWithApplies { id, state, .. } => format!("revert its work (plan and apply the default branch as change `{id}`, then merge), or release the lock knowingly with `hub change unlock {id} -s {} --yes`", s(state)),
            ChangeError::Unknown { .. } => "`hub change list -s STATE` lists the changes the registry knows".into(),
        })
    }
}
