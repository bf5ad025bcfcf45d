//! Issue 26, items 5, 8 and 9 on the real binary: `lifecycle.protected`
//! refuses what would destroy or forget a component, and
//! `lifecycle.retry` runs a failed component again.

use crate::common::{hub_pinned, state_entries, Test};
use std::path::Path;

/// Two components, `db` and `app`, whose scripts say what they do, in a
/// stack that protects `db` (its entry on line 11, column 7).
fn protected_stack() -> Test {
    let mut test = Test::new();
    for name in ["app", "db"] {
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
    test.file(
        "hub.yaml",
        "
        version: 1
        kind: stack
        meta: {name: guarded}
        components:
          - name: db
            source: {dir: components/db}
          - name: app
            source: {dir: components/app}
        lifecycle:
          protected:
            - db
        ",
    )
}

fn deployed(dir: &Path) {
    hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
}

/// The refusal, its location and its hint, exactly.
fn refused(operation: &str, verb: &str, at: &str) -> String {
    format!(
        "error: refusing to {operation} `db`: the stack's `lifecycle.protected` lists it; nothing was run\n  \
         --> {at}\n  \
         help: remove `db` from `lifecycle.protected` in the stack to {verb} it; no flag overrides the protection\n"
    )
}

#[test]
fn undeploy_of_a_protected_component_is_refused_before_anything_runs() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    let before = std::fs::read(dir.join("hub.yaml.state")).expect("state");
    let out = hub_pinned(dir, &["undeploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.failure();
    assert_eq!(out.stderr, refused("undeploy", "undeploy", "hub.yaml:11:7"));
    assert!(!out.stdout.contains("undeploying"), "{}", out.stdout);
    assert_eq!(
        std::fs::read(dir.join("hub.yaml.state")).expect("state"),
        before
    );
    // `--force` is no way through.
    let out = hub_pinned(
        dir,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state", "--force"],
    );
    assert_eq!(out.stderr, refused("undeploy", "undeploy", "hub.yaml:11:7"));
    // Components it does not protect undeploy as before.
    let out = hub_pinned(
        dir,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state", "-c", "app"],
    );
    out.success();
    assert!(out.stdout.contains("undeploying app"), "{}", out.stdout);
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
}

#[test]
fn a_plan_that_undeploys_or_replaces_a_protected_component_is_refused() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    hub_pinned(dir, &["elaborate", "hub.yaml", "-o", "hub.yaml.elaborate"]).success();
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml.elaborate",
            "--undeploy",
            "-s",
            "hub.yaml.state",
        ],
    );
    out.failure();
    // In the elaborated file, the entry `hub elaborate` wrote.
    let text = std::fs::read_to_string(dir.join("hub.yaml.elaborate")).expect("elaborated");
    let line = 2 + text
        .lines()
        .position(|l| l == "  protected:")
        .expect("the protected list in the elaborated file");
    let at = out.stderr.lines().nth(1).expect("location line");
    assert!(
        at.starts_with(&format!("  --> hub.yaml.elaborate:{line}:")),
        "{}",
        out.stderr
    );
    let out = hub_pinned(
        dir,
        &[
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--replace",
            "db",
        ],
    );
    out.failure();
    assert_eq!(
        out.stderr,
        refused("replace (`--replace`)", "replace", "hub.yaml:11:7")
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--replace",
            "db",
        ],
    );
    assert_eq!(
        out.stderr,
        refused("replace (`--replace`)", "replace", "hub.yaml:11:7")
    );
}

#[test]
fn prune_of_a_protected_component_no_longer_in_the_stack_is_refused() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    std::fs::write(
        dir.join("hub.yaml"),
        "version: 1\nkind: stack\nmeta: {name: guarded}\ncomponents:\n  - name: app\n    \
         source: {dir: components/app}\nlifecycle:\n  protected: [db]\n",
    )
    .expect("write");
    let out = hub_pinned(
        dir,
        &["deploy", "hub.yaml", "-s", "hub.yaml.state", "--prune"],
    );
    out.failure();
    assert_eq!(
        out.stderr,
        refused("prune (`--prune`)", "undeploy", "hub.yaml:8:15")
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
}

#[test]
fn state_rm_of_a_protected_component_is_refused_with_the_stack() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    let rm = ["state", "rm", "db", "-s", "hub.yaml.state", "--yes"];
    let out = hub_pinned(dir, &[&rm[..], &["-m", "hub.yaml"]].concat());
    out.failure();
    assert_eq!(
        out.stderr,
        refused("forget (`hub state rm`)", "forget", "hub.yaml:11:7")
    );
    let out = crate::common::pinned_command(dir, &rm)
        .env("HUB_ELABORATE", "hub.yaml")
        .output()
        .expect("run hub");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
    // An unprotected component is forgotten as before.
    hub_pinned(
        dir,
        &[
            "state",
            "rm",
            "app",
            "-s",
            "hub.yaml.state",
            "--yes",
            "-m",
            "hub.yaml",
        ],
    )
    .success();
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["db"]);
}

#[test]
fn a_typo_of_protected_is_named() {
    let out = Test::new()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: s}\nlifecycle:\n  protectd: [db]\n",
        )
        .args(&["elaborate", "hub.yaml", "-o", "out.elaborate"])
        .run();
    out.failure();
    assert!(
        out.stderr.contains("did you mean `protected`"),
        "{}",
        out.stderr
    );
}
