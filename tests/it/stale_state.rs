//! Issue 42's "Done when": a plan saved with `x=v2`; someone applies `a`
//! with `x=v3` in ANOTHER run (a plain `hub deploy` of another stack file
//! on the same state) before the plan is applied. The plan records each
//! component's state entry; the apply, under its lock, refuses `a` (changed
//! by another run, not a failure for its dependents), refuses `b` naming
//! `a.val` (planned v2, now v3), applies `d`, and ends `incomplete`;
//! `--replan` applies `b` with v3 once the policies pass.
//!
//! `a` has a parameter `x` and outputs `val` (= x) and `id`; `b` reads
//! `a.val`, `c` reads `a.id`, `d` reads nothing.

use crate::common::{hub_isolated, pinned_command, Output, Test};
use crate::replan::{DENY_V3, STACK};
use crate::terraform::terraform_or_skip;

const CHANGED_BY_ANOTHER_RUN: &str = "a skipped: refused: changed by another run since the plan";
const B_REFUSED: &str =
    "refused: what it reads changed since the plan: `a`'s output `a.val` (planned `v2`, now `v3`)";

fn stack(x: &str) -> String {
    STACK
        .replace("meta: {name: replan}", "meta: {name: stale}")
        .replace("X_VALUE", x)
}

/// `b`, `c`, `d`: scripts that write what they read.
fn dependents(mut test: Test) -> Test {
    for name in ["b", "c", "d"] {
        test = test
            .script(
                &format!("{name}/deploy.sh"),
                &format!("#!/bin/sh\necho \"$IN\" > ../{name}-read\n"),
            )
            .script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

/// The stack as scripts, `hub.yaml.elaborate` with `x=v1` and
/// `other.yaml.elaborate` (the other run's) with `x=v3`; `plan_step`: `a`
/// has a `plan.sh` that plans `val` and leaves `id` unknown.
fn scripts(plan_step: bool) -> Test {
    let test = Test::new()
        .file("hub.yaml.elaborate", &stack("v1"))
        .file("other.yaml.elaborate", &stack("v3"))
        .file("rules.yaml", DENY_V3)
        .script(
            "a/deploy.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = $X\"; echo 'id = id-4242'\n",
        )
        .script("a/undeploy.sh", "#!/bin/sh\n");
    let test = match plan_step {
        true => test.script(
            "a/plan.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = $X\"; echo 'id (known after apply)'\n",
        ),
        false => test,
    };
    dependents(test)
}

fn hub(test: &Test, args: &[&str]) -> Output {
    Output::of(
        pinned_command(test.root(), args).output().expect("run hub"),
        test.root(),
    )
}

fn read(test: &Test, file: &str) -> Option<String> {
    std::fs::read_to_string(test.root().join(file)).ok()
}

fn forget_reads(test: &Test) {
    for name in ["b", "c", "d"] {
        let _ = std::fs::remove_file(test.root().join(format!("{name}-read")));
    }
}

/// The plan arguments: `--plan-steps` or not, `--policy rules.yaml` or not.
fn plan_args(plan_steps: bool, policy: bool) -> Vec<&'static str> {
    let mut args = vec![
        "plan",
        "hub.yaml.elaborate",
        "-s",
        "s.state",
        "--out",
        "p.json",
    ];
    if plan_steps {
        args.push("--plan-steps");
    }
    if policy {
        args.extend(["--policy", "rules.yaml"]);
    }
    args
}

const DEPLOY_V1: &[&str] = &["deploy", "hub.yaml.elaborate", "-s", "s.state"];
const OTHER_RUN: &[&str] = &["deploy", "other.yaml.elaborate", "-s", "s.state", "-c", "a"];

/// Deployed with v1; planned with v2 (saved); `a` applied with v3 by
/// another run; the files the dependents wrote forgotten.
fn scripts_moved(plan_step: bool, plan_steps: bool, policy: bool) -> Test {
    let test = scripts(plan_step);
    hub(&test, DEPLOY_V1).success();
    std::fs::write(test.root().join("hub.yaml.elaborate"), stack("v2")).expect("write");
    hub(&test, &plan_args(plan_steps, policy)).success();
    hub(&test, OTHER_RUN).success();
    forget_reads(&test);
    test
}

fn apply(test: &Test, extra: &[&str]) -> Output {
    let mut args = vec!["deploy", "--plan", "p.json"];
    args.extend(extra);
    hub(test, &args)
}

/// `a` refused without failing its dependents, `b` refused on `a.val`,
/// `d` applied, the run `incomplete`.
fn refused_a_and_b(out: &Output, b_refused: &str) {
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(CHANGED_BY_ANOTHER_RUN);
    out.stderr_has("(the state moved from serial");
    out.stderr_has(b_refused);
    out.stderr_has("stack: incomplete");
    out.stderr_has("a component that run wrote is refused");
}

#[test]
fn scripts_another_run_refuses_a_and_b_and_still_applies_d() {
    let test = scripts_moved(true, true, false);
    let out = apply(&test, &[]);
    refused_a_and_b(&out, B_REFUSED);
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    // `c` was deferred until `a` applies in this run: what it would read
    // now comes from the other run, which nobody reviewed.
    out.stderr_has("parameter `c.in` (planned `(known after a deploys)`, now `id id-4242`)");
    assert_eq!(read(&test, "c-read"), None);
    // `a` keeps what the other run applied (its entry; the stack's own
    // parameters are this run's).
    let state = read(&test, "s.state").expect("state");
    assert!(state.contains("v3"), "{state}");
}

#[test]
fn scripts_replan_applies_b_with_the_other_runs_value_once_the_policies_pass() {
    let test = scripts_moved(true, true, false);
    let out = apply(&test, &["--replan"]);
    // `a` is never applied from the stale plan, `--replan` or not.
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(CHANGED_BY_ANOTHER_RUN);
    out.stderr_has(
        "hub: b: re-planned (`--replan`): `a`'s output `a.val` (planned `v2`, now `v3`); the policies pass",
    );
    assert_eq!(read(&test, "b-read").as_deref(), Some("v3\n"));
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));

    // The plan's policy is evaluated again on the re-planned `b`.
    let test = scripts_moved(true, true, true);
    let out = apply(&test, &["--replan"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("denied by policy `no-v3`: b must not get v3");
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
}

#[test]
fn without_a_plan_step_the_deferred_b_is_refused_on_what_the_other_run_applied() {
    // `--plan-steps`, `a` has none: `b` was deferred until `a` applies,
    // and `a` does not apply in this run.
    let test = scripts_moved(false, true, false);
    let out = apply(&test, &[]);
    refused_a_and_b(
        &out,
        "refused: what it reads changed since the plan: parameter `b.in` (planned `(known after a deploys)`, now `v3`)",
    );
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    let test = scripts_moved(false, true, false);
    apply(&test, &["--replan"]).stderr_has("hub: b: re-planned (`--replan`)");
    assert_eq!(read(&test, "b-read").as_deref(), Some("v3\n"));
}

#[test]
fn a_plan_without_plan_steps_compares_the_parameters_each_component_gets() {
    // Planned with the outputs of the state: `b.in` was planned as v1.
    let test = scripts_moved(true, false, false);
    let out = apply(&test, &[]);
    refused_a_and_b(
        &out,
        "refused: what it reads changed since the plan: parameter `b.in` (planned `v1`, now `v3`)",
    );
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    let test = scripts_moved(true, false, true);
    let out = apply(&test, &["--replan"]);
    out.stderr_has("denied by policy `no-v3`: b must not get v3");
    assert_eq!(read(&test, "b-read"), None);
}

#[test]
fn a_plan_without_entry_digests_is_refused_whole_as_before() {
    let test = scripts_moved(true, true, false);
    let path = test.root().join("p.json");
    let mut plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).expect("plan")).expect("json");
    for component in plan["components"].as_array_mut().expect("components") {
        component.as_object_mut().expect("object").remove("entry");
    }
    std::fs::write(&path, serde_json::to_string(&plan).expect("json")).expect("write");
    let out = apply(&test, &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("(another run wrote it)");
    out.stderr_has("run `hub plan` again");
    assert_eq!(read(&test, "d-read"), None);
}

