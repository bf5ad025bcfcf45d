//! `--clouds` and cloud autodetection (deploy.md §8.3) on real stacks of
//! the corpus and on small ones, with stub tools on a `PATH` built by each
//! test (the machine may have real `aws`, `gcloud`, `kubectl`); and the
//! environment the successor's components read.

use crate::common::{copy_tree, hub_isolated, Output, Test};
use crate::conformance::{cases, corpus, Case};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// Every tool behind a well-known requirement, and the extension programs
/// components without a script of their own are run with.
const ALL_TOOLS: [&str; 9] = [
    "aws",
    "az",
    "gcloud",
    "gsutil",
    "kubectl",
    "helm",
    "terraform",
    "vault",
    "hub-component",
];

const NO_CLOUD_WARNING: &str = "no cloud given or detected";

/// A folder holding an executable stub (exit 0) for each of `tools`,
/// named after them.
fn stub_path(test: &Test, tools: &[&str]) -> PathBuf {
    let dir = test.root().join(format!("stubs-{}", tools.join("-")));
    std::fs::create_dir_all(&dir).expect("mkdir");
    for tool in tools {
        let path = dir.join(tool);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("write stub");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
    dir
}

/// Runs hub in `cwd` with nothing of the caller's environment but
/// `HOME`, `USER`, `PATH` = `path`, and `env`.
fn hub_in(cwd: &Path, path: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = assert_cmd::Command::cargo_bin("hub").expect("hub binary");
    command
        .current_dir(cwd)
        .args(args)
        .env_clear()
        .env("HOME", cwd)
        .env("USER", "tester")
        .env("PATH", path)
        .write_stdin(Vec::new());
    for (k, v) in env {
        command.env(k, v);
    }
    Output::of(command.output().expect("run hub"), cwd)
}

fn case_named(corpus: &Path, name: &str) -> Case {
    cases(corpus)
        .into_iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("{name} is not in cases.tsv"))
}

/// A writable copy of a corpus case and the folder its tooling runs from.
fn copy_case(corpus: &Path, case: &Case, into: &Path) -> PathBuf {
    let target = into.join(&case.name);
    copy_tree(&corpus.join(&case.name), &target);
    make_writable(&target);
    target.join(&case.workdir)
}

