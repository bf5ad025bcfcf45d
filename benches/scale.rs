//! How every command that walks the stack grows with it: `hub elaborate`,
//! `hub plan` (without and with a state), `hub params` (every stack
//! parameter locked and printed), `hub deploy -j 8` from an empty
//! state, and a no-op `hub deploy --changed -j 8`, on generated stacks of
//! 100, 1,000 and 10,000 components, next to a floor measured in the same
//! run (spawning the same scripts, eight at a time, without hub).
//!
//! Run with `cargo bench --bench scale`. Options (after `--`):
//! `--sizes 100,1000,10000` (default `100,1000`), `--shapes layered,chain,real,real-roots`
//! (default all four), `--timeout SECONDS` (per command, default 300: a
//! command that takes longer is stopped and reported as such) and
//! `--write FILE` (default `benches/SCALE_RESULTS.md`; `-` prints only),
//! `--random N` (also N random shapes, seeds 1 to N, `random:SEED` in
//! `--shapes` for one: see `random/mod.rs`; the report ends with each
//! command's worst growth over them and the seed that gave it),
//! `--runs N` (default 3: each command, and the floor, is run N times and
//! its median time kept, with the largest peak; `deploy -j 8` starts from
//! an empty state each time) and `--keep DIR` (the stacks are written to `DIR/SHAPE-SIZE` and left
//! there, with the state the commands wrote, to run hub on by hand).
//!
//! Shapes: `layered` is layers of ten, each component depending on two of
//! the layer before; `chain` has each component depend on the one before.
//! Every component has 20 parameters (one from the stack, 18 of its own
//! that read it, one that reads an output of a component it depends on)
//! and prints one output. `real` and `real-roots` have the shape of real
//! stacks: `layered` with a written `lifecycle.order`, every component's
//! 20 parameters overridden in `params.yaml` (20 stack parameters per
//! component), two `kind: user` parameters each (lifted to the stack),
//! a parameter reading an output and one reading another component's
//! parameter through `${...}`; in `real-roots` the first layer says
//! `depends: []`, in `real` it declares no `depends`. `real-roots` is the
//! deep layered shape of issue 44 (ten per layer, two upstreams each, roots
//! `depends: []`, a written order, 20 parameters each overridden, `${}`
//! references to upstream outputs): at 10,000 components most of a
//! component's ancestry is the stack. The growth factor of a command is its time at
//! 10× the components divided by its time at the smaller size: 10 is
//! linear, the target is ≤ 12.

mod random;
mod support;

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const JOBS: &str = "8";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Layered,
    Chain,
    Real,
    RealRoots,
    /// A random DAG drawn from a seed (see [`random::Spec`]).
    Random(u64),
}

impl Shape {
    fn name(self) -> String {
        match self {
            Shape::Layered => "layered".into(),
            Shape::Chain => "chain".into(),
            Shape::Real => "real".into(),
            Shape::RealRoots => "real-roots".into(),
            Shape::Random(seed) => format!("random:{seed}"),
        }
    }

    fn parse(name: &str) -> Shape {
        match name {
            "layered" => Shape::Layered,
            "chain" => Shape::Chain,
            "real" => Shape::Real,
            "real-roots" => Shape::RealRoots,
            other => match other.strip_prefix("random:").map(str::parse) {
                Some(Ok(seed)) => Shape::Random(seed),
                _ => panic!("unknown shape {other} (random shapes are `random:SEED`)"),
            },
        }
    }

    fn is_real(self) -> bool {
        matches!(self, Shape::Real | Shape::RealRoots)
    }

    /// The components each component depends on, at `size` components.
    fn graph(self, size: usize) -> Vec<Vec<usize>> {
        match self {
            Shape::Random(seed) => random::Spec::of(seed).graph(size),
            _ => (0..size).map(|i| self.depends(i)).collect(),
        }
    }

    /// The components `i` depends on (the named shapes).
    fn depends(self, i: usize) -> Vec<usize> {
        match self {
            Shape::Chain if i > 0 => vec![i - 1],
            Shape::Layered | Shape::Real | Shape::RealRoots if i >= 10 => {
                let base = (i / 10 - 1) * 10;
                vec![base + i % 10, base + (i + 1) % 10]
            }
            _ => Vec::new(),
        }
    }
}

