//! Issue 42's "Done when": a saved plan made with `--plan-steps` is
//! applied component by component. A deferred component is planned again
//! with the outputs its upstream applied just before it starts; one whose
//! read output changed since the plan is refused (its dependents with it,
//! independent components go on) unless `--replan` accepts it, once the
//! policies pass on the re-planned values.
//!
//! `a` has a parameter `x` and outputs `val` (= x) and `id` (known only
//! once applied); `b` reads `a.val`, `c` reads `a.id`, `d` reads nothing.
//! "Someone applies `a` with another x" is `a`'s apply taking
//! `$APPLIED_X` (scripts) or `TF_CLI_ARGS_apply=-var=x=…` (Terraform)
//! over what the plan reviewed.

use crate::common::{hub_isolated, pinned_command, Output, Test};
use crate::terraform::terraform_or_skip;

/// The stack of issue 42's scenario (`X_VALUE`: `a`'s `x`); `stale_state`
/// uses it too.
pub(crate) const STACK: &str = "\
version: 1
kind: stack
meta: {name: replan}
components:
- {name: a, source: {dir: a}}
- {name: b, source: {dir: b}, depends: [a]}
- {name: c, source: {dir: c}, depends: [a]}
- {name: d, source: {dir: d}, depends: []}
lifecycle: {verbs: [deploy, undeploy], order: [a, b, c, d]}
parameters:
- {name: x, value: X_VALUE}
---
version: 1
kind: component
meta: {name: a}
parameters:
- {name: x, env: X}
outputs:
- {name: a.val, fromTfVar: val}
- {name: a.id, fromTfVar: id}
---
version: 1
kind: component
meta: {name: b}
parameters:
- {name: b.in, value: '${a.val}', env: IN}
---
version: 1
kind: component
meta: {name: c}
parameters:
- {name: c.in, value: 'id ${a.id}', env: IN}
---
version: 1
kind: component
meta: {name: d}
parameters:
- {name: d.in, value: plain, env: IN}
";

/// A rule that denies `b` deploying with `v3`.
pub(crate) const DENY_V3: &str = "
- name: no-v3
  deny: plan.components.exists(c, c.name == 'b' && c.parameters.exists(p, p.name == 'b.in' && p.value == 'v3'))
  message: b must not get v3
";

