//! `hub plan`: what a deploy or undeploy would do, on the demo stack and on
//! small generated stacks; and that a plan runs and changes nothing.

use crate::common::{demo_copy, Output, Test};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Runs hub in `dir` with pinned time, ids and user, no standard input.
fn hub(dir: &Path, args: &[&str]) -> Output {
    crate::common::hub_pinned(dir, args)
}

/// Every file and folder below `dir` with its bytes (folders: none) and
/// modification time.
fn tree(dir: &Path) -> BTreeMap<PathBuf, (Vec<u8>, std::time::SystemTime)> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).expect("read").flatten() {
        let path = entry.path();
        let meta = entry.metadata().expect("metadata");
        let modified = meta.modified().expect("mtime");
        if meta.is_dir() {
            out.insert(path.clone(), (Vec::new(), modified));
            out.extend(tree(&path));
        } else {
            out.insert(
                path.clone(),
                (std::fs::read(&path).expect("read"), modified),
            );
        }
    }
    out
}

/// `hub plan hub.yaml params.yaml -s demo.state` plus `extra`.
pub(crate) fn plan(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["plan", "hub.yaml", "params.yaml", "-s", "demo.state"];
    args.extend(extra);
    hub(dir, &args)
}

/// Makes the scripts below `root` executable.
fn executable(root: &Path, scripts: &[&str]) {
    use std::os::unix::fs::PermissionsExt;
    for script in scripts {
        let path = root.join(script);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

/// `text` with the state's serial (which grows with every write a run
/// makes) replaced by `N`.
pub(crate) fn without_serial(dir: &Path, text: &str) -> String {
    let state = crate::common::read_documents(&dir.join("demo.state")).remove(0);
    let serial = state["serial"].as_u64().expect("a serial");
    let shown = format!("(serial {serial})");
    assert!(text.contains(&shown), "{shown} in:\n{text}");
    text.replace(&shown, "(serial N)")
}

/// Deploys the demo twice: a first deploy's components saw fewer
/// capabilities in `hub.provides` than any later run gives them.
pub(crate) fn deploy_demo(dir: &Path) {
    for _ in 0..2 {
        hub(
            dir,
            &["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"],
        )
        .success();
    }
}

#[test]
fn before_any_deploy_everything_deploys_in_waves_and_nothing_changes() {
    let (_tmp, dir) = demo_copy();
    let before = tree(&dir);
    let out = plan(&dir, &[]);
    out.success();
    insta::assert_snapshot!(out.stdout, @r#"
    plan: deploy stack `demo`
    state: demo.state does not exist: first deploy
    jobs: 1
    waves:
      1. network
      2. database
      3. app
      4. monitoring

    network: create (never deployed)
      runs: deploy.sh
      parameters:
        + hub.componentName = network
        + dns.domain = demo.local
        + component.network.cidr = 10.0.0.0/16
        + hub.provides = ""

    database: create (never deployed)
      runs: deploy.sh
      waits for: network (`depends`, provides `network`, parameter `component.network.subnet` is its output)
      requires: network ← network
      parameters:
        + hub.componentName = database
        + component.network.subnet = (known after network deploys)
        + component.database.size = small
        + component.database.name = demo
        + hub.provides = network

    app: create (never deployed)
      runs: deploy.sh
      waits for: database (`depends`, provides `database`, parameter `component.database.password` is its output, parameter `component.database.host` is its output)
      requires: database ← database
      parameters:
        + hub.componentName = app
        + dns.domain = demo.local
        + app.replicas = 3
        + app.tier = ha
        + env.owner = (from $USER)
        + component.database.host = (known after database deploys)
        + component.database.password = (known after database deploys)
        + hub.provides = database network

    monitoring: skip (`component.monitoring.enabled` is off)

    Plan: 3 to create, 0 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 1 skipped, 0 would fail
    "#);
    assert_eq!(
        tree(&dir),
        before,
        "no state, lock, logs or rendered template"
    );
}

#[test]
fn after_a_deploy_everything_runs_again_and_the_state_is_untouched() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let before = tree(&dir);
    let out = plan(&dir, &[]);
    out.success();
    insta::assert_snapshot!(without_serial(&dir, &out.stdout), @r#"
    plan: deploy stack `demo`
    state: demo.state (serial N)
    jobs: 1
    waves:
      1. network
      2. database
      3. app
      4. monitoring

    network: update (runs again: no --changed)
    database: update (runs again: no --changed)
    app: update (runs again: no --changed)
    monitoring: skip (`component.monitoring.enabled` is off)

    Plan: 0 to create, 3 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 1 skipped, 0 would fail
    "#);
    assert_eq!(
        tree(&dir),
        before,
        "the state's bytes, no lock, logs untouched"
    );
    assert!(!dir.join("demo.state.lock").exists());
}

#[test]
fn a_changed_parameter_shows_old_and_new_and_its_dependents_say_why_they_run() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let params = dir.join("params.yaml");
    let text = std::fs::read_to_string(&params).expect("params");
    std::fs::write(&params, text.replace("value: small", "value: large")).expect("write");
    let out = plan(&dir, &["--changed"]);
    out.success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    for expected in [
        "network: no-op",
        "database: update (parameters changed: component.database.size)",
        "    ~ component.database.size = small → large",
        "    (4 unchanged; --verbose shows every parameter)",
        "app: update (if database's component.database.host or database's component.database.password changes)",
        "Plan: 0 to create, 2 to update, 0 to replace, 0 to rerun, 0 to delete, 1 unchanged, 1 skipped, 0 would fail",
    ] {
        assert!(
            lines.contains(&expected),
            "{expected:?} in:\n{}",
            out.stdout
        );
    }
}

#[test]
fn a_touched_file_redeploys_its_component() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let script = dir.join("components/network/deploy.sh");
    let mut text = std::fs::read_to_string(&script).expect("script");
    text.push_str("# touched\n");
    std::fs::write(&script, text).expect("write");
    let out = plan(&dir, &["--changed"]);
    out.success();
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines.contains(&"network: update (folder content changed)"),
        "{}",
        out.stdout
    );
    assert!(
        lines.contains(&"database: update (if network's component.network.subnet changes)"),
        "{}",
        out.stdout
    );
}

