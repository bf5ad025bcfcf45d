//! Unknown keys: a near typo of a known key stops `elaborate`, `deploy` and
//! `plan` (see `typos_policy.rs` for where, and `--strict`/`--lenient`),
//! other unknown keys are warnings, and
//! structural errors point at the offending entry with a suggestion.

use crate::common::{hub_isolated, Test};

/// Two components `slow` and `after` sharing one component folder whose
/// deploy script leaves a marker file; `after` depends on `slow`.
fn stack() -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "
            version: 1
            kind: stack
            meta:
              name: typos
            components:
              - name: slow
                source:
                  dir: c
              - name: after
                source:
                  dir: c
                depends: [slow]
            parameters:
              - name: greeting
                value: hello
            ",
        )
        .file("c/hub-component.yaml", &component_manifest("env"))
        .file(
            "c/deploy.sh",
            "#!/bin/sh\necho \"$GREETING\" >> \"$(dirname \"$0\")/ran\"\n",
        )
}

/// The component manifest, exporting `greeting` under the key `env` (or
/// a misspelling of it).
fn component_manifest(env_key: &str) -> String {
    format!(
        "version: 1\nkind: component\nmeta:\n  name: c\nparameters:\n  - name: greeting\n    {env_key}: GREETING\n"
    )
}

/// `stack()` with a `hub.yaml` of components `slow` and `after`, then
/// `tail` (lines from line 8 on, unindented).
fn two_components(tail: &str) -> Test {
    let head = "kind: stack\nmeta: {name: s}\ncomponents:\n  - name: slow\n    source: {dir: c}\n  - name: after\n    source: {dir: c}\n";
    stack().file("hub.yaml", &format!("{head}{tail}"))
}

fn executable(test: &Test, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    let path = test.root().join(script);
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

#[test]
fn a_misspelt_key_in_a_params_file_is_an_error_with_its_line() {
    let t = stack()
        .file(
            "params.yaml",
            "
            # overrides
            paramters:
              - name: greeting
                value: bye
            ",
        )
        .args(&["elaborate", "hub.yaml", "params.yaml", "-o", "out.yaml"]);
    let out = t.run();
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "error: unknown key `paramters` looks like a typo (did you mean `parameters`?)\n  --> params.yaml:2:1\n",
    )
    .stderr_has("`--lenient` turns this error into a warning");
    assert!(
        !out.stderr.contains("warning: params.yaml"),
        "{}",
        out.stderr
    );
    assert!(!t.root().join("out.yaml").exists(), "nothing is written");
}

#[test]
fn lenient_makes_the_typo_a_warning_and_ignores_the_key() {
    let t = stack()
        .file(
            "params.yaml",
            "paramters:\n  - name: greeting\n    value: bye\n",
        )
        .args(&[
            "elaborate",
            "hub.yaml",
            "params.yaml",
            "--lenient",
            "-o",
            "out.yaml",
        ]);
    let out = t.run();
    out.success().stderr_has(
        "warning: params.yaml:1:1: unknown key `paramters` is ignored (did you mean `parameters`?)",
    );
    let stack = &out.documents("out.yaml")[0];
    let greeting = stack["parameters"]
        .as_sequence()
        .and_then(|p| p.iter().find(|p| p["name"] == "greeting"))
        .expect("greeting");
    assert_eq!(
        greeting["value"], "hello",
        "the misspelt override is not applied"
    );
}

#[test]
fn a_key_in_the_wrong_case_is_a_typo() {
    let out = Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: s}
            parameters:
              - name: token
                fromenv: TOKEN
            ",
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "error: unknown key `parameters[0].fromenv` looks like a typo (did you mean `fromEnv`?)\n  --> hub.yaml:5:5\n",
    );
    assert!(out.stdout.is_empty(), "nothing is written: {}", out.stdout);
}

