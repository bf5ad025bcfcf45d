//! `hub plan` is the deploy that follows: each component's action
//! (`create`, `update`, `replace`, `rerun`, `no-op`, `delete`, `skip`) and the
//! components a deploy with the same arguments runs; removed components and
//! `deploy --prune`.

use crate::common::{demo_copy, hub_pinned, read_documents, state_entries, Output, Test};
use crate::plan::{deploy_demo, plan};
use std::collections::BTreeSet;
use std::path::Path;

/// The components a run's summary table shows as run (deployed,
/// undeployed, failed), and those it shows at all.
fn ran(out: &Output) -> BTreeSet<String> {
    let mut lines = out.stderr.lines().skip_while(|l| !l.ends_with("summary:"));
    lines.next();
    lines
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| {
            let mut words = l.split_whitespace();
            let (name, status) = (words.next()?, words.next()?);
            ["deployed", "undeployed", "error"]
                .contains(&status)
                .then(|| name.to_string())
        })
        .collect()
}

/// The plan's JSON document.
fn planned(out: &Output) -> serde_json::Value {
    out.success();
    serde_json::from_str(&out.stdout).expect("a JSON plan")
}

/// Each component's action, removed components included.
fn actions(plan: &serde_json::Value) -> Vec<(String, String)> {
    let listed = plan["components"].as_array().into_iter().flatten();
    let removed = plan["removed"].as_array().into_iter().flatten();
    listed
        .chain(removed)
        .map(|c| {
            let name = c["name"].as_str().unwrap_or_default().to_string();
            (name, c["action"].as_str().unwrap_or_default().to_string())
        })
        .collect()
}

