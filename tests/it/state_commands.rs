//! `hub state list`, `show`, `rm` and `mv` on a deployed demo: what they
//! print, what they change, the backup and serial they leave, a killed
//! run's journal, and names that are not in the state.

use crate::common::{hub_pinned, read_documents, Output};
use crate::explain::deployed_demo;
use std::path::Path;

fn hub(dir: &Path, args: &[&str]) -> Output {
    hub_pinned(dir, args)
}

fn serial(path: &Path) -> u64 {
    read_documents(path)[0]["serial"]
        .as_u64()
        .unwrap_or_else(|| panic!("{} has a serial", path.display()))
}

/// The state moved on by one serial, and its backup holds the one before.
#[track_caller]
fn bumped_once(dir: &Path, before: u64) {
    assert_eq!(serial(&dir.join("demo.state")), before + 1);
    assert_eq!(serial(&dir.join("demo.state.backup")), before);
}

fn component_names(dir: &Path) -> Vec<String> {
    let state = &read_documents(&dir.join("demo.state"))[0];
    state["components"]
        .as_mapping()
        .expect("components")
        .keys()
        .map(|k| k.as_str().expect("a name").to_string())
        .collect()
}

#[test]
fn list_and_show_print_the_deployed_demo() {
    let (_tmp, dir, _) = deployed_demo();
    let list = hub(&dir, &["state", "list", "-s", "demo.state"]);
    insta::assert_snapshot!("state_list_demo", list.success().stdout);
    let json = hub(&dir, &["state", "list", "-s", "demo.state", "--json"]);
    insta::assert_snapshot!("state_list_demo_json", json.success().stdout);
    let rows: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(rows.as_array().map(Vec::len), Some(3));

    let show = hub(&dir, &["state", "show", "database", "-s", "demo.state"]);
    insta::assert_snapshot!("state_show_database", show.success().stdout);
    assert!(!show.stdout.contains("pw-demo"), "{}", show.stdout);
    let json = hub(
        &dir,
        &["state", "show", "app", "-s", "demo.state", "--json"],
    );
    insta::assert_snapshot!("state_show_app_json", json.success().stdout);
    let revealed = hub(
        &dir,
        &["state", "show", "database", "-s", "demo.state", "--reveal"],
    );
    assert!(
        revealed.success().stdout.contains("pw-demo-small-"),
        "{}",
        revealed.stdout
    );
    assert!(!dir.join("demo.state.lock").exists());
}

#[test]
fn rm_with_yes_forgets_and_keeps_the_previous_state_as_backup() {
    let (_tmp, dir, _) = deployed_demo();
    let before = serial(&dir.join("demo.state"));
    let out = hub(&dir, &["state", "rm", "app", "--yes", "-s", "demo.state"]);
    out.success()
        .stderr_has("hub: forgot `app` (nothing was undeployed); `demo.state` is at serial");
    bumped_once(&dir, before);
    assert_eq!(component_names(&dir), ["database", "network"]);
    let state = &read_documents(&dir.join("demo.state"))[0];
    let order = state["lifecycle"]["order"].as_sequence().expect("order");
    assert!(!order.iter().any(|name| name == "app"), "{order:?}");
    let outputs = state["capturedOutputs"].as_sequence().expect("outputs");
    assert!(
        outputs.iter().all(|o| o["component"] != "app"),
        "{outputs:?}"
    );
    assert!(
        !dir.join("demo.state.lock").exists(),
        "the lock is released"
    );
    assert!(
        dir.join("components/app/deploy.sh").exists(),
        "nothing ran or was removed"
    );
}

#[test]
fn rm_without_yes_off_a_terminal_is_refused_and_changes_nothing() {
    let (_tmp, dir, _) = deployed_demo();
    let files = ["demo.state", "demo.state.backup"];
    let read = || files.map(|f| std::fs::read(dir.join(f)).expect("state and backup"));
    let before = read();
    let out = hub(&dir, &["state", "rm", "app", "-s", "demo.state"]);
    out.failure()
        .stderr_has("not forgetting `app`: there is no terminal to confirm on")
        .stderr_has("pass --yes");
    assert_eq!(read(), before);
}

