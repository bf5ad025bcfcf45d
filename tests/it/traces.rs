//! OpenTelemetry traces (issue 29, item 2): a run exports its spans over
//! OTLP/HTTP to a receiver started here (`otlp_receiver.py`), which decodes
//! them with the official protobuf definitions (`opentelemetry-proto`) and
//! writes them as JSON lines.
//!
//! Without python3 and `opentelemetry-proto` (scripts/test-deps installs
//! them) the receiver tests are skipped; under `CI=true` they fail.

use crate::common::{hub_isolated, Output, Test};
use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// The parent a CI system hands to hub.
const PARENT_TRACE: &str = "0af7651916cd43dd8448eb211c80319c";
const PARENT_SPAN: &str = "b7ad6b7169203331";

/// One receiver, ended with the test.
pub(crate) struct Receiver {
    port: u16,
    out: PathBuf,
    child: Child,
    _dir: tempfile::TempDir,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        // Closing its standard input ends it; kill in case it hangs.
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Receiver {
    /// A receiver on a free port, or `None` (the test returns) when it
    /// cannot run here outside CI.
    pub(crate) fn start() -> Option<Receiver> {
        match Self::try_start() {
            Ok(receiver) => Some(receiver),
            Err(why) if std::env::var("CI").is_ok_and(|v| v == "true") => {
                panic!("the OTLP receiver is required under CI=true: {why}")
            }
            Err(why) => {
                crate::common::skipped(&why);
                None
            }
        }
    }

    fn try_start() -> Result<Receiver, String> {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/otlp_receiver.py");
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let out = dir.path().join("spans.jsonl");
        let mut child = Command::new("python3")
            .arg(&script)
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("python3 cannot be started: {e}"))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let Some(port) = line
            .trim()
            .strip_prefix("port ")
            .and_then(|p| p.parse().ok())
        else {
            let _ = child.kill();
            let mut stderr = String::new();
            if let Some(mut err) = child.stderr.take() {
                let _ = std::io::Read::read_to_string(&mut err, &mut stderr);
            }
            return Err(format!(
                "the OTLP receiver did not start (run scripts/test-deps for opentelemetry-proto): {}",
                stderr.trim()
            ));
        };
        Ok(Receiver {
            port,
            out,
            child,
            _dir: dir,
        })
    }

    pub(crate) fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Every span received, in the order they came.
    pub(crate) fn spans(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.out).unwrap_or_default();
        let spans: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).expect("a JSON line"))
            .collect();
        for span in &spans {
            assert!(span.get("error").is_none(), "the receiver refused: {span}");
        }
        spans
    }
}

/// The one span named `name`.
#[track_caller]
fn named<'s>(spans: &'s [Value], name: &str) -> &'s Value {
    let found: Vec<&Value> = spans.iter().filter(|s| s["name"] == name).collect();
    assert_eq!(found.len(), 1, "spans named {name:?} in {spans:#?}");
    found[0]
}

/// Stack `traced`: `a` (a pre-deploy hook; writes the TRACEPARENT it sees)
/// then `b` (exits with `b_exit`).
fn stack(b_exit: i32) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: traced}
            components:
            - name: a
              source: {dir: a}
              hooks: [{file: pre.sh, triggers: [pre-deploy]}]
            - name: b
              source: {dir: b}
            lifecycle: {order: [a, b]}
            ",
        )
        .file("a/hub-component.yaml", "kind: component\nmeta: {name: a}\n")
        .script(
            "a/deploy.sh",
            "#!/bin/sh\nprintf '%s\\n%s\\n' \"$TRACEPARENT\" \"${TRACESTATE:-}\" > ../traceparent.out\n",
        )
        .file("b/hub-component.yaml", "kind: component\nmeta: {name: b}\n")
        .script("b/deploy.sh", &format!("#!/bin/sh\nexit {b_exit}\n"))
        .script("pre.sh", "#!/bin/sh\necho pre\n")
}

fn deploy(test: &Test, env: &[(&str, &str)]) -> Output {
    hub_isolated(test, &["deploy", "hub.yaml", "-s", "hub.yaml.state"], env)
}