/// The components the plan says the run starts: those whose action runs,
/// and, with `--prune`, the removed ones.
fn to_run(plan: &serde_json::Value) -> BTreeSet<String> {
    let runs = |c: &&serde_json::Value| {
        ["create", "update", "replace", "rerun", "delete"]
            .contains(&c["action"].as_str().unwrap_or(""))
    };
    let mut names: BTreeSet<String> = plan["components"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(runs)
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect();
    if plan["prune"] == true {
        for removed in plan["removed"].as_array().into_iter().flatten() {
            names.insert(removed["name"].as_str().unwrap_or_default().to_string());
        }
    }
    names
}

/// With `--changed`, a component planned to run only if an output it reads
/// of a dependency running first changes (not known before it does) may
/// find them unchanged: the one case where the deploy runs fewer than
/// planned.
fn may_not_run(plan: &serde_json::Value) -> BTreeSet<String> {
    plan["components"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| {
            let reasons = c["reasons"].as_array().into_iter().flatten();
            let reasons: Vec<&str> = reasons.filter_map(|r| r.as_str()).collect();
            !reasons.is_empty()
                && reasons
                    .iter()
                    .all(|r| r.contains("runs first") || r.starts_with("if "))
        })
        .map(|c| c["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn edit(path: &Path, from: &str, to: &str) {
    let text = std::fs::read_to_string(path).expect("read");
    assert!(text.contains(from), "{from:?} in {}", path.display());
    std::fs::write(path, text.replace(from, to)).expect("write");
}

/// The demo without `app` and `monitoring`.
fn remove_app(dir: &Path) {
    let stack = dir.join("hub.yaml");
    edit(
        &stack,
        "  - name: app\n    source:\n      dir: components/app\n    depends: [database]\n  - name: monitoring\n    source:\n      dir: components/monitoring\n    depends: [app]\n",
        "",
    );
    edit(&stack, "  optional: [monitoring]\n", "  optional: []\n");
    edit(
        &stack,
        "    optional: [\"component.monitoring.enabled:monitoring\"]\n",
        "    optional: []\n",
    );
    edit(
        &stack,
        "  - name: app:component.app.url\n    brief: Where the application answers\n",
        "",
    );
}

/// A deploy in which `app` fails, then its script mended.
fn fail_app(dir: &Path) {
    let script = dir.join("components/app/deploy.sh");
    let good = std::fs::read_to_string(&script).expect("script");
    std::fs::write(&script, "#!/bin/sh\nexit 3\n").expect("write");
    let out = hub_pinned(
        dir,
        &["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"],
    );
    out.failure();
    std::fs::write(&script, good).expect("write");
}

struct Scenario {
    name: &'static str,
    /// Deploy the demo first.
    deployed: bool,
    /// What changes between that deploy and the plan.
    change: fn(&Path),
    args: &'static [&'static str],
    /// Actions the scenario is about (others are not checked).
    expect: &'static [(&'static str, &'static str)],
}

const SCENARIOS: &[Scenario] = &[
    Scenario {
        name: "first deploy",
        deployed: false,
        change: |_| {},
        args: &[],
        expect: &[
            ("network", "create"),
            ("app", "create"),
            ("monitoring", "skip"),
        ],
    },
    Scenario {
        name: "again without --changed",
        deployed: true,
        change: |_| {},
        args: &[],
        expect: &[
            ("network", "update"),
            ("app", "update"),
            ("monitoring", "skip"),
        ],
    },
    Scenario {
        name: "again with --changed",
        deployed: true,
        change: |_| {},
        args: &["--changed"],
        expect: &[
            ("network", "no-op"),
            ("database", "no-op"),
            ("app", "no-op"),
        ],
    },
    Scenario {
        name: "--changed after a parameter changed",
        deployed: true,
        change: |dir| edit(&dir.join("params.yaml"), "value: small", "value: large"),
        args: &["--changed"],
        expect: &[
            ("network", "no-op"),
            ("database", "update"),
            ("app", "update"),
        ],
    },
    Scenario {
        name: "--changed after a file changed upstream",
        deployed: true,
        change: |dir| {
            edit(
                &dir.join("components/network/deploy.sh"),
                "set -e\n",
                "set -e\n# touched\n",
            )
        },
        args: &["--changed"],
        expect: &[("network", "update"), ("database", "update")],
    },
    Scenario {
        name: "-c app",
        deployed: true,
        change: |_| {},
        args: &["-c", "app"],
        expect: &[("app", "update")],
    },
    Scenario {
        name: "app+ with --changed and --replace",
        deployed: true,
        change: |_| {},
        args: &["-c", "app+", "--changed", "--replace", "database"],
        expect: &[
            ("network", "no-op"),
            ("database", "rerun"),
            ("app", "update"),
        ],
    },
    Scenario {
        name: "+database",
        deployed: true,
        change: |_| {},
        args: &["-c", "+database"],
        expect: &[
            ("database", "update"),
            ("app", "update"),
            ("monitoring", "skip"),
        ],
    },
    Scenario {
        name: "a failed last run with --changed",
        deployed: true,
        change: fail_app,
        args: &["--changed"],
        expect: &[
            ("network", "no-op"),
            ("database", "no-op"),
            ("app", "rerun"),
        ],
    },
    Scenario {
        name: "an optional component turned on with -j 2",
        deployed: true,
        change: |dir| {
            let stack = dir.join("hub.yaml");
            let text = std::fs::read_to_string(&stack).expect("read");
            let on = text.replace(
                "  - name: component.monitoring.enabled\n    value: false\n",
                "  - name: component.monitoring.enabled\n    value: true\n",
            );
            std::fs::write(&stack, on).expect("write");
        },
        args: &["--changed", "-j", "2"],
        expect: &[("app", "no-op"), ("monitoring", "create")],
    },
    Scenario {
        name: "a removed component with --prune",
        deployed: true,
        change: remove_app,
        args: &["--changed", "--prune"],
        expect: &[("network", "no-op"), ("app", "delete")],
    },
    Scenario {
        name: "a removed component without --prune",
        deployed: true,
        change: remove_app,
        args: &["--changed"],
        expect: &[("network", "no-op"), ("app", "delete")],
    },
];

#[test]
fn the_deploy_runs_exactly_what_the_plan_planned() {
    for scenario in SCENARIOS {
        let (_tmp, dir) = demo_copy();
        if scenario.deployed {
            deploy_demo(&dir);
        }
        (scenario.change)(&dir);
        let mut args = vec!["--format", "json"];
        args.extend(scenario.args);
        let plan = planned(&plan(&dir, &args));
        let actions = actions(&plan);
        for (name, action) in scenario.expect {
            assert!(
                actions.contains(&(name.to_string(), action.to_string())),
                "{}: {name} should be `{action}`: {actions:?}",
                scenario.name
            );
        }
        let mut deploy = vec!["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"];
        deploy.extend(scenario.args);
        let out = hub_pinned(&dir, &deploy);
        out.success();
        let ran = ran(&out);
        let planned = to_run(&plan);
        let extra: Vec<&String> = ran.difference(&planned).collect();
        let missing: BTreeSet<String> = planned.difference(&ran).cloned().collect();
        assert!(
            extra.is_empty() && missing.is_subset(&may_not_run(&plan)),
            "{}: planned {planned:?}, ran {ran:?}\n{}",
            scenario.name,
            out.stderr
        );
    }
}

#[test]
fn an_undeploy_runs_what_the_plan_deletes() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let plan = planned(&plan(&dir, &["--undeploy", "--format", "json"]));
    assert!(actions(&plan).iter().all(|(_, action)| action == "delete"));
    let out = hub_pinned(
        &dir,
        &["undeploy", "hub.yaml", "params.yaml", "-s", "demo.state"],
    );
    out.success();
    assert_eq!(ran(&out), to_run(&plan));
}

#[test]
fn a_plan_without_changed_says_a_deployed_component_runs_again() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    let out = plan(&dir, &[]);
    out.success();
    assert!(
        out.stdout
            .contains("\nnetwork: update (runs again: no --changed)\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.ends_with(
        "Plan: 0 to create, 3 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 1 skipped, 0 would fail\n"
    ));
    let changed = plan(&dir, &["--changed", "--format", "markdown"]);
    changed.success();
    assert!(
        changed.stdout.contains("| `network` | no-op |  |\n"),
        "{}",
        changed.stdout
    );
}

