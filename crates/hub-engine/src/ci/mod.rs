//! `hub ci`: the event of the CI system hub runs in (a GitHub Actions
//! workflow, a GitLab merge-request pipeline), turned into what to do: an
//! [`Operation`]; and the pull-request comment that says what was done
//! ([`comment`]). Pure code: the caller gives the environment and the
//! payload's text; nothing here runs a component, a process or `git`.

mod command;
pub mod comment;
mod github;
mod gitlab;
#[cfg(test)]
mod tests;

pub use command::{parse_command, Command, Verb};

use crate::change::ChangeContext;
use hub_manifest::diag::Location;
use std::path::{Path, PathBuf};

/// The CI system an event comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    GitHub,
    GitLab,
}

impl Platform {
    pub fn as_str(self) -> &'static str {
        match self {
            Platform::GitHub => "GitHub",
            Platform::GitLab => "GitLab",
        }
    }

    /// What the platform calls a change.
    pub fn change_noun(self) -> &'static str {
        match self {
            Platform::GitHub => "pull request",
            Platform::GitLab => "merge request",
        }
    }
}

/// What the CI system says happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub platform: Platform,
    /// `pull_request.opened`, `issue_comment.created`,
    /// `merge_request_event`, …
    pub name: String,
    /// The number of the pull or merge request, when the event concerns one.
    pub change: Option<String>,
    /// The commit the change is at, when the event says.
    pub sha: Option<String>,
    /// The commit the change is compared with (its base), when the event says.
    pub base: Option<String>,
    /// Who caused the event: the comment's author, the pull request's
    /// author, the user who started the pipeline.
    pub author: Option<String>,
    /// How the author is associated with the repository, as GitHub says it
    /// (`OWNER`, `MEMBER`, `COLLABORATOR`, `CONTRIBUTOR`, `NONE`, …);
    /// `None` when the platform does not say.
    pub association: Option<String>,
    pub request: Request,
}

impl Event {
    /// The change this event is about, for the change registry and policies.
    pub fn change_context(&self) -> Option<ChangeContext> {
        self.change.as_ref().map(|id| ChangeContext {
            id: id.clone(),
            sha: self.sha.clone(),
            author: self.author.clone(),
            event: Some(self.name.clone()),
        })
    }
}

/// What the event asks of hub, before anyone's rights are looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Opened, pushed to, reopened: plan what the change touches.
    Autoplan,
    /// A `hub plan`, `hub apply` or `hub unlock` comment.
    Command(Command),
    /// A comment that starts with `hub` but is not a command hub knows:
    /// answered with the reason.
    Invalid(String),
    /// Merged into its target branch.
    Merged,
    /// Closed without being merged.
    Closed,
    /// An event hub has nothing to do for, and why.
    Ignored(String),
}

/// Who may apply and unlock: authors with one of these associations, and
/// these logins whatever their association.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub associations: Vec<String>,
    pub users: Vec<String>,
}

/// The associations that may apply unless `--allow-association` says
/// otherwise.
pub const DEFAULT_ASSOCIATIONS: [&str; 3] = ["OWNER", "MEMBER", "COLLABORATOR"];

impl Default for Access {
    fn default() -> Self {
        Access {
            associations: DEFAULT_ASSOCIATIONS.map(String::from).to_vec(),
            users: Vec::new(),
        }
    }
}

impl Access {
    /// `None` when `event`'s author may change the stack, else why not.
    pub fn refusal(&self, event: &Event) -> Option<String> {
        let author = event.author.as_deref().unwrap_or_default();
        if !author.is_empty() && self.users.iter().any(|u| u == author) {
            return None;
        }
        if let Some(association) = &event.association {
            if self
                .associations
                .iter()
                .any(|a| a.eq_ignore_ascii_case(association))
            {
                return None;
            }
        }
        let who = match author {
            "" => "the event's author (unknown)".to_string(),
            login => format!("`{login}`"),
        };
        let what = match &event.association {
            Some(association) => format!("is {association}"),
            None => format!("has no association {} reports", event.platform.as_str()),
        };
        let allowed = match self.associations.is_empty() {
            true => "none".to_string(),
            false => self.associations.join(", "),
        };
        Some(format!(
            "{who} {what}; only {allowed} (`--allow-association`) or the users of `--allow-user` may apply or unlock"
        ))
    }
}

/// What `hub ci` does for an event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operation {
    /// Plan the components the change touches (`--affected BASE`), or
    /// every component when the event gives no base.
    Autoplan { base: Option<String> },
    /// `hub plan [-c …]`.
    Plan { components: Vec<String> },
    /// `hub apply [-c …]`.
    Apply { components: Vec<String> },
    /// `hub unlock`: release the change's apply lock.
    Unlock,
    /// The change was merged.
    Merged,
    /// The change was closed without being merged.
    Closed,
    /// Nothing to do, and why (no comment is written).
    Nothing { reason: String },
    /// Asked for, and refused before anything ran (answered in the comment).
    Refused { reason: String },
}

