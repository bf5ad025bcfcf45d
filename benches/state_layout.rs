//! Size and read/write time of three layouts of the component snapshots
//! of a state, for a chain of N components with 20 parameters and one
//! output each (every snapshot holds the outputs of all the components
//! before it and its own):
//!
//! * `reference` — every snapshot whole (the Hub CLI's layout);
//! * `aliases` — every output written once with an anchor, each later
//!   snapshot listing aliases to it (`- *o17`): still N²/2 list items;
//! * `linear` — each snapshot as the difference against the previous one.
//!
//! `cargo bench --bench state_layout` prints a markdown table;
//! `-- --sizes 100,1000` chooses the sizes. Layouts whose text would pass
//! 200 MB are not built (their size is computed).

use hub_manifest::diag::Warnings;
use hub_state::{
    parse, render, render_as, CapturedOutput, ComponentRun, StackMeta, State, StateFormat,
    StateParameter,
};
use std::path::Path;
use std::time::{Duration, Instant};
use yaml_serde::Value;

const TOO_BIG: usize = 200_000_000;

fn name(i: usize) -> String {
    format!("c{i}")
}

fn output(i: usize) -> CapturedOutput {
    CapturedOutput {
        component: name(i),
        component_origin: name(i),
        component_kind: name(i),
        name: format!("{}.out", name(i)),
        value: Value::String(format!("o{i}")),
        ..CapturedOutput::default()
    }
}

fn chain(n: usize) -> State {
    let meta = StackMeta {
        name: "big".into(),
        kind: "stack".into(),
    };
    let mut state = State::new(meta, (0..n).map(name).collect());
    let mut known = Vec::new();
    for i in 0..n {
        known.push(output(i));
        let parameters = (0..20)
            .map(|k| {
                let value = Value::String(format!("v{k}-big.example.com"));
                StateParameter::qualified(&format!("{}.p{k}", name(i)), "", value, &format!("P{k}"))
            })
            .collect();
        let run = ComponentRun {
            parameters,
            snapshot: known.clone(),
            ..ComponentRun::default()
        };
        state.record_component_run(&name(i), run, "2024-05-01T10:00:00Z");
        state.component_mut(&name(i)).status = "deployed".into();
    }
    state
}

/// The `aliases` layout: the linear text with each entry's snapshot
/// written as aliases to the outputs' first (anchored) occurrence.
fn aliased(n: usize) -> String {
    let mut text = String::from("version: 1\nkind: state\ncomponents:\n");
    for i in 0..n {
        text.push_str(&format!(
            "  {}:\n    status: deployed\n    capturedOutputs:\n",
            name(i)
        ));
        for j in 0..i {
            text.push_str(&format!("    - *o{j}\n"));
        }
        text.push_str(&format!(
            "    - &o{i}\n      component: {c}\n      componentOrigin: {c}\n      componentKind: {c}\n      name: {c}.out\n      value: o{i}\n",
            c = name(i)
        ));
    }
    text
}

fn timed<T>(run: impl FnOnce() -> T) -> (T, Duration) {
    let start = Instant::now();
    let value = run();
    (value, start.elapsed())
}

fn read(text: &str) -> Duration {
    let (state, took) = timed(|| parse(Path::new("bench"), text, &mut Warnings::default()));
    state.expect("the written state reads back");
    took
}

fn mb(bytes: usize) -> String {
    format!("{:.2} MB", bytes as f64 / 1e6)
}

fn ms(d: Duration) -> String {
    format!("{:.0} ms", d.as_secs_f64() * 1e3)
}

fn row(n: usize, layout: &str, size: usize, write: Option<Duration>, read: Option<Duration>) {
    let show = |d: Option<Duration>| d.map_or("—".to_string(), ms);
    println!(
        "| {n} | {layout} | {} | {:.1} KB | {} | {} |",
        mb(size),
        size as f64 / n as f64 / 1e3,
        show(write),
        show(read)
    );
}

fn measure(n: usize) {
    let state = chain(n);
    let (linear, write) = timed(|| render_as(&state, StateFormat::Linear).expect("render"));
    row(n, "linear", linear.len(), Some(write), Some(read(&linear)));
    let (value, floor) = timed(|| yaml_serde::from_str::<yaml_serde::Value>(&linear));
    value.expect("the written state is YAML");
    row(
        n,
        "linear, YAML parse only",
        linear.len(),
        None,
        Some(floor),
    );
    // Each repeated output costs the same in every layout.
    let per_output = (render(&chain(2)).expect("render").len()
        - render_as(&chain(2), StateFormat::Linear)
            .expect("render")
            .len())
        + "    capturedOutputsBase: c0\n".len();
    let repeated = n * (n - 1) / 2;
    let reference_size = linear.len() + repeated * per_output;
    if reference_size < TOO_BIG {
        let (text, write) = timed(|| render(&state).expect("render"));
        row(n, "reference", text.len(), Some(write), Some(read(&text)));
    } else {
        row(n, "reference (computed)", reference_size, None, None);
    }
    let alias_size = linear.len() + repeated * "    - *o0000\n".len();
    if alias_size < TOO_BIG {
        let (text, write) = timed(|| aliased(n));
        let (value, took) = timed(|| yaml_serde::from_str::<yaml_serde::Value>(&text));
        value.expect("aliases parse");
        row(
            n,
            "aliases (snapshots only)",
            text.len(),
            Some(write),
            Some(took),
        );
    } else {
        row(n, "aliases (computed)", alias_size, None, None);
    }
}

fn main() {
    let mut sizes = vec![100, 1000, 10_000];
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--sizes") {
        if let Some(list) = args.get(at + 1) {
            sizes = list.split(',').filter_map(|s| s.parse().ok()).collect();
        }
    }
    println!("| components | layout | size | per component | write | read |");
    println!("|---:|---|---:|---:|---:|---:|");
    for n in sizes {
        measure(n);
    }
}
