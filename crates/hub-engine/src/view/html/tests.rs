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
    assert_eq!(labels, ["0s", "2.5s", "5s", "7.5s", "10s"]);
    assert_eq!(
        timeline.ticks[4].x,
        layout::LABEL_WIDTH + layout::CHART_WIDTH
    );
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
