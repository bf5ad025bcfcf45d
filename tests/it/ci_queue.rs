//! Issue 43, item 3: `hub ci` in a merge queue (GitHub `merge_group`) and
//! a merge train (GitLab, relayed and signed). The queue's commit is
//! planned for the change and compared, component by component, with the
//! plan approved for it: applied when they match, refused (the change
//! leaves the queue) naming the component and the input when an entry
//! ahead changed what it reads; a destroyed entry releases the apply lock
//! its apply took. Each GitHub row runs on a local state and on a state in
//! the S3 test server (moto), one after the other.

use crate::ci::{fixture, github, gitlab_unsigned, relay_signed, CI_VARIABLES, RELAY_KEY};
use crate::ci_approvals::{require, HEAD};
use crate::common::{demo_copy, pinned_command, Output};
use std::path::{Path, PathBuf};

/// The commit of the queue's entry in the fixtures.
pub(crate) const QUEUE_COMMIT: &str = "f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4";

/// Where a row keeps its state: a local file, or a key of a new bucket.
pub(crate) struct Place {
    pub(crate) state: String,
    env: Vec<(&'static str, String)>,
}

impl Place {
    pub(crate) fn local() -> Place {
        Place {
            state: "demo.state".into(),
            env: Vec::new(),
        }
    }

    /// Local, then S3 when the test server runs (moto missing outside CI:
    /// local only, as the remote tests of the suite do).
    pub(crate) fn both(name: &str) -> Vec<Place> {
        let mut places = vec![Place::local()];
        if let Some(server) = crate::remote::server::server() {
            let bucket = server.bucket(name);
            places.push(Place {
                state: format!("s3://{bucket}/demo.state"),
                env: crate::remote::server::Store::env(server),
            });
        }
        places
    }

    /// `hub ARGS` in `dir` with this place's variables, the CI variables
    /// `env` and no other CI's.
    pub(crate) fn hub(&self, dir: &Path, args: &[&str], env: &[(String, String)]) -> Output {
        let mut command = pinned_command(dir, args);
        for name in CI_VARIABLES {
            command.env_remove(name);
        }
        command.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())));
        command.envs(env.iter().map(|(k, v)| (k, v)));
        Output::of(command.output().expect("run hub"), dir)
    }

    /// `hub ci` for the event `env`, writing `comment.md`.
    pub(crate) fn ci(&self, dir: &Path, env: &[(String, String)]) -> Output {
        let args = [
            "ci",
            "hub.yaml",
            "params.yaml",
            "-s",
            &self.state,
            "--comment",
            "comment.md",
        ];
        self.hub(dir, &args, env)
    }

    pub(crate) fn show(&self, dir: &Path, id: &str) -> String {
        let out = self.hub(dir, &["change", "show", id, "-s", &self.state], &[]);
        out.success();
        out.stdout.clone()
    }
}

/// The demo deployed at `place`, with `ci`, and pull request #42 planned
/// at [`HEAD`] by a member's `hub plan` comment (`-c app`).
pub(crate) fn planned_demo(place: &Place, ci: &str) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = demo_copy();
    let deploy = ["deploy", "hub.yaml", "params.yaml", "-s", &place.state];
    place.hub(&dir, &deploy, &[]).success();
    require(&dir, ci);
    let mut env = github(
        "issue_comment",
        &fixture("github/issue_comment.plan.member.json"),
    );
    env.push(("HUB_CI_SHA".into(), HEAD.into()));
    place.ci(&dir, &env).success();
    (tmp, dir)
}

/// The recorded `merge_group` event `action` for pull request #42.
pub(crate) fn merge_group(action: &str) -> Vec<(String, String)> {
    github(
        "merge_group",
        &fixture(&format!("github/merge_group.{action}.json")),
    )
}

pub(crate) fn last_line(out: &Output) -> &str {
    out.stdout.lines().last().unwrap_or_default()
}

pub(crate) fn comment(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("comment.md")).expect("a comment")
}

/// The last line of `hub change show 42`: the apply lock.
fn lock_line(place: &Place, dir: &Path) -> String {
    let shown = place.show(dir, "42");
    shown.lines().last().unwrap_or_default().to_string()
}

/// The PR ahead changed what the database outputs, and was applied and
/// merged: the host `app` reads is another.
pub(crate) fn entry_ahead_changes_the_database_host(place: &Place, dir: &Path) {
    let script = dir.join("components/database/deploy.sh");
    let text = std::fs::read_to_string(&script).expect("script");
    std::fs::write(&script, text.replace("host = db.", "host = db2.")).expect("script");
    let deploy = [
        "deploy",
        "hub.yaml",
        "params.yaml",
        "-s",
        &place.state,
        "-c",
        "database",
    ];
    place.hub(dir, &deploy, &[]).success();
}

