//! Applying what was not reviewed, and pipeline jobs that skip the checks
//! of an apply. One table of stale and denied cases, each run through
//! every way a saved plan is applied — `deploy --plan PLAN`, a pipeline's
//! job (`deploy --plan PLAN -c NAME --job`) and `deploy --change ID` —
//! on a local state and on the S3 test server. Each must be refused,
//! before anything runs, with a message naming the cause. Before the fix
//! the job went ahead in every case, and `deploy --plan` and `--change`
//! ran a plan whose commit, watched files, hooks or Terraform modules had
//! changed.

use crate::common::{pinned_command, skipped, Output, Test};
use std::path::Path;
use std::process::Command;

/// `net`: a script component that sources a shared `lib/` (watched), has
/// a hook in the stack's `bin/`, and a `*.tf` that sources a module from
/// outside its folder. Each deploy appends a line to `runs.log`.
const STACK: &str = "
version: 1
kind: stack
meta: {name: reviewed}
components:
  - name: net
    source: {dir: components/net}
    hooks:
      - {file: notify, triggers: [pre-deploy]}
lifecycle:
  watch:
    net: [\"lib/*.sh\"]
parameters:
  - {name: net.cidr, value: 10.0.0.0/16}
";

const COMPONENT: &str = "
version: 1
kind: component
meta: {name: net}
parameters:
  - {name: net.cidr, env: CIDR}
  - {name: net.zone, env: ZONE}
";

const DENY: &str = "- name: frozen-net\n  deny: plan.components.exists(c, c.name == \"net\")\n  message: the network is frozen\n";

fn stack() -> Test {
    Test::new()
        .file("hub.yaml", STACK)
        .file(
            "params.yaml",
            "parameters:\n  - {name: net.zone, value: a}\n",
        )
        .file("components/net/hub-component.yaml", COMPONENT)
        .script(
            "components/net/deploy.sh",
            "#!/bin/sh\n. ../../lib/common.sh\necho \"net $ZONE $LIB\" >> ../../runs.log\n",
        )
        .script("components/net/undeploy.sh", "#!/bin/sh\n")
        .file(
            "components/net/main.tf",
            "module \"shared\" {\n  source = \"../../modules/shared\"\n}\n",
        )
        .file("modules/shared/main.tf", "variable \"cidr\" {}\n")
        .file("lib/common.sh", "LIB=v1\n")
        .script("bin/notify.sh", "#!/bin/sh\necho notified\n")
        .file("deny.yaml", DENY)
        .file("README.md", "reviewed\n")
}

/// Where the state is.
#[derive(Clone, Copy, Debug)]
enum Backend {
    Local,
    S3,
}

/// How the plan is applied.
#[derive(Clone, Copy, Debug)]
enum Apply {
    /// `deploy --plan plan.json`.
    Plan,
    /// `deploy --plan plan.json -c net --job`.
    Job,
    /// `deploy … --change 7`, after `plan … --change 7`.
    Change,
}

/// The job first: before the fix it checked nothing, and went ahead in every
/// case.
const APPLIES: [Apply; 3] = [Apply::Job, Apply::Plan, Apply::Change];

/// One stack in its folder, with its state.
struct Case {
    test: Test,
    state: String,
    env: Vec<(&'static str, String)>,
}

impl Case {
    fn new(backend: Backend, git: bool) -> Option<Case> {
        let (state, env) = match backend {
            Backend::Local => ("hub.state".to_string(), Vec::new()),
            Backend::S3 => {
                let server = crate::remote::server::server()?;
                let state = format!("s3://{}/hub.state", server.bucket("reviewed"));
                (state, crate::remote::server::Store::env(server))
            }
        };
        let case = Case {
            test: stack(),
            state,
            env,
        };
        if git {
            case.git(&["init", "-q", "-b", "main"]);
            case.git(&["add", "-A"]);
            case.git(&["commit", "-q", "-m", "reviewed"]);
        }
        Some(case)
    }

    fn root(&self) -> &Path {
        self.test.root()
    }

    fn hub(&self, args: &[&str]) -> Output {
        let mut command = pinned_command(self.root(), args);
        command.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())));
        Output::of(command.output().expect("run hub"), self.root())
    }

    /// `hub VERB hub.yaml params.yaml -s STATE` plus `extra`.
    fn on_stack(&self, verb: &str, extra: &[&str]) -> Output {
        let mut args = vec![verb, "hub.yaml", "params.yaml", "-s", &self.state];
        args.extend_from_slice(extra);
        self.hub(&args)
    }

    fn git(&self, args: &[&str]) {
        let out = Command::new("git")
            .current_dir(self.root())
            .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
            .args(args)
            .output()
            .expect("run git");
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }

    fn edit(&self, path: &str, text: &str) {
        std::fs::write(self.root().join(path), text).expect("edit");
    }

    fn runs(&self) -> String {
        std::fs::read_to_string(self.root().join("runs.log")).unwrap_or_default()
    }
}

