//! Output contracts (issue 42, item 5): a plan in which a component stops
//! producing an output another reads fails before anything runs, naming
//! the output, the producer and every reader; a component's `moved`
//! renames an output and keeps its readers working, with a warning.

use crate::common::{hub_isolated, hub_pinned, Output, Test};
use crate::terraform::terraform_or_skip;

/// `a` outputs `a.val` (its `x`) and `a.id`; `b` reads `a.val` by name,
/// `c` reads `a:a.val` in a value, `d` reads nothing of `a`.
const STACK: &str = "\
version: 1
kind: stack
meta: {name: contracts}
components:
- {name: a, source: {dir: a}}
- {name: b, source: {dir: b}, depends: [a]}
- {name: c, source: {dir: c}, depends: [a]}
- {name: d, source: {dir: d}, depends: []}
lifecycle: {verbs: [deploy, undeploy], order: [a, b, c, d]}
parameters:
- {name: x, value: v1}
---
version: 1
kind: component
meta: {name: a}
parameters:
- {name: x, env: X}
outputs:
- {name: a.id, fromTfVar: id}
- {name: a.val, fromTfVar: val}
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
- {name: c.mode, value: plain, env: MODE}
- {name: c.in, value: 'c-${a:a.val}', env: IN}
---
version: 1
kind: component
meta: {name: d}
parameters:
- {name: d.in, value: plain, env: IN}
";

