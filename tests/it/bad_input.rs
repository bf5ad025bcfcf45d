//! Bad input to `hub deploy`, `undeploy`, `invoke`, `unlock` and `params`:
//! each case fails with a message naming the file (and line where known)
//! and how to fix it, and leaves an existing state as it was (or correctly
//! updated).

use crate::common::{dead_pid, Output, Test};
use hub::state::lock::hostname;
use std::os::unix::fs::PermissionsExt;

const STACK: &str = "
    version: 1
    kind: stack
    meta:
      name: bad
    components:
      - name: a
        source:
          dir: a
      - name: b
        source:
          dir: b
        depends: [a]
    parameters:
      - name: x.one
        value: one
";

fn component(name: &str) -> String {
    format!("version: 1\nkind: component\nmeta:\n  name: {name}\nparameters:\n  - name: x.one\n    env: ONE\n")
}

/// Stack `bad`: `a`, then `b` (depends on `a`), both shell scripts.
fn stack() -> Test {
    let mut test = Test::new().file("hub.yaml", STACK);
    for name in ["a", "b"] {
        test = test
            .file(&format!("{name}/hub-component.yaml"), &component(name))
            .file(
                &format!("{name}/deploy.sh"),
                &format!("#!/bin/sh\necho deploy {name} $ONE\n"),
            )
            .file(
                &format!("{name}/undeploy.sh"),
                &format!("#!/bin/sh\necho undeploy {name}\n"),
            );
    }
    for name in ["a", "b"] {
        for script in ["deploy.sh", "undeploy.sh"] {
            let path = test.root().join(name).join(script);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        }
    }
    test
}

/// [`stack`], deployed once: `s.state` exists.
fn deployed() -> Test {
    let test = stack();
    hub(&test, DEPLOY).success();
    test
}

const DEPLOY: &[&str] = &["deploy", "hub.yaml", "-s", "s.state"];
const UNDEPLOY: &[&str] = &["undeploy", "hub.yaml", "-s", "s.state"];

/// Runs hub in the test folder with a reduced environment, a fixed clock
/// and operation id.
fn hub(test: &Test, args: &[&str]) -> Output {
    crate::common::hub_isolated(
        test,
        args,
        &[
            ("HUB_NOW", "2024-05-01T10:00:00Z"),
            ("HUB_OPERATION_ID", "0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e"),
        ],
    )
}

fn write(test: &Test, path: &str, text: &str) {
    std::fs::write(test.root().join(path), text).expect("write");
}

fn read(test: &Test, path: &str) -> Vec<u8> {
    std::fs::read(test.root().join(path)).unwrap_or_default()
}

fn exists(test: &Test, path: &str) -> bool {
    test.root().join(path).exists()
}

/// The error and its help, without the run's progress and summary.
fn error(out: &Output) -> String {
    let start = out.stderr.rfind("\nerror: ").map_or(0, |i| i + 1);
    out.stderr[start..].trim_end().to_string()
}

/// Runs `args` on a fresh [`stack`] after `edit`, expecting exit 1 and
/// no state written.
fn refused(edit: impl FnOnce(&Test), args: &[&str]) -> String {
    let test = stack();
    edit(&test);
    let out = hub(&test, args);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(!exists(&test, "s.state"), "no state is written");
    error(&out)
}

/// Runs `args` on a [`deployed`] stack after `edit`, expecting exit 1 and
/// the state byte for byte as it was after the edit.
fn refused_with_state(edit: impl FnOnce(&Test), args: &[&str]) -> String {
    let test = deployed();
    edit(&test);
    let before = read(&test, "s.state");
    let out = hub(&test, args);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(read(&test, "s.state"), before, "the state is unchanged");
    assert!(!exists(&test, "s.state.lock"), "the lock is released");
    error(&out)
}

// ---------------------------------------------------------------- manifests

