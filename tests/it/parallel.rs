//! `hub deploy -j N` and `hub undeploy -j N` on generated chains, fan-outs,
//! diamonds and layered graphs: every dependency is respected, components
//! really run together when allowed and never more than N at a time, `-j 1`
//! is the declaration order, a failure cancels only what depends on it, and
//! the state does not depend on timing. The last section checks the
//! generator (`shapes.rs`) the benchmark relies on.
//!
//! Each script appends `start NAME NS` and `end NAME NS` to an events file;
//! the recorded intervals lie inside the processes' lifetimes, so an
//! overlap seen there really happened, and an order seen there is real.

use crate::common::{hub_isolated, read_documents, Output, Test};
use crate::shapes::{
    intervals, max_overlap, parse_event, read_events, stack_manifest, Event, Graph, Scripts, Shape,
};
use std::collections::BTreeMap;
use std::path::PathBuf;
use yaml_serde::Value;

const PINNED: &[(&str, &str)] = &[
    ("HUB_NOW", "2026-01-01T00:00:00Z"),
    ("HUB_OPERATION_ID", "op-1"),
    ("HUB_RANDOM_SEED", "1"),
    ("HUB_LINEAGE", "lineage-1"),
];

/// A generated stack in a temporary folder, recording events.
struct Stack {
    test: Test,
    graph: Graph,
}

impl Stack {
    fn new(graph: Graph, scripts: Scripts) -> Self {
        let test = Test::new();
        let scripts = scripts.recording(&test.root().join("events"));
        Stack::unrecorded(test, graph, scripts)
    }

    /// Scripts that record nothing, so that two stacks in different
    /// folders have identical files.
    fn unrecorded(test: Test, graph: Graph, scripts: Scripts) -> Self {
        crate::shapes::write_stack(test.root(), &graph, &scripts).expect("write stack");
        Stack { test, graph }
    }

    fn shaped(shape: Shape, size: usize, body: &str) -> Self {
        Stack::new(shape.graph(size), Scripts::running(body))
    }

    /// `hub VERB hub.yaml -s hub.yaml.state` with `extra` arguments.
    fn hub(&self, verb: &str, extra: &[&str]) -> Output {
        self.hub_env(verb, extra, &[])
    }

    fn hub_env(&self, verb: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let mut args = vec![verb, "hub.yaml", "-s", "hub.yaml.state"];
        args.extend_from_slice(extra);
        let mut all_env = PINNED.to_vec();
        all_env.extend_from_slice(env);
        hub_isolated(&self.test, &args, &all_env)
    }

    fn events_path(&self) -> PathBuf {
        self.test.root().join("events")
    }

    /// `(start, end)` of every component that recorded both.
    fn intervals(&self) -> BTreeMap<String, (u128, u128)> {
        intervals(&read_events(&self.events_path()).expect("events"))
    }

    /// The names in the order they started.
    fn started(&self) -> Vec<String> {
        read_events(&self.events_path())
            .expect("events")
            .into_iter()
            .filter(|e| e.start)
            .map(|e| e.name)
            .collect()
    }

    fn forget_events(&self) {
        std::fs::remove_file(self.events_path()).expect("remove events");
    }

    fn state(&self) -> Value {
        read_documents(&self.test.root().join("hub.yaml.state")).remove(0)
    }

    /// Every dependency ended before its dependent started (deploy), or
    /// every dependent ended before its dependency started (undeploy).
    #[track_caller]
    fn assert_edges_respected(&self, undeploy: bool) {
        let times = self.intervals();
        assert_eq!(times.len(), self.graph.len(), "every component ran once");
        for (dependency, dependent) in self.graph.edges() {
            let (first, then) = if undeploy {
                (dependent, dependency)
            } else {
                (dependency, dependent)
            };
            assert!(
                times[first].1 <= times[then].0,
                "{then} started {} ns before {first} ended",
                times[first].1 - times[then].0
            );
        }
    }

