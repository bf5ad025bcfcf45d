//! The plan is made once and executed: `hub deploy --plan PLAN` does with
//! each component what the saved plan says (`HUB_TRACE_PLAN=1` prints it
//! as each component's turn comes), also where deciding again during the
//! run would give another answer.

use crate::common::{hub_isolated, Output, Test};
use std::os::unix::fs::PermissionsExt;

const STACK: &str = "
version: 1
kind: stack
meta: {name: executed}
components:
  - {name: first, source: {dir: components/first}}
  - {name: second, source: {dir: components/second}}
  - {name: third, source: {dir: components/third}, depends: [first]}
";

/// `first`, `second` and `third` (which depends on `first`); each run
/// appends the component's name to `runs.log`; `first` also appends a
/// line to a file in `second`'s folder, so that `second`'s folder changes
/// while the run goes on.
fn stack() -> Test {
    let mut test = Test::new().file("hub.yaml", STACK);
    for name in ["first", "second", "third"] {
        let extra = match name {
            "first" => "echo more >> ../second/generated.txt\n",
            _ => "",
        };
        test = test
            .file(
                &format!("components/{name}/hub-component.yaml"),
                &format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n"),
            )
            .file(
                &format!("components/{name}/deploy.sh"),
                &format!("#!/bin/sh\necho {name} >> ../../runs.log\n{extra}"),
            )
            .file(&format!("components/{name}/undeploy.sh"), "#!/bin/sh\n");
        for verb in ["deploy", "undeploy"] {
            let path = test.root().join(format!("components/{name}/{verb}.sh"));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    test
}

fn hub(test: &Test, args: &[&str]) -> Output {
    hub_isolated(
        test,
        args,
        &[("HUB_NOW", "2026-01-01T00:00:00Z"), ("HUB_TRACE_PLAN", "1")],
    )
}

/// The components that ran since the last call, in order.
fn runs(test: &Test) -> Vec<String> {
    let path = test.root().join("runs.log");
    let text = std::fs::read_to_string(&path).unwrap_or_default();
    let _ = std::fs::remove_file(&path);
    text.lines().map(String::from).collect()
}

/// Each component of the saved plan with its action.
fn planned(test: &Test) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(test.root().join("plan.json")).expect("plan");
    let plan: serde_json::Value = serde_json::from_str(&text).expect("plan JSON");
    plan["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| {
            let field = |key: &str| c[key].as_str().unwrap_or_default().to_string();
            (field("name"), field("action"))
        })
        .collect()
}

/// The trace lines of a run: each component and the action it executed.
fn executed(out: &Output) -> Vec<(String, String)> {
    out.stderr
        .lines()
        .filter_map(|line| line.strip_prefix("hub: component "))
        .filter_map(|rest| rest.split_once(": executing planned "))
        .map(|(name, action)| (name.to_string(), action.to_string()))
        .collect()
}

/// Each component of the run report with its status.
fn reported(test: &Test) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(test.root().join("report.json")).expect("report");
    let report: serde_json::Value = serde_json::from_str(&text).expect("report JSON");
    report["components"]
        .as_array()
        .expect("components")
        .iter()
        .map(|c| {
            let field = |key: &str| c[key].as_str().unwrap_or_default().to_string();
            (field("name"), field("status"))
        })
        .collect()
}

/// What a run report says of a component given a planned action.
fn status_of(action: &str) -> &'static str {
    match action {
        "create" | "update" | "replace" => "deployed",
        "no-op" => "unchanged",
        other => panic!("unexpected planned action {other}"),
    }
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

fn plan_out(test: &Test, extra: &[&str]) {
    let mut args = vec![
        "plan",
        "hub.yaml",
        "-s",
        "hub.yaml.state",
        "--out",
        "plan.json",
    ];
    args.extend_from_slice(extra);
    let out = hub(test, &args);
    assert!(matches!(out.status, 0 | 2), "{}", out.stderr);
}

#[test]
fn a_saved_plan_is_executed_action_for_action() {
    let test = &stack();
    plan_out(test, &[]);
    let plan = planned(test);
    assert_eq!(
        plan,
        pairs(&[
            ("first", "create"),
            ("second", "create"),
            ("third", "create")
        ])
    );
    let out = hub(
        test,
        &["deploy", "--plan", "plan.json", "--report", "report.json"],
    );
    out.success();
    assert_eq!(executed(&out), plan, "{}", out.stderr);
    let statuses: Vec<(String, String)> = plan
        .iter()
        .map(|(name, action)| (name.clone(), status_of(action).to_string()))
        .collect();
    assert_eq!(reported(test), statuses);
    assert_eq!(runs(test), ["first", "second", "third"]);
}

#[test]
fn a_changed_plan_is_executed_with_its_no_ops() {
    let test = &stack();
    hub(test, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    runs(test);
    std::fs::write(test.root().join("components/third/more.txt"), "x\n").expect("write");
    plan_out(test, &["--changed"]);
    let plan = planned(test);
    assert_eq!(
        plan,
        pairs(&[("first", "no-op"), ("second", "no-op"), ("third", "update")])
    );
    let out = hub(
        test,
        &["deploy", "--plan", "plan.json", "--report", "report.json"],
    );
    out.success();
    assert_eq!(executed(&out), plan, "{}", out.stderr);
    let statuses: Vec<(String, String)> = plan
        .iter()
        .map(|(name, action)| (name.clone(), status_of(action).to_string()))
        .collect();
    assert_eq!(reported(test), statuses);
    assert_eq!(runs(test), ["third"]);
}

/// `first` runs (`--replace`) and, as it runs, changes `second`'s folder.
/// Deciding again at `second`'s turn would run it (its folder changed);
/// the plan, made before the run, says `no-op`, and the run does that.
#[test]
fn the_run_does_not_decide_again() {
    let test = &stack();
    hub(test, &["deploy", "hub.yaml", "-s", "hub.yaml.state"]).success();
    runs(test);
    plan_out(test, &["--changed", "--replace", "first"]);
    let plan = planned(test);
    assert_eq!(
        plan,
        pairs(&[
            ("first", "rerun"),
            ("second", "no-op"),
            // `first` runs first, but `third` reads none of its outputs.
            ("third", "no-op")
        ])
    );
    let out = hub(
        test,
        &["deploy", "--plan", "plan.json", "--report", "report.json"],
    );
    out.success();
    assert_eq!(executed(&out), plan, "{}", out.stderr);
    assert_eq!(
        reported(test),
        pairs(&[
            ("first", "deployed"),
            ("second", "unchanged"),
            ("third", "unchanged")
        ])
    );
    assert_eq!(runs(test), ["first"]);
    // Deciding now gives another answer for `second`.
    let again = hub(
        test,
        &["plan", "hub.yaml", "-s", "hub.yaml.state", "--changed"],
    );
    assert!(
        again
            .stdout
            .lines()
            .any(|l| l.contains("second") && l.contains("update")),
        "{}",
        again.stdout
    );
}
