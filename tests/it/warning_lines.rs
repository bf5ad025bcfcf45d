//! Every warning that comes from a file names the file and the line (one
//! test per kind, through the real binary), and the messages of issue 25
//! that were wrong: the line of a nested parameter or of the expression
//! itself, an application's `lifecycle.bare`, hints that fit how the user
//! ran, and no "overwritten" by the same value.

use crate::common::{hub_isolated, Output, Test};

/// `hub elaborate hub.yaml [params.yaml] -o e.yaml` in `t`.
fn elaborate(t: &Test, params: bool) -> Output {
    let mut args = vec!["elaborate", "hub.yaml"];
    if params {
        args.push("params.yaml");
    }
    args.extend(["-o", "e.yaml"]);
    hub_isolated(t, &args, &[])
}

/// The warning lines, but those about stack parameters nothing reads
/// (these stacks set a few; `unread.rs` tests those warnings).
fn warnings(out: &Output) -> Vec<&str> {
    out.stderr
        .lines()
        .filter(|l| l.starts_with("warning:") && !l.contains("is set but never read"))
        .collect()
}

/// A stack of one component `c`, with `stack_params` (lines of the stack's
/// `parameters:` list, from line 7) and `component_params` (lines of the
/// component manifest's list, from line 5).
fn stack(stack_params: &str, component_params: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            &format!("kind: stack\nmeta:\n  name: s\ncomponents:\n  - {{name: c, source: {{dir: c}}}}\nparameters:\n{stack_params}"),
        )
        .file(
            "c/hub-component.yaml",
            &format!("kind: component\nmeta:\n  name: c\nparameters:\n{component_params}"),
        )
        .script("c/deploy.sh", "#!/bin/sh\n")
}

#[test]
fn a_parameter_without_a_value_is_warned_about_at_its_line() {
    let t = stack(
        "  - name: x\n    value: 1\n  - name: dns\n    parameters:\n      - name: zone\n        value: z\n      - name: domain\n",
        "  - name: x\n",
    );
    let out = elaborate(&t, false);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: hub.yaml:13: parameter `dns.domain` has no value"]
    );
}

#[test]
fn a_user_parameter_without_a_value_nor_default_is_warned_about_at_its_line() {
    let t = stack("  - name: x\n    value: 1\n", "  - name: x\n").file(
        "params.yaml",
        "parameters:\n  - name: token\n    kind: user\n",
    );
    let out = elaborate(&t, true);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: params.yaml:2: user parameter `token` has no value nor default; give one in a parameters file or at deploy"]
    );
}

#[test]
fn a_parameter_declaration_warning_names_its_line() {
    let t = stack(
        "  - name: a\n    kind: wrong\n    value: 1\n  - name: b\n    empty: maybe\n    value: 1\n  - name: l\n    kind: link\n  - name: e\n    env: E\n    value: 1\n",
        "  - name: x\n    value: 1\n  - name: grp\n    parameters:\n      - name: user\n        fromEnv: USER_NAME\n      - name: d\n        default: 1\n      - name: k\n        kind: link\n        value: v\n",
    );
    let out = elaborate(&t, false);
    out.success();
    assert_eq!(
        warnings(&out),
        [
            "warning: c/hub-component.yaml:9:7: parameter `grp.user|c` sets `fromEnv: USER_NAME` in a component manifest; it becomes a user parameter of the stack",
            "warning: c/hub-component.yaml:11:7: parameter `grp.d|c` sets `default:` in a component manifest; use `value:` instead",
            "warning: c/hub-component.yaml:13:7: parameter `grp.k|c` has `kind: link`, which is not supported in a component manifest",
            "warning: hub.yaml:7:3: parameter `a` has unknown `kind: wrong` (expected user, tech or link)",
            "warning: hub.yaml:10:3: parameter `b` has `empty: maybe`; the only value recognised is `allow`",
            "warning: hub.yaml:13:3: parameter `l` of kind `link` has no value",
            "warning: hub.yaml:15:3: parameter `e` sets `env: E` at stack level, where it has no effect; set `env` in the component manifest",
            "warning: hub.yaml:13: parameter `l` has no value",
        ]
    );
}

#[test]
fn a_less_specific_value_is_warned_about_at_its_line_and_the_same_value_is_not() {
    let t = stack(
        "  - name: size\n    component: c\n    value: big\n  - name: flag\n    component: c\n    value: false\n",
        "  - name: x\n    value: 1\n",
    )
    .file(
        "params.yaml",
        "parameters:\n  - name: size\n    value: small\n  - name: flag\n    value: \"false\"\n",
    );
    let out = elaborate(&t, true);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: params.yaml:2:3: parameter `size|c` value `big` is overwritten by the less specific parameter `size` value `small`"],
        "`false` and \"false\" are the same value: no warning"
    );
}