/// Writes `hub.yaml`, `params.yaml` and the component folders.
fn write_stack(root: &Path, shape: Shape, size: usize) {
    let graph = shape.graph(size);
    let spec = match shape {
        Shape::Random(seed) => Some(random::Spec::of(seed)),
        _ => None,
    };
    let written_order = shape.is_real() || spec.is_some_and(|s| s.written_order);
    let empty_roots = shape == Shape::RealRoots || spec.is_some_and(|s| s.empty_roots);
    let mut stack = String::from("version: 1\nkind: stack\nmeta: {name: scale}\ncomponents:\n");
    for (i, depends) in graph.iter().enumerate() {
        let depends: Vec<String> = depends.iter().map(|d| format!("c{d}")).collect();
        let _ = write!(stack, "- {{name: c{i}, source: {{dir: c/c{i}}}");
        if !depends.is_empty() {
            let _ = write!(stack, ", depends: [{}]", depends.join(", "));
        } else if empty_roots {
            stack.push_str(", depends: []");
        }
        stack.push_str("}\n");
    }
    if written_order {
        stack.push_str("lifecycle:\n  order:\n");
        for i in 0..size {
            let _ = writeln!(stack, "  - c{i}");
        }
    }
    stack.push_str("parameters:\n- {name: dns.domain, value: scale.example.com}\n");
    std::fs::write(root.join("hub.yaml"), stack).expect("hub.yaml");
    let mut params = String::from("parameters:\n");
    for i in 0..size {
        let overridden = match spec {
            Some(spec) => spec.overridden(i),
            None if shape.is_real() => 20,
            None => 0,
        };
        for k in 0..overridden {
            let _ = writeln!(
                params,
                "- {{name: c{i}.p{k}, value: 'o{k}-${{dns.domain}}'}}"
            );
        }
    }
    if params == "parameters:\n" {
        params = "parameters: []\n".into();
    }
    std::fs::write(root.join("params.yaml"), params).expect("params.yaml");
    for (i, depends) in graph.iter().enumerate() {
        let dir = root.join(format!("c/c{i}"));
        std::fs::create_dir_all(&dir).expect("component folder");
        let manifest = match (spec, shape.is_real()) {
            (Some(spec), _) => spec.manifest(i, depends),
            (None, true) => real_manifest(shape, i),
            (None, false) => generated_manifest(shape, i),
        };
        std::fs::write(dir.join("hub-component.yaml"), manifest).expect("manifest");
        let script = format!("#!/bin/sh\necho\necho Outputs:\necho out = o{i}\n");
        for (name, text) in [
            ("deploy.sh", script.as_str()),
            ("undeploy.sh", "#!/bin/sh\n"),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, text).expect("script");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
}

/// One stack parameter read, 18 of its own reading it, one reading an
/// output of a component it depends on.
fn generated_manifest(shape: Shape, i: usize) -> String {
    let mut manifest = format!(
        "version: 1\nkind: component\nmeta: {{name: c{i}}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n"
    );
    for k in 0..18 {
        let _ = writeln!(
            manifest,
            "- {{name: c{i}.p{k}, value: 'v{k}-${{dns.domain}}', env: P{k}}}"
        );
    }
    if let Some(up) = shape.depends(i).first() {
        let _ = writeln!(
            manifest,
            "- {{name: c{i}.up, value: '${{c{up}.out}}', env: UP}}"
        );
    }
    let _ = write!(manifest, "outputs:\n- {{name: c{i}.out, fromTfVar: out}}\n");
    manifest
}

/// 20 parameters that `params.yaml` overrides, two `kind: user` ones, and
/// (past the first layer) one reading an output and one reading another
/// component's parameter.
fn real_manifest(shape: Shape, i: usize) -> String {
    let mut manifest = format!(
        "version: 1\nkind: component\nmeta: {{name: c{i}}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n"
    );
    for k in 0..20 {
        let _ = writeln!(manifest, "- {{name: c{i}.p{k}, value: 'v{k}', env: P{k}}}");
    }
    let _ = writeln!(
        manifest,
        "- {{name: c{i}.user, kind: user, value: 'u{i}', env: USERP}}\n- {{name: c{i}.user2, kind: user, value: 'w{i}'}}"
    );
    if let Some(up) = shape.depends(i).first() {
        let _ = writeln!(
            manifest,
            "- {{name: c{i}.up, value: '${{c{up}.out}}', env: UP}}\n- {{name: c{i}.peer, value: '${{c{up}.p3}}-x', env: PEER}}"
        );
    }
    let _ = write!(manifest, "outputs:\n- {{name: c{i}.out, fromTfVar: out}}\n");
    manifest
}

/// Wall time and peak memory of one command, or `None` when it was
/// stopped at the timeout.
#[derive(Debug, Clone, Copy)]
struct Measure {
    wall: Duration,
    peak_kib: i64,
}

/// Runs `hub ARGS` in `root`; panics when it fails.
fn time_hub(root: &Path, args: &[&str], timeout: Duration) -> Option<Measure> {
    let started = Instant::now();
    // Waited for below with `wait4`, which also gives its peak memory.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(env!("CARGO_BIN_EXE_hub"))
        .current_dir(root)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("run hub");
    let pid = child.id() as libc::pid_t;
    loop {
        let mut status = 0;
        // SAFETY: wait4 writes into the zeroed struct and the status it is
        // given, for a child this process spawned and has not waited for.
        let (done, usage) = unsafe {
            let mut usage: libc::rusage = std::mem::zeroed();
            let done = libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage);
            (done, usage)
        };
        if done == pid {
            assert!(
                libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
                "hub {} failed in {}",
                args.join(" "),
                root.display()
            );
            return Some(Measure {
                wall: started.elapsed(),
                peak_kib: usage.ru_maxrss,
            });
        }
        if started.elapsed() > timeout {
            // SAFETY: signalling and reaping the child spawned above.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The scripts alone, spawned eight at a time with their output read, as
/// `hub deploy -j 8` spawns them.
fn time_floor(root: &Path, size: usize) -> Duration {
    let started = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for _ in 0..8 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= size {
                    break;
                }
                let dir = root.join(format!("c/c{i}"));
                let out = Command::new(dir.join("deploy.sh"))
                    .current_dir(&dir)
                    .stdin(Stdio::null())
                    .output()
                    .expect("run script");
                assert!(out.status.success());
            });
        }
    });
    started.elapsed()
}

