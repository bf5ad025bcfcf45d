//! GitLab CI: a merge-request pipeline (`CI_PIPELINE_SOURCE` is
//! `merge_request_event`) with the merge request's `CI_MERGE_REQUEST_IID`,
//! its commit `CI_COMMIT_SHA` and base `CI_MERGE_REQUEST_DIFF_BASE_SHA`,
//! and the user who started it (`GITLAB_USER_LOGIN`). GitLab starts no
//! pipeline for a comment: the job that relays one (a webhook receiver
//! starting a pipeline with a trigger token) passes `CI_MERGE_REQUEST_IID`,
//! the comment as `HUB_CI_COMMAND`, its author as `HUB_CI_AUTHOR` and, when
//! it looked it up, the author's role as `HUB_CI_ASSOCIATION` (GitLab's
//! variables report none). A merge or a close is passed the same way as
//! `HUB_CI_EVENT` (`merged`, `closed`).

use super::command::parse_command;
use super::event::{CiError, Event, Platform, Request};

pub(super) fn event(set: &dyn Fn(&str) -> Option<String>) -> Result<Event, CiError> {
    let source = set("CI_PIPELINE_SOURCE").unwrap_or_default();
    let mut event = Event {
        platform: Platform::GitLab,
        name: source.clone(),
        change: set("CI_MERGE_REQUEST_IID"),
        sha: set("CI_COMMIT_SHA"),
        base: set("CI_MERGE_REQUEST_DIFF_BASE_SHA"),
        author: set("HUB_CI_AUTHOR").or_else(|| set("GITLAB_USER_LOGIN")),
        association: set("HUB_CI_ASSOCIATION").map(|a| a.to_ascii_uppercase()),
        request: Request::Autoplan,
    };
    if let Some(closing) = set("HUB_CI_EVENT") {
        event.name = format!("{source}.{closing}");
        event.request = match closing.as_str() {
            "merged" => Request::Merged,
            "closed" => Request::Closed,
            _ => {
                return Err(CiError::BadVariable {
                    name: "HUB_CI_EVENT",
                    value: closing,
                    reason: "hub knows `merged` and `closed`",
                })
            }
        };
        return require_iid(event);
    }
    if let Some(command) = set("HUB_CI_COMMAND") {
        event.name = format!("{source}.comment");
        event.request = match parse_command(&command) {
            None => Request::Ignored("`HUB_CI_COMMAND` is not a `hub` command".into()),
            Some(Ok(command)) => Request::Command(command),
            Some(Err(reason)) => Request::Invalid(reason),
        };
        return require_iid(event);
    }
    if source != "merge_request_event" {
        event.request = Request::Ignored(format!(
            "a `{source}` pipeline: hub plans in merge-request pipelines (`merge_request_event`), and acts on `HUB_CI_COMMAND` and `HUB_CI_EVENT`"
        ));
        return Ok(event);
    }
    require_iid(event)
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
