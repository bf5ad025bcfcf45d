//! Issue 26, items 5, 8 and 9 on the real binary: `lifecycle.protected`
//! refuses what would destroy or forget a component, and
//! `lifecycle.retry` runs a failed component again.

use crate::common::{hub_pinned, state_entries, Test};
use std::path::Path;

/// Two components, `db` and `app`, whose scripts say what they do, in a
/// stack that protects `db` (its entry on line 11, column 7).
fn protected_stack() -> Test {
    let mut test = Test::new();
    for name in ["app", "db"] {
        test = test
            .file(
                &format!("components/{name}/hub-component.yaml"),
                &format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n"),
            )
            .script(
                &format!("components/{name}/deploy.sh"),
                &format!("#!/bin/sh\necho deploying {name}\n"),
            )
            .script(
                &format!("components/{name}/undeploy.sh"),
                &format!("#!/bin/sh\necho undeploying {name}\n"),
            );
    }
    test.file(
        "hub.yaml",
        "
        version: 1
        kind: stack
        meta: {name: guarded}
        components:
          - name: db
            source: {dir: components/db}
          - name: app
            source: {dir: components/app}
        lifecycle:
          protected:
            - db
        ",
    )
}

fn deployed(dir: &Path) {
    hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
}

/// The refusal, its location and its hint, exactly.
fn refused(operation: &str, verb: &str, at: &str) -> String {
    format!(
        "error: refusing to {operation} `db`: the stack's `lifecycle.protected` lists it; nothing was run\n  \
         --> {at}\n  \
         help: remove `db` from `lifecycle.protected` in the stack to {verb} it; no flag overrides the protection\n"
    )
}

#[test]
fn undeploy_of_a_protected_component_is_refused_before_anything_runs() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    let before = std::fs::read(dir.join("hub.yaml.state")).expect("state");
    let out = hub_pinned(dir, &["undeploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.failure();
    assert_eq!(out.stderr, refused("undeploy", "undeploy", "hub.yaml:11:7"));
    assert!(!out.stdout.contains("undeploying"), "{}", out.stdout);
    assert_eq!(
        std::fs::read(dir.join("hub.yaml.state")).expect("state"),
        before
    );
    // `--force` is no way through.
    let out = hub_pinned(
        dir,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state", "--force"],
    );
    assert_eq!(out.stderr, refused("undeploy", "undeploy", "hub.yaml:11:7"));
    // Components it does not protect undeploy as before.
    let out = hub_pinned(
        dir,
        &["undeploy", "hub.yaml", "-s", "hub.yaml.state", "-c", "app"],
    );
    out.success();
    assert!(out.stdout.contains("undeploying app"), "{}", out.stdout);
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
}

#[test]
fn a_plan_that_undeploys_or_replaces_a_protected_component_is_refused() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    hub_pinned(dir, &["elaborate", "hub.yaml", "-o", "hub.yaml.elaborate"]).success();
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml.elaborate",
            "--undeploy",
            "-s",
            "hub.yaml.state",
        ],
    );
    out.failure();
    // In the elaborated file, the entry `hub elaborate` wrote.
    let text = std::fs::read_to_string(dir.join("hub.yaml.elaborate")).expect("elaborated");
    let line = 2 + text
        .lines()
        .position(|l| l == "  protected:")
        .expect("the protected list in the elaborated file");
    let at = out.stderr.lines().nth(1).expect("location line");
    assert!(
        at.starts_with(&format!("  --> hub.yaml.elaborate:{line}:")),
        "{}",
        out.stderr
    );
    let out = hub_pinned(
        dir,
        &[
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--replace",
            "db",
        ],
    );
    out.failure();
    assert_eq!(
        out.stderr,
        refused("replace (`--replace`)", "replace", "hub.yaml:11:7")
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--replace",
            "db",
        ],
    );
    assert_eq!(
        out.stderr,
        refused("replace (`--replace`)", "replace", "hub.yaml:11:7")
    );
}

