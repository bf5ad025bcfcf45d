//! `hub deploy` on generated stacks of 100 and 1000 no-op components, next
//! to the time it takes to spawn the same scripts directly, measured in the
//! same run. The difference, per component, is hub's overhead: parameter
//! expansion, environment, discovery, output capture, fingerprints, two
//! journal records (the "deploying" checkpoint, flushed with `fdatasync`
//! before the component starts, and the result) and the log file; the
//! state is folded at the run's first and last write.
//!
//! Run with `cargo bench --bench deploy`. Options (after `--`):
//! `--sizes 100,1000`, `--runs N` (timed runs per size, default 3) and
//! `--write FILE` (default `benches/DEPLOY_RESULTS.md`; `-` prints only).
//! Whatever follows the line [`support::HISTORY`] in the file written is kept: the
//! hand-written record of earlier figures.
//!
//! Each component declares two parameters (one from the stack, one its
//! own) exported to its environment, and prints one line. Every run also
//! deploys with `-n` (no state), which separates the engine's own cost from
//! the state writes. The target is ≤ 1 ms of overhead per component.

mod stacks;
mod support;
#[path = "support/measure.rs"]
mod timing;

use timing::{measure, median, Measure};

use stacks::write_stack;

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// One `hub deploy` of the whole stack, from an empty state, or with no
/// state at all (`-n`).
fn time_hub(root: &Path, with_state: bool) -> Measure {
    set_aside_previous_run(root);
    let state: &[&str] = if with_state {
        &["-s", "hub.yaml.state"]
    } else {
        &["-n"]
    };
    measure(|| {
        let status = Command::new(env!("CARGO_BIN_EXE_hub"))
            .current_dir(root)
            .args(["deploy", "hub.yaml.elaborate"])
            .args(state)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .expect("run hub");
        assert!(status.success(), "hub deploy failed in {}", root.display());
    })
}

/// Moves the files a previous run wrote into `trash/N/` instead of deleting
/// them: ext4 skips the inodes freed in the last minute or more when it
/// allocates new ones, so deleting a thousand log files just before a run
/// makes that run's file creations slower, a cost of the benchmark's
/// cleaning rather than of hub. The temporary folder goes at the end.
fn set_aside_previous_run(root: &Path) {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let trash = root.join("trash").join(run.to_string());
    std::fs::create_dir_all(&trash).expect("trash folder");
    for leftover in [
        "hub.yaml.state",
        "hub.yaml.state.backup",
        "hub.yaml.state.journal",
        "hub.yaml.state.fingerprints",
        "hub.yaml.state.logs",
    ] {
        let _ = std::fs::rename(root.join(leftover), trash.join(leftover));
    }
}

/// Creating `size` empty files in a new folder, in the same run: what the
/// file system charges for the log files a first deploy creates at that
/// moment. On ext4 without a journal (this machine's) every new inode is
/// checked against the ones freed in the last 30 seconds, so this floor
/// moves with what was deleted just before, and hub's figure with it.
fn time_file_creation(root: &Path, size: usize) -> Duration {
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let folder = root.join("files").join(run.to_string());
    std::fs::create_dir_all(&folder).expect("files folder");
    let started = std::time::Instant::now();
    for i in 0..size {
        std::fs::File::create(folder.join(format!("c{i}.log"))).expect("create a file");
    }
    started.elapsed()
}

/// Files this bench deleted less than [`SETTLE`] ago slow down file
/// creation (see [`time_file_creation`]); a run started right after the
/// previous one waits until they are that old.
const SETTLE: Duration = Duration::from_secs(35);

fn cleaned_marker() -> std::path::PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("deploy-bench-cleaned")
}

fn wait_for_previous_cleanup() {
    let Some(age) = std::fs::metadata(cleaned_marker())
        .and_then(|m| m.modified())
        .ok()
        .and_then(|at| at.elapsed().ok())
    else {
        return;
    };
    if let Some(wait) = SETTLE.checked_sub(age) {
        println!(
            "waiting {:.0} s: the previous run's deleted files slow down file creation until then",
            wait.as_secs_f64()
        );
        std::thread::sleep(wait);
    }
}

/// The same scripts spawned one after the other, in their folders, with
/// their output read through a pipe as hub does.
fn time_direct(root: &Path, size: usize) -> Measure {
    measure(|| {
        for i in 0..size {
            let dir = root.join(format!("c/c{i}"));
            let out = Command::new(dir.join("deploy.sh"))
                .current_dir(&dir)
                .env("ID", format!("c{i}"))
                .env("DOMAIN", "bench.example.com")
                .stdin(Stdio::null())
                .output()
                .expect("run script");
            assert!(out.status.success());
        }
    })
}

