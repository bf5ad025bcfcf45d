//! The memory budget of a Rego evaluation.
//!
//! regorus meters memory only through an allocator of its own, which the
//! `hub` binary does not use (it has `mimalloc`), and a thread cannot be
//! stopped from outside. So while Rego modules are evaluated, a second
//! thread reads the process's resident size every few milliseconds; when it
//! has grown by more than the memory budget (`HUB_CEL_MAX_MEMORY`) since
//! the evaluation began, the command stops there, saying which module ran
//! over it: a module from a pull request cannot take the runner's memory.
//! Nothing has run yet (policies are evaluated before anything runs), and
//! an exit is the one way to stop an evaluation that will not return. Where
//! the resident size cannot be read (no `/proc/self/status`), there is no
//! watch, only the time budget.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// How often the resident size is read.
const PERIOD: Duration = Duration::from_millis(5);

/// What the watch says when it stops the command: the module evaluated.
#[derive(Default)]
pub(crate) struct Current(Mutex<String>);

impl Current {
    /// The module now evaluated, as the error names it.
    pub(crate) fn set(&self, what: String) {
        if let Ok(mut current) = self.0.lock() {
            *current = what;
        }
    }

    fn get(&self) -> String {
        self.0.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

/// Runs `evaluate` while the resident size stays within `limit` bytes of
/// what it was when it started; past it, the command stops with exit
/// status 1 and an error naming what `evaluate` last gave to [`Current`].
pub(crate) fn within_memory<T>(
    limit: u64,
    variable: &str,
    evaluate: impl FnOnce(&Current) -> T,
) -> T {
    let Some(baseline) = resident_bytes() else {
        return evaluate(&Current::default());
    };
    let current = Current::default();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !done.load(Ordering::Relaxed) {
                std::thread::sleep(PERIOD);
                let grown = resident_bytes().map_or(0, |now| now.saturating_sub(baseline));
                if grown > limit && !done.load(Ordering::Relaxed) {
                    stop(&current.get(), limit, variable);
                }
            }
        });
        let result = evaluate(&current);
        done.store(true, Ordering::Relaxed);
        result
    })
}

/// Says why and stops the command.
fn stop(what: &str, limit: u64, variable: &str) -> ! {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "error: {what} ran over its budget of {} MB of memory ({variable}); nothing was run\n  help: a module may hold and build at most that much: loop over fewer or smaller lists",
        limit >> 20
    );
    std::process::exit(1)
}

/// The process's resident size (`VmRSS` of `/proc/self/status`).
pub(crate) fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kilobytes: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kilobytes * 1024)
}