#[test]
fn malformed_stack_manifest_names_the_line() {
    let text = refused(
        |t| {
            write(
                t,
                "hub.yaml",
                &crate::common::unindent(STACK).replace("  name: bad", "  name: \"bad"),
            )
        },
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r#"
    error: invalid YAML in document 1: found unexpected end of stream at line 16 column 1, while scanning a quoted scalar at line 4 column 9
      --> hub.yaml:16:1
      help: fix the YAML syntax at the line shown
    "#);
}

#[test]
fn parameters_as_a_map_is_a_wrong_type() {
    let text = refused(
        |t| {
            let stack = crate::common::unindent(STACK);
            let (head, _) = stack.split_once("parameters:").expect("parameters");
            write(t, "hub.yaml", &format!("{head}parameters:\n  x.one: one\n"));
        },
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r"
    error: invalid YAML in document 1: parameters: invalid type: map, expected a sequence at line 14 column 3
      --> hub.yaml:14:3
      help: the field has the wrong type; see the JSON Schemas in `schemas/` or run `hub validate`
    ");
}

#[test]
fn a_missing_component_folder_names_the_stack() {
    let text = refused(
        |t| std::fs::remove_dir_all(t.root().join("b")).expect("rm"),
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r"
    error: cannot read the manifest of component `b`: cannot read `b/hub-component.yaml`: No such file or directory (os error 2)
      --> b/hub-component.yaml
      help: check `source.dir` (or `source.git`) of the component in `hub.yaml`; relative directories start at the stack's folder
    ");
}

#[test]
fn malformed_component_manifest_names_its_line() {
    let text = refused(
        |t| {
            let text = component("b") + "  - name: \"oops\n";
            write(t, "b/hub-component.yaml", &text);
        },
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r"
    error: cannot read the manifest of component `b`: invalid YAML in document 1: found unexpected end of stream at line 9 column 1, while scanning a quoted scalar at line 8 column 11
      --> b/hub-component.yaml:9:1
      help: fix the YAML syntax at the line shown
    ");
}

#[test]
fn a_parameter_cycle_is_named() {
    let text = refused(
        |t| {
            let text = crate::common::unindent(STACK)
                + "  - name: p.a\n    value: ${p.b}\n  - name: p.b\n    value: ${p.a}\n";
            write(t, "hub.yaml", &text);
        },
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r"
    error: stack parameters cannot be locked:
      - reference cycle: p.a → p.b → p.a
          `p.a` declared at hub.yaml:16
          `p.b` declared at hub.yaml:18
      help: break each cycle by giving one of its parameters a literal value
    ");
}

#[test]
fn a_depends_cycle_without_order_is_named() {
    let text = refused(
        |t| {
            let text = crate::common::unindent(STACK).replacen(
                "      dir: a\n",
                "      dir: a\n    depends: [b]\n",
                1,
            );
            write(t, "hub.yaml", &text);
        },
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r"
    error: dependency cycle between components: a → b → a
      --> hub.yaml:6:3
      help: remove one of the `depends` entries on the cycle
    ");
}

// ---------------------------------------------------------------- components

#[test]
fn an_unknown_substitution_fails_the_component_with_a_fix() {
    let test = stack();
    let text = component("b") + "  - name: y.two\n    value: ${nope}\n    env: TWO\n";
    write(&test, "b/hub-component.yaml", &text);
    let out = hub(&test, DEPLOY);
    assert_eq!(out.status, 1, "{}", out.stderr);
    insta::assert_snapshot!(error(&out), @r"
    error: component `b` failed: parameters of component `b` cannot be expanded:
      - `y.two|b` references unknown `nope` (declared at b/hub-component.yaml:8)
      help: declare or fix the parameters listed above in the stack or a parameters file; then run again with `-o b` to resume there, or add `--force` to go on after failures
    ");
    let state = String::from_utf8(read(&test, "s.state")).expect("utf-8");
    assert!(state.contains("status: incomplete"), "{state}");
    assert!(state.contains("references unknown `nope`"), "{state}");
}

#[test]
fn a_failing_mandatory_component_stops_the_run_and_says_how_to_resume() {
    let test = deployed();
    write(&test, "b/deploy.sh", "#!/bin/sh\necho boom >&2\nexit 3\n");
    let out = hub(&test, DEPLOY);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("b | boom")
        .stderr_has("deploy.sh` exited with code 3")
        .stderr_has("help: see the component's output above and its log file, and fix it; then run again with `-o b` to resume there");
    let state = String::from_utf8(read(&test, "s.state")).expect("utf-8");
    assert!(state.contains("status: incomplete"), "{state}");
    assert!(state.contains("exited with code 3"), "{state}");
    assert!(String::from_utf8_lossy(&read(&test, "s.state.logs/b.log")).contains("boom"));
}

#[test]
fn a_failing_optional_component_is_a_warning() {
    let test = stack();
    let text = crate::common::unindent(STACK) + "lifecycle:\n  optional: [b]\n";
    write(&test, "hub.yaml", &text);
    write(&test, "b/deploy.sh", "#!/bin/sh\nexit 3\n");
    let out = hub(&test, DEPLOY);
    out.success()
        .stderr_has("warning: optional component `b` failed: ")
        .stderr_has("exited with code 3");
    let state = String::from_utf8(read(&test, "s.state")).expect("utf-8");
    assert!(state.contains("status: deployed"), "{state}");
    assert!(state.contains("status: error"), "{state}");
}

#[test]
fn a_missing_implementation_is_found_before_anything_runs() {
    let test = deployed();
    std::fs::remove_file(test.root().join("b/deploy.sh")).expect("rm");
    let before = read(&test, "s.state");
    let out = hub(&test, DEPLOY);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("error: component `b`: no implementation of `deploy` in `")
        .stderr_has("help: add a Makefile target `deploy:` or a script `deploy.sh`");
    assert!(!out.stderr.contains("a | deploy"), "nothing ran");
    assert_eq!(read(&test, "s.state"), before);
}

#[test]
fn a_script_that_is_not_executable_gets_the_chmod_to_run() {
    let test = stack();
    let script = test.root().join("b/deploy.sh");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let out = hub(&test, DEPLOY);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has("Permission denied").stderr_has(&format!(
        "help: make the script executable: `chmod +x {}`; then run again with `-o b`",
        script.display()
    ));
}

// ---------------------------------------------------------------- states

#[test]
fn a_state_that_is_not_yaml_is_kept_and_named_with_its_line() {
    let garbage = "version: 1\nkind: state\ncomponents: [\n  a: {\n";
    for args in [DEPLOY, UNDEPLOY] {
        let text = refused_with_state(|t| write(t, "s.state", garbage), args);
        insta::allow_duplicates! {
            insta::assert_snapshot!(text, @r"
            error: the state file is not valid YAML: components: invalid type: sequence, expected a map at line 3 column 13
              --> s.state:3:13
              help: fix the YAML at the line shown, or restore the previous version kept in `s.state.backup` (compare the two first); the file was left as it is
            ");
        }
    }
}

#[test]
fn a_state_of_another_kind_is_refused_even_with_force() {
    for args in [DEPLOY, &[DEPLOY, &["--force"]].concat()] {
        let text = refused_with_state(|t| write(t, "s.state", "version: 1\nkind: stack\n"), args);
        insta::allow_duplicates! {
            insta::assert_snapshot!(text, @r"
            error: `s.state` is not a state file: its kind is `stack`, expected `state`
              --> s.state:2:1
              help: check the `-s`/`--state` path: it names another kind of file
            ");
        }
    }
}

#[test]
fn a_truncated_gzip_state_is_kept() {
    let text = refused_with_state(
        |t| {
            let bytes = read(t, "s.state");
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            std::io::Write::write_all(&mut gz, &bytes).expect("gzip");
            let gz = gz.finish().expect("gzip");
            std::fs::write(t.root().join("s.state"), &gz[..gz.len() / 2]).expect("write");
        },
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r"
    error: the state file `s.state` is damaged: it looks gzip-compressed but cannot be decompressed (incomplete deflate stream)
      --> s.state
      help: restore the previous version kept in `s.state.backup` (compare the two first); the file was left as it is
    ");
}

#[test]
fn an_empty_state_is_kept() {
    let text = refused_with_state(|t| write(t, "s.state", ""), DEPLOY);
    insta::assert_snapshot!(text, @r"
    error: the state file `s.state` is empty
      --> s.state
      help: restore the previous version kept in `s.state.backup` (compare the two first); the file was left as it is
    ");
}

#[test]
fn a_folder_as_state_is_refused_even_with_force() {
    for force in [false, true] {
        let test = stack();
        std::fs::create_dir(test.root().join("s.state")).expect("mkdir");
        let args = if force {
            [DEPLOY, &["-f"]].concat()
        } else {
            DEPLOY.to_vec()
        };
        let out = hub(&test, &args);
        assert_eq!(out.status, 1, "{}", out.stderr);
        assert!(test.root().join("s.state").is_dir());
        insta::allow_duplicates! {
            insta::assert_snapshot!(error(&out), @r"
            error: cannot read the state file `s.state`: Is a directory (os error 21)
              --> s.state
              help: the path names a folder; pass the state file inside it
            ");
        }
    }
}

#[test]
fn a_state_of_another_stack_is_refused() {
    for args in [DEPLOY, UNDEPLOY] {
        let text = refused_with_state(
            |t| {
                let state = String::from_utf8(read(t, "s.state")).expect("utf-8");
                write(
                    t,
                    "s.state",
                    &state.replace("  name: bad\n", "  name: other\n"),
                );
            },
            args,
        );
        insta::allow_duplicates! {
            insta::assert_snapshot!(text, @r"
            error: the state does not belong to this stack:
              - the state belongs to stack `other`, not `bad`
              --> s.state
              help: check the `-s` path; add `--force` to use this state anyway
            ");
        }
    }
}

#[test]
fn force_over_a_damaged_state_keeps_it_aside() {
    let test = deployed();
    let garbage = "version: 1\nkind: state\ncomponents: [\n";
    write(&test, "s.state", garbage);
    write(&test, "s.state.unreadable", "an older one");
    let out = hub(&test, &[DEPLOY, &["--force"]].concat());
    out.success().stderr_has(
        "starting a new state (--force); the old file is kept as `s.state.unreadable.1`",
    );
    assert_eq!(read(&test, "s.state.unreadable.1"), garbage.as_bytes());
    assert_eq!(read(&test, "s.state.unreadable"), b"an older one");
    let mode = std::fs::metadata(test.root().join("s.state.unreadable.1"))
        .expect("kept")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let state = String::from_utf8(read(&test, "s.state")).expect("utf-8");
    assert!(state.contains("status: deployed"), "{state}");
}

// ---------------------------------------------------------------- locks

fn lock_text(pid: u32) -> String {
    crate::common::lock_text(pid, &hostname())
}

/// The text with the pid and host made fixed.
fn anonymous(text: &str, pid: u32) -> String {
    text.replace(
        &format!("process {pid} on host {}", hostname()),
        "process PID on host HOST",
    )
    .replace(&format!("process {pid}"), "process PID")
}

#[test]
fn a_stale_lock_is_cleared_with_a_warning_naming_the_dead_run() {
    let test = deployed();
    let pid = dead_pid();
    write(&test, "s.state.lock", &lock_text(pid));
    let out = hub(&test, DEPLOY);
    assert_eq!(out.status, 0, "{}", out.stderr);
    assert!(!exists(&test, "s.state.lock"));
    let warning = out
        .stderr
        .lines()
        .find(|l| l.contains("stale lock"))
        .unwrap_or_default();
    insta::assert_snapshot!(anonymous(warning, pid), @"warning: s.state.lock: removed the stale lock of `deploy` started by alice at 2024-05-01T10:00:00Z (process PID on host HOST), which is no longer running");
}

#[test]
fn a_live_lock_is_left_alone() {
    let test = deployed();
    let pid = std::process::id();
    write(&test, "s.state.lock", &lock_text(pid));
    let before = read(&test, "s.state");
    for args in [DEPLOY, UNDEPLOY, &["unlock", "s.state"]] {
        let out = hub(&test, args);
        assert_eq!(out.status, 1, "{}", out.stderr);
        out.stderr_has("is locked: `deploy` started by alice")
            .stderr_has("--> s.state.lock");
        assert_eq!(read(&test, "s.state"), before);
        assert_eq!(read(&test, "s.state.lock"), lock_text(pid).as_bytes());
    }
}

// ---------------------------------------------------------------- arguments

#[test]
fn an_unknown_component_in_c_is_refused() {
    let text = refused_with_state(|_| {}, &[DEPLOY, &["-c", "nope"]].concat());
    insta::assert_snapshot!(text, @r"
    error: `-c` names `nope`, which is not a component of the stack (components: a, b)
      help: use a name from the stack's `components:` list
    ");
}

#[test]
fn an_offset_after_the_limit_says_to_swap_them() {
    let text = refused_with_state(|_| {}, &[DEPLOY, &["-o", "b", "-l", "a"]].concat());
    insta::assert_snapshot!(text, @r"
    error: the limit `a` comes before the offset `b` in the deploy order
      help: swap them: `-o a -l b`
    ");
    let text = refused_with_state(|_| {}, &[UNDEPLOY, &["-o", "a", "-l", "b"]].concat());
    insta::assert_snapshot!(text, @r"
    error: the limit `b` comes before the offset `a` in the undeploy order
      help: swap them: `-o b -l a`; undeploy runs the components in reverse order
    ");
}

#[test]
fn an_override_without_equals_is_a_usage_error() {
    for args in [
        &[DEPLOY, &["-e", "FOO"]].concat(),
        &["params", "hub.yaml", "-e", "FOO"][..],
    ] {
        let test = deployed();
        let before = read(&test, "s.state");
        let out = hub(&test, args);
        assert_eq!(out.status, 2, "{}", out.stderr);
        assert_eq!(read(&test, "s.state"), before);
        insta::allow_duplicates! {
            insta::assert_snapshot!(error(&out), @r"
            error: invalid `-e` value `FOO`: expected NAME=value
              help: write overrides as `-e NAME=value,OTHER=value`
            ");
        }
    }
}

#[test]
fn invoke_of_an_unknown_verb_is_refused() {
    let text = refused_with_state(
        |_| {},
        &["invoke", "a", "nope", "-m", "hub.yaml", "-s", "s.state"],
    );
    insta::assert_snapshot!(text, @r"
    error: `a` does not implement verb `nope` (its `lifecycle.verbs`: deploy, undeploy)
      help: add the verb to the component's `lifecycle.verbs`, or add `--force`
    ");
}

#[test]
fn params_names_a_damaged_state_once() {
    let test = deployed();
    write(&test, "s.state", "");
    let out = hub(&test, &["params", "hub.yaml", "-s", "s.state"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    insta::assert_snapshot!(error(&out), @r"
    error: cannot read the state `s.state`: the file is empty
      --> s.state
      help: restore the previous version kept in `s.state.backup` (compare the two first); the file was left as it is
    ");
    assert!(read(&test, "s.state").is_empty());
}

#[test]
fn invoke_exits_with_the_component_code_and_leaves_the_state() {
    let test = deployed();
    write(&test, "a/deploy.sh", "#!/bin/sh\nexit 3\n");
    let before = read(&test, "s.state");
    let out = hub(
        &test,
        &["invoke", "a", "deploy", "-m", "hub.yaml", "-s", "s.state"],
    );
    assert_eq!(out.status, 3, "{}", out.stderr);
    insta::assert_snapshot!(error(&out), @"error: `a deploy` exited with code 3");
    assert_eq!(read(&test, "s.state"), before);
}

#[test]
fn a_key_given_twice_is_shown_where_it_repeats() {
    let text = refused(
        |t| {
            let stack = String::from_utf8(read(t, "hub.yaml")).expect("utf-8");
            write(
                t,
                "hub.yaml",
                &format!("{stack}requires: []\nrequires: []\n"),
            );
        },
        DEPLOY,
    );
    assert!(text.contains("duplicate field `requires`"), "{text}");
    assert!(
        text.contains("keep one of them"),
        "the hint says what to do: {text}"
    );
    let line = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("--> hub.yaml:"))
        .expect("a line");
    let stack = stack();
    let lines = String::from_utf8(read(&stack, "hub.yaml"))
        .expect("utf-8")
        .lines()
        .count();
    assert_eq!(
        line,
        format!("{}:1", lines + 2),
        "points at the second `requires`"
    );
}

#[test]
fn invoke_without_a_state_is_refused() {
    let text = refused(
        |_| {},
        &["invoke", "a", "deploy", "-m", "hub.yaml", "-s", "s.state"],
    );
    assert!(text.contains("`s.state` does not exist"), "{text}");
    assert!(text.contains("deploy the whole stack first"), "{text}");
}

// ------------------------------------------- parameters of a stack elaborated in memory

#[test]
fn an_unknown_reference_in_a_component_parameter_names_its_manifest_line() {
    let test = stack();
    let text = component("a") + "  - name: url\n    value: \"https://${nope}\"\n";
    write(&test, "a/hub-component.yaml", &text);
    let out = hub(&test, DEPLOY);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        error(&out)
            .contains("`url|a` references unknown `nope` (declared at a/hub-component.yaml:8)"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_stack_parameter_cycle_names_each_members_line() {
    let test = stack();
    let text = crate::common::unindent(STACK)
        + "  - name: p.a\n    value: ${p.b}\n  - name: p.b\n    kind: user\n";
    write(&test, "hub.yaml", &text);
    // The value set last wins the location: `p.b`'s is in params.yaml.
    write(
        &test,
        "params.yaml",
        "parameters:\n- name: x.one\n  value: uno\n- name: p.b\n  value: ${p.a}\n",
    );
    let out = hub(
        &test,
        &["deploy", "hub.yaml", "params.yaml", "-s", "s.state"],
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    insta::assert_snapshot!(error(&out), @r"
    error: stack parameters cannot be locked:
      - reference cycle: p.a → p.b → p.a
          `p.a` declared at hub.yaml:16
          `p.b` declared at params.yaml:4
      help: break each cycle by giving one of its parameters a literal value
    ");
}

#[test]
fn a_missing_value_without_a_terminal_names_the_declaring_line() {
    let text = refused(
        |t| {
            let text = crate::common::unindent(STACK) + "  - name: token\n    kind: user\n";
            write(t, "hub.yaml", &text);
        },
        DEPLOY,
    );
    insta::assert_snapshot!(text, @r"
    error: stack parameters cannot be locked:
      - 1 `kind: user` parameter(s) have no value:
          `token` (declared at hub.yaml:16): add `fromEnv: VAR` to its declaration, or give it a `value` in a parameters file and elaborate again
      help: values can also come from `-e NAME=value` for `fromEnv` parameters, or be typed at a terminal
    ");
}
