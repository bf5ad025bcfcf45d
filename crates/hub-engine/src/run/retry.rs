//! `lifecycle.retry` (Terragrunt's `errors { retry }`): a component whose
//! deploy or undeploy failed is run again, after a delay that grows by
//! `backoff`, up to `attempts` runs in all, when its output matches one of
//! the `on` patterns (every failure when there are none).
//!
//! Only a failed implementation is retried: a process that exited with a
//! code other than 0. An interrupt, a timeout (the component's time is
//! spent) or a failed hook ends the component as before. Each attempt is
//! announced on stderr (`hub: app: attempt 1 of 3 failed …; trying again in
//! 10s`), and the number of attempts goes into the state and the summary.

use super::hooks::Around;
use crate::child::interrupt::Interrupts;
use crate::child::process::Exit;
use hub_plan::decide::retry::Policy;
use hub_plan::outcome::lines::LineSink;
use hub_plan::timeout;

/// How many times a component ran, how many it could, and how each
/// failed attempt ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attempts {
    pub made: u32,
    pub allowed: u32,
    /// `exit code 1` for each attempt that failed and was retried.
    pub failures: Vec<String>,
}

impl Attempts {
    /// ` (attempt 2 of 3)` when retries were allowed, else nothing.
    pub fn suffix(&self) -> String {
        match self.allowed > 1 {
            true => format!(" (attempt {} of {})", self.made, self.allowed),
            false => String::new(),
        }
    }

    /// What the state's entry says after a deploy that took more than one
    /// attempt: `attempt 2 of 3; attempt 1: exit code 1`.
    pub fn record(&self) -> String {
        let mut text = format!("attempt {} of {}", self.made, self.allowed);
        for (i, failure) in self.failures.iter().enumerate() {
            text.push_str(&format!("; attempt {}: {failure}", i + 1));
        }
        text
    }
}

/// Runs `attempt` once, and again while `policy` says its failure is worth
/// it and no interrupt came; the last attempt's result and the count.
pub fn run(
    policy: Option<&Policy>,
    label: &str,
    sink: &dyn LineSink,
    interrupts: &Interrupts,
    mut attempt: impl FnMut() -> Around,
) -> (Around, Attempts) {
    let allowed = policy.map_or(1, |p| p.attempts);
    let mut attempts = Attempts {
        made: 1,
        allowed,
        failures: Vec::new(),
    };
    loop {
        let around = attempt();
        let made = attempts.made;
        let Some(policy) = policy else {
            return (around, attempts);
        };
        let failure = match &around.main {
            Some(Ok(finished)) if around.pre.is_ok() => match finished.exit {
                Exit::Code(0) | Exit::Interrupted { .. } | Exit::TimedOut => None,
                exit => Some((exit, finished.tail.as_str())),
            },
            _ => None,
        };
        let Some((exit, output)) = failure else {
            return (around, attempts);
        };
        if made >= allowed || interrupts.requested() {
            return (around, attempts);
        }
        if !policy.matches(output) {
            sink.note(
                label,
                &format!(
                    "attempt {made} of {allowed} failed ({exit}); not retried: its output matches no `lifecycle.retry` pattern"
                ),
            );
            return (around, attempts);
        }
        let wait = policy.delay_before(made + 1);
        sink.note(
            label,
            &format!(
                "attempt {made} of {allowed} failed ({exit}); trying again in {}",
                timeout::text(wait)
            ),
        );
        if interrupts.sleep(wait) {
            return (around, attempts);
        }
        attempts.failures.push(exit.to_string());
        attempts.made += 1;
    }
}
