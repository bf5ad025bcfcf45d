//! What the CI system says happened ([`Event`]), and the errors of
//! reading it ([`CiError`]).

use super::command::Command;
use hub_manifest::diag::Location;
use hub_plan::change::ChangeContext;
use std::path::PathBuf;
use std::time::Duration;

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

    /// What tells hub about the change, in a refusal.
    pub(crate) fn event_noun(self) -> &'static str {
        match self {
            Platform::GitHub => "the event's payload",
            Platform::GitLab => "the pipeline's variables",
        }
    }

    /// How the job tells hub that a change does not come from a fork.
    pub(crate) fn fork_fix(self) -> &'static str {
        match self {
            Platform::GitHub => "the workflow passes `HUB_CI_FORK` (`false` for a pull request of this repository: `gh pr view NUMBER --json isCrossRepository --jq .isCrossRepository`)",
            Platform::GitLab => "GitLab sets `CI_MERGE_REQUEST_SOURCE_PROJECT_ID` and `CI_MERGE_REQUEST_PROJECT_ID` in merge-request pipelines, and the relay signs `HUB_CI_FORK`",
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
    /// Whether the change comes from a fork (its code from another
    /// repository); `None` when the event does not say.
    pub fork: Option<bool>,
    /// GitLab started the pipeline in the project for its user, which it
    /// does only for a user who may run pipelines there (a member with the
    /// Developer role or more): trusted to plan as an allowed author is.
    pub member_pipeline: bool,
    /// Who opened the change, when the event says (their own approval
    /// never counts).
    pub change_author: Option<String>,
    /// Whether the platform says the change can be merged; `None` when
    /// the event does not say (or says it does not know yet).
    pub mergeable: Option<bool>,
    /// The commit a merge made (GitHub `pull_request.merge_commit_sha`,
    /// the relay's signed `HUB_CI_MERGE_SHA`), for `ci.apply.on: merge`.
    pub merge_commit: Option<String>,
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
            ..ChangeContext::default()
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
    /// A review of the change: recorded in the change registry.
    Review(Review),
    /// An event hub has nothing to do for, and why.
    Ignored(String),
    /// A relayed comment or event whose relay hub cannot verify (not a
    /// pipeline the relay starts, no or a bad signature): refused, and why.
    Unverified(String),
    /// The change's entry of a merge queue (GitHub `merge_group`) or merge
    /// train (GitLab, relayed and signed).
    Queue(Queued),
    /// A merge queue's event hub cannot take as one (a `head_ref` that is
    /// not a queue branch of the base, a number that is not one): refused,
    /// and why.
    BadQueue(String),
}

/// A change's entry of a merge queue or merge train: its commit is the
/// change on top of the entries ahead of it (the event's `sha`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub step: QueueStep,
    /// The change's head, when the platform says it (the relay's signed
    /// `HUB_CI_MR_SHA`; GitHub's `merge_group` does not name it).
    pub head: Option<String>,
    /// The queue's name for the entry (GitHub's `head_ref`), for the comment.
    pub entry: String,
}

/// What the queue asks of its entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueStep {
    /// Check the entry's commit (GitHub `checks_requested`; a GitLab merge
    /// train's pipeline): plan it, compare with the approved plan, apply.
    Checks,
    /// The entry is gone (GitHub `destroyed`, with its `reason`: `merged`,
    /// `invalidated`, `dequeued`; GitLab `dequeued`): release what it held.
    Destroyed(String),
}

/// A review, as the event reports it: the reviewer is the event's
/// author, with the event's association.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    pub state: hub_state::changes::ReviewState,
    /// The commit reviewed (GitHub `review.commit_id`, GitLab the merge
    /// request's last commit when the relay read it).
    pub commit: Option<String>,
}

/// `true`/`false`, or GitHub's `MERGEABLE`/`CONFLICTING`/`UNKNOWN`
/// (`gh pr view --json mergeable`), or GitLab's `can_be_merged`/
/// `cannot_be_merged`…: `Some(answer)`, `Ok(None)` for unknown, `Err` for
/// anything else.
pub(crate) fn mergeable_word(text: &str) -> Result<Option<bool>, ()> {
    match text.to_ascii_lowercase().as_str() {
        "true" | "mergeable" | "can_be_merged" => Ok(Some(true)),
        "false" | "conflicting" | "cannot_be_merged" => Ok(Some(false)),
        "unknown" | "unchecked" | "checking" | "cannot_be_merged_recheck" | "" => Ok(None),
        _ => Err(()),
    }
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

/// What reading an event needs besides the environment: the time (for a
/// relay's signature) and how old a relayed request may be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadContext {
    /// Seconds since 1970 (UTC).
    pub now: i64,
    /// `--relay-max-age`.
    pub relay_max_age: Duration,
}

/// How old a relayed request may be unless `--relay-max-age` says.
pub const DEFAULT_RELAY_MAX_AGE: Duration = Duration::from_secs(15 * 60);

/// The string at a dotted `path` of a webhook payload.
pub(super) fn text_at<'a>(payload: &'a serde_json::Value, path: &str) -> Option<&'a str> {
    payload
        .pointer(&format!("/{}", path.replace('.', "/")))
        .and_then(serde_json::Value::as_str)
}
