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
mod on_merge;
mod operate;
mod queue;
mod queue_compare;
mod queue_ref;
pub mod relay;
mod review;
mod steps;
#[cfg(test)]
mod tests;

pub use command::{parse_command, Command, CommentVerb};
pub use event::{
    CiError, Event, Platform, QueueStep, Queued, ReadContext, Request, Review,
    DEFAULT_RELAY_MAX_AGE,
};
pub use operate::ci;

use std::path::{Path, PathBuf};

/// Who may apply and unlock: authors with one of these associations, and
/// these logins whatever their association; who may plan ([`PlanFrom`]),
/// and whether a fork's pull request is planned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Access {
    pub associations: Vec<String>,
    pub users: Vec<String>,
    pub plan_from: PlanFrom,
    pub plan_forks: bool,
}

/// Whose plans (`hub plan` comments, autoplans) run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PlanFrom {
    /// Those who may apply (`--allow-association`, `--allow-user`).
    #[default]
    Trusted,
    /// Anyone who can open a pull request or comment.
    Anyone,
}

impl PlanFrom {
    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "trusted" => Some(PlanFrom::Trusted),
            "anyone" => Some(PlanFrom::Anyone),
            _ => None,
        }
    }
}

use crate::request::DEFAULT_ASSOCIATIONS;

impl Default for Access {
    fn default() -> Self {
        Access {
            associations: DEFAULT_ASSOCIATIONS.map(String::from).to_vec(),
            users: Vec::new(),
            plan_from: PlanFrom::Trusted,
            plan_forks: false,
        }
    }
}

impl Access {
    /// Whose approvals and plans an apply counts as trusted.
    pub fn trusted(&self) -> crate::request::Trusted {
        crate::request::Trusted {
            associations: self.associations.clone(),
            users: self.users.clone(),
        }
    }

    /// `None` when `event`'s author may change the stack, else why not.
    pub fn refusal(&self, event: &Event) -> Option<String> {
        match self.trusts(event) {
            true => None,
            false => Some(self.untrusted(event, "apply or unlock")),
        }
    }

    /// `None` when the plan `event` asks for (`asked`: `plan`,
    /// `autoplan`) may run, else why not: its author is not trusted (unless
    /// `--plan-from anyone`), or its pull request comes from a fork, or
    /// may, as far as the event says (unless `--plan-forks`).
    pub fn plan_refusal(&self, event: &Event) -> Option<String> {
        let trusted =
            self.plan_from == PlanFrom::Anyone || event.member_pipeline || self.trusts(event);
        if !trusted {
            return Some(format!(
                "{}; `--plan-from anyone` plans for anyone",
                self.untrusted(event, "plan")
            ));
        }
        if self.plan_forks {
            return None;
        }
        let change = match &event.change {
            Some(id) => format!("{} #{id}", event.platform.change_noun()),
            None => format!("the {}", event.platform.change_noun()),
        };
        match event.fork {
            Some(false) => None,
            Some(true) => Some(format!(
                "{change} comes from a fork: hub plans a fork's code only with `--plan-forks`"
            )),
            None => Some(format!(
                "{} does not say whether {change} comes from a fork, so hub takes it as one: {}; or `--plan-forks` plans forks",
                event.platform.event_noun(),
                event.platform.fork_fix(),
            )),
        }
    }

    /// Whether a plan of `event` may run the components' plan steps
    /// (`--plan-steps`): they run the pull request's code, so only for an
    /// author who may apply, on a pull request known not to be a fork's
    /// (whatever `--plan-from` and `--plan-forks` say).
    pub fn runs_plan_steps(&self, event: &Event) -> bool {
        self.trusts(event) && event.fork == Some(false)
    }

    /// Whether the event's author is one of `--allow-user`, or has one of
    /// the associations of `--allow-association`.
    fn trusts(&self, event: &Event) -> bool {
        let author = event.author.as_deref().unwrap_or_default();
        if !author.is_empty() && self.users.iter().any(|u| u == author) {
            return true;
        }
        event.association.as_ref().is_some_and(|association| {
            self.associations
                .iter()
                .any(|a| a.eq_ignore_ascii_case(association))
        })
    }

