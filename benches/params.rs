//! Locking generated stack parameters: reference chains (declared in
//! both directions) and CEL expressions, at 10,000, 100,000 and 200,000
//! parameters.
//!
//! `cargo bench --bench params` prints a markdown table and writes it to
//! `benches/PARAMS_RESULTS.md`. Each size is locked three times; the best
//! time counts.

use hub::diag::Warnings;
use hub::manifest::{Manifest, Parameter};
use hub::params::{lock, LockOptions};
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

fn best_of_three(count: usize) -> Duration {
    let manifest = stack(count);
    let overrides = IndexMap::new();
    let environment = |_: &str| None;
    (0..3)
        .map(|_| {
            let mut options = LockOptions::new(&overrides, &environment);
            options.deployment_id = Some("00000000-0000-4000-8000-000000000000".into());
            let mut warnings = Warnings::default();
            let started = Instant::now();
            let locked =
                lock(&manifest, options, &mut warnings).expect("generated parameters lock");
            let elapsed = started.elapsed();
            assert_eq!(locked.params.len(), count + 2);
            assert_eq!(
                locked.value(&format!("p{}", count - 8)),
                Some(&Value::String(format!("v{}", count - 20)))
            );
            elapsed
        })
        .min()
        .unwrap_or_default()
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

fn main() {
    // `HUB_BENCH_SIZES=10000,30000` measures other sizes.
    let sizes: Vec<usize> = std::env::var("HUB_BENCH_SIZES")
        .ok()
        .map(|list| {
            list.split(',')
                .filter_map(|n| n.trim().parse().ok())
                .collect()
        })
        .filter(|list: &Vec<usize>| !list.is_empty())
        .unwrap_or_else(|| vec![10_000, 100_000, 200_000]);
    let times: Vec<Duration> = sizes.iter().map(|&n| best_of_three(n)).collect();
    let mut table = String::from(
        "| parameters | CEL expressions | lock time | per parameter | growth from the previous row |\n|---:|---:|---:|---:|---:|\n",
    );
    for (i, (&n, time)) in sizes.iter().zip(&times).enumerate() {
        let n = n.max(1);
        let growth = if i == 0 {
            "—".to_string()
        } else {
            format!(
                "×{:.1} for ×{:.0} parameters",
                time.as_secs_f64() / times[i - 1].as_secs_f64(),
                n as f64 / sizes[i - 1] as f64
            )
        };
        table.push_str(&format!(
            "| {n} | {} | {:.3} s | {:.2} µs | {growth} |\n",
            n / 20 * 3,
            time.as_secs_f64(),
            time.as_secs_f64() * 1e6 / n as f64
        ));
    }
    print!("{table}");
    let report = format!(
        "# Parameter locking benchmark\n\n`cargo bench --bench params` (release build, best of three runs) on {}.\n\
         Per block of 20 parameters: 1 literal, 12 references down a chain, 4 references to a\n\
         parameter declared later, 2 CEL expressions and 1 value mixing `${{}}` and `#{{}}`.\n\n{table}",
        machine()
    );
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/PARAMS_RESULTS.md");
    if let Err(error) = std::fs::write(&path, report) {
        eprintln!("cannot write {}: {error}", path.display());
    }
}