/// One stale or denied case.
struct Row {
    name: &'static str,
    /// The stack is a git work tree, committed before the plan.
    git: bool,
    /// Done before the plan (after the first deploy).
    before: fn(&Case),
    /// Done between the plan and its apply.
    change: fn(&Case),
    /// Given to the apply.
    extra: &'static [&'static str],
    /// What every refusal says.
    cause: &'static str,
}

fn nothing(_: &Case) {}

/// Runs `row` through every apply on `backend`.
fn run_row(row: &Row, backend: Backend) {
    for apply in APPLIES {
        let Some(case) = Case::new(backend, row.git) else {
            skipped("no S3 test server");
            return;
        };
        let label = format!("{} / {backend:?} / {apply:?}", row.name);
        case.on_stack("deploy", &[]).success();
        (row.before)(&case);
        let planned = match apply {
            Apply::Plan | Apply::Job => case.on_stack("plan", &["--out", "plan.json"]),
            Apply::Change => case.on_stack("plan", &["--change", "7"]),
        };
        assert_eq!(planned.status, 0, "{label}: plan: {}", planned.stderr);
        (row.change)(&case);
        let ran_before = case.runs();
        let mut args: Vec<&str> = match apply {
            Apply::Plan => vec!["deploy", "--plan", "plan.json"],
            Apply::Job => vec!["deploy", "--plan", "plan.json", "-c", "net", "--job"],
            Apply::Change => vec![
                "deploy",
                "hub.yaml",
                "params.yaml",
                "-s",
                &case.state,
                "--change",
                "7",
            ],
        };
        args.extend_from_slice(row.extra);
        let out = case.hub(&args);
        assert_eq!(
            case.runs(),
            ran_before,
            "{label}: the component ran:\n{}",
            out.stderr
        );
        assert_ne!(out.status, 0, "{label}: the apply went ahead");
        assert!(
            out.stderr.contains(row.cause),
            "{label}: the refusal does not say `{}`:\n{}",
            row.cause,
            out.stderr
        );
    }
}

fn both(row: &Row) {
    if row.git && Command::new("git").arg("--version").output().is_err() {
        skipped("git is not installed");
        return;
    }
    run_row(row, Backend::Local);
    run_row(row, Backend::S3);
}

#[test]
fn a_state_written_since_the_plan_refuses_every_apply() {
    both(&Row {
        name: "state moved",
        git: false,
        before: nothing,
        change: |case| {
            case.on_stack("deploy", &[]).success();
        },
        extra: &[],
        cause: "moved from serial",
    });
}

#[test]
fn a_component_folder_changed_since_the_plan_refuses_every_apply() {
    both(&Row {
        name: "folder changed",
        git: false,
        before: nothing,
        change: |case| {
            case.edit(
                "components/net/deploy.sh",
                "#!/bin/sh\necho unreviewed >> ../../runs.log\n",
            )
        },
        extra: &[],
        cause: "the folder of `net` changed",
    });
}