#[test]
fn a_deploy_exports_its_spans_below_the_callers_traceparent() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let test = stack(0);
    let endpoint = receiver.endpoint();
    let traceparent = format!("00-{PARENT_TRACE}-{PARENT_SPAN}-01");
    let out = deploy(
        &test,
        &[
            ("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint),
            ("OTEL_SERVICE_NAME", "platform-deployer"),
            (
                "OTEL_RESOURCE_ATTRIBUTES",
                "deployment.environment.name=test",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "x-team=platform"),
            ("TRACEPARENT", &traceparent),
            ("TRACESTATE", "vendor=abc"),
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_SERVER_URL", "https://github.com"),
            ("GITHUB_REPOSITORY", "acme/infra"),
            ("GITHUB_RUN_ID", "42"),
            ("GITHUB_WORKFLOW", "deploy"),
            ("GITHUB_SHA", "abc123"),
        ],
    );
    out.success()
        .stderr_has(&format!("hub: trace id {PARENT_TRACE}\n"));
    let spans = receiver.spans();
    for span in &spans {
        assert_eq!(span["trace_id"], PARENT_TRACE, "{span}");
        assert_eq!(span["resource"]["service.name"], "platform-deployer");
        assert_eq!(span["resource"]["deployment.environment.name"], "test");
        assert_eq!(span["headers"]["x-team"], "platform");
    }
    let root = named(&spans, "hub deploy traced");
    assert_eq!(root["parent_span_id"], PARENT_SPAN);
    assert_eq!(root["trace_state"], "vendor=abc");
    assert_eq!(root["attributes"]["hub.verb"], "deploy");
    assert_eq!(root["attributes"]["hub.stack"], "traced");
    assert_eq!(root["attributes"]["cicd.pipeline.name"], "deploy");
    assert_eq!(root["attributes"]["cicd.pipeline.run.id"], "42");
    assert_eq!(
        root["attributes"]["cicd.pipeline.run.url.full"],
        "https://github.com/acme/infra/actions/runs/42"
    );
    assert_eq!(root["attributes"]["vcs.ref.head.revision"], "abc123");
    assert_eq!(root["status"]["code"], "STATUS_CODE_UNSET");
    let root_id = root["span_id"].clone();
    for name in [
        "elaborate",
        "lock",
        "parameters",
        "plan",
        "component a",
        "component b",
    ] {
        assert_eq!(named(&spans, name)["parent_span_id"], root_id, "{name}");
    }
    assert!(named(&spans, "lock")["attributes"]["hub.lock.wait_ms"].is_i64());
    let writes = spans
        .iter()
        .filter(|s| s["name"] == "state write" || s["name"] == "state fold")
        .collect::<Vec<_>>();
    assert!(
        writes.iter().any(|s| s["name"] == "state fold"),
        "the first write folds: {writes:#?}"
    );
    assert!(writes.iter().all(|s| s["parent_span_id"] == root_id));
    let a = named(&spans, "component a");
    assert_eq!(a["attributes"]["hub.component"], "a");
    assert_eq!(a["attributes"]["hub.action"], "create");
    assert_eq!(a["attributes"]["hub.attempt"], 1);
    assert_eq!(a["attributes"]["process.exit.code"], 0);
    assert_eq!(a["attributes"]["hub.outcome"], "deployed");
    assert_eq!(a["status"]["code"], "STATUS_CODE_OK");
    let hook = named(&spans, "hook pre.sh");
    assert_eq!(hook["parent_span_id"], a["span_id"]);
    assert_eq!(hook["attributes"]["hub.hook.trigger"], "pre-deploy");
    // The component's process saw its own span as its parent.
    let seen = std::fs::read_to_string(test.root().join("traceparent.out")).expect("written");
    let a_span = a["span_id"].as_str().expect("a span id");
    assert_eq!(
        seen,
        format!("00-{PARENT_TRACE}-{a_span}-01\nvendor=abc\n"),
        "TRACEPARENT and TRACESTATE of component a"
    );
}

#[test]
fn a_failed_component_is_an_error_span_and_the_run_starts_its_own_trace() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let test = stack(3);
    let endpoint = format!("{}/v1/traces", receiver.endpoint());
    let out = deploy(&test, &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &endpoint)]);
    out.failure();
    let spans = receiver.spans();
    let root = named(&spans, "hub deploy traced");
    assert_eq!(root["parent_span_id"], "");
    assert_eq!(root["status"]["code"], "STATUS_CODE_ERROR");
    assert_eq!(root["resource"]["service.name"], "hub");
    let trace_id = root["trace_id"].as_str().expect("a trace id");
    out.stderr_has(&format!("hub: trace id {trace_id}\n"));
    let b = named(&spans, "component b");
    assert_eq!(b["status"]["code"], "STATUS_CODE_ERROR");
    let script = test.root().join("b/deploy.sh");
    assert_eq!(
        b["status"]["message"],
        format!("`{}` exited with code 3", script.display())
    );
    assert_eq!(b["attributes"]["process.exit.code"], 3);
    assert_eq!(b["attributes"]["hub.outcome"], "error");
    assert_eq!(
        named(&spans, "component a")["status"]["code"],
        "STATUS_CODE_OK"
    );
}

#[test]
fn an_unreachable_collector_is_a_warning() {
    // A port nothing listens on: the connection is refused at once.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = closed.local_addr().expect("its address").port();
    drop(closed);
    let endpoint = format!("http://127.0.0.1:{port}");
    let started = std::time::Instant::now();
    let out = deploy(&stack(0), &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)]);
    out.success()
        .stderr_has(&format!(
            "warning: traces were not all exported to `{endpoint}/v1/traces`: "
        ))
        .stderr_has("hub: trace id ");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn without_the_variables_nothing_is_exported() {
    let out = deploy(&stack(0), &[]);
    out.success();
    assert!(!out.stderr.contains("trace id"), "{}", out.stderr);
    assert!(!out.stderr.contains("traces"), "{}", out.stderr);
}

#[test]
fn an_undeploy_is_traced_under_its_own_name() {
    let Some(receiver) = Receiver::start() else {
        return;
    };
    let test = stack(0)
        .script("a/undeploy.sh", "#!/bin/sh\nexit 0\n")
        .script("b/undeploy.sh", "#!/bin/sh\nexit 0\n");
    deploy(&test, &[]).success();
    let endpoint = receiver.endpoint();
    let out = hub_isolated(
        &test,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state"],
        &[("OTEL_EXPORTER_OTLP_ENDPOINT", &endpoint)],
    );
    out.success();
    let spans = receiver.spans();
    let root = named(&spans, "hub undeploy traced");
    assert_eq!(root["attributes"]["hub.verb"], "undeploy");
    for name in ["component a", "component b"] {
        let component = named(&spans, name);
        assert_eq!(component["parent_span_id"], root["span_id"]);
        assert_eq!(component["attributes"]["hub.outcome"], "undeployed");
    }
}
