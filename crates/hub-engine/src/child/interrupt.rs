//! SIGINT and SIGTERM while components run.
//!
//! Once [`Interrupts::install`] has run, these signals no longer end hub:
//! they are counted here, and whoever runs a component looks at the count.
//! The process runner ([`crate::child::process::run`]) forwards the first signal
//! to the running component's process group, kills the group when the grace
//! period is over, and kills it at once on a second signal. The engine
//! checks [`Interrupts::requested`] between components and stops.
//!
//! Components run in their own process group, so a Ctrl-C typed in the
//! terminal reaches hub alone, and hub decides what the component gets.

use std::sync::atomic::{AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The default time a component has between the forwarded signal and the
/// kill.
pub const DEFAULT_GRACE: Duration = Duration::from_secs(30);

/// Counts the interrupt signals hub received.
#[derive(Debug)]
pub struct Interrupts {
    count: AtomicUsize,
    /// The last signal number, 0 before the first.
    last: AtomicI32,
    grace_ms: AtomicU64,
    /// Wakes [`Interrupts::sleep`] when a signal arrives.
    wake: (Mutex<()>, Condvar),
}

/// The watcher the signal handlers feed, once installed: process-wide
/// because signals are delivered to the process.
static INSTALLED: Mutex<Option<Arc<Interrupts>>> = Mutex::new(None);

impl Interrupts {
    fn new(grace: Duration) -> Self {
        Interrupts {
            count: AtomicUsize::new(0),
            last: AtomicI32::new(0),
            grace_ms: AtomicU64::new(duration_ms(grace)),
            wake: (Mutex::new(()), Condvar::new()),
        }
    }

    /// Installs handlers for SIGINT and SIGTERM (a thread named
    /// `hub-signals` receives them) and returns the process-wide watcher.
    /// Calling it again returns the same watcher with its grace period
    /// set to `grace`.
    pub fn install(grace: Duration) -> std::io::Result<Arc<Interrupts>> {
        let mut installed = INSTALLED.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(existing) = installed.as_ref() {
            existing
                .grace_ms
                .store(duration_ms(grace), Ordering::SeqCst);
            return Ok(Arc::clone(existing));
        }
        let watcher = Arc::new(Interrupts::new(grace));
        let mut signals = signal_hook::iterator::Signals::new([libc::SIGINT, libc::SIGTERM])?;
        let fed = Arc::clone(&watcher);
        std::thread::Builder::new()
            .name("hub-signals".into())
            .spawn(move || {
                for signal in signals.forever() {
                    fed.trigger(signal);
                }
            })?;
        *installed = Some(Arc::clone(&watcher));
        Ok(watcher)
    }

    /// A watcher without signal handlers, for work that starts nothing a
    /// signal would have to reach (`hub plan`); in tests,
    /// [`Interrupts::trigger`] stands in for a signal. The grace period is
    /// one second.
    pub fn unwatched() -> Arc<Interrupts> {
        Arc::new(Interrupts::new(Duration::from_secs(1)))
    }

    /// [`Interrupts::unwatched`] with another grace period: for a test
    /// whose child must stop by itself, however slow the machine.
    #[cfg(test)]
    pub(crate) fn unwatched_with_grace(grace: Duration) -> Arc<Interrupts> {
        Arc::new(Interrupts::new(grace))
    }

    /// Records `signal` as received.
    pub fn trigger(&self, signal: i32) {
        self.last.store(signal, Ordering::SeqCst);
        self.count.fetch_add(1, Ordering::SeqCst);
        let _guard = self.wake.0.lock().unwrap_or_else(PoisonError::into_inner);
        self.wake.1.notify_all();
    }

    /// Whether a signal has been received.
    pub fn requested(&self) -> bool {
        self.count() > 0
    }

    /// How many signals have been received.
    pub fn count(&self) -> usize {
        self.count.load(Ordering::SeqCst)
    }

    /// The last signal received (`libc::SIGINT` or `libc::SIGTERM`).
    pub fn last_signal(&self) -> Option<i32> {
        match self.last.load(Ordering::SeqCst) {
            0 => None,
            signal => Some(signal),
        }
    }

    /// How long a component has between the forwarded signal and the kill.
    pub fn grace(&self) -> Duration {
        Duration::from_millis(self.grace_ms.load(Ordering::SeqCst))
    }

    /// Waits `duration`, returning early when a signal arrives (or has
    /// arrived). Returns whether hub has been interrupted; for waits that
    /// an interrupt must cut short (ready conditions, retries).
    pub fn sleep(&self, duration: Duration) -> bool {
        let deadline = Instant::now() + duration;
        let mut guard = self.wake.0.lock().unwrap_or_else(PoisonError::into_inner);
        while !self.requested() {
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            guard = match self.wake.1.wait_timeout(guard, deadline - now) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            };
        }
        self.requested()
    }
}

/// A human name for a signal number: `SIGINT`, `SIGTERM`, … or `signal N`.
pub(crate) fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGABRT => "SIGABRT",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return format!("signal {signal}"),
    };
    name.to_string()
}

fn duration_ms(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_signals_and_remembers_the_last() {
        let interrupts = Interrupts::unwatched();
        assert!(!interrupts.requested());
        assert_eq!(interrupts.last_signal(), None);
        interrupts.trigger(libc::SIGTERM);
        interrupts.trigger(libc::SIGINT);
        assert!(interrupts.requested());
        assert_eq!(interrupts.count(), 2);
        assert_eq!(interrupts.last_signal(), Some(libc::SIGINT));
        assert_eq!(interrupts.grace(), Duration::from_secs(1));
    }

    #[test]
    fn sleep_returns_early_on_a_signal() {
        let interrupts = Interrupts::unwatched();
        assert!(!interrupts.sleep(Duration::from_millis(10)));
        let other = Arc::clone(&interrupts);
        let started = Instant::now();
        let trigger = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            other.trigger(libc::SIGINT);
        });
        assert!(interrupts.sleep(Duration::from_secs(20)));
        assert!(started.elapsed() < Duration::from_secs(10));
        trigger.join().expect("trigger thread");
    }

    #[test]
    fn names_signals() {
        assert_eq!(signal_name(libc::SIGINT), "SIGINT");
        assert_eq!(signal_name(libc::SIGTERM), "SIGTERM");
        assert_eq!(signal_name(64), "signal 64");
    }
}
