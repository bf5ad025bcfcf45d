//! Output contracts (issue 42, item 5) under `hub ci`: the names a pull
//! request gives its outputs and parameters reach the comment when its
//! plan stops producing an output another component reads, and a
//! component's `moved` names them again. They stay text: inside code
//! spans, a `|` escaped so that the table keeps its columns.

use crate::ci::{fixture, github, CI_VARIABLES};
use crate::common::{hub_pinned, pinned_command, Output, Test};

/// The hostile name of `a`'s output, which `b` reads by name.
const NAME: &str = "v|<img src=x onerror=alert(1)>@admin";

/// `a` outputs [`NAME`], `b` reads it; deployed once, so the state
/// records it.
fn deployed() -> Test {
    let test = Test::new()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: contracts}\ncomponents:\n  - {name: a, source: {dir: a}}\n  - {name: b, source: {dir: b}, depends: [a]}\n",
        )
        .file(
            "a/hub-component.yaml",
            &format!("version: 1\nkind: component\nmeta: {{name: a}}\noutputs:\n  - {{name: \"{NAME}\", fromTfVar: val}}\n"),
        )
        .file(
            "b/hub-component.yaml",
            &format!("version: 1\nkind: component\nmeta: {{name: b}}\nparameters:\n  - {{name: \"{NAME}\"}}\n"),
        )
        .script("a/deploy.sh", "#!/bin/sh\necho Outputs:\necho 'val = v1'\necho 'value = v1'\n")
        .script("a/undeploy.sh", "#!/bin/sh\n")
        .script("b/deploy.sh", "#!/bin/sh\n")
        .script("b/undeploy.sh", "#!/bin/sh\n");
    hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "hub.state"]).success();
    test
}

fn ci(test: &Test) -> (Output, String) {
    let text =
        std::fs::read_to_string(fixture("github/pull_request.opened.json")).expect("fixture");
    // No base commit: every component is planned (the test is not in git).
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    value["pull_request"]["base"]
        .as_object_mut()
        .expect("base")
        .remove("sha");
    let path = test.root().join("event.json");
    std::fs::write(&path, value.to_string()).expect("payload");
    let args = [
        "ci",
        "hub.yaml",
        "-s",
        "hub.state",
        "--comment",
        "comment.md",
    ];
    let mut command = pinned_command(test.root(), &args);
    for name in CI_VARIABLES {
        command.env_remove(name);
    }
    command.envs(github("pull_request", &path));
    let out = Output::of(command.output().expect("run hub"), test.root());
    let comment = std::fs::read_to_string(test.root().join("comment.md")).unwrap_or_default();
    (out, comment)
}

#[test]
fn an_output_a_pull_request_stops_producing_is_named_as_text_in_the_comment() {
    let test = deployed();
    std::fs::write(
        test.root().join("a/hub-component.yaml"),
        "version: 1\nkind: component\nmeta: {name: a}\n",
    )
    .expect("manifest");
    let (out, comment) = ci(&test);
    assert!(
        comment.contains(
            "| `a` | fail | it stops producing output `v\\|<img src=x onerror=alert(1)>@admin` (its last deploy recorded it; its manifest no longer declares it), which `b` (`v\\|<img src=x onerror=alert(1)>@admin`) read |"
        ),
        "stdout:\n{}\nstderr:\n{}\ncomment:\n{comment}",
        out.stdout,
        out.stderr
    );
}

#[test]
fn a_renamed_output_s_hostile_names_stay_text_in_the_comment() {
    let test = deployed();
    std::fs::write(
        test.root().join("a/hub-component.yaml"),
        format!("version: 1\nkind: component\nmeta: {{name: a}}\noutputs:\n  - {{name: value, fromTfVar: value}}\nmoved:\n  - {{from: \"{NAME}\", to: value}}\n"),
    )
    .expect("manifest");
    let (out, comment) = ci(&test);
    // The rename keeps `b` working: nothing fails, and the warning naming
    // the old name goes to the job's log, not to the comment.
    assert!(
        comment.contains("0 would fail"),
        "{comment}\n{}",
        out.stderr
    );
    assert!(!comment.contains("<img"), "{comment}");
    out.stderr_has(
        "reads output `v|<img src=x onerror=alert(1)>@admin` of `a`, which `a` renamed `value`",
    );
}
