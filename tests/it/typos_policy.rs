//! Near typos: one decision for every command. An unknown key that looks
//! like a typo is an error in the files of the user's own stack (stack
//! file, parameters files, `fromStack` parents in the same repository) and
//! a warning with "did you mean" in component manifests; `--strict` makes
//! both errors, `--lenient` both warnings; `validate`, `elaborate`, `plan`
//! and `deploy` answer alike on the same files. No real stack or component
//! manifest of the corpus fails because of an unknown key.

use crate::common::{hub_isolated, Output, Test};

/// A stack of one component `c` whose manifest carries `meta.breif` (a
/// typo of `brief`, as public Hub components do) and whose stack file
/// carries `stack_key` under its component entry.
fn stack(stack_key: &str) -> Test {
    Test::new()
        .file(
            "hub.yaml",
            &format!(
                "kind: stack\nmeta:\n  name: s\ncomponents:\n  - name: c\n    source:\n      dir: c\n    {stack_key}: []\n"
            ),
        )
        .file(
            "c/hub-component.yaml",
            "kind: component\nmeta:\n  name: c\n  breif: a typo its author left\n",
        )
        .script("c/deploy.sh", "#!/bin/sh\ntouch \"$(dirname \"$0\")/ran\"\n")
}

const STACK_TYPO_ERROR: &str =
    "error: unknown key `components[0].dependss` looks like a typo (did you mean `depends`?)\n  --> hub.yaml:8:5\n";
const STACK_TYPO_WARNING: &str =
    "warning: hub.yaml:8:5: unknown key `components[0].dependss` is ignored (did you mean `depends`?)\n";
const COMPONENT_TYPO_ERROR: &str =
    "error: unknown key `meta.breif` looks like a typo (did you mean `brief`?)\n  --> c/hub-component.yaml:4:3\n";
const COMPONENT_TYPO_WARNING: &str =
    "warning: c/hub-component.yaml:4:3: unknown key `meta.breif` is ignored (did you mean `brief`?)\n";

/// `hub validate`, `elaborate`, `plan` and `deploy` on the stack with the
/// same extra flags.
fn every_command(t: &Test, files: &[&str], flags: &[&str]) -> Vec<(&'static str, Output)> {
    let with = |base: &[&str]| -> Vec<String> {
        base.iter()
            .chain(flags)
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        hub_isolated(t, &args, &[])
    };
    let mut validate = vec!["validate"];
    validate.extend(files);
    vec![
        ("validate", run(with(&validate))),
        (
            "elaborate",
            run(with(&["elaborate", "hub.yaml", "-o", "e.yaml"])),
        ),
        ("plan", run(with(&["plan", "hub.yaml", "-s", "s.state"]))),
        (
            "deploy",
            run(with(&["deploy", "hub.yaml", "-s", "s.state"])),
        ),
    ]
}

#[test]
fn a_typo_in_the_stack_file_is_an_error_for_every_command() {
    let t = stack("dependss");
    for (command, out) in every_command(&t, &["hub.yaml"], &[]) {
        assert_eq!(out.status, 1, "{command}: {}", out.stderr);
        out.stderr_has(STACK_TYPO_ERROR).stderr_has(
            "help: correct the key; `--lenient` turns this error into a warning (the key is then ignored)",
        );
    }
    assert!(!t.root().join("c/ran").exists(), "nothing ran");
    assert!(!t.root().join("e.yaml").exists(), "nothing was written");
}

#[test]
fn lenient_makes_the_stack_typo_a_warning_for_every_command() {
    let t = stack("dependss");
    for (command, out) in every_command(&t, &["hub.yaml"], &["--lenient"]) {
        assert_eq!(out.status, 0, "{command}: {}", out.stderr);
        out.stderr_has(STACK_TYPO_WARNING);
    }
    assert!(t.root().join("c/ran").exists(), "the deploy ran");
}

#[test]
fn a_typo_in_a_component_manifest_is_a_warning_for_every_command() {
    let t = stack("depends");
    for (command, out) in every_command(&t, &["hub.yaml", "c/hub-component.yaml"], &[]) {
        assert_eq!(out.status, 0, "{command}: {}", out.stderr);
        if command == "validate" {
            out.stderr_has("ok: c/hub-component.yaml (component, 1 warning)\n");
        }
        out.stderr_has(COMPONENT_TYPO_WARNING);
    }
    assert!(t.root().join("c/ran").exists(), "the deploy ran");
}

#[test]
fn strict_makes_the_component_typo_an_error_for_every_command() {
    let t = stack("depends");
    for (command, out) in every_command(&t, &["c/hub-component.yaml"], &["--strict"]) {
        assert_eq!(out.status, 1, "{command}: {}", out.stderr);
        out.stderr_has(COMPONENT_TYPO_ERROR).stderr_has(
            "help: correct the key in the component's manifest; without `--strict` a typo there is a warning (the key is then ignored)",
        );
    }
    assert!(!t.root().join("c/ran").exists(), "nothing ran");
}

#[test]
fn strict_and_lenient_together_are_refused() {
    let out = stack("depends")
        .args(&["elaborate", "hub.yaml", "--strict", "--lenient"])
        .run();
    assert_eq!(out.status, 2, "{}", out.stderr);
    out.stderr_has("the argument '--strict' cannot be used with '--lenient'");
}

