//! Waiting for a live holder to let go (`--lock-timeout`): retries with a
//! growing pause, whatever the kind of lock.

use crate::error::duration_text;
use crate::StateError;
use std::fmt;
use std::time::{Duration, Instant};

/// How long taking a lock waits for a live holder to let go
/// (`--lock-timeout`); the default, zero, fails at once.
#[derive(Clone, Copy, Default)]
pub struct LockWait<'a> {
    pub timeout: Duration,
    /// Told once, when the wait begins, whom it waits for.
    pub notify: Option<&'a dyn Fn(&str)>,
}

impl fmt::Debug for LockWait<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockWait")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The first pause between two attempts; each next one is twice as long,
/// up to [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const LONGEST_PAUSE: Duration = Duration::from_millis(500);

impl<'a> LockWait<'a> {
    pub fn new(timeout: Duration, notify: Option<&'a dyn Fn(&str)>) -> Self {
        LockWait { timeout, notify }
    }

    /// Runs `attempt` again while it fails because a live run holds the
    /// lock ([`StateError::is_held`]), until the timeout; any other result
    /// is returned at once. After the timeout the last error is returned,
    /// wrapped in [`StateError::LockTimeout`] (unchanged with no timeout).
    pub fn retry<T>(
        &self,
        mut attempt: impl FnMut() -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let started = Instant::now();
        let mut pause = FIRST_PAUSE;
        let mut told = false;
        loop {
            let error = match attempt() {
                Err(error) if error.is_held() => error,
                done => return done,
            };
            let waited = started.elapsed();
            let left = self.timeout.saturating_sub(waited);
            if left.is_zero() {
                return Err(match self.timeout.is_zero() {
                    true => error,
                    false => StateError::LockTimeout {
                        waited,
                        source: Box::new(error),
                    },
                });
            }
            if let (false, Some(notify)) = (told, self.notify) {
                notify(&self.waiting(&error));
                told = true;
            }
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    }

    /// `hub: waiting up to 5s for the lock on `s`: `deploy` started by …`
    fn waiting(&self, error: &StateError) -> String {
        match error {
            StateError::Locked { state, holder, .. } => format!(
                "hub: waiting up to {} for the lock on `{}`: {holder}",
                duration_text(self.timeout),
                state.display()
            ),
            other => format!(
                "hub: waiting up to {} for the lock: {other}",
                duration_text(self.timeout)
            ),
        }
    }
}
