//! `hub deploy -j N` makespans on generated graphs (a chain, a fan-out, a
//! diamond, layered) of 10 and 100 components that each `sleep 0.2`,
//! against what the graph allows and against a bare Rust loop spawning the
//! same scripts with the same number of slots (the floor), measured in the
//! same run.
//!
//! Run with `cargo bench --bench schedule`. Options (after `--`):
//! `--sizes 10,100`, `--shapes chain,fan-out,diamond,layered` and
//! `--write FILE` (default `benches/SCHEDULE_RESULTS.md`; `-` prints only).
//! Whatever follows the line [`support::HISTORY`] in the file written is kept.
//!
//! Targets: with enough workers (`-j` = the graph's widest level), the
//! makespan is at most 1.05 × the critical path + 50 ms; with P workers,
//! Graham's bound for list scheduling, W/P + (1 − 1/P)·CP (W the total
//! work), with the same allowance (5 % + 50 ms) for spawning and waiting.
//! Combinations that add nothing are skipped and the output says why.

#[path = "../tests/it/shapes.rs"]
mod shapes;

mod support;

use shapes::{Graph, Scripts, Shape};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What each component does, and how long that takes.
const BODY: &str = "sleep 0.2";
const UNIT: f64 = 0.2;

/// The allowance over a bound: 5 % and 50 ms.
const SLACK_FACTOR: f64 = 1.05;
const SLACK_FIXED: f64 = 0.050;

/// Worker counts tried below "enough".
const SLOTS: [usize; 2] = [2, 4];

fn shape_named(name: &str, size: usize) -> Option<Shape> {
    match name {
        "chain" => Some(Shape::Chain),
        "fan-out" => Some(Shape::FanOut),
        "diamond" => Some(Shape::Diamond),
        "layered" => Some(Shape::Layered {
            width: layer_width(size),
            seed: 1,
        }),
        _ => None,
    }
}

/// About √n components per layer: 3 for 10, 10 for 100.
fn layer_width(size: usize) -> usize {
    ((size as f64).sqrt().round() as usize).max(2)
}

/// How many workers a run gets.
#[derive(Debug, Clone, Copy)]
enum Workers {
    /// As many as the widest level of the graph.
    Enough(usize),
    Limited(usize),
}

impl Workers {
    fn count(self) -> usize {
        match self {
            Workers::Enough(n) | Workers::Limited(n) => n,
        }
    }

    fn label(self) -> String {
        match self {
            Workers::Enough(n) => format!("{n} (enough)"),
            Workers::Limited(n) => n.to_string(),
        }
    }

    /// The bound the makespan is held to, in seconds, before the allowance.
    fn bound(self, graph: &Graph) -> f64 {
        let critical = graph.critical_path() as f64 * UNIT;
        match self {
            Workers::Enough(_) => critical,
            Workers::Limited(p) => {
                let p = p as f64;
                graph.total_work() as f64 * UNIT / p + (1.0 - 1.0 / p) * critical
            }
        }
    }

    fn target(self, graph: &Graph) -> f64 {
        SLACK_FACTOR * self.bound(graph) + SLACK_FIXED
    }
}

/// Why a limited worker count is not run, if it adds nothing.
fn skip_reason(shape: Shape, size: usize, graph: &Graph, slots: usize) -> Option<String> {
    if slots >= graph.width() {
        return Some(format!(
            "-j {slots} ≥ width {}: the same as enough workers",
            graph.width()
        ));
    }
    if shape == Shape::Diamond && size > 10 {
        return Some(format!(
            "-j {slots}: a fan-out plus one sink; the fan-out's row at {size} shows the same"
        ));
    }
    None
}

/// One `hub deploy` of the elaborated stack with `slots` workers, with a
/// fresh state or none (`-n`); the wall time of the hub process.
fn time_hub(root: &Path, slots: usize, with_state: bool) -> Duration {
    for leftover in [
        "hub.yaml.state",
        "hub.yaml.state.backup",
        "hub.yaml.state.lock",
    ] {
        let _ = std::fs::remove_file(root.join(leftover));
    }
    let _ = std::fs::remove_dir_all(root.join("hub.yaml.state.logs"));
    let state: &[&str] = if with_state {
        &["-s", "hub.yaml.state"]
    } else {
        &["-n"]
    };
    let started = Instant::now();
    let status = Command::new(env!("CARGO_BIN_EXE_hub"))
        .current_dir(root)
        .args(["deploy", "hub.yaml.elaborate", "-j", &slots.to_string()])
        .args(state)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run hub");
    let elapsed = started.elapsed();
    assert!(status.success(), "hub deploy failed in {}", root.display());
    elapsed
}

