//! Who may plan, and GitLab relays a merge request's own files could
//! forge: an outsider's `hub plan` comment, an outsider's pull request, a
//! fork's pull request; a GitLab pipeline whose variables say "hub apply"
//! by a maintainer without the relay's signature, with a forged one, with
//! one replayed for another command or merge request; `merged` without a
//! signed merged state. Each row runs `hub ci` on the real binary against
//! a local state and a state in the S3 test server, and checks that
//! nothing was written there (no plan recorded, no lock taken or
//! released), that the component did not run (its deploy writes
//! `ran.marker`), and that the relay's key is in nothing hub printed or
//! wrote.

use super::super::everything_written;
use crate::ci::{
    fixture, github, gitlab_unsigned, last_line, relay_signature, relay_signed, CI_VARIABLES,
    RELAY_KEY, RELAY_TIME,
};
use crate::common::{pinned_command, Output, Test};
use crate::remote::server::{server, Store};

/// The stack of a checkout: one component, `app`, whose deploy writes
/// `ran.marker` beside the stack.
fn checkout() -> Test {
    Test::new()
        .file(
            "hub.yaml",
            "version: 1\nkind: stack\nmeta: {name: access}\ncomponents:\n  - {name: app, source: {dir: app}}\nparameters:\n  - {name: app.message, value: hello}\n",
        )
        .file(
            "app/hub-component.yaml",
            "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - {name: app.message, env: MESSAGE}\n",
        )
        .script("app/deploy.sh", "#!/bin/sh\necho \"$MESSAGE\" >> ../ran.marker\n")
        .script("app/undeploy.sh", "#!/bin/sh\n")
}

/// Where the state is, and the variables that reach it.
struct Place {
    state: String,
    env: Vec<(&'static str, String)>,
    /// The bucket of an S3 state: its PUTs are counted.
    bucket: Option<String>,
}

impl Place {
    fn local() -> Place {
        Place {
            state: "hub.state".into(),
            env: Vec::new(),
            bucket: None,
        }
    }

    /// A new bucket of the S3 test server; `None` without the server.
    fn s3() -> Option<Place> {
        let server = server()?;
        let bucket = server.bucket("access");
        Some(Place {
            state: format!("s3://{bucket}/hub.state"),
            env: Store::env(server),
            bucket: Some(bucket),
        })
    }

    /// Both places the rows run against (the S3 one when its server runs).
    fn all() -> Vec<Place> {
        std::iter::once(Place::local()).chain(Place::s3()).collect()
    }

    /// hub with `args`, then `-s STATE`, in the checkout.
    fn hub(&self, test: &Test, args: &[&str], env: &[(String, String)]) -> Output {
        let mut all = args.to_vec();
        all.extend(["-s", self.state.as_str()]);
        let mut command = pinned_command(test.root(), &all);
        for name in CI_VARIABLES {
            command.env_remove(name);
        }
        command
            .envs(self.env.iter().map(|(k, v)| (k, v.as_str())))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env_remove("AWS_PROFILE");
        Output::of(command.output().expect("run hub"), test.root())
    }

    /// `hub ci hub.yaml -s STATE --comment comment.md` plus `extra`.
    fn ci(&self, test: &Test, env: &[(String, String)], extra: &[&str]) -> Output {
        let mut args = vec!["ci", "hub.yaml", "--comment", "comment.md"];
        args.extend(extra);
        self.hub(test, &args, env)
    }

    /// Change 17 planned at the merge request's commit, as a relayed
    /// `hub plan` would have recorded it.
    fn planned(&self, test: &Test) {
        let args = ["plan", "hub.yaml", "--change", "17", "--sha", SHA];
        self.hub(test, &args, &[]).success();
    }

    /// Change 17 applied: it holds the stack's apply lock.
    fn applied(&self, test: &Test) {
        self.planned(test);
        self.hub(test, &["deploy", "--change", "17"], &[]).success();
        std::fs::remove_file(test.root().join("ran.marker")).expect("the apply ran");
    }

    /// What the state's place holds: every file of the checkout but the
    /// comment, and the PUTs to the bucket of an S3 state.
    fn written(&self, test: &Test) -> (Vec<(std::path::PathBuf, Vec<u8>)>, usize) {
        let files = super::super::tree(test.root())
            .into_iter()
            .filter(|(path, _)| !path.ends_with("comment.md"))
            .map(|(path, seen)| (path, seen.bytes))
            .collect();
        let puts = match (&self.bucket, server()) {
            (Some(bucket), Some(server)) => server.puts(bucket),
            _ => 0,
        };
        (files, puts)
    }

    fn name(&self) -> &'static str {
        match self.bucket {
            Some(_) => "s3",
            None => "local",
        }
    }
}

/// The commit of merge request 17 in the GitLab fixtures.
const SHA: &str = "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b";

