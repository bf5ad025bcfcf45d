//! What makes a component run under `--changed` beyond its own inputs
//! (issue 26): dependents triggered by the outputs they read, as Spacelift
//! triggers a stack (`lifecycle.triggerAlways`, failed runs reconciled,
//! failed upstreams' outputs never used, new references), ignored changes
//! (`lifecycle.ignoreChanges`) and replacement triggers
//! (`lifecycle.replaceTriggeredBy`), on a real stack:
//! `db` → `app` (reads `db`'s `endpoint`), `db` → `audit` and `db` →
//! `report` (read nothing), `cache` on its own.

use crate::common::{hub_isolated, Output, Test};
use std::path::Path;

/// The stack, with `lifecycle` (indented lines) and `report`'s `depends`.
fn hub_yaml(lifecycle: &str, report_depends: &str) -> String {
    format!(
        "version: 1
kind: stack
meta: {{name: trig}}
components:
  - {{name: db, source: {{dir: components/db}}}}
  - {{name: app, source: {{dir: components/app}}, depends: [db]}}
  - {{name: audit, source: {{dir: components/audit}}, depends: [db]}}
  - {{name: report, source: {{dir: components/report}}{report_depends}}}
  - {{name: cache, source: {{dir: components/cache}}}}
parameters:
  - {{name: db.size, value: small}}
  - {{name: db.stamp, value: one}}
  - {{name: app.tag, value: v1}}
  - {{name: audit.level, value: info}}
  - {{name: report.kind, value: daily}}
  - {{name: cache.flavor, value: redis}}
lifecycle:
{lifecycle}"
    )
}

const DEFAULT_LIFECYCLE: &str = "  triggerAlways: [audit]
  ignoreChanges: {app: [app.tag]}
  replaceTriggeredBy: {cache: [db, cache.flavor]}
";

fn manifest(name: &str, params: &[(&str, &str)], outputs: &[&str]) -> String {
    let mut text = format!("version: 1\nkind: component\nmeta: {{name: {name}}}\nparameters:\n");
    for (param, env) in params {
        text.push_str(&format!("  - {{name: {param}, env: {env}}}\n"));
    }
    if !outputs.is_empty() {
        text.push_str("outputs:\n");
        for output in outputs {
            text.push_str(&format!("  - {{name: {output}, fromTfVar: {output}}}\n"));
        }
    }
    text
}

/// Logs its run in `../../runs.log`; fails when `../../fail-NAME` exists
/// (after printing its outputs, as a half-done apply would).
fn script(name: &str, outputs: &str) -> String {
    format!(
        "#!/bin/sh\necho {name} >> ../../runs.log\necho; echo Outputs:\n{outputs}echo\n\
         if [ -e ../../fail-{name} ]; then exit 3; fi\n"
    )
}

/// A component: name, parameters (name, env), outputs, the lines its
/// script prints after `Outputs:`.
type Part<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a [&'a str], &'a str);

