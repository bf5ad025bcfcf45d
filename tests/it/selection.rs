//! Selecting components with what they depend on (`-c app+`,
//! `--with-deps`) or what depends on them (`-c +app`,
//! `--with-dependents`); the undeploy guard that keeps a component up
//! while deployed ones depend on it; `--replace` under `--changed`.

use crate::common::{demo_copy, hub_pinned, Output, Test};
use std::path::Path;

/// A stack whose author wrote `lifecycle.order`: `db` provides `sql`,
/// which `web` requires; `tool` and `web` declare no `depends`, so the
/// written order alone puts `tool` after `db` and `web` after `tool`.
/// Each script appends `VERB NAME` to `ran`.
fn written_order_stack() -> Test {
    let mut test = Test::new().file(
        "hub.yaml",
        "
        version: 1
        kind: stack
        meta: {name: shop}
        components:
        - {name: net, source: {dir: net}}
        - {name: db, source: {dir: db}, depends: [net]}
        - {name: tool, source: {dir: tool}}
        - {name: web, source: {dir: web}}
        lifecycle:
          order: [net, db, tool, web]
        ",
    );
    for (name, extra) in [
        ("net", ""),
        ("db", "provides: [sql]\n"),
        ("tool", ""),
        ("web", "requires: [sql]\n"),
    ] {
        test = test
            .file(
                &format!("{name}/hub-component.yaml"),
                &format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n{extra}"),
            )
            .script(
                &format!("{name}/deploy.sh"),
                &format!("#!/bin/sh\necho deploy {name} >> ../ran\n"),
            )
            .script(
                &format!("{name}/undeploy.sh"),
                &format!("#!/bin/sh\necho undeploy {name} >> ../ran\n"),
            );
    }
    test
}

/// The `VERB NAME` lines the scripts wrote since the last call, which
/// empties the file.
fn ran(root: &Path) -> Vec<String> {
    let path = root.join("ran");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    text.lines().map(String::from).collect()
}

fn hub(root: &Path, args: &[&str]) -> Output {
    hub_pinned(root, args)
}