/// Runs `attack` (its variables and flags) on `place` after `setup`, and
/// checks that hub refused it (exit 3, the status line starting with
/// `status`), that nothing was written to the state's place and the
/// component did not run, and that the relay's key was written nowhere.
fn refused(
    place: &Place,
    test: &Test,
    row: &str,
    env: &[(String, String)],
    extra: &[&str],
    status: &str,
) -> Output {
    let before = place.written(test);
    let out = place.ci(test, env, extra);
    let row = format!("{row} ({})", place.name());
    assert_eq!(
        out.status, 3,
        "{row}: refused\nstdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    assert!(
        last_line(&out).starts_with(status),
        "{row}: {}",
        last_line(&out)
    );
    assert!(
        !test.root().join("ran.marker").exists(),
        "{row}: the component ran"
    );
    assert!(
        place.written(test) == before,
        "{row}: the state's place changed"
    );
    let comment = std::fs::read_to_string(test.root().join("comment.md")).unwrap_or_default();
    assert!(
        comment.contains(": refused\n"),
        "{row}: the refusal is answered in the comment: {comment}"
    );
    let all = everything_written(test.root(), &[&out.stdout, &out.stderr]);
    assert!(
        !all.contains(RELAY_KEY),
        "{row}: the relay's key was written"
    );
    out
}

/// A recorded GitHub payload, edited by `edit`, written to `event.json`.
fn payload(test: &Test, name: &str, edit: impl Fn(&mut serde_json::Value)) -> std::path::PathBuf {
    let text = std::fs::read_to_string(fixture(&format!("github/{name}.json"))).expect("fixture");
    let mut value: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    edit(&mut value);
    let path = test.root().join("event.json");
    std::fs::write(&path, value.to_string()).expect("payload");
    path
}

/// An opened pull request of the whole stack (no base commit: no git
/// needed), edited by `edit`.
fn opened(test: &Test, edit: impl Fn(&mut serde_json::Value)) -> Vec<(String, String)> {
    let path = payload(test, "pull_request.opened", |value| {
        value["pull_request"]["base"]
            .as_object_mut()
            .expect("base")
            .remove("sha");
        edit(value);
    });
    github("pull_request", &path)
}

/// `who` becomes the payload's outsider: login `mallory`, association
/// `NONE`.
fn outsider(who: &mut serde_json::Value) {
    who["user"]["login"] = "mallory".into();
    who["author_association"] = "NONE".into();
}

#[test]
fn an_outsiders_plan_comment_plans_nothing() {
    for place in Place::all() {
        let test = checkout();
        let path = payload(&test, "issue_comment.plan.member", |value| {
            outsider(&mut value["comment"]);
            value["comment"]["body"] = "hub plan".into();
            value["sender"]["login"] = "mallory".into();
        });
        let out = refused(
            &place,
            &test,
            "an outsider's plan comment",
            &github("issue_comment", &path),
            &[],
            "hub ci: plan of pull request #42 refused: `mallory` is NONE; only OWNER, MEMBER, COLLABORATOR (`--allow-association`) or the users of `--allow-user` may plan",
        );
        assert!(!out.stdout.contains("### Plan"), "{}", out.stdout);
    }
}

#[test]
fn an_outsiders_pull_request_is_not_autoplanned() {
    for place in Place::all() {
        let test = checkout();
        let event = opened(&test, |value| {
            outsider(&mut value["pull_request"]);
            value["sender"]["login"] = "mallory".into();
        });
        refused(
            &place,
            &test,
            "an outsider's pull request",
            &event,
            &[],
            "hub ci: autoplan of pull request #42 refused: `mallory` is NONE;",
        );
    }
}

#[test]
fn a_forks_pull_request_is_not_planned() {
    for place in Place::all() {
        let test = checkout();
        // A member's pull request, from their fork.
        let event = opened(&test, |value| {
            value["pull_request"]["head"]["repo"] = serde_json::json!({
                "id": 99_000_001, "full_name": "alice/infra", "fork": true
            });
        });
        refused(
            &place,
            &test,
            "a fork's pull request",
            &event,
            &[],
            "hub ci: autoplan of pull request #42 refused: pull request #42 comes from a fork: hub plans a fork's code only with `--plan-forks`",
        );
    }
}

/// A job's variables.
type Env = Vec<(String, String)>;

/// A GitLab job's variables: the fixture `name`, with `set` replacing or
/// adding variables.
fn gitlab_with(name: &str, set: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut env = gitlab_unsigned(name);
    for (name, value) in set {
        env.retain(|(n, _)| n != name);
        env.push((name.to_string(), value.to_string()));
    }
    env
}

const MAINTAINERS: [&str; 2] = ["--allow-association", "owner,maintainer"];