fn stack(lifecycle: &str) -> Test {
    let mut test = Test::new()
        .file("hub.yaml", &hub_yaml(lifecycle, ", depends: [db]"))
        .file("params.yaml", "parameters: []\n");
    let parts: [Part; 5] = [
        (
            "db",
            &[("db.size", "SIZE"), ("db.stamp", "STAMP")],
            &["endpoint", "stamp"],
            "echo \"endpoint = db-$SIZE\"\necho \"stamp = $STAMP\"\n",
        ),
        ("app", &[("endpoint", "DB"), ("app.tag", "TAG")], &[], ""),
        ("audit", &[("audit.level", "LEVEL")], &[], ""),
        ("report", &[("report.kind", "KIND")], &[], ""),
        ("cache", &[("cache.flavor", "FLAVOR")], &[], ""),
    ];
    for (name, params, outputs, printed) in parts {
        test = test
            .file(
                &format!("components/{name}/hub-component.yaml"),
                &manifest(name, params, outputs),
            )
            .script(
                &format!("components/{name}/deploy.sh"),
                &script(name, printed),
            )
            .script(&format!("components/{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

fn hub(test: &Test, verb: &str, extra: &[&str]) -> Output {
    let mut args = vec![verb, "hub.yaml", "params.yaml", "-s", "hub.yaml.state"];
    args.extend_from_slice(extra);
    hub_isolated(test, &args, &[("HUB_NOW", "2026-01-01T00:00:00Z")])
}

/// The components that ran since the last call, sorted; forgets them.
fn runs(test: &Test) -> Vec<String> {
    let path = test.root().join("runs.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    let mut names: Vec<String> = text.lines().map(String::from).collect();
    names.sort();
    names
}

fn params(root: &Path, values: &[(&str, &str)]) {
    let mut text = String::from("parameters:\n");
    for (name, value) in values {
        text.push_str(&format!("  - {{name: {name}, value: {value}}}\n"));
    }
    std::fs::write(root.join("params.yaml"), text).expect("write params");
}

fn lines(out: &Output) -> Vec<&str> {
    out.stdout.lines().collect()
}

fn has_line(out: &Output, expected: &str) {
    assert!(
        lines(out).contains(&expected),
        "{expected:?} in:\n{}\n{}",
        out.stdout,
        out.stderr
    );
}

/// Deployed once; the runs forgotten.
fn deployed(lifecycle: &str) -> Test {
    let t = stack(lifecycle);
    hub(&t, "deploy", &[]).success();
    assert_eq!(runs(&t), ["app", "audit", "cache", "db", "report"]);
    t
}

// ---- item 4: dependents triggered by the outputs they read ----------------

#[test]
fn an_output_it_does_not_read_changed_so_the_dependent_is_skipped() {
    let t = deployed(DEFAULT_LIFECYCLE);
    // db runs again and prints another `stamp`, the same `endpoint`.
    params(t.root(), &[("db.stamp", "two")]);
    let plan = hub(&t, "plan", &["--changed"]);
    plan.success();
    has_line(&plan, "app: update (if db's endpoint changes)");
    has_line(&plan, "report: no-op");
    let out = hub(&t, "deploy", &["--changed"]);
    out.success();
    assert_eq!(runs(&t), ["audit", "cache", "db"], "{}", out.stderr);
    out.stderr_has("hub: app skipped: no output it reads changed (compared: db's endpoint)");
}

#[test]
fn a_saved_plan_is_executed_with_its_conditions() {
    let t = deployed(DEFAULT_LIFECYCLE);
    params(t.root(), &[("db.stamp", "two")]);
    hub(&t, "plan", &["--changed", "--out", "plan.json"]).success();
    let out = hub_isolated(
        &t,
        &["deploy", "--plan", "plan.json"],
        &[("HUB_NOW", "2026-01-01T00:00:00Z")],
    );
    out.success();
    assert_eq!(runs(&t), ["audit", "cache", "db"], "{}", out.stderr);
    out.stderr_has("hub: app skipped: no output it reads changed (compared: db's endpoint)");
}

#[test]
fn an_output_it_reads_changed_so_the_dependent_runs() {
    let t = deployed(DEFAULT_LIFECYCLE);
    params(t.root(), &[("db.size", "large")]);
    let out = hub(&t, "deploy", &["--changed", "--why"]);
    out.success();
    assert_eq!(runs(&t), ["app", "audit", "cache", "db"], "{}", out.stderr);
    out.stderr_has("hub: app runs: parameters changed: endpoint");
}

#[test]
fn trigger_always_runs_a_dependent_whenever_its_dependency_runs() {
    let t = deployed(DEFAULT_LIFECYCLE);
    // db runs again (its folder changed) and prints the same outputs.
    std::fs::write(t.root().join("components/db/README"), "notes\n").expect("write");
    let plan = hub(&t, "plan", &["--changed"]);
    plan.success();
    has_line(
        &plan,
        "audit: update (`db` runs first and `lifecycle.triggerAlways` lists it)",
    );
    let out = hub(&t, "deploy", &["--changed", "--why"]);
    out.success();
    assert_eq!(runs(&t), ["audit", "cache", "db"], "{}", out.stderr);
    out.stderr_has(
        "hub: audit runs: a component it depends on ran and `lifecycle.triggerAlways` lists it",
    );
    // Nothing ran first: audit is left alone too.
    let again = hub(&t, "deploy", &["--changed"]);
    again.success();
    assert!(runs(&t).is_empty(), "{}", again.stderr);
    // The same in a parallel run, where cache, which does not wait for
    // db, is not replaced by it.
    std::fs::write(t.root().join("components/db/README"), "more\n").expect("write");
    let parallel = hub(&t, "deploy", &["--changed", "-j", "3"]);
    parallel.success();
    assert_eq!(runs(&t), ["audit", "db"], "{}", parallel.stderr);
    parallel.stderr_has("hub: app skipped: no output it reads changed (compared: db's endpoint)");
}

#[test]
fn a_dependent_whose_last_run_failed_runs_again_though_nothing_changed() {
    let t = deployed(DEFAULT_LIFECYCLE);
    std::fs::write(t.root().join("fail-app"), "").expect("write");
    params(t.root(), &[("db.size", "large")]);
    hub(&t, "deploy", &["--changed", "--fail-fast"]).failure();
    assert_eq!(runs(&t), ["app", "db"]);
    std::fs::remove_file(t.root().join("fail-app")).expect("remove");
    let plan = hub(&t, "plan", &["--changed"]);
    plan.success();
    has_line(&plan, "app: rerun (its last run failed (`error`))");
    // app runs again; so does audit (`triggerAlways`), which the failure
    // stopped before it saw db's new outputs.
    let out = hub(&t, "deploy", &["--changed"]);
    out.success();
    assert_eq!(runs(&t), ["app", "audit"], "{}", out.stderr);
}

#[test]
fn the_outputs_of_a_failed_upstream_are_never_used() {
    let t = deployed(DEFAULT_LIFECYCLE);
    std::fs::write(t.root().join("fail-db"), "").expect("write");
    params(t.root(), &[("db.size", "large")]);
    // `--force` goes on after the failure.
    let out = hub(&t, "deploy", &["--changed", "--force"]);
    // db printed `endpoint = db-large` and failed: what depends on it does
    // not run, and says which upstream failed; cache, replaced when db
    // deploys, is not.
    assert_eq!(runs(&t), ["db"], "{}", out.stderr);
    out.stderr_has("it depends on `db`, which failed in this run");
    let captured = |out: &Output| {
        let state = &out.documents("hub.yaml.state")[0];
        format!("{:?}", state["components"])
    };
    let outputs = captured(&out);
    assert!(
        outputs.contains("db-small") && !outputs.contains("db-large"),
        "{outputs}"
    );
    // The next run uses what db prints once it succeeds; what the failure
    // left in error (report too, though it reads nothing) runs again.
    std::fs::remove_file(t.root().join("fail-db")).expect("remove");
    let out = hub(&t, "deploy", &["--changed"]);
    out.success();
    assert_eq!(
        runs(&t),
        ["app", "audit", "cache", "db", "report"],
        "{}",
        out.stderr
    );
    let outputs = captured(&out);
    assert!(outputs.contains("db-large"), "{outputs}");
}

#[test]
fn a_reader_of_a_failed_upstream_it_does_not_depend_on_names_it() {
    // app reads db's `endpoint` without listing db in `depends`.
    let t = stack(DEFAULT_LIFECYCLE);
    let text = hub_yaml(DEFAULT_LIFECYCLE, ", depends: [db]")
        .replace("components/app}, depends: [db]}", "components/app}}");
    std::fs::write(t.root().join("hub.yaml"), text).expect("write");
    std::fs::write(t.root().join("fail-db"), "").expect("write");
    // `--force` goes on after the failure; the run ends `incomplete`.
    let out = hub(&t, "deploy", &["--force"]);
    out.stderr_has(
        "parameter `endpoint` reads `db`'s output `endpoint`, and `db` failed in this run (the outputs of a failed run are not used, and this run has none of an earlier deploy)",
    );
    // Once db has deployed, a selection loads its outputs from the state: a
    // later failure of db leaves app those of its last successful deploy.
    std::fs::remove_file(t.root().join("fail-db")).expect("remove");
    hub(&t, "deploy", &[]).success();
    std::fs::write(t.root().join("fail-db"), "").expect("write");
    params(t.root(), &[("db.size", "large")]);
    let _ = runs(&t);
    let out = hub(&t, "deploy", &["--force", "-c", "db,app"]);
    out.stderr_has(
        "hub: app reads db's endpoint from db's last successful deploy (db failed in this run)",
    );
    let state = &out.documents("hub.yaml.state")[0];
    let app = format!("{:?}", state["components"]["app"]["parameters"]);
    assert!(
        app.contains("db-small") && !app.contains("db-large"),
        "{app}"
    );
}

#[test]
fn a_new_reference_triggers_and_a_removed_one_does_not() {
    let t = deployed(DEFAULT_LIFECYCLE);
    // `report` no longer depends on db: it does not run.
    std::fs::write(t.root().join("hub.yaml"), hub_yaml(DEFAULT_LIFECYCLE, "")).expect("write");
    let out = hub(&t, "deploy", &["--changed"]);
    out.success();
    assert!(runs(&t).is_empty(), "{}", out.stderr);
    // A stack whose report never depended on db, then does: it runs.
    let t = stack(DEFAULT_LIFECYCLE);
    std::fs::write(t.root().join("hub.yaml"), hub_yaml(DEFAULT_LIFECYCLE, "")).expect("write");
    hub(&t, "deploy", &[]).success();
    runs(&t);
    let with = hub_yaml(DEFAULT_LIFECYCLE, ", depends: [db]");
    std::fs::write(t.root().join("hub.yaml"), with).expect("write");
    let out = hub(&t, "deploy", &["--changed", "--why"]);
    out.success();
    assert_eq!(runs(&t), ["report"], "{}", out.stderr);
    out.stderr_has("hub: report runs: outputs of `db` changed");
}

// ---- item 6: ignored changes -----------------------------------------------

#[test]
fn a_change_to_ignored_parameters_alone_does_not_run_the_component() {
    let t = deployed(DEFAULT_LIFECYCLE);
    params(t.root(), &[("app.tag", "v2")]);
    let plan = hub(&t, "plan", &["--changed"]);
    plan.success();
    has_line(
        &plan,
        "app: no-op (changes ignored by `lifecycle.ignoreChanges`: app.tag)",
    );
    let out = hub(&t, "deploy", &["--changed", "--why"]);
    out.success();
    assert!(runs(&t).is_empty(), "{}", out.stderr);
    out.stderr_has("hub: app: changes ignored by `lifecycle.ignoreChanges`: app.tag");
    // Another change makes it run, with the ignored one shown apart.
    params(t.root(), &[("app.tag", "v2"), ("db.size", "large")]);
    let plan = hub(&t, "plan", &["--changed"]);
    has_line(&plan, "app: update (if db's endpoint changes; changes ignored by `lifecycle.ignoreChanges`: app.tag)");
}

#[test]
fn ignore_changes_all_ignores_every_parameter_but_not_the_folder() {
    let lifecycle = "  ignoreChanges: {report: all}\n";
    let t = deployed(lifecycle);
    params(t.root(), &[("report.kind", "weekly")]);
    let plan = hub(&t, "plan", &["--changed"]);
    has_line(
        &plan,
        "report: no-op (changes ignored by `lifecycle.ignoreChanges`: report.kind)",
    );
    hub(&t, "deploy", &["--changed"]).success();
    assert!(runs(&t).is_empty());
    std::fs::write(t.root().join("components/report/README"), "notes\n").expect("write");
    hub(&t, "deploy", &["--changed"]).success();
    assert_eq!(runs(&t), ["report"]);
}

// ---- item 7: replacement triggers ------------------------------------------

#[test]
fn a_component_is_replaced_when_a_component_it_names_deploys() {
    let t = deployed(DEFAULT_LIFECYCLE);
    let plan = hub(&t, "plan", &["--changed"]);
    plan.success();
    has_line(&plan, "cache: no-op");
    params(t.root(), &[("db.size", "large")]);
    let plan = hub(&t, "plan", &["--changed"]);
    has_line(
        &plan,
        "cache: replace (undeploy, then deploy: `db` deploys in this run (`lifecycle.replaceTriggeredBy`))",
    );
    let out = hub(&t, "deploy", &["--changed"]);
    out.success();
    assert!(runs(&t).contains(&"cache".to_string()), "{}", out.stderr);
}

#[test]
fn a_component_is_replaced_when_a_parameter_it_names_changes() {
    let t = deployed("  replaceTriggeredBy: {cache: [cache.flavor]}\n");
    params(t.root(), &[("cache.flavor", "memcached")]);
    let plan = hub(&t, "plan", &["--changed"]);
    has_line(
        &plan,
        "cache: replace (undeploy, then deploy: parameter `cache.flavor` changed (`lifecycle.replaceTriggeredBy`))",
    );
    hub(&t, "deploy", &["--changed"]).success();
    assert_eq!(runs(&t), ["cache"]);
}

#[test]
fn a_replacement_holds_only_if_the_component_it_names_does_deploy() {
    let t = deployed("  replaceTriggeredBy: {cache: [app]}\n");
    // db runs; app, planned to run if db's endpoint changes, does not.
    params(t.root(), &[("db.stamp", "two")]);
    let plan = hub(&t, "plan", &["--changed"]);
    has_line(
        &plan,
        "cache: replace (undeploy, then deploy: `app` deploys in this run (`lifecycle.replaceTriggeredBy`))",
    );
    let out = hub(&t, "deploy", &["--changed", "--why"]);
    out.success();
    assert_eq!(runs(&t), ["db"], "{}", out.stderr);
    out.stderr_has("hub: cache not replaced: app did not deploy in this run");
    // When app does deploy, cache is replaced.
    params(t.root(), &[("db.stamp", "two"), ("db.size", "large")]);
    hub(&t, "deploy", &["--changed"]).success();
    assert_eq!(runs(&t), ["app", "cache", "db"]);
}

/// `cache`'s undeploy logs `undeploy cache FLAVOR` (the parameter its
/// state entry recorded) in `runs.log`; fails when `fail-undeploy` exists.
fn logging_undeploy(t: &Test) {
    let path = t.root().join("components/cache/undeploy.sh");
    std::fs::write(
        &path,
        "#!/bin/sh\necho \"undeploy cache $FLAVOR\" >> ../../runs.log\n\
         if [ -e ../../fail-undeploy ]; then echo undeploy broke; exit 4; fi\n",
    )
    .expect("write undeploy.sh");
}

#[test]
fn a_triggered_replacement_undeploys_with_the_recorded_parameters_then_deploys() {
    let t = deployed("  replaceTriggeredBy: {cache: [cache.flavor]}\n");
    logging_undeploy(&t);
    params(t.root(), &[("cache.flavor", "memcached")]);
    let out = hub(&t, "deploy", &["--changed", "--why"]);
    out.success();
    let log = std::fs::read_to_string(t.root().join("runs.log")).expect("runs.log");
    assert_eq!(log, "undeploy cache redis\ncache\n", "{}", out.stderr);
    out.stderr_has(
        "hub: cache: undeploy, then deploy: parameter `cache.flavor` changed (`lifecycle.replaceTriggeredBy`)",
    );
    let state = std::fs::read_to_string(t.root().join("hub.yaml.state")).expect("state");
    assert!(
        state.contains(
            "cache: undeployed before its replacement (undeploy, then deploy: parameter `cache.flavor` changed (`lifecycle.replaceTriggeredBy`))"
        ),
        "{state}"
    );
    // A saved plan replaces the same way.
    params(t.root(), &[("cache.flavor", "valkey")]);
    let _ = runs(&t);
    hub(&t, "plan", &["--changed", "--out", "plan.json"]).success();
    let out = hub_isolated(
        &t,
        &["deploy", "--plan", "plan.json"],
        &[("HUB_NOW", "2026-01-01T00:00:00Z")],
    );
    out.success();
    let log = std::fs::read_to_string(t.root().join("runs.log")).expect("runs.log");
    assert_eq!(log, "undeploy cache memcached\ncache\n", "{}", out.stderr);
    // `--replace` is a `rerun`: the deploy runs again, no undeploy.
    let _ = runs(&t);
    hub(&t, "deploy", &["--replace", "cache", "-c", "cache"]).success();
    assert_eq!(runs(&t), ["cache"]);
}

#[test]
fn a_failed_undeploy_stops_the_replacement_before_the_deploy() {
    let t = deployed("  replaceTriggeredBy: {cache: [cache.flavor]}\n");
    logging_undeploy(&t);
    std::fs::write(t.root().join("fail-undeploy"), "").expect("write");
    params(t.root(), &[("cache.flavor", "memcached")]);
    let out = hub(&t, "deploy", &["--changed"]);
    out.failure();
    assert_eq!(runs(&t), ["undeploy cache redis"], "{}", out.stderr);
    out.stderr_has(
        "its undeploy before the replacement failed (undeploy failed: exited with code 4): it was not deployed again",
    );
}

// ---- the keys in the stack ---------------------------------------------------

#[test]
fn the_keys_reach_the_elaborated_file_and_typos_are_named() {
    let t = stack(DEFAULT_LIFECYCLE);
    let out = hub_isolated(
        &t,
        &[
            "elaborate",
            "hub.yaml",
            "params.yaml",
            "-o",
            "hub.yaml.elaborate",
        ],
        &[],
    );
    out.success();
    let text = std::fs::read_to_string(t.root().join("hub.yaml.elaborate")).expect("elaborated");
    for key in [
        "triggerAlways:",
        "ignoreChanges:",
        "replaceTriggeredBy:",
        "app.tag",
    ] {
        assert!(text.contains(key), "{key} in:\n{text}");
    }
    let typo = stack("  triggerAlway: [audit]\n");
    let out = hub_isolated(
        &typo,
        &[
            "elaborate",
            "hub.yaml",
            "params.yaml",
            "-o",
            "hub.yaml.elaborate",
        ],
        &[],
    );
    out.stderr_has("triggerAlways");
}

#[test]
fn a_name_that_is_not_a_component_is_refused_with_the_closest_one() {
    let t = stack("  triggerAlways: [adit]\n");
    let out = hub(&t, "plan", &[]);
    out.failure()
        .stderr_has("`lifecycle.triggerAlways` names `adit`, which is not a component of the stack")
        .stderr_has("did you mean `audit`?");
    let t = stack("  ignoreChanges: {app: al}\n");
    hub(&t, "plan", &[])
        .failure()
        .stderr_has("`al` is neither `all` nor a list of parameter names");
}

#[test]
fn a_fromstack_child_appends_and_overrides_its_parent_s_entries() {
    let t = stack(DEFAULT_LIFECYCLE);
    let child = "version: 1
kind: stack
meta:
  name: child
  fromStack: ..
lifecycle:
  triggerAlways: [report]
  ignoreChanges: {app: all}
";
    std::fs::create_dir(t.root().join("child")).expect("mkdir");
    std::fs::write(t.root().join("child/hub.yaml"), child).expect("write");
    let out = hub_isolated(
        &t,
        &[
            "elaborate",
            "child/hub.yaml",
            "params.yaml",
            "-o",
            "child.yaml.elaborate",
        ],
        &[],
    );
    out.success();
    let stack = &out.documents("child.yaml.elaborate")[0];
    let lifecycle = &stack["lifecycle"];
    assert_eq!(
        format!("{:?}", lifecycle["triggerAlways"]),
        format!("{:?}", crate::common::yaml("[audit, report]"))
    );
    assert_eq!(lifecycle["ignoreChanges"]["app"].as_str(), Some("all"));
    assert_eq!(
        format!("{:?}", lifecycle["replaceTriggeredBy"]["cache"]),
        format!("{:?}", crate::common::yaml("[db, cache.flavor]"))
    );
}

#[test]
fn a_replacement_trigger_does_not_get_past_a_protection() {
    let t = deployed("  replaceTriggeredBy: {cache: [db]}\n  protected: [cache]\n");
    params(t.root(), &[("db.size", "large")]);
    for verb in ["plan", "deploy"] {
        let out = hub(&t, verb, &["--changed"]);
        assert_ne!(out.status, 0, "{verb}: {}", out.stdout);
        assert!(
            out.stderr.contains(
                "error: refusing to replace (`lifecycle.replaceTriggeredBy`) `cache`: the stack's `lifecycle.protected` lists it; nothing was run"
            ),
            "{verb}: {}",
            out.stderr
        );
    }
    let ran = runs(&t);
    assert!(ran.is_empty(), "nothing runs after the refusal: {ran:?}");
}
