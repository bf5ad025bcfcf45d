//! `lifecycle.retry` read (Terragrunt's `errors { retry }`): the retries
//! of each component, checked before a run, and what `hub plan` says of
//! them. Retrying a failed implementation is the engine's
//! (`run/retry.rs` in hub-engine).

use crate::timeout;
use hub_manifest::RetryPolicy;
use indexmap::IndexMap;
use regex::Regex;
use std::collections::HashMap;
use std::time::Duration;

/// The entry that applies to every component without its own.
pub(crate) const DEFAULT: &str = "default";

/// One component's retries, read.
#[derive(Debug, Clone)]
pub struct Policy {
    /// Attempts in all, at least 1.
    pub attempts: u32,
    pub delay: Duration,
    pub backoff: f64,
    pub on: Vec<Regex>,
}

impl Policy {
    /// Whether a failure that printed `output` is worth another attempt.
    pub fn matches(&self, output: &str) -> bool {
        self.on.is_empty() || self.on.iter().any(|re| re.is_match(output))
    }

    /// The wait before attempt `next` (2 or more).
    pub fn delay_before(&self, next: u32) -> Duration {
        let factor = self.backoff.powi(next.saturating_sub(2) as i32);
        Duration::try_from_secs_f64(self.delay.as_secs_f64() * factor).unwrap_or(Duration::MAX)
    }
}

/// A `lifecycle.retry` entry that does not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the `lifecycle.retry` entry of `{component}`: {reason}")]
pub struct BadRetry {
    pub component: String,
    pub reason: String,
}

impl BadRetry {
    pub fn hint(&self) -> String {
        "write it as `{attempts: 3, delay: 10s, backoff: 2, on: [\"connection reset\"]}`: \
         attempts at least 1, a duration, a factor of at least 1 and regular expressions"
            .to_string()
    }
}

/// The stack's retries, by component.
#[derive(Debug, Clone, Default)]
pub struct Retries {
    components: HashMap<String, Policy>,
    default: Option<Policy>,
}

impl Retries {
    /// Reads the stack's `lifecycle.retry`.
    pub fn new(entries: &IndexMap<String, RetryPolicy>) -> Result<Retries, BadRetry> {
        let mut retries = Retries::default();
        for (component, entry) in entries {
            let bad = |reason: String| BadRetry {
                component: component.clone(),
                reason,
            };
            let attempts = u32::try_from(entry.attempts)
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| {
                    bad(format!(
                        "`attempts` must be 1 or more, not {}",
                        entry.attempts
                    ))
                })?;
            let delay = match entry.delay.as_str() {
                "" => Duration::ZERO,
                text => timeout::parse(text).map_err(|reason| bad(format!("`delay`: {reason}")))?,
            };
            let backoff = entry.backoff.unwrap_or(1.0);
            if !(1.0..=100.0).contains(&backoff) {
                return Err(bad(format!(
                    "`backoff` must be between 1 and 100, not {backoff}"
                )));
            }
            let on = entry
                .on
                .iter()
                .map(|pattern| {
                    Regex::new(pattern)
                        .map_err(|error| bad(format!("`on` pattern `{pattern}`: {error}")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            let policy = Policy {
                attempts,
                delay,
                backoff,
                on,
            };
            match component.as_str() {
                DEFAULT => retries.default = Some(policy),
                _ => {
                    retries.components.insert(component.clone(), policy);
                }
            }
        }
        Ok(retries)
    }

    /// The retries of `component`: its own entry, else `default`.
    pub fn policy(&self, component: &str) -> Option<&Policy> {
        self.components
            .get(component)
            .or(self.default.as_ref())
            .filter(|p| p.attempts > 1)
    }
}

/// What `hub plan` says of the retries of `component`: `up to 3 attempts,
/// 10s apart (backoff 2), when the output matches `reset` or `timeout``;
/// `None` without retries.
pub fn describe(entries: &IndexMap<String, RetryPolicy>, component: &str) -> Option<String> {
    let entry = entries.get(component).or_else(|| entries.get(DEFAULT))?;
    if entry.attempts <= 1 {
        return None;
    }
    let mut text = format!("up to {} attempts", entry.attempts);
    if !entry.delay.is_empty() {
        text.push_str(&format!(", {} apart", entry.delay));
    }
    if let Some(backoff) = entry.backoff.filter(|b| *b != 1.0) {
        text.push_str(&format!(" (backoff {backoff})"));
    }
    if !entry.on.is_empty() {
        let patterns: Vec<String> = entry.on.iter().map(|p| format!("`{p}`")).collect();
        text.push_str(&format!(
            ", when the output matches {}",
            patterns.join(" or ")
        ));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(attempts: i64, delay: &str, backoff: Option<f64>, on: &[&str]) -> RetryPolicy {
        RetryPolicy {
            attempts,
            delay: delay.into(),
            backoff,
            on: on.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_component_entry_wins_over_default() {
        let mut map = IndexMap::new();
        map.insert("default".to_string(), entry(2, "1s", None, &[]));
        map.insert("app".to_string(), entry(4, "0", None, &["reset"]));
        let retries = Retries::new(&map).unwrap();
        assert_eq!(retries.policy("app").unwrap().attempts, 4);
        assert_eq!(retries.policy("db").unwrap().attempts, 2);
        assert!(retries
            .policy("app")
            .unwrap()
            .matches("connection reset by peer"));
        assert!(!retries.policy("app").unwrap().matches("syntax error"));
        assert!(retries.policy("db").unwrap().matches("anything"));
    }

    #[test]
    fn the_delay_grows_by_backoff() {
        let mut map = IndexMap::new();
        map.insert("app".to_string(), entry(4, "10s", Some(2.0), &[]));
        let retries = Retries::new(&map).unwrap();
        let policy = retries.policy("app").unwrap();
        let waits: Vec<u64> = (2..=4).map(|n| policy.delay_before(n).as_secs()).collect();
        assert_eq!(waits, [10, 20, 40]);
    }

    #[test]
    fn bad_entries_are_named() {
        let bad = |e: RetryPolicy| {
            let mut map = IndexMap::new();
            map.insert("app".to_string(), e);
            Retries::new(&map).unwrap_err().to_string()
        };
        assert_eq!(
            bad(entry(0, "", None, &[])),
            "the `lifecycle.retry` entry of `app`: `attempts` must be 1 or more, not 0"
        );
        assert!(bad(entry(2, "soon", None, &[])).contains("`delay`: `soon` is not a duration"));
        assert!(bad(entry(2, "", None, &["("])).contains("`on` pattern `(`"));
        assert!(bad(entry(2, "", Some(0.5), &[])).contains("`backoff` must be between 1 and 100"));
    }

    #[test]
    fn one_attempt_is_no_retry() {
        let mut map = IndexMap::new();
        map.insert("app".to_string(), entry(1, "", None, &[]));
        assert!(Retries::new(&map).unwrap().policy("app").is_none());
    }
}
