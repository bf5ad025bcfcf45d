//! Issue 27, items 6 and 7 on the real binary: policies on plans, in CEL,
//! from the stack's `policies:` and from `--policy FILE`; their results in
//! `hub plan`, the refusal of a deploy or undeploy, `hub policy test`.

use crate::common::{hub_pinned, pinned_command, state_entries, Output, Test};
use std::path::Path;

/// `HUB_NOW` of [`hub_pinned`] is Thursday 2026-01-01; this is the Friday.
const FRIDAY: &str = "2026-01-02T09:30:00Z";

/// Three components, `db`, `cache` and `app`, whose scripts say what they
/// do, in a stack annotated with `environment` that protects `db` in prod
/// (the rule's `deny` on line 15) and warns when more than two components
/// change (line 20).
fn shop(environment: &str) -> Test {
    let mut test = Test::new();
    for name in ["db", "cache", "app"] {
        test = test
            .file(
                &format!("components/{name}/hub-component.yaml"),
                &format!(
                    "version: 1\nkind: component\nmeta: {{name: {name}}}\nparameters:\n  - name: db.password\n    value: hunter2\n"
                ),
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
    test.file(
        "hub.yaml",
        &format!(
            "
            version: 1
            kind: stack
            meta:
              name: shop
              annotations: {{environment: {environment}}}
            components:
              - name: db
                source: {{dir: components/db}}
              - name: cache
                source: {{dir: components/cache}}
              - name: app
                source: {{dir: components/app}}
            policies:
              - name: protected-db
                deny: >-
                  stack.environment == 'prod' &&
                  plan.components.exists(c, c.name == 'db' && c.action in ['delete', 'replace'])
                message: the database is protected in prod
              - name: at-most-two
                warn: >-
                  plan.components.filter(c, c.action in ['create', 'update', 'replace', 'delete']).size() > 2
                message: more than two components change at once
            "
        ),
    )
    .file(
        "fridays.yaml",
        "
        # Rules of the release team.
        - name: no-fridays
          deny: timestamp(now).getDayOfWeek() == 5
          message: no apply on Fridays
        ",
    )
}

fn on_friday(dir: &Path, args: &[&str]) -> Output {
    let out = pinned_command(dir, args)
        .env("HUB_NOW", FRIDAY)
        .output()
        .expect("run hub");
    Output::of(out, dir)
}

fn deployed(dir: &Path) {
    hub_pinned(dir, &["deploy", "hub.yaml", "-s", "s.state"]).success();
    assert_eq!(state_entries(&dir.join("s.state")), ["app", "cache", "db"]);
}

const FIRST_PLAN_TAIL: &str = "\
Plan: 3 to create, 0 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail

policies: 3 rules, 1 denied, 1 warned
  warn  at-most-two (hub.yaml:20): more than two components change at once
  deny  no-fridays (fridays.yaml:3): no apply on Fridays
";

#[test]
fn a_plan_shows_denies_and_warns_and_a_deny_fails_the_detailed_exit_code() {
    let (_, dir) = shop("prod").run_keep();
    let dir = dir.path();
    let args = [
        "plan",
        "hub.yaml",
        "-s",
        "s.state",
        "--policy",
        "fridays.yaml",
    ];
    let out = on_friday(dir, &args);
    // A denied plan is a plan that would fail: exit status 1, with or
    // without --detailed-exitcode.
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(out.stdout.ends_with(FIRST_PLAN_TAIL), "{}", out.stdout);
    let mut detailed = args.to_vec();
    detailed.push("--detailed-exitcode");
    let out = on_friday(dir, &detailed);
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stderr,
        "error: denied by policy `no-fridays`: no apply on Fridays\n  \
         --> fridays.yaml:3:3\n  \
         help: `hub plan` shows every policy's result; change the stack or the selection so that no `deny` rule holds\n"
    );
    // On a Thursday nothing denies: 2, something would change.
    let out = hub_pinned(dir, &detailed);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(out.stdout.ends_with(
        "policies: 3 rules, 0 denied, 1 warned\n  \
         warn  at-most-two (hub.yaml:20): more than two components change at once\n"
    ));
    // Markdown, for the pull-request comment.
    let mut markdown = args.to_vec();
    markdown.extend(["--format", "markdown"]);
    let out = on_friday(dir, &markdown);
    assert!(
        out.stdout.ends_with(
            "\n#### Policies: 3 rules, 1 denied, 1 warned\n\n\
             | Result | Policy | Message |\n|---|---|---|\n\
             | warn | `at-most-two` | more than two components change at once |\n\
             | **deny** | `no-fridays` | no apply on Fridays |\n"
        ),
        "{}",
        out.stdout
    );
    // JSON: every rule, after the plan.
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let out = on_friday(dir, &json);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(
        plan["policies"],
        serde_json::json!([
            {"name": "protected-db", "effect": "deny", "result": "pass",
             "message": "the database is protected in prod", "rule": "hub.yaml:15"},
            {"name": "at-most-two", "effect": "warn", "result": "warn",
             "message": "more than two components change at once", "rule": "hub.yaml:20"},
            {"name": "no-fridays", "effect": "deny", "result": "deny",
             "message": "no apply on Fridays", "rule": "fridays.yaml:3"},
        ])
    );
}

#[test]
fn a_rule_that_does_not_compile_is_an_error_with_its_line() {
    let (_, dir) = shop("prod")
        .file(
            "broken.yaml",
            "
            policies:
              - name: fine
                warn: 'false'
              - name: broken
                message: never shown
                deny: plan.components.exists(c, c.action ==)
            ",
        )
        .run_keep();
    let dir = dir.path();
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "s.state",
            "--policy",
            "broken.yaml",
        ],
    );
    assert_eq!(out.status, 1);
    assert_eq!(out.stdout, "", "nothing is planned");
    let first = out.stderr.lines().next().expect("a line");
    assert!(
        first.starts_with(
            "error: the policy `broken` does not compile: ERROR: <input>:1:38: Syntax error:"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("\n  --> broken.yaml:6:5\n"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("\n  help: write the rule in CEL over `plan`, `change`, `stack` and `now`"),
        "{}",
        out.stderr
    );
    // A rule that gives no yes or no is an error too, with its line.
    let (_, dir) = shop("prod")
        .file(
            "count.yaml",
            "- name: count\n  deny: size(plan.components)\n",
        )
        .run_keep();
    let out = hub_pinned(
        dir.path(),
        &[
            "plan",
            "hub.yaml",
            "-s",
            "s.state",
            "--policy",
            "count.yaml",
        ],
    );
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stderr,
        "error: the policy `count` cannot be evaluated: the rule gives int `3`, not true or false\n  \
         --> count.yaml:2:3\n  \
         help: a rule must give true or false for every plan: test a field with `has(x.f)` before reading it, and compare values of the same type\n"
    );
}