#[test]
fn prune_of_a_protected_component_no_longer_in_the_stack_is_refused() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    std::fs::write(
        dir.join("hub.yaml"),
        "version: 1\nkind: stack\nmeta: {name: guarded}\ncomponents:\n  - name: app\n    \
         source: {dir: components/app}\nlifecycle:\n  protected: [db]\n",
    )
    .expect("write");
    let out = hub_pinned(
        dir,
        &["deploy", "hub.yaml", "-s", "hub.yaml.state", "--prune"],
    );
    out.failure();
    assert_eq!(
        out.stderr,
        refused("prune (`--prune`)", "undeploy", "hub.yaml:8:15")
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
}

#[test]
fn state_rm_of_a_protected_component_is_refused_with_the_stack() {
    let (_, dir) = protected_stack().run_keep();
    let dir = dir.path();
    deployed(dir);
    let rm = ["state", "rm", "db", "-s", "hub.yaml.state", "--yes"];
    let out = hub_pinned(dir, &[&rm[..], &["-m", "hub.yaml"]].concat());
    out.failure();
    assert_eq!(
        out.stderr,
        refused("forget (`hub state rm`)", "forget", "hub.yaml:11:7")
    );
    let out = crate::common::pinned_command(dir, &rm)
        .env("HUB_ELABORATE", "hub.yaml")
        .output()
        .expect("run hub");
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
    // An unprotected component is forgotten as before.
    hub_pinned(
        dir,
        &[
            "state",
            "rm",
            "app",
            "-s",
            "hub.yaml.state",
            "--yes",
            "-m",
            "hub.yaml",
        ],
    )
    .success();
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["db"]);
}

#[test]
fn a_typo_of_protected_is_named() {
    let out = Test::new()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: s}\nlifecycle:\n  protectd: [db]\n",
        )
        .args(&["elaborate", "hub.yaml", "-o", "out.elaborate"])
        .run();
    out.failure();
    assert!(
        out.stderr.contains("did you mean `protected`"),
        "{}",
        out.stderr
    );
}

/// A component `flaky` whose deploy fails with `message` until its
/// `FAILS`-th run has passed (it counts its runs in `count`), in a stack
/// with `retry` as its `lifecycle.retry`.
fn flaky_stack(fails: u32, message: &str, retry: &str) -> Test {
    flaky_stack_printing(fails, &format!("echo \"{message}\""), retry)
}

/// [`flaky_stack`] whose failing runs run the shell command `print`.
fn flaky_stack_printing(fails: u32, print: &str, retry: &str) -> Test {
    Test::new()
        .file(
            "components/flaky/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: flaky}\n",
        )
        .script(
            "components/flaky/deploy.sh",
            &format!(
                "#!/bin/sh\nn=$(cat count 2>/dev/null || echo 0); n=$((n+1)); echo $n > count\n\
                 if [ \"$n\" -le {fails} ]; then {print}; exit 1; fi\necho deployed on run $n\n"
            ),
        )
        .file(
            "hub.yaml",
            &format!(
                "version: 1\nkind: stack\nmeta: {{name: retrying}}\ncomponents:\n  - name: flaky\n    \
                 source: {{dir: components/flaky}}\nlifecycle:\n  retry:\n{retry}"
            ),
        )
}

fn runs(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("components/flaky/count"))
        .expect("count")
        .trim()
        .to_string()
}