#[test]
fn a_merge_group_whose_commit_plans_as_approved_applies_and_destroyed_releases_its_lock() {
    for place in Place::both("queue-applies") {
        let (_tmp, dir) = planned_demo(&place, "  apply:\n    on: queue\n");
        let out = place.ci(&dir, &merge_group("checks_requested"));
        out.success();
        assert_eq!(
            last_line(&out),
            "hub ci: queue of pull request #42 succeeded: 1 deployed",
            "{}: {}",
            place.state,
            out.stderr
        );
        assert!(
            out.stdout.contains("deploying 3 replicas"),
            "{}",
            out.stdout
        );
        let text = comment(&dir);
        assert!(
            text.starts_with("## hub queue of pull request #42: succeeded"),
            "{text}"
        );
        assert!(
            text.contains("The queue's commit `f1a2b3c4d5e6` plans each component as plan 1 approved at `c2d9f6a0e4b1` did."),
            "{text}"
        );
        let shown = place.show(&dir, "42");
        assert!(
            shown.contains(&format!(
                "plan succeeded (deploy, in the merge queue), 2026-01-01T00:00:00Z by alice at {QUEUE_COMMIT}"
            )),
            "{shown}"
        );
        assert!(
            lock_line(&place, &dir).starts_with("apply lock: held by change 42"),
            "{shown}"
        );

        let released = place.ci(&dir, &merge_group("destroyed"));
        released.success();
        assert_eq!(
            last_line(&released),
            "hub ci: dequeue of pull request #42: the merge group is destroyed (dequeued); the apply lock change 42 took for the queue's commit `f1a2b3c4d5e6` is released"
        );
        assert_eq!(lock_line(&place, &dir), "apply lock: free");
        // Again: nothing more to release, nothing recorded.
        let records = place.show(&dir, "42").lines().count();
        let again = place.ci(&dir, &merge_group("destroyed"));
        again.success();
        assert!(
            last_line(&again).ends_with("held nothing (no apply lock of change 42 at that commit)"),
            "{}",
            last_line(&again)
        );
        assert_eq!(place.show(&dir, "42").lines().count(), records);
    }
}

#[test]
fn a_merge_group_after_an_entry_ahead_changed_an_upstream_output_is_refused_naming_it() {
    for place in Place::both("queue-refused") {
        let (_tmp, dir) = planned_demo(&place, "  apply:\n    on: queue\n");
        entry_ahead_changes_the_database_host(&place, &dir);
        let out = place.ci(&dir, &merge_group("checks_requested"));
        assert_eq!(out.status, 3, "{}: {}", place.state, out.stderr);
        assert_eq!(
            last_line(&out),
            "hub ci: queue of pull request #42 refused: the entries ahead in the queue changed what the change's components read: `app`: its parameter `component.database.host` differs; the queue's commit `f1a2b3c4d5e6` does not plan as plan 1 approved at `c2d9f6a0e4b1`, and the stack does not allow re-plans in the queue (`ci.queue.replan: allowed`)"
        );
        assert!(
            !out.stdout.contains("deploying"),
            "nothing ran: {}",
            out.stdout
        );
        let text = comment(&dir);
        assert!(
            text.starts_with("## hub queue of pull request #42: refused"),
            "{text}"
        );
        assert!(
            text.contains("  - `app`: its parameter `component.database.host` differs\n"),
            "{text}"
        );
        assert!(text.contains("add it to the queue again"), "{text}");
        assert_eq!(lock_line(&place, &dir), "apply lock: free");
    }
}

#[test]
fn with_replans_allowed_the_queues_plan_is_applied_saying_what_differs() {
    let place = Place::local();
    let (_tmp, dir) = planned_demo(
        &place,
        "  apply:\n    on: queue\n  queue:\n    replan: allowed\n",
    );
    entry_ahead_changes_the_database_host(&place, &dir);
    let out = place.ci(&dir, &merge_group("checks_requested"));
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: queue of pull request #42 succeeded: 1 deployed"
    );
    assert!(
        comment(&dir).contains("was planned again (`ci.queue.replan: allowed`), and its policies pass; it differs from plan 1 approved: `app`: its parameter `component.database.host` differs."),
        "{}",
        comment(&dir)
    );
}