/// `b`, `c`, `d`: scripts that write what they read; `c` has a plan step
/// that writes what it was planned with.
fn dependents(mut test: Test) -> Test {
    for name in ["b", "c", "d"] {
        test = test
            .script(
                &format!("{name}/deploy.sh"),
                &format!("#!/bin/sh\necho \"$IN\" > ../{name}-read\n"),
            )
            .script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test.script("c/plan.sh", "#!/bin/sh\necho \"$IN\" > ../c-planned\n")
}

/// `a` as scripts; `plan_step`: with a `plan.sh` that plans `val` and
/// leaves `id` unknown.
fn scripts(x: &str, plan_step: bool) -> Test {
    let test = Test::new()
        .file("hub.yaml.elaborate", &STACK.replace("X_VALUE", x))
        .file("rules.yaml", DENY_V3)
        .script(
            "a/deploy.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = ${APPLIED_X:-$X}\"; echo 'id = id-4242'\n",
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

fn hub(test: &Test, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = pinned_command(test.root(), args);
    command.env_remove("APPLIED_X");
    for (name, value) in env {
        command.env(name, value);
    }
    Output::of(command.output().expect("run hub"), test.root())
}

fn plan_out(test: &Test, policy: bool) -> Output {
    let mut args = vec![
        "plan",
        "hub.yaml.elaborate",
        "-s",
        "s.state",
        "--plan-steps",
        "--out",
        "p.json",
    ];
    if policy {
        args.extend(["--policy", "rules.yaml"]);
    }
    hub(test, &args, &[])
}

fn deploy(test: &Test, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args = vec!["deploy", "--plan", "p.json"];
    args.extend(extra);
    hub(test, &args, env)
}

fn read(test: &Test, file: &str) -> Option<String> {
    std::fs::read_to_string(test.root().join(file)).ok()
}

#[test]
fn scripts_deploy_of_a_fresh_plan_applies_a_b_d_then_plans_and_applies_c() {
    let test = scripts("v1", true);
    let out = plan_out(&test, false);
    out.success();
    let text = &out.stdout;
    assert!(text.contains("+ b.in = v1"), "{text}");
    assert!(
        text.contains("deferred: planned after a applies (unknown: `c.in` ← output `a.id` of a)"),
        "{text}"
    );
    assert!(
        !text.contains("d: create (never deployed)\n  deferred"),
        "{text}"
    );
    // Planning ran no plan step of the deferred `c`.
    assert_eq!(read(&test, "c-planned"), None);
    let out = deploy(&test, &[], &[]);
    out.success();
    assert_eq!(read(&test, "b-read").as_deref(), Some("v1\n"));
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    // `c` was planned with the real `a.id`, then applied with it.
    assert_eq!(read(&test, "c-planned").as_deref(), Some("id id-4242\n"));
    assert_eq!(read(&test, "c-read").as_deref(), Some("id id-4242\n"));
    out.stderr_has(
        "hub: c: planned again with the outputs its upstreams applied: as the plan said",
    );
}

#[test]
fn scripts_a_changed_upstream_refuses_b_and_replan_applies_it_when_the_policies_pass() {
    let test = scripts("v2", true);
    plan_out(&test, false).success();
    let out = deploy(&test, &[], &[("APPLIED_X", "v3")]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "refused: what it reads changed since the plan: `a`'s output `a.val` (planned `v2`, now `v3`)",
    );
    out.stderr_has("stack: incomplete");
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    assert_eq!(read(&test, "c-read").as_deref(), Some("id id-4242\n"));

    // The same plan, applied with `--replan`: `b` gets v3.
    let test = scripts("v2", true);
    plan_out(&test, false).success();
    let out = deploy(&test, &["--replan"], &[("APPLIED_X", "v3")]);
    out.success();
    out.stderr_has("hub: b: re-planned (`--replan`): `a`'s output `a.val` (planned `v2`, now `v3`); the policies pass");
    assert_eq!(read(&test, "b-read").as_deref(), Some("v3\n"));
}

#[test]
fn scripts_replan_is_stopped_by_a_policy_that_denies_the_new_values() {
    let test = scripts("v2", true);
    plan_out(&test, true).success();
    let out = deploy(&test, &["--replan"], &[("APPLIED_X", "v3")]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("refused: planned again with the outputs its upstreams applied, denied by policy `no-v3`: b must not get v3");
    out.stderr_has("b must not get v3");
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
}

#[test]
fn without_a_plan_step_dependents_are_deferred_and_their_new_values_meet_the_policies() {
    let test = scripts("v2", false);
    let out = plan_out(&test, true);
    out.success();
    assert!(
        out.stdout
            .contains("deferred: planned after a applies (unknown: `b.in` ← output `a.val` of a)"),
        "{}",
        out.stdout
    );
    // Nothing was promised for `b`: it is planned again and runs with
    // what `a` applied, once the policies pass on it.
    let out = deploy(&test, &[], &[("APPLIED_X", "v2")]);
    out.success();
    out.stderr_has(
        "hub: b: planned again with the outputs its upstreams applied: as the plan said",
    );
    assert_eq!(read(&test, "b-read").as_deref(), Some("v2\n"));

    let test = scripts("v2", false);
    plan_out(&test, true).success();
    let out = deploy(&test, &[], &[("APPLIED_X", "v3")]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("b must not get v3");
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "c-read").as_deref(), Some("id id-4242\n"));
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
}

#[test]
fn a_deferred_component_whose_plan_step_fails_is_refused() {
    let test = scripts("v1", true).script("c/plan.sh", "#!/bin/sh\necho 'no quota' >&2\nexit 4\n");
    plan_out(&test, false).success();
    let out = deploy(&test, &[], &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("refused: planned again with the outputs its upstreams applied, its plan step failed: `plan.sh` ended with");
    out.stderr_has("c (plan) | no quota");
    assert_eq!(read(&test, "c-read"), None);
    assert_eq!(read(&test, "b-read").as_deref(), Some("v1\n"));
}

#[test]
fn replan_needs_a_saved_plan() {
    let test = scripts("v1", true);
    let out = hub(
        &test,
        &["deploy", "hub.yaml.elaborate", "-s", "s.state", "--replan"],
        &[],
    );
    assert_eq!(out.status, 2, "{}", out.stderr);
    out.stderr_has(
        "it accepts parts of a saved plan planned again: give `--plan PLAN` or `--change ID`",
    );
    assert_eq!(read(&test, "d-read"), None);
}

/// `a` as built-in Terraform: `val = var.x`, `id = uuid()`.
fn terraform_stack(x: &str) -> Test {
    let test = Test::new()
        .file("hub.yaml.elaborate", &STACK.replace("X_VALUE", x).replace(
            "- {name: x, env: X}",
            "- {name: x}",
        ))
        .file("rules.yaml", DENY_V3)
        .file(
            "a/main.tf",
            "variable \"x\" { type = string }\noutput \"val\" { value = var.x }\noutput \"id\" { value = uuid() }\n",
        );
    dependents(test)
}

fn tf(test: &Test, args: &[&str], tf: &std::path::Path, extra: &[(&str, &str)]) -> Output {
    let tf = tf.display().to_string();
    let mut env = vec![("HUB_TERRAFORM", tf.as_str()), ("CHECKPOINT_DISABLE", "1")];
    env.extend_from_slice(extra);
    hub_isolated(test, args, &env)
}

const PLAN: &[&str] = &[
    "plan",
    "hub.yaml.elaborate",
    "-s",
    "s.state",
    "--plan-steps",
    "--out",
    "p.json",
];

#[test]
fn terraform_deploy_of_a_fresh_plan_applies_a_b_d_then_plans_and_applies_c() {
    let Some(program) = terraform_or_skip() else {
        return;
    };
    let test = terraform_stack("v1");
    let out = tf(&test, PLAN, &program, &[]);
    out.success();
    assert!(out.stdout.contains("+ b.in = v1"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("deferred: planned after a applies (unknown: `c.in` ← output `a.id` of a)"),
        "{}",
        out.stdout
    );
    let out = tf(&test, &["deploy", "--plan", "p.json"], &program, &[]);
    out.success();
    assert_eq!(read(&test, "b-read").as_deref(), Some("v1\n"));
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    let planned = read(&test, "c-planned").expect("c planned");
    assert!(
        planned.starts_with("id ") && planned.len() > 30,
        "{planned}"
    );
    assert_eq!(read(&test, "c-read"), Some(planned));
}

#[test]
fn terraform_a_changed_upstream_refuses_b_and_replan_applies_it_when_the_policies_pass() {
    let Some(program) = terraform_or_skip() else {
        return;
    };
    let someone = [("TF_CLI_ARGS_apply", "-var=x=v3")];
    let test = terraform_stack("v2");
    tf(&test, PLAN, &program, &[]).success();
    let out = tf(&test, &["deploy", "--plan", "p.json"], &program, &someone);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("`a`'s output `a.val` (planned `v2`, now `v3`)");
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));

    let test = terraform_stack("v2");
    tf(&test, PLAN, &program, &[]).success();
    let replan = ["deploy", "--plan", "p.json", "--replan"];
    tf(&test, &replan, &program, &someone).success();
    assert_eq!(read(&test, "b-read").as_deref(), Some("v3\n"));

    let test = terraform_stack("v2");
    let mut with_policy = PLAN.to_vec();
    with_policy.extend(["--policy", "rules.yaml"]);
    tf(&test, &with_policy, &program, &[]).success();
    let out = tf(&test, &replan, &program, &someone);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("b must not get v3");
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
}

fn job(test: &Test, component: &str, extra: &[&str], env: &[(&str, &str)]) -> Output {
    let mut args = vec![
        "deploy", "--plan", "p.json", "-c", component, "-s", "s.state", "--job",
    ];
    args.extend(extra);
    hub(test, &args, env)
}

#[test]
fn a_pipeline_job_checks_what_its_component_reads_and_plans_a_deferred_one() {
    let test = scripts("v2", true);
    plan_out(&test, false).success();
    // Someone applies `a` with v3 in its job.
    job(&test, "a", &[], &[("APPLIED_X", "v3")]).success();
    let out = job(&test, "b", &[], &[]);
    assert_ne!(out.status, 0, "{}", out.stderr);
    out.stderr_has(
        "refused: what it reads changed since the plan: `a`'s output `a.val` (planned `v2`, now `v3`)",
    );
    assert_eq!(read(&test, "b-read"), None);
    job(&test, "d", &[], &[]).success();
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    // The deferred `c` is planned with the `a.id` job `a` recorded.
    job(&test, "c", &[], &[]).success().stderr_has(
        "hub: c: planned again with the outputs its upstreams applied: as the plan said",
    );
    assert_eq!(read(&test, "c-planned").as_deref(), Some("id id-4242\n"));
    // The job run again with `--replan` accepts the new value.
    job(&test, "b", &["--replan"], &[])
        .success()
        .stderr_has("hub: b: re-planned (`--replan`)");
    assert_eq!(read(&test, "b-read").as_deref(), Some("v3\n"));
}

#[test]
fn deploy_change_checks_what_each_component_reads() {
    let test = scripts("v2", true);
    let plan = [
        "plan",
        "hub.yaml.elaborate",
        "-s",
        "s.state",
        "--plan-steps",
        "--change",
        "7",
    ];
    hub(&test, &plan, &[]).success();
    let apply = ["deploy", "--change", "7", "-s", "s.state"];
    let out = hub(&test, &apply, &[("APPLIED_X", "v3")]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "refused: what it reads changed since the plan: `a`'s output `a.val` (planned `v2`, now `v3`)",
    );
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
    assert_eq!(read(&test, "c-planned").as_deref(), Some("id id-4242\n"));
}

/// The stale-output refusal through the generated GitLab pipeline, run by
/// gitlab-ci-local: job `a` applies v3 where the plan said v2; job `b`
/// is refused naming `a.val`, `d`'s job passes, and `c`'s (deferred) is
/// planned with the real `a.id` and passes.
#[test]
fn a_gitlab_pipeline_job_refuses_b_when_a_applied_another_value() {
    let test = scripts("v2", true);
    plan_out(&test, false).success();
    let hub_path = crate::common::hub_binary().display().to_string();
    let args = [
        "pipeline",
        "--allow-local-state",
        "--target",
        "gitlab",
        "--plan",
        "p.json",
        "--hub",
        &hub_path,
        "-o",
        ".gitlab-ci.yml",
    ];
    hub(&test, &args, &[]).success();
    let env = [("APPLIED_X", "v3".to_string())];
    let Some(out) = crate::pipeline::gitlab_ci_local_with(test.root(), &env, &[]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains(" PASS  deploy-a"), "{stdout}");
    assert!(stdout.contains(" FAIL  deploy-b"), "{stdout}");
    assert!(stdout.contains(" PASS  deploy-c"), "{stdout}");
    assert!(stdout.contains(" PASS  deploy-d"), "{stdout}");
    assert!(
        stdout.contains("`a`'s output `a.val` (planned `v2`, now `v3`)"),
        "{stdout}"
    );
    assert_eq!(read(&test, "b-read"), None);
    assert_eq!(read(&test, "c-planned").as_deref(), Some("id id-4242\n"));
    assert_eq!(read(&test, "d-read").as_deref(), Some("plain\n"));
}