#[test]
fn undeploy_runs_in_reverse_without_what_never_deployed() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let before = tree(&dir);
    let out = plan(&dir, &["--undeploy"]);
    out.success();
    let text = without_serial(&dir, &out.stdout);
    let headlines: Vec<&str> = text
        .lines()
        .filter(|l| !l.starts_with(' ') && l.contains(": "))
        .collect();
    assert_eq!(
        headlines,
        [
            "plan: undeploy stack `demo`",
            "state: demo.state (serial N)",
            "jobs: 1",
            "app: delete",
            "database: delete",
            "network: delete",
            "Plan: 0 to create, 0 to update, 0 to replace, 0 to rerun, 3 to delete, 0 unchanged, 0 skipped, 0 would fail",
        ]
    );
    assert!(out
        .stdout
        .contains("waves:\n  1. app\n  2. database\n  3. network\n"));
    assert!(out
        .stdout
        .contains("  requires: network ← network (state)\n"));
    assert_eq!(tree(&dir), before);
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}:\n{}", out.stdout))
}

fn parameter<'a>(component: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    component["parameters"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == name))
        .unwrap_or_else(|| panic!("no parameter {name} in {component}"))
}

#[test]
fn the_json_document_has_waves_actions_requirements_and_parameters() {
    let (_tmp, dir) = demo_copy();
    let doc = json(plan(&dir, &["--format", "json", "-j", "2"]).success());
    assert_eq!(doc["stack"], "demo");
    assert_eq!(doc["verb"], "deploy");
    assert_eq!(doc["state"]["path"], "demo.state");
    assert!(doc["state"]["serial"].is_null());
    assert_eq!(doc["jobs"], 2);
    assert_eq!(
        doc["waves"],
        serde_json::json!([["network"], ["database"], ["app"], ["monitoring"]])
    );
    let database = &doc["components"][1];
    assert_eq!(database["name"], "database");
    assert_eq!(database["action"], "create");
    assert_eq!(database["reasons"], serde_json::json!(["never deployed"]));
    assert_eq!(
        database["requires"],
        serde_json::json!([{"name": "network", "providers": ["network"]}])
    );
    let subnet = parameter(database, "component.network.subnet");
    assert_eq!(subnet["value"], "(known after network deploys)");
    assert_eq!(subnet["change"], "added");
    assert!(subnet["previous"].is_null());
    assert_eq!(doc["components"][3]["action"], "skip");
    assert_eq!(
        doc["counts"],
        serde_json::json!({"create": 3, "update": 0, "replace": 0, "rerun": 0, "delete": 0, "no-op": 0, "skip": 1, "fail": 0})
    );
}

