//! GitLab CI: a merge-request pipeline (`CI_PIPELINE_SOURCE` is
//! `merge_request_event`) with the merge request's `CI_MERGE_REQUEST_IID`,
//! its commit `CI_COMMIT_SHA` and base `CI_MERGE_REQUEST_DIFF_BASE_SHA`,
//! the user who started it (`GITLAB_USER_LOGIN`) and its source and target
//! projects (a fork when they differ). GitLab starts no pipeline for a
//! comment: the job that relays one (the relay, a webhook receiver
//! starting a pipeline with a trigger token or the API) passes the
//! comment as `HUB_CI_COMMAND`, a merge or a close as `HUB_CI_EVENT`, with
//! the fields of [`relay::FIELDS`], signed ([`relay`]). A relayed field is
//! honoured only in a pipeline the relay started (`trigger`, `api`) and
//! with a valid signature; otherwise the request is refused. A merge
//! train's entry is checked only when the relay starts its pipeline with
//! `CI_MERGE_REQUEST_EVENT_TYPE=merge_train` signed: GitLab's own
//! merge-train pipeline runs the merge request's `.gitlab-ci.yml`, whose
//! variables are the merge request's to set.

use super::command::parse_command;
use super::event::{
    mergeable_word, CiError, Event, Platform, QueueStep, Queued, ReadContext, Request, Review,
};
use super::relay::{self, RelayError};
use hub_state::changes::ReviewState;

/// The pipeline sources of a pipeline a relay starts.
const RELAY_SOURCES: [&str; 2] = ["trigger", "api"];

/// GitLab's variable of a merge-request pipeline's kind.
const EVENT_TYPE: &str = "CI_MERGE_REQUEST_EVENT_TYPE";

/// Its value in a merge train's pipeline.
const MERGE_TRAIN: &str = "merge_train";

pub(super) fn event(
    set: &dyn Fn(&str) -> Option<String>,
    context: &ReadContext,
) -> Result<Event, CiError> {
    let source = set("CI_PIPELINE_SOURCE").unwrap_or_default();
    let event = Event {
        platform: Platform::GitLab,
        name: source.clone(),
        change: set("CI_MERGE_REQUEST_IID"),
        sha: set("CI_COMMIT_SHA"),
        base: set("CI_MERGE_REQUEST_DIFF_BASE_SHA"),
        author: set("GITLAB_USER_LOGIN"),
        association: None,
        fork: project_fork(set),
        member_pipeline: false,
        change_author: None,
        mergeable: None,
        merge_commit: None,
        request: Request::Autoplan,
    };
    if let Some(name) = relay::RELAYED.into_iter().find(|name| set(name).is_some()) {
        return relayed(event, name, &source, set, context);
    }
    let train = set(EVENT_TYPE).is_some_and(|t| t == MERGE_TRAIN);
    if train && RELAY_SOURCES.contains(&source.as_str()) {
        return relayed(event, EVENT_TYPE, &source, set, context);
    }
    if train {
        return Ok(Event {
            request: Request::Ignored(format!(
                "a merge-train pipeline runs the merge request's own `.gitlab-ci.yml`, whose variables it may set: hub checks and applies a merge train's entry only in a pipeline the relay starts, with `{EVENT_TYPE}=merge_train` signed"
            )),
            ..event
        });
    }
    if source != "merge_request_event" {
        return Ok(Event {
            request: Request::Ignored(format!(
                "a `{source}` pipeline: hub plans in merge-request pipelines (`merge_request_event`), and acts on comments and events a relay signs"
            )),
            ..event
        });
    }
    require_iid(Event {
        member_pipeline: true,
        ..event
    })
}

/// Whether a merge-request pipeline's source project differs from its
/// target project; `None` when GitLab does not say.
fn project_fork(set: &dyn Fn(&str) -> Option<String>) -> Option<bool> {
    let source = set("CI_MERGE_REQUEST_SOURCE_PROJECT_ID")?;
    let target = set("CI_MERGE_REQUEST_PROJECT_ID")?;
    Some(source != target)
}

