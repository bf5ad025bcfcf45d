//! What a component waits for under `-j`: its `depends`, the earlier
//! providers of what it `requires`, the earlier components whose outputs
//! its parameters read, and, in a stack whose author wrote
//! `lifecycle.order`, everything before it when it declares no `depends`.
//! Checked on small stacks whose scripts record when they ran, and on the
//! waves of every stack of the corpus.

use crate::common::{Output, Test};
use crate::conformance::{cases, corpus};
use std::collections::BTreeMap;

const PINNED: &[(&str, &str)] = &[
    ("HUB_NOW", "2026-01-01T00:00:00Z"),
    ("HUB_OPERATION_ID", "op-1"),
    ("HUB_RANDOM_SEED", "1"),
];

/// A component that records its start and end in `../events`, sleeping in
/// between, and prints `outputs` (`name = value` lines) in its Outputs
/// block.
fn component(test: Test, name: &str, manifest_extra: &str, outputs: &[&str]) -> Test {
    let mut block = String::new();
    if !outputs.is_empty() {
        block.push_str("echo\necho Outputs:\n");
        for line in outputs {
            block.push_str(&format!("echo '{line}'\n"));
        }
    }
    let script = format!(
        "#!/bin/sh\necho \"start {name} $(date +%s%N)\" >> ../events\nsleep 0.3\necho \"end {name} $(date +%s%N)\" >> ../events\n{block}"
    );
    test.file(
        &format!("{name}/hub-component.yaml"),
        &format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n{manifest_extra}"),
    )
    .script(&format!("{name}/deploy.sh"), &script)
    .script(&format!("{name}/undeploy.sh"), &script)
}

fn run(test: &Test, args: &[&str]) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("hub").expect("hub binary");
    command
        .current_dir(test.root())
        .args(args)
        .env_remove("ENV");
    for (k, v) in PINNED {
        command.env(k, v);
    }
    Output::of(command.output().expect("run hub"), test.root())
}

/// `name → (start, end)` from the events the scripts recorded.
fn intervals(test: &Test) -> BTreeMap<String, (u128, u128)> {
    let text = std::fs::read_to_string(test.root().join("events")).expect("events");
    let mut times: BTreeMap<String, (u128, u128)> = BTreeMap::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [kind, name, ns] = fields[..] else {
            panic!("odd event line {line:?}");
        };
        let ns: u128 = ns.parse().expect("nanoseconds");
        let entry = times.entry(name.to_string()).or_default();
        match kind {
            "start" => entry.0 = ns,
            _ => entry.1 = ns,
        }
    }
    times
}

#[track_caller]
fn assert_before(times: &BTreeMap<String, (u128, u128)>, first: &str, then: &str) {
    assert!(
        times[first].1 <= times[then].0,
        "{then} started before {first} ended: {times:?}"
    );
}

fn overlaps(times: &BTreeMap<String, (u128, u128)>, a: &str, b: &str) -> bool {
    times[a].0 < times[b].1 && times[b].0 < times[a].1
}

/// `order: [slow, after, last]`, no `depends`; `after` reads an output of
/// `slow`.
fn written_order() -> Test {
    let test = Test::new().file(
        "hub.yaml",
        "
        version: 1
        kind: stack
        meta: {name: ordered}
        components:
        - {name: slow, source: {dir: slow}}
        - {name: after, source: {dir: after}}
        - {name: last, source: {dir: last}}
        lifecycle:
          order: [slow, after, last]
        ",
    );
    let test = component(
        test,
        "slow",
        "outputs:\n- {name: slept, fromTfVar: slept}\n",
        &["slept = 1"],
    );
    let test = component(
        test,
        "after",
        "parameters:\n- {name: slept, env: SLEPT}\n",
        &[],
    );
    component(test, "last", "", &[])
}

