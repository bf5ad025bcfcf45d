//! Documents over the size at which hub reads and writes them a piece at a
//! time (256 KiB): what the binary reports must be what it reports for the
//! same content read whole, positions included.

use crate::common::{hub_isolated, Output, Test};

const COMPONENT: &str = "kind: component\nmeta:\n  name: app\nparameters:\n  - name: p0\n";

/// A stack with `count` stack parameters; the one named `broken` (if any)
/// gets `env: [a]`, which is not text.
fn stack(count: usize, broken: Option<usize>) -> String {
    let mut text = String::from(
        "kind: stack\nmeta:\n  name: large\ncomponents:\n  - name: app\n    source:\n      dir: app\nparameters:\n",
    );
    for i in 0..count {
        text.push_str(&format!(
            "  - name: p{i}\n    value: value-of-parameter-{i}\n"
        ));
        if broken == Some(i) {
            text.push_str("    env: [a]\n");
        }
    }
    text
}

fn run(test: &Test, args: &[&str]) -> Output {
    hub_isolated(test, args, &[("HUB_NOW", "2026-01-01T00:00:00Z")])
}

/// The line (1-based) of `- name: NAME` in `text`.
fn line_of(text: &str, name: &str) -> usize {
    let item = format!("- name: {name}");
    text.lines()
        .position(|l| l.trim_start() == item)
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("{item} not found"))
}

/// `FILE:LINE` of the first `hub.yaml:N` in `stderr`.
fn reported_line(stderr: &str) -> usize {
    let at = stderr.find("hub.yaml:").expect("the error names hub.yaml") + "hub.yaml:".len();
    let digits: String = stderr[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().expect("a line number after hub.yaml:")
}

#[test]
fn a_large_stack_elaborates_and_its_parameters_keep_their_lines() {
    let text = stack(12_000, None);
    assert!(text.len() > 256 * 1024, "large enough to be read in pieces");
    let test = Test::new()
        .file("hub.yaml", &text)
        .file("app/hub-component.yaml", COMPONENT)
        .script("app/deploy.sh", "#!/bin/sh\necho deployed\n");
    run(&test, &["elaborate", "hub.yaml", "-o", "out.yaml"]).success();
    let elaborated = std::fs::read_to_string(test.root().join("out.yaml")).expect("out.yaml");
    assert!(elaborated.len() > 256 * 1024);

    let params = run(&test, &["params", "out.yaml"]);
    params.success();
    for name in ["p0", "p6000", "p11999"] {
        let entry = params
            .stdout
            .split("\n- ")
            .find(|e| e.starts_with(&format!("name: {name}\n")))
            .unwrap_or_else(|| panic!("{name} in hub params"));
        assert!(
            entry.contains(&format!("value: value-of-parameter-{}", &name[1..])),
            "{entry}"
        );
        let declared = format!("declared: out.yaml:{}", line_of(&elaborated, name));
        assert!(
            entry.contains(&declared),
            "{name}: expected {declared} in\n{entry}"
        );
    }
    let plan = run(&test, &["plan", "out.yaml", "-n"]);
    plan.success();
    assert!(plan.stdout.contains("app"), "{}", plan.stdout);
}

#[test]
fn a_broken_item_deep_in_a_large_stack_is_reported_at_its_line() {
    let small = Test::new()
        .file("hub.yaml", &stack(20, Some(10)))
        .file("app/hub-component.yaml", COMPONENT);
    let out = run(&small, &["elaborate", "hub.yaml", "-o", "out.yaml"]);
    out.failure();
    let offset = reported_line(&out.stderr) - line_of(&stack(20, Some(10)), "p10");

    let text = stack(12_000, Some(9_000));
    let large = Test::new()
        .file("hub.yaml", &text)
        .file("app/hub-component.yaml", COMPONENT);
    let out = run(&large, &["elaborate", "hub.yaml", "-o", "out.yaml"]);
    out.failure();
    assert_ne!(out.status, 101, "an error, not a crash:\n{}", out.stderr);
    assert_eq!(
        reported_line(&out.stderr),
        line_of(&text, "p9000") + offset,
        "{}",
        out.stderr
    );
    assert!(!large.root().join("out.yaml").exists(), "nothing written");
}
