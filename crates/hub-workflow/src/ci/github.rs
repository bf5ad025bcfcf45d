//! GitHub Actions: the event's name (`GITHUB_EVENT_NAME`) and its webhook
//! payload (the JSON file at `GITHUB_EVENT_PATH`). `pull_request` (and
//! `pull_request_target`, which carries the same payload) opened,
//! synchronize, reopened and closed; `issue_comment` created on a pull
//! request; `pull_request_review` submitted, edited and dismissed;
//! `merge_group` checks requested and destroyed (a merge queue's entry).

use super::command::parse_command;
use super::event::{mergeable_word, text_at, CiError, Event, Platform, Request, Review};
use super::queue_ref::merge_group;
use hub_state::changes::ReviewState;
use serde_json::Value;
use std::path::Path;

/// The event `name` with the payload `text` read from `path`; `set` reads
/// the environment (`HUB_CI_SHA`: the commit a comment's job checked out).
pub(super) fn event(
    name: &str,
    path: &Path,
    text: &str,
    set: &dyn Fn(&str) -> Option<String>,
) -> Result<Event, CiError> {
    let payload: Value = serde_json::from_str(text).map_err(|error| CiError::Json {
        path: path.to_path_buf(),
        line: error.line(),
        column: error.column(),
        message: error.to_string(),
    })?;
    let action = text_at(&payload, "action").unwrap_or_default();
    let mut event = Event {
        platform: Platform::GitHub,
        name: match action {
            "" => name.to_string(),
            action => format!("{name}.{action}"),
        },
        change: None,
        sha: None,
        base: None,
        author: None,
        association: None,
        fork: None,
        member_pipeline: false,
        change_author: None,
        mergeable: None,
        merge_commit: None,
        request: Request::Ignored(String::new()),
    };
    let missing = |field: &'static str| CiError::Missing {
        path: path.to_path_buf(),
        event: name.to_string(),
        field,
    };
    match name {
        "pull_request" | "pull_request_target" => {
            pull_request(&mut event, &payload, name, action, &missing)?
        }
        "issue_comment" => issue_comment(&mut event, &payload, action, set, &missing)?,
        "pull_request_review" => review(&mut event, &payload, action, &missing)?,
        "merge_group" => merge_group(&mut event, &payload, action, &missing)?,
        other => {
            event.request = Request::Ignored(format!(
                "hub acts on `pull_request`, `issue_comment`, `pull_request_review` and `merge_group` events, not `{other}`"
            ));
        }
    }
    Ok(event)
}

