//! The preflight: what a deploy would stop on is found before the first
//! component starts. `hub plan` shows it as `would fail` (and
//! `--detailed-exitcode` exits 1); the deploy refuses with the same
//! message, having run nothing.

use crate::common::{hub_pinned, Output, Test};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// `a` then `b`; `b` carries `hooks` (a YAML flow list); `a` gets the
/// stack parameter `big` as `BIG`. Each component's deploy leaves a file
/// `ran` in its folder.
fn stack(hooks: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            &format!(
                "
                kind: stack
                meta: {{name: checked}}
                components:
                - name: a
                  source: {{dir: a}}
                - name: b
                  source: {{dir: b}}
                  hooks: {hooks}
                lifecycle: {{order: [a, b]}}
                parameters:
                - {{name: big, value: small}}
                "
            ),
        )
        .file(
            "a/hub-component.yaml",
            "kind: component\nmeta: {name: a}\nparameters:\n- {name: big, env: BIG}\n",
        )
        .script("a/deploy.sh", "#!/bin/sh\ntouch ran\n")
        .file("b/hub-component.yaml", "kind: component\nmeta: {name: b}\n")
        .script("b/deploy.sh", "#!/bin/sh\ntouch ran\n")
}

fn run(test: &Test, args: &[&str]) -> Output {
    hub_pinned(test.root(), args)
}

fn nothing_ran(test: &Test) {
    for component in ["a", "b"] {
        assert!(
            !test.root().join(component).join("ran").exists(),
            "{component} ran"
        );
    }
}

/// The test folder, as hub prints its paths.
fn root(test: &Test) -> String {
    test.root().display().to_string()
}