#[test]
fn a_denied_deploy_is_refused_before_anything_runs() {
    let (_, dir) = shop("prod").run_keep();
    let dir = dir.path();
    let deploy = [
        "deploy",
        "hub.yaml",
        "-s",
        "s.state",
        "--policy",
        "fridays.yaml",
    ];
    let out = on_friday(dir, &deploy);
    assert_eq!(out.status, 1);
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    assert!(!dir.join("s.state").exists(), "no state was written");
    assert_eq!(
        out.stderr,
        "warning: hub.yaml:20:5: policy `at-most-two`: more than two components change at once\n\
         error: denied by policy `no-fridays`: no apply on Fridays\n  \
         --> fridays.yaml:3:3\n  \
         help: `hub plan` shows every policy's result; change the stack or the selection so that no `deny` rule holds\n"
    );
    // On a Thursday it runs, and says the warning.
    let out = hub_pinned(dir, &deploy);
    out.success();
    assert!(
        out.stderr.contains(
            "warning: hub.yaml:20:5: policy `at-most-two`: more than two components change at once"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(state_entries(&dir.join("s.state")), ["app", "cache", "db"]);
}

#[test]
fn a_saved_plan_is_refused_when_a_policy_denies_it() {
    let (_, dir) = shop("prod").run_keep();
    let dir = dir.path();
    hub_pinned(
        dir,
        &["plan", "hub.yaml", "-s", "s.state", "--out", "plan.json"],
    )
    .success();
    let deploy = ["deploy", "--plan", "plan.json", "--policy", "fridays.yaml"];
    let out = on_friday(dir, &deploy);
    assert_eq!(out.status, 1);
    assert!(
        out.stderr
            .contains("error: denied by policy `no-fridays`: no apply on Fridays\n"),
        "{}",
        out.stderr
    );
    assert!(!dir.join("s.state").exists(), "nothing ran");
    hub_pinned(dir, &deploy).success();
    assert_eq!(state_entries(&dir.join("s.state")), ["app", "cache", "db"]);
}

#[test]
fn the_protected_set_cannot_be_deleted_in_prod() {
    let (_, dir) = shop("prod").run_keep();
    let dir = dir.path();
    deployed(dir);
    let out = hub_pinned(dir, &["undeploy", "hub.yaml", "-s", "s.state"]);
    assert_eq!(out.status, 1);
    assert!(!out.stdout.contains("undeploying"), "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "error: denied by policy `protected-db`: the database is protected in prod\n  --> hub.yaml:15:5\n"
        ),
        "{}",
        out.stderr
    );
    assert_eq!(state_entries(&dir.join("s.state")), ["app", "cache", "db"]);
    // What does not touch `db` goes ahead.
    let out = hub_pinned(dir, &["undeploy", "hub.yaml", "-s", "s.state", "-c", "app"]);
    out.success();
    assert!(out.stdout.contains("undeploying app"), "{}", out.stdout);
    assert!(!out.stdout.contains("undeploying db"), "{}", out.stdout);
    // In staging the same rule lets it go.
    let (_, staging) = shop("staging").run_keep();
    let staging = staging.path();
    deployed(staging);
    hub_pinned(staging, &["undeploy", "hub.yaml", "-s", "s.state"]).success();
}

#[test]
fn at_most_n_components_change_per_apply() {
    let (_, dir) = shop("prod")
        .file(
            "small.yaml",
            "
            - name: at-most-one
              deny: >-
                plan.components.filter(c, c.action in ['create', 'update', 'replace', 'delete']).size() > 1
              message: apply at most one component at a time
            ",
        )
        .run_keep();
    let dir = dir.path();
    deployed(dir);
    let policy = ["--policy", "small.yaml"];
    let out = hub_pinned(
        dir,
        &[&["deploy", "hub.yaml", "-s", "s.state"][..], &policy].concat(),
    );
    assert_eq!(out.status, 1);
    assert!(
        out.stderr.contains("error: denied by policy `at-most-one`: apply at most one component at a time\n  --> small.yaml:2:3\n"),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    let one = [
        &["deploy", "hub.yaml", "-s", "s.state", "-c", "app"][..],
        &policy,
    ]
    .concat();
    let out = hub_pinned(dir, &one);
    out.success();
    assert!(out.stdout.contains("deploying app"), "{}", out.stdout);
    // `--changed` leaves the unchanged ones out of the count.
    let changed = [
        &["deploy", "hub.yaml", "-s", "s.state", "--changed"][..],
        &policy,
    ]
    .concat();
    hub_pinned(dir, &changed).success();
}

#[test]
fn policy_test_evaluates_a_saved_plan_and_a_json_plan() {
    let (_, dir) = shop("prod").run_keep();
    let dir = dir.path();
    hub_pinned(
        dir,
        &["plan", "hub.yaml", "-s", "s.state", "--out", "saved.json"],
    )
    .success();
    let json = hub_pinned(
        dir,
        &["plan", "hub.yaml", "-s", "s.state", "--format", "json"],
    );
    std::fs::write(dir.join("plan.json"), &json.stdout).expect("write");
    // A saved plan names its stack, whose rules come first; a JSON plan
    // does not.
    let warned = "  warn  at-most-two (hub.yaml:20): more than two components change at once\n";
    let denied = "  deny  no-fridays (fridays.yaml:3): no apply on Fridays\n";
    for (plan, friday, thursday) in [
        (
            "saved.json",
            format!("policies: 3 rules, 1 denied, 1 warned\n{warned}{denied}"),
            format!("policies: 3 rules, 0 denied, 1 warned\n{warned}"),
        ),
        (
            "plan.json",
            format!("policies: 1 rule, 1 denied, 0 warned\n{denied}"),
            "policies: 1 rule, 0 denied, 0 warned\n".to_string(),
        ),
    ] {
        let test = ["policy", "test", plan, "--policy", "fridays.yaml"];
        let out = on_friday(dir, &test);
        assert_eq!(out.status, 1, "{plan}: {}", out.stderr);
        assert_eq!(out.stdout, friday, "{plan}");
        assert!(
            out.stderr
                .starts_with("error: denied by policy `no-fridays`"),
            "{}",
            out.stderr
        );
        let out = hub_pinned(dir, &test);
        out.success();
        assert_eq!(out.stdout, thursday, "{plan}");
    }
    // The stack's rules alone; a JSON plan without `--policy` has none.
    let out = hub_pinned(dir, &["policy", "test", "saved.json"]);
    out.success();
    assert_eq!(
        out.stdout,
        format!("policies: 2 rules, 0 denied, 1 warned\n{warned}")
    );
    let out = hub_pinned(dir, &["policy", "test", "plan.json"]);
    assert_eq!(out.status, 2);
    assert!(
        out.stderr.contains("there is no rule to evaluate"),
        "{}",
        out.stderr
    );
    // The saved plan in the shape of the JSON one: secrets masked.
    std::fs::write(
        dir.join("shape.yaml"),
        "- name: shape\n  deny: >-\n    plan.stack == 'shop' && plan.verb == 'deploy' && plan.counts.create == 3 &&\n    plan.components.all(c, c.parameters.exists(p, p.name == 'db.password' && p.value == '(masked)'))\n",
    )
    .expect("write");
    for plan in ["saved.json", "plan.json"] {
        let out = hub_pinned(dir, &["policy", "test", plan, "--policy", "shape.yaml"]);
        assert_eq!(out.status, 1, "{plan}: {}", out.stdout);
    }
    let out = hub_pinned(
        dir,
        &["policy", "test", "fridays.yaml", "--policy", "fridays.yaml"],
    );
    assert_eq!(out.status, 1);
    assert!(
        out.stderr
            .starts_with("error: `fridays.yaml` is not a plan: not JSON"),
        "{}",
        out.stderr
    );
}

#[test]
fn secrets_stay_masked_with_reveal_and_the_input_follows_its_schema() {
    let (_, dir) = shop("prod")
        .file(
            "peek.yaml",
            "- name: peek\n  deny: plan.components.exists(c, c.parameters.exists(p, p.value == 'hunter2'))\n",
        )
        .run_keep();
    let dir = dir.path();
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "s.state",
            "--reveal",
            "--policy",
            "peek.yaml",
            "--detailed-exitcode",
        ],
    );
    assert!(
        out.stdout.contains("db.password = hunter2"),
        "revealed in the plan shown"
    );
    assert_eq!(out.status, 2, "but not to the rule: {}", out.stdout);
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/policy-input.schema.json"),
        )
        .expect("schema"),
    )
    .expect("JSON");
    deployed(dir);
    for extra in [&[][..], &["-c", "app+"], &["--undeploy"], &["-n"]] {
        let mut args = vec!["plan", "hub.yaml", "-s", "s.state", "--format", "json"];
        args.extend_from_slice(extra);
        let out = hub_pinned(dir, &args);
        let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        let input = serde_json::json!({
            "plan": plan,
            "change": {"id": "", "sha": "", "author": "", "event": ""},
            "stack": {"name": "shop", "environment": "prod", "annotations": {"environment": "prod"}},
            "now": "2026-01-01T00:00:00Z",
        });
        assert!(
            jsonschema::is_valid(&schema, &input),
            "{extra:?}: {}",
            out.stdout
        );
    }
}

