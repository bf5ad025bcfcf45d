//! Stack parameters nobody reads: a name set in the stack's own files
//! within a typo of a name that is read is an error naming both, with the
//! file and line, for `validate`, `elaborate`, `plan` and `deploy` alike;
//! in a component manifest it is a warning (`--strict`: an error); a name
//! nothing reads and nothing is close to is a warning. A name read only
//! through an expression is read.

use crate::common::{hub_isolated, Output, Test};

/// Component `app` reads `app.replicas` (as `REPLICAS`); component `db`
/// reads `shared.sizes`. `app`'s manifest lifts `shared.size` for `db`,
/// which `db` does not read. `params` is the parameters file.
fn stack(stack_params: &str, params: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            &format!(
                "kind: stack\nmeta:\n  name: s\ncomponents:\n  - name: app\n    source:\n      dir: app\n  - name: db\n    source:\n      dir: db\nparameters:\n  - name: app.replicas\n    value: 1\n{stack_params}"
            ),
        )
        .file("params.yaml", &format!("parameters:\n{params}"))
        .file(
            "app/hub-component.yaml",
            "kind: component\nmeta:\n  name: app\nparameters:\n  - name: app.replicas\n    env: REPLICAS\n",
        )
        .file(
            "db/hub-component.yaml",
            "kind: component\nmeta:\n  name: db\nparameters:\n  - name: shared.sizes\n    value: 1\n    env: SIZES\n",
        )
        .script("app/deploy.sh", "#!/bin/sh\necho \"$REPLICAS\" > \"$(dirname \"$0\")/ran\"\n")
        .script("db/deploy.sh", "#!/bin/sh\ntouch \"$(dirname \"$0\")/ran\"\n")
}

/// `app`'s manifest also lifts `shared.size` for `db` (a leaf keeps its
/// own `component:`), a near typo of `shared.sizes`, which `db` reads.
fn with_component_typo(t: Test) -> Test {
    t.file(
        "app/hub-component.yaml",
        "kind: component\nmeta:\n  name: app\nparameters:\n  - name: app.replicas\n    env: REPLICAS\n  - name: shared\n    kind: user\n    parameters:\n      - name: size\n        component: db\n        value: 3\n",
    )
}

const PARAMS_TYPO: &str = "stack parameter `app.replica` looks like a typo: nothing reads it (did you mean `app.replicas`, read by component `app`?)\n  --> params.yaml:2\n";
const COMPONENT_WARNING: &str = "warning: app/hub-component.yaml:10: stack parameter `shared.size|db` is ignored: nothing reads it (did you mean `shared.sizes|db`, read by component `db`?)";

/// `hub validate`, `elaborate`, `plan` and `deploy` of the stack with its
/// parameters file and the same extra flags.
fn every_command(t: &Test, flags: &[&str]) -> Vec<(&'static str, Output)> {
    let commands: [(&str, &[&str]); 4] = [
        ("validate", &["validate", "hub.yaml", "params.yaml"]),
        (
            "elaborate",
            &["elaborate", "hub.yaml", "params.yaml", "-o", "e.yaml"],
        ),
        (
            "plan",
            &["plan", "hub.yaml", "params.yaml", "-s", "s.state"],
        ),
        (
            "deploy",
            &["deploy", "hub.yaml", "params.yaml", "-s", "s.state"],
        ),
    ];
    commands
        .into_iter()
        .map(|(name, args)| {
            let args: Vec<&str> = args.iter().chain(flags).copied().collect();
            (name, hub_isolated(t, &args, &[]))
        })
        .collect()
}

fn nothing_ran(t: &Test) {
    assert!(!t.root().join("app/ran").exists(), "nothing ran");
    assert!(!t.root().join("db/ran").exists(), "nothing ran");
    assert!(!t.root().join("e.yaml").exists(), "nothing was written");
    assert!(!t.root().join("s.state").exists(), "no state was written");
}

#[test]
fn a_misspelt_name_in_a_parameters_file_is_an_error_for_every_command() {
    let t = stack("", "  - name: app.replica\n    value: 7\n");
    for (command, out) in every_command(&t, &[]) {
        assert_eq!(out.status, 1, "{command}: {}", out.stderr);
        out.stderr_has(PARAMS_TYPO).stderr_has(
            "help: correct the parameter's name where it is set (or remove it); `--lenient` turns this error into a warning",
        );
    }
    nothing_ran(&t);
}

