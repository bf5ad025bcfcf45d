//! The geometry of the HTML report's two drawings: the timeline (a bar
//! per component from its start to its end, the wait before it in a
//! lighter shade) and the dependency graph (components in columns by
//! depth). Only numbers and names come out; the template draws the SVG
//! elements, so every name is escaped by the template engine.

use serde::Serialize;
use std::collections::{HashMap, HashSet};

/// One component as the drawings see it: seconds from the run's start.
#[derive(Debug, Clone, PartialEq)]
pub struct Span {
    pub name: String,
    /// `None` when it never started (skipped, cancelled, not run).
    pub start: Option<f64>,
    pub end: Option<f64>,
    /// The components of the run it depends on.
    pub depends: Vec<String>,
    /// The CSS class of its bar and node: `ok`, `failed`, `idle`.
    pub class: String,
}

impl Span {
    fn ran(&self) -> Option<(f64, f64)> {
        let start = self.start?;
        Some((start, self.end.unwrap_or(start).max(start)))
    }
}

/// The chain of components that decided how long the run took: the one
/// that ended last, the dependency of it that ended last, and so on back
/// to a component that waited for nothing. In run order.
pub fn critical_path(spans: &[Span]) -> Vec<String> {
    let by_name: HashMap<&str, &Span> = spans.iter().map(|s| (s.name.as_str(), s)).collect();
    let mut path = Vec::new();
    let mut seen = HashSet::new();
    let mut current = latest(spans.iter());
    while let Some(span) = current {
        if !seen.insert(span.name.as_str()) {
            break;
        }
        path.push(span.name.clone());
        current = latest(
            span.depends
                .iter()
                .filter_map(|d| by_name.get(d.as_str()).copied()),
        );
    }
    path.reverse();
    path
}

/// The span that ended last (the first of equals).
fn latest<'s>(spans: impl Iterator<Item = &'s Span>) -> Option<&'s Span> {
    let mut best: Option<(&Span, f64)> = None;
    for span in spans {
        if let Some((_, end)) = span.ran() {
            if best.is_none_or(|(_, e)| end > e) {
                best = Some((span, end));
            }
        }
    }
    best.map(|(span, _)| span)
}

/// How long a component waited once it could start (everything it
/// depends on had ended) for a free slot (`-j`), in seconds; 0 for one
/// that never started. A component that depends on nothing waits from
/// the start of the first one.
pub fn wait(span: &Span, spans: &[Span]) -> f64 {
    let Some((start, _)) = span.ran() else {
        return 0.0;
    };
    // Before the first component started the run was preparing (lock,
    // state, plan), which is no component's wait.
    let first = spans
        .iter()
        .filter_map(|s| s.ran().map(|(start, _)| start))
        .fold(start, f64::min);
    let ready = spans
        .iter()
        .filter(|s| span.depends.contains(&s.name))
        .filter_map(|s| s.ran().map(|(_, end)| end))
        .fold(first, f64::max);
    (start - ready).max(0.0)
}

