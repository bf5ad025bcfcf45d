//! Values from the runner quoted where hub writes, and comments that say
//! what the commenter wrote. A pull request controls the stack (it can
//! add a `fromEnv` parameter reading any variable of the job, a component
//! printing anything) and anyone may comment `hub plan`; the job holds
//! the runner's secrets. Each row runs `hub ci` on the demo, on a local
//! state and on the S3 test server where the row touches the state or the
//! change registry, then greps everything hub wrote and printed
//! (the test's folder, stdout and stderr, the comment, the S3 bucket:
//! state, registry, logs) for [`RUNNER_SECRET`].

use super::RUNNER_SECRET;
use crate::attacks::everything_written;
use crate::common::{demo_copy, pinned_command, Output};
use crate::remote::server::{server, Server};
use std::path::{Path, PathBuf};

/// Variables of the CI this test may itself run in, which would
/// otherwise be read as the event or leak into it.
const CI_VARIABLES: [&str; 19] = [
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_ACTIONS",
    "GITHUB_TOKEN",
    "GITLAB_CI",
    "CI_PIPELINE_SOURCE",
    "CI_MERGE_REQUEST_IID",
    "CI_COMMIT_SHA",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "GITLAB_USER_LOGIN",
    "HUB_CI_COMMAND",
    "HUB_CI_EVENT",
    "HUB_CI_ASSOCIATION",
    "HUB_CI_SHA",
    "HUB_CI_AUTHOR",
    "HUB_GIT_BASE",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "AWS_PROFILE",
];

/// Where the demo's state (and so its change registry) is.
enum Place {
    Local,
    S3 {
        server: &'static Server,
        bucket: String,
    },
}

impl Place {
    /// A local state, and a new bucket of the S3 test server when it
    /// runs here.
    fn both(name: &str) -> Vec<Place> {
        let mut places = vec![Place::Local];
        if let Some(server) = server() {
            places.push(Place::S3 {
                server,
                bucket: server.bucket(name),
            });
        }
        places
    }

