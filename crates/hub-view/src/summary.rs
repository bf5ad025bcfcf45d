//! The table printed at the end of a run: each component's outcome and
//! time, then the stack status.

use std::fmt::Write;
use std::time::Duration;
use unicode_width::UnicodeWidthStr;

use hub_plan::outcome::{Entry, Summary};

/// ```text
/// deploy summary:
///   network     deployed     0.02s
///   monitoring  skipped      0.00s  component.monitoring.enabled is false
/// stack: deployed (4 components, 0.10s)
/// outputs:
///   app:url = https://app.demo.local
/// ```
pub fn render(summary: &Summary) -> String {
    let mut out = String::new();
    for log in &summary.failed_logs {
        let _ = write!(out, "--- output of failed component `{}`", log.component);
        if log.omitted > 0 {
            let _ = write!(out, " (last {} lines)", log.lines.len());
        }
        out.push_str(":\n");
        for line in &log.lines {
            let _ = writeln!(out, "{line}");
        }
    }
    out.push_str(&table(summary));
    out
}

fn table(summary: &Summary) -> String {
    // Columns line up on a terminal: names are measured in the cells
    // they take (a CJK character takes two), not in bytes or chars.
    let width = summary
        .entries
        .iter()
        .map(|e| e.component.width())
        .max()
        .unwrap_or(0);
    let mut out = format!("{} summary:\n", summary.verb.as_str());
    for entry in &summary.entries {
        let pad = width - entry.component.width();
        let _ = write!(
            out,
            "  {}{:pad$}  {:11}  {:>7}",
            entry.component,
            "",
            label(entry),
            seconds(entry.duration),
        );
        if let Some(detail) = entry.outcome.detail() {
            let first = detail.lines().next().unwrap_or_default();
            let _ = write!(out, "  {first}");
        }
        out.push('\n');
    }
    for entry in &summary.entries {
        out.push_str(&detail_below(entry));
    }
    let status = if summary.stack_status.is_empty() {
        "no state".to_string()
    } else {
        summary.stack_status.to_string()
    };
    let ran = summary.entries.len();
    let counted = match summary.stack_components {
        all if all > ran => format!("{all} components, {ran} in this run"),
        _ => format!("{ran} component{}", if ran == 1 { "" } else { "s" }),
    };
    let _ = writeln!(
        out,
        "stack: {status} ({counted}, {})",
        seconds(summary.total)
    );
    for note in &summary.state_notes {
        let _ = writeln!(out, "state: {note}");
    }
    if !summary.outputs.is_empty() {
        out.push_str("outputs:\n");
        for (name, value) in &summary.outputs {
            let _ = writeln!(out, "  {name} = {value}");
        }
    }
    out
}

/// The lines of a component's reason after the first, under its name,
/// indented (their common indentation replaced by four spaces).
fn detail_below(entry: &Entry) -> String {
    let rest: Vec<&str> = entry
        .outcome
        .detail()
        .map(|d| d.lines().skip(1).filter(|l| !l.trim().is_empty()).collect())
        .unwrap_or_default();
    if rest.is_empty() {
        return String::new();
    }
    let indent = rest
        .iter()
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out = format!("  {}:\n", entry.component);
    for line in rest {
        let _ = writeln!(out, "    {}", &line[indent..]);
    }
    out
}

fn seconds(duration: Duration) -> String {
    format!("{:.2}s", duration.as_secs_f64())
}

/// The outcome's word, with the attempt it ended on when
/// `lifecycle.retry` ran it more than once: `deployed (attempt 2 of 3)`.
fn label(entry: &Entry) -> String {
    match entry.attempt {
        Some((made, allowed)) => format!("{} (attempt {made} of {allowed})", entry.outcome.label()),
        None => entry.outcome.label().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_plan::outcome::Outcome;

    /// An incomplete deploy that took `total_ms`, `net` deployed first.
    fn incomplete(total_ms: u64, net_ms: u64) -> Summary {
        let mut summary = Summary {
            verb: hub_plan::Verb::Deploy,
            stack_status: "incomplete".into(),
            total: Duration::from_millis(total_ms),
            ..Summary::default()
        };
        summary.push("net", Outcome::Deployed, Duration::from_millis(net_ms));
        summary
    }

    #[test]
    fn renders_one_line_per_component_and_the_status() {
        let mut summary = incomplete(1500, 20);
        summary.push(
            "database",
            Outcome::Failed("exit code 3\nmore".into()),
            Duration::from_secs(1),
        );
        summary.outputs.push(("url".into(), "https://x".into()));
        let text = render(&summary);
        assert_eq!(
            text,
            "deploy summary:\n  net       deployed       0.02s\n  database  error          1.00s  exit code 3\n  database:\n    more\nstack: incomplete (2 components, 1.50s)\noutputs:\n  url = https://x\n"
        );
    }

    #[test]
    fn the_rest_of_a_long_reason_goes_below_the_table() {
        let mut summary = incomplete(30, 10);
        summary.push(
            "slow",
            Outcome::Failed(
                "outputs of component `slow` cannot be computed:\n  - `slow:a` is wrong\n      and here is why\n  - `slow:b` too".into(),
            ),
            Duration::from_millis(20),
        );
        summary.push(
            "app",
            Outcome::Cancelled("upstream `slow` failed".into()),
            Duration::ZERO,
        );
        insta::assert_snapshot!(render(&summary), @r"
        deploy summary:
          net   deployed       0.01s
          slow  error          0.02s  outputs of component `slow` cannot be computed:
          app   cancelled      0.00s  upstream `slow` failed
          slow:
            - `slow:a` is wrong
                and here is why
            - `slow:b` too
        stack: incomplete (3 components, 0.03s)
        ");
    }
}