#[test]
fn a_failed_last_run_is_rerun_and_the_detailed_exit_code_says_so() {
    let (_tmp, dir) = demo_copy();
    deploy_demo(&dir);
    fail_app(&dir);
    let out = plan(&dir, &["--changed", "--detailed-exitcode"]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("\napp: rerun (its last run failed (`error`))\n"),
        "{}",
        out.stdout
    );
    assert!(out
        .stdout
        .contains("0 to create, 0 to update, 0 to replace, 1 to rerun"));
}

#[test]
fn plan_refuses_prune_and_changed_with_undeploy() {
    let (_tmp, dir) = demo_copy();
    for flag in ["--prune", "--changed"] {
        plan(&dir, &["--undeploy", flag])
            .failure()
            .stderr_has("it is a flag of a deploy");
    }
}

// ---- removed components and --prune ------------------------------------

/// Components the tests never remove, so that the state still looks like
/// the stack's (at least half of its entries in the stack; else the state
/// is refused as another stack's).
const STAYING: [&str; 2] = ["web", "api"];

/// `base` ← `mid` ← `top`, and `keep`, `web`, `api` on their own; each
/// undeploy appends a line to `undeploy.log` at the root.
fn chain() -> Test {
    let stack = "version: 1
kind: stack
meta: {name: chain}
components:
  - {name: web, source: {dir: components/web}}
  - {name: api, source: {dir: components/api}}
  - {name: keep, source: {dir: components/keep}}
  - {name: base, source: {dir: components/base}}
  - {name: mid, source: {dir: components/mid}, depends: [base]}
  - {name: top, source: {dir: components/top}, depends: [mid]}
";
    let mut test = Test::new().file("hub.yaml", stack);
    for name in ["web", "api", "keep", "base", "mid", "top"] {
        test = test.component_with_undeploy(
            name,
            &format!("  - {{name: who, value: {name}-was-here, env: WHO}}\n"),
            "#!/bin/sh\necho \"$WHO\" >> ../../undeploy.log\n",
        );
    }
    test
}