/// A pipeline that carries a relayed variable (`name`): the relay's
/// request when its signature holds, else refused.
fn relayed(
    mut event: Event,
    name: &'static str,
    source: &str,
    set: &dyn Fn(&str) -> Option<String>,
    context: &ReadContext,
) -> Result<Event, CiError> {
    event.name = format!("{source}.relay");
    let refused = |event: Event, error: RelayError| {
        Ok(Event {
            request: Request::Unverified(error.to_string()),
            ..event
        })
    };
    if !RELAY_SOURCES.contains(&source) {
        let pipeline = source.to_string();
        return refused(event, RelayError::NotRelayPipeline { name, pipeline });
    }
    if let Err(error) = relay::verify(set, context.now, context.relay_max_age) {
        return refused(event, error);
    }
    // Signed: the relay's word.
    event.sha = set("HUB_CI_SHA").or(event.sha);
    event.author = set("HUB_CI_AUTHOR").or(event.author);
    event.association = set("HUB_CI_ASSOCIATION").map(|a| a.to_ascii_uppercase());
    event.fork = match set("HUB_CI_FORK").as_deref() {
        Some("true") => Some(true),
        Some("false") => Some(false),
        _ => None,
    };
    // Only what the relay signed: not the pipeline's own base.
    event.base = set("HUB_CI_BASE_SHA");
    event.change_author = set("HUB_CI_MR_AUTHOR");
    event.merge_commit = set("HUB_CI_MERGE_SHA");
    event.mergeable = match set("HUB_CI_MERGEABLE") {
        None => None,
        Some(text) => mergeable_word(&text).map_err(|()| CiError::BadVariable {
            name: "HUB_CI_MERGEABLE",
            value: text.clone(),
            reason: "it is `true` or `false` (or GitLab's `can_be_merged`, `cannot_be_merged`, `unchecked`)",
        })?,
    };
    let state = set("HUB_CI_MR_STATE").unwrap_or_default();
    if set(EVENT_TYPE).is_some_and(|t| t == MERGE_TRAIN) {
        return merge_train(event, source, &state, set);
    }
    if let Some(review) = set("HUB_CI_EVENT").and_then(|e| review_state(&e)) {
        event.name = format!("{source}.{}", set("HUB_CI_EVENT").unwrap_or_default());
        event.request = match state.as_str() {
            "opened" => Request::Review(Review {
                state: review,
                commit: event.sha.clone(),
            }),
            _ => Request::Unverified(format!(
                "the signed state of the merge request (`HUB_CI_MR_STATE`) is `{state}`: hub records approvals of open merge requests (`opened`)"
            )),
        };
        return require_iid(event);
    }
    if let Some(closing) = set("HUB_CI_EVENT") {
        event.name = format!("{source}.{closing}");
        event.request = match (closing.as_str(), state.as_str()) {
            ("merged", "merged") => {
                event.mergeable = Some(true);
                Request::Merged
            }
            ("closed", "closed") => Request::Closed,
            ("merged" | "closed", _) => Request::Unverified(format!(
                "`HUB_CI_EVENT` is `{closing}` but the signed state of the merge request (`HUB_CI_MR_STATE`) is `{state}`: hub records a merge or a close only when the merge request's state says so"
            )),
            _ => {
                return Err(CiError::BadVariable {
                    name: "HUB_CI_EVENT",
                    value: closing,
                    reason: "hub knows `merged`, `closed`, `approved` and `unapproved`",
                })
            }
        };
        return require_iid(event);
    }
    let Some(command) = set("HUB_CI_COMMAND") else {
        event.request =
            Request::Ignored("the relay passed neither `HUB_CI_COMMAND` nor `HUB_CI_EVENT`".into());
        return Ok(event);
    };
    event.name = format!("{source}.comment");
    if state != "opened" {
        event.request = Request::Unverified(format!(
            "the signed state of the merge request (`HUB_CI_MR_STATE`) is `{state}`: hub acts on comments of open merge requests (`opened`)"
        ));
        return require_iid(event);
    }
    event.request = match parse_command(&command) {
        None => Request::Ignored("`HUB_CI_COMMAND` is not a `hub` command".into()),
        Some(Ok(command)) => Request::Command(command),
        Some(Err(reason)) => Request::Invalid(reason),
    };
    require_iid(event)
}

/// A merge train's entry the relay signed: checked (no `HUB_CI_EVENT`) or
/// gone (`HUB_CI_EVENT=dequeued`), of an open merge request; `HUB_CI_SHA`
/// is the train's commit, `HUB_CI_MR_SHA` the merge request's head.
fn merge_train(
    mut event: Event,
    source: &str,
    state: &str,
    set: &dyn Fn(&str) -> Option<String>,
) -> Result<Event, CiError> {
    let step = match set("HUB_CI_EVENT").as_deref() {
        None => QueueStep::Checks,
        Some("dequeued") => QueueStep::Destroyed("dequeued".into()),
        Some(other) => {
            return Err(CiError::BadVariable {
                name: "HUB_CI_EVENT",
                value: other.to_string(),
                reason: "in a merge train's pipeline it is unset (the entry is checked) or `dequeued` (the entry is gone)",
            })
        }
    };
    event.name = format!("{source}.{MERGE_TRAIN}");
    event.mergeable = Some(true);
    // Only the signed commit: not the pipeline's own.
    event.sha = set("HUB_CI_SHA");
    event.request = match (state, &event.sha) {
        ("opened", Some(_)) => Request::Queue(Queued {
            step,
            head: set("HUB_CI_MR_SHA"),
            entry: format!(
                "merge train of !{}",
                event.change.as_deref().unwrap_or_default()
            ),
        }),
        ("opened", None) => Request::Unverified(
            "the relay signed no `HUB_CI_SHA`: in a merge train's pipeline it is the train's commit (`CI_COMMIT_SHA` of the train's pipeline)".into(),
        ),
        (state, _) => Request::Unverified(format!(
            "the signed state of the merge request (`HUB_CI_MR_STATE`) is `{state}`: hub checks merge-train entries of open merge requests (`opened`)"
        )),
    };
    require_iid(event)
}

/// `HUB_CI_EVENT` of an approval (GitLab's merge request hook `action`
/// `approved`, `unapproved`; `approval`/`unapproval` of the approval
/// hooks).
fn review_state(event: &str) -> Option<ReviewState> {
    match event {
        "approved" | "approval" => Some(ReviewState::Approved),
        "unapproved" | "unapproval" => Some(ReviewState::Dismissed),
        _ => None,
    }
}

fn require_iid(event: Event) -> Result<Event, CiError> {
    match event.change {
        Some(_) => Ok(event),
        None => Err(CiError::MissingVariable {
            name: "CI_MERGE_REQUEST_IID",
            platform: Platform::GitLab,
        }),
    }
}