/// Elaborates the stack once, so the timed runs measure the deploy only.
fn elaborate(root: &Path) {
    let status = Command::new(env!("CARGO_BIN_EXE_hub"))
        .current_dir(root)
        .args(["elaborate", "hub.yaml", "-o", "hub.yaml.elaborate"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .expect("run hub elaborate");
    assert!(
        status.success(),
        "hub elaborate failed in {}",
        root.display()
    );
}

/// The floor: the same scripts spawned by a bare loop that starts a
/// component as soon as its dependencies have exited, lowest position
/// first, at most `slots` at a time.
fn time_floor(root: &Path, graph: &Graph, slots: usize) -> Duration {
    let started = Instant::now();
    let mut waiting: Vec<usize> = graph.depends.iter().map(Vec::len).collect();
    let mut launched = vec![false; graph.len()];
    let mut running: Vec<(usize, Child)> = Vec::new();
    let mut finished = 0;
    while finished < graph.len() {
        while running.len() < slots {
            let Some(next) = (0..graph.len()).find(|&i| !launched[i] && waiting[i] == 0) else {
                break;
            };
            launched[next] = true;
            running.push((next, spawn_script(root, &graph.names[next])));
        }
        let exited = wait_any(&mut running);
        let (done, mut child) = running.swap_remove(exited);
        assert!(child.wait().expect("wait").success(), "script failed");
        finished += 1;
        for (i, depends) in graph.depends.iter().enumerate() {
            if depends.contains(&done) {
                waiting[i] -= 1;
            }
        }
    }
    started.elapsed()
}

fn spawn_script(root: &Path, name: &str) -> Child {
    let dir = root.join("components").join(name);
    Command::new(dir.join("deploy.sh"))
        .current_dir(&dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn script")
}

/// The index in `running` of a child that has exited.
fn wait_any(running: &mut [(usize, Child)]) -> usize {
    loop {
        for (k, (_, child)) in running.iter_mut().enumerate() {
            if child.try_wait().expect("try_wait").is_some() {
                return k;
            }
        }
        std::thread::sleep(Duration::from_micros(200));
    }
}

struct Row {
    shape: String,
    size: usize,
    critical: usize,
    width: usize,
    workers: Workers,
    runs: usize,
    bound: f64,
    target: f64,
    floor: Duration,
    stateless: Duration,
    with_state: Duration,
}

impl Row {
    fn verdict(&self, makespan: Duration) -> &'static str {
        if makespan.as_secs_f64() <= self.target {
            "PASS"
        } else {
            "FAIL"
        }
    }

    fn critical_seconds(&self) -> f64 {
        self.critical as f64 * UNIT
    }

    fn ratio(&self, makespan: Duration) -> f64 {
        makespan.as_secs_f64() / self.critical_seconds()
    }

    /// Milliseconds above the bare loop (negative when faster).
    fn over_floor(&self, makespan: Duration) -> f64 {
        (makespan.as_secs_f64() - self.floor.as_secs_f64()) * 1000.0
    }
}

/// Timed runs per measurement: three (the median is kept) when the bound
/// is under a second, where 50 ms of noise decide the verdict, else one.
fn runs_for(bound: f64) -> usize {
    if bound < 1.0 {
        3
    } else {
        1
    }
}

fn median(runs: usize, mut run: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..runs).map(|_| run()).collect();
    times.sort();
    times[times.len() / 2]
}

fn measure(shape: Shape, size: usize, graph: &Graph, root: &Path, workers: Workers) -> Row {
    let slots = workers.count();
    let runs = runs_for(workers.bound(graph));
    let row = Row {
        shape: shape.label(),
        size,
        critical: graph.critical_path(),
        width: graph.width(),
        workers,
        runs,
        bound: workers.bound(graph),
        target: workers.target(graph),
        floor: median(runs, || time_floor(root, graph, slots)),
        stateless: median(runs, || time_hub(root, slots, false)),
        with_state: median(runs, || time_hub(root, slots, true)),
    };
    println!(
        "{:<14} {:>3} components  -j {:<13} CP {:>5.2} s  bound {:>5.2} s  target ≤ {:>5.2} s | floor {:>6.3} s | -n {:>6.3} s ({:.2}× CP, {:+.0} ms) {} | state {:>6.3} s ({:.2}× CP, {:+.0} ms) {}{}",
        row.shape,
        row.size,
        workers.label(),
        row.critical_seconds(),
        row.bound,
        row.target,
        row.floor.as_secs_f64(),
        row.stateless.as_secs_f64(),
        row.ratio(row.stateless),
        row.over_floor(row.stateless),
        row.verdict(row.stateless),
        row.with_state.as_secs_f64(),
        row.ratio(row.with_state),
        row.over_floor(row.with_state),
        row.verdict(row.with_state),
        if runs > 1 { "  (median of 3)" } else { "" },
    );
    row
}

fn main() {
    let mut sizes = vec![10, 100];
    let mut shape_names: Vec<String> = ["chain", "fan-out", "diamond", "layered"]
        .map(String::from)
        .to_vec();
    let mut write = Some("benches/SCHEDULE_RESULTS.md".to_string());
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--sizes" => {
                sizes = args
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .filter_map(|s| s.trim().parse().ok())
                    .collect()
            }
            "--shapes" => {
                shape_names = args
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .map(|s| s.trim().to_string())
                    .collect()
            }
            "--write" => write = args.next().filter(|w| w != "-"),
            _ => {}
        }
    }
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut skipped = Vec::new();
    for &size in &sizes {
        for name in &shape_names {
            let Some(shape) = shape_named(name, size) else {
                eprintln!("unknown shape {name:?}");
                continue;
            };
            let graph = shape.graph(size);
            let dir = tempfile::tempdir().expect("temporary folder");
            shapes::write_stack(dir.path(), &graph, &Scripts::running(BODY)).expect("stack");
            elaborate(dir.path());
            for slots in SLOTS {
                if let Some(reason) = skip_reason(shape, size, &graph, slots) {
                    let line = format!("{} {size}: skipped {reason}", shape.label());
                    println!("{line}");
                    skipped.push(line);
                    continue;
                }
                rows.push(measure(
                    shape,
                    size,
                    &graph,
                    dir.path(),
                    Workers::Limited(slots),
                ));
            }
            rows.push(measure(
                shape,
                size,
                &graph,
                dir.path(),
                Workers::Enough(graph.width()),
            ));
        }
    }
    println!("total {:.0} s", started.elapsed().as_secs_f64());
    if let Some(path) = write {
        support::write_results(&path, report(&rows, &skipped));
    }
}

