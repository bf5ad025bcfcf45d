//! `hub check` (issue 29, item 3): each deployed component's `check` verb
//! run read-only with its recorded parameters, its health kept in the
//! state, shown by `explain` and `state list`, and selected on by
//! `--status`.

use crate::common::{hub_pinned, pinned_command, read_documents, Output, Test};
use sha2::{Digest, Sha256};

/// A stack of four components, deployed: `ok` in sync, `drift` drifted,
/// `broken` whose check fails (and prints the secret parameter), `plain`
/// without a check. Every check prints the recorded `replicas`.
fn shop() -> Test {
    let mut test = Test::new().file(
        "hub.yaml",
        "
        kind: stack
        meta: {name: shop}
        components:
        - {name: ok, source: {dir: c/ok}}
        - {name: drift, source: {dir: c/drift}}
        - {name: broken, source: {dir: c/broken}}
        - {name: plain, source: {dir: c/plain}}
        parameters:
        - {name: replicas, value: 2}
        - {name: db.password, value: hunter2-secret}
        ",
    );
    for name in ["ok", "drift", "broken", "plain"] {
        test = test
            .file(
                &format!("c/{name}/hub-component.yaml"),
                &format!(
                    "kind: component\nmeta: {{name: {name}}}\nparameters:\n- {{name: replicas, env: REPLICAS}}\n- {{name: db.password, env: DB_PASSWORD}}\n"
                ),
            )
            .script(&format!("c/{name}/deploy.sh"), "#!/bin/sh\n")
            .script(&format!("c/{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    let test = test
        .script(
            "c/ok/check.sh",
            "#!/bin/sh\necho \"replicas: $REPLICAS, as deployed\"\n",
        )
        .script(
            "c/drift/check.sh",
            "#!/bin/sh\necho \"replicas: want $REPLICAS, found 3\"\nexit 2\n",
        )
        .script(
            "c/broken/check.sh",
            "#!/bin/sh\necho \"cannot log in with $DB_PASSWORD\" >&2\nexit 1\n",
        );
    hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    test
}

fn health(out: &Output, component: &str) -> yaml_serde::Value {
    let state = read_documents(&out.root.join("hub.yaml.state"))
        .pop()
        .expect("a state");
    state["components"][component]["health"].clone()
}

fn sha256(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

#[test]
fn check_records_the_health_of_each_deployed_component() {
    let test = shop();
    let out = hub_pinned(test.root(), &["check", "hub.yaml", "-s", "hub.yaml.state"]);
    assert_eq!(
        out.status, 1,
        "a failed check fails the command: {}",
        out.stderr
    );
    assert_eq!(
        out.stdout,
        "\
ok: healthy (check.sh)
drift: drifted (check.sh)
  | replicas: want 2, found 3
broken: failed (check.sh)
  | cannot log in with (masked)
  | exit: code 1
plain: unverifiable (no check)
1 healthy, 1 drifted, 1 failed, 1 unverifiable at 2026-01-01T00:00:00Z
"
    );
    out.stderr_has("error: 1 check(s) failed")
        .stderr_has("STATE.logs/NAME.check.log");
    for (component, status) in [
        ("ok", "healthy"),
        ("drift", "drifted"),
        ("broken", "failed"),
        ("plain", "unverifiable"),
    ] {
        let health = health(&out, component);
        assert_eq!(health["status"].as_str(), Some(status), "{component}");
        assert_eq!(health["time"].as_str(), Some("2026-01-01T00:00:00Z"));
    }
    // The evidence is logged masked, and the state keeps its digest.
    let log = std::fs::read_to_string(test.root().join("hub.yaml.state.logs/broken.check.log"))
        .expect("the check's log");
    assert!(log.contains("cannot log in with (masked)\n"), "{log}");
    assert!(!log.contains("hunter2"), "{log}");
    assert_eq!(
        health(&out, "broken")["digest"].as_str(),
        Some(sha256("cannot log in with (masked)\n").as_str())
    );
    assert_eq!(
        health(&out, "ok")["digest"].as_str(),
        Some(sha256("replicas: 2, as deployed\n").as_str())
    );
    assert!(health(&out, "plain").get("digest").is_none());
    let state = std::fs::read_to_string(test.root().join("hub.yaml.state")).expect("state");
    assert!(!state.contains("hub.yaml.state.lock"));
    assert!(!test.root().join("hub.yaml.state.lock").exists());
}

#[test]
fn checks_see_the_parameters_the_state_recorded_not_the_stack_as_it_is_now() {
    let test = shop();
    let stack = std::fs::read_to_string(test.root().join("hub.yaml")).expect("stack");
    std::fs::write(
        test.root().join("hub.yaml"),
        stack.replace("value: 2", "value: 7"),
    )
    .expect("write");
    let out = hub_pinned(
        test.root(),
        &[
            "check",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "-c",
            "ok,drift",
        ],
    );
    assert_eq!(out.status, 0, "drift alone exits 0: {}", out.stderr);
    assert_eq!(
        out.stdout,
        "\
ok: healthy (check.sh)
drift: drifted (check.sh)
  | replicas: want 2, found 3
1 healthy, 1 drifted, 0 failed, 0 unverifiable at 2026-01-01T00:00:00Z
"
    );
}

#[test]
fn markdown_and_detailed_exitcode_make_a_scheduled_job_s_issue() {
    let test = shop();
    let out = hub_pinned(
        test.root(),
        &[
            "check",
            "hub.yaml",
            "-s",
            "hub.yaml.state",
            "-c",
            "ok,drift,plain",
            "--format",
            "markdown",
            "--detailed-exitcode",
        ],
    );
    assert_eq!(out.status, 2, "drifted, none failed: {}", out.stderr);
    assert_eq!(
        out.stdout,
        "\
## Drift check of `shop`

Checked at 2026-01-01T00:00:00Z: 1 healthy, 1 drifted, 0 failed, 1 unverifiable.

| Component | Health | Checked by |
|---|---|---|
| ok | ✅ healthy | `check.sh` |
| drift | ⚠️ drifted | `check.sh` |
| plain | ❔ unverifiable | no check |

### drift: drifted

```text
replicas: want 2, found 3
```
"
    );
    let healthy = hub_pinned(
        test.root(),
        &["check", "hub.yaml", "-c", "ok", "--detailed-exitcode"],
    );
    assert_eq!(healthy.status, 0, "{}", healthy.stderr);
    let failed = hub_pinned(test.root(), &["check", "hub.yaml", "--detailed-exitcode"]);
    assert_eq!(
        failed.status, 1,
        "a failure outweighs a drift: {}",
        failed.stderr
    );
}

#[test]
fn status_selects_components_by_their_recorded_health() {
    let test = shop();
    hub_pinned(test.root(), &["check", "hub.yaml"]);
    let plan = hub_pinned(
        test.root(),
        &["plan", "hub.yaml", "--status", "drifted,failed"],
    );
    plan.success();
    assert!(
        plan.stdout.contains("waves:\n  1. drift, broken\n"),
        "{}",
        plan.stdout
    );
    let deploy = hub_pinned(test.root(), &["deploy", "hub.yaml", "--status", "drifted"]);
    deploy.success();
    deploy.stderr_has("hub: deploy drift (1/1)\n");
    assert!(!deploy.stderr.contains("broken"), "{}", deploy.stderr);
    // A new deploy forgets the health the last check recorded.
    assert!(health(&deploy, "drift").is_null());
    assert_eq!(health(&deploy, "broken")["status"].as_str(), Some("failed"));
    let again = hub_pinned(test.root(), &["deploy", "hub.yaml", "--status", "drifted"]);
    again.success();
    assert!(!again.stderr.contains("hub: deploy"), "{}", again.stderr);
    again.stderr_has("hub: no component has the health drifted: nothing to do");
    let rechecked = hub_pinned(
        test.root(),
        &["check", "hub.yaml", "--status", "unverifiable"],
    );
    rechecked.success();
    assert_eq!(
        rechecked.stdout,
        "plain: unverifiable (no check)\n0 healthy, 0 drifted, 0 failed, 1 unverifiable at 2026-01-01T00:00:00Z\n"
    );
    let clash = hub_pinned(
        test.root(),
        &["plan", "hub.yaml", "--status", "failed", "-c", "ok"],
    );
    assert_eq!(clash.status, 2, "{}", clash.stderr);
    clash.stderr_has("'--status <LIST>' cannot be used with '--components <LIST>'");
}

#[test]
fn explain_and_state_list_show_the_health() {
    let test = shop();
    hub_pinned(test.root(), &["check", "hub.yaml", "-c", "ok,drift"]);
    let list = hub_pinned(test.root(), &["state", "list", "-s", "hub.yaml.state"]);
    list.success();
    assert_eq!(
        list.stdout,
        "\
NAME    STATUS    UPDATED               HEALTH   OPERATION
ok      deployed  2026-01-01T00:00:00Z  healthy  deploy op-1 (success)
drift   deployed  2026-01-01T00:00:00Z  drifted  deploy op-1 (success)
broken  deployed  2026-01-01T00:00:00Z  -        deploy op-1 (success)
plain   deployed  2026-01-01T00:00:00Z  -        deploy op-1 (success)
"
    );
    let explained = hub_pinned(test.root(), &["explain", "hub.yaml.state", "-c", "drift"]);
    explained.success();
    assert!(
        explained
            .stdout
            .contains("health: drifted (checked 2026-01-01T00:00:00Z)"),
        "{}",
        explained.stdout
    );
    let json = hub_pinned(test.root(), &["explain", "hub.yaml.state", "--json"]);
    let document: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    assert_eq!(
        document["components"]["drift"]["health"]["status"],
        serde_json::json!("drifted")
    );
}

/// Two checks that each wait for the other to start: they pass only when
/// they run at once. Neither finds the state's lock held: it is taken only
/// to write the results.
#[test]
fn checks_run_in_parallel_without_holding_the_lock() {
    let check = |me: &str, other: &str| {
        format!(
            "#!/bin/sh\n\
             test -e \"$HUB_STATE.lock\" && {{ echo 'the lock is held'; exit 1; }}\n\
             touch ../{me}.started\n\
             i=0\n\
             while [ ! -e ../{other}.started ]; do\n\
               i=$((i+1)); [ $i -gt 200 ] && {{ echo 'alone'; exit 1; }}\n\
               sleep 0.05\n\
             done\n"
        )
    };
    let test = Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: pair}
            components:
            - {name: a, source: {dir: c/a}}
            - {name: b, source: {dir: c/b}}
            ",
        )
        .file(
            "c/a/hub-component.yaml",
            "kind: component\nmeta: {name: a}\n",
        )
        .file(
            "c/b/hub-component.yaml",
            "kind: component\nmeta: {name: b}\n",
        )
        .script("c/a/deploy.sh", "#!/bin/sh\n")
        .script("c/b/deploy.sh", "#!/bin/sh\n")
        .script("c/a/check.sh", &check("a", "b"))
        .script("c/b/check.sh", &check("b", "a"));
    hub_pinned(test.root(), &["deploy", "hub.yaml"]).success();
    let out = hub_pinned(test.root(), &["check", "hub.yaml", "-j", "2"]);
    assert_eq!(
        out.stdout,
        "a: healthy (check.sh)\nb: healthy (check.sh)\n2 healthy, 0 drifted, 0 failed, 0 unverifiable at 2026-01-01T00:00:00Z\n",
        "{}", out.stderr
    );
    out.success();
}

#[test]
fn a_component_the_state_does_not_record_as_deployed_is_not_checked() {
    let test = shop();
    hub_pinned(test.root(), &["undeploy", "hub.yaml", "-c", "plain"]).success();
    let out = hub_pinned(test.root(), &["check", "hub.yaml", "-c", "ok,plain"]);
    out.success()
        .stderr_has("hub: plain: not deployed according to the state, not checked");
    assert_eq!(
        out.stdout,
        "ok: healthy (check.sh)\n1 healthy, 0 drifted, 0 failed, 0 unverifiable at 2026-01-01T00:00:00Z\n"
    );
    let no_state = pinned_command(test.root(), &["check", "hub.yaml", "-s", "none.state"])
        .output()
        .expect("run hub");
    assert_eq!(no_state.status.code(), Some(1));
}

/// A folder of `*.tf` files without a check of its own: hub's built-in
/// Terraform runs `terraform plan -detailed-exitcode` with the recorded
/// parameters. Skipped without a Terraform program (a failure under CI).
#[test]
fn a_terraform_folder_is_checked_with_plan_detailed_exitcode() {
    let Some(terraform) = crate::terraform::terraform_or_skip() else {
        return;
    };
    let terraform = terraform.display().to_string();
    let test = Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: tf}
            components:
            - {name: net, source: {dir: net}}
            parameters:
            - {name: cidr, value: 10.1.0.0/16}
            ",
        )
        .file(
            "net/hub-component.yaml",
            "kind: component\nmeta: {name: net}\nparameters:\n- {name: cidr}\n",
        )
        .file(
            "net/main.tf",
            "variable \"cidr\" { type = string }\noutput \"cidr\" { value = var.cidr }\n",
        );
    let hub = |args: &[&str]| {
        let out = pinned_command(test.root(), args)
            .env("HUB_TERRAFORM", &terraform)
            .env("CHECKPOINT_DISABLE", "1")
            .output()
            .expect("run hub");
        Output::of(out, test.root())
    };
    hub(&["deploy", "hub.yaml"]).success();
    let in_sync = hub(&["check", "hub.yaml", "--detailed-exitcode"]);
    assert_eq!(
        in_sync.stdout,
        "net: healthy (terraform plan -detailed-exitcode)\n1 healthy, 0 drifted, 0 failed, 0 unverifiable at 2026-01-01T00:00:00Z\n",
        "{}", in_sync.stderr
    );
    in_sync.success();
    // What is deployed no longer matches its configuration.
    std::fs::write(
        test.root().join("net/main.tf"),
        "variable \"cidr\" { type = string }\noutput \"cidr\" { value = \"${var.cidr}-changed\" }\n",
    )
    .expect("write");
    let drifted = hub(&["check", "hub.yaml", "--detailed-exitcode"]);
    assert_eq!(drifted.status, 2, "{}", drifted.stderr);
    assert!(
        drifted.stdout.starts_with(
            "net: drifted (terraform plan -detailed-exitcode)\n  | Changes to Outputs:\n"
        ),
        "{}",
        drifted.stdout
    );
    assert!(
        drifted
            .stdout
            .contains("  |   ~ cidr = \"10.1.0.0/16\" -> \"10.1.0.0/16-changed\"\n"),
        "{}",
        drifted.stdout
    );
    assert_eq!(health(&drifted, "net")["status"].as_str(), Some("drifted"));
}

