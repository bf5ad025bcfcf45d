//! What a failed run tells the user: the fix for a declared output that
//! cannot be computed (deploy.md §7.5–§7.7; what the plan can know is
//! refused before the run), and the whole reason of a failure in the
//! summary.

use crate::common::{hub_isolated, Output, Test};
use std::os::unix::fs::PermissionsExt;

/// One component `slow` whose script prints `slept = 1` in its Outputs
/// block, with the given `outputs:` declarations.
fn stack(outputs: &str) -> Test {
    let test = Test::new()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: msg}\ncomponents:\n- name: slow\n  source: {dir: slow}\nlifecycle: {verbs: [deploy, undeploy], order: [slow]}\n",
        )
        .file(
            "slow/hub-component.yaml",
            &format!("version: 1\nkind: component\nmeta: {{name: slow}}\nparameters:\n- name: p\n  value: one\noutputs:\n{outputs}"),
        )
        .file(
            "slow/deploy.sh",
            "#!/bin/sh\necho\necho Outputs:\necho slept = 1\necho\n",
        )
        .file("slow/undeploy.sh", "#!/bin/sh\n");
    for script in ["deploy.sh", "undeploy.sh"] {
        let path = test.root().join("slow").join(script);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    test
}

fn deploy(test: &Test) -> Output {
    hub_isolated(test, &["deploy", "hub.yaml", "-s", "s.state"], &[])
}

fn help(out: &Output) -> &str {
    out.stderr
        .lines()
        .find_map(|l| l.trim_start().strip_prefix("help: "))
        .unwrap_or_else(|| panic!("no help line:\n{}", out.stderr))
}

#[test]
fn an_output_without_a_source_is_refused_before_the_run_with_the_fix() {
    let test = stack("- name: slept\n");
    let out = deploy(&test);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "`slow:slept` has neither `fromTfVar` nor `value`, so it takes the component's parameter `slept`, which the component does not declare (declared at slow/hub-component.yaml:8)",
    );
    assert_eq!(
        help(&out),
        "give output `slept` at slow/hub-component.yaml:8 a `fromTfVar: KEY` (a key the component prints in its Outputs block) or a `value:`, or declare `slept` among the component's parameters"
    );
    assert!(!out.stderr.contains("stack parameter"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("slow | "),
        "the script ran: {}",
        out.stderr
    );
}

#[test]
fn each_output_without_a_source_is_named_with_its_line() {
    let test = stack("- name: p\n- name: missing\n");
    let out = deploy(&test);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(
        help(&out),
        "give output `missing` at slow/hub-component.yaml:9 a `fromTfVar: KEY` (a key the component prints in its Outputs block) or a `value:`, or declare `missing` among the component's parameters"
    );
}

#[test]
fn an_output_value_reading_an_unknown_name_points_at_the_component_parameters() {
    let test = stack("- name: url\n  value: http://${host}/${p}\n");
    let out = deploy(&test);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("`slow:url` references unknown `host` (declared at slow/hub-component.yaml:8)");
    assert!(
        help(&out).starts_with("an output's `value` reads only the component's own parameters and the outputs declared before it: declare the missing names among the component's `parameters:`"),
        "{}",
        out.stderr
    );
}

#[test]
fn the_summary_shows_the_whole_reason_of_a_failure() {
    // What the plan cannot know: a key the script does not print, and
    // expressions that fail on the values.
    let test = stack("- {name: slept, fromTfVar: slep}\n- {name: other, value: '#{int(p)}'}\n");
    let out = deploy(&test);
    assert_eq!(out.status, 1, "{}", out.stderr);
    let start = out.stderr.find("deploy summary:").expect("summary");
    let end = out.stderr.find("stack: incomplete").expect("stack line");
    // Durations vary.
    let seconds = regex::Regex::new(r"\d+\.\d\ds").expect("regex");
    let table = seconds.replace_all(&out.stderr[start..end], "T.TTs");
    insta::assert_snapshot!(table, @r"
    deploy summary:
      slow  error          T.TTs  output `slept`: raw output `slep` was not printed
      slow:
        outputs of component `slow` cannot be computed:
          - `slow:other`: #{int(p)}: CEL evaluation error: Error executing function 'int': string parse error: invalid digit found in string (declared at slow/hub-component.yaml:9:25)
    ");
}

#[test]
fn an_output_that_fails_during_a_run_of_an_elaborated_file_points_at_its_line_there() {
    // The run keeps the elaborated file's text deflated once its
    // parameters are locked, and reads it again for this message.
    let test = stack("- {name: slept, fromTfVar: slept}\n- {name: other, value: '#{int(p)}'}\n");
    let elaborated = hub_isolated(
        &test,
        &["elaborate", "hub.yaml", "-o", "hub.yaml.elaborate"],
        &[],
    );
    assert_eq!(elaborated.status, 0, "{}", elaborated.stderr);
    let text = std::fs::read_to_string(test.root().join("hub.yaml.elaborate")).expect("elaborated");
    let line = 1 + text
        .lines()
        .position(|l| l.contains("#{int(p)}"))
        .expect("the output's value");
    let out = hub_isolated(
        &test,
        &["deploy", "hub.yaml.elaborate", "-s", "s.state"],
        &[],
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("`slow:other`: #{int(p)}: CEL evaluation error")
        .stderr_has(&format!("(declared at hub.yaml.elaborate:{line}:"));
}
