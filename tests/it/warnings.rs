//! Warnings reach the user: no production code drops them in a throw-away
//! sink (`Warnings::default()`), and the warnings earlier versions
//! dropped that way are said.

use crate::common::*;
use std::path::Path;

/// The production code of a Rust file: the text before its first
/// `#[cfg(test)]` (test modules come last in this workspace).
fn production_part(text: &str) -> &str {
    text.find("#[cfg(test)]").map_or(text, |end| &text[..end])
}

fn is_test_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name == "tests.rs"
        || name.ends_with("_tests.rs")
        || path.components().any(|c| c.as_os_str() == "tests")
}

#[test]
fn no_production_code_drops_warnings_in_a_default_sink() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = files_below(&root.join("src"));
    for entry in std::fs::read_dir(root.join("crates")).expect("crates") {
        files.extend(files_below(&entry.expect("crate").path().join("src")));
    }
    let sinks: Vec<String> = files
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "rs") && !is_test_file(p))
        .filter(|p| {
            let text = std::fs::read_to_string(p).expect("source");
            production_part(&text)
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .any(|l| l.contains("Warnings::default()"))
        })
        .map(|p| p.display().to_string())
        .collect();
    assert!(
        files.len() > 100,
        "the sources were not found: {}",
        files.len()
    );
    assert!(
        sinks.is_empty(),
        "`Warnings::default()` in production code drops warnings: report into the caller's \
         collector, or use `Warnings::new()` and hand them on, or `Warnings::already_reported()` \
         with a comment saying where they were said:\n{}",
        sinks.join("\n")
    );
}

const STACK: &str = "version: 1
kind: stack
meta: {name: s}
parameters:
- {name: dns.domain, kind: user}
";

/// A state with a second YAML document, which reading it warns about.
const STATE_WITH_TWO_DOCUMENTS: &str = "version: 1
kind: state
stackParameters:
- {name: dns.domain, value: platform.example.com}
---
version: 1
kind: state
";

const TWO_DOCUMENTS: &str =
    "the state file holds more than one YAML document; only the first is read";

#[test]
fn elaborate_says_what_reading_the_platform_state_warns_about() {
    let out = Test::new()
        .file("hub.yaml", STACK)
        .file("platform.state", STATE_WITH_TWO_DOCUMENTS)
        .args(&["elaborate", "hub.yaml", "-s", "platform.state", "-o", "-"])
        .run();
    out.success().stderr_has(TWO_DOCUMENTS);
    assert!(
        out.stdout.contains("platform.example.com"),
        "{}",
        out.stdout
    );
}

#[test]
fn params_says_what_reading_the_state_warns_about() {
    let out = Test::new()
        .file("hub.yaml", STACK)
        .file("s.state", STATE_WITH_TWO_DOCUMENTS)
        .args(&["params", "hub.yaml", "-s", "s.state"])
        .run();
    out.success().stderr_has(TWO_DOCUMENTS);
}

/// Two parameters of `top` set the same variable with different values:
/// its environment warns about it whenever it is made.
fn clashing_stack() -> Test {
    let stack = "version: 1
kind: stack
meta: {name: s}
components:
  - {name: keep, source: {dir: components/keep}}
  - {name: top, source: {dir: components/top}}
";
    Test::new()
        .file("hub.yaml", stack)
        .component_with_undeploy("keep", "  - {name: who, value: keep}\n", "#!/bin/sh\n")
        .component_with_undeploy(
            "top",
            "  - {name: first, value: one, env: WHO}\n  - {name: second, value: two, env: WHO}\n",
            "#!/bin/sh\necho \"$WHO\" >> ../../undeploy.log\n",
        )
}

#[test]
fn prune_says_what_the_removed_component_environment_warns_about() {
    let test = clashing_stack();
    let root = test.root();
    let clash = "component `top`: parameters `first` and `second` both set `WHO`; `second` wins";
    hub_pinned(root, &["deploy", "hub.yaml", "-s", "s.state"])
        .success()
        .stderr_has(clash);
    let path = root.join("hub.yaml");
    let text = std::fs::read_to_string(&path).expect("stack");
    let kept: Vec<&str> = text.lines().filter(|l| !l.contains("name: top")).collect();
    std::fs::write(&path, kept.join("\n") + "\n").expect("stack");
    hub_pinned(root, &["deploy", "hub.yaml", "-s", "s.state", "--prune"])
        .success()
        .stderr_has("hub: prune top")
        .stderr_has(clash);
    let log = std::fs::read_to_string(root.join("undeploy.log")).expect("undeployed");
    assert_eq!(log, "two\n");
}

#[test]
fn a_job_says_what_reading_the_state_warns_about() {
    let test = clashing_stack();
    let root = test.root();
    std::fs::write(root.join("s.state"), STATE_WITH_TWO_DOCUMENTS).expect("state");
    hub_pinned(
        root,
        &["plan", "hub.yaml", "-s", "s.state", "--out", "plan.json"],
    )
    .success()
    .stderr_has(TWO_DOCUMENTS);
    let job = hub_pinned(
        root,
        &[
            "deploy",
            "--plan",
            "plan.json",
            "-c",
            "keep",
            "-s",
            "s.state",
            "--job",
        ],
    );
    job.success().stderr_has(TWO_DOCUMENTS);
}
