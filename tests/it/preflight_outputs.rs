//! Declared outputs checked by the plan: a `value` naming something that
//! will not exist, or an output left without a source by a typo in its
//! manifest, fails the plan, and the deploy refuses it before the first
//! component runs, with every other problem found at once.

use crate::common::{hub_pinned, Output, Test};

/// `dns` prints `domain`, declared as its output `dns.domain`; `app`
/// (after it) declares the outputs `outputs` (YAML flow items) and the
/// parameter `dns.domain`. Each deploy leaves `ran` in its folder.
fn stack(outputs: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: outputs}
            components:
            - {name: dns, source: {dir: dns}}
            - {name: app, source: {dir: app}, depends: [dns]}
            lifecycle: {order: [dns, app]}
            ",
        )
        .file(
            "dns/hub-component.yaml",
            "kind: component\nmeta: {name: dns}\noutputs:\n- {name: dns.domain, fromTfVar: domain}\n",
        )
        .script(
            "dns/deploy.sh",
            "#!/bin/sh\ntouch ran\nprintf '\\nOutputs:\\ndomain = example.com\\n\\n'\n",
        )
        .file(
            "app/hub-component.yaml",
            &format!(
                "kind: component\nmeta: {{name: app}}\nparameters:\n- {{name: dns.domain}}\noutputs:\n{outputs}"
            ),
        )
        .script(
            "app/deploy.sh",
            "#!/bin/sh\ntouch ran\nprintf '\\nOutputs:\\nport = 8080\\n\\n'\n",
        )
}

fn run(test: &Test, args: &[&str]) -> Output {
    hub_pinned(test.root(), args)
}

/// Neither component ran, and no state was written.
fn nothing_ran(test: &Test) {
    for name in ["dns", "app"] {
        assert!(!test.root().join(name).join("ran").exists(), "{name} ran");
    }
    assert!(
        !test.root().join("hub.state").exists(),
        "a state was written"
    );
}

#[test]
fn an_unknown_name_in_an_output_value_fails_the_plan_and_the_deploy_before_anything_runs() {
    let test = stack("- name: app.url\n  value: https://app.${dns.domian}\n");
    let plan = run(&test, &["plan", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(plan.status, 1, "{}", plan.stderr);
    assert!(
        plan.stdout.contains(
            "app: fail (its outputs cannot be computed: `app:app.url` references unknown `dns.domian` (declared at app/hub-component.yaml:6))"
        ),
        "{}",
        plan.stdout
    );
    assert!(plan.stdout.contains("dns: create"), "{}", plan.stdout);
    let out = run(&test, &["deploy", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    insta::assert_snapshot!(out.stderr, @r"
    error: component `app`: would fail: its outputs cannot be computed:
        - `app:app.url` references unknown `dns.domian` (declared at app/hub-component.yaml:6)
        help: an output's `value` reads only the component's own parameters and the outputs declared before it: declare the missing names among the component's `parameters:` (they then take the stack's values) or correct the reference
      help: `hub plan` shows each component that would fail and why; fix the stack or its parameters, or add `--force` to run the others anyway; nothing ran and the state is untouched (`hub plan` shows the same)
    ");
    nothing_ran(&test);
}

#[test]
fn a_key_typo_that_leaves_an_output_without_a_source_is_refused_before_anything_runs() {
    let test = stack("- name: app.port\n  fromTfvar: port\n");
    let out = run(&test, &["deploy", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "warning: app/hub-component.yaml:7:3: unknown key `outputs[0].fromTfvar` is ignored (did you mean `fromTfVar`?)",
    )
    .stderr_has("error: component `app`: would fail: its outputs cannot be computed:")
    .stderr_has("`app:app.port` has neither `fromTfVar` nor `value`, so it takes the component's parameter `app.port`, which the component does not declare (declared at app/hub-component.yaml:6)")
    .stderr_has("give output `app.port` at app/hub-component.yaml:6 a `fromTfVar: KEY`");
    nothing_ran(&test);
}

#[test]
fn every_problem_is_named_at_once_with_a_missing_implementation() {
    let test = stack("- name: app.url\n  value: ${nope}\n");
    std::fs::remove_file(test.root().join("dns/deploy.sh")).expect("rm");
    let out = run(&test, &["deploy", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("error: 2 problems found before any component started:\n  - component `dns`: no implementation of `deploy` in `")
        .stderr_has("\n    - no `Makefile`\n")
        .stderr_has("\n  - component `app`: would fail: its outputs cannot be computed:\n    - `app:app.url` references unknown `nope`");
    nothing_ran(&test);
    let plan = run(&test, &["plan", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(plan.status, 1, "{}", plan.stderr);
    assert!(
        plan.stdout
            .contains("dns: fail (no implementation of `deploy` in `")
            && plan.stdout.contains(": no `Makefile`; no file `deploy`"),
        "{}",
        plan.stdout
    );
}

#[test]
fn outputs_reading_parameters_and_earlier_outputs_deploy() {
    let test = stack(
        "- {name: app.port, fromTfVar: port}\n- {name: app.url, value: 'https://${dns.domain}:${app.port}'}\n- {name: dns.domain}\n",
    );
    let plan = run(&test, &["plan", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(plan.status, 0, "{}\n{}", plan.stdout, plan.stderr);
    let out = run(&test, &["deploy", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let state = std::fs::read_to_string(test.root().join("hub.state")).expect("state");
    assert!(state.contains("https://example.com:8080"), "{state}");
}
