//! Planning through the graph (issue 42): `hub plan --plan-steps` runs
//! each component's plan step (`plan.sh`, hub's built-in `terraform
//! plan`), plans the components after it with the outputs it plans, and
//! defers those whose parameters read an output known only after an
//! upstream applies.

use crate::common::{hub_pinned, Output, Test};
use crate::terraform::terraform_or_skip;
use serde_json::Value as Json;

/// `a` plans `a.val` (its parameter `x`) and leaves `a.id` unknown; `b`
/// reads `a.val`, `c` reads `a.id`, `d` reads nothing; `e` has no plan
/// step and `f` reads its output. Each plan step leaves a file saying it
/// ran.
fn stack() -> Test {
    let text = "\
version: 1
kind: stack
meta: {name: through}
components:
- {name: a, source: {dir: a}}
- {name: b, source: {dir: b}, depends: [a]}
- {name: c, source: {dir: c}, depends: [a]}
- {name: d, source: {dir: d}, depends: []}
- {name: e, source: {dir: e}}
- {name: f, source: {dir: f}, depends: [e]}
lifecycle: {verbs: [deploy, undeploy], order: [a, b, c, d, e, f]}
parameters:
- {name: x, value: v1}
- {name: api.token, value: s3cr3t-token}
---
version: 1
kind: component
meta: {name: a}
parameters:
- {name: x, env: X}
- {name: api.token, env: TOKEN}
outputs:
- {name: a.val, fromTfVar: val}
- {name: a.id, fromTfVar: id}
- {name: a.token, fromTfVar: token, kind: secret}
---
version: 1
kind: component
meta: {name: b}
parameters:
- {name: b.in, value: '${a.val}', env: IN}
- {name: b.token, value: '${a.token}', env: TOKEN_IN}
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
---
version: 1
kind: component
meta: {name: e}
outputs:
- {name: e.url, fromTfVar: url}
---
version: 1
kind: component
meta: {name: f}
parameters:
- {name: f.in, value: '${e.url}', env: IN}
";
    let mut test = Test::new()
        .file("hub.yaml.elaborate", text)
        .script(
            "a/deploy.sh",
            "#!/bin/sh\necho; echo Outputs:; echo \"val = $X\"; echo 'id = id-4242'; echo \"token = $TOKEN\"\n",
        )
        .script(
            "a/plan.sh",
            "#!/bin/sh\ntouch ../a-planned\necho; echo Outputs:; echo \"val = $X\"; echo 'id (known after apply)'; echo \"token = $TOKEN\"\n",
        )
        .script(
            "e/deploy.sh",
            "#!/bin/sh\necho; echo Outputs:; echo 'url = https://e'\n",
        );
    for name in ["b", "c", "d", "f"] {
        test = test.script(
            &format!("{name}/deploy.sh"),
            &format!("#!/bin/sh\necho \"$IN\" > ../{name}-read\n"),
        );
    }
    for name in ["a", "b", "c", "d", "e", "f"] {
        test = test.script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

fn plan(test: &Test, extra: &[&str]) -> Output {
    let mut args = vec!["plan", "hub.yaml.elaborate", "-s", "s.state"];
    args.extend(extra);
    hub_pinned(test.root(), &args)
}

fn json(out: &Output) -> Json {
    serde_json::from_str(&out.stdout).expect("a JSON plan")
}

fn component<'j>(plan: &'j Json, name: &str) -> &'j Json {
    plan["components"]
        .as_array()
        .and_then(|all| all.iter().find(|c| c["name"] == name))
        .expect(name)
}

fn parameter<'j>(component: &'j Json, name: &str) -> &'j Json {
    component["parameters"]
        .as_array()
        .and_then(|all| all.iter().find(|p| p["name"] == name))
        .expect(name)
}