    fn name(&self) -> &'static str {
        match self {
            Place::Local => "local",
            Place::S3 { .. } => "s3",
        }
    }

    fn state(&self) -> String {
        match self {
            Place::Local => "demo.state".into(),
            Place::S3 { bucket, .. } => format!("s3://{bucket}/demo.state"),
        }
    }

    fn env(&self) -> Vec<(&'static str, String)> {
        match self {
            Place::Local => Vec::new(),
            Place::S3 { server, .. } => server.env(),
        }
    }

    /// Every object of the bucket (state, registry, logs), as text.
    fn stored(&self) -> String {
        let Place::S3 { server, bucket } = self else {
            return String::new();
        };
        let listing = server.request("GET", &format!("/{bucket}?list-type=2"), &[], b"");
        assert_eq!(listing.status, 200, "list {bucket}: {}", listing.body);
        let keys: Vec<&str> = listing
            .body
            .split("<Key>")
            .skip(1)
            .filter_map(|rest| rest.split("</Key>").next())
            .collect();
        assert!(!keys.is_empty(), "the bucket holds the state");
        keys.iter()
            .map(|key| server.get(bucket, key).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// The demo deployed at a place, with what hub printed so far.
struct Demo {
    tmp: tempfile::TempDir,
    /// Events the tests write, apart from what hub writes.
    events: tempfile::TempDir,
    dir: PathBuf,
    place: Place,
    printed: Vec<String>,
}

impl Demo {
    /// The demo's files, never deployed.
    fn fresh(place: Place) -> Demo {
        let (tmp, dir) = demo_copy();
        Demo {
            tmp,
            events: tempfile::tempdir().expect("tmp"),
            dir,
            place,
            printed: Vec::new(),
        }
    }

    fn deployed(place: Place) -> Demo {
        let mut demo = Demo::fresh(place);
        let state = demo.place.state();
        demo.hub(&["deploy", "hub.yaml", "params.yaml", "-s", &state], &[])
            .success();
        demo
    }

    /// hub in the demo's folder, pinned, with the place's variables, no
    /// CI's and `env`.
    fn hub(&mut self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut command = pinned_command(&self.dir, args);
        for name in CI_VARIABLES {
            command.env_remove(name);
        }
        command.envs(self.place.env());
        command.envs(env.iter().copied());
        let out = Output::of(command.output().expect("run hub"), &self.dir);
        self.printed.push(out.stdout.clone());
        self.printed.push(out.stderr.clone());
        out
    }

    /// `hub ci` for the GitHub comment event `payload` (a fixture name
    /// or a file), the comment written to `comment.md`.
    fn ci(&mut self, payload: &Path, env: &[(&str, &str)], extra: &[&str]) -> Output {
        let path = payload.display().to_string();
        let mut all = vec![
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_NAME", "issue_comment"),
            ("GITHUB_EVENT_PATH", path.as_str()),
            // The workflow says the pull request is not a fork's.
            ("HUB_CI_FORK", "false"),
        ];
        all.extend_from_slice(env);
        let state = self.place.state();
        let mut args = vec!["ci", "hub.yaml", "params.yaml", "-s", &state];
        args.extend_from_slice(&["--comment", "comment.md"]);
        args.extend_from_slice(extra);
        self.hub(&args, &all)
    }

    fn comment(&self) -> String {
        std::fs::read_to_string(self.dir.join("comment.md")).expect("a comment")
    }

    /// Panics, naming the scenario, when `secret` is in anything hub wrote
    /// or printed.
    fn assert_nothing_holds(&self, scenario: &str, secret: &str) {
        let mut printed: Vec<&str> = self.printed.iter().map(String::as_str).collect();
        let stored = self.place.stored();
        printed.push(&stored);
        let all = everything_written(self.tmp.path(), &printed);
        if let Some(at) = all.find(secret) {
            let from = all[..at]
                .char_indices()
                .rev()
                .nth(300)
                .map_or(0, |(i, _)| i);
            panic!(
                "{scenario} ({}): the runner's secret is in what hub wrote: …{}…",
                self.place.name(),
                &all[from..(at + secret.len()).min(all.len())]
            );
        }
    }
}

/// A recorded GitHub comment event of `fixtures/ci/github`.
fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ci/github")
        .join(format!("issue_comment.{name}.json"))
}

/// The member's plan comment with `body` instead, written beside the demo.
fn comment_saying(demo: &Demo, body: &str) -> PathBuf {
    let member = std::fs::read_to_string(fixture("plan.member")).expect("fixture");
    let quoted = serde_json::to_string(body).expect("a JSON string");
    let changed = member.replace(
        "\"hub plan -c app\\n\\nAfter the review, for the app only.\"",
        &quoted,
    );
    assert_ne!(changed, member, "the fixture's comment body");
    // Outside the folder whose files are grepped: the event is not
    // hub's writing.
    let path = demo.events.path().join("event.json");
    std::fs::write(&path, changed).expect("payload");
    path
}

/// The pull request adds a parameter of component `app` read from the
/// job's variable `variable`.
fn add_note_from(dir: &Path, variable: &str) {
    let params = dir.join("params.yaml");
    let mut text = std::fs::read_to_string(&params).expect("params");
    text.push_str(&format!(
        "  - name: component.app.note\n    fromEnv: {variable}\n"
    ));
    std::fs::write(&params, text).expect("params");
    let manifest = dir.join("components/app/hub-component.yaml");
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let text = text.replacen(
        "parameters:\n",
        "parameters:\n  - name: component.app.note\n    env: NOTE\n",
        1,
    );
    std::fs::write(&manifest, text).expect("manifest");
}

#[test]
fn a_from_env_parameter_reads_from_env_in_the_comment_and_the_registry() {
    // A credential hub knows, the job's token, and a variable whose name
    // says nothing: the plan shows where each came from, never its value.
    for variable in ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "RELEASE_NOTE"] {
        for place in Place::both("fromenv") {
            let mut demo = Demo::deployed(place);
            add_note_from(&demo.dir, variable);
            let out = demo.ci(&fixture("plan.member"), &[(variable, RUNNER_SECRET)], &[]);
            out.success();
            let comment = demo.comment();
            assert!(
                comment.contains(&format!("+ component.app.note = (from ${variable})")),
                "{variable}: {comment}"
            );
            // The registry recorded the plan; `hub change show` reads it.
            let state = demo.place.state();
            demo.hub(&["change", "show", "42", "-s", &state], &[])
                .success();
            demo.assert_nothing_holds(&format!("fromEnv: {variable}"), RUNNER_SECRET);
        }
    }
}

#[test]
fn an_e_value_is_not_in_the_comment_nor_the_registry() {
    for place in Place::both("e-value") {
        let mut demo = Demo::deployed(place);
        add_note_from(&demo.dir, "RELEASE_NOTE");
        let value = format!("RELEASE_NOTE={RUNNER_SECRET}");
        let out = demo.ci(&fixture("plan.member"), &[], &["-e", &value]);
        out.success();
        // Masked as an `-e` value, or said to come from the variable.
        let comment = demo.comment();
        assert!(
            comment.contains("+ component.app.note = (masked)")
                || comment.contains("+ component.app.note = (from $RELEASE_NOTE)"),
            "{comment}"
        );
        demo.assert_nothing_holds("-e", RUNNER_SECRET);
    }
}

