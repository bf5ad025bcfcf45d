//! Jobs added to generated pipelines, and `-e` values in them. Whoever
//! opens a pull request writes the stack's names (its `meta.name`, its
//! components', runner tags, capabilities); `hub pipeline` writes them
//! into a GitLab child pipeline that runs at once, or a workflow a
//! reviewer merges. Every row failed on `main` before the fix: a carriage
//! return in a name or a capability added a job gitlab-ci-local ran,
//! U+2028 and `${{` passed as names, a runner tag `gpu,large` became two
//! tags, a component `a,b` split Argo's command, and `-e` values were
//! written in clear into every pipeline.
//!
//! The pipelines run here under gitlab-ci-local (and are checked with
//! actionlint and Argo's schema) when scripts/test-deps installed them.

use super::super::tree;
use super::RUNNER_SECRET;
use crate::common::{hub_binary, parse_documents, pinned_command, Output, Test};
use crate::pipeline::{actionlint, argo_check, gitlab_ci_local_with};
use std::path::Path;
use yaml_serde::Value;

/// A stack of `components` (`{name: …, source: {dir: …}}` lines) named
/// `name` (a YAML double-quoted string's content), with `more` after.
fn stack(name: &str, components: &[(&str, &str)], more: &str) -> Test {
    let mut text = format!("version: 1\nkind: stack\nmeta: {{name: \"{name}\"}}\ncomponents:\n");
    for (component, dir) in components {
        text.push_str(&format!(
            "  - {{name: \"{component}\", source: {{dir: {dir}}}}}\n"
        ));
    }
    text.push_str(more);
    let mut test = Test::new().file("hub.yaml", &text);
    for dir in ["c", "d"] {
        test = test
            .file(
                &format!("{dir}/hub-component.yaml"),
                &format!("version: 1\nkind: component\nmeta: {{name: {dir}}}\n"),
            )
            .script(&format!("{dir}/deploy.sh"), "#!/bin/sh\necho deployed\n");
    }
    test
}

/// `hub pipeline ARGS` in the test's folder, the jobs calling this hub,
/// with `--allow-local-state`: the states here are local files, which the
/// jobs share when they run in that folder.
fn pipeline(test: &Test, args: &[&str]) -> Output {
    let hub = hub_binary().display().to_string();
    let mut all = vec!["pipeline", "--allow-local-state", "--hub", &hub];
    all.extend_from_slice(args);
    let out = pinned_command(test.root(), &all).output().expect("run hub");
    Output::of(out, test.root())
}

/// The one YAML document of the file `name` below the test's folder.
fn written(test: &Test, name: &str) -> Value {
    let text = std::fs::read_to_string(test.root().join(name)).expect("written");
    parse_documents(&text).remove(0)
}

/// The top-level keys of `document`.
fn keys(document: &Value) -> Vec<String> {
    document
        .as_mapping()
        .expect("a mapping")
        .keys()
        .map(|k| k.as_str().unwrap_or_default().to_string())
        .collect()
}

/// `text` as a list of strings, for comparisons.
fn strings(value: &Value) -> Vec<String> {
    value
        .as_sequence()
        .unwrap_or_else(|| panic!("not a list: {value:?}"))
        .iter()
        .map(|v| v.as_str().unwrap_or_default().to_string())
        .collect()
}

/// A job whose script touches `marker`, between carriage returns, then
/// a `#` that makes the rest of the line a comment.
fn injected(marker: &Path) -> String {
    format!(
        "k\\rinjected:\\r  stage: plan\\r  script: [touch {}]\\r#",
        marker.display()
    )
}

/// A carriage return in the stack's name opened a line of its own in the
/// GitLab pipeline's first comment, and gitlab-ci-local ran the job it
/// held. The name is refused with its line, and nothing is written.
#[test]
fn a_carriage_return_in_the_stack_name_adds_no_gitlab_job() {
    let outside = tempfile::tempdir().expect("folder");
    // The stack's name: refused, with its line.
    let marker = outside.path().join("by-name");
    let test = stack(&injected(&marker), &[("c", "c")], "");
    let out = pipeline(
        &test,
        &[
            "--target",
            "gitlab",
            "hub.yaml",
            "-s",
            "s.state",
            "-o",
            ".gitlab-ci.yml",
        ],
    );
    if test.root().join(".gitlab-ci.yml").exists() {
        gitlab_ci_local_with(test.root(), &[], &[]);
    }
    assert!(!marker.exists(), "the job of the stack's name ran");
    out.failure().stderr_has("hub.yaml:3").stderr_has(
        "cannot be the stack's `meta.name`: it holds a NUL or another control character",
    );
    assert!(!test.root().join(".gitlab-ci.yml").exists());
}