#[test]
fn a_manifest_of_another_kind_is_warned_about_at_its_kind() {
    let t = stack("  - name: x\n    value: 1\n", "  - name: x\n").file(
        "hub.yaml",
        "meta:\n  name: s\nkind: stak\ncomponents:\n  - {name: c, source: {dir: c}}\n",
    );
    let out = elaborate(&t, false);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: hub.yaml:3:1: manifest `kind` should be `stack` or `application`, found `stak`"]
    );
}

/// An application: a stack whose manifest is also a component of its own.
fn application(lifecycle: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            &format!("kind: application\nmeta:\n  name: app\n  source:\n    dir: .\n{lifecycle}parameters:\n  - name: x\n    value: 1\n"),
        )
        .script("deploy.sh", "#!/bin/sh\n")
}

#[test]
fn an_application_without_lifecycle_bare_is_told_so_at_its_line() {
    let out = elaborate(&application("lifecycle:\n  verbs: [deploy]\n"), false);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: hub.yaml:6:1: application `app` does not set `lifecycle.bare`; an application should set `lifecycle.bare: allow`"]
    );
    let out = elaborate(&application(""), false);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: hub.yaml:1:1: application `app` does not set `lifecycle.bare`; an application should set `lifecycle.bare: allow`"]
    );
    let out = elaborate(&application("lifecycle:\n  bare: deny\n"), false);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: hub.yaml:7:3: application `app` should set `lifecycle.bare: allow`, found `deny`"]
    );
}