/// The corpus files are read-only; hub writes the elaborated file and
/// renders templates beside them.
fn make_writable(dir: &Path) {
    for entry in std::fs::read_dir(dir).expect("read").flatten() {
        let path = entry.path();
        let mode = if path.is_dir() { 0o755 } else { 0o644 };
        let executable =
            std::fs::metadata(&path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
        let mode = if executable { 0o755 } else { mode };
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("chmod");
        if path.is_dir() {
            make_writable(&path);
        }
    }
}

/// Elaborates the case in `workdir` as its tooling does, into
/// `hub.yaml.elaborate` there.
fn elaborate_case(case: &Case, workdir: &Path, path: &Path) {
    let mut args: Vec<&str> = vec!["elaborate"];
    args.extend(case.args.iter().map(String::as_str));
    args.extend(["-o", "hub.yaml.elaborate"]);
    let out = hub_in(workdir, path, &args, &[]);
    assert_eq!(out.status, 0, "{}: {}", case.name, out.stderr);
}

/// `-e NAME=stub,...` for every `fromEnv` of the elaborated file, so that
/// user parameters have a value without a terminal.
fn from_env_overrides(workdir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(workdir.join("hub.yaml.elaborate")).expect("elaborated");
    let mut names: Vec<&str> = text
        .lines()
        .filter_map(|line| line.trim().strip_prefix("fromEnv:"))
        .map(|name| name.trim().trim_matches('"').trim_matches('\''))
        .filter(|name| !name.is_empty())
        .collect();
    names.sort_unstable();
    names.dedup();
    (!names.is_empty()).then(|| {
        names
            .iter()
            .map(|name| format!("{name}=stub"))
            .collect::<Vec<_>>()
            .join(",")
    })
}

/// The corpus keeps only manifests and scripts of components (no charts,
/// no `kustomization.yaml`): a component folder left with nothing but its
/// manifest gets stub `deploy` and `undeploy` scripts.
fn stub_bare_components(workdir: &Path) {
    let mut manifests = Vec::new();
    find_manifests(workdir, &mut manifests);
    for manifest in manifests {
        let dir = manifest.parent().expect("component folder");
        let files = std::fs::read_dir(dir).expect("read").count();
        if files == 1 {
            for verb in ["deploy", "undeploy"] {
                let script = dir.join(verb);
                std::fs::write(&script, "#!/bin/sh\nexit 0\n").expect("write");
                std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
    }
}

fn find_manifests(dir: &Path, found: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("read").flatten() {
        let path = entry.path();
        if path.is_dir() {
            find_manifests(&path, found);
        } else if path.file_name().is_some_and(|n| n == "hub-component.yaml") {
            found.push(path);
        }
    }
}

/// `stack-app-eks` copied and elaborated, with the `-e` values its user
/// parameters need and the tools of an AWS-only user.
struct Eks {
    test: Test,
    workdir: PathBuf,
    overrides: String,
    aws_only: PathBuf,
}

impl Eks {
    fn new() -> Option<Eks> {
        let corpus = corpus()?;
        let case = case_named(&corpus, "stack-app-eks");
        let test = Test::new();
        let workdir = copy_case(&corpus, &case, test.root());
        elaborate_case(&case, &workdir, &stub_path(&test, &ALL_TOOLS));
        let overrides = from_env_overrides(&workdir).expect("stack-app-eks has fromEnv parameters");
        let aws_only = stub_path(&test, &["aws", "kubectl", "helm", "hub-component"]);
        Some(Eks {
            test,
            workdir,
            overrides,
            aws_only,
        })
    }

    /// `hub plan` of the elaborated stack with the tools of `path`.
    fn plan(&self, path: &Path, extra: &[&str], env: &[(&str, &str)]) -> Output {
        let plan = ["plan", "hub.yaml.elaborate", "-n", "-e", &self.overrides];
        hub_in(&self.workdir, path, &[&plan[..], extra].concat(), env)
    }

    fn warnings_of_no_cloud(out: &Output) -> usize {
        out.stderr.matches(NO_CLOUD_WARNING).count()
    }
}

#[test]
fn eks_plans_with_clouds_aws_without_az_or_gcloud() {
    let Some(eks) = Eks::new() else {
        return;
    };
    let out = eks.plan(&eks.aws_only, &["--clouds", "aws"], &[]);
    out.success();
    assert_eq!(Eks::warnings_of_no_cloud(&out), 0, "{}", out.stderr);
    assert!(out.stdout.contains("external-dns"), "{}", out.stdout);
    // Enabling a cloud whose tool is missing brings its requirement back.
    let out = eks.plan(&eks.aws_only, &["--clouds", "aws,azure"], &[]);
    out.failure().stderr_has("`azure`").stderr_has("`az`");
}

#[test]
fn eks_without_clouds_or_cloud_variables_warns_once_and_checks_every_cloud() {
    let Some(eks) = Eks::new() else {
        return;
    };
    let out = eks.plan(&eks.aws_only, &[], &[]);
    out.failure()
        .stderr_has("the stack requires `azure`")
        .stderr_has("put `az` (for `azure`) and `gcloud` (for `gcp`) on the PATH");
    assert_eq!(Eks::warnings_of_no_cloud(&out), 1, "{}", out.stderr);
    // With every tool there, the old behaviour: everything checked, planned.
    let out = eks.plan(&stub_path(&eks.test, &ALL_TOOLS), &[], &[]);
    out.success();
    assert_eq!(Eks::warnings_of_no_cloud(&out), 1, "{}", out.stderr);
}

#[test]
fn eks_detects_aws_from_aws_profile() {
    let Some(eks) = Eks::new() else {
        return;
    };
    let out = eks.plan(&eks.aws_only, &[], &[("AWS_PROFILE", "dev")]);
    out.success();
    assert_eq!(Eks::warnings_of_no_cloud(&out), 0, "{}", out.stderr);
    // An empty variable is not set.
    let out = eks.plan(&eks.aws_only, &[], &[("AWS_PROFILE", "")]);
    out.failure().stderr_has("`azure`");
    // Azure detected alone: `azure` is kept, and `az` is missing.
    let out = eks.plan(&eks.aws_only, &[], &[("AZURE_TENANT_ID", "t")]);
    out.failure().stderr_has("`azure`");
    assert!(!out.stderr.contains("`aws`"), "{}", out.stderr);
}

#[test]
fn unknown_clouds_are_refused_with_the_valid_names() {
    let t = Test::new().file("hub.yaml", "kind: stack\nmeta: {name: s}\ncomponents: []\n");
    let out = hub_isolated(&t, &["plan", "hub.yaml", "-n", "--clouds", "aws,mars"], &[]);
    out.failure()
        .stderr_has("mars")
        .stderr_has("aws")
        .stderr_has("azure")
        .stderr_has("gcp");
}

/// A stack whose one component requires `aws`, `azure` and `kubernetes`
/// (no cloud's requirement: it stays, met by `kubectl`).
fn two_cloud_stack() -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "
            kind: stack
            meta: {name: clouds}
            requires: [aws, azure]
            components:
            - name: app
              source: {dir: app}
            lifecycle:
              order: [app]
            ",
        )
        .file(
            "app/hub-component.yaml",
            "
            kind: component
            meta: {name: app}
            requires: [aws, azure, kubernetes]
            ",
        )
        .file(
            "app/deploy.sh",
            "#!/bin/sh\necho \"provides: $HUB_PROVIDES\" > ran.out\n",
        )
        .file("app/undeploy.sh", "#!/bin/sh\necho undeployed > ran.out\n")
}

#[test]
fn deploy_and_undeploy_with_clouds_aws_need_only_the_aws_tool() {
    let t = two_cloud_stack();
    for script in ["app/deploy.sh", "app/undeploy.sh"] {
        std::fs::set_permissions(
            t.root().join(script),
            std::fs::Permissions::from_mode(0o755),
        )
        .expect("chmod");
    }
    let path = stub_path(&t, &["aws", "kubectl"]);
    let root = t.root();
    let run = |verb: &str, clouds: &[&str]| {
        let args = [&[verb, "hub.yaml", "-s", "hub.yaml.state"], clouds].concat();
        let out = hub_in(root, &path, &args, &[]);
        let ran = std::fs::read_to_string(root.join("app/ran.out")).unwrap_or_default();
        (out, ran.trim().to_string())
    };
    let (out, ran) = run("deploy", &["--clouds", "aws"]);
    out.success();
    assert_eq!(ran, "provides: aws kubernetes");
    let (out, ran) = run("undeploy", &["--clouds", "aws"]);
    out.success();
    assert_eq!(ran, "undeployed");
    // Without the flag nor a cloud variable, `azure` is checked as before.
    run("deploy", &[])
        .0
        .failure()
        .stderr_has("`azure`")
        .stderr_has(NO_CLOUD_WARNING);
}

/// Cases that cannot be planned for a reason of their own, not hub's: the
/// fragment their error must show.
const CANNOT_PLAN: [(&str, &str); 1] = [(
    // `#{component.kubernetes.master == ...}` names a parameter prefix, not a
    // parameter: the reference's CEL lookup fails on it too.
    "k8s-aws-platform-template",
    "component.kubernetes.master.enableR53SyncLifecycleHook",
)];

/// The lines of a plan that say why a component would fail, and the one
/// before each (the component's).
fn would_fail_lines(plan: &str) -> String {
    let lines: Vec<&str> = plan.lines().collect();
    let mut said = String::new();
    for (i, line) in lines.iter().enumerate() {
        if line.contains("fail") {
            if let Some(before) = i.checked_sub(1).map(|b| lines[b]) {
                said.push_str(before);
                said.push('\n');
            }
            said.push_str(line);
            said.push('\n');
        }
    }
    said
}

/// Cases whose plan is made but says that components would fail here (a
/// plan that says so exits 1), and a fragment of each reason: hooks and
/// values that the real stack's CI provides, and a script the corpus keeps
/// without its executable bit.
const WOULD_FAIL: [(&str, &str); 3] = [
    (
        "google-gke-with-demo-app",
        "hook `.hub/gke-context` (pre-deploy) not found",
    ),
    (
        "hubctl-tutorial-015-configure",
        "is not executable (mode 0644)",
    ),
    (
        "kubeflow-gcp",
        "seldon-core-operator: fail (cannot expand `component.ingress.host`",
    ),
];

#[test]
fn every_corpus_case_plans_with_clouds_and_stub_tools() {
    let Some(corpus) = corpus() else {
        return;
    };
    let t = Test::new();
    let path = stub_path(&t, &ALL_TOOLS);
    let mut problems = Vec::new();
    for case in cases(&corpus) {
        let workdir = copy_case(&corpus, &case, t.root());
        elaborate_case(&case, &workdir, &path);
        stub_bare_components(&workdir);
        let mut args = vec![
            "plan",
            "hub.yaml.elaborate",
            "-n",
            "--clouds",
            "aws,azure,gcp",
        ];
        let overrides = from_env_overrides(&workdir);
        if let Some(overrides) = &overrides {
            args.extend(["-e", overrides]);
        }
        let out = hub_in(&workdir, &path, &args, &[]);
        let expected_failure = CANNOT_PLAN.iter().find(|(name, _)| *name == case.name);
        let would_fail = WOULD_FAIL.iter().find(|(name, _)| *name == case.name);
        let planned = out.stdout.contains("\nPlan: ");
        match (expected_failure, would_fail, out.status) {
            (None, None, 0) => {}
            (Some((_, fragment)), _, status) if status != 0 && out.stderr.contains(fragment) => {}
            (None, Some((_, fragment)), 1) if planned && out.stdout.contains(fragment) => {}
            _ => problems.push(format!(
                "{}: `hub {}` exited {}:\n{}{}",
                case.name,
                args.join(" "),
                out.status,
                out.stderr,
                would_fail_lines(&out.stdout)
            )),
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn hubctl_tutorial_component_prints_its_name() {
    let Some(corpus) = corpus() else {
        return;
    };
    let case = case_named(&corpus, "hubctl-tutorial-020-shell");
    let t = Test::new();
    let workdir = copy_case(&corpus, &case, t.root());
    let path = stub_path(&t, &[]);
    let expected = [
        ("deploy", "is saying: foo"),
        ("deploy", "deployed successfully!"),
        ("undeploy", "undeployed successfully!"),
    ];
    for (verb, text) in expected {
        let out = hub_in(
            &workdir,
            &path,
            &[verb, "hub.yaml", "-s", "hub.yaml.state"],
            &[],
        );
        out.success();
        let printed = format!("{}{}", out.stdout, out.stderr);
        let line = format!("Component my-first-component {text}");
        assert!(
            printed.contains(&line),
            "{verb}: {line:?} not in\n{printed}"
        );
    }
}