#[test]
fn plain_variables_do_not_apply() {
    let forged = [
        ("HUB_CI_COMMAND", "hub apply"),
        ("HUB_CI_AUTHOR", "carol"),
        ("HUB_CI_ASSOCIATION", "MAINTAINER"),
    ];
    for place in Place::all() {
        // Set by the merge request's own `.gitlab-ci.yml`.
        let test = checkout();
        place.planned(&test);
        let env = gitlab_with("merge_request_event", &forged);
        refused(
            &place,
            &test,
            "HUB_CI_COMMAND in a merge-request pipeline",
            &env,
            &MAINTAINERS,
            "hub ci: relay of merge request #17 refused: `HUB_CI_COMMAND` is set in a `merge_request_event` pipeline",
        );
        // Set when starting a pipeline by hand (or `CI_PIPELINE_SOURCE`
        // set too), unsigned, in a job that holds the key.
        let test = checkout();
        place.planned(&test);
        let mut env = gitlab_with("trigger.apply", &forged);
        env.push(("HUB_CI_RELAY_KEY".into(), RELAY_KEY.into()));
        refused(
            &place,
            &test,
            "HUB_CI_COMMAND unsigned",
            &env,
            &MAINTAINERS,
            "hub ci: relay of merge request #17 refused: `HUB_CI_RELAY_SIGNATURE` is not set",
        );
    }
}

#[test]
fn a_forged_signature_does_not_apply() {
    for place in Place::all() {
        let test = checkout();
        place.planned(&test);
        let mut env = gitlab_unsigned("trigger.apply");
        env.push(("HUB_CI_RELAY_TIME".into(), RELAY_TIME.into()));
        let forged = relay_signature(&env, "a-key-the-attacker-chose");
        env.push(("HUB_CI_RELAY_SIGNATURE".into(), forged));
        env.push(("HUB_CI_RELAY_KEY".into(), RELAY_KEY.into()));
        refused(
            &place,
            &test,
            "a forged signature",
            &env,
            &MAINTAINERS,
            "hub ci: relay of merge request #17 refused: `HUB_CI_RELAY_SIGNATURE` does not match",
        );
    }
}

/// `env` with the variable `name` set to `value` after it was signed.
fn replayed(env: &[(String, String)], name: &str, value: &str) -> Vec<(String, String)> {
    env.iter()
        .map(|(n, v)| match n == name {
            true => (n.clone(), value.to_string()),
            false => (n.clone(), v.clone()),
        })
        .collect()
}

#[test]
fn a_signature_replayed_for_another_command_or_merge_request_does_not_apply() {
    for place in Place::all() {
        // A maintainer's signed `hub plan`, replayed as `hub apply`.
        let test = checkout();
        place.planned(&test);
        let plan = relay_signed(gitlab_with(
            "trigger.apply",
            &[("HUB_CI_COMMAND", "hub plan")],
        ));
        refused(
            &place,
            &test,
            "a plan's signature on an apply",
            &replayed(&plan, "HUB_CI_COMMAND", "hub apply"),
            &MAINTAINERS,
            "hub ci: relay of merge request #17 refused: `HUB_CI_RELAY_SIGNATURE` does not match",
        );
        // A signed apply of merge request 18, replayed on 17.
        let test = checkout();
        place.planned(&test);
        let other = relay_signed(gitlab_with(
            "trigger.apply",
            &[("CI_MERGE_REQUEST_IID", "18")],
        ));
        refused(
            &place,
            &test,
            "another merge request's signature",
            &replayed(&other, "CI_MERGE_REQUEST_IID", "17"),
            &MAINTAINERS,
            "hub ci: relay of merge request #17 refused: `HUB_CI_RELAY_SIGNATURE` does not match",
        );
    }
}

#[test]
fn merged_without_a_signed_merged_state_keeps_the_lock() {
    let rows: [(&str, Env, &str); 3] = [
        (
            "merged, signed, while the merge request is open",
            relay_signed(gitlab_with(
                "trigger.merged",
                &[("HUB_CI_MR_STATE", "opened")],
            )),
            "hub ci: relay of merge request #17 refused: `HUB_CI_EVENT` is `merged` but the signed state of the merge request (`HUB_CI_MR_STATE`) is `opened`",
        ),
        (
            "merged, unsigned",
            gitlab_with("trigger.merged", &[("HUB_CI_RELAY_KEY", RELAY_KEY)]),
            "hub ci: relay of merge request #17 refused: `HUB_CI_RELAY_SIGNATURE` is not set",
        ),
        (
            "merged in a merge-request pipeline",
            gitlab_with("merge_request_event", &[("HUB_CI_EVENT", "merged")]),
            "hub ci: relay of merge request #17 refused: `HUB_CI_EVENT` is set in a `merge_request_event` pipeline",
        ),
    ];
    for place in Place::all() {
        for (row, env, status) in &rows {
            let test = checkout();
            place.applied(&test);
            refused(&place, &test, row, env, &[], status);
            assert_lock_held(&place, &test, row);
        }
        // The relay's signed merge releases it.
        let test = checkout();
        place.applied(&test);
        let merged = place.ci(&test, &relay_signed(gitlab_unsigned("trigger.merged")), &[]);
        merged.success();
        assert!(
            last_line(&merged).ends_with("apply lock: free"),
            "{}",
            merged.stdout
        );
    }
}

/// Change 17 still holds the apply lock: another change's apply is refused.
fn assert_lock_held(place: &Place, test: &Test, row: &str) {
    let out = place.hub(test, &["change", "show", "17"], &[]);
    assert!(
        out.stdout.contains("apply lock: held by change 17"),
        "{row} ({}): {}{}",
        place.name(),
        out.stdout,
        out.stderr
    );
}