#[test]
fn a_parameters_file_changed_since_the_plan_refuses_every_apply() {
    both(&Row {
        name: "params file changed",
        git: false,
        before: nothing,
        change: |case| {
            case.edit(
                "params.yaml",
                "parameters:\n  - {name: net.zone, value: b}\n",
            )
        },
        extra: &[],
        cause: "the file `params.yaml` changed",
    });
}

#[test]
fn a_watched_shared_lib_changed_since_the_plan_refuses_every_apply() {
    both(&Row {
        name: "watched lib changed",
        git: false,
        before: nothing,
        change: |case| case.edit("lib/common.sh", "LIB=unreviewed\n"),
        extra: &[],
        cause: "the file `lib/common.sh` changed",
    });
}

#[test]
fn a_terraform_module_outside_the_folder_changed_since_the_plan_refuses_every_apply() {
    both(&Row {
        name: "terraform module changed",
        git: false,
        before: nothing,
        change: |case| {
            case.edit(
                "modules/shared/main.tf",
                "variable \"cidr\" {}\n# unreviewed\n",
            )
        },
        extra: &[],
        cause: "the folder `modules/shared/` changed",
    });
}

#[test]
fn a_hook_script_outside_the_folder_changed_since_the_plan_refuses_every_apply() {
    both(&Row {
        name: "hook changed",
        git: false,
        before: nothing,
        change: |case| case.edit("bin/notify.sh", "#!/bin/sh\necho unreviewed\n"),
        extra: &[],
        cause: "the file `bin/notify.sh` changed",
    });
}

#[test]
fn a_commit_pushed_since_the_plan_refuses_every_apply() {
    both(&Row {
        name: "another commit",
        git: true,
        before: nothing,
        change: |case| {
            case.edit("README.md", "pushed with [skip ci]\n");
            case.git(&["commit", "-q", "-am", "[skip ci] unreviewed"]);
        },
        extra: &[],
        cause: "it was made at commit `",
    });
}

#[test]
fn a_denying_policy_refuses_every_apply() {
    both(&Row {
        name: "denying policy",
        git: false,
        before: nothing,
        change: nothing,
        extra: &["--policy", "deny.yaml"],
        cause: "frozen-net",
    });
}

#[test]
fn another_changes_apply_lock_refuses_every_apply() {
    both(&Row {
        name: "apply lock held",
        git: false,
        before: |case| {
            case.on_stack("plan", &["--change", "9"]).success();
            case.on_stack("deploy", &["--change", "9"]).success();
        },
        change: nothing,
        extra: &[],
        cause: "change `9` holds the apply lock since",
    });
}

/// `hub ci` with a GitHub `issue_comment` event from `fixture`, the
/// commit under review `sha` (`HUB_CI_SHA`), on the demo's state at
/// `state`.
fn hub_ci(dir: &Path, state: &str, env: &[(&str, String)], fixture: &str, sha: &str) -> Output {
    let payload = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ci/github")
        .join(fixture);
    let mut command = pinned_command(
        dir,
        &[
            "ci",
            "hub.yaml",
            "params.yaml",
            "-s",
            state,
            "--comment",
            "comment.md",
        ],
    );
    for name in [
        "GITLAB_CI",
        "CI_PIPELINE_SOURCE",
        "CI_COMMIT_SHA",
        "HUB_CI_COMMAND",
    ] {
        command.env_remove(name);
    }
    command
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "issue_comment")
        .env("GITHUB_EVENT_PATH", payload)
        // The workflow says the pull request is not a fork's.
        .env("HUB_CI_FORK", "false")
        .env("HUB_CI_SHA", sha);
    Output::of(command.output().expect("run hub"), dir)
}

