//! How long a component may run: `lifecycle.timeouts` in the stack (per
//! component) over `--timeout` (the run's default).
//!
//! The limit covers everything hub starts for the component in one run:
//! its pre hooks, its implementation and its post hooks, together
//! (`Budget` in hub-engine's `run/hooks.rs`). When it is over, the process running then gets SIGTERM,
//! the grace period, then SIGKILL (see `hub_engine::child::process`),
//! and the component fails with "timed out after …". A limit of `0` is no
//! limit: `lifecycle.timeouts: {slow: 0}` exempts `slow` from `--timeout`.

use indexmap::IndexMap;
use std::collections::HashMap;
use std::fmt;
use std::time::Duration;

/// Reads a duration: numbers each followed by a unit, `h`, `m`, `s` or
/// `ms` (`90s`, `15m`, `1h30m`, `1.5h`), or a bare number of seconds
/// (`0`, `90`).
pub fn parse(text: &str) -> Result<Duration, String> {
    let invalid =
        || format!("`{text}` is not a duration: write it as, for example, `90s`, `15m` or `1h30m`");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(invalid());
    }
    if let Ok(seconds) = trimmed.parse::<f64>() {
        return seconds_to_duration(seconds, text);
    }
    let mut total = 0.0_f64;
    let mut rest = trimmed;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(invalid)?;
        let (number, after) = rest.split_at(number_end);
        let unit_end = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_end);
        let per_unit = match unit {
            "h" => 3600.0,
            "m" => 60.0,
            "s" => 1.0,
            "ms" => 0.001,
            _ => return Err(invalid()),
        };
        let value: f64 = number.parse().map_err(|_| invalid())?;
        total += value * per_unit;
        rest = next;
    }
    seconds_to_duration(total, text)
}

fn seconds_to_duration(seconds: f64, text: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(seconds).map_err(|_| format!("`{text}` is not a duration"))
}

/// A duration as `parse` reads it back: `1h30m`, `90ms`, `1.5s`, `0s`.
pub fn text(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis == 0 {
        return "0s".into();
    }
    if millis < 1000 {
        return format!("{millis}ms");
    }
    let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let mut out = String::new();
    if hours > 0 {
        out.push_str(&format!("{hours}h"));
    }
    if minutes > 0 {
        out.push_str(&format!("{minutes}m"));
    }
    if rest > 0 {
        match rest % 1000 {
            0 => out.push_str(&format!("{}s", rest / 1000)),
            _ => out.push_str(&format!("{}s", rest as f64 / 1000.0)),
        }
    }
    out
}

/// Where a component's limit comes from, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Its entry in the stack's `lifecycle.timeouts`.
    Stack,
    /// `--timeout` (or `HUB_TIMEOUT`).
    Flag,
}

/// How long one component may run, and who said so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limit {
    pub duration: Duration,
    pub source: Source,
}

impl Limit {
    /// What to change when the component needs longer.
    pub fn fix(&self, component: &str) -> String {
        match self.source {
            Source::Stack => format!(
                "if `{component}` needs longer, raise its entry in the stack's `lifecycle.timeouts`"
            ),
            Source::Flag => format!(
                "if `{component}` needs longer, raise `--timeout`, or give it its own limit in the stack's `lifecycle.timeouts`"
            ),
        }
    }
}

/// `timed out after 1m30s (lifecycle.timeouts)`.
impl fmt::Display for Limit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let source = match self.source {
            Source::Stack => "lifecycle.timeouts",
            Source::Flag => "--timeout",
        };
        write!(f, "timed out after {} ({source})", text(self.duration))
    }
}

/// A `lifecycle.timeouts` entry whose duration does not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadEntry {
    pub component: String,
    pub value: String,
    pub reason: String,
}

/// The limits of a run's components.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Timeouts {
    /// `--timeout`; `None` or zero: no limit.
    default: Option<Duration>,
    /// `lifecycle.timeouts`; zero: no limit.
    components: HashMap<String, Duration>,
}

impl Timeouts {
    /// The stack's `lifecycle.timeouts` over `default`.
    pub fn new(
        stack: &IndexMap<String, String>,
        default: Option<Duration>,
    ) -> Result<Timeouts, BadEntry> {
        let mut components = HashMap::new();
        for (component, value) in stack {
            let duration = parse(value).map_err(|reason| BadEntry {
                component: component.clone(),
                value: value.clone(),
                reason,
            })?;
            components.insert(component.clone(), duration);
        }
        Ok(Timeouts {
            default,
            components,
        })
    }

    /// The limit of `component`; `None` when it has none.
    pub fn limit(&self, component: &str) -> Option<Limit> {
        let limit = match self.components.get(component) {
            Some(duration) => Limit {
                duration: *duration,
                source: Source::Stack,
            },
            None => Limit {
                duration: self.default?,
                source: Source::Flag,
            },
        };
        (!limit.duration.is_zero()).then_some(limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_durations_with_units() {
        let secs = |s: u64| Ok(Duration::from_secs(s));
        assert_eq!(parse("90s"), secs(90));
        assert_eq!(parse("15m"), secs(900));
        assert_eq!(parse("1h30m"), secs(5400));
        assert_eq!(parse("1h30m15s"), secs(5415));
        assert_eq!(parse("1.5h"), secs(5400));
        assert_eq!(parse("90"), secs(90));
        assert_eq!(parse("0"), secs(0));
        assert_eq!(parse(" 2m "), secs(120));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
    }

    #[test]
    fn refuses_what_is_not_a_duration() {
        for bad in ["", "1x", "m", "1h30", "1d", "-5s", "1..5s", "1 h", "ten"] {
            let error = parse(bad).expect_err(bad);
            assert!(error.contains("is not a duration"), "{bad}: {error}");
        }
    }

    #[test]
    fn writes_durations_back_readably() {
        for (duration, shown) in [
            (Duration::from_secs(90), "1m30s"),
            (Duration::from_secs(5400), "1h30m"),
            (Duration::from_secs(1), "1s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(20), "20ms"),
            (Duration::ZERO, "0s"),
        ] {
            assert_eq!(text(duration), shown);
            assert_eq!(parse(shown), Ok(duration));
        }
    }

    #[test]
    fn the_stack_entry_wins_over_the_default_and_zero_is_no_limit() {
        let stack: IndexMap<String, String> = [("slow", "1h"), ("free", "0")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let timeouts = Timeouts::new(&stack, Some(Duration::from_secs(60))).expect("valid");
        assert_eq!(
            timeouts.limit("slow"),
            Some(Limit {
                duration: Duration::from_secs(3600),
                source: Source::Stack
            })
        );
        assert_eq!(timeouts.limit("free"), None);
        let other = timeouts.limit("other").expect("the default");
        assert_eq!(other.source, Source::Flag);
        assert_eq!(other.to_string(), "timed out after 1m (--timeout)");
        let none = Timeouts::new(&IndexMap::new(), Some(Duration::ZERO)).expect("valid");
        assert_eq!(none.limit("other"), None);
    }

    #[test]
    fn a_bad_entry_names_its_component() {
        let stack: IndexMap<String, String> = [("app".to_string(), "soon".to_string())]
            .into_iter()
            .collect();
        let error = Timeouts::new(&stack, None).expect_err("bad");
        assert_eq!(error.component, "app");
        assert!(error.reason.contains("`soon` is not a duration"));
    }
}
