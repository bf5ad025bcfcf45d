//! Messages in the right order and place: an unknown component name
//! before any need of a state, the stack line of a missing component
//! folder with the closest folder, a confirmation from `elaborate`, a
//! resumed run's summary counting the whole stack, and no stack outputs
//! left once everything is undeployed.

use crate::common::{hub_isolated, Output, Test};

/// `a` → `b` → `c` → `d` in a written order; `c` fails until the file
/// `ok` exists beside the stack; a stack output `greeting`.
fn stack() -> Test {
    let mut test = Test::new().file(
        "hub.yaml",
        "kind: stack\nmeta: {name: m}\ncomponents:\n- name: a\n  source:\n    dir: parts/a\n- {name: b, source: {dir: parts/b}}\n- {name: c, source: {dir: parts/c}}\n- {name: d, source: {dir: parts/d}}\nlifecycle: {order: [a, b, c, d]}\noutputs:\n- {name: greeting, value: hello}\n",
    );
    for name in ["a", "b", "c", "d"] {
        test = test
            .file(
                &format!("parts/{name}/hub-component.yaml"),
                &format!("kind: component\nmeta: {{name: {name}}}\n"),
            )
            .script(&format!("parts/{name}/deploy.sh"), "#!/bin/sh\n")
            .script(&format!("parts/{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test.script("parts/c/deploy.sh", "#!/bin/sh\n[ -f ../../ok ]\n")
}

fn hub(test: &Test, args: &[&str]) -> Output {
    hub_isolated(test, args, &[])
}

#[test]
fn an_unknown_component_is_named_before_the_state_it_would_need() {
    let test = stack();
    for command in ["deploy", "plan"] {
        let out = hub(&test, &[command, "hub.yaml", "-s", "s.state", "-c", "bb"]);
        assert_ne!(out.status, 0, "{command}");
        assert_eq!(
            out.stderr,
            "error: `-c` names `bb`, which is not a component of the stack (components: a, b, c, d)\n  help: did you mean `b`? Use a name from the stack's `components:` list\n",
            "{command}"
        );
    }
}

#[test]
fn a_missing_component_folder_names_the_stack_line_and_the_closest_folder() {
    let test = stack();
    let text = std::fs::read_to_string(test.root().join("hub.yaml")).expect("stack");
    std::fs::write(
        test.root().join("hub.yaml"),
        text.replace("dir: parts/a", "dir: parts/aa"),
    )
    .expect("write");
    let out = hub(&test, &["elaborate", "hub.yaml"]);
    assert_ne!(out.status, 0);
    assert_eq!(
        out.stderr,
        "error: cannot read the manifest of component `a`: cannot read `parts/aa/hub-component.yaml`: No such file or directory (os error 2)\n  --> hub.yaml:6:5\n  help: did you mean `dir: parts/a`? Check `source.dir` (or `source.git`) of the component in `hub.yaml`; relative directories start at the stack's folder\n"
    );
}

#[test]
fn elaborate_confirms_what_it_wrote() {
    let test = stack();
    let out = hub(&test, &["elaborate", "hub.yaml", "-o", "e.yaml"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert_eq!(
        out.stderr,
        "hub: elaborated stack `m` (4 components) into e.yaml\n"
    );
    assert!(test.root().join("e.yaml").exists());
}

#[test]
fn a_resumed_run_counts_the_whole_stack_and_an_undeployed_one_keeps_no_outputs() {
    let test = stack();
    let first = hub(&test, &["deploy", "hub.yaml", "-s", "s.state"]);
    assert_eq!(first.status, 1, "{}", first.stderr);
    std::fs::write(test.root().join("ok"), "").expect("ok");
    let resumed = hub(&test, &["deploy", "hub.yaml", "-s", "s.state", "-o", "c"]);
    assert_eq!(resumed.status, 0, "{}", resumed.stderr);
    assert!(
        resumed
            .stderr
            .contains("\nstack: deployed (4 components, 2 in this run, "),
        "{}",
        resumed.stderr
    );
    let undeploy = hub(&test, &["undeploy", "hub.yaml", "-s", "s.state"]);
    assert_eq!(undeploy.status, 0, "{}", undeploy.stderr);
    let state = std::fs::read_to_string(test.root().join("s.state")).expect("state");
    assert!(!state.contains("greeting"), "{state}");
    let explain = hub(&test, &["explain", "s.state"]);
    assert!(!explain.stdout.contains("greeting"), "{}", explain.stdout);
}

#[test]
fn undeploy_lists_only_what_it_undeployed() {
    let test = stack();
    std::fs::write(test.root().join("ok"), "").expect("ok");
    let some = hub(
        &test,
        &[
            "deploy", "hub.yaml", "-s", "s.state", "-c", "a,b", "--force",
        ],
    );
    assert_eq!(some.status, 0, "{}", some.stderr);
    let out = hub(&test, &["undeploy", "hub.yaml", "-s", "s.state"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let start = out.stderr.find("undeploy summary:\n").expect("summary");
    let names: Vec<&str> = out.stderr[start..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(names, ["b", "a"], "{}", out.stderr);
    assert!(
        out.stderr
            .contains("\nstack: undeployed (4 components, 2 in this run, "),
        "{}",
        out.stderr
    );
}