/// A `pull_request_review` event: the reviewer (`review.user.login`), their
/// association (`review.author_association`), the commit reviewed
/// (`review.commit_id`) and what the review says; the pull request's
/// number, head, base and author.
fn review(
    event: &mut Event,
    payload: &Value,
    action: &str,
    missing: &dyn Fn(&'static str) -> CiError,
) -> Result<(), CiError> {
    let number =
        number_at(payload, "pull_request.number").ok_or_else(|| missing("pull_request.number"))?;
    event.change = Some(number);
    event.sha = text_at(payload, "pull_request.head.sha").map(String::from);
    event.base = text_at(payload, "pull_request.base.sha").map(String::from);
    event.fork = fork(payload);
    event.change_author = text_at(payload, "pull_request.user.login").map(String::from);
    event.mergeable = payload
        .pointer("/pull_request/mergeable")
        .and_then(Value::as_bool);
    event.author = Some(
        text_at(payload, "review.user.login")
            .ok_or_else(|| missing("review.user.login"))?
            .to_string(),
    );
    event.association = text_at(payload, "review.author_association").map(String::from);
    let commit = text_at(payload, "review.commit_id").ok_or_else(|| missing("review.commit_id"))?;
    let state = text_at(payload, "review.state")
        .unwrap_or_default()
        .to_ascii_lowercase();
    let state = match (action, state.as_str()) {
        ("dismissed", _) => ReviewState::Dismissed,
        ("submitted" | "edited", "approved") => ReviewState::Approved,
        ("submitted" | "edited", "changes_requested") => ReviewState::ChangesRequested,
        ("submitted" | "edited", _) => {
            event.request = Request::Ignored(
                "a review that neither approves nor requests changes: it changes no approval"
                    .into(),
            );
            return Ok(());
        }
        (other, _) => {
            event.request = Request::Ignored(format!(
                "a review `{other}`: hub records reviews when they are submitted, edited or dismissed"
            ));
            return Ok(());
        }
    };
    event.request = Request::Review(Review {
        state,
        commit: Some(commit.to_string()),
    });
    Ok(())
}

/// The pull request of a `pull_request` event: its number, commits,
/// author, fork, and what its `action` asks.
fn pull_request(
    event: &mut Event,
    payload: &Value,
    name: &str,
    action: &str,
    missing: &dyn Fn(&'static str) -> CiError,
) -> Result<(), CiError> {
    let number = number_at(payload, "pull_request.number")
        .or_else(|| number_at(payload, "number"))
        .ok_or_else(|| missing("pull_request.number"))?;
    event.change = Some(number);
    event.sha = text_at(payload, "pull_request.head.sha").map(String::from);
    event.base = text_at(payload, "pull_request.base.sha").map(String::from);
    // The pull request's author, whose association GitHub gives:
    // the code is theirs whoever pushed or reopened.
    event.author = text_at(payload, "pull_request.user.login")
        .or_else(|| text_at(payload, "sender.login"))
        .map(String::from);
    event.association = text_at(payload, "pull_request.author_association").map(String::from);
    event.fork = fork(payload);
    event.change_author = text_at(payload, "pull_request.user.login").map(String::from);
    event.mergeable = payload
        .pointer("/pull_request/mergeable")
        .and_then(Value::as_bool);
    event.request = match action {
        "opened" | "synchronize" | "reopened" => Request::Autoplan,
        "closed" => match payload.pointer("/pull_request/merged") {
            Some(Value::Bool(true)) => {
                event.merge_commit =
                    text_at(payload, "pull_request.merge_commit_sha").map(String::from);
                // It could be merged: it was.
                event.mergeable = Some(true);
                Request::Merged
            }
            Some(Value::Bool(false)) | None | Some(Value::Null) => Request::Closed,
            Some(_) => return Err(missing("pull_request.merged")),
        },
        other => Request::Ignored(format!(
            "`{name}` `{other}`: hub plans a pull request when it is opened, pushed to or reopened, and acts when it is closed"
        )),
    };
    Ok(())
}

/// The pull request an `issue_comment` event comments on and the command
/// the comment gives; a comment on an issue, or not just created, is
/// ignored.
fn issue_comment(
    event: &mut Event,
    payload: &Value,
    action: &str,
    set: &dyn Fn(&str) -> Option<String>,
    missing: &dyn Fn(&'static str) -> CiError,
) -> Result<(), CiError> {
    if payload.pointer("/issue/pull_request").is_none() {
        event.request = Request::Ignored("a comment on an issue, not on a pull request".into());
        return Ok(());
    }
    let number = number_at(payload, "issue.number").ok_or_else(|| missing("issue.number"))?;
    event.change = Some(number);
    event.sha = set("HUB_CI_SHA");
    event.author = text_at(payload, "comment.user.login").map(String::from);
    event.association = text_at(payload, "comment.author_association").map(String::from);
    // A comment's payload does not say where the pull request's
    // code comes from: the workflow may (unset: unknown).
    event.fork = fork_variable(set)?;
    // Nor its base's head or whether it can be merged: the workflow (of
    // the default branch) may say.
    event.base = set("HUB_CI_BASE_SHA");
    event.mergeable = match set("HUB_CI_MERGEABLE") {
        None => None,
        Some(text) => mergeable_word(&text).map_err(|()| CiError::BadVariable {
            name: "HUB_CI_MERGEABLE",
            value: text.clone(),
            reason: "it is `true` or `false` (or GitHub's `MERGEABLE`, `CONFLICTING`, `UNKNOWN`)",
        })?,
    };
    if action != "created" {
        event.request = Request::Ignored(format!(
            "a comment `{action}`: hub reads comments when they are created"
        ));
        return Ok(());
    }
    let body = text_at(payload, "comment.body").ok_or_else(|| missing("comment.body"))?;
    event.request = match parse_command(body) {
        None => Request::Ignored("the comment is not a `hub` command".into()),
        Some(Ok(command)) => Request::Command(command),
        Some(Err(reason)) => Request::Invalid(reason),
    };
    Ok(())
}

/// `HUB_CI_FORK`: a comment's payload does not say where the pull
/// request's code comes from, the workflow may (unset: unknown).
fn fork_variable(set: &dyn Fn(&str) -> Option<String>) -> Result<Option<bool>, CiError> {
    match set("HUB_CI_FORK").as_deref() {
        None => Ok(None),
        Some("true") => Ok(Some(true)),
        Some("false") => Ok(Some(false)),
        Some(other) => Err(CiError::BadVariable {
            name: "HUB_CI_FORK",
            value: other.to_string(),
            reason: "it is `true` (the pull request comes from a fork) or `false`",
        }),
    }
}

/// Whether a `pull_request` payload's head repository is another than its
/// base repository (compared by id, else by full name); a head repository
/// that is gone (`null`, a deleted fork) is a fork. `None` when the payload
/// names neither.
fn fork(payload: &Value) -> Option<bool> {
    let head = payload.pointer("/pull_request/head/repo")?;
    if head.is_null() {
        return Some(true);
    }
    let base = payload.pointer("/pull_request/base/repo")?;
    let id = |repo: &Value| repo.get("id").and_then(Value::as_u64);
    if let (Some(head), Some(base)) = (id(head), id(base)) {
        return Some(head != base);
    }
    match (text_at(head, "full_name"), text_at(base, "full_name")) {
        (Some(head), Some(base)) => Some(!head.eq_ignore_ascii_case(base)),
        _ => None,
    }
}

/// The number at a dotted `path` of the payload, as text.
fn number_at(payload: &Value, path: &str) -> Option<String> {
    payload
        .pointer(&format!("/{}", path.replace('.', "/")))
        .and_then(Value::as_u64)
        .map(|n| n.to_string())
}