/// A member's `hub apply` after a push nobody planned (`[skip ci]`):
/// `hub ci` applies only a plan made at the commit under review, the
/// event's head commit.
#[test]
fn hub_ci_applies_only_a_plan_of_the_commit_under_review() {
    for backend in [Backend::Local, Backend::S3] {
        let (state, env) = match backend {
            Backend::Local => ("demo.state".to_string(), Vec::new()),
            Backend::S3 => {
                let Some(server) = crate::remote::server::server() else {
                    skipped("no S3 test server");
                    return;
                };
                let state = format!("s3://{}/demo.state", server.bucket("reviewed-ci"));
                (state, crate::remote::server::Store::env(server))
            }
        };
        let (_tmp, dir) = crate::common::demo_copy();
        let mut deploy = pinned_command(&dir, &["deploy", "hub.yaml", "params.yaml", "-s", &state]);
        deploy.envs(env.iter().map(|(k, v)| (*k, v.as_str())));
        Output::of(deploy.output().expect("run hub"), &dir).success();
        let reviewed = "1111111111111111111111111111111111111111";
        let pushed = "2222222222222222222222222222222222222222";
        let planned = hub_ci(
            &dir,
            &state,
            &env,
            "issue_comment.plan.member.json",
            reviewed,
        );
        assert_eq!(planned.status, 0, "{backend:?}: plan: {}", planned.stderr);
        let log = dir.join("demo.state.logs/app.log");
        let ran_before = std::fs::read_to_string(&log).unwrap_or_default();
        let out = hub_ci(
            &dir,
            &state,
            &env,
            "issue_comment.apply.member.json",
            pushed,
        );
        assert_ne!(out.status, 0, "{backend:?}: the apply went ahead");
        // What the bot says and prints (the comment's own escaping aside).
        let said =
            std::fs::read_to_string(dir.join("comment.md")).unwrap_or_default() + &out.stdout;
        for cause in ["it was made at commit", reviewed, pushed] {
            assert!(
                said.contains(cause),
                "{backend:?}: the refusal does not say `{cause}`:\n{said}\n{}",
                out.stderr
            );
        }
        assert_eq!(
            std::fs::read_to_string(&log).unwrap_or_default(),
            ran_before,
            "{backend:?}: the component ran"
        );
    }
}

/// `hub run finish` after another writer (a tool that ignores runs) wrote
/// the component's entry since the plan: the job's record must not
/// replace the newer entry.
#[test]
fn run_finish_keeps_an_entry_written_after_the_plan() {
    const LATER: &str = "2026-01-01T01:00:00Z";
    for backend in [Backend::Local, Backend::S3] {
        let Some(case) = Case::new(backend, false) else {
            skipped("no S3 test server");
            return;
        };
        case.on_stack("deploy", &[]).success();
        case.on_stack("plan", &["--out", "plan.json"]).success();
        case.hub(&["deploy", "--plan", "plan.json", "-c", "net", "--job"])
            .success();
        case.hub(&["state", "pull", &case.state, "other.state"])
            .success();
        let path = case.root().join("other.state");
        let mut documents = crate::common::read_documents(&path);
        let serial = documents[0]["serial"].as_u64().expect("a serial");
        documents[0]["serial"] = yaml_serde::Value::from(serial + 1);
        let net = &mut documents[0]["components"]["net"];
        net["timestamp"] = yaml_serde::Value::from(LATER);
        net["message"] = yaml_serde::Value::from("written by another run");
        let text: String = documents
            .iter()
            .map(|d| format!("---\n{}", yaml_serde::to_string(d).expect("yaml")))
            .collect();
        std::fs::write(&path, text).expect("write");
        let pushed = case.hub(&["state", "push", "other.state", &case.state, "--force"]);
        assert_eq!(pushed.status, 0, "{backend:?}: push: {}", pushed.stderr);
        let out = case.hub(&["run", "finish", "--plan", "plan.json"]);
        assert_ne!(out.status, 0, "{backend:?}: finish said nothing");
        let said = format!("the state's entry of `net` was written at {LATER}, after the plan");
        assert!(
            out.stderr.contains(&said),
            "{backend:?}: finish does not say `{said}`:\n{}",
            out.stderr
        );
        case.hub(&["state", "pull", &case.state, "after.state"])
            .success();
        let after = crate::common::read_documents(&case.root().join("after.state"));
        let net = &after[0]["components"]["net"];
        assert_eq!(
            (net["timestamp"].as_str(), net["message"].as_str()),
            (Some(LATER), Some("written by another run")),
            "{backend:?}: the newer entry was overwritten"
        );
    }
}