/// A carriage return in a capability `c` provides and `d` requires (the
/// plan's reason for `d` waiting for `c`) opened a line of its own in the
/// comment of `d`'s need, and gitlab-ci-local ran the job it held. No
/// text of the stack reaches a comment: the pipeline has hub's jobs only,
/// and runs.
#[test]
fn a_carriage_return_in_a_capability_adds_no_gitlab_job() {
    let outside = tempfile::tempdir().expect("folder");
    let marker = outside.path().join("by-capability");
    // Inside `deploy-d`'s `needs:` list: it gives `deploy-d` a script,
    // adds the job, and opens `deploy-x` to take the rest of the list.
    let capability = format!(
        "k\\r  script: [echo]\\r{}\\rdeploy-x:\\r  stage: deploy\\r  needs:\\r#",
        injected(&marker)
            .trim_start_matches("k\\r")
            .trim_end_matches("\\r#")
    );
    let test = stack("shop", &[("c", "c"), ("d", "d")], "")
        .file(
            "c/hub-component.yaml",
            &format!(
                "version: 1\nkind: component\nmeta: {{name: c}}\nprovides: [\"{capability}\"]\n"
            ),
        )
        .file(
            "d/hub-component.yaml",
            &format!(
                "version: 1\nkind: component\nmeta: {{name: d}}\nrequires: [\"{capability}\"]\n"
            ),
        );
    pipeline(
        &test,
        &[
            "--target",
            "gitlab",
            "hub.yaml",
            "-s",
            "s.state",
            "-o",
            ".gitlab-ci.yml",
        ],
    )
    .success();
    let ran = gitlab_ci_local_with(test.root(), &[], &[]);
    assert!(!marker.exists(), "the job of the capability ran");
    assert_eq!(
        keys(&written(&test, ".gitlab-ci.yml")),
        ["stages", "hub-plan", "deploy-c", "deploy-d", "hub-finish"]
    );
    if let Some(ran) = ran {
        let stdout = String::from_utf8_lossy(&ran.stdout);
        assert!(ran.status.success(), "{stdout}");
        assert!(stdout.contains(" PASS  deploy-d"), "{stdout}");
        // gitlab-ci-local starts each line of a job's log with its name.
        let injected = |l: &str| l.starts_with("injected") || l.contains("PASS  injected");
        assert!(!stdout.lines().any(injected), "{stdout}");
    }
}

/// U+2028 is a line break to YAML 1.1 readers (PyYAML, and so Argo's
/// tooling): in a component name it could open a line as CR did. It is
/// refused with the stack's line, for every target, and nothing is
/// written.
#[test]
fn a_line_separator_in_a_component_name_is_refused() {
    let test = stack("shop", &[("c", "c"), ("c\\u2028injected: 1", "d")], "");
    for target in ["gitlab", "github", "argo"] {
        let out = pipeline(
            &test,
            &[
                "--target", target, "hub.yaml", "-s", "s.state", "--image", "i", "-o", "p.yml",
            ],
        );
        assert!(!test.root().join("p.yml").exists(), "{target}: written");
        out.failure()
            .stderr_has("hub.yaml:6")
            .stderr_has("cannot be a component name: it holds a line separator (U+2028 or U+2029)");
    }
}