#[test]
fn the_corpus_tutorial_script_that_is_not_executable_would_fail() {
    let Some(corpus) = crate::conformance::corpus() else {
        return;
    };
    let case = corpus.join("hubctl-tutorial-015-configure");
    let script = case.join("components/hello-hubctl/deploy.sh");
    let mode = std::fs::metadata(&script)
        .expect("script")
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode & 0o111, 0, "the corpus script is executable here");
    let state = tempfile::tempdir().expect("tmp");
    let state = state.path().join("tutorial.state");
    let state = state.to_str().expect("utf-8");
    let out = hub_pinned(
        &case,
        &["plan", "hub.yaml", "-s", state, "--detailed-exitcode"],
    );
    assert_eq!(out.status, 1, "{}\n{}", out.stdout, out.stderr);
    let expected = format!(
        "my-first-component: fail (its implementation `{}` is not executable (mode {mode:04o}): starting it would fail with \"Permission denied\")\n",
        std::fs::canonicalize(&script).expect("canonical").display()
    );
    assert!(out.stdout.contains(&expected), "{}", out.stdout);
    assert!(
        out.stdout.ends_with(
            "Plan: 0 to create, 0 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 1 would fail\n"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stderr
            .contains("error: the plan has 1 problem(s) that would fail the run\n"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_deploy_of_a_script_that_is_not_executable_stops_before_anything_runs() {
    let test = stack("[]");
    let script = test.root().join("b/deploy.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = run(&test, &["deploy", "hub.yaml", "-s", "x.state"]);
    assert_eq!(out.status, 1);
    let shown = format!("{}/b/deploy.sh", root(&test));
    assert_eq!(
        out.stderr,
        format!(
            "error: component `b`: its implementation `{shown}` is not executable (mode 0644): starting it would fail with \"Permission denied\"\n  help: make it executable with `chmod +x {shown}`; hub runs it as a program, so its first line names its interpreter (`#!/bin/sh`); nothing ran and the state is untouched (`hub plan` shows the same)\n"
        )
    );
    nothing_ran(&test);
    assert!(!test.root().join("x.state").exists());
}

#[test]
fn a_missing_hook_fails_the_run_before_any_component_starts() {
    let test = stack("[{file: gke-context, triggers: [pre-deploy]}]");
    let out = run(&test, &["deploy", "hub.yaml", "-s", "x.state"]);
    assert_eq!(out.status, 1);
    let root = root(&test);
    let names = "`gke-context`, `bin/gke-context`, `_gke-context`, `gke-context.sh`, `bin/gke-context.sh`, `_gke-context.sh`";
    let message = format!(
        "component `b`: hook `gke-context` (pre-deploy) not found in `{root}/b`, `{root}`, `{root}/bin`, `{root}/.hub`, `{root}/.hub/bin` (as {names}) or on PATH"
    );
    assert_eq!(
        out.stderr,
        format!(
            "error: {message}\n  help: add the script in one of those folders, correct the hook's `file:`, or add `error: ignore` to the hook to run without it (a missing hook is then a warning); nothing ran and the state is untouched (`hub plan` shows the same)\n"
        )
    );
    nothing_ran(&test);
    // The plan says the same.
    let plan = run(
        &test,
        &["plan", "hub.yaml", "-s", "x.state", "--detailed-exitcode"],
    );
    assert_eq!(plan.status, 1);
    let reason = message.trim_start_matches("component `b`: ");
    assert!(
        plan.stdout.contains(&format!("b: fail ({reason})\n")),
        "{}",
        plan.stdout
    );
}

#[test]
fn an_optional_missing_hook_is_a_warning_printed_before_the_first_component() {
    let test = stack("[{file: notify, triggers: [post-deploy], error: ignore}]");
    let out = run(&test, &["deploy", "hub.yaml", "-s", "x.state"]);
    out.success();
    let root = root(&test);
    let warning = format!(
        "warning: component `b`: hook `notify` (post-deploy) not found in `{root}/b`, `{root}`, `{root}/bin`, `{root}/.hub`, `{root}/.hub/bin` (as `notify`, `bin/notify`, `_notify`, `notify.sh`, `bin/notify.sh`, `_notify.sh`) or on PATH; skipped (the hook says `error: ignore`)"
    );
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(
        lines[..3],
        [
            warning.as_str(),
            "hub: deploy a (1/2)",
            "hub: deploy b (2/2)"
        ]
    );
    assert_eq!(
        lines.last(),
        Some(&"hub: 1 warning, printed above (before the first component, or with the component each concerns)")
    );
    assert_eq!(out.stderr.matches("warning: component `b`").count(), 1);
}

/// A stack parameter of 200 KiB exported to a component.
fn big(test: Test) -> Test {
    test.file(
        "params.yaml",
        &format!(
            "parameters:\n- name: big\n  value: {}\n",
            "a".repeat(200 * 1024)
        ),
    )
}

const TOO_LARGE: &str = "environment variable `BIG` (parameter `big`) is 200 KiB (204805 bytes as `BIG=…`), over the system's limit of 128 KiB for one variable: the process would not start (\"Argument list too long\")";

#[test]
fn a_variable_over_the_system_limit_is_named_with_its_size_before_the_run() {
    let test = big(stack("[]"));
    deploy_refused(
        &test,
        TOO_LARGE,
        "pass a large value through a file, not the environment: drop the parameter's `env:` and use it in one of the component's templates (rendered into files), or give the component the path of a file that holds it (its path, not its content through `fromFile:`)",
    );
}

/// A deploy of the stack with its params file, refused before anything
/// ran: component `a` fails for `reason`, with `help`; returns stderr.
fn deploy_refused(test: &Test, reason: &str, help: &str) -> String {
    let out = run(
        test,
        &["deploy", "hub.yaml", "params.yaml", "-s", "x.state"],
    );
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stderr,
        format!(
            "error: component `a`: {reason}\n  help: {help}; nothing ran and the state is untouched (`hub plan` shows the same)\n"
        )
    );
    nothing_ran(test);
    out.stderr
}

#[test]
fn a_plan_shows_the_variable_over_the_limit_and_shortens_the_value() {
    let test = big(stack("[]"));
    let out = planned_to_fail(&test, TOO_LARGE);
    let digest = {
        use sha2::Digest;
        let hash = sha2::Sha256::digest("a".repeat(200 * 1024).as_bytes());
        let hex: String = hash.iter().map(|b| format!("{b:02x}")).collect();
        hex[..12].to_string()
    };
    assert!(
        out.stdout.contains(&format!(
            "    + big = \"aaaaaaaaaaaaaaaa…\" 200 KiB sha256:{digest}\n"
        )),
        "{}",
        out.stdout
    );
    assert!(out.stdout.len() < 4096, "{} bytes", out.stdout.len());
    // Whole in JSON.
    let json = run(
        &test,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "x.state",
            "--format",
            "json",
        ],
    );
    let document: serde_json::Value = serde_json::from_str(&json.stdout).expect("json");
    let value = &document["components"][0]["parameters"][1];
    assert_eq!(value["name"], "big");
    assert_eq!(value["value"].as_str().map(str::len), Some(200 * 1024));
}

/// `big` set, in a params file, to a text holding a NUL byte (YAML's
/// `\0`): no process environment can carry it.
fn with_a_nul_byte(test: Test) -> Test {
    test.file(
        "params.yaml",
        "parameters:\n- name: big\n  value: \"before\\0after\"\n",
    )
}

/// What the plan and the deploy say about it: the variable, the
/// parameter and where the value was set (as the command line named the
/// file), never the value.
const NUL_BYTE: &str = "environment variable `BIG` (parameter `big`, set at params.yaml:2) holds a NUL byte, which no process environment can carry: the process would not start";

#[test]
fn a_value_with_a_nul_byte_stops_the_deploy_before_anything_runs_naming_where_it_was_set() {
    let test = with_a_nul_byte(stack("[]"));
    let stderr = deploy_refused(
        &test,
        NUL_BYTE,
        "remove the NUL byte (`\\0` in YAML) from the value; pass binary data through a file the component reads (a template, or the path of a file), or encoded (base64)",
    );
    assert!(!stderr.contains("before"), "{stderr}");
    assert!(!test.root().join("x.state").exists());
}

#[test]
fn a_plan_shows_the_component_with_a_nul_byte_in_a_variable_as_failing() {
    let test = with_a_nul_byte(stack("[]"));
    let out = planned_to_fail(&test, NUL_BYTE);
    assert!(out.stdout.contains("1 would fail"), "{}", out.stdout);
}

/// `hub plan` of the stack with its params file, which shows component
/// `a` failing for `reason` and exits 1 (`--detailed-exitcode`).
fn planned_to_fail(test: &Test, reason: &str) -> Output {
    let out = run(
        test,
        &[
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "x.state",
            "--detailed-exitcode",
        ],
    );
    assert_eq!(out.status, 1);
    assert!(
        out.stdout.contains(&format!("a: fail ({reason})\n")),
        "{}",
        out.stdout
    );
    out
}

#[test]
fn a_state_in_a_missing_folder_is_named_as_missing() {
    let test = stack("[]");
    let plan = run(
        &test,
        &[
            "plan",
            "hub.yaml",
            "-s",
            "nodir/x.state",
            "--detailed-exitcode",
        ],
    );
    assert_eq!(plan.status, 1);
    assert!(
        plan.stdout.contains(
            "\nwould fail before any component starts:\n  cannot create the lock file `nodir/x.state.lock`: the state's folder `nodir` does not exist\n    help: create the folder first (`mkdir -p nodir`), or give `-s` a path in a folder that exists\n"
        ),
        "{}",
        plan.stdout
    );
    let deploy = run(&test, &["deploy", "hub.yaml", "-s", "nodir/x.state"]);
    assert_eq!(deploy.status, 1);
    assert_eq!(
        deploy.stderr,
        "error: cannot create the lock file `nodir/x.state.lock`: the state's folder `nodir` does not exist\n  --> nodir/x.state.lock\n  help: create the folder first (`mkdir -p nodir`), or give `-s` a path in a folder that exists\n"
    );
    nothing_ran(&test);
    assert!(!Path::new(&test.root().join("nodir")).exists());
}

#[test]
fn a_hook_that_is_not_executable_stops_the_run_before_it_starts() {
    let test =
        stack("[{file: check.sh, triggers: [pre-deploy]}]").file("b/check.sh", "#!/bin/sh\n");
    let hook = test.root().join("b/check.sh");
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = run(&test, &["deploy", "hub.yaml", "-s", "x.state"]);
    assert_eq!(out.status, 1);
    let shown = format!("{}/b/check.sh", root(&test));
    assert_eq!(
        out.stderr,
        format!(
            "error: component `b`: hook `check.sh` (pre-deploy) `{shown}` is not executable (mode 0644): starting it would fail with \"Permission denied\"\n  help: make it executable with `chmod +x {shown}`; hub runs it as a program, so its first line names its interpreter (`#!/bin/sh`); nothing ran and the state is untouched (`hub plan` shows the same)\n"
        )
    );
    nothing_ran(&test);
}

/// `a`, `b`, `c` and `d` in that order; `b` reads the parameter
/// `admin.email`, which nothing sets; `d` reads `c`'s output `url`, and
/// `c` depends on `b`. Each deploy leaves `ran` in its folder.
fn unexpandable() -> Test {
    let mut test = Test::new().file(
        "hub.yaml",
        "
        kind: stack
        meta: {name: predicted}
        components:
        - {name: a, source: {dir: a}}
        - {name: b, source: {dir: b}}
        - {name: c, source: {dir: c}, depends: [b]}
        - {name: d, source: {dir: d}}
        lifecycle: {order: [a, b, c, d]}
        ",
    );
    for name in ["a", "b", "c", "d"] {
        test = test.script(&format!("{name}/deploy.sh"), "#!/bin/sh\ntouch ran\n");
    }
    test.file("a/hub-component.yaml", "kind: component\nmeta: {name: a}\n")
        .file(
            "b/hub-component.yaml",
            "kind: component\nmeta: {name: b}\nparameters:\n- {name: admin.email, env: EMAIL}\n",
        )
        .file(
            "c/hub-component.yaml",
            "kind: component\nmeta: {name: c}\noutputs:\n- {name: url, value: https://c}\n",
        )
        .file(
            "d/hub-component.yaml",
            "kind: component\nmeta: {name: d}\nparameters:\n- {name: url, env: URL}\n",
        )
}

#[test]
fn a_component_the_plan_says_would_fail_stops_the_deploy_before_anything_runs() {
    let test = unexpandable();
    let plan = run(&test, &["plan", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(plan.status, 1, "{}", plan.stderr);
    assert!(
        plan.stdout
            .contains("b: fail (cannot expand `admin.email`)"),
        "{}",
        plan.stdout
    );
    let out = run(&test, &["deploy", "hub.yaml", "-s", "hub.state"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    // Every problem at once: `b`, and `c`, which depends on it.
    insta::assert_snapshot!(out.stderr, @r"
    error: 2 problems found before any component started:
      - component `b`: would fail: its parameters cannot be expanded:
        - the value of `admin.email|b` can be found neither among stack parameters nor among outputs (declared at b/hub-component.yaml:4)
      - component `c`: would fail: it depends on `b`, which would fail
      help: `hub plan` shows each component that would fail and why; fix the stack or its parameters, or add `--force` to run the others anyway; nothing ran and the state is untouched (`hub plan` shows the same)
    ");
    for name in ["a", "b", "c", "d"] {
        assert!(!test.root().join(name).join("ran").exists(), "{name} ran");
    }
    assert!(
        !test.root().join("hub.state").exists(),
        "a state was written"
    );
}

#[test]
fn force_runs_the_others_despite_a_predicted_failure() {
    let test = unexpandable();
    let out = run(&test, &["deploy", "hub.yaml", "-s", "hub.state", "--force"]);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(test.root().join("a").join("ran").exists());
    assert!(!test.root().join("b").join("ran").exists());
}

/// Three hundred components `c000`…`c299` (enough that their folders are
/// looked at on several threads), each in its folder with a manifest and
/// the files `files` adds; the stack lists `verbs`.
fn many_components(verbs: &str, files: impl Fn(Test, &str) -> Test) -> (Test, Vec<String>) {
    let names: Vec<String> = (0..300).map(|at| format!("c{at:03}")).collect();
    let mut stack = String::from("kind: stack\nmeta: {name: many}\ncomponents:\n");
    for name in &names {
        stack.push_str(&format!("- {{name: {name}, source: {{dir: {name}}}}}\n"));
    }
    stack.push_str(&format!("lifecycle:\n  verbs: [{verbs}]\n"));
    let mut test = Test::new().file("hub.yaml", &stack);
    for name in &names {
        test = test.file(
            &format!("{name}/hub-component.yaml"),
            &format!("kind: component\nmeta: {{name: {name}}}\n"),
        );
        test = files(test, name);
    }
    (test, names)
}

/// `deploy -j 8` of `test` stops before anything runs and names each of
/// `problems` once, in this order, and `count` problems of the kind
/// `kind` in all.
fn refused_naming_in_order(test: &Test, names: &[String], problems: &[String], kind: &str) {
    let out = run(test, &["deploy", "hub.yaml", "-s", "st", "-j", "8"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    let at = |text: &str| {
        out.stderr
            .find(text)
            .unwrap_or_else(|| panic!("no `{text}` in {}", out.stderr))
    };
    let named: Vec<usize> = problems.iter().map(|p| at(p)).collect();
    assert!(named.windows(2).all(|w| w[0] < w[1]), "{}", out.stderr);
    assert_eq!(
        out.stderr.matches(kind).count(),
        problems.len(),
        "{}",
        out.stderr
    );
    for name in names {
        assert!(!test.root().join(name).join("ran").exists(), "{name} ran");
    }
}

/// Every component without an implementation of a verb the stack lists is
/// named, in the stack's order, before anything runs
/// (`check_implementations` looks on several threads).
#[test]
fn every_component_of_a_large_stack_without_an_implementation_is_named_in_order() {
    let without_deploy = ["c010", "c299"];
    let without_undeploy = ["c150"];
    let (test, names) = many_components("deploy, undeploy", |mut test, name| {
        if !without_deploy.contains(&name) {
            test = test.script(&format!("{name}/deploy.sh"), "#!/bin/sh\ntouch ran\n");
        }
        if !without_undeploy.contains(&name) {
            test = test.script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
        }
        test
    });
    let problems = [
        "component `c010`: no implementation of `deploy`".to_string(),
        "component `c150`: no implementation of `undeploy`".to_string(),
        "component `c299`: no implementation of `deploy`".to_string(),
    ];
    refused_naming_in_order(&test, &names, &problems, "no implementation of");
}

/// The preflight checks components on several threads: every one whose
/// script cannot start is named, in the stack's order, before anything
/// runs.
#[test]
fn every_component_of_a_large_stack_that_cannot_start_is_named_in_order() {
    let not_executable = ["c000", "c127", "c128", "c299"];
    let (test, names) = many_components("deploy", |test, name| {
        let path = format!("{name}/deploy.sh");
        match not_executable.contains(&name) {
            true => test.file(&path, "#!/bin/sh\ntouch ran\n"),
            false => test.script(&path, "#!/bin/sh\ntouch ran\n"),
        }
    });
    let problems: Vec<String> = not_executable
        .iter()
        .map(|name| {
            let shown = test.root().join(name).join("deploy.sh");
            format!(
                "component `{name}`: its implementation `{}` is not executable",
                shown.display()
            )
        })
        .collect();
    refused_naming_in_order(&test, &names, &problems, "is not executable");
}
