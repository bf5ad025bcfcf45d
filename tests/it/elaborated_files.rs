//! Elaborated files written anywhere: where their component folders
//! resolve, the provenance header `hub elaborate` writes, and the warning
//! when a file they were made from changed after them.

use crate::common::{copy_tree, Output, Test};
use hub_manifest::{parse_elaborated, Provenance, SourceFile};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// A component whose deploy writes `$MESSAGE` into `deployed` in its folder.
const COMPONENT: &str = "
    kind: component
    meta: {name: NAME}
    parameters:
    - name: message
      env: MESSAGE
";
const MAKEFILE: &str = "deploy:\n\techo \"$$MESSAGE\" > deployed\nundeploy:\n\trm -f deployed\n";

/// `stack/` (component `c`, `params.yaml`) on top of `base/` (component
/// `p`, its own `params.yaml`), an empty `out dir/` and `elsewhere/`.
fn stacks(order: &str) -> Test {
    let mut test = Test::new()
        .file(
            "stack/hub.yaml",
            &format!(
                "
                kind: stack
                meta: {{name: app, fromStack: ../base}}
                components:
                - name: c
                  source: {{dir: components/c}}
                {order}
                parameters:
                - name: message
                  component: c
                "
            ),
        )
        .file(
            "stack/params.yaml",
            "
            parameters:
            - name: message
              component: c
              value: from the stack
            ",
        )
        .file(
            "base/hub.yaml",
            "
            kind: stack
            meta: {name: base}
            components:
            - name: p
              source: {dir: components/p}
            parameters:
            - name: message
              component: p
            ",
        )
        .file(
            "base/params.yaml",
            "
            parameters:
            - name: message
              component: p
              value: from the base
            ",
        )
        .file("out dir/.keep", "")
        .file("elsewhere/.keep", "");
    for (name, folder) in [("c", "stack/components/c"), ("p", "base/components/p")] {
        test = test
            .file(
                &format!("{folder}/hub-component.yaml"),
                &COMPONENT.replace("NAME", name),
            )
            .bytes(&format!("{folder}/Makefile"), MAKEFILE.as_bytes());
    }
    test
}

fn run(test: &Test, cwd: &str, args: &[&str]) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("hub").expect("hub binary");
    command
        .current_dir(test.root().join(cwd))
        .args(args)
        .env_remove("ENV");
    Output::of(command.output().expect("run hub"), test.root())
}

/// `hub elaborate hub.yaml params.yaml FLAGS...` in `stack/`, which must succeed.
fn elaborate_with(test: &Test, flags: &[&str]) -> Output {
    let mut args = vec!["elaborate", "hub.yaml", "params.yaml"];
    args.extend(flags);
    let out = run(test, "stack", &args);
    out.success();
    out
}

fn elaborate_to(test: &Test, output: &str) -> Output {
    elaborate_with(test, &["-o", output])
}

fn deployed(test: &Test, folder: &str) -> Option<String> {
    std::fs::read_to_string(test.root().join(folder).join("deployed")).ok()
}

/// Both components below `prefix` were deployed with their values.
#[track_caller]
fn assert_deployed(test: &Test, prefix: &str) {
    let c = deployed(test, &format!("{prefix}stack/components/c"));
    let p = deployed(test, &format!("{prefix}base/components/p"));
    assert_eq!(c.as_deref(), Some("from the stack\n"));
    assert_eq!(p.as_deref(), Some("from the base\n"));
}

#[track_caller]
fn assert_not_deployed(test: &Test, prefix: &str) {
    assert_eq!(deployed(test, &format!("{prefix}stack/components/c")), None);
    assert_eq!(deployed(test, &format!("{prefix}base/components/p")), None);
}

fn forget_deploys(test: &Test) {
    for folder in ["stack/components/c", "base/components/p"] {
        let _ = std::fs::remove_file(test.root().join(folder).join("deployed"));
    }
}

fn provenance_of(path: &Path) -> Provenance {
    let file = SourceFile::read(path).expect("elaborated file");
    let mut warnings = hub_manifest::diag::Warnings::default();
    parse_elaborated(&file, &mut warnings)
        .expect("elaborated")
        .provenance
}

/// Sets the modification time of `path` `seconds` from now (a minute on,
/// so that it is newer than any file a run writes).
fn touch(test: &Test, path: &str, seconds: i64) {
    let now = SystemTime::now();
    let offset = Duration::from_secs(seconds.unsigned_abs());
    let time = if seconds < 0 {
        now - offset
    } else {
        now + offset
    };
    let file = std::fs::File::options()
        .write(true)
        .open(test.root().join(path))
        .expect("open");
    file.set_modified(time).expect("set the modification time");
}

const STALE: &str = "the elaborated file is older than";

#[test]
fn an_elaborated_file_written_elsewhere_deploys_from_the_stack_folder_and_from_anywhere() {
    let test = stacks("");
    elaborate_to(&test, "../out dir/x.elaborate");
    let file = test.root().join("out dir/x.elaborate");
    let file = file.to_str().expect("utf-8 path");

    let out = run(&test, "stack", &["deploy", "../out dir/x.elaborate", "-n"]);
    out.success();
    assert!(!out.stderr.contains(STALE), "{}", out.stderr);
    assert_deployed(&test, "");

    forget_deploys(&test);
    run(&test, "elsewhere", &["deploy", file, "-n"]).success();
    assert_deployed(&test, "");

    run(&test, "elsewhere", &["undeploy", file, "-n"]).success();
    assert_not_deployed(&test, "");
}