#[test]
fn a_cel_error_names_the_line_of_the_expression() {
    let t = Test::new().file(
        "hub.yaml",
        "kind: stack\nmeta:\n  name: s\nparameters:\n  - name: big\n    brief: a long declaration\n    description: |\n      one\n      two\n    value: \"#{size(1, 2, 3)}\"\n",
    );
    let out = hub_isolated(&t, &["plan", "hub.yaml", "-n"], &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("error: stack parameters cannot be locked:\n  - `big`: #{size(1, 2, 3)}: CEL evaluation error: found no matching overload for 'size' applied to '(int, int, int)' (declared at hub.yaml:10:13)\n  --> hub.yaml:10:13\n");
}

/// The corpus stack whose component nests `redis.username` and
/// `redis.password` under `redis`: each is named at its own line.
#[test]
fn nested_parameters_are_named_at_their_own_lines() {
    let Some(corpus) = crate::conformance::corpus() else {
        return;
    };
    let tmp = tempfile::tempdir().expect("temporary folder");
    crate::common::copy_tree(&corpus.join("hubctl-tutorial-035-redis"), tmp.path());
    let out = assert_cmd::Command::cargo_bin("hub")
        .expect("hub binary")
        .current_dir(tmp.path())
        .args(["plan", "hub.yaml", "-s", "s.state"])
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", tmp.path())
        .write_stdin(Vec::new())
        .output()
        .expect("run hub");
    let out = Output::of(out, tmp.path());
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("warning: components/redis/hub-component.yaml:16:7: parameter `redis.username|redis` sets `fromEnv: REDIS_USER` in a component manifest; it becomes a user parameter of the stack\n")
        .stderr_has("warning: components/redis/hub-component.yaml:18:7: parameter `redis.password|redis` sets `fromEnv: REDIS_PASSWORD` in a component manifest; it becomes a user parameter of the stack\n")
        .stderr_has("      `redis.password|redis` (declared at components/redis/hub-component.yaml:18): pass `-e REDIS_PASSWORD=...`, set the environment variable REDIS_PASSWORD, or give it a `value` in a parameters file given after the stack\n")
        .stderr_has("      `redis.username|redis` (declared at components/redis/hub-component.yaml:16): pass `-e REDIS_USER=...`, set the environment variable REDIS_USER, or give it a `value` in a parameters file given after the stack\n");
}

#[test]
fn hints_fit_a_stack_or_an_elaborated_file() {
    let t = stack(
        "  - name: token\n    kind: user\n  - name: url\n    value: ${nowhere}\n",
        "  - name: x\n    value: 1\n",
    );
    let given = hub_isolated(&t, &["plan", "hub.yaml", "-n"], &[]);
    assert_eq!(given.status, 1, "{}", given.stderr);
    given.stderr_has("`token` (declared at hub.yaml:7): add `fromEnv: VAR` to its declaration, or give it a `value` in a parameters file given after the stack\n")
        .stderr_has("help: values can also come from `-e NAME=value` for `fromEnv` parameters, or be typed at a terminal\n");
    assert!(
        !given.stderr.contains("elaborate again"),
        "{}",
        given.stderr
    );

    hub_isolated(&t, &["elaborate", "hub.yaml", "-o", "e.yaml"], &[]).success();
    let file = hub_isolated(&t, &["plan", "e.yaml", "-n"], &[]);
    assert_eq!(file.status, 1, "{}", file.stderr);
    file.stderr_has("): add `fromEnv: VAR` to its declaration, or give it a `value` in a parameters file and elaborate again\n");

    let t = stack(
        "  - name: url\n    value: ${nowhere}\n",
        "  - name: x\n    value: 1\n",
    );
    let given = hub_isolated(&t, &["plan", "hub.yaml", "-n"], &[]);
    assert_eq!(given.status, 1, "{}", given.stderr);
    given.stderr_has("help: declare the missing parameters in the stack (hub.yaml or a parameters file given after it)\n");
    hub_isolated(&t, &["elaborate", "hub.yaml", "-o", "e.yaml"], &[]).success();
    let file = hub_isolated(&t, &["plan", "e.yaml", "-n"], &[]);
    assert_eq!(file.status, 1, "{}", file.stderr);
    file.stderr_has("help: declare the missing parameters in the stack (hub.yaml or a parameters file) and elaborate again\n");
}

#[test]
fn a_manifest_of_several_documents_is_warned_about_at_the_second() {
    let t = stack("  - name: x\n    value: 1\n", "  - name: x\n    value: 1\n").file(
        "params.yaml",
        "parameters:\n  - name: y\n    value: 2\n---\nparameters: []\n",
    );
    let out = elaborate(&t, true);
    out.success();
    assert_eq!(
        warnings(&out),
        ["warning: params.yaml:4:1: parameters file holds 2 YAML documents; only the first is used"]
    );
}

#[test]
fn a_stack_parameter_filled_from_the_state_is_warned_about_at_its_declaration() {
    let t = stack("  - name: x\n    value: 1\n", "  - name: x\n");
    hub_isolated(&t, &["deploy", "hub.yaml", "-s", "s.state"], &[]).success();
    std::fs::write(
        t.root().join("hub.yaml"),
        "kind: stack\nmeta:\n  name: s\ncomponents:\n  - {name: c, source: {dir: c}}\nparameters:\n  - name: x\n",
    )
    .expect("write");
    let out = hub_isolated(&t, &["plan", "hub.yaml", "-s", "s.state"], &[]);
    out.success();
    out.stderr_has(
        "warning: hub.yaml:7: stack parameter `x` is empty; using the state's value `1`\n",
    );
    for warning in warnings(&out) {
        assert!(warning.starts_with("warning: hub.yaml:7: "), "{warning}");
    }
}

#[test]
fn a_parameter_without_a_name_is_warned_about_at_its_group() {
    let t = stack(
        "  - name: x\n    value: 1\n  - name: grp\n    parameters:\n      - value: 2\n",
        "  - name: x\n    value: 1\n",
    );
    let out = elaborate(&t, false);
    out.success().stderr_has(
        "warning: hub.yaml:9:3: a parameter has an empty name (under `grp`); it is kept as `grp.`\n",
    );
}

#[test]
fn a_template_without_a_substitution_is_warned_about_by_its_file() {
    let t = Test::new()
        .file(
            "hub.yaml",
            "kind: stack\nmeta:\n  name: s\ncomponents:\n  - {name: c, source: {dir: c}}\n",
        )
        .file(
            "c/hub-component.yaml",
            "kind: component\nmeta:\n  name: c\ntemplates:\n  files: [\"plain.conf.template\"]\n",
        )
        .file("c/plain.conf.template", "nothing to fill in\n")
        .script("c/deploy.sh", "#!/bin/sh\n");
    let out = hub_isolated(&t, &["deploy", "hub.yaml", "-s", "s.state"], &[]);
    out.success();
    let file = t.root().join("c/plain.conf.template");
    let expected = format!(
        "warning: {}: the template has no `${{...}}` substitution",
        file.display()
    );
    assert!(
        warnings(&out).contains(&expected.as_str()),
        "{expected}\n{}",
        out.stderr
    );
}