/// A stack `fromStack: ../base` whose parent has a typo; `base` is in
/// the same repository as the stack, or in a repository of its own.
fn child_of_parent(parent_in_own_repository: bool) -> Test {
    let t = Test::new()
        .file(
            "stack/hub.yaml",
            "kind: stack\nmeta:\n  name: child\n  fromStack: ../base\n",
        )
        .file(
            "base/hub.yaml",
            "kind: stack\nmeta:\n  name: base\nparameters:\n  - name: a\n    vaule: 1\n",
        );
    std::fs::create_dir_all(t.root().join(".git")).expect("the repository of both");
    if parent_in_own_repository {
        std::fs::create_dir_all(t.root().join("base/.git")).expect("the parent's repository");
    }
    t
}

#[test]
fn a_typo_in_a_parent_of_the_same_repository_is_an_error() {
    let t = child_of_parent(false);
    let out = hub_isolated(&t, &["elaborate", "stack/hub.yaml", "-o", "e.yaml"], &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    out.stderr_has(
        "error: unknown key `parameters[0].vaule` looks like a typo (did you mean `value`?)\n  --> stack/../base/hub.yaml:6:5\n",
    );
}

#[test]
fn a_typo_in_a_parent_of_another_repository_is_a_warning() {
    let t = child_of_parent(true);
    let out = hub_isolated(&t, &["elaborate", "stack/hub.yaml", "-o", "e.yaml"], &[]);
    out.success().stderr_has(
        "warning: stack/../base/hub.yaml:6:5: unknown key `parameters[0].vaule` is ignored (did you mean `value`?)\n",
    );
    let strict = hub_isolated(
        &t,
        &["elaborate", "stack/hub.yaml", "-o", "e.yaml", "--strict"],
        &[],
    );
    assert_eq!(strict.status, 1, "{}", strict.stderr);
    strict.stderr_has("error: unknown key `parameters[0].vaule` looks like a typo");
}

#[test]
fn a_typo_in_a_params_file_is_an_error_for_validate_as_for_elaborate() {
    let t = stack("depends").file("params.yaml", "paramters:\n  - name: a\n");
    let validate = hub_isolated(&t, &["validate", "params.yaml"], &[]);
    assert_eq!(validate.status, 1, "{}", validate.stderr);
    validate
        .stderr_has("error: unknown key `paramters` looks like a typo (did you mean `parameters`?)\n  --> params.yaml:1:1\n")
        .stderr_has("invalid: params.yaml (parameters, 1 error)\n");
    let elaborate = hub_isolated(
        &t,
        &["elaborate", "hub.yaml", "params.yaml", "-o", "e.yaml"],
        &[],
    );
    assert_eq!(elaborate.status, 1, "{}", elaborate.stderr);
    elaborate.stderr_has("error: unknown key `paramters` looks like a typo (did you mean `parameters`?)\n  --> params.yaml:1:1\n");
}

/// Every case of the corpus and every real component manifest in it
/// elaborate with the default flags: no unknown key stops them.
#[test]
fn every_corpus_stack_and_component_manifest_elaborates_with_default_flags() {
    let Some(corpus) = crate::conformance::corpus() else {
        return;
    };
    let out_dir = tempfile::tempdir().expect("temporary folder");
    for case in crate::conformance::cases(&corpus) {
        let cwd = case.dir(&corpus).join(&case.workdir);
        let out = assert_cmd::Command::cargo_bin("hub")
            .expect("hub binary")
            .current_dir(&cwd)
            .arg("elaborate")
            .args(&case.args)
            .arg("-o")
            .arg(out_dir.path().join(format!("{}.yaml", case.name)))
            .env_remove("ENV")
            .output()
            .expect("run hub");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {stderr}", case.name);
        assert!(
            !stderr.contains("looks like a typo"),
            "{}: {stderr}",
            case.name
        );
    }
    let mut manifests = Vec::new();
    collect_component_manifests(&corpus, &mut manifests);
    manifests.sort();
    assert!(
        manifests.len() > 100,
        "the corpus holds real components: {}",
        manifests.len()
    );
    let mut stack = String::from("kind: stack\nmeta:\n  name: every-component\ncomponents:\n");
    for (i, manifest) in manifests.iter().enumerate() {
        let dir = manifest.parent().expect("a component's folder");
        stack.push_str(&format!(
            "  - name: c{i}\n    source:\n      dir: {:?}\n",
            dir.display().to_string()
        ));
    }
    std::fs::write(out_dir.path().join("hub.yaml"), stack).expect("write the stack");
    let out = assert_cmd::Command::cargo_bin("hub")
        .expect("hub binary")
        .current_dir(out_dir.path())
        .args(["elaborate", "hub.yaml", "-o", "every.yaml"])
        .env_remove("ENV")
        .output()
        .expect("run hub");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(!stderr.contains("looks like a typo"), "{stderr}");
}

fn collect_component_manifests(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            collect_component_manifests(&path, out);
        } else if path.file_name().is_some_and(|n| n == "hub-component.yaml") {
            out.push(path);
        }
    }
}