#[test]
fn without_a_header_component_folders_resolve_against_the_elaborated_files_folder() {
    let test = stacks("");
    elaborate_to(&test, "hub.yaml.elaborate");
    let text = std::fs::read_to_string(test.root().join("stack/hub.yaml.elaborate")).unwrap();
    assert!(text.contains("# hub: stack-dir "), "{text}");
    let reference: String = text
        .lines()
        .filter(|l| !l.starts_with("# hub: "))
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::write(test.root().join("stack/ref.elaborate"), &reference).unwrap();
    std::fs::write(test.root().join("out dir/ref.elaborate"), &reference).unwrap();
    assert_eq!(
        provenance_of(&test.root().join("stack/ref.elaborate")),
        Provenance::default()
    );

    let in_stack = test.root().join("stack/ref.elaborate");
    run(
        &test,
        "elsewhere",
        &["deploy", in_stack.to_str().unwrap(), "-n"],
    )
    .success();
    assert_deployed(&test, "");

    forget_deploys(&test);
    run(
        &test,
        "stack",
        &["deploy", "../out dir/ref.elaborate", "-n"],
    )
    .failure()
    .stderr_has("component directory");
    assert_not_deployed(&test, "");
}

#[test]
fn a_copied_stack_deploys_its_own_components_not_those_of_the_recorded_folder() {
    let test = stacks("");
    elaborate_to(&test, "hub.yaml.elaborate");
    for folder in ["stack", "base"] {
        copy_tree(
            &test.root().join(folder),
            &test.root().join("copy").join(folder),
        );
    }
    run(&test, "copy/stack", &["deploy", "hub.yaml.elaborate", "-n"]).success();
    assert_deployed(&test, "copy/");
    assert_not_deployed(&test, "");
}

#[test]
fn a_params_file_changed_after_elaborate_is_warned_about_with_the_command_to_run() {
    let test = stacks("");
    elaborate_to(&test, "../out dir/x.elaborate");
    let plan = ["plan", "../out dir/x.elaborate", "-n"];
    let out = run(&test, "stack", &plan);
    out.success();
    assert!(!out.stderr.contains(STALE), "untouched: {}", out.stderr);

    touch(&test, "stack/params.yaml", 60);
    let root = test.root().display().to_string();
    let command = format!(
        "run `hub elaborate {root}/stack/hub.yaml {root}/stack/params.yaml -o '{root}/out dir/x.elaborate'`"
    );
    for verb in ["plan", "deploy", "undeploy"] {
        let out = run(&test, "stack", &[verb, "../out dir/x.elaborate", "-n"]);
        out.success()
            .stderr_has(&format!(
                "{STALE} `{root}/stack/params.yaml` it was made from"
            ))
            .stderr_has(&command);
        assert_eq!(out.stderr.matches(STALE).count(), 1, "{}", out.stderr);
    }

    touch(&test, "stack/params.yaml", -60);
    elaborate_to(&test, "../out dir/x.elaborate");
    let out = run(&test, "stack", &plan);
    assert!(
        !out.stderr.contains(STALE),
        "elaborated again: {}",
        out.stderr
    );
}

#[test]
fn a_parent_stacks_params_file_changed_after_elaborate_is_warned_about() {
    let test = stacks("");
    elaborate_to(&test, "hub.yaml.elaborate");
    touch(&test, "base/params.yaml", 60);
    touch(&test, "base/components/p/hub-component.yaml", 120);
    let root = test.root().display().to_string();
    run(&test, "stack", &["plan", "hub.yaml.elaborate", "-n"])
        .success()
        .stderr_has(&format!(
            "{STALE} `{root}/base/components/p/hub-component.yaml`, `{root}/base/params.yaml` it was made from"
        ));
}

#[test]
fn without_a_recorded_command_the_warning_says_to_elaborate_again() {
    let test = stacks("");
    elaborate_with(&test, &["-e", "X=1", "-o", "x.elaborate"]);
    touch(&test, "stack/hub.yaml", 60);
    run(&test, "stack", &["plan", "x.elaborate", "-n"])
        .success()
        .stderr_has("run `hub elaborate` again with the arguments it was made with");
}

#[test]
fn the_header_records_whether_the_order_was_derived() {
    for (order, derived) in [("", true), ("lifecycle: {order: [c]}", false)] {
        let test = stacks(order);
        elaborate_to(&test, "x.elaborate");
        let provenance = provenance_of(&test.root().join("stack/x.elaborate"));
        assert_eq!(provenance.order_derived, derived, "{order:?}");
        let root = test.root();
        assert_eq!(provenance.stack_dir, Some(root.join("stack")));
        assert_eq!(provenance.sources[0], root.join("stack/hub.yaml"));
        assert!(provenance.sources.contains(&root.join("base/params.yaml")));
    }
}

#[test]
fn stdout_and_gzip_output_carry_the_header() {
    let test = stacks("");
    let out = elaborate_with(&test, &["-o", "-"]);
    assert!(
        out.stdout.starts_with("---\n# hub: elaborated v1\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("# hub: order derived\n"));
    // Where `-o -` went is unknown: no command to make it again.
    assert!(!out.stdout.contains("# hub: command"), "{}", out.stdout);
    assert_eq!(out.stdout_documents()[0]["kind"], "stack");

    elaborate_with(&test, &["-o", "x.gz", "--compressed"]);
    let bytes = std::fs::read(test.root().join("stack/x.gz")).unwrap();
    assert!(bytes.starts_with(&[0x1f, 0x8b]), "gzip expected");
    let provenance = provenance_of(&test.root().join("stack/x.gz"));
    assert!(provenance.order_derived);
    assert_eq!(provenance.sources.len(), 6, "{provenance:?}");
}
