//! Policies that never end or eat the memory, in the pull request's own
//! stack or a `--policy` file, in `hub plan` and `hub ci`; the OTLP
//! headers (the collector's key) passed to components; `terraform.backend.*`
//! values shown in plans.
//!
//! None of these reads or writes a state's contents in a way that differs
//! between a local state and the S3 server (policies are evaluated over
//! the plan, the environment and the plan view are built before any state
//! is written), so the rows run on a local state.

use super::super::{tree, Seen};
use super::RUNNER_SECRET;
use crate::common::{hub_binary, Output, Test, PINNED};
use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long a row lets hub run before it kills it: a rule that never ends
/// fails the row instead of hanging the suite.
const OUTER_TIMEOUT: Duration = Duration::from_secs(60);

/// A peak resident size no policy evaluation should come near (the `map`
/// rule below takes about a gigabyte without a budget).
const MEMORY_CEILING_KB: i64 = 600 * 1024;

/// What a bounded run of hub left, with its peak memory and duration.
pub(super) struct Bounded {
    pub(super) output: Output,
    max_rss_kb: i64,
    elapsed: Duration,
    killed: bool,
}

/// Runs hub in `dir` (pinned values, no standard input, `env` on top),
/// killed after [`OUTER_TIMEOUT`]; its peak resident size from `wait4`,
/// which also reaps it (so `Child::wait` is never called).
#[allow(clippy::zombie_processes)]
pub(super) fn bounded(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Bounded {
    let mut command = Command::new(hub_binary());
    command
        .current_dir(dir)
        .args(args)
        .envs(PINNED)
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for name in [
        "HUB_FORCE",
        "HUB_JOBS",
        "ENV",
        "NO_COLOR",
        "GITHUB_ACTIONS",
        "GITLAB_CI",
        "CI_PIPELINE_SOURCE",
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    ] {
        if !env.iter().any(|(k, _)| *k == name) {
            command.env_remove(name);
        }
    }
    let started = Instant::now();
    let mut child = command.spawn().expect("run hub");
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = reader(Box::new(child.stdout.take().expect("stdout")));
    let stderr = reader(Box::new(child.stderr.take().expect("stderr")));
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: a zeroed `rusage` is a valid value for `wait4` to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut killed = false;
    loop {
        // SAFETY: `pid` is our child, not reaped yet; the pointers are valid.
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break;
        }
        assert!(reaped == 0, "wait4 failed");
        if started.elapsed() > OUTER_TIMEOUT && !killed {
            let _ = child.kill();
            killed = true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let output = std::process::Output {
        status: std::process::ExitStatus::from_raw(status),
        stdout: stdout.join().expect("stdout"),
        stderr: stderr.join().expect("stderr"),
    };
    Bounded {
        output: Output::of(output, dir),
        max_rss_kb: usage.ru_maxrss,
        elapsed: started.elapsed(),
        killed,
    }
}

/// What hub wrote below `dir` since `before` (new or changed files) and
/// printed, as one text.
fn written_since(dir: &Path, before: &BTreeMap<PathBuf, Seen>, run: &Bounded) -> String {
    let mut all = format!("{}\n{}\n", run.output.stdout, run.output.stderr);
    for (path, seen) in tree(dir) {
        if before.get(&path) != Some(&seen) {
            all.push_str(&String::from_utf8_lossy(&seen.bytes));
            all.push('\n');
        }
    }
    all
}

const TWENTY: &str = "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]";

/// 20^7 iterations of nested `all`: about 400 bytes that never end.
fn forever() -> String {
    let mut rule = "true".to_string();
    for name in ["a", "b", "c", "d", "e", "f", "g"] {
        rule = format!("{TWENTY}.all({name}, {rule})");
    }
    format!("!({rule})")
}

/// Lists that grow sixteenfold a level through `map`: 16^6 values copied,
/// about a gigabyte, in about 300 bytes.
fn hungry() -> String {
    let sixteen = |v: &str| format!("[{}]", vec![v; 16].join(","));
    let mut rule = sixteen("e");
    for (outer, inner) in [("d", "e"), ("c", "d"), ("b", "c"), ("a", "b")] {
        rule = format!("[{}].map({inner}, {rule})", sixteen(outer));
    }
    format!("[[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15]].map(a, {rule}).size() == 0")
}

/// A stack of one component `c` whose `policies:` are `policies` (YAML
/// list items, indented by two).
pub(super) fn stack(policies: &str) -> Test {
    Test::new()
        .file(
            "components/c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c}\n",
        )
        .script("components/c/deploy.sh", "#!/bin/sh\necho deployed c\n")
        .script("components/c/undeploy.sh", "#!/bin/sh\necho undeployed c\n")
        .file(
            "hub.yaml",
            &format!(
                "version: 1\nkind: stack\nmeta: {{name: s}}\ncomponents:\n  - name: c\n    source: {{dir: components/c}}\n{policies}"
            ),
        )
}

fn rule(name: &str, deny: &str) -> String {
    format!("- name: {name}\n  deny: >-\n    {deny}\n  message: never fires\n")
}

#[track_caller]
pub(super) fn assert_denied_in_time(run: &Bounded, scenario: &str) {
    assert!(
        !run.killed,
        "{scenario}: hub ran for {OUTER_TIMEOUT:?} and was killed"
    );
    assert!(
        run.max_rss_kb < MEMORY_CEILING_KB,
        "{scenario}: hub's peak memory was {} MB",
        run.max_rss_kb / 1024
    );
    assert_ne!(
        run.output.status, 0,
        "{scenario}: the plan passed\n{}",
        run.output.stdout
    );
}

#[test]
fn a_policy_file_whose_rule_never_ends_denies_the_plan_within_seconds() {
    let test = stack("").file("loop.yaml", &rule("forever", &forever()));
    let run = bounded(
        test.root(),
        &["plan", "hub.yaml", "--policy", "loop.yaml"],
        &[],
    );
    assert_denied_in_time(&run, "nested all");
    run.output
        .stderr_has("error: the policy `forever` cannot be evaluated: it ran over its budget")
        .stderr_has("--> loop.yaml:2:3");
    assert!(run.output.stdout.contains("error forever (loop.yaml:2)"));
}

#[test]
fn a_policy_file_whose_rule_copies_gigabytes_denies_the_plan_within_its_memory() {
    let test = stack("").file("map.yaml", &rule("hungry", &hungry()));
    let run = bounded(
        test.root(),
        &["plan", "hub.yaml", "--policy", "map.yaml"],
        &[],
    );
    assert_denied_in_time(&run, "map");
    run.output
        .stderr_has("error: the policy `hungry` cannot be evaluated: it ran over its budget")
        .stderr_has("--> map.yaml:2:3");
}

#[test]
fn the_pull_requests_own_rules_over_their_budget_deny_its_plan_comment() {
    // The comment says `hub plan -c app`, which needs the stack deployed;
    // the pull request adds a rule.
    let with = |policies: &str| {
        format!(
            "version: 1\nkind: stack\nmeta: {{name: s}}\ncomponents:\n  - name: app\n    source: {{dir: components/c}}\n{policies}"
        )
    };
    let payload = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ci/github/issue_comment.plan.member.json")
        .display()
        .to_string();
    for (name, deny) in [("forever", forever()), ("hungry", hungry())] {
        let test = stack("").file("hub.yaml", &with(""));
        bounded(test.root(), &["deploy", "hub.yaml", "-s", "s.state"], &[])
            .output
            .success();
        let test = test.file(
            "hub.yaml",
            &with(&format!("policies:\n{}", indent(&rule(name, &deny)))),
        );
        let run = bounded(
            test.root(),
            &["ci", "hub.yaml", "-s", "s.state", "--comment", "comment.md"],
            &[
                ("GITHUB_ACTIONS", "true"),
                ("GITHUB_EVENT_NAME", "issue_comment"),
                ("GITHUB_EVENT_PATH", &payload),
                // The workflow says the pull request is not a fork's.
                ("HUB_CI_FORK", "false"),
            ],
        );
        assert_denied_in_time(&run, name);
        let comment = std::fs::read_to_string(test.root().join("comment.md")).expect("a comment");
        assert!(
            comment.contains(&format!(
                "the policy `{name}` cannot be evaluated: it ran over its budget"
            )) && comment.contains("hub.yaml:9"),
            "the comment does not report `{name}` over its budget:\n{comment}"
        );
    }
}

pub(super) fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

#[test]
fn the_otlp_headers_reach_no_component_and_nothing_hub_writes() {
    let test = stack("").script(
        "components/c/deploy.sh",
        "#!/bin/sh\n\
         case \"$OTEL_EXPORTER_OTLP_HEADERS$OTEL_EXPORTER_OTLP_TRACES_HEADERS\" in\n\
         '') echo 'no OTLP headers here' ;;\n\
         *) echo \"OTLP headers: $OTEL_EXPORTER_OTLP_HEADERS $OTEL_EXPORTER_OTLP_TRACES_HEADERS\" ;;\n\
         esac\n\
         env\n",
    );
    let headers = format!("api-key={RUNNER_SECRET}");
    let traces = format!("authorization=Bearer%20{RUNNER_SECRET}x");
    let before = tree(test.root());
    let run = bounded(
        test.root(),
        &["deploy", "hub.yaml"],
        &[
            ("OTEL_EXPORTER_OTLP_HEADERS", &headers),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", &traces),
            // A closed port: the export fails, and says so.
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:9"),
            ("OTEL_EXPORTER_OTLP_TIMEOUT", "500"),
        ],
    );
    run.output.success();
    assert!(
        run.output.stdout.contains("no OTLP headers here"),
        "{}",
        run.output.stdout
    );
    let all = written_since(test.root(), &before, &run);
    assert!(
        !all.contains(RUNNER_SECRET),
        "the collector's key is in what hub wrote or printed"
    );
}

#[test]
fn terraform_backend_values_are_masked_in_plans() {
    let bucket = format!("corp-tfstate-{RUNNER_SECRET}");
    let test = Test::new()
        .file(
            "components/net/hub-component.yaml",
            &format!(
                "version: 1\nkind: component\nmeta: {{name: net}}\nparameters:\n  \
                 - name: terraform.backend.bucket\n    value: {bucket}\n  \
                 - name: terraform.backend.region\n    value: eu-west-1\n"
            ),
        )
        .script("components/net/deploy.sh", "#!/bin/sh\necho deployed\n")
        .script("components/net/undeploy.sh", "#!/bin/sh\necho undeployed\n")
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: be}\ncomponents:\n  - name: net\n    source: {dir: components/net}\n",
        );
    for args in [
        &["plan", "hub.yaml"][..],
        &["plan", "hub.yaml", "--format", "json"],
        &["plan", "hub.yaml", "--out", "plan.json"],
    ] {
        let before = tree(test.root());
        let run = bounded(test.root(), args, &[]);
        run.output.success();
        let all = written_since(test.root(), &before, &run);
        assert!(
            !all.contains(RUNNER_SECRET) && !all.contains("eu-west-1"),
            "{args:?}: a backend value is shown:\n{}",
            run.output.stdout
        );
        assert!(
            run.output.stdout.contains("terraform.backend.bucket")
                || test.root().join("plan.json").exists(),
            "{args:?}: the parameter is not in the plan at all"
        );
    }
}

#[test]
fn a_parameter_expression_that_never_ends_fails_the_plan_naming_it() {
    // `#{...}` expressions are CEL from the same pull request.
    let inner = forever();
    let test = stack("").file(
        "hub.yaml",
        &format!(
            "version: 1\nkind: stack\nmeta: {{name: s}}\ncomponents:\n  - name: c\n    source: {{dir: components/c}}\nparameters:\n  - name: x\n    value: \"#{{{inner}}}\"\n"
        ),
    );
    let run = bounded(test.root(), &["plan", "hub.yaml"], &[]);
    assert_denied_in_time(&run, "#{...}");
    run.output
        .stderr_has("CEL evaluation stopped: it ran over its budget")
        .stderr_has("--> hub.yaml:9:");
}