#[test]
fn a_written_order_is_kept_under_j_when_no_depends_are_declared() {
    let test = written_order();
    run(
        &test,
        &["deploy", "hub.yaml", "-s", "hub.yaml.state", "-j", "4"],
    )
    .success();
    let times = intervals(&test);
    assert_before(&times, "slow", "after");
    assert_before(&times, "after", "last");
    std::fs::remove_file(test.root().join("events")).expect("forget events");
    run(
        &test,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state", "-j", "4"],
    )
    .success();
    let times = intervals(&test);
    assert_before(&times, "last", "after");
    assert_before(&times, "after", "slow");
}

#[test]
fn declaring_depends_lets_a_component_run_beside_the_order() {
    // `side` depends on `slow` only: it runs beside `after`, while `last`
    // (no `depends`) still waits for everything before it.
    let test = Test::new().file(
        "hub.yaml",
        "
        version: 1
        kind: stack
        meta: {name: mixed}
        components:
        - {name: slow, source: {dir: slow}}
        - {name: after, source: {dir: after}}
        - {name: side, source: {dir: side}, depends: [slow]}
        - {name: last, source: {dir: last}}
        lifecycle:
          order: [slow, after, side, last]
        ",
    );
    let test = component(test, "slow", "", &[]);
    let test = component(test, "after", "", &[]);
    let test = component(test, "side", "", &[]);
    let test = component(test, "last", "", &[]);
    run(&test, &["deploy", "hub.yaml", "-n", "-j", "4"]).success();
    let times = intervals(&test);
    assert_before(&times, "slow", "after");
    assert_before(&times, "slow", "side");
    assert!(overlaps(&times, "after", "side"), "{times:?}");
    assert_before(&times, "after", "last");
    assert_before(&times, "side", "last");
}

/// A written order where `root` says `depends: []`: it needs nothing, so
/// it runs beside `slow` instead of after everything before it; `last`,
/// without `depends`, still waits for all of them.
fn order_with_an_opted_out_root() -> Test {
    let test = Test::new().file(
        "hub.yaml",
        "
        version: 1
        kind: stack
        meta: {name: roots}
        components:
        - {name: slow, source: {dir: slow}}
        - {name: root, source: {dir: root}, depends: []}
        - {name: last, source: {dir: last}}
        lifecycle:
          order: [slow, root, last]
        ",
    );
    let test = component(test, "slow", "", &[]);
    let test = component(test, "root", "", &[]);
    component(test, "last", "", &[])
}

