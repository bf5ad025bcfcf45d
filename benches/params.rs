//! Locking generated stack parameters: reference chains (declared in
//! both directions) and CEL expressions, at 10,000, 100,000 and 200,000
//! parameters.
//!
//! `cargo bench --bench params` prints a markdown table and writes it to
//! `benches/PARAMS_RESULTS.md` (above the hand-written part). Each size is
//! locked nine times (`--runs N`) with warm caches and nine times with
//! cold ones; medians count. `--sizes 100000` measures chosen sizes only
//! (for `valgrind --tool=callgrind --toggle-collect='hub_params::lock::lock*'`)
//! and writes nothing. For source lines in a profile, build the bench with
//! `cargo bench --profile profiling --bench params --no-run` (the release
//! build with line tables) and run the executable it names.

use hub_manifest::diag::Warnings;
use hub_manifest::{Manifest, Parameter};
use hub_params::{lock, LockOptions};
use indexmap::IndexMap;
use std::time::{Duration, Instant};
use yaml_serde::Value;

/// In every block of 20 parameters: 1 literal, 12 references down a chain,
/// 4 references to later parameters, 2 CEL expressions, 1 mix of both.
fn value_of(i: usize) -> String {
    let base = i - i % 20;
    match i % 20 {
        0 => format!("v{i}"),
        1..=12 => format!("${{p{}}}", i - 1),
        13..=16 => format!("${{p{}}}/{i}", base + 19),
        17 => format!("#{{size(p{}) > 0 ? p{} : 'none'}}", i - 1, base),
        18 => format!("#{{p{base} == 'v{base}' && int('{i}') > 0}}"),
        _ => format!("${{p{base}}}:#{{p{} == 'true'}}", base + 18),
    }
}

fn stack(count: usize) -> Manifest {
    Manifest {
        version: 1,
        kind: "stack".into(),
        parameters: (0..count)
            .map(|i| Parameter {
                name: format!("p{i}"),
                value: Some(Value::String(value_of(i))),
                ..Parameter::default()
            })
            .collect(),
        ..Manifest::default()
    }
}

/// What one size measured: every lock's wall time, sorted, and the page
/// faults (fresh memory taken from the kernel) of the fastest one.
struct Measured {
    times: Vec<Duration>,
    faults: Option<u64>,
}

impl Measured {
    fn median(&self) -> Duration {
        self.times[self.times.len() / 2]
    }
}

/// Minor page faults of this process so far (Linux; `None` elsewhere).
fn page_faults() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name may hold spaces; fields after it are plain.
    let rest = &stat[stat.rfind(')')? + 2..];
    rest.split(' ').nth(7)?.parse().ok()
}

/// Makes every size reuse the heap its previous run freed. By default
/// glibc maps blocks over 32 MiB afresh on every allocation, and so only
/// the largest sizes (the 64 MB locked map at 200,000 parameters) pay for
/// zeroed pages on every run while smaller ones reuse warm memory.
fn same_heap_for_every_size() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn mallopt(param: i32, value: i32) -> i32;
        }
        const M_TRIM_THRESHOLD: i32 = -1;
        const M_MMAP_MAX: i32 = -4;
        // SAFETY: glibc's own tuning call, made before any thread starts.
        unsafe {
            mallopt(M_MMAP_MAX, 0);
            mallopt(M_TRIM_THRESHOLD, i32::MAX);
        }
    }
}

/// Writes over `sweep` (twice the last-level cache) so that the next lock
/// finds nothing of the previous one there. One buffer serves every run,
/// so that sweeping leaves the heap as it was.
fn evict_caches(sweep: &mut [u8]) {
    for i in (0..sweep.len()).step_by(64) {
        sweep[i] = sweep[i].wrapping_add(1);
    }
    std::hint::black_box(sweep);
}

/// Locks a generated stack of `count` parameters `runs` times; only
/// `lock` itself is timed (generation and checks are not). With a `sweep`
/// buffer the caches are emptied before each run.
fn measure(count: usize, runs: usize, mut sweep: Option<&mut [u8]>) -> Measured {
    let manifest = stack(count);
    let overrides = IndexMap::new();
    let environment = |_: &str| None;
    let mut samples: Vec<(Duration, Option<u64>)> = (0..runs.max(1))
        .map(|_| {
            let mut options = LockOptions::new(&overrides, &environment);
            options.deployment_id = Some("00000000-0000-4000-8000-000000000000".into());
            let mut warnings = Warnings::default();
            if let Some(sweep) = sweep.as_deref_mut() {
                evict_caches(sweep);
            }
            let faults_before = page_faults();
            let started = Instant::now();
            let locked =
                lock(&manifest, options, &mut warnings).expect("generated parameters lock");
            let elapsed = started.elapsed();
            let faults = page_faults()
                .zip(faults_before)
                .map(|(after, before)| after - before);
            assert_eq!(locked.params.len(), count + 2);
            assert_eq!(
                locked.value(&format!("p{}", count - 8)),
                Some(&Value::String(format!("v{}", count - 20)))
            );
            (elapsed, faults)
        })
        .collect();
    samples.sort();
    Measured {
        faults: samples[0].1,
        times: samples.into_iter().map(|(t, _)| t).collect(),
    }
}