#[test]
fn a_misspelt_name_in_the_stack_file_is_an_error() {
    let t = stack(
        "  - name: app.replica\n    value: 7\n",
        "  - name: app.replicas\n    value: 2\n",
    );
    for (command, out) in every_command(&t, &[]) {
        assert_eq!(out.status, 1, "{command}: {}", out.stderr);
        out.stderr_has("stack parameter `app.replica` looks like a typo")
            .stderr_has("did you mean `app.replicas`")
            .stderr_has("--> hub.yaml:14\n");
    }
    nothing_ran(&t);
}

#[test]
fn lenient_makes_the_misspelt_name_a_warning_and_the_deploy_runs() {
    let t = stack("", "  - name: app.replica\n    value: 7\n");
    for (command, out) in every_command(&t, &["--lenient"]) {
        assert_eq!(out.status, 0, "{command}: {}", out.stderr);
        out.stderr_has("warning: params.yaml:2: stack parameter `app.replica` is ignored: nothing reads it (did you mean `app.replicas`, read by component `app`?)");
    }
    let replicas = std::fs::read_to_string(t.root().join("app/ran")).expect("app ran");
    assert_eq!(replicas.trim(), "1", "the misspelt value is ignored");
}

#[test]
fn a_parameter_nothing_reads_is_a_warning() {
    let t = stack("", "  - name: colour\n    value: blue\n");
    for (command, out) in every_command(&t, &[]) {
        assert_eq!(out.status, 0, "{command}: {}", out.stderr);
        out.stderr_has("warning: params.yaml:2: stack parameter `colour` is set but never read");
    }
    assert!(t.root().join("app/ran").exists(), "the deploy ran");
}

#[test]
fn a_near_typo_in_a_component_manifest_is_a_warning() {
    let t = with_component_typo(stack("", "  - name: app.replicas\n    value: 2\n"));
    for (command, out) in every_command(&t, &[]) {
        assert_eq!(out.status, 0, "{command}: {}", out.stderr);
        out.stderr_has(COMPONENT_WARNING);
    }
    assert!(t.root().join("db/ran").exists(), "the deploy ran");
}

#[test]
fn strict_makes_the_component_manifest_typo_an_error() {
    let t = with_component_typo(stack("", "  - name: app.replicas\n    value: 2\n"));
    for (command, out) in every_command(&t, &["--strict"]) {
        assert_eq!(out.status, 1, "{command}: {}", out.stderr);
        out.stderr_has("stack parameter `shared.size|db` looks like a typo")
            .stderr_has("--> app/hub-component.yaml:10\n")
            .stderr_has("help: correct the parameter's name in that file; without `--strict` this is a warning");
    }
    nothing_ran(&t);
}

#[test]
fn a_parameter_read_only_through_an_expression_is_read() {
    let t = stack(
        "  - name: app.base\n    value: 2\n  - name: app.max\n    value: '#{int(app.limit) * 2}'\n",
        "  - name: app.replicas\n    value: ${app.base}\n  - name: app.limit\n    value: 3\n",
    );
    for (command, out) in every_command(&t, &[]) {
        assert_eq!(out.status, 0, "{command}: {}", out.stderr);
        assert!(
            !out.stderr.contains("`app.base`") && !out.stderr.contains("`app.limit`"),
            "{command}: {}",
            out.stderr
        );
        // `app.max` itself is read by nothing.
        out.stderr_has("stack parameter `app.max` is set but never read");
    }
    let replicas = std::fs::read_to_string(t.root().join("app/ran")).expect("app ran");
    assert_eq!(replicas.trim(), "2");
}

#[test]
fn hub_params_flags_the_names_nothing_reads() {
    let t = stack(
        "",
        "  - name: app.replica\n    value: 7\n  - name: colour\n    value: blue\n",
    );
    let elaborate = [
        "elaborate",
        "hub.yaml",
        "params.yaml",
        "-o",
        "e.yaml",
        "--lenient",
    ];
    assert_eq!(hub_isolated(&t, &elaborate, &[]).status, 0);
    let out = hub_isolated(&t, &["params", "e.yaml"], &[]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    let entry = |name: &str| {
        let start = out.stdout.find(&format!("- name: {name}\n")).expect(name);
        let rest = &out.stdout[start + 1..];
        rest[..rest.find("\n- ").unwrap_or(rest.len())].to_string()
    };
    assert!(
        entry("app.replica")
            .contains("unread: \"nothing reads it (did you mean `app.replicas`?)\""),
        "{}",
        out.stdout
    );
    assert!(
        entry("colour").contains("unread: nothing reads it"),
        "{}",
        out.stdout
    );
    assert!(!entry("app.replicas").contains("unread"), "{}", out.stdout);
}
