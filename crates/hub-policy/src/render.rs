//! Policy results in `hub plan`'s three formats.

use super::{PolicyResults, Verdict};
use std::fmt::Write;

/// ```text
/// policies: 3 rules, 1 denied, 1 warned
///   deny  no-db-delete-in-prod (policies.yaml:4): the database is protected in prod
///   warn  small-changes (hub.yaml:12): more than 3 components change
/// ```
///
/// Empty when there are no rules.
pub fn render_text(results: &PolicyResults) -> String {
    if results.results.is_empty() {
        return String::new();
    }
    let mut out = format!("policies: {}\n", summary(results));
    for result in results.fired() {
        let _ = writeln!(
            out,
            "  {:<5} {} ({}): {}",
            result.verdict.as_str(),
            result.name,
            rule_text(result),
            one_line(&result.message)
        );
    }
    out
}

/// A section for a pull-request comment; empty when there are no rules.
pub fn render_markdown(results: &PolicyResults) -> String {
    if results.results.is_empty() {
        return String::new();
    }
    let mut out = format!("\n#### Policies: {}\n", summary(results));
    if results.fired().next().is_none() {
        return out;
    }
    out.push_str("\n| Result | Policy | Message |\n|---|---|---|\n");
    for result in results.fired() {
        let verdict = match result.verdict {
            Verdict::Deny | Verdict::Error => format!("**{}**", result.verdict.as_str()),
            _ => result.verdict.as_str().to_string(),
        };
        let _ = writeln!(
            out,
            "| {verdict} | {} | {} |",
            hub_view::inert::code(&result.name),
            hub_view::inert::rich(&result.message)
        );
    }
    out
}

/// The JSON of `hub plan --format json` with the results under
/// `policies` (each `name`, `effect`, `result`: `pass`, `warn`, `deny` or
/// `error`, `message`, `rule`: `FILE:LINE`), as its last key.
pub fn json_with_results(plan_json: &str, results: &PolicyResults) -> String {
    let body = plan_json.trim_end();
    let Some(open) = body.strip_suffix('}') else {
        return plan_json.to_string();
    };
    let list = serde_json::to_string_pretty(results).unwrap_or_else(|_| "[]".into());
    let indented = list.replace('\n', "\n  ");
    format!("{},\n  \"policies\": {indented}\n}}\n", open.trim_end())
}

/// `3 rules, 1 denied, 1 warned` (and `, 1 failed`).
fn summary(results: &PolicyResults) -> String {
    let total = results.results.len();
    let plural = if total == 1 { "" } else { "s" };
    let mut text = format!(
        "{total} rule{plural}, {} denied, {} warned",
        results.count(&Verdict::Deny),
        results.count(&Verdict::Warn)
    );
    let failed = results.count(&Verdict::Error);
    if failed > 0 {
        let _ = write!(text, ", {failed} failed");
    }
    text
}

fn rule_text(result: &super::PolicyResult) -> String {
    let file = result.rule.file.display();
    match result.rule.line {
        Some(line) => format!("{file}:{line}"),
        None => file.to_string(),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