/// The commands measured, in the order they run on one stack.
const COMMANDS: &[(&str, &[&str])] = &[
    (
        "elaborate",
        &[
            "elaborate",
            "hub.yaml",
            "params.yaml",
            "-o",
            "hub.yaml.elaborate",
        ],
    ),
    ("plan (no state)", &["plan", "hub.yaml.elaborate", "-n"]),
    ("params", &["params", "hub.yaml.elaborate"]),
    (
        "deploy -j 8",
        &["deploy", "hub.yaml.elaborate", "-s", "st", "-j", JOBS],
    ),
    (
        "deploy --changed -j 8 (no-op)",
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-s",
            "st",
            "-j",
            JOBS,
            "--changed",
        ],
    ),
    (
        "plan (with state)",
        &["plan", "hub.yaml.elaborate", "-s", "st"],
    ),
];

/// What became of one command.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    Ran(Measure),
    TimedOut,
    /// An earlier command of the same stack timed out.
    NotRun,
}

impl Outcome {
    fn measure(self) -> Option<Measure> {
        match self {
            Outcome::Ran(measure) => Some(measure),
            _ => None,
        }
    }

    fn cell(self) -> String {
        match self {
            Outcome::Ran(m) => format!("{} ({} MB)", seconds(m.wall), m.peak_kib / 1024),
            Outcome::TimedOut => "timed out".to_string(),
            Outcome::NotRun => "not run".to_string(),
        }
    }
}

/// Per command, what became of it at each size.
struct Row {
    shape: Shape,
    size: usize,
    floor: Duration,
    /// The state a complete deploy wrote; `None` when none completed.
    state_bytes: Option<u64>,
    outcomes: Vec<Outcome>,
}

/// The median of `runs` measures of `measure` (the largest peak), or
/// `None` as soon as one is stopped at the timeout.
fn median_of(runs: usize, mut measure: impl FnMut() -> Option<Measure>) -> Option<Measure> {
    let mut measures = Vec::with_capacity(runs);
    for _ in 0..runs.max(1) {
        measures.push(measure()?);
    }
    let peak_kib = measures.iter().map(|m| m.peak_kib).max().unwrap_or(0);
    measures.sort_by_key(|m| m.wall);
    Some(Measure {
        wall: measures[measures.len() / 2].wall,
        peak_kib,
    })
}

/// Moves the state `deploy -j 8` writes (`st` and the files beside it)
/// to the trash, so that each of its runs starts from nothing.
fn remove_state(root: &Path, trash: &Trash) {
    for entry in std::fs::read_dir(root).expect("stack folder").flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name == "st" || name.starts_with("st.") {
            trash.discard(&entry.path());
        }
    }
}

