//! What the benchmarks that write a results file share: the file's kept
//! history, the command line and the machine they ran on.

/// The line after which a results file is kept as it is: the
/// hand-written record of earlier figures.
pub const HISTORY: &str = "<!-- history: kept when the bench rewrites this file -->";

/// Writes `report` to `path`, followed by what came after [`HISTORY`] in
/// the file already there.
pub fn write_results(path: &str, report: String) {
    let kept = std::fs::read_to_string(path)
        .ok()
        .and_then(|old| old.find(HISTORY).map(|at| old[at..].to_string()));
    let mut text = report;
    if let Some(kept) = kept {
        text.push('\n');
        text.push_str(&kept);
    }
    std::fs::write(path, text).expect("write results");
    println!("written to {path}");
}

/// The options the bench was run with, as typed after `--`.
pub fn command_options() -> String {
    let options: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if options.is_empty() {
        String::new()
    } else {
        format!(" -- {}", options.join(" "))
    }
}

/// The CPU count and the load when the report is written: wall-clock
/// figures depend on what else the machine is doing.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let load = std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(String::from))
        .unwrap_or_else(|| "unknown".into());
    format!("Machine: {cpus} CPUs, load average {load} when the report was written.")
}
