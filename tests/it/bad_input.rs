//! Bad input to `hub deploy`, `undeploy`, `invoke`, `unlock` and `params`:
//! each case fails with a message naming the file (and line where known)
//! and how to fix it, and leaves an existing state as it was (or correctly
//! updated).

use crate::common::{dead_pid, Output, Test};
use hub_state::lock::hostname;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

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
const DEPLOY_STRICT: &[&str] = &["deploy", "hub.yaml", "-s", "s.state", "--strict"];

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
      --> hub.yaml:11:7
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
    // Nothing can give `nope`: the deploy refuses before `a` runs.
    insta::assert_snapshot!(error(&out), @r"
    error: component `b`: would fail: its parameters cannot be expanded:
        - `y.two|b` references unknown `nope` (declared at b/hub-component.yaml:8)
      help: `hub plan` shows each component that would fail and why; fix the stack or its parameters, or add `--force` to run the others anyway; nothing ran and the state is untouched (`hub plan` shows the same)
    ");
    assert!(!out.stdout.contains("deploy a"), "{}", out.stdout);
    assert!(!test.root().join("s.state").exists(), "a state was written");
    // With --force the others run, and `b` fails as the run reaches it.
    let forced = hub(&test, &["deploy", "hub.yaml", "-s", "s.state", "--force"]);
    forced.stderr_has("references unknown `nope` (declared at b/hub-component.yaml:8)");
    let state = String::from_utf8(read(&test, "s.state")).expect("utf-8");
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
        .stderr_has("help: see the component's output above and its log file, and fix it; then run again with `--offset b` to resume there");
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
    // Found before anything runs (the preflight).
    out.stderr_has("Permission denied").stderr_has(&format!(
        "help: make it executable with `chmod +x {}`;",
        script.display()
    ));
    assert!(!out.stderr.contains("hub: deploy"), "{}", out.stderr);
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
                let state = crate::common::unframed(&state);
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
      help: swap them: `--offset a --limit b`
    ");
    let text = refused_with_state(|_| {}, &[UNDEPLOY, &["-o", "a", "-l", "b"]].concat());
    insta::assert_snapshot!(text, @r"
    error: the limit `b` comes before the offset `a` in the undeploy order
      help: swap them: `--offset b --limit a`; undeploy runs the components in reverse order
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
          `token` (declared at hub.yaml:16): add `fromEnv: VAR` to its declaration, or give it a `value` in a parameters file given after the stack
      help: values can also come from `-e NAME=value` for `fromEnv` parameters, or be typed at a terminal
    ");
}

// ---------------------------------------------------------------- the table

/// One bad input: how to spoil the [`deployed`] stack, the command, and
/// what must come of it.
struct Row {
    name: &'static str,
    edit: fn(&Test),
    args: &'static [&'static str],
    /// The exit code.
    code: i32,
    /// Fragments the standard error must hold: the file, the line where
    /// known, and the fix.
    says: &'static [&'static str],
    /// Nothing ran: the state's bytes must be as before the command.
    state_kept: bool,
    /// Sends SIGTERM to hub this long after it started (a hanging component).
    terminate_after: Option<Duration>,
}

const fn row(
    name: &'static str,
    edit: fn(&Test),
    args: &'static [&'static str],
    code: i32,
    says: &'static [&'static str],
) -> Row {
    Row {
        name,
        edit,
        args,
        code,
        says,
        state_kept: code != 0,
        terminate_after: None,
    }
}

/// A row after which the state may have changed (something ran).
const fn ran(mut row: Row) -> Row {
    row.state_kept = false;
    row
}

fn set(test: &Test, path: &str, text: &str) {
    write(test, path, &crate::common::unindent(text));
}

fn set_bytes(test: &Test, path: &str, bytes: &[u8]) {
    std::fs::write(test.root().join(path), bytes).expect("write");
}