/// `hub plan … --format json`'s `selection` and the selected components.
fn planned(root: &Path, args: &[&str]) -> (serde_json::Value, Vec<String>) {
    let mut all = vec!["plan", "hub.yaml", "-s", "shop.state", "--format", "json"];
    all.extend(args);
    let out = hub(root, &all);
    out.success();
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("plan JSON");
    let names = plan["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| c["name"].as_str().expect("name").to_string())
        .collect();
    (plan["selection"].clone(), names)
}

fn deployed_shop() -> Test {
    let test = written_order_stack();
    hub(test.root(), &["deploy", "hub.yaml", "-s", "shop.state"]).success();
    ran(test.root());
    test
}

#[test]
fn a_trailing_plus_adds_what_a_component_depends_on_but_not_the_written_order() {
    let test = deployed_shop();
    // `web` needs `sql` from `db`, which depends on `net`; `tool` is only
    // before `web` in the written order.
    let (selection, names) = planned(test.root(), &["-c", "web+"]);
    assert_eq!(names, ["net", "db", "web"]);
    assert_eq!(selection["requested"], serde_json::json!(["web+"]));
    assert_eq!(
        selection["added"],
        serde_json::json!([
            {"name": "db", "from": "web", "relation": "dependency"},
            {"name": "net", "from": "web", "relation": "dependency"},
        ])
    );
    let (flagged_selection, flagged) = planned(test.root(), &["-c", "web", "--with-deps"]);
    assert_eq!(flagged, names);
    assert_eq!(flagged_selection, selection);
    let out = hub(
        test.root(),
        &["deploy", "hub.yaml", "-s", "shop.state", "-c", "web+"],
    );
    out.success()
        .stderr_has("hub: selection web+ → net, db, web (added db (`web` depends on it), net (`web` depends on it))");
    assert_eq!(ran(test.root()), ["deploy net", "deploy db", "deploy web"]);
}

#[test]
fn a_leading_plus_adds_what_depends_on_a_component() {
    let test = deployed_shop();
    let (selection, names) = planned(test.root(), &["-c", "+net"]);
    assert_eq!(names, ["net", "db", "web"]);
    assert_eq!(
        selection["components"],
        serde_json::json!(["net", "db", "web"])
    );
    let (_, flagged) = planned(test.root(), &["-c", "net", "--with-dependents"]);
    assert_eq!(flagged, names);
    // A plain list resolves to itself and shows no selection.
    let (selection, names) = planned(test.root(), &["-c", "web,net"]);
    assert_eq!(names, ["net", "web"]);
    assert!(selection.is_null(), "{selection}");
    let text = hub(
        test.root(),
        &["plan", "hub.yaml", "-s", "shop.state", "-c", "+db"],
    );
    text.success();
    assert!(
        text.stdout
            .contains("selection: +db → db, web (added web (it depends on `db`))\n"),
        "{}",
        text.stdout
    );
}

#[test]
fn widening_needs_a_list_and_known_names() {
    let test = deployed_shop();
    hub(
        test.root(),
        &["plan", "hub.yaml", "-s", "shop.state", "--with-deps"],
    )
    .failure()
    .stderr_has("`--with-deps` and `--with-dependents` widen a `-c` list; no `-c` was given");
    hub(
        test.root(),
        &["deploy", "hub.yaml", "-s", "shop.state", "-c", "+wbe+"],
    )
    .failure()
    .stderr_has("`-c` names `wbe`")
    .stderr_has("did you mean `web`?");
    assert!(ran(test.root()).is_empty());
}

#[test]
fn undeploying_what_a_deployed_component_requires_is_refused_before_anything_runs() {
    let test = deployed_shop();
    let state = std::fs::read(test.root().join("shop.state")).expect("state");
    let out = hub(
        test.root(),
        &["undeploy", "hub.yaml", "-s", "shop.state", "-c", "tool,db"],
    );
    out.failure()
        .stderr_has("the undeploy would take down components that deployed ones depend on: `web` depends on `db` (provides `sql`)")
        .stderr_has("help: take the dependents down first, in the same run: `-c tool,+db`; or add `-f/--force` to undeploy anyway");
    assert_eq!(out.status, 1);
    assert!(ran(test.root()).is_empty(), "nothing ran");
    assert_eq!(
        std::fs::read(test.root().join("shop.state")).expect("state"),
        state,
        "the state is untouched"
    );
    // `plan --undeploy` refuses the same way.
    hub(
        test.root(),
        &[
            "plan",
            "hub.yaml",
            "-s",
            "shop.state",
            "-c",
            "db",
            "--undeploy",
        ],
    )
    .failure()
    .stderr_has("`web` depends on `db` (provides `sql`)");
    // The first way out: take the dependents down in the same run.
    hub(
        test.root(),
        &["undeploy", "hub.yaml", "-s", "shop.state", "-c", "+db"],
    )
    .success()
    .stderr_has("hub: selection +db → web, db (added web (it depends on `db`))");
    assert_eq!(ran(test.root()), ["undeploy web", "undeploy db"]);
}

#[test]
fn dependents_already_undeployed_do_not_hold_a_component_and_force_goes_on() {
    let test = deployed_shop();
    let undeploy = |extra: &[&str]| {
        let mut args = vec!["undeploy", "hub.yaml", "-s", "shop.state"];
        args.extend(extra);
        hub(test.root(), &args)
    };
    // `net` holds `db` up through `depends`.
    undeploy(&["-c", "net"])
        .failure()
        .stderr_has("`db` depends on `net` (`depends`)");
    undeploy(&["-c", "net", "-f"])
        .success()
        .stderr_has("warning: the undeploy would take down components that deployed ones depend on: `db` depends on `net` (`depends`) (going on: `--force`)");
    assert_eq!(ran(test.root()), ["undeploy net"]);
    undeploy(&["-c", "web"]).success();
    undeploy(&["-c", "db"]).success();
    assert_eq!(ran(test.root()), ["undeploy web", "undeploy db"]);
}

#[test]
fn replace_runs_a_component_that_changed_would_skip() {
    let (_tmp, dir) = demo_copy();
    let deploy = |extra: &[&str]| {
        let mut args = vec!["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"];
        args.extend(extra);
        hub(&dir, &args)
    };
    crate::plan::deploy_demo(&dir);
    let out = deploy(&["--changed", "--replace", "database", "--why"]);
    out.success()
        .stderr_has("hub: database runs: `--replace`: runs even if unchanged")
        .stderr_has("\n  network     unchanged ")
        .stderr_has("\n  database    deployed ")
        .stderr_has("\n  app         unchanged ");
    let plan = crate::plan::plan(&dir, &["--changed", "--replace", "database"]);
    plan.success();
    assert!(
        plan.stdout
            .contains("database: rerun (`--replace`: runs even if unchanged)\n"),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("network: no-op\n"), "{}", plan.stdout);
    deploy(&["--changed", "--replace", "databse"])
        .failure()
        .stderr_has("`--replace` names `databse`")
        .stderr_has("did you mean `database`?");
    deploy(&["--changed", "-c", "app", "--replace", "database"])
        .success()
        .stderr_has("warning: `--replace database`: `database` is not selected and does not run");
}