#[test]
fn another_lineage_or_a_changed_file_still_refuses_the_whole_plan() {
    let test = scripts_moved(true, true, false);
    // The same stack deployed from scratch elsewhere, put in its place.
    let mut other = pinned_command(
        test.root(),
        &["deploy", "other.yaml.elaborate", "-s", "o.state"],
    );
    other.env("HUB_LINEAGE", "another-lineage");
    Output::of(other.output().expect("run hub"), test.root()).success();
    std::fs::copy(test.root().join("o.state"), test.root().join("s.state")).expect("copy");
    forget_reads(&test);
    let out = apply(&test, &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("is another one (lineage `another-lineage`");
    assert_eq!(read(&test, "d-read"), None);

    let test = scripts_moved(true, true, false);
    std::fs::write(test.root().join("d/extra.txt"), "x\n").expect("write");
    let out = apply(&test, &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("the folder of `d` changed");
    assert_eq!(read(&test, "d-read"), None);
}

#[test]
fn deploy_change_refuses_per_component_too() {
    let test = scripts(true);
    hub(&test, DEPLOY_V1).success();
    std::fs::write(test.root().join("hub.yaml.elaborate"), stack("v2")).expect("write");
    let plan = [
        "plan",
        "hub.yaml.elaborate",
        "-s",
        "s.state",
        "--plan-steps",
        "--change",
        "7",
    ];
    hub(&test, &plan).success();
    let mut other = OTHER_RUN.to_vec();
    other.push("--ignore-change-lock");
    hub(&test, &other).success();
    forget_reads(&test);
    let out = hub(&test, &["deploy", "--change", "7", "-s", "s.state"]);
    refused_a_and_b(&out, B_REFUSED);
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
}

/// `a` as built-in Terraform: `val = var.x`, `id = uuid()`.
fn terraform_stack() -> Test {
    let tf_stack = |x: &str| stack(x).replace("- {name: x, env: X}", "- {name: x}");
    let test = Test::new()
        .file("hub.yaml.elaborate", &tf_stack("v1"))
        .file("other.yaml.elaborate", &tf_stack("v3"))
        .file("rules.yaml", DENY_V3)
        // Terraform's local state is in the folder, which another run's
        // apply rewrites: left out of the folder's digest, as a stack
        // with local Terraform states does (else the plan is refused whole).
        .file("a/.hubignore", "terraform.tfstate*\n.terraform/\n")
        .file(
            "a/main.tf",
            "variable \"x\" { type = string }\noutput \"val\" { value = var.x }\noutput \"id\" { value = uuid() }\n",
        );
    dependents(test)
}

fn tf(test: &Test, args: &[&str], tf: &std::path::Path) -> Output {
    let tf = tf.display().to_string();
    let env = [("HUB_TERRAFORM", tf.as_str()), ("CHECKPOINT_DISABLE", "1")];
    hub_isolated(test, args, &env)
}

#[test]
fn terraform_another_run_refuses_a_and_b_and_replan_applies_b_once_the_policies_pass() {
    let Some(program) = terraform_or_skip() else {
        return;
    };
    let moved = |policy: bool| {
        let test = terraform_stack();
        tf(&test, DEPLOY_V1, &program).success();
        let v2 = std::fs::read_to_string(test.root().join("hub.yaml.elaborate"))
            .expect("stack")
            .replace("value: v1", "value: v2");
        std::fs::write(test.root().join("hub.yaml.elaborate"), v2).expect("write");
        tf(&test, &plan_args(true, policy), &program).success();
        tf(&test, OTHER_RUN, &program).success();
        forget_reads(&test);
        test
    };
    let test = moved(false);
    let out = tf(&test, &["deploy", "--plan", "p.json"], &program);
    refused_a_and_b(&out, "`a`'s output `a.val` (planned `v2`, now `v3`)");
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));

    let test = moved(false);
    let replan = ["deploy", "--plan", "p.json", "--replan"];
    let out = tf(&test, &replan, &program);
    out.stderr_has("hub: b: re-planned (`--replan`)");
    assert_eq!(read(&test, "b-read").as_deref(), Some("v3\n"));
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));

    let test = moved(true);
    let out = tf(&test, &replan, &program);
    out.stderr_has("b must not get v3");
    assert_eq!(read(&test, "b-read"), None);
}

