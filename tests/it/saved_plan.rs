//! Saved plans: `hub plan … --out PLAN` then `hub deploy --plan PLAN`
//! runs exactly what was planned, and refuses, before running anything, a
//! plan whose stack, state, folders or parameters moved since.

use crate::common::{
    demo_copy, hub_isolated, hub_pinned, read_documents, state_entries, Output, Test,
};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The secret of the generated stack: it must never be written to a plan.
const SECRET: &str = "s3cr3t-Pa55-value";

const STACK: &str = "
version: 1
kind: stack
meta: {name: saved}
components:
  - {name: net, source: {dir: components/net}}
  - {name: db, source: {dir: components/db}, depends: [net]}
  - {name: app, source: {dir: components/app}, depends: [db]}
parameters:
  - {name: net.cidr, value: 10.0.0.0/16}
  - {name: db.size, value: small}
";

/// `net` → `db` (with a password) → `app`; each run appends the
/// component's name to `runs.log` at the root.
fn stack() -> Test {
    let params = format!(
        "parameters:\n  - {{name: db.password, value: {SECRET}}}\n  - {{name: app.replicas, value: 2}}\n"
    );
    let parts = [
        ("net", "net.cidr: CIDR"),
        ("db", "db.size: SIZE\n  - db.password: PASSWORD"),
        ("app", "app.replicas: REPLICAS"),
    ];
    let mut test = Test::new()
        .file("hub.yaml", STACK)
        .file("params.yaml", &params);
    for (name, params) in parts {
        let params: String = params
            .split("\n  - ")
            .map(|p| {
                let (param, env) = p.split_once(": ").expect("name: ENV");
                format!("  - {{name: {param}, env: {env}}}\n")
            })
            .collect();
        let manifest =
            format!("version: 1\nkind: component\nmeta: {{name: {name}}}\nparameters:\n{params}");
        test = test
            .file(&format!("components/{name}/hub-component.yaml"), &manifest)
            .file(
                &format!("components/{name}/deploy.sh"),
                &format!("#!/bin/sh\necho {name} >> ../../runs.log\n"),
            )
            .file(&format!("components/{name}/undeploy.sh"), "#!/bin/sh\n");
        for verb in ["deploy", "undeploy"] {
            let path = test.root().join(format!("components/{name}/{verb}.sh"));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    test
}

fn hub(test: &Test, args: &[&str]) -> Output {
    hub_isolated(test, args, &[("HUB_NOW", "2026-01-01T00:00:00Z")])
}

fn deploy(test: &Test, extra: &[&str]) -> Output {
    let mut args = vec!["deploy", "hub.yaml", "params.yaml", "-s", "hub.yaml.state"];
    args.extend_from_slice(extra);
    hub(test, &args)
}

/// `hub plan hub.yaml params.yaml -s hub.yaml.state --out plan.json` plus
/// `extra`.
fn plan_out(test: &Test, extra: &[&str]) -> Output {
    let mut args = vec![
        "plan",
        "hub.yaml",
        "params.yaml",
        "-s",
        "hub.yaml.state",
        "--out",
        "plan.json",
    ];
    args.extend_from_slice(extra);
    hub(test, &args)
}

fn apply(test: &Test) -> Output {
    hub(test, &["deploy", "--plan", "plan.json"])
}

/// The components that ran since the last call, in order, and forgets them.
fn runs(test: &Test) -> Vec<String> {
    let path = test.root().join("runs.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    text.lines().map(String::from).collect()
}

fn plan_json(root: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(root.join("plan.json")).expect("plan file");
    serde_json::from_str(&text).expect("plan JSON")
}

/// Each component of the plan file with its action.
fn actions(root: &Path) -> Vec<(String, String)> {
    plan_json(root)["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_string(),
                c["action"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

/// The state file's bytes, to check that a refused plan left it alone.
fn state_bytes(test: &Test) -> Vec<u8> {
    std::fs::read(test.root().join("hub.yaml.state")).unwrap_or_default()
}

/// Deploys the stack, plans, changes something with `change`, and checks
/// that the plan is refused as stale with `reason`, nothing run and the
/// state untouched.
fn refused_as_stale(change: impl FnOnce(&Test), reason: &str) {
    let test = &stack();
    deploy(test, &[]).success();
    plan_out(test, &[]).success();
    change(test);
    assert_stale(test, reason);
}

/// `deploy --plan plan.json` is refused as stale with `reason`: nothing
/// runs and the state is untouched.
fn assert_stale(test: &Test, reason: &str) {
    runs(test);
    let before = state_bytes(test);
    let out = apply(test);
    out.failure()
        .stderr_has("error: plan `plan.json` is stale: ")
        .stderr_has(reason)
        .stderr_has("run `hub plan` again");
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(runs(test).is_empty(), "nothing runs: {}", out.stderr);
    assert!(state_bytes(test) == before, "the state is untouched");
}

/// The parameter `name` of a component of a plan file.
fn planned_parameter(component: &serde_json::Value, name: &str) -> serde_json::Value {
    component["parameters"]
        .as_array()
        .and_then(|list| list.iter().find(|p| p["name"] == name))
        .cloned()
        .unwrap_or_else(|| panic!("{name} in {component}"))
}

/// A secret parameter of a plan file: only the digest of its value.
fn assert_kept_as_digest(parameter: &serde_json::Value) {
    assert_eq!(parameter["secret"], true, "{parameter}");
    assert!(
        parameter["value"]
            .as_str()
            .is_some_and(|v| v.starts_with("sha256:")),
        "{parameter}"
    );
}

/// The plan format's JSON Schema.
fn plan_schema() -> serde_json::Value {
    serde_json::from_str(&hub_plan::plan::saved::schema_text()).expect("schema")
}

fn edit(test: &Test, path: &str, from: &str, to: &str) {
    let path = test.root().join(path);
    let text = std::fs::read_to_string(&path).expect("read");
    assert!(text.contains(from), "{from} in {}", path.display());
    std::fs::write(&path, text.replace(from, to)).expect("write");
}

#[test]
fn the_demo_plan_is_saved_then_deployed_as_planned() {
    let (_tmp, dir) = demo_copy();
    let args = [
        "plan",
        "hub.yaml",
        "params.yaml",
        "-s",
        "demo.state",
        "--out",
        "plan.json",
    ];
    hub_pinned(&dir, &args).success();
    let text = std::fs::read_to_string(dir.join("plan.json")).expect("plan file");
    insta::assert_snapshot!("demo_plan_file", text);
    let mode = std::fs::metadata(dir.join("plan.json"))
        .expect("plan file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    hub_pinned(&dir, &["deploy", "--plan", "plan.json"]).success();
    let state = read_documents(&dir.join("demo.state")).remove(0);
    let last = state["operations"]
        .as_sequence()
        .and_then(|ops| ops.last())
        .expect("an operation");
    let phases: Vec<&str> = last["phases"]
        .as_sequence()
        .expect("phases")
        .iter()
        .filter_map(|p| p["phase"].as_str())
        .collect();
    assert_eq!(phases, ["network", "database", "app"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("plan.json")).expect("plan file"),
        text,
        "the plan file is not modified"
    );
}

#[test]
fn a_plan_of_one_component_deploys_that_component_only() {
    let test = stack();
    deploy(&test, &[]).success();
    runs(&test);
    plan_out(&test, &["-c", "db"]).success();
    assert_eq!(actions(test.root()), pairs(&[("db", "update")]));
    let plan = plan_json(test.root());
    assert_eq!(plan["arguments"]["components"], serde_json::json!(["db"]));
    assert_eq!(plan["state"]["lineage"].as_str().map(str::len), Some(36));
    apply(&test).success();
    assert_eq!(runs(&test), ["db"]);
}

#[test]
fn a_first_plan_records_that_there_was_no_state() {
    let test = stack();
    plan_out(&test, &[]).success();
    let plan = plan_json(test.root());
    assert_eq!(plan["state"]["lineage"], serde_json::Value::Null);
    assert_eq!(plan["state"]["serial"], serde_json::Value::Null);
    assert_eq!(
        actions(test.root()),
        pairs(&[("net", "create"), ("db", "create"), ("app", "create")])
    );
    // How many run at once is the deploy's own.
    hub(&test, &["deploy", "--plan", "plan.json", "-j", "3"]).success();
    assert_eq!(runs(&test), ["net", "db", "app"]);
}

#[test]
fn a_changed_plan_runs_only_what_changed() {
    let test = stack();
    deploy(&test, &[]).success();
    runs(&test);
    edit(&test, "params.yaml", "value: 2", "value: 3");
    plan_out(&test, &["--changed"]).success();
    assert_eq!(
        actions(test.root()),
        pairs(&[("net", "no-op"), ("db", "no-op"), ("app", "update")])
    );
    apply(&test).success();
    assert_eq!(runs(&test), ["app"]);
    // The same plan again: the state moved.
    let out = apply(&test);
    out.failure().stderr_has("moved from serial");
}

/// Another deploy wrote `net` since the plan: `net` is refused (the plan
/// was not reviewed against that apply), the others read nothing that
/// changed and are applied (see `stale_state.rs`).
#[test]
fn another_deploy_of_one_component_refuses_it_and_applies_the_others() {
    let test = stack();
    deploy(&test, &[]).success();
    plan_out(&test, &[]).success();
    deploy(&test, &["-c", "net"]).success();
    runs(&test);
    let out = apply(&test);
    out.failure().stderr_has(
        "net skipped: refused: changed by another run since the plan (the state moved from serial",
    );
    out.stderr_has("plan again (`hub plan --out`) against the state that run left");
    assert_eq!(runs(&test), ["db", "app"]);
}

#[test]
fn a_plan_is_stale_on_a_state_of_another_lineage() {
    refused_as_stale(
        |test| {
            let args = ["deploy", "hub.yaml", "params.yaml", "-s", "other.state"];
            let lineage = [("HUB_LINEAGE", "another-lineage")];
            hub_isolated(test, &args, &lineage).success();
            std::fs::copy(
                test.root().join("other.state"),
                test.root().join("hub.yaml.state"),
            )
            .expect("copy");
        },
        "is another one (lineage `another-lineage`",
    );
}

#[test]
fn a_plan_is_stale_when_a_component_file_changed() {
    refused_as_stale(
        |test| {
            std::fs::write(test.root().join("components/db/extra.tf"), "# new\n").expect("write")
        },
        "the folder of `db` changed",
    );
}

#[test]
fn a_plan_is_stale_when_a_parameter_changed() {
    refused_as_stale(
        |test| edit(test, "params.yaml", "value: 2", "value: 5"),
        "parameters of `app` changed: `app.replicas`",
    );
}

#[test]
fn a_plan_is_stale_when_a_secret_changed() {
    refused_as_stale(
        |test| edit(test, "params.yaml", SECRET, "another-password"),
        "parameters of `db` changed: `db.password`",
    );
}

#[test]
fn a_plan_is_stale_when_the_stack_changed() {
    refused_as_stale(
        |test| edit(test, "hub.yaml", "value: small", "value: large"),
        "the elaborated stack changed",
    );
}

#[test]
fn a_plan_is_refused_for_another_stack_or_state() {
    let test = stack().file("other.yaml", &STACK.replace("name: saved", "name: other"));
    deploy(&test, &[]).success();
    plan_out(&test, &[]).success();
    runs(&test);
    let out = hub(
        &test,
        &["deploy", "other.yaml", "params.yaml", "--plan", "plan.json"],
    );
    out.failure().stderr_has(
        "it was made for the stack `hub.yaml params.yaml`, not `other.yaml params.yaml`",
    );
    let out = hub(
        &test,
        &["deploy", "--plan", "plan.json", "-s", "other.state"],
    );
    out.failure()
        .stderr_has("it was made for the state `hub.yaml.state`, not `other.state`");
    assert!(runs(&test).is_empty());
    // Repeating the plan's own stack and state is accepted.
    let args = [
        "deploy",
        "hub.yaml",
        "params.yaml",
        "-s",
        "hub.yaml.state",
        "--plan",
        "plan.json",
    ];
    hub(&test, &args).success();
    assert_eq!(runs(&test), ["net", "db", "app"]);
}

#[test]
fn flags_that_change_what_runs_are_refused_with_a_plan() {
    let test = stack();
    plan_out(&test, &[]).success();
    // `-c NAME` with a plan is one job of a pipeline (tests/it/writers.rs),
    // which alone takes `--replace`.
    let out = hub(&test, &["deploy", "--plan", "plan.json", "--replace", "db"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    out.stderr_has("only a job (`-c NAME`) takes it");
    for flag in [
        &["--changed"][..],
        &["--with-deps"],
        &["--with-dependents"],
        &["-o", "db"],
        &["-l", "db"],
        &["-n"],
        &["--prune"],
    ] {
        let mut args = vec!["deploy", "--plan", "plan.json"];
        args.extend_from_slice(flag);
        let out = hub(&test, &args);
        assert_eq!(out.status, 2, "{flag:?}: {}", out.stderr);
        out.stderr_has("cannot be used with");
    }
    assert!(runs(&test).is_empty());
    let out = hub(
        &test,
        &["plan", "hub.yaml", "--undeploy", "--out", "p.json"],
    );
    assert_eq!(out.status, 2, "{}", out.stderr);
}

#[test]
fn the_plan_file_holds_no_secret_and_follows_its_schema() {
    let test = stack();
    deploy(&test, &[]).success();
    plan_out(&test, &["--reveal"]).success();
    let text = std::fs::read_to_string(test.root().join("plan.json")).expect("plan file");
    assert!(!text.contains(SECRET), "{text}");
    let plan = plan_json(test.root());
    assert_kept_as_digest(&planned_parameter(&plan["components"][1], "db.password"));
    let schema = plan_schema();
    assert!(jsonschema::is_valid(&schema, &plan), "{text}");
    let on_disk = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/plan.schema.json"),
    )
    .expect("committed schema");
    assert_eq!(on_disk, hub_plan::plan::saved::schema_text());
    let mut wrong = plan.clone();
    wrong["components"][0]["action"] = serde_json::json!("maybe");
    assert!(!jsonschema::is_valid(&schema, &wrong));
}

#[test]
fn a_damaged_or_newer_plan_file_is_an_error_naming_it() {
    let test = stack();
    plan_out(&test, &[]).success();
    let mut newer = plan_json(test.root());
    newer["version"] = serde_json::json!(4);
    // Version 1 recorded neither the commit nor the files read: it cannot
    // be checked against what was reviewed.
    let mut older = plan_json(test.root());
    older["version"] = serde_json::json!(1);
    let mut shapeless = plan_json(test.root());
    shapeless["components"] = serde_json::json!("none");
    let cases = [
        ("{ not json", "the plan `bad.json` is damaged: not JSON"),
        (
            "{}",
            "the plan `bad.json` is damaged: it has no format `version`",
        ),
        (
            &newer.to_string()[..],
            "the plan `bad.json` has format version 4; this hub reads version 3",
        ),
        (
            &older.to_string()[..],
            "the plan `bad.json` has format version 1, which records neither the commit nor the files it read; this hub applies version 3",
        ),
        (
            &shapeless.to_string()[..],
            "the plan `bad.json` is damaged: ",
        ),
    ];
    for (text, message) in cases {
        std::fs::write(test.root().join("bad.json"), text).expect("write");
        let out = hub(&test, &["deploy", "--plan", "bad.json"]);
        out.failure().stderr_has(message);
    }
    let out = hub(&test, &["deploy", "--plan", "missing.json"]);
    out.failure()
        .stderr_has("cannot read the plan `missing.json`");
    assert!(runs(&test).is_empty());
}

#[test]
fn a_plan_with_a_component_that_would_fail_is_shown_but_not_saved() {
    let manifest = |name: &str, more: &str| {
        format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n{more}\n")
    };
    let test = Test::new()
        .file(
            "hub.yaml",
            "
            version: 1
            kind: stack
            meta: {name: f}
            components:
              - {name: a, source: {dir: components/a}}
              - {name: b, source: {dir: components/b}, depends: [a]}
            lifecycle:
              optional: [a]
              requires:
                optional: ['a.on:a']
            parameters:
              - {name: a.on, value: false}
            ",
        )
        .file(
            "components/a/hub-component.yaml",
            &manifest("a", "provides: [cap]"),
        )
        .file(
            "components/b/hub-component.yaml",
            &manifest("b", "requires: [cap]"),
        )
        .script("components/a/deploy.sh", "#!/bin/sh\n")
        .script("components/b/deploy.sh", "#!/bin/sh\n");
    let out = hub(
        &test,
        &["plan", "hub.yaml", "-s", "s.state", "--out", "plan.json"],
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(out.stdout.contains("b: fail"), "{}", out.stdout);
    out.stderr_has("the plan is not saved: `b` would fail");
    assert!(!test.root().join("plan.json").exists());
}

// ---- plans that delete removed components (`plan --prune --out`) -------

/// The stack's text with the components `extra` too (each with a `size`
/// and a secret `password`).
fn stack_text(extra: &[&str]) -> String {
    extra.iter().fold(STACK.to_string(), |text, name| {
        text.replace(
            "\nparameters:\n",
            &format!(
                "\n  - {{name: {name}, source: {{dir: components/{name}}}}}\nparameters:\n  - {{name: {name}.size, value: tiny}}\n  - {{name: {name}.password, value: {SECRET}}}\n"
            ),
        )
    })
}

/// The stack deployed with the components `extra` too; each one's
/// undeploy writes the `size` it gets to `NAME.undeployed` at the root.
fn deployed_with(extra: &[&str]) -> Test {
    let mut test = stack();
    for name in extra {
        test = test.component_with_undeploy(
            name,
            &format!("  - {{name: {name}.size, env: SIZE}}\n  - {{name: {name}.password, env: PASSWORD}}\n"),
            &format!("#!/bin/sh\necho \"$SIZE\" > ../../{name}.undeployed\n"),
        );
    }
    keep_only(&test, extra);
    deploy(&test, &[]).success();
    runs(&test);
    test
}

/// The stack with only the components `extra` besides its own: the
/// others deployed are removed.
fn keep_only(test: &Test, extra: &[&str]) {
    std::fs::write(test.root().join("hub.yaml"), stack_text(extra)).expect("write");
}

/// What the undeploy of a removed component wrote; `None` when it did not
/// run.
fn undeployed(test: &Test, name: &str) -> Option<String> {
    std::fs::read_to_string(test.root().join(format!("{name}.undeployed"))).ok()
}

/// The components the state has entries for.
fn entries(test: &Test) -> Vec<String> {
    state_entries(&test.root().join("hub.yaml.state"))
}

#[test]
fn a_pruning_plan_is_saved_then_undeploys_the_removed_component() {
    let test = deployed_with(&["old"]);
    keep_only(&test, &[]);
    plan_out(&test, &["--prune"]).success();
    assert_eq!(
        actions(test.root()),
        pairs(&[
            ("net", "update"),
            ("db", "update"),
            ("app", "update"),
            ("old", "delete")
        ])
    );
    let text = std::fs::read_to_string(test.root().join("plan.json")).expect("plan file");
    assert!(!text.contains(SECRET), "{text}");
    let plan = plan_json(test.root());
    assert_eq!(plan["arguments"]["prune"], true);
    let old = &plan["components"][3];
    let dir = test.root().join("components/old");
    assert_eq!(old["dir"].as_str(), Some(&*dir.display().to_string()));
    assert!(old["folder"]
        .as_str()
        .is_some_and(|f| f.starts_with("sha256:")));
    assert_eq!(
        planned_parameter(old, "old.size"),
        serde_json::json!({"name": "old.size", "value": "tiny", "secret": false})
    );
    assert_kept_as_digest(&planned_parameter(old, "old.password"));
    assert!(jsonschema::is_valid(&plan_schema(), &plan), "{text}");
    assert_eq!(undeployed(&test, "old"), None);
    apply(&test)
        .success()
        .stderr_has("hub: prune old (1/1): removed from the stack");
    assert_eq!(runs(&test), ["net", "db", "app"]);
    assert_eq!(undeployed(&test, "old").as_deref(), Some("tiny\n"));
    assert_eq!(entries(&test), ["app", "db", "net"]);
}

#[test]
fn a_pruning_plan_is_stale_when_another_component_was_removed_since() {
    let test = deployed_with(&["old", "cache"]);
    keep_only(&test, &["cache"]);
    plan_out(&test, &["--prune"]).success();
    assert_eq!(
        actions(test.root()).last(),
        Some(&("old".to_string(), "delete".to_string()))
    );
    keep_only(&test, &[]);
    assert_stale(
        &test,
        "the components removed from the stack changed (planned to delete: old; now: ",
    );
    assert_eq!(undeployed(&test, "old"), None);
    assert_eq!(undeployed(&test, "cache"), None);
}

#[test]
fn a_pruning_plan_is_stale_when_the_removed_component_s_folder_changed() {
    let test = deployed_with(&["old"]);
    keep_only(&test, &[]);
    plan_out(&test, &["--prune"]).success();
    std::fs::write(test.root().join("components/old/extra.tf"), "# new\n").expect("write");
    assert_stale(&test, "the folder of `old` changed");
    assert_eq!(undeployed(&test, "old"), None);
    assert!(entries(&test).contains(&"old".to_string()));
}

#[test]
fn a_plan_without_prune_leaves_removed_components_alone() {
    let test = deployed_with(&["old"]);
    keep_only(&test, &[]);
    plan_out(&test, &[]).success();
    assert_eq!(
        actions(test.root()),
        pairs(&[("net", "update"), ("db", "update"), ("app", "update")])
    );
    assert_eq!(plan_json(test.root())["arguments"]["prune"], false);
    apply(&test)
        .success()
        .stderr_has("warning: component `old` is in the state but no longer in the stack");
    assert_eq!(runs(&test), ["net", "db", "app"]);
    assert_eq!(undeployed(&test, "old"), None);
    assert!(entries(&test).contains(&"old".to_string()));
}
