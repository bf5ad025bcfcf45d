//! The HTML run report (`--report FILE.html`, `hub report`): one
//! self-contained page to open from a CI artifact. A timeline of the
//! components with the critical path marked, the dependency graph (both
//! SVG drawn from [`layout`]), then a card per component, failures first:
//! its action and reasons, the parameters that changed, its own outputs
//! and the tail of its log in this run, secrets masked. Times show to the
//! millisecond.
//!
//! The page is rendered by `minijinja` from `html/report.html.j2`, with
//! HTML escaping of every value; no script, font or style comes from
//! outside the file.

pub(crate) mod layout;
pub mod sources;
#[cfg(test)]
mod tests;

use super::report::{ComponentReport, ReportError, RunReport};
use indexmap::IndexMap;
use layout::Span;
use serde::Serialize;
use std::path::Path;

const TEMPLATE: &str = include_str!("html/report.html.j2");

/// What the report says of one component beyond the run report's line.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    /// The plan's action (`create`, `update`, …); empty when unknown.
    pub action: String,
    /// Why it ran, was skipped or failed.
    pub reasons: Vec<String>,
    /// The components it depends on.
    pub depends: Vec<String>,
    /// Its parameters that changed against the state (values masked).
    pub parameters: Vec<ParameterChange>,
    /// Its own outputs (not those of the components before it), `name`,
    /// value (masked).
    pub outputs: Vec<(String, String)>,
    /// Its log in this run.
    pub log: LogTail,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ParameterChange {
    pub name: String,
    /// `added`, `changed` or `removed`.
    pub change: String,
    pub previous: Option<String>,
    pub value: Option<String>,
    /// Known when the plan was made: `false` when it reads an output known
    /// only after an upstream applies.
    pub known: bool,
}

/// The last lines of a component's log file, of the run reported only.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LogTail {
    /// Where the log is, as a person would look for it.
    pub file: String,
    pub lines: Vec<String>,
    /// Lines before them left out.
    pub omitted: usize,
}

/// The page's data, as the template reads it.
#[derive(Debug, Clone, Serialize)]
struct Page {
    title: String,
    kind: String,
    stack: String,
    state: Option<String>,
    /// `started`, `ended`, `duration`, at the page's top level.
    #[serde(flatten)]
    times: RunTimes,
    status: String,
    result: String,
    error: Option<String>,
    jobs: usize,
    counts: Vec<(String, usize)>,
    critical: Vec<String>,
    timeline: layout::Timeline,
    graph: layout::Graph,
    cards: Vec<Card>,
}

#[derive(Debug, Clone, Serialize)]
struct Card {
    name: String,
    anchor: String,
    status: String,
    class: String,
    failed: bool,
    critical: bool,
    action: String,
    reasons: Vec<String>,
    /// `started`, `ended`, `duration`, `wait`, `attempts`, at the card's
    /// top level.
    #[serde(flatten)]
    timing: CardTiming,
    depends: Vec<String>,
    parameters: Vec<ParameterChange>,
    outputs: Vec<(String, String)>,
    log: LogTail,
}

/// When the run started and ended, and how long it took.
#[derive(Debug, Clone, Serialize)]
struct RunTimes {
    started: String,
    ended: String,
    duration: String,
}

/// When a component ran, how long it took and waited, and how many times
/// it was tried (0 when it did not run).
#[derive(Debug, Clone, Serialize)]
struct CardTiming {
    started: Option<String>,
    ended: Option<String>,
    duration: String,
    wait: String,
    attempts: usize,
}

/// Whether a status is a failure, shown first.
fn is_failure(status: &str) -> bool {
    matches!(status, "error" | "interrupted")
}

/// Whether the component's process ran (a skipped or unchanged one has
/// times too, but took none).
fn ran(component: &ComponentReport) -> bool {
    matches!(
        component.status.as_str(),
        "deployed" | "undeployed" | "error" | "interrupted"
    )
}

fn class_of(status: &str) -> &'static str {
    match status {
        "error" | "interrupted" => "failed",
        "deployed" | "undeployed" | "deploy" | "undeploy" => "ok",
        "cancelled" => "cancelled",
        _ => "idle",
    }
}

/// Seconds from the run's start, from RFC 3339 times.
fn offset(start: Option<f64>, at: Option<&str>) -> Option<f64> {
    Some(unix(at?)? - start?)
}

/// `2026-01-01T00:00:01.234Z`: an RFC 3339 time, in UTC, to the
/// millisecond (finer digits are noise on a page); other text as it is.
fn to_millisecond(text: &str) -> String {
    let Some((seconds, nanos)) = hub_state::rfc3339_to_unix(text) else {
        return text.to_string();
    };
    let (year, month, day) = hub_state::civil_from_days(seconds.div_euclid(86_400));
    let rest = seconds.rem_euclid(86_400);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        nanos / 1_000_000
    )
}

fn unix(text: &str) -> Option<f64> {
    let (seconds, nanos) = hub_state::rfc3339_to_unix(text)?;
    Some(seconds as f64 + f64::from(nanos) / 1e9)
}