struct Row {
    size: usize,
    hub: Measure,
    stateless: Measure,
    direct: Measure,
    files: Duration,
}

impl Row {
    /// Milliseconds per component above the scripts alone.
    fn per_component(&self, total: Duration, alone: Duration) -> f64 {
        (total.as_secs_f64() - alone.as_secs_f64()) * 1000.0 / self.size as f64
    }

    fn wall(&self, hub: Measure) -> f64 {
        self.per_component(hub.wall, self.direct.wall)
    }

    fn cpu(&self, hub: Measure) -> f64 {
        self.per_component(hub.cpu, self.direct.cpu)
    }
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn main() {
    let mut sizes = vec![100, 1000];
    let mut runs = 3;
    let mut write = Some("benches/DEPLOY_RESULTS.md".to_string());
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
            "--runs" => runs = args.next().and_then(|n| n.parse().ok()).unwrap_or(runs),
            "--write" => write = args.next().filter(|w| w != "-"),
            _ => {}
        }
    }
    wait_for_previous_cleanup();
    let mut rows = Vec::new();
    // Every size's folder stays until all are measured: deleting one
    // frees its inodes just before the next size's files are created.
    let mut folders = Vec::new();
    for &size in &sizes {
        let dir = tempfile::tempdir().expect("temporary folder");
        write_stack(dir.path(), size);
        let (mut hub, mut stateless, mut direct) = (Vec::new(), Vec::new(), Vec::new());
        let mut files = Vec::new();
        for _ in 0..runs.max(1) {
            direct.push(time_direct(dir.path(), size));
            files.push(time_file_creation(dir.path(), size));
            stateless.push(time_hub(dir.path(), false));
            hub.push(time_hub(dir.path(), true));
        }
        let row = Row {
            size,
            hub: median(hub),
            stateless: median(stateless),
            direct: median(direct),
            files: {
                files.sort();
                files[files.len() / 2]
            },
        };
        println!(
            "deploy {:>5} components: wall hub {:.0} ms, hub -n {:.0} ms, scripts {:.0} ms; per component: {:.2} ms wall / {:.2} ms CPU with state, {:.2} ms wall / {:.2} ms CPU without; creating a file {:.3} ms",
            row.size,
            ms(row.hub.wall),
            ms(row.stateless.wall),
            ms(row.direct.wall),
            row.wall(row.hub),
            row.cpu(row.hub),
            row.wall(row.stateless),
            row.cpu(row.stateless),
            ms(row.files) / row.size as f64,
        );
        rows.push(row);
        folders.push(dir);
    }
    drop(folders);
    let _ = std::fs::write(cleaned_marker(), "");
    if let Some(path) = write {
        support::write_results(&path, report(&rows, runs));
    }
}

fn report(rows: &[Row], runs: usize) -> String {
    let mut out = String::from(
        "# `hub deploy` overhead\n\nGenerated by `cargo bench --bench deploy` (release build). Each stack has N no-op \
         shell components; each gets one stack parameter and one of its own in its environment and prints one \
         line. \"Scripts alone\" spawns the same scripts one after the other in the same run. Overhead per \
         component = (hub − scripts alone) / N, in wall-clock time and in CPU time (user + system of hub and \
         everything it ran, which other load on the machine does not inflate), with the state and without it \
         (`-n`). With a state, every component costs two journal records (the \"deploying\" checkpoint, \
         flushed before the component starts, and the result) and a log file. \"Creating a file\" is the time to \
         create one empty file in a new folder, measured in the same run: on this machine's file system (ext4 \
         without a journal) it varies from run to run, most after many files were deleted shortly before (the \
         bench waits 35 s after its own previous run). Hub creates the log files on a thread of its own ahead of \
         the components, so that cost shows in its CPU time more than in its wall time. Target: ≤ 1 ms per \
         component.\n\n",
    );
    let _ = writeln!(
        out,
        "Command: `cargo bench --bench deploy{}`. Written {}. Median of {runs} runs (by wall time). {}\n",
        support::command_options(),
        hub_state::format_rfc3339(std::time::SystemTime::now()),
        support::machine()
    );
    out.push_str(
        "| components | hub deploy | hub deploy -n | scripts alone | overhead, state (wall / CPU) | overhead, -n (wall / CPU) | creating a file |\n|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        let _ = writeln!(
            out,
            "| {} | {:.0} ms | {:.0} ms | {:.0} ms | {:.2} / {:.2} ms | {:.2} / {:.2} ms | {:.3} ms |",
            row.size,
            ms(row.hub.wall),
            ms(row.stateless.wall),
            ms(row.direct.wall),
            row.wall(row.hub),
            row.cpu(row.hub),
            row.wall(row.stateless),
            row.cpu(row.stateless),
            ms(row.files) / row.size as f64,
        );
    }
    out
}