/// Component `app` prints an `Outputs:` line without `=` that carries the
/// job's credential, and declares an output reading it.
fn print_a_malformed_line(dir: &Path) {
    let script = dir.join("components/app/deploy.sh");
    let mut text = std::fs::read_to_string(&script).expect("script");
    text.push_str("echo Outputs:\necho \"url $AWS_SECRET_ACCESS_KEY\"\necho\n");
    std::fs::write(&script, text).expect("script");
    let manifest = dir.join("components/app/hub-component.yaml");
    let mut text = std::fs::read_to_string(&manifest).expect("manifest");
    text.push_str("  - name: component.app.endpoint\n    fromTfVar: url\n");
    std::fs::write(&manifest, text).expect("manifest");
}

#[test]
fn a_malformed_outputs_line_is_masked_in_every_message_that_quotes_it() {
    for place in Place::both("malformed") {
        let mut demo = Demo::deployed(place);
        print_a_malformed_line(&demo.dir);
        let env = [("AWS_SECRET_ACCESS_KEY", RUNNER_SECRET)];
        demo.ci(&fixture("plan.member"), &env, &[]).success();
        let applied = demo.ci(&fixture("apply.member"), &env, &[]);
        assert_eq!(applied.status, 1, "{}", applied.stderr);
        // The warning, the failure's reason (comment, summary, state) say
        // which line, masked.
        assert!(
            applied
                .stderr
                .contains("printed `url (masked)` in an `Outputs:` block"),
            "{}",
            applied.stderr
        );
        let comment = demo.comment();
        assert!(
            comment.contains("the line `url (masked)` of the `Outputs:` block"),
            "{comment}"
        );
        let state = demo.place.state();
        let html = demo.tmp.path().join("report.html");
        let html = html.display().to_string();
        demo.hub(&["report", &state, "-o", &html], &env).success();
        // The same run as a traced `hub deploy`: the component's span
        // fails with the reason.
        if let Some(receiver) = crate::traces::Receiver::start() {
            let endpoint = receiver.endpoint();
            let traced = [
                ("AWS_SECRET_ACCESS_KEY", RUNNER_SECRET),
                ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
            ];
            // The change's apply holds the apply lock: a plain deploy must
            // say it goes ahead anyway.
            let deploy = [
                "deploy",
                "hub.yaml",
                "params.yaml",
                "-s",
                &state,
                "--ignore-change-lock",
            ];
            assert_ne!(demo.hub(&deploy, &traced).status, 0);
            let spans = serde_json::to_string(&receiver.spans()).expect("spans");
            assert!(spans.contains("url (masked)"), "the span's status: {spans}");
            demo.printed.push(spans);
        }
        demo.assert_nothing_holds("a malformed `Outputs:` line", RUNNER_SECRET);
    }
}

/// `markdown` without its code spans and fenced blocks: what GitHub
/// reads as markdown and HTML (a run of N backticks opens a span that
/// the next run of exactly N backticks closes); and its HTML blocks
/// (`<details>` lines).
fn outside_code(markdown: &str) -> (String, String) {
    let mut out = String::new();
    let mut html = String::new();
    let mut in_fence: Option<String> = None;
    for line in markdown.lines() {
        let trimmed = line.trim_start();
        if let Some(fence) = &in_fence {
            if trimmed.starts_with(fence.as_str()) && trimmed.trim_matches('`').is_empty() {
                in_fence = None;
            }
            continue;
        }
        if trimmed.starts_with("<details>") {
            // An HTML block: no markdown in it, its text escaped by hub.
            html.push_str(line);
            html.push('\n');
            continue;
        }
        if trimmed.starts_with("```") {
            let fence: String = trimmed.chars().take_while(|c| *c == '`').collect();
            in_fence = Some(fence);
            continue;
        }
        out.push_str(&without_spans(line));
        out.push('\n');
    }
    (out, html)
}