#[test]
fn a_parent_stack_s_rules_come_first_and_a_child_replaces_one_by_name() {
    let (_, dir) = shop("prod")
        .file(
            "child/hub.yaml",
            "
            version: 1
            kind: stack
            meta:
              name: child
              fromStack: ..
            components:
              - name: app
                source: {dir: ../components/app}
            policies:
              - name: at-most-two
                warn: 'false'
                message: replaced
              - name: own
                warn: 'true'
                message: the child's own rule
            ",
        )
        .run_keep();
    let dir = dir.path();
    let out = hub_pinned(
        dir,
        &["elaborate", "child/hub.yaml", "-o", "child.elaborate"],
    );
    out.success();
    let elaborated = std::fs::read_to_string(dir.join("child.elaborate")).expect("written");
    let names: Vec<&str> = elaborated
        .lines()
        .filter_map(|l| l.trim_start().strip_prefix("- name: "))
        .filter(|n| ["protected-db", "at-most-two", "own"].contains(n))
        .collect();
    assert_eq!(
        names,
        ["protected-db", "at-most-two", "own"],
        "{elaborated}"
    );
    let out = hub_pinned(dir, &["plan", "child.elaborate", "-s", "s.state"]);
    out.success();
    assert!(
        out.stdout.ends_with(
            "policies: 3 rules, 0 denied, 1 warned\n  warn  own (child.elaborate:40): the child's own rule\n"
        ),
        "{}",
        out.stdout
    );
    // Elaborated in memory: each rule where it is written.
    let args = [
        "plan",
        "child/hub.yaml",
        "-s",
        "s.state",
        "--format",
        "json",
    ];
    let out = hub_pinned(dir, &args);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    let rules: Vec<(&str, &str)> = plan["policies"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap_or_default(),
                r["rule"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        rules,
        [
            ("protected-db", "hub.yaml:15"),
            ("at-most-two", "child/hub.yaml:11"),
            ("own", "child/hub.yaml:14")
        ]
    );
}

/// `plan --out` shows a plan a rule denies but does not save it: nothing
/// could apply it (pipelines and `deploy --plan` start from that file).
#[test]
fn a_plan_a_rule_denies_is_shown_but_not_saved() {
    let (_, dir) = shop("prod").run_keep();
    let dir = dir.path();
    let args = [
        "plan",
        "hub.yaml",
        "-s",
        "s.state",
        "--out",
        "plan.json",
        "--policy",
        "fridays.yaml",
    ];
    let out = on_friday(dir, &args);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(out.stdout.ends_with(FIRST_PLAN_TAIL), "{}", out.stdout);
    assert!(
        out.stderr
            .contains("error: denied by policy `no-fridays`: no apply on Fridays\n"),
        "{}",
        out.stderr
    );
    assert!(
        !dir.join("plan.json").exists(),
        "a denied plan is not saved"
    );
    hub_pinned(dir, &args).success();
    assert!(dir.join("plan.json").exists());
}
