use super::layout::{self, Span};
use super::*;

fn span(name: &str, start: Option<f64>, end: Option<f64>, depends: &[&str]) -> Span {
    Span {
        name: name.into(),
        start,
        end,
        depends: depends.iter().map(|d| d.to_string()).collect(),
        class: "ok".into(),
    }
}

/// network → {db, cache}; app needs db and cache; docs needs nothing and
/// ends early; monitoring never ran.
fn spans() -> Vec<Span> {
    vec![
        span("network", Some(0.0), Some(2.0), &[]),
        span("db", Some(2.0), Some(7.0), &["network"]),
        span("cache", Some(2.0), Some(4.0), &["network"]),
        span("docs", Some(0.0), Some(1.0), &[]),
        span("app", Some(8.0), Some(10.0), &["db", "cache"]),
        span("monitoring", None, None, &["app"]),
    ]
}

#[test]
fn the_critical_path_follows_the_dependency_that_ended_last() {
    assert_eq!(layout::critical_path(&spans()), ["network", "db", "app"]);
}

#[test]
fn the_critical_path_of_nothing_run_is_empty_and_a_cycle_ends_it() {
    assert!(layout::critical_path(&[span("a", None, None, &[])]).is_empty());
    let cycle = [
        span("a", Some(0.0), Some(1.0), &["b"]),
        span("b", Some(0.0), Some(2.0), &["a"]),
    ];
    assert_eq!(layout::critical_path(&cycle), ["a", "b"]);
}

#[test]
fn the_wait_is_from_the_last_dependency_end_to_the_start() {
    let spans = spans();
    let wait = |i: usize| layout::wait(&spans[i], &spans);
    assert_eq!((wait(0), wait(1), wait(4), wait(5)), (0.0, 0.0, 1.0, 0.0));
    // A root that started late (no free slot) waited from the first start;
    // the time before the first start is the run's, not a wait.
    let late = [
        span("a", Some(0.5), Some(2.0), &[]),
        span("b", Some(2.0), Some(3.0), &[]),
    ];
    assert_eq!(
        (layout::wait(&late[0], &late), layout::wait(&late[1], &late)),
        (0.0, 1.5)
    );
}

#[test]
fn the_timeline_scales_the_run_to_the_chart_and_marks_the_path() {
    let spans = spans();
    let anchors: Vec<String> = (0..spans.len()).map(|i| format!("c{i}")).collect();
    let critical = layout::critical_path(&spans);
    let timeline = layout::timeline(&spans, &anchors, 10.0, &critical);
    let app = &timeline.bars[4];
    // 64 px a second from x = 200.
    assert_eq!(
        (app.x, app.w, app.wait_x, app.wait_w),
        (712.0, 128.0, 648.0, 64.0)
    );
    assert!(app.critical && app.ran && !timeline.bars[2].critical);
    let monitoring = &timeline.bars[5];
    assert!(!monitoring.ran);
    let labels: Vec<&str> = timeline.ticks.iter().map(|t| t.label.as_str()).collect();
    assert_eq!(labels, ["0", "2 s", "4 s", "6 s", "8 s", "10 s"]);
    assert_eq!(
        timeline.ticks[5].x,
        layout::LABEL_WIDTH + layout::CHART_WIDTH
    );
}