fn without_spans(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('`') {
        if at > 0 && rest[..at].ends_with('\\') {
            out.push_str(&rest[..=at]);
            rest = &rest[at + 1..];
            continue;
        }
        out.push_str(&rest[..at]);
        let run = rest[at..].chars().take_while(|c| *c == '`').count();
        let after = &rest[at + run..];
        let closing = after.char_indices().map(|(i, _)| i).find(|&i| {
            after[i..].starts_with(&"`".repeat(run))
                && !after[i + run..].starts_with('`')
                && (i == 0 || !after[..i].ends_with('`'))
        });
        match closing {
            Some(end) => rest = &after[end + run..],
            None => {
                out.push_str(&rest[at..at + run]);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Panics when the comment has live HTML, links or mentions outside
/// code, or HTML elements or mentions in its HTML blocks.
fn assert_inert(scenario: &str, comment: &str) {
    let (live, html) = outside_code(comment);
    let live = without_escapes(&live);
    let checks = [
        (
            &live,
            &["<img", "<b>", "](", "@team", "@org", "https://evil"][..],
        ),
        (&html, &["<img", "<b>", "@team", "@org", "https://evil"][..]),
    ];
    for (text, raws) in checks {
        for raw in raws {
            assert!(
                !text.contains(raw),
                "{scenario}: `{raw}` is live in the comment:\n{comment}\n--- outside code:\n{text}"
            );
        }
    }
}

/// `markdown` without its backslash escapes (`\[` is no bracket).
fn without_escapes(markdown: &str) -> String {
    let mut out = String::new();
    let mut chars = markdown.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                chars.next();
            }
            c => out.push(c),
        }
    }
    out
}

/// HTML, a link and a mention, with backticks to break out of a span.
const BREAKOUT: &str = "x` <img src=x onerror=alert(1)> <b>@team</b> [pay](https://evil.example) `";

#[test]
fn an_unknown_command_is_answered_without_echoing_it() {
    let mut demo = Demo::deployed(Place::Local);
    let body = format!("hub {BREAKOUT}\n\nplease");
    let event = comment_saying(&demo, &body);
    let out = demo.ci(&event, &[("GITHUB_TOKEN", RUNNER_SECRET)], &[]);
    assert_eq!(out.status, 3, "{}", out.stderr);
    let comment = demo.comment();
    assert!(
        comment.contains("hub understands `hub plan [-c a,b]`, `hub apply` and `hub unlock`"),
        "{comment}"
    );
    assert!(!comment.contains("onerror"), "{comment}");
    assert!(!out.stdout.contains("onerror"), "{}", out.stdout);
    demo.assert_nothing_holds("an unknown command", RUNNER_SECRET);
}

#[test]
fn a_backtick_in_a_plan_command_breaks_out_of_nothing() {
    let mut demo = Demo::deployed(Place::Local);
    let word = "x`<b>@team<b>[pay](https:evil.example)`";
    let event = comment_saying(&demo, &format!("hub plan -c app,{word}"));
    let out = demo.ci(&event, &[], &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    let comment = demo.comment();
    assert!(comment.contains("<b>@team<b>"), "quoted as code: {comment}");
    assert_inert("a `-c` list", &comment);
}

#[test]
fn stack_component_and_policy_names_reach_the_comment_as_text() {
    // A new stack: its name is its own, and no state has another.
    let mut demo = Demo::fresh(Place::Local);
    let stack = demo.dir.join("hub.yaml");
    let text = std::fs::read_to_string(&stack).expect("stack");
    let named = |s: &str| serde_json::to_string(s).expect("JSON string");
    let component = "evil` <b>@team<b> [pay](https:evil.example) `";
    let text = text
        .replacen(
            "  name: demo\n",
            &format!("  name: {}\n", named(BREAKOUT)),
            1,
        )
        .replacen(
            "components:\n",
            &format!(
                "components:\n  - name: {}\n    source:\n      dir: components/network\n",
                named(component)
            ),
            1,
        );
    let text = format!(
        "{text}\npolicies:\n  - name: {}\n    warn: 'true'\n    message: {}\n",
        named(BREAKOUT),
        named("see <img src=x> @org/team [pay](https://evil.example) ` `")
    );
    std::fs::write(&stack, text).expect("stack");
    let event = comment_saying(&demo, "hub plan");
    let out = demo.ci(&event, &[], &[]);
    out.success();
    let comment = demo.comment();
    assert!(
        comment.contains("onerror"),
        "the names are shown: {comment}"
    );
    assert!(comment.contains("#### Policies"), "{comment}");
    assert_inert("names of the stack", &comment);
}

/// The plan's own reasons quote what a pull request wrote: an output
/// declared with no source fails the plan, and its name reaches the
/// comment in the reason, as text.
#[test]
fn an_output_name_quoted_by_a_plan_failure_reaches_the_comment_as_text() {
    let mut demo = Demo::fresh(Place::Local);
    let manifest = demo.dir.join("components/network/hub-component.yaml");
    let text = std::fs::read_to_string(&manifest).expect("manifest");
    let named = serde_json::to_string(BREAKOUT).expect("JSON string");
    std::fs::write(&manifest, format!("{text}  - name: {named}\n")).expect("manifest");
    let event = comment_saying(&demo, "hub plan");
    let _ = demo.ci(&event, &[], &[]);
    let comment = demo.comment();
    assert!(
        comment.contains("its outputs cannot be computed") && comment.contains("onerror"),
        "the reason quotes the output's name: {comment}"
    );
    assert_inert("an output's name in a plan's reason", &comment);
}