/// `${{ … }}` in a name reached GitHub `run:` lines and `runs-on:`, where
/// GitHub evaluates it (`${{ secrets.X }}` hands the job a secret the
/// workflow never gave it). Refused with the file and line, as the
/// stack's name, a component's and a runner tag; a workflow with `-e`
/// names has hub's own `${{ secrets.NAME }}` in `env:` only, and passes
/// actionlint.
#[test]
fn an_expression_in_a_name_is_refused_and_workflows_pass_actionlint() {
    let runners = "lifecycle:\n  runners:\n    default: {tags: [\"${{ secrets.X }}\"]}\n";
    for (test, at, what) in [
        (
            stack("shop-${{ secrets.X }}", &[("c", "c")], ""),
            "hub.yaml:3",
            "cannot be the stack's `meta.name`",
        ),
        (
            stack("shop", &[("c${{ secrets.X }}", "c")], ""),
            "hub.yaml:5",
            "cannot be a component name",
        ),
        (
            stack("shop", &[("c", "c")], runners),
            "hub.yaml:8",
            "cannot be a runner tag",
        ),
    ] {
        let out = pipeline(
            &test,
            &["--target", "github", "hub.yaml", "-s", "s", "-o", "w.yml"],
        );
        assert!(!test.root().join("w.yml").exists(), "{what}: written");
        out.failure()
            .stderr_has(at)
            .stderr_has(what)
            .stderr_has("it holds `${{`, which GitHub Actions evaluates");
    }
    let test = stack("shop", &[("c", "c"), ("d", "d")], "");
    pipeline(
        &test,
        &[
            "--target", "github", "hub.yaml", "-s", "s", "-e", "TOKEN=t", "-o", "w.yml",
        ],
    )
    .success();
    let workflow = written(&test, "w.yml");
    for (name, job) in workflow["jobs"].as_mapping().expect("jobs") {
        for step in job["steps"].as_sequence().expect("steps") {
            let run = step["run"].as_str().unwrap_or_default();
            assert!(!run.contains("${{"), "{name:?}: {run}");
        }
    }
    assert_eq!(
        workflow["jobs"]["deploy-c"]["env"]["TOKEN"].as_str(),
        Some("${{ secrets.TOKEN }}")
    );
    if let Some(problems) = actionlint(&test.root().join("w.yml")) {
        assert_eq!(problems, "", "actionlint");
    }
}

/// A runner tag holding `,` was written into a flow list (`[gpu,large]`)
/// that YAML reads as two tags: the job ran on runners it was not meant
/// for. Lists are block lists: it stays one tag in GitLab's `tags:` and
/// GitHub's `runs-on:`.
#[test]
fn a_runner_tag_with_a_comma_stays_one_tag() {
    let runners = "lifecycle:\n  runners:\n    default: {tags: [self-hosted, \"gpu,large\"]}\n";
    let test = stack("shop", &[("c", "c")], runners);
    for (target, file) in [("gitlab", "p.yml"), ("github", "w.yml")] {
        pipeline(
            &test,
            &["--target", target, "hub.yaml", "-s", "s", "-o", file],
        )
        .success();
    }
    let gitlab = written(&test, "p.yml");
    let github = written(&test, "w.yml");
    for tags in [
        &gitlab["hub-plan"]["tags"],
        &gitlab["deploy-c"]["tags"],
        &github["jobs"]["hub-plan"]["runs-on"],
        &github["jobs"]["deploy-c"]["runs-on"],
    ] {
        assert_eq!(strings(tags), ["self-hosted", "gpu,large"]);
    }
}

/// Argo's command was a flow list, so a component `a,b` became the two
/// words `a` and `b` after `-c`, and `-c` splits its value at `,` anyway.
/// A component name holds no `,` (refused with its line); the command is
/// a block list, each word one item whatever it holds, and passes Argo's
/// schema.
#[test]
fn argo_commands_are_lists_and_a_comma_is_no_name() {
    let test = stack("shop", &[("c", "c"), ("a,b", "d")], "");
    let out = pipeline(
        &test,
        &[
            "--target", "argo", "hub.yaml", "-s", "s", "--image", "i", "-o", "w.yaml",
        ],
    );
    assert!(!test.root().join("w.yaml").exists(), "written");
    out.failure()
        .stderr_has("hub.yaml:6")
        .stderr_has("cannot be a component name: it holds `,`, which separates the names of `-c`");

    let test = stack(
        "shop",
        &[("c", "c"), ("a b", "c"), ("it's [x]: y", "d")],
        "",
    );
    pipeline(
        &test,
        &[
            "--target", "argo", "hub.yaml", "-s", "s", "--image", "i", "-o", "w.yaml",
        ],
    )
    .success();
    let workflow = written(&test, "w.yaml");
    let commands: Vec<Vec<String>> = workflow["spec"]["templates"]
        .as_sequence()
        .expect("templates")
        .iter()
        .filter_map(|t| t.get("container").map(|c| strings(&c["command"])))
        .filter(|command| command[1] == "deploy")
        .collect();
    let selected: Vec<&str> = commands
        .iter()
        .map(|command| {
            assert_eq!(command.len(), 9, "{command:?}");
            assert_eq!(command[6], "-c", "{command:?}");
            command[7].as_str()
        })
        .collect();
    assert_eq!(selected, ["c", "a b", "it's [x]: y"]);
    if let Some(problems) = argo_check(&test.root().join("w.yaml")) {
        assert_eq!(problems, "", "Argo's schema");
    }
}