#[test]
fn dependents_are_planned_with_planned_values_and_deferred_on_unknown_ones() {
    let test = stack();
    let out = plan(&test, &["--plan-steps"]);
    out.success();
    let text = &out.stdout;
    assert!(text.contains("+ b.in = v1"), "{text}");
    assert!(
        text.contains(
            "c: create (never deployed)\n  deferred: planned after a applies (unknown: `c.in` ← output `a.id` of a)"
        ),
        "{text}"
    );
    // Without a plan step, a component that runs has every output unknown.
    assert!(
        text.contains("deferred: planned after e applies (unknown: `f.in` ← output `e.url` of e)"),
        "{text}"
    );
    assert!(
        !text.contains("d: create (never deployed)\n  deferred"),
        "{text}"
    );
    assert!(
        text.contains("  planned outputs:\n    a.val = v1\n    a.id = (known after apply)\n    a.token = (masked)\n"),
        "{text}"
    );
    assert!(!text.contains("s3cr3t-token"), "{text}");
    assert!(text.ends_with("0 would fail, 2 deferred\n"), "{text}");
    // The plan step's lines go to stderr, labelled, its secret masked.
    out.stderr_has("a (plan) | val = v1");
    assert!(!out.stderr.contains("s3cr3t-token"), "{}", out.stderr);

    let out = plan(&test, &["--plan-steps", "--format", "json"]);
    out.success();
    let document = json(&out);
    assert_eq!(document["counts"]["deferred"], 2);
    let b = component(&document, "b");
    assert_eq!(parameter(b, "b.in")["value"], "v1");
    assert_eq!(parameter(b, "b.in")["known"], true);
    assert!(b.get("deferred").is_none());
    let c = component(&document, "c");
    assert_eq!(parameter(c, "c.in")["known"], false);
    assert_eq!(c["deferred"]["after"], serde_json::json!(["a"]));
    assert_eq!(
        c["deferred"]["inputs"],
        serde_json::json!([{"parameter": "c.in", "component": "a", "output": "a.id"}])
    );
    let outputs = &component(&document, "a")["outputs"];
    assert_eq!(
        outputs[0],
        serde_json::json!({"name": "a.val", "known": true, "value": "v1", "source": "plan-step"})
    );
    assert_eq!(
        outputs[1],
        serde_json::json!({"name": "a.id", "known": false, "source": "plan-step"})
    );
    assert_eq!(outputs[2]["value"], "(masked)");
    assert_eq!(
        component(&document, "e")["outputs"][0]["source"],
        "no-plan-step"
    );
    assert_eq!(component(&document, "c")["action"], "create");
}

#[test]
fn without_plan_steps_no_component_code_runs_and_nothing_is_deferred() {
    let test = stack();
    let out = plan(&test, &[]);
    out.success();
    assert!(!test.root().join("a-planned").exists());
    assert!(!out.stdout.contains("deferred"), "{}", out.stdout);
    assert!(
        out.stdout.contains("+ b.in = (known after a deploys)"),
        "{}",
        out.stdout
    );
    let document = json(&plan(&test, &["--format", "json"]));
    assert!(document["counts"].get("deferred").is_none());
    assert!(component(&document, "c").get("deferred").is_none());
    // With the flag, the step runs.
    plan(&test, &["--plan-steps"]).success();
    assert!(test.root().join("a-planned").exists());
}

#[test]
fn the_markdown_plan_shows_deferred_components_and_planned_outputs() {
    let test = stack();
    let out = plan(&test, &["--plan-steps", "--format", "markdown"]);
    out.success();
    let text = &out.stdout;
    assert!(text.contains(", 2 deferred**"), "{text}");
    assert!(
        text.contains("| `c` | **create** | never deployed; deferred: planned after a applies"),
        "{text}"
    );
    assert!(text.contains("Planned outputs:"), "{text}");
    assert!(text.contains("a.id = (known after apply)"), "{text}");
    assert!(!text.contains("s3cr3t-token"), "{text}");
}

#[test]
fn policies_see_whether_a_parameter_is_known() {
    let test = stack().file(
        "rules.yaml",
        "
        - name: b-reads-a-known-value
          deny: plan.components.exists(c, c.parameters.exists(p, p.name == 'b.in' && !p.known))
          message: b would deploy with a value nobody reviewed
        ",
    );
    // Without plan steps `a.val` is not known before `a` deploys.
    let out = plan(&test, &["--policy", "rules.yaml"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout.contains(
            "deny  b-reads-a-known-value (rules.yaml:2): b would deploy with a value nobody reviewed"
        ),
        "{}",
        out.stdout
    );
    // Its plan step says it: the rule passes.
    plan(&test, &["--plan-steps", "--policy", "rules.yaml"]).success();
}

#[test]
fn a_saved_plan_with_plan_steps_applies_and_its_deferred_components_read_the_real_outputs() {
    let test = stack();
    plan(&test, &["--plan-steps", "--out", "p.json"]).success();
    let saved = std::fs::read_to_string(test.root().join("p.json")).expect("saved plan");
    assert!(saved.contains("\"plan_steps\": true"), "{saved}");
    hub_pinned(
        test.root(),
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-s",
            "s.state",
            "--plan",
            "p.json",
        ],
    )
    .success();
    let read =
        |name: &str| std::fs::read_to_string(test.root().join(format!("{name}-read"))).expect(name);
    assert_eq!(read("b"), "v1\n");
    assert_eq!(read("c"), "id id-4242\n");
    assert_eq!(read("f"), "https://e\n");
}