/// The CPU model and the number of cores, where the system says.
fn machine() -> String {
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "an unknown CPU".into());
    format!("{model}, {cores} cores")
}

/// The value of `--name VALUE` or `--name=VALUE` on the command line.
fn argument(name: &str) -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == name {
            return args.next();
        }
        if let Some(value) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            return Some(value.to_string());
        }
    }
    None
}

/// The table of one set of measurements.
fn table(sizes: &[usize], warm: &[Measured], cold: &[Measured]) -> String {
    let growth = |measured: &[Measured], i: usize| {
        if i == 0 {
            return "—".to_string();
        }
        format!(
            "×{:.1}",
            measured[i].median().as_secs_f64() / measured[i - 1].median().as_secs_f64()
        )
    };
    let mut table = String::from(
        "| parameters | CEL expressions | lock time (median) | per parameter | growth | with cold caches | growth | page faults |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for (i, &n) in sizes.iter().enumerate() {
        let faults = warm[i]
            .faults
            .map_or_else(|| "—".to_string(), |f| f.to_string());
        table.push_str(&format!(
            "| {n} | {} | {:.1} ms | {:.2} µs | {} | {:.1} ms | {} | {faults} |\n",
            n / 20 * 3,
            warm[i].median().as_secs_f64() * 1e3,
            warm[i].median().as_secs_f64() * 1e6 / n as f64,
            growth(warm, i),
            cold[i].median().as_secs_f64() * 1e3,
            growth(cold, i),
        ));
    }
    table
}

/// Everything after this line of the results file is kept as it is.
const KEPT: &str = "<!-- Written by hand from here on; the benchmark keeps it. -->";

fn main() {
    // `--sizes 10000,30000` (or `HUB_BENCH_SIZES`) measures other sizes and
    // leaves the results file alone; `--runs N` locks each size N times;
    // `--default-malloc` leaves glibc's allocator as it is.
    let chosen = argument("--sizes").or_else(|| std::env::var("HUB_BENCH_SIZES").ok());
    let sizes: Vec<usize> = chosen
        .as_deref()
        .map(|list| {
            list.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .filter(|&n| n >= 20)
                .collect()
        })
        .filter(|list: &Vec<usize>| !list.is_empty())
        .unwrap_or_else(|| vec![10_000, 100_000, 200_000]);
    let runs: usize = argument("--runs").and_then(|n| n.parse().ok()).unwrap_or(9);
    let default_malloc = std::env::args().any(|a| a == "--default-malloc");
    if !default_malloc {
        same_heap_for_every_size();
    }
    let mut sweep = vec![0u8; 64 << 20];
    let warm: Vec<Measured> = sizes.iter().map(|&n| measure(n, runs, None)).collect();
    let cold: Vec<Measured> = sizes
        .iter()
        .map(|&n| measure(n, runs, Some(&mut sweep)))
        .collect();
    let table = table(&sizes, &warm, &cold);
    print!("{table}");
    if chosen.is_some() || default_malloc {
        return;
    }
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/PARAMS_RESULTS.md");
    let kept = std::fs::read_to_string(&path)
        .ok()
        .and_then(|text| text.find(KEPT).map(|at| text[at..].to_string()))
        .unwrap_or_else(|| KEPT.to_string() + "\n");
    let report = format!(
        "# Parameter locking benchmark\n\n`cargo bench --bench params` (release build) on {}.\n\
         Per block of 20 parameters: 1 literal, 12 references down a chain, 4 references to a\n\
         parameter declared later, 2 CEL expressions and 1 value mixing `${{}}` and `#{{}}`.\n\
         Only `lock` is timed, not generating the stack; each size is locked {runs} times and the\n\
         median counts. *With cold caches* writes 64 MiB before each run, so that no size finds\n\
         the previous run's data in the 32 MiB L3. *Page faults* are those of the fastest run.\n\n\
         {table}\n{kept}",
        machine()
    );
    if let Err(error) = std::fs::write(&path, report) {
        eprintln!("cannot write {}: {error}", path.display());
    }
}