/// The stack with only the components in `kept` (and [`STAYING`]).
fn keep_only(root: &Path, kept: &[&str]) {
    let path = root.join("hub.yaml");
    let text = std::fs::read_to_string(&path).expect("read");
    let lines: Vec<&str> = text
        .lines()
        .filter(|l| {
            !l.starts_with("  - {name: ")
                || kept
                    .iter()
                    .chain(&STAYING)
                    .any(|k| l.starts_with(&format!("  - {{name: {k},")))
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").expect("write");
}

fn run(root: &Path, args: &[&str]) -> Output {
    let mut all = vec![args[0], "hub.yaml", "-s", "s.state"];
    all.extend(&args[1..]);
    hub_pinned(root, &all)
}

/// The state's entries but [`STAYING`].
fn entries(root: &Path) -> Vec<String> {
    state_entries(&root.join("s.state"))
        .into_iter()
        .filter(|name| !STAYING.contains(&name.as_str()))
        .collect()
}

fn undeploy_log(root: &Path) -> String {
    std::fs::read_to_string(root.join("undeploy.log")).unwrap_or_default()
}

#[test]
fn a_removed_component_is_planned_as_delete_warned_about_and_pruned() {
    let test = chain();
    let root = test.root();
    run(root, &["deploy"]).success();
    keep_only(root, &["keep", "base", "mid"]);
    let out = run(root, &["plan"]);
    out.success();
    let dir = root.join("components/top");
    assert!(
        out.stdout.contains(&format!(
            "\nremoved from the stack (use --prune):\n  top: delete (removed from the stack; implementation in `{}`)\n",
            dir.display()
        )),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains(" 0 to delete,"), "{}", out.stdout);
    let pruned = run(
        root,
        &["plan", "--prune", "--detailed-exitcode", "--changed"],
    );
    assert_eq!(pruned.status, 2, "{}", pruned.stderr);
    assert!(pruned
        .stdout
        .contains("removed from the stack, deleted by --prune:\n"));
    assert!(pruned.stdout.contains(" 1 to delete,"), "{}", pruned.stdout);
    run(root, &["deploy"])
        .success()
        .stderr_has("warning: component `top` is in the state but no longer in the stack")
        .stderr_has("`hub deploy --prune`");
    assert!(entries(root).contains(&"top".to_string()));
    assert_eq!(undeploy_log(root), "");
    let out = run(root, &["deploy", "--prune"]);
    out.success()
        .stderr_has("hub: prune top (1/1): removed from the stack")
        .stderr_has("\n  top   undeployed ");
    assert_eq!(undeploy_log(root), "top-was-here\n");
    assert_eq!(entries(root), ["base", "keep", "mid"]);
    let state = read_documents(&root.join("s.state")).remove(0);
    let operations = state["operations"].as_sequence().expect("operations");
    let phases = &operations.last().expect("an operation")["phases"];
    let top = phases
        .as_sequence()
        .into_iter()
        .flatten()
        .find(|p| p["phase"].as_str() == Some("top"))
        .expect("a phase for the pruned component");
    assert_eq!(top["status"].as_str(), Some("success"));
    run(root, &["deploy", "--prune"]).success();
    assert_eq!(undeploy_log(root), "top-was-here\n", "pruned once");
}

#[test]
fn removed_components_are_undeployed_dependents_first() {
    let test = chain();
    let root = test.root();
    run(root, &["deploy"]).success();
    keep_only(root, &["keep"]);
    let plan = run(root, &["plan", "--prune", "--format", "json"]);
    let plan = planned(&plan);
    let order: Vec<&str> = plan["removed"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(order, ["top", "mid", "base"]);
    assert_eq!(plan["removed"][1]["depends"], serde_json::json!(["base"]));
    run(root, &["deploy", "--prune"]).success();
    assert_eq!(
        undeploy_log(root),
        "top-was-here\nmid-was-here\nbase-was-here\n"
    );
    assert_eq!(entries(root), ["keep"]);
}

#[test]
fn a_removed_component_whose_folder_is_gone_names_state_rm() {
    let test = chain();
    let root = test.root();
    run(root, &["deploy"]).success();
    keep_only(root, &["keep", "base", "mid"]);
    std::fs::remove_dir_all(root.join("components/top")).expect("rm");
    let before = std::fs::read(root.join("s.state")).expect("state");
    for command in ["deploy", "plan"] {
        run(root, &[command, "--prune"])
            .failure()
            .stderr_has(
                "component `top` is no longer in the stack and cannot be undeployed: its folder",
            )
            .stderr_has("is gone")
            .stderr_has("`hub state rm top`");
    }
    assert_eq!(std::fs::read(root.join("s.state")).expect("state"), before);
    assert_eq!(undeploy_log(root), "");
}

#[test]
fn a_failing_undeploy_keeps_the_entry_and_fails_the_run() {
    let test = chain();
    let root = test.root();
    run(root, &["deploy"]).success();
    keep_only(root, &["keep"]);
    std::fs::write(
        root.join("components/mid/undeploy.sh"),
        "#!/bin/sh\necho cannot >&2\nexit 4\n",
    )
    .expect("write");
    let out = run(root, &["deploy", "--prune"]);
    out.failure()
        .stderr_has("could not be pruned: `mid` failed")
        .stderr_has("not run because of them: `base`")
        .stderr_has("their entries are kept")
        .stderr_has("\n  base  cancelled ");
    // `base` stays up for `mid`, which still depends on it.
    assert_eq!(undeploy_log(root), "top-was-here\n");
    assert_eq!(entries(root), ["base", "keep", "mid"]);
}