fn report(rows: &[Row], skipped: &[String]) -> String {
    let mut out = String::from(
        "# `hub deploy -j N` makespan\n\nGenerated by `cargo bench --bench schedule` (release build). Each stack is \
         a generated graph of N components whose scripts `sleep 0.2`: a chain, a fan-out (one root, N − 1 \
         leaves), a diamond (root, N − 2 middles, one sink) and layered (layers of about √N components, each \
         depending on one or two of the previous layer). The stack is elaborated once; each timed run is one \
         `hub deploy hub.yaml.elaborate -j P`, with no state (`-n`) and with a fresh state, and the makespan is \
         the wall time of the hub process. CP is the critical path (the longest dependency path × 0.2 s), W \
         the total work (N × 0.2 s). Targets: with enough workers (P = the widest level), makespan ≤ 1.05 × CP \
         + 50 ms; with fewer, Graham's bound for list scheduling, W/P + (1 − 1/P)·CP, with the same allowance \
         (1.05 × bound + 50 ms). The floor is a bare Rust loop spawning the same scripts in the same order with \
         the same number of slots, so hub's own overhead is the difference (\"over floor\"). Each figure is one \
         run, or the median of three when the bound is under 1 s.\n\n",
    );
    let _ = writeln!(
        out,
        "Command: `cargo bench --bench schedule{}`. Written {}. {}\n",
        support::command_options(),
        hub_state::format_rfc3339(std::time::SystemTime::now()),
        support::machine()
    );
    out.push_str(
        "| shape | N | depth | width | -j | runs | bound | target | floor | hub -n | ×CP | over floor | -n | hub, state | ×CP | over floor | state |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|:-:|---:|---:|---:|:-:|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} | {} | {:.2} s | {:.2} s | {:.3} s | {:.3} s | {:.2} | {:+.0} ms | {} | {:.3} s | {:.2} | {:+.0} ms | {} |",
            row.shape,
            row.size,
            row.critical,
            row.width,
            row.workers.label(),
            row.runs,
            row.bound,
            row.target,
            row.floor.as_secs_f64(),
            row.stateless.as_secs_f64(),
            row.ratio(row.stateless),
            row.over_floor(row.stateless),
            row.verdict(row.stateless),
            row.with_state.as_secs_f64(),
            row.ratio(row.with_state),
            row.over_floor(row.with_state),
            row.verdict(row.with_state),
        );
    }
    if !skipped.is_empty() {
        out.push_str("\nSkipped (they add nothing):\n\n");
        for line in skipped {
            let _ = writeln!(out, "- {line}");
        }
    }
    out
}