#[test]
fn a_failing_plan_step_fails_its_component_in_the_plan() {
    let test = stack().script(
        "a/plan.sh",
        "#!/bin/sh\necho 'no credentials' >&2\nexit 3\n",
    );
    let out = plan(&test, &["--plan-steps"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("a: fail (its plan step failed: `plan.sh` ended with"),
        "{}",
        out.stdout
    );
    out.stderr_has("a (plan) | no credentials");
}

/// Built-in Terraform: `val = var.x` is known, `id = uuid()` is not.
#[test]
fn a_terraform_plan_step_knows_var_outputs_and_not_uuid() {
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
            - {name: c, source: {dir: c}, depends: [a]}
            lifecycle: {verbs: [deploy, undeploy], order: [a, b, c]}
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
            meta: {name: c}
            parameters:
            - {name: c.in, value: '${a.id}'}
            ",
        )
        .file(
            "a/main.tf",
            "variable \"x\" { type = string }\noutput \"val\" { value = var.x }\noutput \"id\" { value = uuid() }\n",
        );
    let mut test = test;
    for name in ["b", "c"] {
        test = test
            .script(&format!("{name}/deploy.sh"), "#!/bin/sh\n")
            .script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    let tf = tf.display().to_string();
    let out = crate::common::hub_isolated(
        &test,
        &[
            "plan",
            "hub.yaml.elaborate",
            "-s",
            "s.state",
            "--plan-steps",
            "--format",
            "json",
        ],
        &[("HUB_TERRAFORM", tf.as_str()), ("CHECKPOINT_DISABLE", "1")],
    );
    out.success();
    let document = json(&out);
    let outputs = &component(&document, "a")["outputs"];
    assert_eq!(
        outputs[0],
        serde_json::json!({"name": "a.val", "known": true, "value": "v1", "source": "plan-step"})
    );
    assert_eq!(
        outputs[1],
        serde_json::json!({"name": "a.id", "known": false, "source": "plan-step"})
    );
    assert_eq!(parameter(component(&document, "b"), "b.in")["value"], "v1");
    assert!(component(&document, "b").get("deferred").is_none());
    assert_eq!(
        component(&document, "c")["deferred"]["after"],
        serde_json::json!(["a"])
    );
    assert!(!test.root().join("a/.terraform/hub-planned.json").exists());
}

#[test]
fn a_deploy_of_the_plan_refuses_a_component_whose_read_output_changed_and_goes_on_with_the_rest() {
    // `a` applies other values than its plan step planned.
    let test = stack().script(
        "a/deploy.sh",
        "#!/bin/sh\necho; echo Outputs:; echo 'val = drifted'; echo 'id = id-4242'; echo 'token = other-s3cr3t'\n",
    );
    let out = plan(&test, &["--plan-steps", "--out", "p.json"]);
    out.success();
    assert!(!out.stdout.contains("s3cr3t-token"), "{}", out.stdout);
    let saved: Json =
        serde_json::from_str(&std::fs::read_to_string(test.root().join("p.json")).expect("plan"))
            .expect("JSON");
    let b = component(&saved, "b");
    assert_eq!(b["reads"][0]["output"], "a.token");
    assert_eq!(b["reads"][0]["planned"], "(masked)");
    assert_eq!(b["reads"][1]["component"], "a");
    assert_eq!(b["reads"][1]["output"], "a.val");
    assert_eq!(b["reads"][1]["planned"], "v1");
    assert!(b["reads"][1]["digest"]
        .as_str()
        .is_some_and(|d| d.starts_with("sha256:")));
    let out = hub_pinned(
        test.root(),
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-s",
            "s.state",
            "--plan",
            "p.json",
        ],
    );
    assert_ne!(out.status, 0, "{}", out.stderr);
    out.stderr_has(
        "refused: what it reads changed since the plan: `a`'s output `a.token` (planned `(masked)`, now `(masked)`), `a`'s output `a.val` (planned `v1`, now `drifted`)",
    );
    assert!(!out.stderr.contains("other-s3cr3t"), "{}", out.stderr);
    assert!(!out.stdout.contains("other-s3cr3t"), "{}", out.stdout);
    // `b` never ran; `c` (it read `a.id`, unknown when planned) and `d`
    // (independent) did.
    assert!(!test.root().join("b-read").exists());
    let read =
        |name: &str| std::fs::read_to_string(test.root().join(format!("{name}-read"))).expect(name);
    assert_eq!(read("c"), "id id-4242\n");
    assert_eq!(read("d"), "plain\n");
}

/// A plan step and a deploy printing the same `Outputs:` block with CRLF
/// line ends, a heredoc among them: the plan's planned value and the
/// value the deploy records are the same text (a line end's `\r` is not
/// part of either).
#[test]
fn a_crlf_heredoc_output_is_planned_as_it_is_deployed() {
    let block =
        r"printf 'Outputs:\r\nval = <<EOT\r\none\r\ntwo\r\nEOT\r\nid = id-1\r\ntoken = t\r\n\r\n'";
    let test = stack()
        .script("a/plan.sh", &format!("#!/bin/sh\n{block}\n"))
        .script("a/deploy.sh", &format!("#!/bin/sh\n{block}\n"));
    let out = plan(&test, &["--plan-steps", "--format", "json"]);
    out.success();
    let document = json(&out);
    let planned = &component(&document, "a")["outputs"][0];
    assert_eq!(planned["name"], "a.val");
    assert_eq!(planned["value"], "one\ntwo");
    let deployed = hub_pinned(
        test.root(),
        &["deploy", "hub.yaml.elaborate", "-s", "s.state"],
    );
    deployed.success();
    let b_read = std::fs::read_to_string(test.root().join("b-read")).expect("b ran");
    assert_eq!(b_read, "one\ntwo\n", "b reads the value a deployed");
}
