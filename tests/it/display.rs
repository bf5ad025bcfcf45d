//! What hub prints for people: the summary's columns, the start lines of
//! a run, `hub --help`, usage errors and hints.

use crate::common::{hub_pinned, Test};

/// Components `names`, in that order, each with a deploy that does
/// nothing.
fn stack(names: &[&str], extra: &str) -> Test {
    let components: String = names
        .iter()
        .map(|n| format!("- name: {n}\n  source: {{dir: {n}}}\n"))
        .collect();
    let order = names.join(", ");
    let mut test = Test::new().file(
        "hub.yaml",
        &format!("kind: stack\n{extra}components:\n{components}lifecycle: {{order: [{order}]}}\n"),
    );
    for name in names {
        test = test
            .file(
                &format!("{name}/hub-component.yaml"),
                &format!("kind: component\nmeta: {{name: {name}}}\n"),
            )
            .script(&format!("{name}/deploy.sh"), "#!/bin/sh\n");
    }
    test
}

/// The summary table with its durations replaced by `T.TTs`.
fn table(stderr: &str) -> String {
    let start = stderr.find("deploy summary:").expect("summary");
    let end = stderr.find("stack: ").expect("stack line");
    let seconds = regex::Regex::new(r"\d+\.\d\ds").expect("regex");
    seconds
        .replace_all(&stderr[start..end], "T.TTs")
        .into_owned()
}

#[test]
fn the_summary_lines_up_names_that_take_two_cells_a_character() {
    let test = stack(&["net", "数据库", "app-server"], "meta: {name: wide}\n");
    let out = hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "x.state"]);
    out.success();
    assert_eq!(
        table(&out.stderr),
        "deploy summary:\n  net         deployed       T.TTs\n  数据库      deployed       T.TTs\n  app-server  deployed       T.TTs\n"
    );
}

#[test]
fn a_component_left_unchanged_has_no_start_line() {
    let test = stack(&["net", "app"], "meta: {name: quiet}\n");
    hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "x.state"]).success();
    let out = hub_pinned(
        test.root(),
        &["deploy", "hub.yaml", "-s", "x.state", "--changed"],
    );
    out.success();
    assert!(!out.stderr.contains("hub: deploy"), "{}", out.stderr);
    assert_eq!(
        table(&out.stderr),
        "deploy summary:\n  net  unchanged      T.TTs\n  app  unchanged      T.TTs\n"
    );
    // A component that changed runs, and says so.
    std::fs::write(
        test.root().join("app/deploy.sh"),
        "#!/bin/sh\necho changed\n",
    )
    .expect("write");
    let out = hub_pinned(
        test.root(),
        &["deploy", "hub.yaml", "-s", "x.state", "--changed"],
    );
    out.success();
    assert!(!out.stderr.contains("hub: deploy net"), "{}", out.stderr);
    assert!(
        out.stderr.starts_with("hub: deploy app (2/2)\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn help_lists_the_commands_in_the_order_a_user_works() {
    let out = hub_pinned(std::path::Path::new("."), &["--help"]);
    out.success();
    let commands: Vec<&str> = out
        .stdout
        .lines()
        .skip_while(|l| *l != "Commands:")
        .skip(1)
        .take_while(|l| !l.is_empty())
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(
        commands,
        [
            "elaborate",
            "plan",
            "deploy",
            "undeploy",
            "explain",
            "state",
            "report",
            "check",
            "graph",
            "params",
            "validate",
            "change",
            "ci",
            "pipeline",
            "run",
            "policy",
            "unlock",
            "invoke",
            "render",
            "util",
            "cel",
            "version",
            "completions",
            "man",
            "help"
        ]
    );
}

#[test]
fn a_repeated_output_flag_says_how_to_give_a_list() {
    let test = stack(&["net"], "meta: {name: listed}\n");
    let out = hub_pinned(
        test.root(),
        &["elaborate", "hub.yaml", "-o", "a.yaml", "-o", "b.yaml"],
    );
    assert_eq!(out.status, 2);
    assert_eq!(
        out.stderr,
        "error: `-o` is given more than once\n  help: give all its values to one `-o`, separated by commas: `-o a,b`\n"
    );
    let out = hub_pinned(
        test.root(),
        &["elaborate", "hub.yaml", "-o", "a.yaml,b.yaml"],
    );
    out.success();
    assert!(test.root().join("a.yaml").is_file() && test.root().join("b.yaml").is_file());
}

#[test]
fn a_plan_of_a_stack_without_a_name_says_so() {
    let test = stack(&["net"], "");
    let out = hub_pinned(test.root(), &["plan", "hub.yaml", "-n"]);
    out.success();
    assert!(
        out.stdout
            .starts_with("plan: deploy a stack without `meta.name`\n"),
        "{}",
        out.stdout
    );
    let out = hub_pinned(
        test.root(),
        &["plan", "hub.yaml", "-n", "--format", "markdown"],
    );
    assert!(
        out.stdout
            .starts_with("### Plan: deploy a stack without `meta.name`\n"),
        "{}",
        out.stdout
    );
}

#[test]
fn a_missing_tool_is_named_once_and_the_hint_reads_as_a_sentence() {
    let test = stack(&["net"], "meta: {name: tools}\nrequires: [helm, cdn]\n");
    let mut command = crate::common::pinned_command(test.root(), &["plan", "hub.yaml", "-n"]);
    let out = command
        .env("PATH", "/nonexistent")
        .output()
        .expect("run hub");
    let out = crate::common::Output::of(out, test.root());
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr.ends_with(
            "  help: put `helm` on the PATH, list the requirements under `platform.provides`, or make them optional with `lifecycle.requires.optional: [cdn, helm]`\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_warning_found_while_a_component_runs_prints_with_it() {
    let test = stack(&["net", "app"], "meta: {name: warned}\n")
        .file(
            "app/hub-component.yaml",
            "kind: component\nmeta: {name: app}\nparameters:\n- {name: first, value: one, env: SAME}\n- {name: second, value: two, env: SAME}\n",
        );
    let out = hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "x.state"]);
    out.success();
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines[..3],
        [
            "hub: deploy net (1/2)",
            "hub: deploy app (2/2)",
            "warning: component `app`: parameters `first` and `second` both set `SAME`; `second` wins",
        ]
    );
    assert_eq!(
        lines.last(),
        Some(&"hub: 1 warning, printed above (before the first component, or with the component each concerns)")
    );
    assert_eq!(out.stderr.matches("both set `SAME`").count(), 1);
    // With `--report`, the report keeps them and the end says where.
    let out = hub_pinned(
        test.root(),
        &["deploy", "hub.yaml", "-s", "x.state", "--report", "r.json"],
    );
    out.success();
    assert!(
        out.stderr.ends_with("hub: 1 warning, printed above (before the first component, or with the component each concerns); also in `r.json`\n"),
        "{}",
        out.stderr
    );
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(test.root().join("r.json")).expect("report"))
            .expect("json");
    assert_eq!(
        report["warnings"],
        serde_json::json!([
            "component `app`: parameters `first` and `second` both set `SAME`; `second` wins"
        ])
    );
}
