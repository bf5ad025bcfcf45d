//! Issue 43, item 5 on the real binary: Rego modules beside the CEL rules,
//! inline in the stack (`rego:`), in a file beside it (`file:`) and given
//! with `--policy FILE.rego`; conftest's `deny`, `violation` and `warn`;
//! their results where the CEL rules' are; the time budget; the paths a
//! pull request may name.

use crate::common::{hub_pinned, pinned_command, state_entries, Output, Test};
use std::path::Path;

/// `HUB_NOW` of [`hub_pinned`] is Thursday 2026-01-01; this is the Friday.
const FRIDAY: &str = "2026-01-02T09:30:00Z";

fn on_friday(dir: &Path, args: &[&str]) -> Output {
    let out = pinned_command(dir, args)
        .env("HUB_NOW", FRIDAY)
        .output()
        .expect("run hub");
    Output::of(out, dir)
}

/// Components `db`, `cache` and `app` in a prod stack whose `policies:`
/// are `extra` (written at the indentation of the list's items).
fn shop(policies: &str) -> Test {
    let mut test = Test::new();
    for name in ["db", "cache", "app"] {
        test = test
            .file(
                &format!("components/{name}/hub-component.yaml"),
                &format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n"),
            )
            .script(
                &format!("components/{name}/deploy.sh"),
                &format!("#!/bin/sh\necho deploying {name}\n"),
            )
            .script(
                &format!("components/{name}/undeploy.sh"),
                &format!("#!/bin/sh\necho undeploying {name}\n"),
            );
    }
    let stack = "version: 1\nkind: stack\nmeta:\n  name: shop\n  annotations: {environment: prod}\ncomponents:\n  - name: db\n    source: {dir: components/db}\n  - name: cache\n    source: {dir: components/cache}\n  - name: app\n    source: {dir: components/app}\npolicies:\n";
    std::fs::write(test.root().join("hub.yaml"), format!("{stack}{policies}")).expect("write");
    test
}

