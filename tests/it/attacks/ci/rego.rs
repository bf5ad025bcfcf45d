//! Rego modules of the pull request (issue 43, item 5): the module and the
//! input are the pull request's, so a module that never ends, that builds
//! gigabytes, that is huge, that names a runner's file through `file:`, or
//! that prints, must stop or be refused with a clear error and show
//! nothing of the runner.

use super::budget::{assert_denied_in_time, bounded, indent, stack};
use super::RUNNER_SECRET;
use std::path::Path;

fn inline(name: &str, module: &str) -> String {
    let body: String = module.lines().map(|l| format!("    {l}\n")).collect();
    format!("- name: {name}\n  rego: |\n{body}")
}

/// A module whose one rule loops 125 billion times.
const FOREVER: &str = "package main\n\ndeny contains \"never\" if {\n  count([1 | some a in numbers.range(1, 5000); some b in numbers.range(1, 5000); some c in numbers.range(1, 5000)]) < 0\n}\n";

/// A module that doubles a string forty times: a terabyte.
fn hungry() -> String {
    let mut lines = vec![
        "package main".to_string(),
        String::new(),
        "s0 := concat(\"\", [\"x\" | some i in numbers.range(1, 1024)])".to_string(),
    ];
    for i in 1..40 {
        lines.push(format!("s{i} := concat(\"\", [s{}, s{}])", i - 1, i - 1));
    }
    lines.push("deny contains \"big\" if { count(s39) < 0 }".to_string());
    lines.join("\n") + "\n"
}

#[test]
fn a_module_that_builds_a_terabyte_stops_the_plan_within_its_memory() {
    let test = stack("").file("big.rego", &hungry());
    let run = bounded(
        test.root(),
        &["plan", "hub.yaml", "--policy", "big.rego"],
        &[],
    );
    assert_denied_in_time(&run, "doubling strings");
    run.output.stderr_has(
        "error: the policy `big.rego` (Rego, big.rego) ran over its budget of 256 MB of memory (HUB_CEL_MAX_MEMORY); nothing was run",
    );
}

#[test]
fn a_huge_module_is_refused_when_it_is_read() {
    let rules: String = (0..60_000).map(|i| format!("r{i} := {i}\n")).collect();
    let test = stack("").file("huge.rego", &format!("package main\n{rules}"));
    let run = bounded(
        test.root(),
        &["plan", "hub.yaml", "--policy", "huge.rego"],
        &[],
    );
    assert_denied_in_time(&run, "huge");
    run.output
        .stderr_has("error: the policy `huge.rego` is not valid Rego: ");
    assert!(!run.output.stdout.contains("Plan:"), "nothing was planned");
}

#[test]
fn the_pull_request_s_module_over_its_budget_denies_its_plan_comment() {
    let payload = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ci/github/issue_comment.plan.member.json")
        .display()
        .to_string();
    let with = |policies: &str| {
        format!(
            "version: 1\nkind: stack\nmeta: {{name: s}}\ncomponents:\n  - name: app\n    source: {{dir: components/c}}\n{policies}"
        )
    };
    let test = stack("").file("hub.yaml", &with(""));
    bounded(test.root(), &["deploy", "hub.yaml", "-s", "s.state"], &[])
        .output
        .success();
    let test = test.file(
        "hub.yaml",
        &with(&format!(
            "policies:\n{}",
            indent(&inline("forever", FOREVER))
        )),
    );
    let run = bounded(
        test.root(),
        &["ci", "hub.yaml", "-s", "s.state", "--comment", "comment.md"],
        &[
            ("GITHUB_ACTIONS", "true"),
            ("GITHUB_EVENT_NAME", "issue_comment"),
            ("GITHUB_EVENT_PATH", &payload),
            ("HUB_CI_FORK", "false"),
            ("HUB_CEL_MAX_TIME", "500ms"),
        ],
    );
    assert_denied_in_time(&run, "forever");
    let comment = std::fs::read_to_string(test.root().join("comment.md")).expect("a comment");
    assert!(
        comment
            .contains("the policy `forever` cannot be evaluated: it ran over its budget of 500 ms")
            && comment.contains("hub.yaml:9"),
        "the comment does not report `forever` over its budget:\n{comment}"
    );
}

/// A runner's file (here one holding a secret, written as Rego so that a
/// module reading it would show it) named by the pull request's `file:`,
/// by an absolute path or through a link it plants, is never read.
#[test]
fn a_module_file_cannot_name_a_runner_s_file() {
    let outside = tempfile::tempdir().expect("temporary folder");
    let secret = outside.path().join("runner.rego");
    std::fs::write(
        &secret,
        format!("package main\n\ndeny contains \"{RUNNER_SECRET}\" if {{ true }}\n"),
    )
    .expect("write");
    for path in [secret.display().to_string(), "rules/planted.rego".into()] {
        let test = stack(&format!("policies:\n  - name: team\n    file: {path}\n"));
        std::fs::create_dir_all(test.root().join("rules")).expect("folder");
        std::os::unix::fs::symlink(&secret, test.root().join("rules/planted.rego")).expect("link");
        let run = bounded(test.root(), &["plan", "hub.yaml"], &[]);
        assert_denied_in_time(&run, &path);
        run.output
            .stderr_has(&format!(
                "error: the policy `team` cannot use the Rego file `{path}`: "
            ))
            .stderr_has("--> hub.yaml:9:5");
        let all = format!("{}{}", run.output.stdout, run.output.stderr);
        assert!(
            !all.contains(RUNNER_SECRET),
            "{path}: the runner's file was read:\n{all}"
        );
    }
}

/// `print()` of a module goes nowhere: what it prints (a terminal escape,
/// a line that looks like hub's) never reaches the job's log.
#[test]
fn what_a_module_prints_never_reaches_the_log() {
    let module = "package main\n\nwarn contains \"printed\" if {\n  print(\"\\u001b]0;owned\\u0007error: denied by nothing\")\n}\n";
    let test = stack("").file("print.rego", module);
    let run = bounded(
        test.root(),
        &["plan", "hub.yaml", "--policy", "print.rego"],
        &[],
    );
    run.output.success();
    assert!(
        !run.output.stderr.contains("owned"),
        "{}",
        run.output.stderr
    );
    assert!(
        !run.output.stdout.contains("owned"),
        "{}",
        run.output.stdout
    );
    assert!(
        run.output
            .stdout
            .contains("warn  print.rego (print.rego:3): printed"),
        "{}",
        run.output.stdout
    );
}