impl Operation {
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Autoplan { .. } => "autoplan",
            Operation::Plan { .. } => "plan",
            Operation::Apply { .. } => "apply",
            Operation::Unlock => "unlock",
            Operation::Merged => "merged",
            Operation::Closed => "closed",
            Operation::Nothing { .. } => "nothing",
            Operation::Refused { .. } => "refused",
        }
    }
}

/// The operation for `event`: plans for anyone, applies and unlocks for
/// those `access` allows.
pub fn decide(event: &Event, access: &Access) -> Operation {
    if let Request::Ignored(reason) = &event.request {
        return Operation::Nothing {
            reason: reason.clone(),
        };
    }
    if event.change.is_none() {
        return Operation::Nothing {
            reason: format!(
                "the event concerns no {}",
                event.platform.change_noun()
            ),
        };
    }
    match &event.request {
        Request::Autoplan => Operation::Autoplan {
            base: event.base.clone(),
        },
        Request::Merged => Operation::Merged,
        Request::Closed => Operation::Closed,
        Request::Invalid(reason) => Operation::Refused {
            reason: reason.clone(),
        },
        Request::Command(command) => {
            let components = command.components.clone();
            if command.verb == Verb::Plan {
                return Operation::Plan { components };
            }
            if let Some(reason) = access.refusal(event) {
                return Operation::Refused { reason };
            }
            match command.verb {
                Verb::Apply => Operation::Apply { components },
                _ => Operation::Unlock,
            }
        }
        Request::Ignored(reason) => Operation::Nothing {
            reason: reason.clone(),
        },
    }
}

/// Reads the event of the CI system hub runs in: GitHub Actions when
/// `GITHUB_EVENT_NAME` is set, GitLab CI when `GITLAB_CI` or
/// `CI_PIPELINE_SOURCE` is.
pub fn read(
    lookup: &dyn Fn(&str) -> Option<String>,
    read_file: &dyn Fn(&Path) -> std::io::Result<String>,
) -> Result<Event, CiError> {
    let set = |name: &str| lookup(name).filter(|v| !v.is_empty());
    if let Some(name) = set("GITHUB_EVENT_NAME") {
        let path = set("GITHUB_EVENT_PATH").ok_or(CiError::MissingVariable {
            name: "GITHUB_EVENT_PATH",
            platform: Platform::GitHub,
        })?;
        let path = PathBuf::from(path);
        let text = read_file(&path).map_err(|source| CiError::Read {
            path: path.clone(),
            source,
        })?;
        return github::event(&name, &path, &text, &set);
    }
    if set("GITLAB_CI").is_some() || set("CI_PIPELINE_SOURCE").is_some() {
        return gitlab::event(&set);
    }
    Err(CiError::NoEvent)
}

/// An event hub cannot read.
#[derive(Debug, thiserror::Error)]
pub enum CiError {
    #[error("no CI event: neither GITHUB_EVENT_NAME (GitHub Actions) nor CI_PIPELINE_SOURCE (GitLab CI) is set")]
    NoEvent,
    #[error("{} sets no `{name}`", platform.as_str())]
    MissingVariable {
        name: &'static str,
        platform: Platform,
    },
    #[error("cannot read the event payload `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the event payload is not JSON: {message}")]
    Json {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("the `{event}` event payload has no `{field}`")]
    Missing {
        path: PathBuf,
        event: String,
        field: &'static str,
    },
    #[error("`{name}` is `{value}`: {reason}")]
    BadVariable {
        name: &'static str,
        value: String,
        reason: &'static str,
    },
}

impl CiError {
    pub fn location(&self) -> Option<Location> {
        match self {
            CiError::Json {
                path, line, column, ..
            } => Some(Location::at(path, *line, *column)),
            CiError::Read { path, .. } | CiError::Missing { path, .. } => {
                Some(Location::file(path))
            }
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        Some(match self {
            CiError::NoEvent => "run `hub ci` in a GitHub Actions workflow on `pull_request` and `issue_comment`, or in a GitLab merge-request pipeline; the README shows both".into(),
            CiError::MissingVariable { name, .. } => format!("the CI system sets `{name}` in the jobs it starts; a job started otherwise must set it itself"),
            CiError::Read { .. } => "GitHub Actions writes the payload at GITHUB_EVENT_PATH for every job; check that the variable was not changed".into(),
            CiError::Json { .. } | CiError::Missing { .. } => "the payload is GitHub's webhook payload of the event; a job that writes its own must keep its fields".into(),
            CiError::BadVariable { .. } => return None,
        })
    }
}