fn entry_message(dir: &Path) -> String {
    let state = crate::common::read_documents(&dir.join("hub.yaml.state"));
    state[0]["components"]["flaky"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn a_failure_that_matches_is_retried_and_the_summary_says_which_attempt() {
    let (_, dir) = flaky_stack(
        1,
        "Error: connection reset by peer",
        "    flaky: {attempts: 3, delay: 10ms, on: [\"connection reset\"]}\n",
    )
    .run_keep();
    let dir = dir.path();
    let out = hub_pinned(
        dir,
        &[
            "deploy",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--report",
            "run.json",
        ],
    );
    out.success();
    assert_eq!(runs(dir), "2");
    // The reports say which attempt it ended on.
    let report: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("run.json")).expect("report"))
            .expect("JSON");
    assert_eq!(report["components"][0]["attempts"], serde_json::json!(2));
    hub_pinned(dir, &["report", "run.json", "-o", "run.html"]).success();
    let page = std::fs::read_to_string(dir.join("run.html")).expect("page");
    assert!(page.contains("<tr><th>attempts</th><td>2</td>"), "{page}");
    assert!(
        out.stderr.contains(
            "hub: flaky: attempt 1 of 3 failed (exited with code 1); trying again in 10ms\n"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("  flaky  deployed (attempt 2 of 3)  "),
        "{}",
        out.stderr
    );
    assert_eq!(
        entry_message(dir),
        "attempt 2 of 3; attempt 1: exited with code 1"
    );
}

#[test]
fn a_failure_printed_on_stderr_is_matched_too() {
    // Terraform, the AWS CLI and kubectl print transient errors on stderr.
    let (_, dir) = flaky_stack_printing(
        1,
        "echo 'error: connection reset by peer' >&2",
        "    flaky: {attempts: 3, delay: 10ms, on: [\"connection reset\"]}\n",
    )
    .run_keep();
    let dir = dir.path();
    let out = hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.success();
    assert_eq!(runs(dir), "2");
    assert!(
        out.stderr.contains(
            "hub: flaky: attempt 1 of 3 failed (exited with code 1); trying again in 10ms\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn the_plan_says_when_a_component_is_retried() {
    let out = flaky_stack(
        0,
        "",
        "    default: {attempts: 2}\n    flaky: {attempts: 3, delay: 10s, backoff: 2, on: [reset, timeout]}\n",
    )
    .args(&["plan", "hub.yaml", "-n"])
    .run();
    out.success();
    assert!(
        out.stdout.contains(
            "  retry: up to 3 attempts, 10s apart (backoff 2), when the output matches `reset` or `timeout` (lifecycle.retry)\n"
        ),
        "{}",
        out.stdout
    );
}

#[test]
fn attempts_run_out_and_the_failure_names_the_last() {
    let (_, dir) =
        flaky_stack(9, "Error: connection reset", "    default: {attempts: 3}\n").run_keep();
    let dir = dir.path();
    let out = hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.failure();
    assert_eq!(runs(dir), "3");
    assert_eq!(
        out.stderr
            .matches("failed (exited with code 1); trying again in 0s")
            .count(),
        2,
        "{}",
        out.stderr
    );
    assert!(
        entry_message(dir).ends_with("deploy.sh` exited with code 1 (attempt 3 of 3)"),
        "{}",
        entry_message(dir)
    );
}

#[test]
fn a_failure_whose_output_matches_no_pattern_is_not_retried() {
    let (_, dir) = flaky_stack(
        1,
        "Error: syntax error",
        "    flaky: {attempts: 3, on: [\"connection reset\", \"timeout\"]}\n",
    )
    .run_keep();
    let dir = dir.path();
    let out = hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.failure();
    assert_eq!(runs(dir), "1");
    assert!(
        out.stderr.contains(
            "hub: flaky: attempt 1 of 3 failed (exited with code 1); not retried: its output matches no `lifecycle.retry` pattern\n"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn an_interrupt_stops_the_retries() {
    let (_, dir) = flaky_stack(
        9,
        "Error: connection reset",
        "    flaky: {attempts: 5, delay: 1m}\n",
    )
    .run_keep();
    let dir = dir.path();
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(dir)
        .args(["deploy", "hub.yaml", "-s", "hub.yaml.state"])
        .envs(crate::common::PINNED)
        .env_remove("ENV")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run hub");
    // The first attempt has failed once the count is written and the
    // wait of a minute has begun.
    let started = std::time::Instant::now();
    while std::fs::read_to_string(dir.join("components/flaky/count")).is_err() {
        assert!(
            started.elapsed().as_secs() < 30,
            "the first attempt never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: kill(2) on the pid of the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let out = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{stderr}");
    assert!(started.elapsed().as_secs() < 30, "{stderr}");
    assert_eq!(runs(dir), "1");
    assert!(stderr.contains("trying again in 1m"), "{stderr}");
    assert!(
        stderr.contains("`flaky` was interrupted by SIGINT"),
        "{stderr}"
    );
}

#[test]
fn a_failed_undeploy_is_retried_too() {
    let (_, dir) = flaky_stack(0, "", "    flaky: {attempts: 2}\n")
        .script(
            "components/flaky/undeploy.sh",
            "#!/bin/sh\nif [ ! -f tried ]; then touch tried; echo busy; exit 2; fi\necho undeployed\n",
        )
        .run_keep();
    let dir = dir.path();
    hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    let out = hub_pinned(dir, &["undeploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.success();
    assert!(
        out.stderr.contains(
            "hub: flaky: attempt 1 of 2 failed (exited with code 2); trying again in 0s\n"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("  flaky  undeployed (attempt 2 of 2)  "),
        "{}",
        out.stderr
    );
}

#[test]
fn a_bad_retry_entry_is_refused_before_anything_runs() {
    let (_, dir) = flaky_stack(0, "", "    flaky: {attempts: 0}\n").run_keep();
    let out = hub_pinned(dir.path(), &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    out.failure();
    assert!(
        out.stderr.starts_with(
            "error: the `lifecycle.retry` entry of `flaky`: `attempts` must be 1 or more, not 0\n"
        ),
        "{}",
        out.stderr
    );
    assert!(!dir.path().join("components/flaky/count").exists());
}

/// The protected stack's components without the protection, `db` listed
/// as `name` and `moved` as the stack's `moved:` list.
fn renamed_stack(dir: &Path, name: &str, moved: &str) {
    std::fs::write(
        dir.join("hub.yaml"),
        format!(
            "version: 1\nkind: stack\nmeta: {{name: guarded}}\ncomponents:\n  - name: {name}\n    \
             source: {{dir: components/db}}\n  - name: app\n    source: {{dir: components/app}}\n\
             moved:\n{moved}"
        ),
    )
    .expect("write");
}

fn unprotected_deployed() -> tempfile::TempDir {
    let (_, dir) = protected_stack().run_keep();
    renamed_stack(dir.path(), "db", "");
    deployed(dir.path());
    dir
}

#[test]
fn a_moved_component_keeps_its_state_under_its_new_name() {
    let dir = unprotected_deployed();
    let dir = dir.path();
    renamed_stack(dir, "database", "  - {from: db, to: database}\n");
    let out = hub_pinned(dir, &["plan", "hub.yaml", "-s", "hub.yaml.state"]);
    out.success();
    assert!(
        out.stdout
            .contains("\nrenamed in the state (`moved`):\n  moved db → database\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("0 to create"), "{}", out.stdout);
    assert!(
        !out.stdout.contains("removed from the stack"),
        "{}",
        out.stdout
    );
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--format",
            "markdown",
        ],
    );
    assert!(
        out.stdout
            .contains("\nRenamed in the state (`moved`):\n\n- moved `db` → `database`\n"),
        "{}",
        out.stdout
    );
    let out = hub_pinned(
        dir,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "--format",
            "json",
        ],
    );
    let json: serde_json::Value = serde_json::from_str(&out.stdout).expect("json");
    assert_eq!(
        json["moved"],
        serde_json::json!([{"from": "db", "to": "database"}])
    );
    // `hub plan` changed nothing.
    assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
    let out = hub_pinned(
        dir,
        &["deploy", "hub.yaml", "-s", "hub.yaml.state", "--changed"],
    );
    out.success();
    assert!(
        out.stderr
            .starts_with("hub: moved `db` → `database` in the state (`moved`)\n"),
        "{}",
        out.stderr
    );
    // Renamed as `hub state mv` renames: the fingerprint still holds.
    assert!(
        out.stderr.contains("  database  unchanged "),
        "{}",
        out.stderr
    );
    assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
    assert_eq!(
        state_entries(&dir.join("hub.yaml.state")),
        ["app", "database"]
    );
}

#[test]
fn a_chain_of_moves_ends_where_the_last_one_points() {
    let dir = unprotected_deployed();
    let dir = dir.path();
    renamed_stack(
        dir,
        "storage",
        "  - {from: db, to: database}\n  - {from: database, to: storage}\n",
    );
    let out = hub_pinned(dir, &["plan", "hub.yaml", "-s", "hub.yaml.state"]);
    assert!(
        out.stdout.contains("  moved db → storage\n"),
        "{}",
        out.stdout
    );
    hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    assert_eq!(
        state_entries(&dir.join("hub.yaml.state")),
        ["app", "storage"]
    );
}

#[test]
fn conflicting_moves_are_refused_before_anything_runs() {
    let dir = unprotected_deployed();
    let dir = dir.path();
    let refused = |moved: &str, name: &str| {
        renamed_stack(dir, name, moved);
        let out = hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
        out.failure();
        assert!(!out.stdout.contains("deploying"), "{}", out.stdout);
        assert_eq!(state_entries(&dir.join("hub.yaml.state")), ["app", "db"]);
        out.stderr
    };
    assert_eq!(
        refused("  - {from: x, to: y}\n  - {from: y, to: x}\n", "db"),
        "error: `moved` entries form a cycle: x → y → x\n  --> hub.yaml:10:3\n  \
         help: fix or remove the entry; a move says `from: OLD-NAME, to: NEW-NAME`\n"
    );
    assert_eq!(
        refused("  - {from: app, to: db}\n", "db"),
        "error: `moved` moves `app`, which the stack still lists\n  --> hub.yaml:10:3\n  \
         help: rename the component in `components:` (a move is from the old name to the new one)\n"
    );
    assert!(
        refused("  - {from: db, to: a}\n  - {from: db, to: b}\n", "a").starts_with(
            "error: `moved` moves `db` twice: to `a` and to `b`\n  --> hub.yaml:11:3\n"
        )
    );
    assert!(refused("  - {from: db, to: elsewhere}\n", "database")
        .starts_with("error: `moved` moves `db` to `elsewhere`, which the stack does not list\n"));
    // The state holds both ends: `app` is already deployed.
    std::fs::write(
        dir.join("hub.yaml"),
        "version: 1\nkind: stack\nmeta: {name: guarded}\ncomponents:\n  - name: app\n    \
         source: {dir: components/app}\nmoved:\n  - {from: db, to: app}\n",
    )
    .expect("write");
    let out = hub_pinned(dir, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]);
    assert_eq!(
        out.stderr,
        "error: `moved` moves `db` to `app`, but the state holds both\n  --> hub.yaml:8:3\n  \
         help: keep one of them: forget `db` (`hub state rm db`) or `app`, or remove the entry from `moved`\n"
    );
}

#[test]
fn protected_retry_and_moved_merge_across_from_stack() {
    let out = Test::new()
        .file(
            "components/a/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: a}\n",
        )
        .file(
            "components/b/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: b}\n",
        )
        .file(
            "base/hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: base}\ncomponents:\n  - name: a\n    \
             source: {dir: ../components/a}\nlifecycle:\n  protected: [a]\n  retry:\n    \
             a: {attempts: 2}\n    default: {attempts: 3}\nmoved:\n  - {from: old-a, to: a}\n",
        )
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: child, fromStack: base}\ncomponents:\n  \
             - name: b\n    source: {dir: components/b}\nlifecycle:\n  protected: [b]\n  \
             retry:\n    a: {attempts: 5}\nmoved:\n  - {from: old-b, to: b}\n",
        )
        .args(&["elaborate", "hub.yaml", "-o", "-"])
        .run();
    out.success();
    let stack = &out.stdout_documents()[0];
    assert_eq!(
        stack["lifecycle"]["protected"],
        crate::common::yaml("[a, b]")
    );
    assert_eq!(
        stack["lifecycle"]["retry"],
        crate::common::yaml("{a: {attempts: 5}, default: {attempts: 3}}")
    );
    assert_eq!(
        stack["moved"],
        crate::common::yaml("[{from: old-a, to: a}, {from: old-b, to: b}]")
    );
}