    /// How many components ran at the same time, at most.
    fn overlap(&self) -> usize {
        max_overlap(&self.intervals())
    }
}

/// `name → "label time detail"` from the summary at the end of stderr.
fn summary(stderr: &str) -> BTreeMap<String, String> {
    stderr
        .lines()
        .skip_while(|l| !l.ends_with(" summary:"))
        .skip(1)
        .take_while(|l| !l.starts_with("stack:"))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let name = words.next()?.to_string();
            Some((name, words.collect::<Vec<_>>().join(" ")))
        })
        .collect()
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

/// `component → status` of the state's entries.
fn statuses(state: &Value) -> BTreeMap<String, String> {
    state["components"]
        .as_mapping()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (text(k), text(&v["status"])))
                .collect()
        })
        .unwrap_or_default()
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

// ------------------------------------------------------------ ordering

#[test]
fn one_job_follows_the_declaration_order_one_at_a_time() {
    let stack = Stack::shaped(Shape::Layered { width: 3, seed: 7 }, 8, "sleep 0.05");
    stack.hub("deploy", &["-j", "1"]).success();
    assert_eq!(stack.started(), stack.graph.names);
    assert_eq!(stack.overlap(), 1);
    let events = read_events(&stack.events_path()).expect("events");
    let sequential: Vec<(bool, String)> = stack
        .graph
        .names
        .iter()
        .flat_map(|n| [(true, n.clone()), (false, n.clone())])
        .collect();
    let seen: Vec<(bool, String)> = events.into_iter().map(|e| (e.start, e.name)).collect();
    assert_eq!(seen, sequential, "each ends before the next starts");
}

#[test]
fn a_chain_runs_one_at_a_time_whatever_the_jobs() {
    let stack = Stack::shaped(Shape::Chain, 5, "sleep 0.05");
    stack.hub("deploy", &["-j", "4"]).success();
    stack.assert_edges_respected(false);
    assert_eq!(stack.started(), stack.graph.names);
    assert_eq!(stack.overlap(), 1);
}

#[test]
fn a_fan_out_runs_its_leaves_together_up_to_the_jobs() {
    let stack = Stack::shaped(Shape::FanOut, 7, "sleep 0.3");
    stack.hub("deploy", &["-j", "4"]).success();
    stack.assert_edges_respected(false);
    let overlap = stack.overlap();
    assert!(overlap >= 2, "leaves never overlapped");
    assert!(overlap <= 4, "{overlap} components ran at once with -j 4");
    assert_eq!(statuses(&stack.state()).len(), 7);
}

#[test]
fn eight_jobs_never_run_more_than_eight_processes_at_once() {
    // More leaves than jobs, twice over: the components run on workers
    // that serve one after another, never more than `-j` at a time.
    let stack = Stack::shaped(Shape::FanOut, 18, "sleep 0.2");
    stack.hub("deploy", &["-j", "8"]).success();
    stack.assert_edges_respected(false);
    let overlap = stack.overlap();
    assert!(overlap >= 2, "leaves never overlapped");
    assert!(overlap <= 8, "{overlap} components ran at once with -j 8");
    assert_eq!(statuses(&stack.state()).len(), 18);
    assert_eq!(stack.started().len(), 18, "each component ran once");
}

#[test]
fn hub_jobs_in_the_environment_sets_the_slots() {
    let stack = Stack::shaped(Shape::FanOut, 6, "sleep 0.2");
    stack.hub_env("deploy", &[], &[("HUB_JOBS", "2")]).success();
    stack.assert_edges_respected(false);
    assert_eq!(stack.overlap(), 2, "HUB_JOBS=2 runs two leaves at a time");
}

#[test]
fn zero_jobs_means_one_per_cpu() {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let stack = Stack::shaped(Shape::FanOut, 5, "sleep 0.2");
    stack.hub("deploy", &["-j", "0"]).success();
    stack.assert_edges_respected(false);
    let overlap = stack.overlap();
    assert!(overlap <= cpus.max(1), "{overlap} at once on {cpus} CPUs");
    if cpus >= 2 {
        assert!(overlap >= 2, "leaves never overlapped on {cpus} CPUs");
    }
}