#[test]
fn secrets_are_masked_unless_revealed() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let masked = json(plan(&dir, &["--format", "json"]).success());
    let app = &masked["components"][2];
    let password = parameter(app, "component.database.password");
    assert_eq!(password["value"], "(masked)");
    assert_eq!(password["previous"], "(masked)");
    assert_eq!(password["change"], "unchanged");
    let revealed = json(plan(&dir, &["--format", "json", "--reveal"]).success());
    let password = parameter(&revealed["components"][2], "component.database.password");
    assert_eq!(password["value"], "pw-demo-small-1234");
}

#[test]
fn a_report_lists_each_component_with_its_action() {
    let (_tmp, dir) = demo_copy();
    plan(&dir, &["--report", "plan.json"]).success();
    let text = std::fs::read_to_string(dir.join("plan.json")).expect("report");
    let report: serde_json::Value = serde_json::from_str(&text).expect("json");
    assert_eq!(report["kind"], "plan");
    assert_eq!(report["status"], "planned");
    assert_eq!(report["started"], "2026-01-01T00:00:00Z");
    let statuses: Vec<(&str, &str, &str)> = report["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default(),
                c["status"].as_str().unwrap_or_default(),
                c["reason"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        statuses,
        [
            ("network", "deploy", "never deployed"),
            ("database", "deploy", "never deployed"),
            ("app", "deploy", "never deployed"),
            (
                "monitoring",
                "skipped",
                "`component.monitoring.enabled` is off"
            ),
        ]
    );
}

// ------------------------------------------------------- generated stacks

/// `base` provides `queue`; `left` and `right` depend on it (`right` also
/// requires `dns`, which nobody provides); `top` depends on both; `odd`
/// has a parameter that cannot be expanded.
fn generated() -> Test {
    let text = "\
version: 1
kind: stack
meta: {name: gen}
components:
- {name: base, source: {dir: base}}
- {name: left, source: {dir: left}, depends: [base]}
- {name: right, source: {dir: right}, depends: [base]}
- {name: top, source: {dir: top}, depends: [left, right]}
- {name: odd, source: {dir: odd}}
requires: [cloud]
platform: {provides: [cloud]}
lifecycle: {verbs: [deploy, undeploy], order: [base, left, right, top, odd]}
parameters:
- {name: api.token, value: s3cr3t-value}
---
version: 1
kind: component
meta: {name: base}
provides: [queue]
requires: [cloud]
parameters:
- {name: api.token, env: TOKEN}
outputs:
- {name: base.url, fromTfVar: url}
---
version: 1
kind: component
meta: {name: left}
requires: [queue]
parameters:
- {name: left.greeting, value: 'hello ${base.url}', env: GREETING}
---
version: 1
kind: component
meta: {name: right}
requires: [dns]
---
version: 1
kind: component
meta: {name: top}
---
version: 1
kind: component
meta: {name: odd}
parameters:
- {name: odd.broken, value: '${nope.nothing}'}
- {name: odd.fine, value: ok}
- {name: odd.user, value: 'uses ${odd.broken}'}
";
    let mut test = Test::new().file("hub.yaml.elaborate", text);
    for name in ["base", "left", "right", "top", "odd"] {
        test = test
            .script(
                &format!("{name}/deploy.sh"),
                "#!/bin/sh\necho; echo Outputs:; echo 'url = https://base'\n",
            )
            .script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

#[test]
fn requirements_failures_and_unexpandable_parameters_are_shown_and_the_plan_exits_1() {
    let t = generated();
    let out = hub(
        t.root(),
        &["plan", "hub.yaml.elaborate", "-s", "s.state", "-j", "2"],
    );
    // The whole plan is shown; a plan with components that would fail
    // exits 1, so that a script does not take it for a success.
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("that would fail the run"),
        "{}",
        out.stderr
    );
    insta::assert_snapshot!(out.stdout, @r#"
    plan: deploy stack `gen`
    state: s.state does not exist: first deploy
    jobs: 2
    waves:
      1. base
      2. left, right
      3. top
      4. odd

    base: create (never deployed)
      runs: deploy.sh
      requires: cloud ← platform
      parameters:
        + hub.componentName = base
        + api.token = (masked)
        + hub.provides = cloud

    left: create (never deployed)
      runs: deploy.sh
      waits for: base (`depends`, provides `queue`, `left.greeting` reads its output `base.url`)
      requires: queue ← base
      parameters:
        + hub.componentName = left
        + left.greeting = (known after base deploys)
        + hub.provides = cloud queue

    right: fail (requirement `dns` not provided (provided: cloud queue))
      waits for: base (`depends`)
      requires: dns ← nobody
      parameters:
        + hub.componentName = right
        + hub.provides = cloud queue

    top: fail (it depends on `right`, which would fail)
      waits for: left (`depends`); right (`depends`)

    odd: fail (cannot expand `odd.broken`)
      waits for: top (comes before in `lifecycle.order`)
      parameters:
        + hub.componentName = odd
        + odd.broken = (error: `odd.broken|odd` references unknown `nope.nothing` (declared at hub.yaml.elaborate:46))
        + odd.fine = ok
        + odd.user = (error: uses `odd.broken`, which cannot be expanded)
        + hub.provides = cloud queue

    Plan: 2 to create, 0 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 3 would fail
    "#);
    assert!(!t.root().join("s.state").exists());
    assert!(!t.root().join("base/env.out").exists());
}

#[test]
fn a_plan_after_a_deploy_of_a_generated_stack_finds_it_unchanged() {
    let t = Test::new()
        .file(
            "hub.yaml.elaborate",
            "\
version: 1
kind: stack
meta: {name: two}
components:
- {name: a, source: {dir: a}}
- {name: b, source: {dir: b}, depends: [a]}
lifecycle: {verbs: [deploy, undeploy], order: [a, b]}
---
version: 1
kind: component
meta: {name: a}
outputs:
- {name: a.url, fromTfVar: url}
---
version: 1
kind: component
meta: {name: b}
parameters:
- {name: a.url, env: URL}
",
        )
        .file(
            "a/deploy.sh",
            "#!/bin/sh\necho; echo Outputs:; echo 'url = https://a'\n",
        )
        .file("b/deploy.sh", "#!/bin/sh\n")
        .file("a/undeploy.sh", "#!/bin/sh\n")
        .file("b/undeploy.sh", "#!/bin/sh\n");
    let root = t.root();
    executable(root, &["a/deploy.sh", "b/deploy.sh"]);
    let deploy = hub(root, &["deploy", "hub.yaml.elaborate", "-s", "s.state"]);
    deploy.success();
    let before = tree(root);
    let out = hub(
        root,
        &["plan", "hub.yaml.elaborate", "-s", "s.state", "--changed"],
    );
    out.success();
    assert!(out.stdout.contains("a: no-op\n"), "{}", out.stdout);
    assert!(out.stdout.contains("b: no-op\n"), "{}", out.stdout);
    assert!(!out.stdout.contains("a.url"), "unchanged: {}", out.stdout);
    let verbose = hub(
        root,
        &[
            "plan",
            "hub.yaml.elaborate",
            "-s",
            "s.state",
            "--changed",
            "--verbose",
        ],
    );
    assert!(
        verbose.stdout.contains("      a.url = https://a\n"),
        "{}",
        verbose.stdout
    );
    assert!(out
        .stdout
        .ends_with("Plan: 0 to create, 0 to update, 0 to replace, 0 to rerun, 0 to delete, 2 unchanged, 0 skipped, 0 would fail\n"));
    assert_eq!(tree(root), before);
}

#[test]
fn bad_input_is_an_error() {
    let t = generated().file("broken.state", "version: [\n");
    let root = t.root();
    let unreadable = hub(root, &["plan", "hub.yaml.elaborate", "-s", "broken.state"]);
    unreadable.failure().stderr_has("broken.state");
    let unknown = hub(
        root,
        &["plan", "hub.yaml.elaborate", "-n", "-c", "nope", "-f"],
    );
    unknown.failure().stderr_has("`nope`");
    let t = Test::new().file(
        "hub.yaml.elaborate",
        "version: 1\nkind: stack\nmeta: {name: x\n",
    );
    let malformed = hub(t.root(), &["plan", "hub.yaml.elaborate", "-n"]);
    malformed.failure().stderr_has("hub.yaml.elaborate");
}

#[test]
fn a_user_parameter_without_a_value_is_an_error_not_a_prompt() {
    let t = Test::new()
        .file(
            "hub.yaml.elaborate",
            "\
version: 1
kind: stack
meta: {name: ask}
components:
- {name: c, source: {dir: c}}
lifecycle: {order: [c]}
parameters:
- {name: secret.word, kind: user}
---
version: 1
kind: component
meta: {name: c}
parameters:
- {name: secret.word, env: WORD}
",
        )
        .file("c/deploy.sh", "#!/bin/sh\n");
    let out = hub(t.root(), &["plan", "hub.yaml.elaborate", "-n"]);
    out.failure().stderr_has("secret.word");
}