fn script(test: &Test, path: &str, text: &str) {
    set(test, path, text);
    let target = test.root().join(path);
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `STACK` with `from` replaced by `to` (the edit must apply).
fn edit_stack(test: &Test, from: &str, to: &str) {
    let text = crate::common::unindent(STACK);
    assert!(text.contains(from), "{from:?} not in the stack");
    write(test, "hub.yaml", &text.replacen(from, to, 1));
}

/// The state with `from` replaced by `to`.
fn edit_state(test: &Test, from: &str, to: &str) {
    let text = String::from_utf8(read(test, "s.state")).expect("utf-8 state");
    // A hand edit: the framing lines go with it (see `unframed`).
    let text = crate::common::unframed(&text);
    assert!(text.contains(from), "{from:?} not in the state:\n{text}");
    write(test, "s.state", &text.replacen(from, to, 1));
}

fn component_text(test: &Test, text: &str) {
    set(test, "a/hub-component.yaml", text);
}

fn deep(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

const PARAMS: &[&str] = &["deploy", "hub.yaml", "p.yaml", "-s", "s.state"];

fn rows() -> Vec<Row> {
    vec![
        // ---- malformed and hostile YAML of every kind of file
        row(
            "stack: tab indentation",
            |t| set(t, "hub.yaml", "kind: stack\nmeta:\n\tname: x\n"),
            DEPLOY,
            1,
            &["hub.yaml:3", "help:"],
        ),
        row(
            "stack: unclosed quote",
            |t| set(t, "hub.yaml", "kind: stack\nmeta:\n  name: \"x\n"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "stack: unclosed flow list",
            |t| set(t, "hub.yaml", "kind: stack\ncomponents: [a, b\n"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "stack: a list at the top",
            |t| set(t, "hub.yaml", "- kind: stack\n"),
            DEPLOY,
            1,
            &["hub.yaml:1", "help:"],
        ),
        row(
            "stack: a scalar at the top",
            |t| set(t, "hub.yaml", "just text\n"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "stack: empty file",
            |t| set(t, "hub.yaml", ""),
            DEPLOY,
            1,
            &["hub.yaml", "help:"],
        ),
        row(
            "stack: only comments",
            |t| set(t, "hub.yaml", "# nothing\n"),
            DEPLOY,
            1,
            &["hub.yaml", "help:"],
        ),
        row(
            "stack: not UTF-8",
            |t| set_bytes(t, "hub.yaml", b"kind: stack\nmeta:\n  name: \xff\xfe\n"),
            DEPLOY,
            1,
            &["hub.yaml", "UTF-8"],
        ),
        row(
            "stack: NUL byte",
            |t| set_bytes(t, "hub.yaml", b"kind: stack\x00\n"),
            DEPLOY,
            1,
            &["hub.yaml", "help:"],
        ),
        row(
            "stack: broken gzip",
            |t| set_bytes(t, "hub.yaml", &[0x1f, 0x8b, 0x08, 0, 1, 2, 3]),
            DEPLOY,
            1,
            &["hub.yaml", "gzip"],
        ),
        row(
            "stack: nested 100,000 deep",
            |t| {
                write(
                    t,
                    "hub.yaml",
                    &format!("kind: stack\nmeta:\n  name: {}\n", deep(100_000)),
                )
            },
            DEPLOY,
            1,
            &["hub.yaml:3", "nested deeper than 128", "help:"],
        ),
        row(
            "stack: billion laughs",
            |t| {
                let mut text = String::from("kind: stack\nmeta:\n  name: x\nextensions:\n  l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
                for level in 1..9 {
                    let refs = vec![format!("*l{}", level - 1); 10].join(", ");
                    text.push_str(&format!("  l{level}: &l{level} [{refs}]\n"));
                }
                write(t, "hub.yaml", &text);
            },
            DEPLOY,
            1,
            &["--> hub.yaml", "expand", "help:"],
        ),
        row(
            "stack: duplicate key",
            |t| edit_stack(t, "kind: stack\n", "kind: stack\nkind: stack\n"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "stack: unknown anchor",
            |t| edit_stack(t, "value: one", "value: *nowhere"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "component: malformed YAML",
            |t| component_text(t, "kind: component\nmeta: [\n"),
            DEPLOY,
            1,
            &["a/hub-component.yaml:", "help:"],
        ),
        row(
            "component: empty manifest",
            |t| component_text(t, ""),
            DEPLOY,
            1,
            &["a/hub-component.yaml", "help:"],
        ),
        row(
            "component: nested past the limit",
            |t| {
                write(
                    t,
                    "a/hub-component.yaml",
                    &format!("kind: component\nmeta:\n  name: a\nx: {}\n", deep(200)),
                )
            },
            DEPLOY,
            1,
            &["a/hub-component.yaml:4", "nested deeper"],
        ),
        row(
            "params: malformed YAML",
            |t| set(t, "p.yaml", "parameters:\n  - name: x\n   value: 1\n"),
            PARAMS,
            1,
            &["p.yaml:", "help:"],
        ),
        row(
            "params: parameters is text",
            |t| set(t, "p.yaml", "parameters: many\n"),
            PARAMS,
            1,
            &["p.yaml:1", "help:"],
        ),
        row(
            "params: missing file",
            |_| {},
            PARAMS,
            1,
            &["p.yaml", "help:"],
        ),
        row(
            "params: a folder",
            |t| std::fs::create_dir(t.root().join("p.yaml")).expect("mkdir"),
            PARAMS,
            1,
            &["p.yaml"],
        ),
        row(
            "elaborated: malformed YAML",
            |t| set(t, "x.elaborate", "kind: stack\nmeta: {name: x\n"),
            &["deploy", "x.elaborate", "-s", "s.state"],
            1,
            &["x.elaborate:", "help:"],
        ),
        row(
            "elaborated: a component first",
            |t| set(t, "x.elaborate", "kind: component\nmeta:\n  name: a\n"),
            &["deploy", "x.elaborate", "-s", "s.state"],
            1,
            &["x.elaborate", "component"],
        ),
        // ---- wrong types in fields
        row(
            "stack: meta.name is a list",
            |t| edit_stack(t, "name: bad", "name: [bad]"),
            DEPLOY,
            1,
            &["hub.yaml:4", "help:"],
        ),
        row(
            "stack: components is a map",
            |t| {
                set(
                    t,
                    "hub.yaml",
                    "kind: stack\nmeta:\n  name: bad\ncomponents:\n  a: {source: {dir: a}}\n",
                )
            },
            DEPLOY,
            1,
            &["hub.yaml:5", "help:"],
        ),
        row(
            "stack: source is text",
            |t| edit_stack(t, "source:\n      dir: a\n", "source: a\n"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "stack: depends is a map",
            |t| edit_stack(t, "depends: [a]", "depends: {a: 1}"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "stack: lifecycle.order is text",
            |t| edit_stack(t, "parameters:", "lifecycle:\n  order: a\nparameters:"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "stack: parameters is a map",
            |t| {
                edit_stack(
                    t,
                    "parameters:\n  - name: x.one\n    value: one",
                    "parameters:\n  x.one: one",
                )
            },
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        ran(row(
            "stack: a parameter without a name is kept with a warning",
            |t| edit_stack(t, "- name: x.one\n    value: one", "- value: one"),
            DEPLOY,
            0,
            &["hub.yaml", "empty name"],
        )),
        row(
            "stack: a component without a name",
            |t| edit_stack(t, "- name: b\n    source:", "- source:"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        ran(row(
            "stack: kind misspelt is a warning",
            |t| edit_stack(t, "kind: stack", "kind: stak"),
            DEPLOY,
            0,
            &["hub.yaml", "`stak`"],
        )),
        row(
            "stack: version is text",
            |t| edit_stack(t, "version: 1", "version: one"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "component: parameters is a map",
            |t| {
                component_text(
                    t,
                    "kind: component\nmeta:\n  name: a\nparameters:\n  x: 1\n",
                )
            },
            DEPLOY,
            1,
            &["a/hub-component.yaml:5", "help:"],
        ),
        row(
            "component: outputs is text",
            |t| component_text(t, "kind: component\nmeta:\n  name: a\noutputs: all\n"),
            DEPLOY,
            1,
            &["a/hub-component.yaml:4", "help:"],
        ),
        row(
            "component: a near typo of a key (with --strict)",
            |t| component_text(t, "kind: component\nmeta:\n  name: a\nparamters: []\n"),
            DEPLOY_STRICT,
            1,
            &["a/hub-component.yaml:4", "parameters", "--strict"],
        ),
        // ---- reference errors
        row(
            "reference: unknown name",
            |t| edit_stack(t, "value: one", "value: ${nowhere}"),
            DEPLOY,
            1,
            &["nowhere", "help:"],
        ),
        row(
            "reference: a cycle",
            |t| {
                edit_stack(
                    t,
                    "value: one",
                    "value: ${x.two}\n  - name: x.two\n    value: ${x.one}",
                )
            },
            DEPLOY,
            1,
            &["hub.yaml:", "cycle", "help:"],
        ),
        ran(row(
            "reference: an unclosed ${ is text",
            |t| edit_stack(t, "value: one", "value: ${x.two"),
            DEPLOY,
            0,
            &["deploy a ${x.two"],
        )),
        row(
            "reference: CEL syntax error",
            |t| edit_stack(t, "value: one", "value: '#{1 +}'"),
            DEPLOY,
            1,
            &["x.one", "help:"],
        ),
        row(
            "reference: unknown CEL function",
            |t| edit_stack(t, "value: one", "value: '#{nofunction(1)}'"),
            DEPLOY,
            1,
            &["nofunction", "help:"],
        ),
        row(
            "reference: depends on an unknown component",
            |t| edit_stack(t, "depends: [a]", "depends: [c]"),
            DEPLOY,
            1,
            &["hub.yaml:", "`c`", "help:"],
        ),
        row(
            "reference: depends on itself",
            |t| edit_stack(t, "depends: [a]", "depends: [b]"),
            DEPLOY,
            1,
            &["hub.yaml:", "cycle", "help:"],
        ),
        row(
            "reference: order names an unknown component",
            |t| edit_stack(t, "parameters:", "lifecycle:\n  order: [a, c]\nparameters:"),
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "reference: a component twice",
            |t| {
                edit_stack(
                    t,
                    "- name: b\n    source:\n      dir: b",
                    "- name: a\n    source:\n      dir: b",
                )
            },
            DEPLOY,
            1,
            &["hub.yaml:", "help:"],
        ),
        row(
            "reference: missing component folder",
            |t| edit_stack(t, "dir: b", "dir: nowhere"),
            DEPLOY,
            1,
            &["hub.yaml", "nowhere", "help:"],
        ),
        row(
            "reference: missing fromStack",
            |t| {
                edit_stack(
                    t,
                    "meta:\n  name: bad",
                    "meta:\n  name: bad\n  fromStack: nowhere.yaml",
                )
            },
            DEPLOY,
            1,
            &["nowhere.yaml", "help:"],
        ),
        // ---- bad flags
        row(
            "flag: unknown",
            |_| {},
            &["deploy", "hub.yaml", "-s", "s.state", "--bogus"],
            2,
            &["--bogus"],
        ),
        row(
            "flag: unknown -o component",
            |_| {},
            &["deploy", "hub.yaml", "-s", "s.state", "-o", "zz"],
            1,
            &["zz", "help:"],
        ),
        row(
            "flag: unknown -c component",
            |_| {},
            &["deploy", "hub.yaml", "-s", "s.state", "-c", "zz"],
            1,
            &["zz", "help:"],
        ),
        row(
            "flag: -e without =",
            |_| {},
            &["deploy", "hub.yaml", "-s", "s.state", "-e", "NAME"],
            2,
            &["NAME"],
        ),
        row(
            "flag: unknown cloud",
            |_| {},
            &["deploy", "hub.yaml", "-s", "s.state", "--clouds", "mars"],
            2,
            &["mars", "aws"],
        ),
        row(
            "flag: -j not a number",
            |_| {},
            &["deploy", "hub.yaml", "-s", "s.state", "-j", "many"],
            2,
            &["many"],
        ),
        row("flag: no stack", |_| {}, &["deploy"], 2, &["MANIFEST"]),
        row(
            "flag: missing stack file",
            |_| {},
            &["deploy", "nowhere.yaml", "-s", "s.state"],
            1,
            &["nowhere.yaml", "help:"],
        ),
        row(
            "flag: -c with -o",
            |_| {},
            &["deploy", "hub.yaml", "-s", "s.state", "-c", "a", "-o", "a"],
            1,
            &["--offset", "help:"],
        ),
        // ---- states
        row(
            "state: not YAML",
            |t| set(t, "s.state", "kind: state\nversion: [1\n"),
            DEPLOY,
            1,
            &["s.state:", "help:"],
        ),
        row(
            "state: truncated mid-key",
            |t| {
                let bytes = read(t, "s.state");
                let text = String::from_utf8_lossy(&bytes);
                let cut = text.find("timestamps:").expect("timestamps") + "times".len();
                set_bytes(t, "s.state", &bytes[..cut]);
            },
            DEPLOY,
            1,
            &["s.state", "cut short", "help:", "s.state.backup"],
        ),
        row(
            "state: truncated gzip",
            |t| set_bytes(t, "s.state", &[0x1f, 0x8b, 0x08, 0, 0, 0]),
            DEPLOY,
            1,
            &["s.state", "help:"],
        ),
        row(
            "state: empty",
            |t| set(t, "s.state", ""),
            DEPLOY,
            1,
            &["s.state", "help:"],
        ),
        row(
            "state: binary",
            |t| set_bytes(t, "s.state", &[0, 159, 146, 150, 255]),
            DEPLOY,
            1,
            &["s.state", "help:"],
        ),
        row(
            "state: future version",
            |t| edit_state(t, "version: 1", "version: 2"),
            DEPLOY,
            1,
            &["s.state:", "help:"],
        ),
        row(
            "state: another kind",
            |t| edit_state(t, "kind: state", "kind: stack"),
            DEPLOY,
            1,
            &["s.state:", "help:"],
        ),
        row(
            "state: another stack's",
            |t| edit_state(t, "  name: bad\n", "  name: other\n"),
            DEPLOY,
            1,
            &["s.state", "help:"],
        ),
        row(
            "state: serial is a word",
            |t| {
                let text = String::from_utf8(read(t, "s.state")).expect("utf-8 state");
                let serial = text
                    .lines()
                    .find(|l| l.starts_with("serial: "))
                    .expect("serial")
                    .to_string();
                edit_state(t, &serial, "serial: many");
            },
            DEPLOY,
            1,
            &["s.state:", "help:"],
        ),
        row(
            "state: nested past the limit",
            |t| {
                write(
                    t,
                    "s.state",
                    &format!("version: 1\nkind: state\nx: {}\n", deep(500)),
                )
            },
            DEPLOY,
            1,
            &["s.state:3", "nested deeper"],
        ),
        row(
            "state: a folder",
            |t| {
                std::fs::remove_file(t.root().join("s.state")).expect("rm");
                std::fs::create_dir(t.root().join("s.state")).expect("mkdir");
            },
            DEPLOY,
            1,
            &["s.state", "help:"],
        ),
        ran(row(
            "state: a symlink into a missing folder cannot be locked",
            |t| {
                std::fs::remove_file(t.root().join("s.state")).expect("rm");
                std::os::unix::fs::symlink("gone/s.state", t.root().join("s.state"))
                    .expect("symlink");
            },
            DEPLOY,
            1,
            &["gone/s.state.lock", "help:"],
        )),
        // ---- component folders
        row(
            "folder: the deploy script is a broken symlink",
            |t| {
                std::fs::remove_file(t.root().join("a/deploy.sh")).expect("rm");
                std::os::unix::fs::symlink("nowhere.sh", t.root().join("a/deploy.sh"))
                    .expect("symlink");
            },
            DEPLOY,
            1,
            &["a", "deploy", "help:"],
        ),
        row(
            "folder: the deploy script is a folder",
            |t| {
                std::fs::remove_file(t.root().join("a/deploy.sh")).expect("rm");
                std::fs::create_dir(t.root().join("a/deploy.sh")).expect("mkdir");
            },
            DEPLOY,
            1,
            &["deploy.sh", "help:"],
        ),
        ran(row(
            "folder: the deploy script is not executable",
            |t| {
                std::fs::set_permissions(
                    t.root().join("a/deploy.sh"),
                    std::fs::Permissions::from_mode(0o644),
                )
                .expect("chmod");
            },
            DEPLOY,
            1,
            &["deploy.sh", "chmod"],
        )),
        row(
            "folder: the component folder is a file",
            |t| {
                std::fs::remove_dir_all(t.root().join("b")).expect("rm");
                set(t, "b", "not a folder\n");
            },
            DEPLOY,
            1,
            &["b", "help:"],
        ),
        ran(row(
            "folder: a FIFO and a broken symlink beside the scripts",
            |t| {
                let fifo =
                    std::ffi::CString::new(t.root().join("a/pipe").to_string_lossy().as_bytes())
                        .expect("path");
                // SAFETY: mkfifo reads a NUL-terminated path that outlives the call.
                assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0, "mkfifo");
                std::os::unix::fs::symlink("nowhere", t.root().join("a/dangling"))
                    .expect("symlink");
            },
            DEPLOY,
            0,
            &["deploy a"],
        )),
        // ---- components that misbehave
        ran(row(
            "component: exits 3",
            |t| script(t, "a/deploy.sh", "#!/bin/sh\necho partial\nexit 3\n"),
            DEPLOY,
            1,
            &["exited with code 3", "--offset a"],
        )),
        ran(row(
            "component: killed by a signal",
            |t| script(t, "a/deploy.sh", "#!/bin/sh\nkill -9 $$\n"),
            DEPLOY,
            1,
            &["SIGKILL", "--offset a"],
        )),
        ran(row(
            "component: closes stdout early",
            |t| {
                script(
                    t,
                    "a/deploy.sh",
                    "#!/bin/sh\nexec >&-\necho still here >&2\n",
                )
            },
            DEPLOY,
            0,
            &["still here"],
        )),
        ran(row(
            "component: forks and exits",
            |t| {
                script(
                    t,
                    "a/deploy.sh",
                    "#!/bin/sh\n(sleep 5; echo late) &\necho parent done\n",
                )
            },
            DEPLOY,
            0,
            &["parent done"],
        )),
        ran(row(
            "component: prints invalid UTF-8",
            |t| {
                script(
                    t,
                    "a/deploy.sh",
                    "#!/bin/sh\nprintf 'bad \\377\\376 bytes\\n'\n",
                )
            },
            DEPLOY,
            0,
            &["bad \u{fffd}\u{fffd} bytes"],
        )),
        ran(row(
            "component: prints NUL bytes in its outputs",
            |t| {
                script(
                    t,
                    "a/deploy.sh",
                    "#!/bin/sh\nprintf 'Outputs:\\nk = a\\000b\\n\\n'\n",
                )
            },
            DEPLOY,
            0,
            &["deploy b"],
        )),
        ran(row(
            "component: prints a 3 MiB line",
            |t| {
                script(
                    t,
                    "a/deploy.sh",
                    "#!/bin/sh\nhead -c 3145728 /dev/zero | tr '\\0' x\necho\n",
                )
            },
            DEPLOY,
            0,
            &["deploy b"],
        )),
        ran(row(
            "component: an Outputs: line of 3 MiB",
            |t| {
                script(t, "a/deploy.sh", "#!/bin/sh\necho Outputs:\nprintf 'k = '\nhead -c 3000000 /dev/zero | tr '\\0' v\necho\n")
            },
            DEPLOY,
            0,
            &["only their first 1 MiB"],
        )),
        Row {
            terminate_after: Some(Duration::from_millis(1500)),
            ..ran(row(
                "component: hangs until hub is stopped",
                |t| script(t, "a/deploy.sh", "#!/bin/sh\necho waiting\nsleep 600\n"),
                DEPLOY,
                143,
                &["SIGTERM"],
            ))
        },
    ]
}

/// Runs hub for one row, sending SIGTERM after `terminate_after`.
fn run_row(test: &Test, row: &Row) -> Output {
    let Some(after) = row.terminate_after else {
        return hub(test, row.args);
    };
    let child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(test.root())
        .args(row.args)
        .env("HUB_NOW", "2024-05-01T10:00:00Z")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn hub");
    std::thread::sleep(after);
    // SAFETY: kill only sends a signal to our child.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    let out = child.wait_with_output().expect("hub output");
    Output::of(out, test.root())
}

/// At most the last 3,000 bytes of an output, for a failure message.
fn shown(text: &str) -> &str {
    let mut start = text.len().saturating_sub(3000);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    text[start..].trim_end()
}

#[test]
fn the_bad_input_table() {
    let rows = rows();
    assert!(rows.len() >= 60, "{} rows", rows.len());
    let mut failures = Vec::new();
    for row in &rows {
        let test = deployed();
        (row.edit)(&test);
        let before = read(&test, "s.state");
        let started = Instant::now();
        let out = run_row(&test, row);
        let took = started.elapsed();
        let mut wrong = Vec::new();
        if out.status != row.code {
            wrong.push(format!("exit code {} instead of {}", out.status, row.code));
        }
        if out.status == 101 || out.stderr.contains("panicked") {
            wrong.push("a panic".to_string());
        }
        for fragment in row.says {
            if !out.stderr.contains(fragment) && !out.stdout.contains(fragment) {
                wrong.push(format!("no {fragment:?}"));
            }
        }
        if row.state_kept && read(&test, "s.state") != before {
            wrong.push("the state changed".into());
        }
        if exists(&test, "s.state.lock") {
            wrong.push("the lock was left".into());
        }
        if took > Duration::from_secs(20) {
            wrong.push(format!("took {took:?}"));
        }
        if !wrong.is_empty() {
            failures.push(format!(
                "{}: {}\n--- stderr:\n{}\n--- stdout:\n{}",
                row.name,
                wrong.join(", "),
                shown(&out.stderr),
                shown(&out.stdout)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows failed:\n\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n\n")
    );
}