/// Ticks at round steps in the run's unit, never two alike.
#[test]
fn the_time_axis_ticks_at_round_steps_in_the_run_s_unit() {
    let labels =
        |total: f64| -> Vec<String> { layout::ticks(total).into_iter().map(|(_, l)| l).collect() };
    assert_eq!(labels(0.0), ["0"]);
    assert_eq!(labels(0.0009), ["0"]);
    assert_eq!(labels(0.004), ["0", "1 ms", "2 ms", "3 ms", "4 ms"]);
    // The run the issue shows: `0s 0s 0.01s 0.01s` before.
    assert_eq!(labels(0.023), ["0", "5 ms", "10 ms", "15 ms", "20 ms"]);
    assert_eq!(
        labels(0.061),
        ["0", "10 ms", "20 ms", "30 ms", "40 ms", "50 ms", "60 ms"]
    );
    assert_eq!(
        labels(0.27),
        ["0", "50 ms", "100 ms", "150 ms", "200 ms", "250 ms"]
    );
    assert_eq!(
        labels(1.234),
        ["0", "0.2 s", "0.4 s", "0.6 s", "0.8 s", "1.0 s", "1.2 s"]
    );
    assert_eq!(
        labels(2.9),
        ["0", "0.5 s", "1.0 s", "1.5 s", "2.0 s", "2.5 s"]
    );
    assert_eq!(labels(59.0), ["0", "10 s", "20 s", "30 s", "40 s", "50 s"]);
    assert_eq!(labels(150.0), ["0", "30s", "1m", "1m30s", "2m", "2m30s"]);
    assert_eq!(labels(3000.0), ["0", "10m", "20m", "30m", "40m", "50m"]);
    assert_eq!(labels(5.0 * 3600.0), ["0", "1h", "2h", "3h", "4h", "5h"]);
    assert_eq!(labels(10.0 * 86_400.0).len(), 6);
    for total in [
        0.001, 0.0123, 0.5, 0.999, 1.0, 7.7, 119.9, 120.0, 4000.0, 7300.0, 1e6,
    ] {
        let ticks = layout::ticks(total);
        assert!(ticks.len() >= 2 && ticks.len() <= 7, "{total}: {ticks:?}");
        let mut seen = std::collections::HashSet::new();
        for (at, label) in &ticks {
            assert!(*at <= total + 1e-9, "{total}: {at}");
            assert!(seen.insert(label.clone()), "{total}: {label} twice");
        }
        // Evenly spaced from 0.
        let step = ticks[1].0;
        for (i, (at, _)) in ticks.iter().enumerate() {
            assert!((at - step * i as f64).abs() < 1e-9, "{total}: {ticks:?}");
        }
    }
}

#[test]
fn times_show_to_the_millisecond() {
    assert_eq!(
        super::to_millisecond("2026-12-06T09:32:14.092074647Z"),
        "2026-12-06T09:32:14.092Z"
    );
    assert_eq!(
        super::to_millisecond("2026-01-01T00:00:00Z"),
        "2026-01-01T00:00:00.000Z"
    );
    assert_eq!(
        super::to_millisecond("2026-01-01T01:00:00.5+01:00"),
        "2026-01-01T00:00:00.500Z"
    );
    assert_eq!(super::to_millisecond("yesterday"), "yesterday");
}

#[test]
fn the_graph_puts_each_component_one_column_right_of_its_deepest_dependency() {
    let spans = spans();
    assert_eq!(layout::depths(&spans), [0, 1, 1, 0, 2, 3]);
    let anchors: Vec<String> = (0..spans.len()).map(|i| format!("c{i}")).collect();
    let critical = layout::critical_path(&spans);
    let graph = layout::graph(&spans, &anchors, &critical);
    let place: Vec<(f64, f64)> = graph.nodes.iter().map(|n| (n.x, n.y)).collect();
    assert_eq!(
        place,
        [
            (10.0, 10.0),
            (220.0, 10.0),
            (220.0, 50.0),
            (10.0, 50.0),
            (430.0, 10.0),
            (640.0, 10.0)
        ]
    );
    assert_eq!(graph.edges.len(), 5);
    let critical_edges: Vec<&str> = graph
        .edges
        .iter()
        .filter(|e| e.critical)
        .map(|e| e.d.as_str())
        .collect();
    // network → db and db → app.
    assert_eq!(
        critical_edges,
        [
            "M180 23 C200 23 200 23 220 23",
            "M390 23 C410 23 410 23 430 23"
        ]
    );
    assert_eq!((graph.width, graph.height), (860.0, 100.0));
}