/// What the benchmark is done with (the previous runs' states and logs,
/// the stacks of the shapes measured), deleted when it ends, not between
/// measures.
///
/// A file system may step over recently freed inodes when it creates a
/// file: ext4 without a journal does, for a minute after a deletion (six
/// while the inode's block is unwritten). On such a machine, 10,000 empty
/// files took 0.35 s of processor time to create, and 1.9–4.4 s when
/// 20,000 had been deleted in the seconds to a minute before. A deploy
/// creates a log per component, so deleting the previous run's state and
/// logs (or the previous shape's stack) just before it charged the run
/// for the benchmark's own cleaning: 12.2–12.4 s against 10.8–11.2 s for
/// `deploy -j 8` at 10,000 (`benches/SCALE_NOTES.md`). Moving them aside
/// is one rename each.
struct Trash {
    dir: tempfile::TempDir,
    moved: std::cell::Cell<usize>,
    stacks: std::cell::RefCell<Vec<tempfile::TempDir>>,
}

impl Trash {
    fn new() -> Trash {
        Trash {
            dir: tempfile::tempdir().expect("temporary folder for the trash"),
            moved: std::cell::Cell::new(0),
            stacks: std::cell::RefCell::new(Vec::new()),
        }
    }

    /// Moves `path` (a file or a folder) to the trash; deletes it when it
    /// cannot be moved there (another file system).
    fn discard(&self, path: &Path) {
        let n = self.moved.get() + 1;
        self.moved.set(n);
        if std::fs::rename(path, self.dir.path().join(n.to_string())).is_ok() {
            return;
        }
        let removed = match path.is_dir() {
            true => std::fs::remove_dir_all(path),
            false => std::fs::remove_file(path),
        };
        removed.expect("remove what the benchmark is done with");
    }

    /// Keeps the temporary folder of a stack until the benchmark ends.
    fn keep(&self, dir: tempfile::TempDir) {
        self.stacks.borrow_mut().push(dir);
    }
}

fn run_stack(
    shape: Shape,
    size: usize,
    timeout: Duration,
    runs: usize,
    (keep, trash): (Option<&Path>, &Trash),
) -> Row {
    let dir = tempfile::tempdir().expect("temporary folder");
    let kept = keep.map(|keep| keep.join(format!("{}-{size}", shape.name())));
    if let Some(kept) = &kept {
        if kept.exists() {
            trash.discard(kept);
        }
        std::fs::create_dir_all(kept).expect("folder to keep the stack in");
    }
    let root = kept.as_deref().unwrap_or(dir.path());
    write_stack(root, shape, size);
    let floor = median_of(runs, || {
        Some(Measure {
            wall: time_floor(root, size),
            peak_kib: 0,
        })
    })
    .map_or(Duration::ZERO, |m| m.wall);
    let mut outcomes = Vec::new();
    let mut stopped = false;
    let mut state_bytes = None;
    for (name, args) in COMMANDS {
        let outcome = match stopped {
            true => Outcome::NotRun,
            false => {
                let from_nothing = args[0] == "deploy" && !args.contains(&"--changed");
                median_of(runs, || {
                    if from_nothing {
                        remove_state(root, trash);
                    }
                    time_hub(root, args, timeout)
                })
                .map_or(Outcome::TimedOut, Outcome::Ran)
            }
        };
        eprintln!("{} {size} {name}: {}", shape.name(), outcome.cell());
        stopped |= outcome.measure().is_none();
        if args[0] == "deploy" && outcome.measure().is_some() && state_bytes.is_none() {
            state_bytes = std::fs::metadata(root.join("st")).ok().map(|m| m.len());
        }
        outcomes.push(outcome);
    }
    trash.keep(dir);
    Row {
        shape,
        size,
        floor,
        state_bytes,
        outcomes,
    }
}

fn seconds(d: Duration) -> String {
    format!("{:.3} s", d.as_secs_f64())
}

