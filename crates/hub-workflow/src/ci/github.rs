//! GitHub Actions: the event's name (`GITHUB_EVENT_NAME`) and its webhook
//! payload (the JSON file at `GITHUB_EVENT_PATH`). `pull_request` (and
//! `pull_request_target`, which carries the same payload) opened,
//! synchronize, reopened and closed; `issue_comment` created on a pull
//! request.

use super::command::parse_command;
use super::event::{CiError, Event, Platform, Request};
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
        other => {
            event.request = Request::Ignored(format!(
                "hub acts on `pull_request` and `issue_comment` events, not `{other}`"
            ));
        }
    }
    Ok(event)
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
    event.request = match action {
        "opened" | "synchronize" | "reopened" => Request::Autoplan,
        "closed" => match payload.pointer("/pull_request/merged") {
            Some(Value::Bool(true)) => Request::Merged,
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

/// The string at a dotted `path` of the payload.
fn text_at<'a>(payload: &'a Value, path: &str) -> Option<&'a str> {
    payload
        .pointer(&format!("/{}", path.replace('.', "/")))
        .and_then(Value::as_str)
}

/// The number at a dotted `path` of the payload, as text.
fn number_at(payload: &Value, path: &str) -> Option<String> {
    payload
        .pointer(&format!("/{}", path.replace('.', "/")))
        .and_then(Value::as_u64)
        .map(|n| n.to_string())
}