/// The stack's lines 14 to 24: a module inline, whose `deny` is on line 18.
const INLINE: &str = "  - name: protected-db
    rego: |
      package shop

      deny contains msg if {
        input.stack.environment == \"prod\"
        some c in input.plan.components
        c.name == \"db\"
        c.action in {\"delete\", \"replace\"}
        msg := sprintf(\"%s is protected in %s\", [c.name, input.stack.environment])
      }
";

/// Conftest's conventions in a file: `package main`, `violation` objects,
/// `warn` strings, a rule that reads `input.now`.
const RELEASE: &str = "package main

violation contains {\"msg\": \"no apply on Fridays\", \"severity\": \"high\"} if {
  time.weekday(time.parse_rfc3339_ns(input.now)) == \"Friday\"
}

warn contains msg if {
  changing := [c | some c in input.plan.components; c.action != \"no-op\"]
  count(changing) > 2
  msg := sprintf(\"%d components change at once\", [count(changing)])
}
";

#[test]
fn rego_denies_violates_and_warns_in_plan_and_deploy_as_cel_rules_do() {
    let test = shop(INLINE).file("release.rego", RELEASE);
    let dir = test.root();
    let plan = [
        "plan",
        "hub.yaml",
        "-s",
        "s.state",
        "--policy",
        "release.rego",
    ];
    let out = on_friday(dir, &plan);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout.ends_with(
            "policies: 3 rules, 1 denied, 1 warned\n  \
             deny  release.rego (release.rego:3): no apply on Fridays\n  \
             warn  release.rego (release.rego:7): 3 components change at once\n"
        ),
        "{}",
        out.stdout
    );
    // A Thursday: the module of the stack passes, the file's warns.
    let out = hub_pinned(dir, &plan);
    out.success();
    assert!(
        out.stdout.ends_with(
            "policies: 2 rules, 0 denied, 1 warned\n  \
             warn  release.rego (release.rego:7): 3 components change at once\n"
        ),
        "{}",
        out.stdout
    );
    // JSON: the results under `policies`, like a CEL rule's.
    let mut json = plan.to_vec();
    json.extend(["--format", "json"]);
    let out = on_friday(dir, &json);
    let document: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(
        document["policies"],
        serde_json::json!([
            {"name": "protected-db", "effect": "deny", "result": "pass", "message": "", "rule": "hub.yaml:15"},
            {"name": "release.rego", "effect": "deny", "result": "deny", "message": "no apply on Fridays", "rule": "release.rego:3"},
            {"name": "release.rego", "effect": "warn", "result": "warn", "message": "3 components change at once", "rule": "release.rego:7"},
        ])
    );
    // A deploy on Friday is refused before anything runs, with the warning.
    let deploy = [
        "deploy",
        "hub.yaml",
        "-s",
        "s.state",
        "--policy",
        "release.rego",
    ];
    let out = on_friday(dir, &deploy);
    assert_eq!(out.status, 1);
    assert!(!dir.join("s.state").exists(), "nothing ran");
    assert_eq!(
        out.stderr,
        "warning: release.rego:7:1: policy `release.rego`: 3 components change at once\n\
         error: denied by policy `release.rego`: no apply on Fridays\n  \
         --> release.rego:3:1\n  \
         help: `hub plan` shows every policy's result; change the stack or the selection so that no `deny` rule holds\n"
    );
    hub_pinned(dir, &deploy).success();
    assert_eq!(state_entries(&dir.join("s.state")), ["app", "cache", "db"]);
    // The inline module denies the undeploy of `db`, naming its line.
    let out = hub_pinned(dir, &["undeploy", "hub.yaml", "-s", "s.state"]);
    assert_eq!(out.status, 1);
    assert!(!out.stdout.contains("undeploying"), "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "error: denied by policy `protected-db`: db is protected in prod\n  --> hub.yaml:18:7\n"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(state_entries(&dir.join("s.state")), ["app", "cache", "db"]);
}

#[test]
fn a_module_in_a_file_beside_the_stack_reads_plan_change_and_stack() {
    let module = "package main

deny contains msg if {
  input.change.id == \"42\"
  input.plan.stack == \"shop\"
  input.stack.annotations.environment == \"prod\"
  msg := sprintf(\"change %s may not deploy %s in %s\", [input.change.id, input.plan.stack, input.stack.environment])
}
";
    let test = shop("  - name: team\n    file: rules/team.rego\n").file("rules/team.rego", module);
    let dir = test.root();
    let out = hub_pinned(dir, &["plan", "hub.yaml", "-s", "s.state"]);
    out.success();
    assert!(
        out.stdout
            .ends_with("policies: 1 rule, 0 denied, 0 warned\n"),
        "{}",
        out.stdout
    );
    let out = hub_pinned(
        dir,
        &[
            "plan", "hub.yaml", "-s", "s.state", "--change", "42", "--sha", "abc1234",
        ],
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout.ends_with(
            "policies: 1 rule, 1 denied, 0 warned\n  \
             deny  team (rules/team.rego:3): change 42 may not deploy shop in prod\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn a_module_file_may_not_lead_out_of_the_stack_s_folder() {
    let outside = tempfile::tempdir().expect("temporary folder");
    let module = outside.path().join("evil.rego");
    std::fs::write(&module, "package main\n").expect("write");
    let cases = [
        (
            module.display().to_string(),
            "it is an absolute path; write it relative to the stack file's folder",
        ),
        (
            "../evil.rego".to_string(),
            "it leads out of the stack file's folder through `..`",
        ),
        (
            "rules/../../evil.rego".to_string(),
            "it leads out of the stack file's folder through `..`",
        ),
        (
            "rules/link.rego".to_string(),
            "it leads out of the stack file's folder through a symbolic link",
        ),
    ];
    for (path, problem) in cases {
        let test = shop(&format!("  - name: team\n    file: {path}\n"))
            .file("rules/ok.rego", "package main\n");
        let dir = test.root();
        std::os::unix::fs::symlink(&module, dir.join("rules/link.rego")).expect("link");
        let out = hub_pinned(dir, &["plan", "hub.yaml", "-s", "s.state"]);
        assert_eq!(out.status, 1, "{path}: {}", out.stderr);
        assert!(
            out.stderr.starts_with(&format!(
                "error: the policy `team` cannot use the Rego file `{path}`: {problem}\n  --> hub.yaml:15:5\n"
            )),
            "{path}: {}",
            out.stderr
        );
        assert!(!out.stdout.contains("Plan:"), "nothing is planned");
    }
}

#[test]
fn a_syntax_error_names_the_line_of_the_module_where_it_is_written() {
    let broken = "  - name: broken\n    rego: |\n      package main\n\n      deny contains msg if {\n        msg := sprintf(\"x\", [)\n      }\n";
    let test = shop(broken).file(
        "bad.rego",
        "package main\n\ndeny contains \"x\" if {\n  input.plan.\n}\n",
    );
    let dir = test.root();
    let out = hub_pinned(dir, &["plan", "hub.yaml", "-s", "s.state"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    // The module's line 4, column 7 is the stack's line 19 (`rego: |` is
    // on line 15), column 13 (the module is indented by six).
    let (first, rest) = out.stderr.split_once('\n').expect("two lines");
    assert!(
        first.starts_with("error: the policy `broken` is not valid Rego: 4:7: "),
        "{}",
        out.stderr
    );
    assert!(rest.starts_with("  --> hub.yaml:19:13\n"), "{}", out.stderr);
    assert!(
        rest.contains("help: write the module in Rego v1"),
        "{}",
        out.stderr
    );
    let test = shop("").file(
        "bad.rego",
        "package main\n\ndeny contains \"x\" if {\n  input.plan.\n}\n",
    );
    let out = hub_pinned(
        test.root(),
        &["plan", "hub.yaml", "-s", "s.state", "--policy", "bad.rego"],
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    let (first, rest) = out.stderr.split_once('\n').expect("two lines");
    assert!(
        first.starts_with("error: the policy `bad.rego` is not valid Rego: 5:1: "),
        "{}",
        out.stderr
    );
    assert!(rest.starts_with("  --> bad.rego:5:1\n"), "{}", out.stderr);
}

#[test]
fn a_module_over_its_time_budget_is_an_error_that_denies() {
    let looping = "package main\n\ndeny contains \"never\" if {\n  count([1 | some a in numbers.range(1, 5000); some b in numbers.range(1, 5000); some c in numbers.range(1, 5000)]) < 0\n}\n";
    let test = shop("").file("loop.rego", looping);
    let dir = test.root();
    let started = std::time::Instant::now();
    let out = pinned_command(
        dir,
        &["plan", "hub.yaml", "-s", "s.state", "--policy", "loop.rego"],
    )
    .env("HUB_CEL_MAX_TIME", "300ms")
    .output()
    .expect("run hub");
    let out = Output::of(out, dir);
    assert!(started.elapsed() < std::time::Duration::from_secs(60));
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout.ends_with(
            "policies: 1 rule, 0 denied, 0 warned, 1 failed\n  \
             error loop.rego (loop.rego:1): it ran over its budget of 300 ms (HUB_CEL_MAX_TIME): loop over fewer or smaller lists\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr.contains(
            "error: the policy `loop.rego` cannot be evaluated: it ran over its budget of 300 ms"
        ),
        "{}",
        out.stderr
    );
    // The hint speaks Rego, not CEL.
    assert!(
        out.stderr.contains("help: a Rego module must finish") && !out.stderr.contains("has(x.f)"),
        "{}",
        out.stderr
    );
}

#[test]
fn policy_test_evaluates_rego_with_cel_on_a_saved_and_a_json_plan() {
    let test = shop(INLINE)
        .file("release.rego", RELEASE)
        .file("fridays.yaml", "- name: no-fridays\n  deny: timestamp(now).getDayOfWeek() == 5\n  message: no apply on Fridays (CEL)\n");
    let dir = test.root();
    hub_pinned(
        dir,
        &["plan", "hub.yaml", "-s", "s.state", "--out", "saved.json"],
    )
    .success();
    let out = hub_pinned(
        dir,
        &["plan", "hub.yaml", "-s", "s.state", "--format", "json"],
    );
    std::fs::write(dir.join("plan.json"), &out.stdout).expect("write");
    let policies = ["--policy", "release.rego", "--policy", "fridays.yaml"];
    // The saved plan's stack gives its inline module too; the JSON plan
    // has only the files'.
    for (plan, rules) in [("saved.json", 4), ("plan.json", 3)] {
        let mut args = vec!["policy", "test", plan];
        args.extend(policies);
        let out = on_friday(dir, &args);
        assert_eq!(out.status, 1, "{plan}: {}", out.stderr);
        assert_eq!(
            out.stdout,
            format!(
                "policies: {rules} rules, 2 denied, 1 warned\n  \
                 deny  release.rego (release.rego:3): no apply on Fridays\n  \
                 warn  release.rego (release.rego:7): 3 components change at once\n  \
                 deny  no-fridays (fridays.yaml:2): no apply on Fridays (CEL)\n"
            ),
            "{plan}"
        );
        let out = hub_pinned(dir, &args);
        out.success();
    }
}

/// What a module says is text from a pull request: in a comment it is
/// escaped as a CEL rule's message is.
#[test]
fn a_module_s_messages_are_escaped_in_markdown() {
    let module =
        "package main\n\nwarn contains \"<img src=x onerror=alert(1)> | @team\" if { true }\n";
    let test = shop("").file("loud.rego", module);
    let out = hub_pinned(
        test.root(),
        &[
            "plan",
            "hub.yaml",
            "-s",
            "s.state",
            "--policy",
            "loud.rego",
            "--format",
            "markdown",
        ],
    );
    out.success();
    assert!(!out.stdout.contains("<img"), "{}", out.stdout);
    assert!(!out.stdout.contains(" | @team"), "{}", out.stdout);
    assert!(
        out.stdout.contains("| warn | `loud.rego` |"),
        "{}",
        out.stdout
    );
}

/// The rules of the guide (no delete of a protected set in prod, at most N
/// changes per apply, no apply on Fridays) in CEL and in Rego give the same
/// verdicts on the same plans.
#[test]
fn the_guide_s_rules_in_rego_agree_with_cel() {
    let cel = "- name: protected
  deny: >-
    stack.environment == 'prod' &&
    plan.components.exists(c, c.name in ['db'] && c.action in ['delete', 'replace'])
  message: protected
- name: small
  deny: plan.components.filter(c, c.action in ['create', 'update', 'replace', 'rerun', 'delete']).size() > 2
  message: small
- name: fridays
  deny: timestamp(now).getDayOfWeek() == 5
  message: fridays
";
    let rego = "package main

deny contains \"protected\" if {
  input.stack.environment == \"prod\"
  some c in input.plan.components
  c.name in {\"db\"}
  c.action in {\"delete\", \"replace\"}
}

deny contains \"small\" if {
  count([c | some c in input.plan.components; c.action in {\"create\", \"update\", \"replace\", \"rerun\", \"delete\"}]) > 2
}

deny contains \"fridays\" if {
  time.weekday(time.parse_rfc3339_ns(input.now)) == \"Friday\"
}
";
    let test = shop("").file("rules.yaml", cel).file("rules.rego", rego);
    let dir = test.root();
    let denied = |args: &[&str], friday: bool, policy: &str| -> Vec<String> {
        let mut args = args.to_vec();
        args.extend(["--policy", policy, "--format", "json"]);
        let out = match friday {
            true => on_friday(dir, &args),
            false => hub_pinned(dir, &args),
        };
        let document: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        let mut messages: Vec<String> = document["policies"]
            .as_array()
            .expect("results")
            .iter()
            .filter(|r| r["result"] == "deny")
            .map(|r| r["message"].as_str().unwrap_or_default().to_string())
            .collect();
        messages.sort();
        messages
    };
    let agree = |plans: &[(&[&str], bool, &[&str])]| {
        for (args, friday, expected) in plans {
            assert_eq!(
                denied(args, *friday, "rules.yaml"),
                *expected,
                "CEL {args:?}"
            );
            assert_eq!(
                denied(args, *friday, "rules.rego"),
                *expected,
                "Rego {args:?}"
            );
        }
    };
    let plan: &[&str] = &["plan", "hub.yaml", "-s", "s.state"];
    agree(&[
        (plan, true, &["fridays", "small"]),
        (plan, false, &["small"]),
    ]);
    hub_pinned(dir, &["deploy", "hub.yaml", "-s", "s.state"]).success();
    let undeploy: &[&str] = &["plan", "--undeploy", "hub.yaml", "-s", "s.state"];
    agree(&[
        (
            &["plan", "hub.yaml", "-s", "s.state", "-c", "app"],
            false,
            &[],
        ),
        (
            &[
                "plan",
                "--undeploy",
                "hub.yaml",
                "-s",
                "s.state",
                "-c",
                "db",
            ],
            false,
            &["protected"],
        ),
        (
            &[
                "plan",
                "--undeploy",
                "hub.yaml",
                "-s",
                "s.state",
                "-c",
                "app,cache",
            ],
            false,
            &[],
        ),
        (undeploy, true, &["fridays", "protected", "small"]),
    ]);
}

/// In `hub ci` a Rego module reads the change as a CEL rule does: its
/// deny fails the plan, shows in the comment's table, and the apply that
/// follows is refused.
#[test]
fn a_rego_module_denies_a_pull_request_s_plan_in_hub_ci() {
    use crate::ci::{comment, comment_event, last_line, state_serial};
    let (_tmp, dir) = crate::ci::deployed_demo();
    let module = "package main\n\ndeny contains msg if {\n  input.change.id == \"42\"\n  input.change.author == \"alice\"\n  msg := sprintf(\"pull request %s by %s may not touch `%s` | @team\", [input.change.id, input.change.author, input.plan.stack])\n}\n";
    std::fs::write(dir.join("rules.rego"), module).expect("write");
    let before = state_serial(&dir);
    let planned = comment_event(
        &dir,
        "plan.member",
        &["--comment", "comment.md", "--policy", "rules.rego"],
    );
    assert_eq!(planned.status, 1, "{}", planned.stderr);
    assert!(
        last_line(&planned).starts_with("hub ci: plan of pull request #42 fails:"),
        "{}",
        planned.stdout
    );
    let text = comment(&dir);
    assert!(
        text.starts_with("## hub plan of pull request #42: failed\n"),
        "{text}"
    );
    assert!(
        text.ends_with(
            "| **deny** | `rules.rego` | pull request 42 by alice may not touch `demo` \\| @\u{200d}team |\n"
        ),
        "{text}"
    );
    let applied = comment_event(&dir, "apply.member", &["--policy", "rules.rego"]);
    assert_eq!(applied.status, 1, "{}", applied.stderr);
    assert_eq!(state_serial(&dir), before, "nothing ran");
}

/// A saved plan records its `.rego` files with their digests: the apply
/// evaluates them again, and refuses a plan whose module changed since.
#[test]
fn a_saved_plan_evaluates_its_rego_files_again_and_refuses_a_changed_one() {
    let test = shop("").file("release.rego", RELEASE);
    let dir = test.root();
    hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "s.state",
            "--policy",
            "release.rego",
            "--out",
            "plan.json",
        ],
    )
    .success();
    let deploy = ["deploy", "--plan", "plan.json"];
    let out = on_friday(dir, &deploy);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("error: denied by policy `release.rego`: no apply on Fridays\n"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("s.state").exists(), "nothing ran");
    std::fs::write(dir.join("release.rego"), "package main\n").expect("write");
    let out = hub_pinned(dir, &deploy);
    assert_eq!(out.status, 1, "a changed module is stale");
    assert!(
        out.stderr.starts_with(
            "error: plan `plan.json` is stale: the policy file `release.rego` changed; run `hub plan` again
"
        ),
        "{}",
        out.stderr
    );
    assert!(!dir.join("s.state").exists(), "nothing ran");
}