/// `-e NAME=value` was written into every job's command line: the value
/// in clear in the committed pipeline and in each job's log. The jobs
/// read `NAME` from the CI's variables instead (GitLab's, GitHub's
/// secrets, an Argo secret): under gitlab-ci-local the variable set for
/// the pipeline reaches the component, and the value is in no file hub
/// wrote nor in any job's log. (The state holds the component's
/// parameters, private to its owner, as it does for a plain deploy.)
#[test]
fn e_values_stay_out_of_pipelines_and_jobs_read_ci_variables() {
    let test = stack(
        "shop",
        &[("c", "c")],
        "parameters:\n  - {name: component.c.password, fromEnv: SECRET}\n",
    )
    .file(
        "c/hub-component.yaml",
        "version: 1\nkind: component\nmeta: {name: c}\nparameters:\n  - {name: component.c.password, env: PASSWORD}\n",
    )
    .script(
        "c/deploy.sh",
        "#!/bin/sh\nif [ \"$PASSWORD\" = \"$(cat \"$EXPECTED\")\" ]; then touch \"$EXPECTED.arrived\"; else echo missing; exit 3; fi\n",
    );
    let outside = tempfile::tempdir().expect("folder");
    let expected = outside.path().join("expected");
    std::fs::write(&expected, RUNNER_SECRET).expect("write");
    let given = format!("SECRET={RUNNER_SECRET}");
    let mut printed = Vec::new();
    for (target, file) in [
        ("gitlab", ".gitlab-ci.yml"),
        ("github", "workflow.yml"),
        ("argo", "workflow.yaml"),
    ] {
        // Argo's jobs run in a container (GitLab's here in the shell).
        let image: &[&str] = match target {
            "argo" => &["--image", "i"],
            _ => &[],
        };
        let mut args = vec![
            "--target", target, "hub.yaml", "-s", "s.state", "-e", &given, "-o", file,
        ];
        args.extend_from_slice(image);
        let out = pipeline(&test, &args);
        out.success();
        printed.extend([out.stdout, out.stderr]);
        let text = std::fs::read_to_string(test.root().join(file)).expect("written");
        let leaks: Vec<&str> = text.lines().filter(|l| l.contains(RUNNER_SECRET)).collect();
        assert!(
            leaks.is_empty(),
            "{target}: the value is in {file}: {leaks:?}"
        );
    }
    let github = written(&test, "workflow.yml");
    assert_eq!(
        github["jobs"]["deploy-c"]["env"]["SECRET"].as_str(),
        Some("${{ secrets.SECRET }}")
    );
    let argo = written(&test, "workflow.yaml");
    let key = &argo["spec"]["templates"][2]["container"]["env"][0]["valueFrom"]["secretKeyRef"];
    assert_eq!(key["key"].as_str(), Some("SECRET"), "{argo:?}");
    if let Some(problems) = argo_check(&test.root().join("workflow.yaml")) {
        assert_eq!(problems, "", "Argo's schema");
    }
    if let Some(problems) = actionlint(&test.root().join("workflow.yml")) {
        assert_eq!(problems, "", "actionlint");
    }
    // The GitLab pipeline run with the CI variable SECRET.
    let env = [
        ("SECRET", RUNNER_SECRET.to_string()),
        ("EXPECTED", expected.display().to_string()),
    ];
    if let Some(ran) = gitlab_ci_local_with(test.root(), &env, &[]) {
        let stdout = String::from_utf8_lossy(&ran.stdout).into_owned();
        assert!(ran.status.success(), "{stdout}");
        assert!(
            outside.path().join("expected.arrived").exists(),
            "the component did not get the value: {stdout}"
        );
        printed.push(stdout);
        printed.push(String::from_utf8_lossy(&ran.stderr).into_owned());
    }
    // Everything hub and the jobs wrote, but the state (private, as
    // for a plain deploy), and everything printed.
    let mut all = printed.join("\n");
    for (path, seen) in tree(test.root()) {
        if path == test.root().join("s.state") {
            assert_eq!(seen.mode & 0o077, 0, "the state is private");
            continue;
        }
        all.push_str(&String::from_utf8_lossy(&seen.bytes));
    }
    let leaks: Vec<&str> = all.lines().filter(|l| l.contains(RUNNER_SECRET)).collect();
    assert!(
        leaks.is_empty(),
        "the runner's secret was written: {leaks:?}"
    );
}
