//! A no-op `hub deploy --changed` over 100 components that each carry one
//! large file (a Terraform component's `.terraform/` is hundreds of
//! megabytes), with the fingerprint cache cold (`STATE.fingerprints`
//! deleted: every file is read) and warm (no file is read), next to two
//! floors measured in the same run: the same `--changed` deploy when the
//! files are empty (what the run costs whatever the file sizes), and an
//! `lstat` of the 100 files (what checking them costs at the least).
//!
//! Run with `cargo bench --bench fingerprint`. Options (after `--`):
//! `--size-mb N` (each file's size, default 300), `--components N`
//! (default 100), `--runs N` (warm runs, the median is shown; default 5).
//!
//! The large files are sparse (`set_len` on an empty file): they read as
//! zeros at the file system's speed and take no disk space, so 100 × 300 MB
//! fits on any machine. Reading them still costs what hashing 30 GB costs,
//! which is what the cache saves. The files are dated an hour back, as a
//! checkout's are long before a deploy (a file changed in the tick a run
//! starts is not cached: see `crates/hub-plan/src/decide/digest_cache.rs`).

#[path = "support/measure.rs"]
mod timing;

use std::fmt::Write as _;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime};
use timing::{measure, median, Measure};

struct Options {
    size_mb: u64,
    components: usize,
    runs: usize,
}

fn options() -> Options {
    let mut options = Options {
        size_mb: 300,
        components: 100,
        runs: 5,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |i: usize| -> u64 {
        args.get(i + 1)
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("{} needs a number", args[i]))
    };
    for (i, arg) in args.iter().enumerate() {
        match arg.as_str() {
            "--size-mb" => options.size_mb = value(i),
            "--components" => options.components = value(i) as usize,
            "--runs" => options.runs = value(i).max(1) as usize,
            _ => {}
        }
    }
    options
}

/// The elaborated stack, and each component's folder with a no-op script
/// and `data.bin` of `size` bytes (sparse).
fn write_stack(root: &Path, components: usize, size: u64) {
    let mut text = String::from("version: 1\nkind: stack\nmeta: {name: bench}\ncomponents:\n");
    for i in 0..components {
        let _ = writeln!(text, "- {{name: c{i}, source: {{dir: c/c{i}}}}}");
    }
    text.push_str("lifecycle:\n  verbs: [deploy, undeploy]\n  order:\n");
    for i in 0..components {
        let _ = writeln!(text, "  - c{i}");
    }
    text.push_str("parameters:\n- {name: dns.domain, value: bench.example.com}\n");
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    for i in 0..components {
        let _ = write!(
            text,
            "---\nversion: 1\nkind: component\nmeta: {{name: c{i}, kind: c{i}}}\nparameters:\n- {{name: dns.domain, env: DOMAIN}}\n"
        );
        let dir = root.join(format!("c/c{i}"));
        std::fs::create_dir_all(&dir).expect("component folder");
        for verb in ["deploy", "undeploy"] {
            let script = dir.join(format!("{verb}.sh"));
            std::fs::write(&script, "#!/bin/sh\n").expect("script");
            std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                .expect("chmod");
            age(&script, an_hour_ago);
        }
        let data = std::fs::File::create(dir.join("data.bin")).expect("data");
        data.set_len(size).expect("sparse file");
        data.set_modified(an_hour_ago).expect("mtime");
    }
    std::fs::write(root.join("hub.yaml.elaborate"), text).expect("elaborate");
}

fn age(path: &Path, time: SystemTime) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    file.set_modified(time).expect("mtime");
}

fn hub_deploy(root: &Path, extra: &[&str]) -> Measure {
    let mut out = None;
    let measure = measure(|| {
        out = Some(
            Command::new(env!("CARGO_BIN_EXE_hub"))
                .current_dir(root)
                .args(["deploy", "hub.yaml.elaborate", "-s", "hub.yaml.state"])
                .args(extra)
                .stdin(Stdio::null())
                .output()
                .expect("run hub"),
        );
    });
    let out = out.expect("hub ran");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "hub deploy {extra:?} failed in {}:\n{stderr}",
        root.display()
    );
    if extra.contains(&"--changed") {
        assert!(
            !stderr
                .lines()
                .any(|l| !l.starts_with("stack") && l.split_whitespace().nth(1) == Some("deployed")),
            "a no-op --changed deploy ran a component:\n{stderr}"
        );
    }
    measure
}

fn remove_cache(root: &Path) {
    let _ = std::fs::remove_file(root.join("hub.yaml.state.fingerprints"));
}

/// A first deploy, then a cold and `runs` warm no-op `--changed` deploys.
fn cold_and_warm(root: &Path, runs: usize) -> (Measure, Measure) {
    hub_deploy(root, &[]);
    remove_cache(root);
    let cold = hub_deploy(root, &["--changed"]);
    let warm = median(
        (0..runs)
            .map(|_| hub_deploy(root, &["--changed"]))
            .collect(),
    );
    (cold, warm)
}

fn lstat_floor(root: &Path, components: usize) -> Duration {
    let started = Instant::now();
    for i in 0..components {
        std::fs::symlink_metadata(root.join(format!("c/c{i}/data.bin"))).expect("lstat");
    }
    started.elapsed()
}

fn seconds(d: Duration) -> String {
    match d.as_secs_f64() {
        s if s >= 0.01 => format!("{s:.3} s"),
        s => format!("{:.1} µs", s * 1e6),
    }
}

fn main() {
    let options = options();
    let size = options.size_mb << 20;
    let large = tempfile::tempdir().expect("tmp");
    write_stack(large.path(), options.components, size);
    let empty = tempfile::tempdir().expect("tmp");
    write_stack(empty.path(), options.components, 0);

    println!(
        "{} components, one sparse file of {} MB each ({:.1} GiB read by a cold run)",
        options.components,
        options.size_mb,
        (options.components as u64 * options.size_mb) as f64 / 1024.0
    );
    let (cold, warm) = cold_and_warm(large.path(), options.runs);
    let (_, floor) = cold_and_warm(empty.path(), options.runs);
    let lstat = lstat_floor(large.path(), options.components);

    let ratio = |a: Duration, b: Duration| a.as_secs_f64() / b.as_secs_f64().max(1e-9);
    println!("| run | wall | CPU |");
    println!("|---|---|---|");
    println!(
        "| cold cache (every file read) | {} | {} |",
        seconds(cold.wall),
        seconds(cold.cpu)
    );
    println!(
        "| warm cache (median of {}) | {} | {} |",
        options.runs,
        seconds(warm.wall),
        seconds(warm.cpu)
    );
    println!(
        "| floor: the same with empty files (median of {}) | {} | {} |",
        options.runs,
        seconds(floor.wall),
        seconds(floor.cpu)
    );
    println!(
        "| floor: lstat of the {} files | {} | — |",
        options.components,
        seconds(lstat)
    );
    println!(
        "cold / warm: {:.1}×; warm / empty-file floor: {:.2}×; warm {} the 1 s goal",
        ratio(cold.wall, warm.wall),
        ratio(warm.wall, floor.wall),
        if warm.wall <= Duration::from_secs(1) {
            "meets"
        } else {
            "misses"
        }
    );
}