pub(crate) const LABEL_WIDTH: f64 = 200.0;
pub(crate) const CHART_WIDTH: f64 = 640.0;
pub(crate) const ROW: f64 = 22.0;
const BAR: f64 = 14.0;
const TOP: f64 = 24.0;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    pub width: f64,
    pub height: f64,
    pub bars: Vec<Bar>,
    pub ticks: Vec<Tick>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bar {
    pub name: String,
    /// The anchor of its details (`c3`).
    pub anchor: String,
    pub class: String,
    pub critical: bool,
    /// Where its label's baseline and its bar are.
    pub y: f64,
    pub text_y: f64,
    pub x: f64,
    pub w: f64,
    /// The wait before it (`w` 0: none).
    pub wait_x: f64,
    pub wait_w: f64,
    pub ran: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Tick {
    pub x: f64,
    pub label: String,
}

/// The timeline of `spans` (in their order) over `total` seconds;
/// `anchors[i]` is the anchor of `spans[i]`'s details.
pub fn timeline(spans: &[Span], anchors: &[String], total: f64, critical: &[String]) -> Timeline {
    let latest = spans
        .iter()
        .filter_map(|s| s.ran().map(|(_, end)| end))
        .fold(total, f64::max);
    let scale = CHART_WIDTH / latest.max(0.001);
    let bars = spans
        .iter()
        .zip(anchors)
        .enumerate()
        .map(|(row, (span, anchor))| {
            let y = TOP + row as f64 * ROW;
            let (x, w, ran) = match span.ran() {
                Some((start, end)) => (
                    LABEL_WIDTH + start * scale,
                    ((end - start) * scale).max(2.0),
                    true,
                ),
                None => (LABEL_WIDTH, 0.0, false),
            };
            let waited = wait(span, spans) * scale;
            Bar {
                name: span.name.clone(),
                anchor: anchor.clone(),
                class: span.class.clone(),
                critical: critical.contains(&span.name),
                y: round(y + (ROW - BAR) / 2.0),
                text_y: round(y + ROW / 2.0 + 4.0),
                x: round(x),
                w: round(w),
                wait_x: round(x - waited),
                wait_w: round(waited),
                ran,
            }
        })
        .collect();
    let ticks = ticks(latest)
        .into_iter()
        .map(|(at, label)| Tick {
            x: round(LABEL_WIDTH + at * scale),
            label,
        })
        .collect();
    Timeline {
        width: LABEL_WIDTH + CHART_WIDTH + 40.0,
        height: round(TOP + spans.len() as f64 * ROW + 8.0),
        bars,
        ticks,
    }
}

/// The round steps of the time axis, in milliseconds, from 1 ms to a day.
const STEPS_MS: [u64; 27] = [
    1, 2, 5, 10, 20, 50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 15_000, 30_000, 60_000,
    120_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000,
    43_200_000, 86_400_000,
];

/// At most this many intervals between the axis's ticks.
const MAX_INTERVALS: u64 = 6;

/// The ticks of the time axis of a run `total` seconds long: seconds from
/// the start and labels. They are a round step apart (the smallest of
/// [`STEPS_MS`] that makes at most [`MAX_INTERVALS`] intervals), from 0
/// to the last one within `total`, labelled in the run's unit:
/// milliseconds under a second (`0`, `20 ms`, `40 ms`), seconds under two
/// minutes (`0`, `0.5 s`, `1 s`), minutes under two hours (`0`, `30s`,
/// `1m`, `1m30s`), else hours (`0`, `1h`, `1h30m`).
pub fn ticks(total: f64) -> Vec<(f64, String)> {
    const DAY: u64 = 86_400_000;
    let total_ms = (total.max(0.0) * 1000.0 + 1e-6).floor() as u64;
    let step = STEPS_MS
        .into_iter()
        .find(|step| total_ms / step <= MAX_INTERVALS)
        .unwrap_or_else(|| (total_ms / MAX_INTERVALS / DAY + 1) * DAY);
    (0..=total_ms / step)
        .map(|k| {
            let at = k * step;
            (at as f64 / 1000.0, tick_label(at, step, total_ms))
        })
        .collect()
}

/// The label of the tick `at` ms, on an axis of `step` ms over `total` ms.
fn tick_label(at: u64, step: u64, total: u64) -> String {
    if at == 0 {
        return "0".to_string();
    }
    if total < 1_000 {
        return format!("{at} ms");
    }
    if total < 120_000 {
        let decimals = match step {
            s if s % 1_000 == 0 => 0,
            s if s % 100 == 0 => 1,
            s if s % 10 == 0 => 2,
            _ => 3,
        };
        return format!("{:.decimals$} s", at as f64 / 1000.0);
    }
    let seconds = at / 1000;
    if total < 7_200_000 {
        return match (seconds / 60, seconds % 60) {
            (0, s) => format!("{s}s"),
            (m, 0) => format!("{m}m"),
            (m, s) => format!("{m}m{s:02}s"),
        };
    }
    match (seconds / 3600, seconds % 3600 / 60) {
        (0, m) => format!("{m}m"),
        (h, 0) => format!("{h}h"),
        (h, m) => format!("{h}h{m:02}m"),
    }
}

/// `0s`, `1.5s`, `2m05s`.
pub(crate) fn seconds_label(seconds: f64) -> String {
    if seconds >= 60.0 {
        let whole = seconds.round() as u64;
        format!("{}m{:02}s", whole / 60, whole % 60)
    } else {
        let text = format!("{seconds:.2}");
        let text = text.trim_end_matches('0').trim_end_matches('.');
        format!("{text}s")
    }
}

const NODE_W: f64 = 170.0;
const NODE_H: f64 = 26.0;
const COLUMN: f64 = 210.0;
const LINE: f64 = 40.0;
const MARGIN: f64 = 10.0;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Graph {
    pub width: f64,
    pub height: f64,
    pub nodes: Vec<Node>,
    pub edges: Vec<Edge>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Node {
    pub name: String,
    /// The name, shortened to fit the box.
    pub label: String,
    pub anchor: String,
    pub class: String,
    pub critical: bool,
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
    pub text_x: f64,
    pub text_y: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Edge {
    /// The SVG path: from the dependency's right side to the dependent's
    /// left side.
    pub d: String,
    pub critical: bool,
}

/// The depth of each component: 0 for one that depends on nothing of the
/// run, else one more than its deepest dependency.
pub(crate) fn depths(spans: &[Span]) -> Vec<usize> {
    let index: HashMap<&str, usize> = spans
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let mut depth: Vec<Option<usize>> = vec![None; spans.len()];
    fn visit(
        i: usize,
        spans: &[Span],
        index: &HashMap<&str, usize>,
        depth: &mut [Option<usize>],
        path: &mut Vec<usize>,
    ) -> usize {
        if let Some(d) = depth[i] {
            return d;
        }
        if path.contains(&i) {
            return 0; // a cycle (never in a valid stack): cut it
        }
        path.push(i);
        let mut d = 0;
        for dep in &spans[i].depends {
            if let Some(&j) = index.get(dep.as_str()) {
                d = d.max(visit(j, spans, index, depth, path) + 1);
            }
        }
        path.pop();
        depth[i] = Some(d);
        d
    }
    (0..spans.len())
        .map(|i| visit(i, spans, &index, &mut depth, &mut Vec::new()))
        .collect()
}

/// The dependency graph of `spans`: a column per depth, the components of
/// a column in run order.
pub fn graph(spans: &[Span], anchors: &[String], critical: &[String]) -> Graph {
    let depths = depths(spans);
    let mut rows: HashMap<usize, usize> = HashMap::new();
    let mut place = Vec::with_capacity(spans.len());
    for &depth in &depths {
        let row = rows.entry(depth).or_insert(0);
        place.push((depth, *row));
        *row += 1;
    }
    let nodes: Vec<Node> = spans
        .iter()
        .zip(anchors)
        .zip(&place)
        .map(|((span, anchor), &(column, row))| {
            let x = MARGIN + column as f64 * COLUMN;
            let y = MARGIN + row as f64 * LINE;
            Node {
                name: span.name.clone(),
                label: shorten(&span.name, 22),
                anchor: anchor.clone(),
                class: span.class.clone(),
                critical: critical.contains(&span.name),
                x,
                y,
                w: NODE_W,
                h: NODE_H,
                text_x: x + 8.0,
                text_y: y + NODE_H / 2.0 + 4.0,
            }
        })
        .collect();
    let index: HashMap<&str, usize> = spans
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let on_path = |from: &str, to: &str| {
        critical
            .windows(2)
            .any(|pair| pair[0] == from && pair[1] == to)
    };
    let mut edges = Vec::new();
    for (i, span) in spans.iter().enumerate() {
        for dep in &span.depends {
            let Some(&j) = index.get(dep.as_str()) else {
                continue;
            };
            let (from, to) = (&nodes[j], &nodes[i]);
            let (x1, y1) = (from.x + from.w, from.y + from.h / 2.0);
            let (x2, y2) = (to.x, to.y + to.h / 2.0);
            let bend = ((x2 - x1) / 2.0).max(20.0);
            edges.push(Edge {
                d: format!(
                    "M{} {} C{} {} {} {} {} {}",
                    round(x1),
                    round(y1),
                    round(x1 + bend),
                    round(y1),
                    round(x2 - bend),
                    round(y2),
                    round(x2),
                    round(y2)
                ),
                critical: on_path(dep, &span.name),
            });
        }
    }
    let columns = depths.iter().max().map_or(0, |d| d + 1);
    let lines = rows.values().max().copied().unwrap_or(0);
    Graph {
        width: MARGIN * 2.0 + columns as f64 * COLUMN,
        height: MARGIN * 2.0 + lines as f64 * LINE,
        nodes,
        edges,
    }
}

/// `text`, or its first `max - 1` characters and `…`.
fn shorten(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut short: String = text.chars().take(max - 1).collect();
    short.push('…');
    short
}

/// To a tenth of a pixel: steadier text, smaller files.
fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}