#[test]
fn a_typo_in_a_component_manifest_stops_deploy_and_plan_only_with_strict() {
    let t = stack().file("c/hub-component.yaml", &component_manifest("evn"));
    executable(&t, "c/deploy.sh");
    let deploy = hub_isolated(
        &t,
        &["deploy", "hub.yaml", "-s", "s.state", "--strict"],
        &[],
    );
    assert_eq!(deploy.status, 1, "{}", deploy.stderr);
    deploy
        .stderr_has("unknown key `parameters[0].evn` looks like a typo (did you mean `env`?)")
        .stderr_has("--> c/hub-component.yaml:7:5");
    assert!(!t.root().join("c/ran").exists(), "no component ran");
    assert!(!t.root().join("s.state").exists(), "no state was written");

    let plan = hub_isolated(&t, &["plan", "hub.yaml", "-s", "s.state", "--strict"], &[]);
    assert_eq!(plan.status, 1, "{}", plan.stderr);
    plan.stderr_has("unknown key `parameters[0].evn` looks like a typo");
    assert!(plan.stdout.is_empty(), "no plan is shown: {}", plan.stdout);

    // Without `--strict` a component manifest's typo is a warning.
    let by_default = hub_isolated(&t, &["deploy", "hub.yaml", "-s", "s.state"], &[]);
    by_default.success().stderr_has(
        "warning: c/hub-component.yaml:7:5: unknown key `parameters[0].evn` is ignored (did you mean `env`?)",
    );
    let ran = std::fs::read_to_string(t.root().join("c/ran")).expect("both ran");
    assert_eq!(ran, "\n\n", "`evn` is ignored: GREETING is not exported");
}

#[test]
fn a_custom_key_is_only_a_warning() {
    let out = Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta:
              name: s
              category: demo
            x-owner: me
            extensions:
              include: [params.yaml]
            ",
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    out.success()
        .stderr_has("warning: hub.yaml:5:1: unknown key `x-owner` is ignored\n");
    assert!(!out.stderr.contains("did you mean"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("category") && !out.stderr.contains("extensions"),
        "keys real stacks use are known: {}",
        out.stderr
    );
}

#[test]
fn an_undefined_dependency_points_at_its_entry() {
    let out = two_components("    depends: [slow, slwo]\n")
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "error: components depend on components that are not defined: slwo\n  --> hub.yaml:8:21\n",
    )
    .stderr_has("help: did you mean `slow` instead of `slwo`?");
}

#[test]
fn a_stray_order_entry_points_at_its_line() {
    let out = two_components("lifecycle:\n  order:\n    - slow\n    - aftr\n")
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("  --> hub.yaml:11:7\n")
        .stderr_has("help: did you mean `after` instead of `aftr`?");
}

#[test]
fn unknown_names_in_lifecycle_lists_and_selections_get_a_suggestion() {
    let t = two_components("lifecycle:\n  order: [slow, after]\n  optional: [aftre]\n");
    let listed = hub_isolated(&t, &["plan", "hub.yaml", "-n"], &[]);
    assert_eq!(listed.status, 1, "{}", listed.stderr);
    listed
        .stderr_has("`lifecycle.optional` names `aftre`, which is not a component of the stack\n  --> hub.yaml:10:14\n")
        .stderr_has("help: did you mean `after`?");

    let t = stack();
    let selected = hub_isolated(&t, &["plan", "hub.yaml", "-n", "-c", "slwo", "-f"], &[]);
    assert_eq!(selected.status, 1, "{}", selected.stderr);
    selected.stderr_has("help: did you mean `slow`?");
}

#[test]
fn validate_keeps_near_typos_as_warnings_with_a_suggestion_when_lenient() {
    let out = Test::new()
        .file("params.yaml", "paramters:\n  - name: a\n")
        .args(&["validate", "params.yaml", "--lenient"])
        .run();
    out.success().stderr_has(
        "warning: params.yaml:1:1: unknown key `paramters` is ignored (did you mean `parameters`?)",
    );
}

#[test]
fn an_undefined_dependency_beside_an_explicit_order_points_at_its_entry() {
    let t = two_components("    depends:\n      - slwo\nlifecycle:\n  order: [slow, after]\n");
    let plan = hub_isolated(&t, &["plan", "hub.yaml", "-n"], &[]);
    assert_eq!(plan.status, 1, "{}", plan.stderr);
    plan.stderr_has("error: component `after` depends on `slwo`, which is not a component of the stack\n  --> hub.yaml:9:9\n")
        .stderr_has("help: did you mean `slow`?");
    // The reference elaborates it; the elaborated file is then pointed at.
    hub_isolated(&t, &["elaborate", "hub.yaml", "-o", "e.yaml"], &[]).success();
    let deploy = hub_isolated(&t, &["deploy", "e.yaml", "-n"], &[]);
    assert_eq!(deploy.status, 1, "{}", deploy.stderr);
    deploy
        .stderr_has("  --> e.yaml:")
        .stderr_has("help: did you mean `slow`?");
    assert!(!t.root().join("c/ran").exists(), "nothing ran");
}