/// The page of `report`, with `details` per component name.
pub fn render(report: &RunReport, details: &IndexMap<String, Details>) -> Result<String, String> {
    let page = page(report, details);
    let mut env = minijinja::Environment::new();
    env.set_auto_escape_callback(|_| minijinja::AutoEscape::Html);
    env.render_named_str(
        "report.html",
        TEMPLATE,
        minijinja::Value::from(minijinja::value::Serde(&page)),
    )
    .map_err(|error| error.to_string())
}

fn page(report: &RunReport, details: &IndexMap<String, Details>) -> Page {
    let empty = Details::default();
    let detail = |name: &str| details.get(name).unwrap_or(&empty);
    // A component the run took twice (a retry, `--prune` then deploy)
    // shows once, with its last entry and the count.
    let mut last: IndexMap<&str, (&ComponentReport, usize)> = IndexMap::new();
    for component in &report.components {
        let entry = last.entry(&component.name).or_insert((component, 0));
        *entry = (component, entry.1 + 1);
    }
    let spans = spans(report, &last, details);
    let anchors: Vec<String> = (0..spans.len()).map(|i| format!("c{i}")).collect();
    let critical = layout::critical_path(&spans);
    let timeline = layout::timeline(&spans, &anchors, report.duration_seconds, &critical);
    let graph = layout::graph(&spans, &anchors, &critical);
    let mut cards: Vec<Card> = last
        .values()
        .zip(&spans)
        .zip(&anchors)
        .map(|(((c, attempts), span), anchor)| {
            let place = Placed {
                anchor,
                span,
                spans: &spans,
                critical: &critical,
            };
            card(c, *attempts, detail(&c.name), place)
        })
        .collect();
    // Failures first; the rest in the run's order (a stable sort).
    cards.sort_by_key(|card| !card.failed);
    let mut counts: IndexMap<String, usize> = IndexMap::new();
    for card in &cards {
        *counts.entry(card.status.clone()).or_default() += 1;
    }
    Page {
        title: format!("hub {} {}: {}", report.kind, report.stack, report.result),
        kind: report.kind.clone(),
        stack: report.stack.clone(),
        state: report.state.clone(),
        times: RunTimes {
            started: to_millisecond(&report.started),
            ended: to_millisecond(&report.ended),
            duration: layout::seconds_label(report.duration_seconds),
        },
        status: report.status.clone(),
        result: report.result.clone(),
        error: report.error.clone(),
        jobs: report.jobs,
        counts: counts.into_iter().collect(),
        critical,
        timeline,
        graph,
        cards,
    }
}

/// Each component's span on the run's time line, from the run's start,
/// with the dependencies the page shows.
fn spans(
    report: &RunReport,
    last: &IndexMap<&str, (&ComponentReport, usize)>,
    details: &IndexMap<String, Details>,
) -> Vec<Span> {
    let empty = Details::default();
    let detail = |name: &str| details.get(name).unwrap_or(&empty);
    let run_start = unix(&report.started);
    last.values()
        .map(|(c, _)| Span {
            name: c.name.clone(),
            start: ran(c)
                .then(|| offset(run_start, c.started.as_deref()))
                .flatten(),
            end: ran(c)
                .then(|| offset(run_start, c.ended.as_deref()))
                .flatten(),
            depends: detail(&c.name)
                .depends
                .iter()
                .filter(|d| last.contains_key(d.as_str()))
                .cloned()
                .collect(),
            class: class_of(&c.status).to_string(),
        })
        .collect()
}

/// Where a card sits on the page: its anchor, its span among all, and the
/// critical path.
struct Placed<'p> {
    anchor: &'p str,
    span: &'p Span,
    spans: &'p [Span],
    critical: &'p [String],
}

/// The card of component `c`, taken `attempts` times by the run.
fn card(c: &ComponentReport, attempts: usize, d: &Details, place: Placed<'_>) -> Card {
    let Placed {
        anchor,
        span,
        spans,
        critical,
    } = place;
    let mut reasons = d.reasons.clone();
    if let Some(reason) = &c.reason {
        if !reasons.contains(reason) {
            reasons.insert(0, reason.clone());
        }
    }
    Card {
        name: c.name.clone(),
        anchor: anchor.to_string(),
        status: c.status.clone(),
        class: span.class.clone(),
        failed: is_failure(&c.status),
        critical: critical.contains(&c.name),
        action: d.action.clone(),
        reasons,
        timing: CardTiming {
            started: c.started.as_deref().map(to_millisecond),
            ended: c.ended.as_deref().map(to_millisecond),
            duration: layout::seconds_label(c.duration_seconds),
            wait: layout::seconds_label(layout::wait(span, spans)),
            attempts: match (span.start.is_some(), c.attempts) {
                (false, _) => 0,
                (true, Some(retried)) => retried as usize,
                (true, None) => attempts,
            },
        },
        depends: d.depends.clone(),
        parameters: d.parameters.clone(),
        outputs: d.outputs.clone(),
        log: d.log.clone(),
    }
}

/// Renders and writes the page atomically, readable by its owner only
/// (it holds logs).
pub fn write(
    path: &Path,
    report: &RunReport,
    details: &IndexMap<String, Details>,
) -> Result<(), ReportError> {
    let text = render(report, details).map_err(|message| ReportError::Render {
        path: path.to_path_buf(),
        message,
    })?;
    hub_manifest::write_private_output(path, text.as_bytes()).map_err(|source| ReportError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Whether `--report PATH` asks for the HTML report.
pub fn is_html(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm"))
}