fn report(rows: &[Row], timeout: Duration) -> String {
    let mut out = String::from("# Scale: every command at 100, 1,000 and 10,000 components\n\n");
    let _ = writeln!(out, "{}\n", support::machine());
    let _ = writeln!(
        out,
        "`cargo bench --bench scale{}`; commands stopped after {} s. Floor: the same scripts \
         spawned eight at a time without hub. Each figure is the median of the runs (`--runs`, \
         default 3), with the largest peak memory of them. Growth: time at 10× the components \
         over time at the smaller size (10 is linear; the target is ≤ 12).\n",
        support::command_options(),
        timeout.as_secs()
    );
    out.push_str("| shape | components | floor | state file |");
    for (name, _) in COMMANDS {
        let _ = write!(out, " {name} |");
    }
    out.push_str("\n|---|---:|---:|---:|");
    out.push_str(&"---:|".repeat(COMMANDS.len()));
    out.push('\n');
    for row in rows {
        let state = row
            .state_bytes
            .map_or("—".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6));
        let _ = write!(
            out,
            "| {} | {} | {} | {state} |",
            row.shape.name(),
            row.size,
            seconds(row.floor),
        );
        for outcome in &row.outcomes {
            let _ = write!(out, " {} |", outcome.cell());
        }
        out.push('\n');
    }
    out.push_str("\nGrowth per ×10:\n\n| shape | from → to | floor |");
    for (name, _) in COMMANDS {
        let _ = write!(out, " {name} |");
    }
    out.push_str("\n|---|---|---:|");
    out.push_str(&"---:|".repeat(COMMANDS.len()));
    out.push('\n');
    for pair in rows.windows(2) {
        let (small, large) = (&pair[0], &pair[1]);
        if small.shape != large.shape || large.size != small.size * 10 {
            continue;
        }
        let ratio = |a: Duration, b: Duration| format!("{:.1}×", b.as_secs_f64() / a.as_secs_f64());
        let _ = write!(
            out,
            "| {} | {} → {} | {} |",
            small.shape.name(),
            small.size,
            large.size,
            ratio(small.floor, large.floor)
        );
        for (a, b) in small.outcomes.iter().zip(&large.outcomes) {
            let cell = match (a.measure(), b.measure()) {
                (Some(a), Some(b)) => ratio(a.wall, b.wall),
                _ => "—".to_string(),
            };
            let _ = write!(out, " {cell} |");
        }
        out.push('\n');
    }
    out.push_str(&worst_random(rows));
    out
}

/// Over the random shapes, each command's worst growth per ×10 and the
/// seed that gave it, with what that seed drew.
fn worst_random(rows: &[Row]) -> String {
    let mut worst: Vec<Option<(f64, u64)>> = vec![None; COMMANDS.len()];
    for pair in rows.windows(2) {
        let (small, large) = (&pair[0], &pair[1]);
        let Shape::Random(seed) = small.shape else {
            continue;
        };
        if small.shape != large.shape || large.size != small.size * 10 {
            continue;
        }
        for (k, (a, b)) in small.outcomes.iter().zip(&large.outcomes).enumerate() {
            let growth = match (a.measure(), b.measure()) {
                (Some(a), Some(b)) => b.wall.as_secs_f64() / a.wall.as_secs_f64(),
                // A command stopped at the timeout at the larger size is
                // the worst there is.
                (Some(_), None) => f64::INFINITY,
                _ => continue,
            };
            if worst[k].is_none_or(|(w, _)| growth > w) {
                worst[k] = Some((growth, seed));
            }
        }
    }
    if worst.iter().all(Option::is_none) {
        return String::new();
    }
    let mut out = String::from("\nRandom shapes, worst growth per ×10 of each command:\n\n| command | worst growth | seed | what the seed drew |\n|---|---:|---:|---|\n");
    for ((name, _), worst) in COMMANDS.iter().zip(worst) {
        let Some((growth, seed)) = worst else {
            continue;
        };
        let _ = writeln!(
            out,
            "| {name} | {growth:.1}× | {seed} | {} |",
            random::Spec::of(seed).describe()
        );
    }
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let option = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let sizes: Vec<usize> = option("--sizes")
        .unwrap_or_else(|| "100,1000".into())
        .split(',')
        .map(|s| s.parse().expect("--sizes takes numbers"))
        .collect();
    let shapes: Vec<Shape> = option("--shapes")
        .unwrap_or_else(|| "layered,chain,real,real-roots".into())
        .split(',')
        .map(Shape::parse)
        .collect();
    let timeout = Duration::from_secs(
        option("--timeout")
            .map(|s| s.parse().expect("--timeout takes seconds"))
            .unwrap_or(300),
    );
    let random: u64 = option("--random")
        .map(|s| s.parse().expect("--random takes a number of seeds"))
        .unwrap_or(0);
    let shapes: Vec<Shape> = shapes
        .into_iter()
        .chain((1..=random).map(Shape::Random))
        .collect();
    let keep = option("--keep").map(PathBuf::from);
    let runs: usize = option("--runs")
        .map(|s| s.parse().expect("--runs takes a number"))
        .unwrap_or(3);
    let mut rows = Vec::new();
    let trash = Trash::new();
    for &shape in &shapes {
        for &size in &sizes {
            let place = (keep.as_deref(), &trash);
            rows.push(run_stack(shape, size, timeout, runs, place));
        }
    }
    let text = report(&rows, timeout);
    print!("{text}");
    let path = option("--write").unwrap_or_else(|| "benches/SCALE_RESULTS.md".into());
    if path != "-" {
        support::write_results(&PathBuf::from(path).to_string_lossy(), text);
    }
}
