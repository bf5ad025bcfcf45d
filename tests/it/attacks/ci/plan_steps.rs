//! Plan steps (`hub ci --plan-steps`, issue 42) run the pull request's
//! code: only for an author who may apply, on a pull request known not to
//! be a fork's, whatever `--plan-from anyone` and `--plan-forks` allow.
//! What a plan step prints is the pull request's text: the comment shows a
//! planned value escaped (inside a fence longer than its backticks), and a
//! secret one masked.

use super::RUNNER_SECRET;
use crate::attacks::everything_written;
use crate::ci::{fixture, github, CI_VARIABLES};
use crate::common::{pinned_command, Output, Test};

/// `a` plans `a.val` as hostile markdown and `a.token` (secret) as the
/// runner's secret; its plan step leaves `planned.marker` when it runs;
/// `b` reads `a.val`.
fn checkout() -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: steps}\ncomponents:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}, depends: [a]}\n",
        )
        .file(
            "a/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: a}\noutputs:\n  - {name: a.val, fromTfVar: val}\n  - {name: a.token, fromTfVar: token, kind: secret}\n",
        )
        .file(
            "b/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: b}\nparameters:\n  - {name: b.in, value: '${a.val}'}\n",
        )
        .script(
            "a/plan.sh",
            "#!/bin/sh\ntouch ../planned.marker\necho Outputs:\necho 'val = ``` </details><img src=x onerror=alert(1)> @admin [x](https://evil.example)'\necho \"token = $RUNNER_TOKEN\"\n",
        )
        .script("a/deploy.sh", "#!/bin/sh\n")
        .script("a/undeploy.sh", "#!/bin/sh\n")
        .script("b/deploy.sh", "#!/bin/sh\n")
        .script("b/undeploy.sh", "#!/bin/sh\n")
}

/// An opened pull request (no base commit), edited by `edit`.
fn opened(test: &Test, edit: impl Fn(&mut serde_json::Value)) -> Vec<(String, String)> {
    let text =
        std::fs::read_to_string(fixture("github/pull_request.opened.json")).expect("fixture");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    value["pull_request"]["base"]
        .as_object_mut()
        .expect("base")
        .remove("sha");
    edit(&mut value);
    let path = test.root().join("event.json");
    std::fs::write(&path, value.to_string()).expect("payload");
    github("pull_request", &path)
}

fn ci(test: &Test, env: &[(String, String)], extra: &[&str]) -> Output {
    let mut args = vec![
        "ci",
        "hub.yaml",
        "-s",
        "hub.state",
        "--comment",
        "comment.md",
    ];
    args.extend(extra);
    let mut command = pinned_command(test.root(), &args);
    for name in CI_VARIABLES {
        command.env_remove(name);
    }
    command
        .envs(env.iter().map(|(k, v)| (k, v)))
        .env("RUNNER_TOKEN", RUNNER_SECRET);
    Output::of(command.output().expect("run hub"), test.root())
}

fn comment(test: &Test) -> String {
    std::fs::read_to_string(test.root().join("comment.md")).unwrap_or_default()
}

#[test]
fn a_trusted_pull_request_runs_plan_steps_and_its_planned_values_stay_text() {
    let test = checkout();
    let event = opened(&test, |_| {});
    let out = ci(&test, &event, &["--plan-steps"]);
    assert!(
        test.root().join("planned.marker").exists(),
        "a member's pull request runs its plan steps\nstdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    let comment = comment(&test);
    assert!(comment.contains("Planned outputs:"), "{comment}");
    // The value is inside a fence longer than its backticks: no HTML, no
    // mention, no link is live.
    assert!(
        comment.contains("````\na.val = ``` </details><img"),
        "{comment}"
    );
    assert!(comment.contains("a.token = (masked)"), "{comment}");
    let all = everything_written(test.root(), &[&out.stdout, &out.stderr]);
    assert!(
        !all.contains(RUNNER_SECRET),
        "the runner's secret was written"
    );
}

#[test]
fn an_outsiders_pull_request_planned_for_anyone_runs_no_plan_step() {
    let test = checkout();
    let event = opened(&test, |value| {
        value["pull_request"]["user"]["login"] = "mallory".into();
        value["pull_request"]["author_association"] = "NONE".into();
        value["sender"]["login"] = "mallory".into();
    });
    let out = ci(&test, &event, &["--plan-steps", "--plan-from", "anyone"]);
    assert!(
        comment(&test).contains("Plan"),
        "the plan is made\nstdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        !test.root().join("planned.marker").exists(),
        "an outsider's code ran"
    );
    assert!(!comment(&test).contains("Planned outputs"));
}

#[test]
fn a_forks_pull_request_planned_with_plan_forks_runs_no_plan_step() {
    let test = checkout();
    let event = opened(&test, |value| {
        value["pull_request"]["head"]["repo"] = serde_json::json!({
            "id": 99_000_001, "full_name": "alice/infra", "fork": true
        });
    });
    let out = ci(&test, &event, &["--plan-steps", "--plan-forks"]);
    assert!(
        comment(&test).contains("Plan"),
        "the plan is made\nstdout:\n{}\nstderr:\n{}",
        out.stdout,
        out.stderr
    );
    assert!(
        !test.root().join("planned.marker").exists(),
        "a fork's code ran"
    );
}

/// The comment says which components wait for what (issue 42): `c` reads
/// an output `a`'s plan step leaves unknown.
#[test]
fn the_comment_shows_the_deferred_components_and_what_they_wait_for() {
    let test = checkout()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: steps}\ncomponents:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}, depends: [a]}\n  - {name: c, source: {dir: c}, depends: [a]}\n",
        )
        .file(
            "a/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: a}\noutputs:\n  - {name: a.val, fromTfVar: val}\n  - {name: a.url, fromTfVar: url}\n",
        )
        .script("a/plan.sh", "#!/bin/sh\necho Outputs:\necho 'val = v1'\necho 'url (known after apply)'\n")
        .file(
            "c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c}\nparameters:\n  - {name: c.in, value: '${a.url}'}\n",
        )
        .script("c/deploy.sh", "#!/bin/sh\n")
        .script("c/undeploy.sh", "#!/bin/sh\n");
    let event = opened(&test, |_| {});
    let out = ci(&test, &event, &["--plan-steps"]);
    let comment = comment(&test);
    assert!(
        comment.contains("| `c` | **create** | never deployed; deferred: planned after a applies (unknown: `c.in` ← output `a.url` of a)"),
        "{comment}\n{}",
        out.stderr
    );
    assert!(comment.contains(", 1 deferred**"), "{comment}");
}