/// The stack, deployed once: the state records `a.val = v1` from `a`.
fn deployed() -> Test {
    let mut test = Test::new()
        .file("hub.yaml.elaborate", STACK)
        .script(
            "a/deploy.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = $X\"; echo \"value = $X\"; echo 'id = i1'\n",
        )
        .script(
            "a/plan.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = $X\"; echo \"value = $X\"; echo 'id (known after apply)'\n",
        );
    for name in ["b", "c", "d"] {
        test = test.script(
            &format!("{name}/deploy.sh"),
            &format!("#!/bin/sh\necho \"$IN\" > ../{name}-read\n"),
        );
    }
    for name in ["a", "b", "c", "d"] {
        test = test.script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    run(&test, &["deploy"]).success();
    std::fs::remove_file(test.root().join("b-read")).expect("b ran");
    test
}

fn run(test: &Test, verb_and_flags: &[&str]) -> Output {
    let mut args = vec![verb_and_flags[0], "hub.yaml.elaborate", "-s", "s.state"];
    args.extend(&verb_and_flags[1..]);
    hub_pinned(test.root(), &args)
}

/// `a`'s manifest with `old` replaced by `new`.
fn edit(test: &Test, old: &str, new: &str) {
    let path = test.root().join("hub.yaml.elaborate");
    let text = std::fs::read_to_string(&path).expect("stack");
    assert!(text.contains(old), "{old}");
    std::fs::write(&path, text.replacen(old, new, 1)).expect("write");
}

#[test]
fn a_plan_that_stops_producing_an_output_read_by_others_fails_naming_every_reader() {
    let test = deployed();
    edit(&test, "- {name: a.val, fromTfVar: val}\n", "");
    let out = run(&test, &["plan"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    insta::assert_snapshot!(out.stdout, @r"
    plan: deploy stack `contracts`
    state: s.state (serial 11)
    jobs: 1
    waves:
      1. a, d
      2. b, c

    a: fail (it stops producing output `a.val` (its last deploy recorded it; its manifest no longer declares it), which `b` (`b.in`), `c` (`c.in`) read)

    b: fail (it depends on `a`, which would fail)
      waits for: a (`depends`)

    c: fail (it depends on `a`, which would fail)
      waits for: a (`depends`)

    d: update (runs again: no --changed)

    Plan: 0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 3 would fail
    ");
    // The deploy refuses before anything runs, each reader on its line
    // with the line that declares it, and the fix.
    let out = run(&test, &["deploy"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "component `a`: would fail: it stops producing output `a.val` (its last deploy recorded it; its manifest no longer declares it); read by:
    - `b.in` of `b` (hub.yaml.elaborate:25)
    - `c.in` of `c` (hub.yaml.elaborate:32)
    help: declare `a.val` again in `a`'s `outputs` in hub.yaml.elaborate; to rename it, declare the new name and add `moved: [{from: a.val, to: NEW}]` to `a`'s manifest; or change the readers",
    );
    assert!(!test.root().join("b-read").exists());
}

#[test]
fn a_rename_without_moved_fails_and_with_moved_readers_read_the_new_name_with_a_warning() {
    let test = deployed();
    edit(
        &test,
        "- {name: a.val, fromTfVar: val}\n",
        "- {name: a.value, fromTfVar: value}\n",
    );
    let out = run(&test, &["plan"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("a: fail (it stops producing output `a.val` (its last deploy recorded it; its manifest no longer declares it), which `b` (`b.in`), `c` (`c.in`) read)"),
        "{}",
        out.stdout
    );
    edit(
        &test,
        "- {name: a.value, fromTfVar: value}\n",
        "- {name: a.value, fromTfVar: value}\nmoved:\n- {from: a.val, to: a.value}\n",
    );
    let out = run(&test, &["plan"]);
    out.success();
    out.stderr_has("warning: hub.yaml.elaborate:28: `b.in` of `b` reads output `a.val` of `a`, which `a` renamed `a.value` (`moved` at hub.yaml.elaborate:22): it reads `a.value`; update it to read `a.value` instead of `a.val`");
    out.stderr_has("warning: hub.yaml.elaborate:35: `c.in` of `c` reads output `a.val` of `a`");
    // `a` prints another value for its new output: the readers get it.
    test_script(
        &test,
        "a/deploy.sh",
        "#!/bin/sh\necho; echo Outputs:; echo 'value = v2'; echo 'id = i1'\n",
    );
    let out = run(&test, &["deploy"]);
    out.success();
    assert_eq!(read(&test, "b"), "v2\n");
    assert_eq!(read(&test, "c"), "c-v2\n");
}

#[test]
fn a_wrong_moved_entry_is_refused_naming_its_line_and_the_fix() {
    let test = deployed();
    edit(
        &test,
        "- {name: a.val, fromTfVar: val}\n",
        "- {name: a.val, fromTfVar: val}\nmoved:\n- {from: a.old, to: a.new}\n",
    );
    let out = run(&test, &["plan"]);
    assert_ne!(out.status, 0, "{}", out.stderr);
    insta::assert_snapshot!(out.stderr.trim_end(), @r"
    error: component `a`: `moved` renames output `a.old` to `a.new`, which it does not declare
      --> hub.yaml.elaborate:22
      help: declare `a.new` in the component's `outputs`, or give `to` the name the output has now
    ");
}

#[test]
fn a_component_that_declares_no_outputs_produces_none() {
    let test = deployed();
    edit(
        &test,
        "outputs:\n- {name: a.id, fromTfVar: id}\n- {name: a.val, fromTfVar: val}\n",
        "",
    );
    let out = run(&test, &["plan"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("a: fail (it stops producing output `a.val`"),
        "{}",
        out.stdout
    );
    // `a.id`, which nobody reads, is not named.
    assert!(!out.stdout.contains("a.id"), "{}", out.stdout);
    // Once nothing reads it, the plan passes.
    edit(
        &test,
        "- {name: b.in, value: '${a.val}', env: IN}",
        "- {name: b.in, value: v, env: IN}",
    );
    edit(
        &test,
        "- {name: c.in, value: 'c-${a:a.val}', env: IN}",
        "- {name: c.in, value: v, env: IN}",
    );
    run(&test, &["plan"]).success();
}

#[test]
fn a_script_plan_step_that_no_longer_outputs_what_a_declared_output_reads_fails_the_plan() {
    let test = deployed();
    test_script(
        &test,
        "a/plan.sh",
        "#!/bin/sh\necho; echo Outputs:; echo 'id (known after apply)'\n",
    );
    let out = run(&test, &["plan", "--plan-steps"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "a: fail (its plan step no longer outputs `val`, which its output `a.val` reads (`fromTfVar`), which `b` (`b.in`), `c` (`c.in`) read)"
        ),
        "{}",
        out.stdout
    );
    // Without plan steps the plan cannot know.
    run(&test, &["plan"]).success();
}

/// The issue's "Done when": removing `output "val"` from A's Terraform
/// fails the plan naming B.
#[test]
fn removing_a_terraform_output_that_b_reads_fails_the_plan_naming_b() {
    let Some(tf) = terraform_or_skip() else {
        return;
    };
    let test = Test::new()
        .file(
            "hub.yaml.elaborate",
            "
            version: 1
            kind: stack
            meta: {name: tf}
            components:
            - {name: a, source: {dir: a}}
            - {name: b, source: {dir: b}, depends: [a]}
            - {name: d, source: {dir: d}, depends: []}
            lifecycle: {verbs: [deploy, undeploy], order: [a, b, d]}
            parameters:
            - {name: x, value: v1}
            ---
            version: 1
            kind: component
            meta: {name: a}
            parameters:
            - {name: x}
            outputs:
            - {name: a.val, fromTfVar: val}
            - {name: a.id, fromTfVar: id}
            ---
            version: 1
            kind: component
            meta: {name: b}
            parameters:
            - {name: b.in, value: '${a.val}'}
            ---
            version: 1
            kind: component
            meta: {name: d}
            parameters:
            - {name: d.in, value: plain}
            ",
        )
        .file(
            "a/main.tf",
            "variable \"x\" { type = string }\noutput \"id\" { value = uuid() }\n",
        );
    let mut test = test;
    for name in ["b", "d"] {
        test = test
            .script(&format!("{name}/deploy.sh"), "#!/bin/sh\n")
            .script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    let tf = tf.display().to_string();
    let env = [("HUB_TERRAFORM", tf.as_str()), ("CHECKPOINT_DISABLE", "1")];
    let args = [
        "plan",
        "hub.yaml.elaborate",
        "-s",
        "s.state",
        "--plan-steps",
    ];
    let out = hub_isolated(&test, &args, &env);
    assert_eq!(out.status, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(
            "a: fail (its plan step no longer outputs `val`, which its output `a.val` reads (`fromTfVar`), which `b` (`b.in`) read)"
        ),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("d: create"), "{}", out.stdout);
    // With the output back, the plan passes and `b` reads its planned value.
    std::fs::write(
        test.root().join("a/main.tf"),
        "variable \"x\" { type = string }\noutput \"val\" { value = var.x }\noutput \"id\" { value = uuid() }\n",
    )
    .expect("main.tf");
    let out = hub_isolated(&test, &args, &env);
    out.success();
    assert!(out.stdout.contains("+ b.in = v1"), "{}", out.stdout);
}

fn test_script(test: &Test, path: &str, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    let target = test.root().join(path);
    std::fs::write(&target, text).expect("write");
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn read(test: &Test, name: &str) -> String {
    std::fs::read_to_string(test.root().join(format!("{name}-read"))).expect(name)
}