/// `a` also outputs a secret token (`tok-<x>`), which `b` reads.
fn with_secret(x: &str) -> String {
    stack(x)
        .replace(
            "- {name: a.id, fromTfVar: id}",
            "- {name: a.id, fromTfVar: id}\n- {name: a.token, fromTfVar: token, kind: secret}",
        )
        .replace(
            "- {name: b.in, value: '${a.val}', env: IN}",
            "- {name: b.in, value: '${a.val}', env: IN}\n- {name: b.token, value: '${a.token}', env: TOKEN}",
        )
}

#[test]
fn a_secret_another_run_changed_is_compared_by_digest_and_never_shown() {
    let test = dependents(
        Test::new()
            .file("hub.yaml.elaborate", &with_secret("v1"))
            .file("other.yaml.elaborate", &with_secret("v3"))
            .script(
                "a/deploy.sh",
                "#!/bin/sh\necho; echo Outputs:; echo \"val = $X\"; echo 'id = id-4242'; echo \"token = tok-$X-s3cr3t\"\n",
            )
            .script("a/undeploy.sh", "#!/bin/sh\n"),
    );
    hub(&test, DEPLOY_V1).success();
    std::fs::write(test.root().join("hub.yaml.elaborate"), with_secret("v2")).expect("write");
    hub(&test, &plan_args(false, false)).success();
    hub(&test, OTHER_RUN).success();
    forget_reads(&test);
    let out = apply(&test, &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(CHANGED_BY_ANOTHER_RUN);
    out.stderr_has("parameter `b.token` (planned `(masked)`, now `(masked)`)");
    for secret in ["tok-v1-s3cr3t", "tok-v3-s3cr3t"] {
        assert!(!out.stdout.contains(secret), "{}", out.stdout);
        assert!(!out.stderr.contains(secret), "{}", out.stderr);
        let plan = read(&test, "p.json").expect("plan");
        assert!(!plan.contains(secret), "the plan file holds `{secret}`");
    }
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
}