/// The built-in Terraform check runs under `--timeout` like any check: a
/// `terraform plan` that hangs is stopped, and the component is reported
/// failed with why, instead of `hub check` waiting for ever. The program is
/// a script standing in for Terraform (named by `HUB_TERRAFORM`).
#[test]
fn a_hung_terraform_plan_is_stopped_by_the_check_timeout() {
    let test = Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: tf}
            components:
            - {name: net, source: {dir: net}}
            ",
        )
        .file("net/hub-component.yaml", "kind: component\nmeta: {name: net}\n")
        .script("net/deploy.sh", "#!/bin/sh\ntrue\n")
        .script(
            "fake-terraform",
            "#!/bin/sh\ncase \"$1\" in\n  init) echo initialised; exit 0 ;;\n  plan) echo planning; sleep 60; exit 0 ;;\nesac\nexit 1\n",
        );
    hub_pinned(test.root(), &["deploy", "hub.yaml"]).success();
    // Now a folder of `*.tf` files without a check of its own.
    std::fs::remove_file(test.root().join("net/deploy.sh")).expect("remove deploy.sh");
    std::fs::write(
        test.root().join("net/main.tf"),
        "output \"x\" { value = 1 }\n",
    )
    .expect("write main.tf");
    let started = std::time::Instant::now();
    let out = pinned_command(test.root(), &["check", "hub.yaml", "--timeout", "2s"])
        .env("HUB_TERRAFORM", test.root().join("fake-terraform"))
        .output()
        .expect("run hub");
    let out = Output::of(out, test.root());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "hub check waited {:?} for a hung plan",
        started.elapsed()
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("net: failed (terraform plan -detailed-exitcode)\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("ended: timed out"), "{}", out.stdout);
    assert_eq!(health(&out, "net")["status"].as_str(), Some("failed"));
}