#[test]
fn without_apply_on_queue_a_matching_entry_is_checked_and_nothing_applied() {
    let place = Place::local();
    let (_tmp, dir) = planned_demo(&place, "  apply:\n    requires: []\n");
    let out = place.ci(&dir, &merge_group("checks_requested"));
    out.success();
    assert!(
        last_line(&out).ends_with(
            "did. Nothing is applied in the queue: the stack applies on comment (`ci.apply.on`)"
        ),
        "{}",
        last_line(&out)
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    // A comment apply is refused in a stack that applies in the queue.
    let stack = std::fs::read_to_string(dir.join("hub.yaml")).expect("stack");
    let kept = stack.split("\nci:\n").next().expect("stack").to_string();
    std::fs::write(dir.join("hub.yaml"), kept).expect("stack");
    require(&dir, "  apply:\n    on: queue\n");
    let mut env = github(
        "issue_comment",
        &fixture("github/issue_comment.apply.member.json"),
    );
    env.push(("HUB_CI_SHA".into(), HEAD.into()));
    let refused = place.ci(&dir, &env);
    assert_eq!(refused.status, 3, "{}", refused.stderr);
    assert!(
        last_line(&refused).contains("requires `on: queue`"),
        "{}",
        last_line(&refused)
    );
}

/// The head of merge request 17 in the GitLab fixtures.
pub(crate) const MR_HEAD: &str = "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b";

/// The relay's signature over `env`, its optional fields that are set
/// included, in the documented order.
pub(crate) fn signed_with_optional(env: Vec<(String, String)>) -> Vec<(String, String)> {
    use hmac::{Hmac, Mac};
    let mut signed = relay_signed(env);
    let value = |name: &str| {
        signed
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let mut message = String::from("hub-ci-relay-v1\n");
    for name in [
        "CI_PROJECT_ID",
        "CI_MERGE_REQUEST_IID",
        "HUB_CI_SHA",
        "HUB_CI_EVENT",
        "HUB_CI_COMMAND",
        "HUB_CI_AUTHOR",
        "HUB_CI_ASSOCIATION",
        "HUB_CI_MR_STATE",
        "HUB_CI_FORK",
        "HUB_CI_RELAY_TIME",
        "CI_PIPELINE_SOURCE",
    ] {
        message.push_str(&format!("{name}={}\n", value(name)));
    }
    for name in [
        "HUB_CI_MR_AUTHOR",
        "HUB_CI_MERGEABLE",
        "HUB_CI_BASE_SHA",
        "HUB_CI_MERGE_SHA",
        "CI_MERGE_REQUEST_EVENT_TYPE",
        "HUB_CI_MR_SHA",
    ] {
        if !value(name).is_empty() {
            message.push_str(&format!("{name}={}\n", value(name)));
        }
    }
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(RELAY_KEY.as_bytes()).expect("key");
    mac.update(message.as_bytes());
    let signature: String = mac
        .finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    signed.retain(|(n, _)| n != "HUB_CI_RELAY_SIGNATURE");
    signed.push(("HUB_CI_RELAY_SIGNATURE".into(), signature));
    signed
}

/// The demo deployed locally, with `ci`, and merge request 17 planned at
/// [`MR_HEAD`].
pub(crate) fn gitlab_planned(ci: &str) -> (tempfile::TempDir, PathBuf) {
    let place = Place::local();
    let (tmp, dir) = demo_copy();
    let deploy = ["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"];
    place.hub(&dir, &deploy, &[]).success();
    require(&dir, ci);
    let plan = [
        "plan",
        "hub.yaml",
        "params.yaml",
        "-s",
        "demo.state",
        "-c",
        "app",
        "--change",
        "17",
        "--sha",
        MR_HEAD,
    ];
    place.hub(&dir, &plan, &[]).success();
    (tmp, dir)
}

#[test]
fn a_signed_merge_train_entry_that_plans_as_approved_applies_and_dequeued_releases_it() {
    let place = Place::local();
    let (_tmp, dir) = gitlab_planned("  apply:\n    on: queue\n");
    let train = signed_with_optional(gitlab_unsigned("trigger.merge_train"));
    let out = place.ci(&dir, &train);
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: queue of merge request #17 succeeded: 1 deployed",
        "{}",
        out.stderr
    );
    let shown = place.show(&dir, "17");
    assert!(shown.contains("apply lock: held by change 17"), "{shown}");

    let mut dequeued = gitlab_unsigned("trigger.merge_train");
    dequeued.push(("HUB_CI_EVENT".into(), "dequeued".into()));
    let out = place.ci(&dir, &signed_with_optional(dequeued));
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: dequeue of merge request #17: the merge request left the merge train; the apply lock change 17 took for the queue's commit `0a1b2c3d4e5f` is released"
    );
}

#[test]
fn a_merge_train_entry_whose_head_is_not_the_approved_plans_is_refused() {
    let place = Place::local();
    let (_tmp, dir) = gitlab_planned("  apply:\n    on: queue\n");
    let mut pushed = gitlab_unsigned("trigger.merge_train");
    pushed.retain(|(n, _)| n != "HUB_CI_MR_SHA");
    pushed.push((
        "HUB_CI_MR_SHA".into(),
        "5a4d3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c".into(),
    ));
    let out = place.ci(&dir, &signed_with_optional(pushed));
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert!(
        last_line(&out).contains(&format!("plan 1 of merge request #17 was made at `{MR_HEAD}`, and the head of the merge request in the queue is `5a4d3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c`")),
        "{}",
        last_line(&out)
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
}