#[test]
fn seconds_read_well() {
    let labels: Vec<String> = [0.0, 0.25, 1.5, 59.0, 125.4]
        .into_iter()
        .map(layout::seconds_label)
        .collect();
    assert_eq!(labels, ["0s", "0.25s", "1.5s", "59s", "2m05s"]);
}

fn component(name: &str, status: &str, start: u32, end: u32) -> ComponentReport {
    ComponentReport {
        name: name.into(),
        status: status.into(),
        started: Some(format!("2026-01-01T00:00:{start:02}Z")),
        ended: Some(format!("2026-01-01T00:00:{end:02}Z")),
        duration_seconds: f64::from(end - start),
        reason: (status == "error").then(|| "exit code 3".to_string()),
        outputs: Vec::new(),
        attempts: None,
    }
}

fn small() -> (RunReport, IndexMap<String, Details>) {
    let report = RunReport {
        version: 1,
        kind: "deploy".into(),
        stack: "demo <&>".into(),
        state: Some("demo.state".into()),
        jobs: 2,
        started: "2026-01-01T00:00:00Z".into(),
        ended: "2026-01-01T00:00:09Z".into(),
        duration_seconds: 9.0,
        status: "incomplete".into(),
        result: "failure".into(),
        error: Some("component `db` failed: exit code 3".into()),
        warnings: Vec::new(),
        operation: None,
        components: vec![
            component("network", "deployed", 0, 2),
            component("db", "error", 2, 9),
            component("cache", "deployed", 2, 4),
        ],
    };
    let mut details = IndexMap::new();
    details.insert(
        "network".to_string(),
        Details {
            action: "update".into(),
            reasons: vec!["parameters changed".into()],
            parameters: vec![ParameterChange {
                name: "cidr".into(),
                change: "changed".into(),
                previous: Some("10.0.0.0/16".into()),
                value: Some("10.1.0.0/16".into()),
                known: true,
            }],
            outputs: vec![
                ("subnet".into(), "<b>sub-1</b>".into()),
                ("token".into(), "(masked)".into()),
            ],
            ..Details::default()
        },
    );
    details.insert(
        "db".to_string(),
        Details {
            action: "create".into(),
            depends: vec!["network".into()],
            log: LogTail {
                file: "demo.state.logs/db.log".into(),
                lines: vec!["connecting <script>".into(), "--- exit code 3".into()],
                omitted: 2,
            },
            ..Details::default()
        },
    );
    details.insert(
        "cache".to_string(),
        Details {
            depends: vec!["network".into()],
            ..Details::default()
        },
    );
    (report, details)
}

#[test]
fn the_page_puts_failures_first_and_escapes_everything() {
    let (report, details) = small();
    let html = render(&report, &details).unwrap();
    let order: Vec<&str> = html
        .match_indices("data-name=\"")
        .map(|(at, _)| html[at + 11..].split('"').next().unwrap())
        .collect();
    assert_eq!(order, ["db", "network", "cache"]);
    assert!(
        html.contains("demo &lt;&amp;&gt;"),
        "the stack name is escaped"
    );
    assert!(html.contains("connecting &lt;script&gt;"));
    assert!(html.contains("&lt;b&gt;sub-1&lt;") && !html.contains("<b>"));
    assert!(no_fetch(&html));
}

/// The only URL is the SVG namespace: nothing is fetched.
fn no_fetch(html: &str) -> bool {
    !html.contains("<script")
        && html
            .match_indices("http")
            .all(|(at, _)| html[at..].starts_with("http://www.w3.org/2000/svg"))
        && !html.contains("src=")
        && !html.contains("@import")
}

#[test]
fn a_small_report_renders_as_committed() {
    let (report, details) = small();
    let html = render(&report, &details).unwrap();
    assert!(no_fetch(&html));
    insta::assert_snapshot!(html);
}

#[test]
fn is_html_goes_by_the_extension() {
    assert!(is_html(Path::new("out/run.HTML")) && is_html(Path::new("r.htm")));
    assert!(!is_html(Path::new("run.json")) && !is_html(Path::new("html")));
}