    /// Why the event's author may not `what`.
    fn untrusted(&self, event: &Event, what: &str) -> String {
        let author = event.author.as_deref().unwrap_or_default();
        let who = match author {
            "" => "the event's author (unknown)".to_string(),
            login => format!("`{login}`"),
        };
        let is = match &event.association {
            Some(association) => format!("is {association}"),
            None => format!("has no association {} reports", event.platform.as_str()),
        };
        let allowed = match self.associations.is_empty() {
            true => "none".to_string(),
            false => self.associations.join(", "),
        };
        format!(
            "{who} {is}; only {allowed} (`--allow-association`) or the users of `--allow-user` may {what}"
        )
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
    /// A review of the change: recorded in the change registry.
    Review(Review),
    /// The change's entry of a merge queue or merge train: checked
    /// (planned, compared with the approved plan, applied) or gone.
    Queue(Queued),
    /// Nothing to do, and why (no comment is written).
    Nothing { reason: String },
    /// Asked for (`plan`, `autoplan`, `apply`, `unlock`, a `command` hub
    /// does not know, or a `relay` hub cannot verify), and refused before
    /// anything ran (answered in the comment).
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
            Operation::Review(_) => "review",
            Operation::Queue(Queued {
                step: QueueStep::Checks,
                ..
            }) => "queue",
            Operation::Queue(_) => "dequeue",
            Operation::Nothing { .. } => "nothing",
            Operation::Refused { asked, .. } => asked,
        }
    }
}

/// The operation for `event`: plans, applies and unlocks for those
/// `access` allows; nothing a relay cannot prove it sent.
pub fn decide(event: &Event, access: &Access) -> Operation {
    if let Request::Ignored(reason) = &event.request {
        return Operation::Nothing {
            reason: reason.clone(),
        };
    }
    if let Request::Unverified(reason) = &event.request {
        return Operation::Refused {
            asked: "relay",
            reason: reason.clone(),
        };
    }
    if let Request::BadQueue(reason) = &event.request {
        return Operation::Refused {
            asked: "queue",
            reason: reason.clone(),
        };
    }
    if event.change.is_none() {
        return Operation::Nothing {
            reason: format!("the event concerns no {}", event.platform.change_noun()),
        };
    }
    match &event.request {
        Request::Autoplan => match access.plan_refusal(event) {
            Some(reason) => Operation::Refused {
                asked: "autoplan",
                reason,
            },
            None => Operation::Autoplan {
                base: event.base.clone(),
            },
        },
        Request::Merged => Operation::Merged,
        // Recorded whoever reviewed: whose approvals count is decided when
        // an apply is asked for.
        Request::Review(review) => match &event.author {
            Some(_) => Operation::Review(review.clone()),
            None => Operation::Refused {
                asked: "review",
                reason: format!(
                    "{} names no reviewer: hub records a review with its reviewer only",
                    event.platform.event_noun()
                ),
            },
        },
        Request::Closed => Operation::Closed,
        // The queue is the platform's: whoever may add a change to it may
        // merge it. What it applies is checked against the plan approved
        // for the change, under `ci.apply.requires`.
        Request::Queue(queued) => Operation::Queue(queued.clone()),
        Request::Invalid(reason) => Operation::Refused {
            asked: "command",
            reason: reason.clone(),
        },
        Request::Command(command) => {
            let components = command.components.clone();
            if command.verb == CommentVerb::Plan {
                return match access.plan_refusal(event) {
                    Some(reason) => Operation::Refused {
                        asked: "plan",
                        reason,
                    },
                    None => Operation::Plan { components },
                };
            }
            if let Some(reason) = access.refusal(event) {
                return Operation::Refused {
                    asked: command.verb.as_str(),
                    reason,
                };
            }
            match command.verb {
                CommentVerb::Apply => Operation::Apply,
                _ => Operation::Unlock,
            }
        }
        Request::Ignored(reason) | Request::Unverified(reason) | Request::BadQueue(reason) => {
            Operation::Nothing {
                reason: reason.clone(),
            }
        }
    }
}

/// Reads the event of the CI system hub runs in: GitHub Actions when
/// `GITHUB_EVENT_NAME` is set, GitLab CI when `GITLAB_CI` or
/// `CI_PIPELINE_SOURCE` is.
pub fn read(
    lookup: &dyn Fn(&str) -> Option<String>,
    read_file: &dyn Fn(&Path) -> std::io::Result<String>,
    context: &ReadContext,
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
        return gitlab::event(&set, context);
    }
    Err(CiError::NoEvent)
}
