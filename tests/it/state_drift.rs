//! Stack parameters that changed since the state was written: an undeploy
//! runs with the new values but keeps the deployed ones in the state
//! (deploy.md §10.3, §10.4, Errata 3), the consistency list (§4.4) stops
//! it, and every change is warned about once.

use crate::common::{hub_isolated, Output, Test};
use std::os::unix::fs::PermissionsExt;

/// One component `c` that records each run's `XV` and `DOMAIN_V` in
/// `run.log`; the stack takes `x.value` from `$X_VALUE` and `dns.domain`
/// from `$DOMAIN` (or from `params.yaml` when `domain_from_env` is off).
fn stack(domain_from_env: bool) -> Test {
    let (domain, params) = if domain_from_env {
        (
            "- name: dns.domain\n  fromEnv: DOMAIN\n",
            "parameters: []\n",
        )
    } else {
        (
            "",
            "parameters:\n- name: dns.domain\n  value: one.example\n",
        )
    };
    let test = Test::new()
        .file(
            "hub.yaml",
            &format!(
                "version: 1\nkind: stack\nmeta: {{name: drift}}\ncomponents:\n- name: c\n  source: {{dir: c}}\nlifecycle: {{verbs: [deploy, undeploy], order: [c]}}\nparameters:\n- name: x.value\n  fromEnv: X_VALUE\n{domain}"
            ),
        )
        .file("params.yaml", params)
        .file(
            "c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c}\nparameters:\n- name: x.value\n  env: XV\n- name: dns.domain\n  env: DOMAIN_V\n",
        )
        .file(
            "c/deploy.sh",
            "#!/bin/sh\necho \"deploy $XV $DOMAIN_V\" >> ../run.log\n",
        )
        .file(
            "c/undeploy.sh",
            "#!/bin/sh\necho \"undeploy $XV $DOMAIN_V\" >> ../run.log\n",
        );
    for script in ["deploy.sh", "undeploy.sh"] {
        let path = test.root().join("c").join(script);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    test
}

fn hub(test: &Test, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut all = vec!["hub.yaml", "params.yaml", "-s", "s.state"];
    all.splice(0..0, args.iter().copied());
    hub_isolated(test, &all, env)
}

fn read(test: &Test, path: &str) -> String {
    std::fs::read_to_string(test.root().join(path)).expect("read")
}

/// The `stackParameters:` block of a state file, as written.
fn stack_parameters(state: &str) -> String {
    let mut lines = state.lines().skip_while(|l| *l != "stackParameters:");
    let head = lines.next().expect("stackParameters");
    let items = lines.take_while(|l| l.starts_with(' ') || l.starts_with('-'));
    std::iter::once(head)
        .chain(items)
        .collect::<Vec<_>>()
        .join("\n")
}

fn warnings(out: &Output) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with("warning:"))
        .collect()
}

#[test]
fn undeploy_after_a_changed_environment_warns_and_keeps_what_was_deployed() {
    let test = stack(false);
    hub(&test, &["deploy", "-e", "X_VALUE=a"], &[]).success();
    let deployed = stack_parameters(&read(&test, "s.state"));
    assert!(deployed.contains("value: a"), "{deployed}");

    let out = hub(&test, &["undeploy"], &[("X_VALUE", "b")]);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: s.state: stack parameter `x.value` is `b` (from `X_VALUE` in the environment) but the state holds `a`, the value it was deployed with; undeploying with `b` and keeping `a` in the state"],
        "{}",
        out.stderr
    );
    assert_eq!(
        read(&test, "run.log"),
        "deploy a one.example\nundeploy b one.example\n"
    );
    let after = read(&test, "s.state");
    assert_eq!(stack_parameters(&after), deployed);
    assert!(after.contains("status: undeployed"), "{after}");
}

#[test]
fn undeploy_refuses_a_changed_consistency_parameter() {
    let test = stack(true);
    let env = [("X_VALUE", "a"), ("DOMAIN", "one.example")];
    hub(&test, &["deploy"], &env).success();
    let deployed = read(&test, "s.state");

    let changed = [("X_VALUE", "a"), ("DOMAIN", "two.example")];
    let out = hub(&test, &["undeploy"], &changed);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("`dns.domain` is `one.example` in the state but `two.example` in the stack")
        .stderr_has("set `DOMAIN=one.example` in the environment (or pass `-e DOMAIN=one.example`) to undeploy what it records, or add `--force`");
    assert!(warnings(&out).is_empty(), "{}", out.stderr);
    assert_eq!(
        read(&test, "run.log"),
        "deploy a one.example\n",
        "nothing ran"
    );
    assert_eq!(read(&test, "s.state"), deployed, "the state is unchanged");

    let out = hub(&test, &["undeploy", "--force"], &changed);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: s.state: `dns.domain` is `one.example` in the state but `two.example` in the stack (--force)"],
        "{}",
        out.stderr
    );
    assert_eq!(
        read(&test, "run.log"),
        "deploy a one.example\nundeploy a two.example\n"
    );
    assert_eq!(
        stack_parameters(&read(&test, "s.state")),
        stack_parameters(&deployed)
    );
}

/// A value changed in a parameters file shows under its plain name and,
/// copied by elaborate, under the `|c` name of the component's `kind:
/// user` parameter: one warning names both.
#[test]
fn a_changed_parameter_is_warned_about_once() {
    let test = stack(false)
        .file(
            "c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c}\nparameters:\n- name: x.value\n  env: XV\n- name: dns.domain\n  env: DOMAIN_V\n- name: app.size\n  kind: user\n",
        )
        .file(
            "params.yaml",
            "parameters:\n- name: dns.domain\n  value: one.example\n- name: app.size\n  value: small\n",
        );
    hub(&test, &["deploy", "-e", "X_VALUE=a"], &[]).success();
    std::fs::write(
        test.root().join("params.yaml"),
        "parameters:\n- name: dns.domain\n  value: one.example\n- name: app.size\n  value: large\n",
    )
    .expect("write");
    let out = hub(&test, &["deploy", "-e", "X_VALUE=a"], &[]);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: s.state: stack parameter `app.size` (also for component `c`) is `large` (its `value` at params.yaml:4) but the state holds `small`; deploying with `large`, which the state records from now on"],
        "{}",
        out.stderr
    );
    assert!(stack_parameters(&read(&test, "s.state")).contains("value: large"));
}

/// `hub plan` records nothing: the same change is said in the conditional,
/// and the state keeps its value.
#[test]
fn a_plan_says_what_a_deploy_would_do_with_a_changed_parameter() {
    let test = stack(false)
        .file(
            "c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c}\nparameters:\n- name: x.value\n  env: XV\n- name: dns.domain\n  env: DOMAIN_V\n- name: app.size\n  kind: user\n",
        )
        .file(
            "params.yaml",
            "parameters:\n- name: dns.domain\n  value: one.example\n- name: app.size\n  value: small\n",
        );
    hub(&test, &["deploy", "-e", "X_VALUE=a"], &[]).success();
    std::fs::write(
        test.root().join("params.yaml"),
        "parameters:\n- name: dns.domain\n  value: one.example\n- name: app.size\n  value: large\n",
    )
    .expect("write");
    let out = hub(&test, &["plan", "-e", "X_VALUE=a"], &[]);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: s.state: stack parameter `app.size` (also for component `c`) is `large` (its `value` at params.yaml:4) but the state holds `small`; would deploy with `large`, which the state would record from then on"],
        "{}",
        out.stderr
    );
    assert!(stack_parameters(&read(&test, "s.state")).contains("value: small"));
}