#[test]
fn an_empty_depends_opts_a_component_out_of_the_written_order() {
    let test = order_with_an_opted_out_root();
    run(&test, &["deploy", "hub.yaml", "-n", "-j", "4"]).success();
    let times = intervals(&test);
    assert!(overlaps(&times, "slow", "root"), "{times:?}");
    assert_before(&times, "slow", "last");
    assert_before(&times, "root", "last");

    let plan = run(&test, &["plan", "hub.yaml", "-n", "-j", "4"]);
    plan.success();
    assert!(
        plan.stdout.contains("  1. slow, root\n  2. last\n"),
        "{}",
        plan.stdout
    );
    assert!(
        plan.stdout
            .contains("root: create (never deployed)\n  runs: deploy.sh\n  waits for: nothing (`depends: []`)\n"),
        "{}",
        plan.stdout
    );
    let json = run(&test, &["plan", "hub.yaml", "-n", "--format", "json"]);
    let json: serde_json::Value = serde_json::from_str(&json.stdout).expect("plan JSON");
    let needs_nothing: Vec<&str> = json["components"]
        .as_array()
        .expect("components")
        .iter()
        .filter(|c| c["needs_nothing"] == true)
        .map(|c| c["name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(needs_nothing, ["root"]);

    let graph = run(&test, &["graph", "hub.yaml"]);
    graph.success();
    assert!(
        graph.stdout.contains("label=\"root (depends: [])\""),
        "{}",
        graph.stdout
    );
    assert!(
        !graph.stdout.contains("\"slow\" -> \"root\""),
        "{}",
        graph.stdout
    );
}

#[test]
fn the_elaborated_file_keeps_an_empty_depends_and_a_missing_one_apart() {
    let test = order_with_an_opted_out_root();
    run(&test, &["elaborate", "hub.yaml", "-o", "e.yaml"]).success();
    let text = std::fs::read_to_string(test.root().join("e.yaml")).expect("elaborated");
    assert_eq!(text.matches("depends: []").count(), 1, "{text}");
    // The elaborated file plans as the stack does.
    let plan = run(&test, &["plan", "e.yaml", "-n", "-j", "4"]);
    plan.success();
    assert!(plan.stdout.contains("  1. slow, root\n"), "{}", plan.stdout);
}

#[test]
fn a_parameter_reading_an_output_waits_for_its_producer_without_an_order() {
    // No `lifecycle.order` and no `depends`: only the output read orders
    // `slow` before `after`; `free` runs beside `slow`.
    let test = Test::new().file(
        "hub.yaml",
        "
        version: 1
        kind: stack
        meta: {name: implicit}
        components:
        - {name: slow, source: {dir: slow}}
        - {name: after, source: {dir: after}}
        - {name: free, source: {dir: free}}
        ",
    );
    let test = component(
        test,
        "slow",
        "outputs:\n- {name: slept, fromTfVar: slept}\n",
        &["slept = 1"],
    );
    let test = component(
        test,
        "after",
        "parameters:\n- {name: greeting, value: 'slept ${slept}', env: GREETING}\n",
        &[],
    );
    let test = component(test, "free", "", &[]);
    let out = run(
        &test,
        &[
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "-j",
            "4",
            "--why",
        ],
    );
    out.success()
        .stderr_has("hub: after waited for slow (`greeting` reads its output `slept`)");
    let times = intervals(&test);
    assert_before(&times, "slow", "after");
    assert!(overlaps(&times, "slow", "free"), "{times:?}");
}

#[test]
fn plan_and_graph_show_each_edge_with_its_reason() {
    let test = written_order();
    let out = run(&test, &["plan", "hub.yaml", "-n", "-j", "4"]);
    out.success();
    assert!(
        out.stdout
            .contains("waves:\n  1. slow\n  2. after\n  3. last\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(
            "after: create (never deployed)\n  runs: deploy.sh\n  waits for: slow (parameter `slept` is its output, comes before in `lifecycle.order`)\n"
        ),
        "{}",
        out.stdout
    );
    let out = run(&test, &["plan", "hub.yaml", "-n", "--format", "json"]);
    let plan: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(
        plan["components"][2]["waits_for"],
        serde_json::json!([{"component": "after", "reasons": ["comes before in `lifecycle.order`"]}])
    );
    let out = run(&test, &["graph", "hub.yaml"]);
    out.success();
    assert!(
        out.stdout
            .contains("\"slow\" -> \"after\" [style=dashed, label=\"output slept\"];"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("\"after\" -> \"last\" [style=dotted];"),
        "{}",
        out.stdout
    );
}

/// The waves of every corpus stack, as `hub graph` gives them.
#[test]
fn corpus_stacks_keep_their_written_order() {
    let Some(corpus) = corpus() else {
        return;
    };
    let mut all = String::new();
    for case in cases(&corpus) {
        let dir = case.dir(&corpus).join(&case.workdir);
        let mut command = assert_cmd::Command::cargo_bin("hub").expect("hub binary");
        let mut args = vec!["graph".to_string(), "--format".into(), "mermaid".into()];
        args.extend(case.args.iter().cloned());
        command.current_dir(&dir).args(&args).env_remove("ENV");
        let out = Output::of(command.output().expect("run hub"), &dir);
        out.success();
        all.push_str(&format!("{}:\n", case.name));
        for line in out.stdout.lines().filter(|l| l.starts_with("  %% wave ")) {
            all.push_str(&format!("{}\n", &line[5..]));
        }
    }
    insta::assert_snapshot!(all);
}
