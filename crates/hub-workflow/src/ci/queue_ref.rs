//! GitHub's `merge_group` event: a merge queue's entry, named by its
//! branch (`head_ref`, `refs/heads/gh-readonly-queue/BASE/pr-NUMBER-SHA`),
//! at the commit the queue made (`head_sha`: the pull request on top of
//! the entries ahead of it). The pull request's number is read from the
//! branch's name, which is checked to be exactly the queue's form for the
//! base of the event: anything else is refused, never guessed at.

use super::event::{text_at, CiError, Event, QueueStep, Queued, Request};
use serde_json::Value;

/// Where GitHub's merge queue keeps its branches.
const QUEUE_PREFIX: &str = "refs/heads/gh-readonly-queue/";

/// A `merge_group` event: `checks_requested` or `destroyed`.
pub(super) fn merge_group(
    event: &mut Event,
    payload: &Value,
    action: &str,
    missing: &dyn Fn(&'static str) -> CiError,
) -> Result<(), CiError> {
    let field = |path: &'static str| {
        text_at(payload, path)
            .map(String::from)
            .ok_or_else(|| missing(path))
    };
    let head_ref = field("merge_group.head_ref")?;
    let base_ref = field("merge_group.base_ref")?;
    event.sha = Some(field("merge_group.head_sha")?);
    event.base = text_at(payload, "merge_group.base_sha").map(String::from);
    // Whoever (or whatever) added the change to the queue.
    event.author = text_at(payload, "sender.login").map(String::from);
    // The queue's commit is made in the repository, of changes it could
    // merge.
    event.fork = Some(false);
    event.mergeable = Some(true);
    let step = match action {
        "checks_requested" => QueueStep::Checks,
        "destroyed" => QueueStep::Destroyed(
            text_at(payload, "reason")
                .unwrap_or("not given")
                .to_string(),
        ),
        other => {
            event.request = Request::Ignored(format!(
                "a merge group `{other}`: hub checks a merge queue's entry when checks are requested, and releases it when it is destroyed"
            ));
            return Ok(());
        }
    };
    match queue_number(&head_ref, &base_ref) {
        Ok(number) => {
            event.change = Some(number);
            event.request = Request::Queue(Queued {
                step,
                head: None,
                entry: head_ref,
            });
        }
        Err(reason) => event.request = Request::BadQueue(reason),
    }
    Ok(())
}

/// The pull request's number in a queue branch `head_ref` of the base
/// branch `base_ref`: `refs/heads/gh-readonly-queue/BASE/pr-NUMBER-SHA`,
/// `BASE` the base's branch, `NUMBER` decimal without a leading zero,
/// `SHA` a commit id; else why not.
pub(super) fn queue_number(head_ref: &str, base_ref: &str) -> Result<String, String> {
    let form =
        "GitHub's merge queue names its branches `refs/heads/gh-readonly-queue/BASE/pr-NUMBER-SHA`";
    let shown = hub_state::changes::inert(head_ref);
    let Some(base) = base_ref.strip_prefix("refs/heads/") else {
        return Err(format!(
            "the merge group's `base_ref` `{}` is not a branch: {form}",
            hub_state::changes::inert(base_ref)
        ));
    };
    let entry = head_ref
        .strip_prefix(QUEUE_PREFIX)
        .and_then(|rest| rest.strip_prefix(base))
        .and_then(|rest| rest.strip_prefix("/pr-"));
    let Some(entry) = entry else {
        return Err(format!(
            "the merge group's `head_ref` `{shown}` is not a queue branch of its base `{}`: {form}",
            hub_state::changes::inert(base)
        ));
    };
    let (number, sha) = entry.split_once('-').unwrap_or((entry, ""));
    let decimal = !number.is_empty()
        && number.len() <= 10
        && !number.starts_with('0')
        && number.bytes().all(|b| b.is_ascii_digit());
    let commit = sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit());
    match (decimal, commit) {
        (true, true) => Ok(number.to_string()),
        _ => Err(format!(
            "the merge group's `head_ref` `{shown}` does not end in `pr-NUMBER-SHA` (a pull request's number, a commit id): {form}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::queue_number;

    const SHA: &str = "9b8a7c6d5e4f30211a2b3c4d5e6f708192a3b4c5";

    #[test]
    fn the_number_is_read_from_the_queue_branch_of_the_base_only() {
        let main = "refs/heads/main";
        let of = |head_ref: &str| queue_number(head_ref, main);
        assert_eq!(
            of(&format!("refs/heads/gh-readonly-queue/main/pr-42-{SHA}")),
            Ok("42".into())
        );
        let release = format!("refs/heads/gh-readonly-queue/release/v2/pr-7-{SHA}");
        assert_eq!(
            queue_number(&release, "refs/heads/release/v2"),
            Ok("7".into())
        );
        for bad in [
            format!("refs/heads/gh-readonly-queue/release/v2/pr-7-{SHA}"),
            format!("refs/heads/gh-readonly-queue/main/pr-042-{SHA}"),
            format!("refs/heads/gh-readonly-queue/main/pr-42-{SHA}x"),
            format!("refs/heads/gh-readonly-queue/main/pr-99999999999-{SHA}"),
            format!("refs/heads/gh-readonly-queue/mainline/pr-42-{SHA}"),
            format!("refs/tags/gh-readonly-queue/main/pr-42-{SHA}"),
            "refs/heads/gh-readonly-queue/main/pr-42".into(),
            "refs/heads/gh-readonly-queue/main/pr--42".into(),
        ] {
            assert!(of(&bad).is_err(), "{bad}");
        }
        assert!(queue_number(
            &format!("refs/heads/gh-readonly-queue/main/pr-42-{SHA}"),
            "main"
        )
        .unwrap_err()
        .contains("`base_ref` `main` is not a branch"));
    }
}