#[test]
fn a_diamond_sink_waits_for_every_middle() {
    let stack = Stack::shaped(Shape::Diamond, 6, "sleep 0.2");
    stack.hub("deploy", &["-j", "3"]).success();
    stack.assert_edges_respected(false);
    let overlap = stack.overlap();
    assert!((2..=3).contains(&overlap), "overlap {overlap} with -j 3");
    assert_eq!(stack.started().last().map(String::as_str), Some("c5"));
}

#[test]
fn layered_graphs_respect_every_edge() {
    // Random sleeps of 0–90 ms shuffle who finishes first.
    let body = "sleep 0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 10 ))";
    for seed in [1, 2] {
        let stack = Stack::shaped(Shape::Layered { width: 4, seed }, 12, body);
        stack.hub("deploy", &["-j", "3"]).success();
        stack.assert_edges_respected(false);
        assert!(stack.overlap() <= 3, "seed {seed}: more than 3 at once");
    }
}

#[test]
fn layered_graphs_overlap_when_allowed() {
    let stack = Stack::shaped(Shape::Layered { width: 3, seed: 3 }, 9, "sleep 0.2");
    stack.hub("deploy", &["-j", "3"]).success();
    stack.assert_edges_respected(false);
    let overlap = stack.overlap();
    assert!((2..=3).contains(&overlap), "overlap {overlap} with -j 3");
}

#[test]
fn undeploy_runs_dependents_before_their_dependencies() {
    let stack = Stack::shaped(Shape::Layered { width: 3, seed: 5 }, 10, "sleep 0.1");
    stack.hub("deploy", &["-j", "3"]).success();
    stack.forget_events();
    stack.hub("undeploy", &["-j", "3"]).success();
    stack.assert_edges_respected(true);
    let overlap = stack.overlap();
    assert!((2..=3).contains(&overlap), "overlap {overlap} with -j 3");
    let state = stack.state();
    assert_eq!(text(&state["status"]), "undeployed");
    assert!(statuses(&state).values().all(|s| s == "undeployed"));
}

#[test]
fn a_failed_undeploy_keeps_what_it_depends_on() {
    // c0 is the root of the diamond; c2, one of the middles, fails to
    // undeploy, so c0 (which c2 depends on) must stay.
    let scripts = Scripts::running("sleep 0.05").with_body(
        "c2",
        "case \"$0\" in *undeploy.sh) echo cannot go; exit 5;; esac",
    );
    let stack = Stack::new(Shape::Diamond.graph(5), scripts);
    stack.hub("deploy", &["-j", "4"]).success();
    stack.forget_events();
    let out = stack.hub("undeploy", &["-j", "4"]);
    out.failure();
    assert_eq!(out.status, 1);
    let state = stack.state();
    let status = statuses(&state);
    assert_eq!(status["c2"], "error");
    assert_eq!(status["c0"], "deployed", "{}", out.stderr);
    for name in ["c1", "c3", "c4"] {
        assert_eq!(status[name], "undeployed", "{name}");
    }
    assert_eq!(text(&state["status"]), "incomplete");
    let line = out
        .stderr
        .lines()
        .find(|l| l.trim_start().starts_with("c0 "))
        .unwrap_or_default();
    assert!(line.contains("cancelled"), "{}", out.stderr);
    assert!(
        line.ends_with("`c2`, which depends on it, failed to undeploy"),
        "{line}"
    );
    assert!(!stack.started().contains(&"c0".to_string()));
}

#[test]
fn undeploy_of_a_diamond_ends_with_the_root() {
    let stack = Stack::shaped(Shape::Diamond, 5, "sleep 0.1");
    stack.hub("deploy", &["-j", "4"]).success();
    stack.forget_events();
    stack.hub("undeploy", &["-j", "4"]).success();
    stack.assert_edges_respected(true);
    let started = stack.started();
    assert_eq!(started.first().map(String::as_str), Some("c4"));
    assert_eq!(started.last().map(String::as_str), Some("c0"));
    assert!(stack.overlap() >= 2, "the middles never overlapped");
}