/// make exits 2 whatever went wrong: the recipe's own status, which make
/// prints, tells drift from failure.
#[test]
fn a_makefile_target_check_reports_its_recipe_s_status() {
    let test = Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: made}
            components:
            - {name: drifts, source: {dir: c/drifts}}
            - {name: fails, source: {dir: c/fails}}
            ",
        )
        .file(
            "c/drifts/hub-component.yaml",
            "kind: component\nmeta: {name: drifts}\n",
        )
        .file(
            "c/fails/hub-component.yaml",
            "kind: component\nmeta: {name: fails}\n",
        )
        .file(
            "c/drifts/Makefile",
            "deploy:\n\t@true\ncheck:\n\t@echo 'size: want 1, found 2'; exit 2\n",
        )
        .file(
            "c/fails/Makefile",
            "deploy:\n\t@true\ncheck:\n\t@echo 'no route to host'; exit 1\n",
        );
    hub_pinned(test.root(), &["deploy", "hub.yaml"]).success();
    let out = hub_pinned(test.root(), &["check", "hub.yaml"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "\
drifts: drifted (make check)
  | size: want 1, found 2
  | make: *** [Makefile:4: check] Error 2
fails: failed (make check)
  | no route to host
  | make: *** [Makefile:4: check] Error 1
  | exit: code 1
0 healthy, 1 drifted, 1 failed, 0 unverifiable at 2026-01-01T00:00:00Z
"
    );
}

#[test]
fn a_link_planted_at_a_check_log_is_not_written_through() {
    let test = shop();
    let outside = tempfile::tempdir().expect("temporary folder");
    let target = outside.path().join("victim");
    std::fs::write(&target, "untouched\n").expect("write");
    let logs = test.root().join("hub.yaml.state.logs");
    std::fs::create_dir_all(&logs).expect("logs folder");
    std::os::unix::fs::symlink(&target, logs.join("drift.check.log")).expect("symlink");
    let out = hub_pinned(test.root(), &["check", "hub.yaml", "-s", "hub.yaml.state"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(
        std::fs::read_to_string(&target).expect("read"),
        "untouched\n"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&target)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_ne!(mode, 0o600, "the link's target was not made hub's");
    // The other components' logs are written.
    let ok = std::fs::read_to_string(logs.join("ok.check.log")).expect("ok's log");
    assert!(!ok.is_empty());
}
