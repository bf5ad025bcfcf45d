//! Issue 39, item 7: a long value held by several places of the state (a
//! component's raw output and snapshot, the stack's captured outputs, a
//! stack output, a downstream component's parameter) is written once, under
//! a YAML anchor, and read back whole everywhere.

use crate::common::{hub_isolated, Output, Test};

/// 65,535 numbered pieces of 16 bytes: 1 MiB less 16 bytes, so that the
/// line `blob = …` fits the longest line hub reads from a component (1 MiB).
pub(crate) fn blob() -> String {
    (0..65535).map(|i| format!("{i:015}:")).collect()
}

/// `db` prints the 1 MiB `blob`; `app` reads it as a parameter and renders
/// it into `app/got` through a template; the stack outputs it as `blob`.
pub(crate) fn stack() -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: big}
            components:
            - name: db
              source: {dir: db}
            - name: app
              source: {dir: app}
              depends: [db]
            outputs:
            - name: blob
              value: ${db:blob}
            lifecycle: {order: [db, app]}
            ",
        )
        .file(
            "db/hub-component.yaml",
            "
            kind: component
            meta: {name: db}
            outputs:
            - {name: blob, fromTfVar: blob}
            ",
        )
        .script(
            "db/deploy.sh",
            "#!/bin/sh\necho Outputs:\nawk 'BEGIN { printf \"blob = \"; for (i = 0; i < 65535; i++) printf \"%015d:\", i; print \"\" }'\n",
        )
        .file(
            "app/hub-component.yaml",
            "
            kind: component
            meta: {name: app}
            parameters:
            - name: app.blob
              value: ${blob}
            templates: {files: [\"*.template\"]}
            ",
        )
        .file("app/got.template", "${app.blob}")
        .script("app/deploy.sh", "#!/bin/sh\ntest -s got\n")
}

/// `actual` is `expected`, or a short message (the values are 1 MiB).
#[track_caller]
fn same(actual: Option<&str>, expected: &str, what: &str) {
    let Some(actual) = actual else {
        panic!("{what}: no value");
    };
    if actual != expected {
        let at = actual
            .bytes()
            .zip(expected.bytes())
            .position(|(a, b)| a != b)
            .unwrap_or(actual.len().min(expected.len()));
        panic!(
            "{what}: {} bytes, expected {}, first difference at {at}: {:?}",
            actual.len(),
            expected.len(),
            &actual[at.saturating_sub(20)..actual.len().min(at + 20)]
        );
    }
}

fn rendered(test: &Test) -> String {
    let text = std::fs::read_to_string(test.root().join("app/got")).expect("rendered");
    text.trim_end().to_string()
}

fn hub(test: &Test, args: &[&str]) -> Output {
    hub_isolated(test, args, &[])
}

fn show(test: &Test, component: &str) -> serde_json::Value {
    let out = hub(
        test,
        &[
            "state", "show", component, "-s", "s.state", "--json", "--reveal",
        ],
    );
    out.success();
    serde_json::from_str(&out.stdout).expect("json")
}

/// The value of `name` in a `[{name, value}]` list or a `{name: value}` map.
fn named<'v>(items: &'v serde_json::Value, name: &str) -> Option<&'v str> {
    if let Some(value) = items.get(name) {
        return value.as_str();
    }
    items
        .as_array()?
        .iter()
        .find(|item| item["name"] == name)?
        .get("value")?
        .as_str()
}

#[test]
fn a_1_mib_output_costs_about_1_mib_of_state_and_reads_back_whole() {
    let test = stack();
    hub(&test, &["deploy", "hub.yaml", "-s", "s.state"]).success();
    let blob = blob();
    same(Some(&rendered(&test)), &blob, "app/got");
    let size = std::fs::metadata(test.root().join("s.state"))
        .expect("state")
        .len();
    assert!(
        size <= 1_300_000,
        "the state holds the output more than once: {size} bytes"
    );
    let text = std::fs::read_to_string(test.root().join("s.state")).expect("state");
    assert_eq!(text.matches(blob.as_str()).count(), 1);

    // Every place reads back the whole value.
    let db = show(&test, "db");
    same(named(&db["outputs"], "blob"), &blob, "db's output");
    let app = show(&test, "app");
    same(
        named(&app["parameters"], "app.blob"),
        &blob,
        "app's parameter",
    );
    let pulled = hub(&test, &["state", "pull", "s.state"]);
    pulled.success();
    let state: yaml_serde::Value = yaml_serde::from_str(&pulled.stdout).expect("pulled state");
    same(
        state["stackOutputs"][0]["value"].as_str(),
        &blob,
        "stack output",
    );
    let captured = &state["capturedOutputs"][0]["value"];
    same(captured.as_str(), &blob, "captured output");
    let raw = &state["components"]["db"]["rawOutputs"][0]["value"];
    same(raw.as_str(), &blob, "raw output");

    // A second deploy of `app` alone reads the output from the state.
    std::fs::remove_file(test.root().join("app/got")).expect("remove");
    hub(&test, &["deploy", "hub.yaml", "-s", "s.state", "-c", "app"]).success();
    same(Some(&rendered(&test)), &blob, "app/got, second deploy");
    let size = std::fs::metadata(test.root().join("s.state"))
        .expect("state")
        .len();
    assert!(size <= 1_300_000, "{size} bytes after the second deploy");
}

/// A state in the layout hub wrote before (every place holding its own
/// copy, no framing) is read, and written again with one copy.
#[test]
fn a_state_holding_each_copy_whole_still_loads() {
    let test = stack();
    let long = "0123456789abcdef".repeat(512);
    let state = format!(
        "version: 1\nkind: state\ntimestamp: 2024-05-01T10:00:00Z\nstatus: deployed\n\
         meta:\n  kind: stack\n  name: big\nlifecycle:\n  order:\n  - db\n  - app\n\
         capturedOutputs:\n- component: db\n  name: blob\n  value: {long}\n\
         stackOutputs:\n- name: blob\n  value: {long}\n\
         components:\n  db:\n    status: deployed\n    rawOutputs:\n    - name: blob\n      value: {long}\n\
         \x20   capturedOutputs:\n    - component: db\n      name: blob\n      value: {long}\n"
    );
    std::fs::write(test.root().join("s.state"), state).expect("write");
    let db = show(&test, "db");
    same(named(&db["outputs"], "blob"), &long, "db's output");
    hub(&test, &["deploy", "hub.yaml", "-s", "s.state", "-c", "app"]).success();
    same(Some(&rendered(&test)), &long, "app/got");
    let text = std::fs::read_to_string(test.root().join("s.state")).expect("state");
    assert_eq!(text.matches(long.as_str()).count(), 1, "written once");
    let app = show(&test, "app");
    same(
        named(&app["parameters"], "app.blob"),
        &long,
        "app's parameter",
    );
}
