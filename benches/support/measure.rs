//! Wall-clock and CPU time of what a benchmark runs, for the benchmarks
//! that time child processes.

use std::time::{Duration, Instant};

/// Wall-clock time and CPU time (user + system, of the processes run
/// and everything they ran) of one measurement. CPU time is what the
/// machine's other load does not change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Measure {
    pub wall: Duration,
    pub cpu: Duration,
}

/// CPU time of the children waited for so far.
pub fn children_cpu() -> Duration {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    };
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32) * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Times `run`, which waits for the processes it starts.
pub fn measure(run: impl FnOnce()) -> Measure {
    let cpu = children_cpu();
    let started = Instant::now();
    run();
    Measure {
        wall: started.elapsed(),
        cpu: children_cpu() - cpu,
    }
}

/// The run with the median wall-clock time.
pub fn median(mut values: Vec<Measure>) -> Measure {
    values.sort();
    values[values.len() / 2]
}
