//! `hub ci`: the event of the CI system hub runs in (a GitHub Actions
//! workflow, a GitLab merge-request pipeline), turned into what to do: an
//! [`Operation`]; and the pull-request comment that says what was done
//! ([`comment`]). Pure code: the caller gives the environment and the
//! payload's text; nothing here runs a component, a process or `git`.

mod command;
pub mod comment;
mod event;
mod github;
mod gitlab;
#[cfg(test)]
mod tests;

pub use command::{parse_command, Command, Verb};
pub use event::{CiError, Event, Platform, Request};

use std::path::{Path, PathBuf};

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
    /// `hub apply`: the change's latest plan.
    Apply,
    /// `hub unlock`: release the change's apply lock.
    Unlock,
    /// The change was merged.
    Merged,
    /// The change was closed without being merged.
    Closed,
    /// Nothing to do, and why (no comment is written).
    Nothing { reason: String },
    /// Asked for (`apply`, `unlock`, or a `command` hub does not know),
    /// and refused before anything ran (answered in the comment).
    Refused { asked: &'static str, reason: String },
}

impl Operation {
    pub fn name(&self) -> &'static str {
        match self {
            Operation::Autoplan { .. } => "autoplan",
            Operation::Plan { .. } => "plan",
            Operation::Apply => "apply",
            Operation::Unlock => "unlock",
            Operation::Merged => "merged",
            Operation::Closed => "closed",
            Operation::Nothing { .. } => "nothing",
            Operation::Refused { asked, .. } => asked,
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
            reason: format!("the event concerns no {}", event.platform.change_noun()),
        };
    }
    match &event.request {
        Request::Autoplan => Operation::Autoplan {
            base: event.base.clone(),
        },
        Request::Merged => Operation::Merged,
        Request::Closed => Operation::Closed,
        Request::Invalid(reason) => Operation::Refused {
            asked: "command",
            reason: reason.clone(),
        },
        Request::Command(command) => {
            let components = command.components.clone();
            if command.verb == Verb::Plan {
                return Operation::Plan { components };
            }
            if let Some(reason) = access.refusal(event) {
                return Operation::Refused {
                    asked: command.verb.as_str(),
                    reason,
                };
            }
            match command.verb {
                Verb::Apply => Operation::Apply,
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