// ------------------------------------------------------------ failures

/// `c0` → `c1` (fails at once) → `c3` → `c4`; `c0` → `c2` (slow) → `c5`.
fn failing_stack() -> Stack {
    let graph = Graph::new(vec![vec![], vec![0], vec![0], vec![1], vec![3], vec![2]]);
    let scripts = Scripts::running("sleep 0.05")
        .with_body("c1", "true")
        .with_body("c2", "sleep 0.3")
        .failing("c1", 3);
    Stack::new(graph, scripts)
}

#[test]
fn a_failure_cancels_only_what_depends_on_it() {
    let stack = failing_stack();
    let out = stack.hub("deploy", &["-j", "3"]);
    assert_eq!(out.status, 1, "stderr:\n{}", out.stderr);
    let state = stack.state();
    assert_eq!(text(&state["status"]), "incomplete");
    let expected: BTreeMap<String, String> = [
        ("c0", "deployed"),
        ("c1", "error"),
        ("c2", "deployed"),
        ("c5", "deployed"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(statuses(&state), expected, "cancelled ones get no entry");
    let lines = summary(&out.stderr);
    for cancelled in ["c3", "c4"] {
        let line = &lines[cancelled];
        assert!(
            line.starts_with("cancelled ") && line.ends_with("upstream `c1` failed"),
            "{cancelled}: {line:?}\n{}",
            out.stderr
        );
    }
    assert!(lines["c1"].starts_with("error "), "{}", out.stderr);
    for deployed in ["c0", "c2", "c5"] {
        assert!(lines[deployed].starts_with("deployed "), "{}", out.stderr);
    }
    let mut started = stack.started();
    started.sort();
    assert_eq!(started, names(&["c0", "c1", "c2", "c5"]));
}

#[test]
fn a_failure_in_a_layered_graph_cancels_exactly_its_downstream() {
    let graph = Shape::Layered { width: 3, seed: 11 }.graph(12);
    let failed = "c4";
    let downstream = graph.downstream(failed);
    assert!(
        !downstream.is_empty() && downstream.len() < 7,
        "{downstream:?}"
    );
    let stack = Stack::new(graph, Scripts::running("sleep 0.05").failing(failed, 2));
    let out = stack.hub("deploy", &["-j", "3"]);
    assert_eq!(out.status, 1, "stderr:\n{}", out.stderr);
    let lines = summary(&out.stderr);
    let state = stack.state();
    let statuses = statuses(&state);
    assert_eq!(text(&state["status"]), "incomplete");
    for name in &stack.graph.names {
        let line = &lines[name];
        if name == failed {
            assert!(line.starts_with("error "), "{name}: {line}");
            assert_eq!(statuses[name], "error");
        } else if downstream.contains(name) {
            assert!(
                line.starts_with("cancelled ")
                    && line.ends_with(&format!("upstream `{failed}` failed")),
                "{name}: {line:?}"
            );
            assert!(!statuses.contains_key(name), "{name} has a state entry");
        } else {
            assert!(line.starts_with("deployed "), "{name}: {line}");
            assert_eq!(statuses[name], "deployed");
        }
    }
}

/// The summary's line of each component without its duration (`0.05s`),
/// with the stack's folder written `ROOT`.
fn summary_words(stderr: &str, root: &std::path::Path) -> BTreeMap<String, String> {
    let is_duration = |w: &str| {
        w.strip_suffix('s')
            .is_some_and(|n| n.parse::<f64>().is_ok())
    };
    summary(stderr)
        .into_iter()
        .map(|(name, line)| {
            let words: Vec<&str> = line.split(' ').filter(|w| !is_duration(w)).collect();
            let line = words.join(" ").replace(&root.display().to_string(), "ROOT");
            (name, line)
        })
        .collect()
}

#[test]
fn the_same_components_run_after_a_failure_whatever_j_is() {
    let mut seen = Vec::new();
    for jobs in ["1", "2", "4"] {
        let stack = failing_stack();
        let out = stack.hub("deploy", &["-j", jobs, "--why", "--report", "run.json"]);
        assert_eq!(out.status, 1, "-j {jobs}: {}", out.stderr);
        let mut started = stack.started();
        started.sort();
        assert_eq!(started, names(&["c0", "c1", "c2", "c5"]), "-j {jobs}");
        let lines = summary_words(&out.stderr, stack.test.root());
        for name in ["c3", "c4"] {
            assert_eq!(lines[name], "cancelled upstream `c1` failed", "-j {jobs}");
            assert!(
                out.stderr
                    .contains(&format!("hub: {name}: cancelled: upstream `c1` failed\n")),
                "-j {jobs} --why: {}",
                out.stderr
            );
        }
        let report: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(stack.test.root().join("run.json")).expect("report"),
        )
        .expect("JSON");
        for component in report["components"].as_array().expect("components") {
            if component["status"] != "deployed" {
                assert!(
                    component["reason"].is_string(),
                    "-j {jobs}: no reason: {component}"
                );
            }
        }
        seen.push((statuses(&stack.state()), lines));
    }
    assert!(seen.windows(2).all(|w| w[0] == w[1]), "{seen:#?}");
}

#[test]
fn fail_fast_with_one_job_stops_at_the_first_failure() {
    let stack = failing_stack();
    let out = stack.hub("deploy", &["-j", "1", "--fail-fast", "--why"]);
    assert_eq!(out.status, 1, "stderr:\n{}", out.stderr);
    assert_eq!(stack.started(), names(&["c0", "c1"]));
    let lines = summary(&out.stderr);
    for name in ["c3", "c4"] {
        assert!(
            lines[name].ends_with("upstream `c1` failed"),
            "{name}: {}",
            lines[name]
        );
    }
    for name in ["c2", "c5"] {
        assert!(
            lines[name].starts_with("not run ")
                && lines[name]
                    .ends_with("the run stopped when `c1` failed to deploy (`--fail-fast`)"),
            "{name}: {}",
            lines[name]
        );
        out.stderr_has(&format!(
            "hub: {name}: not run: the run stopped when `c1` failed to deploy (`--fail-fast`)\n"
        ));
    }
    let state = stack.state();
    assert_eq!(text(&state["status"]), "incomplete");
    assert_eq!(statuses(&state).len(), 2);
}

#[test]
fn fail_fast_in_parallel_lets_what_runs_finish_and_starts_nothing_more() {
    let stack = failing_stack();
    let out = stack.hub("deploy", &["-j", "3", "--fail-fast"]);
    assert_eq!(out.status, 1, "stderr:\n{}", out.stderr);
    // c1 fails while c2 (0.3s) runs: c2 finishes, c5 (after c2) never starts.
    let mut started = stack.started();
    started.sort();
    assert_eq!(started, names(&["c0", "c1", "c2"]));
    let lines = summary(&out.stderr);
    assert!(lines["c2"].starts_with("deployed "), "{}", lines["c2"]);
    assert!(
        lines["c5"].ends_with("the run stopped when `c1` failed to deploy (`--fail-fast`)"),
        "{}",
        lines["c5"]
    );
    out.stderr_has("error: component `c1` failed");
}

// ------------------------------------------------------------ output and state

#[test]
fn output_lines_are_never_mixed() {
    let body = "i=0; while [ $i -lt 300 ]; do echo \"$name line $i ................................................................................................................................................................................................\"; i=$((i+1)); done";
    let stack = Stack::shaped(Shape::FanOut, 5, body);
    let out = stack.hub("deploy", &["-j", "4"]);
    out.success();
    let mut next: BTreeMap<&str, usize> = BTreeMap::new();
    for line in out.stdout.lines() {
        let (name, rest) = line
            .split_once(" | ")
            .unwrap_or_else(|| panic!("not `name | text`: {line:?}"));
        let counter = next.entry(name).or_default();
        let expected = format!("{name} line {counter} {}", ".".repeat(192));
        assert_eq!(rest, expected, "mixed or out of order: {line:?}");
        *counter += 1;
    }
    assert_eq!(next.len(), 5);
    assert!(next.values().all(|&n| n == 300), "{next:?}");
}

/// The state text with the folder and the random deployment id replaced.
fn normalized_state(stack: &Stack) -> String {
    let state = stack.state();
    let id = state["stackParameters"]
        .as_sequence()
        .and_then(|params| {
            params
                .iter()
                .find(|p| text(&p["name"]) == "hub.deploymentId")
                .map(|p| text(&p["value"]))
        })
        .expect("deployment id");
    let raw = std::fs::read_to_string(stack.test.root().join("hub.yaml.state")).expect("state");
    // The digest line changes with the serial, as the serial does.
    let raw = crate::common::unframed(&raw);
    // `serial` counts writes, and the checkpoints of components that start
    // together share one write: it is the one timing-dependent line.
    raw.replace(&stack.test.root().display().to_string(), "ROOT")
        .replace(&id, "ID")
        .lines()
        .map(|line| match line.starts_with("serial: ") {
            true => "serial: N",
            false => line,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Scripts sleeping 0–90 ms at random, each printing one output that its
/// manifest declares, so every state entry carries a snapshot of the
/// outputs known when it finished.
fn random_sleeps() -> Scripts {
    Scripts::running(
        "sleep 0.0$(( $(od -An -N1 -tu1 /dev/urandom) % 10 ))\necho \"$name done\"\necho\necho Outputs:\necho \"value = $name\"\necho",
    )
    .declaring("outputs:\n  - name: component.{name}.value\n    fromTfVar: value\n")
}

/// Deploys `graph` with `scripts` in two separate folders with `-j 4` and
/// returns both normalized states and the exit codes.
fn deploy_twice(graph: &Graph, scripts: &Scripts) -> Vec<(i32, String)> {
    (0..2)
        .map(|_| {
            let stack = Stack::unrecorded(Test::new(), graph.clone(), scripts.clone());
            let out = stack.hub("deploy", &["-j", "4"]);
            (out.status, normalized_state(&stack))
        })
        .collect()
}

#[test]
fn the_state_does_not_depend_on_timing() {
    let graph = Shape::Layered { width: 3, seed: 9 }.graph(10);
    let runs = deploy_twice(&graph, &random_sleeps());
    assert_eq!(runs[0].0, 0, "{}", runs[0].1);
    assert!(
        runs[0].1.contains("component.c9.value"),
        "outputs were captured:\n{}",
        runs[0].1
    );
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn the_state_of_a_failed_run_does_not_depend_on_timing() {
    let graph = Shape::Layered { width: 3, seed: 9 }.graph(10);
    let runs = deploy_twice(&graph, &random_sleeps().failing("c3", 4));
    assert_eq!(runs[0].0, 1, "{}", runs[0].1);
    assert_eq!(runs[0], runs[1]);
}

#[test]
fn several_failures_leave_the_same_state_whatever_the_timing() {
    let graph = Shape::Layered { width: 4, seed: 2 }.graph(12);
    let scripts = random_sleeps().failing("c1", 3).failing("c2", 5);
    let runs = deploy_twice(&graph, &scripts);
    assert_eq!(runs[0].0, 1, "{}", runs[0].1);
    assert!(
        runs[0].1.contains("components `c1`, `c2` failed"),
        "{}",
        runs[0].1
    );
    assert_eq!(runs[0], runs[1]);
}

// ------------------------------------------------------------ the generator itself

#[test]
fn critical_path_work_and_width_of_each_shape() {
    let figures = |shape: Shape, size| {
        let graph = shape.graph(size);
        (graph.critical_path(), graph.total_work(), graph.width())
    };
    assert_eq!(figures(Shape::Chain, 5), (5, 5, 1));
    assert_eq!(figures(Shape::FanOut, 5), (2, 5, 4));
    assert_eq!(figures(Shape::Diamond, 6), (3, 6, 4));
    let layered = Shape::Layered { width: 10, seed: 1 };
    assert_eq!(figures(layered, 100), (10, 100, 10));
}

#[test]
fn layered_nodes_depend_on_one_or_two_of_the_previous_layer() {
    let graph = Shape::Layered { width: 4, seed: 3 }.graph(20);
    assert_eq!(graph, Shape::Layered { width: 4, seed: 3 }.graph(20));
    for (i, depends) in graph.depends.iter().enumerate() {
        let layer = i / 4;
        if layer == 0 {
            assert!(depends.is_empty());
        } else {
            assert!((1..=2).contains(&depends.len()), "c{i}: {depends:?}");
            assert!(depends.iter().all(|&d| d / 4 == layer - 1), "c{i}");
        }
    }
    assert_eq!(graph.downstream("c19"), Vec::<String>::new());
}

#[test]
fn overlap_counts_intervals_open_at_once() {
    let events: Vec<Event> = [
        "start a 0",
        "start b 5",
        "end a 10",
        "start c 10",
        "end b 12",
        "end c 20",
    ]
    .iter()
    .map(|l| parse_event(l).expect("event"))
    .collect();
    let times = intervals(&events);
    assert_eq!(times["c"], (10, 20));
    assert_eq!(max_overlap(&times), 2);
    assert_eq!(parse_event("start a"), None);
}

#[test]
fn the_stack_manifest_lists_depends() {
    let text = stack_manifest(&Shape::Diamond.graph(4));
    assert!(
        text.contains(
            "  - name: c3\n    source:\n      dir: components/c3\n    depends: [c1, c2]\n"
        ),
        "{text}"
    );
}

/// `a` (optional, fails) → `b` → `c`, in a written order.
fn optional_failing_stack() -> Test {
    let mut test = Test::new().file(
        "hub.yaml",
        "
        kind: stack
        meta: {name: optional}
        components:
        - {name: a, source: {dir: a}}
        - {name: b, source: {dir: b}, depends: [a]}
        - {name: c, source: {dir: c}}
        lifecycle: {order: [a, b, c], optional: [a]}
        ",
    );
    for name in ["a", "b", "c"] {
        test = test
            .file(
                &format!("{name}/hub-component.yaml"),
                &format!("kind: component\nmeta: {{name: {name}}}\n"),
            )
            .script(&format!("{name}/deploy.sh"), "#!/bin/sh\ntouch ran\n");
    }
    test.script("a/deploy.sh", "#!/bin/sh\nexit 3\n")
}

#[test]
fn a_mandatory_dependent_of_a_failed_optional_component_fails_the_run_whatever_j_is() {
    let mut seen = Vec::new();
    for jobs in ["1", "4"] {
        let test = optional_failing_stack();
        let out = hub_isolated(
            &test,
            &["deploy", "hub.yaml", "-s", "s.state", "-j", jobs],
            &[],
        );
        assert_eq!(out.status, 1, "-j {jobs}: {}", out.stderr);
        let lines = summary_words(&out.stderr, test.root());
        assert_eq!(
            lines["b"], "error it depends on `a`, which failed in this run",
            "-j {jobs}"
        );
        assert_eq!(lines["c"], "cancelled upstream `b` failed", "-j {jobs}");
        assert!(!test.root().join("b/ran").exists(), "-j {jobs}: b ran");
        let state = std::fs::read_to_string(test.root().join("s.state")).expect("state");
        assert!(state.contains("status: incomplete"), "-j {jobs}: {state}");
        seen.push(lines);
    }
    assert_eq!(seen[0], seen[1]);
}