#[test]
fn names_not_in_the_state_are_refused_with_the_close_ones() {
    let (_tmp, dir, _) = deployed_demo();
    let before = std::fs::read(dir.join("demo.state")).expect("state");
    for args in [
        &["state", "show", "databse"][..],
        &["state", "rm", "databse", "app", "--yes"],
        &["state", "mv", "databse", "db"],
    ] {
        let args = [args, &["-s", "demo.state"]].concat();
        hub(&dir, &args)
            .failure()
            .stderr_has("the state has no component `databse`")
            .stderr_has("did you mean `database`?");
    }
    hub(&dir, &["state", "rm", "zzz", "--yes", "-s", "demo.state"])
        .failure()
        .stderr_has("the state's components are: ");
    assert_eq!(
        std::fs::read(dir.join("demo.state")).expect("state"),
        before
    );
}

#[test]
fn mv_keeps_the_component_unchanged_for_a_deploy_of_the_renamed_stack() {
    let (_tmp, dir, _) = deployed_demo();
    let before = serial(&dir.join("demo.state"));
    hub(&dir, &["state", "mv", "database", "db", "-s", "demo.state"])
        .success()
        .stderr_has("hub: renamed `database` to `db`; `demo.state` is at serial");
    bumped_once(&dir, before);
    assert_eq!(component_names(&dir), ["app", "db", "network"]);
    let list = hub(&dir, &["state", "list", "-s", "demo.state"]);
    assert!(
        list.success()
            .stdout
            .lines()
            .any(|l| l.starts_with("db ") && l.contains(" deployed ")),
        "{}",
        list.stdout
    );

    let stack = std::fs::read_to_string(dir.join("hub.yaml")).expect("stack");
    let renamed = stack
        .replace("- name: database\n", "- name: db\n")
        .replace("depends: [database]", "depends: [db]")
        .replace("- name: database:component", "- name: db:component");
    std::fs::write(dir.join("hub.yaml"), renamed).expect("rename the stack");
    let out = hub(
        &dir,
        &[
            "deploy",
            "hub.yaml",
            "params.yaml",
            "-s",
            "demo.state",
            "--changed",
        ],
    );
    out.success();
    for name in ["network", "db", "app"] {
        assert!(
            out.stderr
                .lines()
                .any(|l| l.trim_start().starts_with(name) && l.contains("unchanged")),
            "{name} should be unchanged:\n{}",
            out.stderr
        );
    }
}

#[test]
fn mv_onto_an_existing_name_is_refused() {
    let (_tmp, dir, _) = deployed_demo();
    let before = std::fs::read(dir.join("demo.state")).expect("state");
    hub(
        &dir,
        &["state", "mv", "database", "app", "-s", "demo.state"],
    )
    .failure()
    .stderr_has("cannot rename `database` to `app`: the state already has a component `app`")
    .stderr_has("hub state rm app");
    assert_eq!(
        std::fs::read(dir.join("demo.state")).expect("state"),
        before
    );
}

#[test]
fn every_location_is_written_and_compression_is_kept() {
    let (_tmp, dir, _) = deployed_demo();
    hub(
        &dir,
        &[
            "deploy",
            "hub.yaml",
            "params.yaml",
            "-s",
            "a.state,b.state",
            "--compressed",
        ],
    )
    .success();
    hub(
        &dir,
        &["state", "mv", "app", "web", "-s", "a.state,b.state"],
    )
    .success()
    .stderr_has("`a.state`, `b.state` are at serial");
    let a = std::fs::read(dir.join("a.state")).expect("a");
    assert_eq!(&a[..2], &[0x1f, 0x8b], "still compressed");
    assert_eq!(a, std::fs::read(dir.join("b.state")).expect("b"));
    let state = &read_documents(&dir.join("a.state"))[0];
    assert_eq!(state["components"]["web"]["status"], "deployed");
}

#[test]
fn rm_folds_the_journal_a_killed_deploy_left() {
    let dir = crate::journal::killed_in_c2();
    let root = dir.path();
    let state = root.join("hub.yaml.state");
    assert!(root.join("hub.yaml.state.journal").exists());
    let (code, _, stderr) = crate::journal::run(
        root,
        &["state", "rm", "c2", "--yes", "-s", "hub.yaml.state"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("removed the stale lock"), "{stderr}");
    assert!(!root.join("hub.yaml.state.journal").exists(), "folded");
    assert!(!root.join("hub.yaml.state.lock").exists());
    let alone = hub_state::read_file(&state, &mut hub_manifest::diag::Warnings::default())
        .expect("the state parses")
        .expect("a state");
    assert_eq!(
        alone.components.get("c1").map(|c| c.status.as_str()),
        Some("deployed"),
        "what only the journal held is kept"
    );
    assert!(!alone.components.contains_key("c2"));
    let backup = root.join("hub.yaml.state.backup");
    assert_eq!(serial(&backup) + 1, alone.serial);
}
