//! `hub ci` on the recorded events of `fixtures/ci/` (GitHub webhook
//! payloads, GitLab pipeline variables): the operation each asks for, the
//! comment (markdown), the one-line status and the exit status.

use crate::common::{demo_copy, pinned_command, read_documents, skipped, Output};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Variables of the CI this test may itself run in, which would otherwise
/// be read as the event.
pub(crate) const CI_VARIABLES: [&str; 30] = [
    "CI_MERGE_REQUEST_EVENT_TYPE",
    "HUB_CI_MR_SHA",
    "HUB_CI_MR_AUTHOR",
    "HUB_CI_MERGEABLE",
    "HUB_CI_BASE_SHA",
    "HUB_CI_MERGE_SHA",
    "GITHUB_EVENT_NAME",
    "GITHUB_EVENT_PATH",
    "GITHUB_ACTIONS",
    "GITLAB_CI",
    "CI_PIPELINE_SOURCE",
    "CI_MERGE_REQUEST_IID",
    "CI_COMMIT_SHA",
    "CI_MERGE_REQUEST_DIFF_BASE_SHA",
    "GITLAB_USER_LOGIN",
    "HUB_CI_COMMAND",
    "HUB_CI_EVENT",
    "HUB_CI_ASSOCIATION",
    "HUB_CI_SHA",
    "HUB_CI_AUTHOR",
    "HUB_GIT_BASE",
    "HUB_CI_FORK",
    "HUB_CI_MR_STATE",
    "HUB_CI_RELAY_TIME",
    "HUB_CI_RELAY_KEY",
    "HUB_CI_RELAY_SIGNATURE",
    "CI_PROJECT_ID",
    "CI_MERGE_REQUEST_PROJECT_ID",
    "CI_MERGE_REQUEST_SOURCE_PROJECT_ID",
    "CI_COMMIT_REF_NAME",
];

/// The key the relay of these tests signs with (`HUB_CI_RELAY_KEY`).
pub(crate) const RELAY_KEY: &str = "relay-key-of-the-tests-Qx72";

/// The time the relay of these tests signs at: the pinned `HUB_NOW`
/// (2026-01-01T00:00:00Z), in seconds since 1970.
pub(crate) const RELAY_TIME: &str = "1767225600";

/// The variables the relay signs, in the order of the guide's canonical
/// form (written out here, not taken from hub, so that the test checks
/// the documented form).
const RELAY_FIELDS: [&str; 11] = [
    "CI_PROJECT_ID",
    "CI_MERGE_REQUEST_IID",
    "HUB_CI_SHA",
    "HUB_CI_EVENT",
    "HUB_CI_COMMAND",
    "HUB_CI_AUTHOR",
    "HUB_CI_ASSOCIATION",
    "HUB_CI_MR_STATE",
    "HUB_CI_FORK",
    "HUB_CI_RELAY_TIME",
    "CI_PIPELINE_SOURCE",
];

/// The lowercase hex HMAC-SHA256 with `key` of the relay's message for
/// the variables `env`: `hub-ci-relay-v1`, then `NAME=VALUE` per field,
/// each line ended by a line feed.
pub(crate) fn relay_signature(env: &[(String, String)], key: &str) -> String {
    use hmac::{Hmac, Mac};
    let value = |name: &str| {
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .unwrap_or_default()
    };
    let mut message = String::from("hub-ci-relay-v1\n");
    for name in RELAY_FIELDS {
        message.push_str(&format!("{name}={}\n", value(name)));
    }
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(key.as_bytes()).expect("any key");
    mac.update(message.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// `env` as the relay passes it: with its time, signed with
/// [`RELAY_KEY`], which the job holds.
pub(crate) fn relay_signed(mut env: Vec<(String, String)>) -> Vec<(String, String)> {
    env.push(("HUB_CI_RELAY_TIME".into(), RELAY_TIME.into()));
    let signature = relay_signature(&env, RELAY_KEY);
    env.push(("HUB_CI_RELAY_KEY".into(), RELAY_KEY.into()));
    env.push(("HUB_CI_RELAY_SIGNATURE".into(), signature));
    env
}

pub(crate) fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/ci")
        .join(path)
}

/// `hub ci hub.yaml params.yaml -s demo.state` plus `extra` in `dir`,
/// with the event's variables `env` and no other CI's.
pub(crate) fn hub_ci(dir: &Path, env: &[(String, String)], extra: &[&str]) -> Output {
    let mut args = vec!["ci", "hub.yaml", "params.yaml", "-s", "demo.state"];
    args.extend(extra);
    let mut command = pinned_command(dir, &args);
    for name in CI_VARIABLES {
        command.env_remove(name);
    }
    command.envs(env.iter().map(|(k, v)| (k, v)));
    Output::of(command.output().expect("run hub"), dir)
}

/// A GitHub Actions job for the event `name` with the payload at `payload`;
/// for a comment, the workflow says the pull request is not a fork
/// (`HUB_CI_FORK=false`), as the guide's workflow does.
pub(crate) fn github(name: &str, payload: &Path) -> Vec<(String, String)> {
    let mut env = vec![
        ("GITHUB_ACTIONS".into(), "true".into()),
        ("GITHUB_EVENT_NAME".into(), name.into()),
        ("GITHUB_EVENT_PATH".into(), payload.display().to_string()),
    ];
    if name == "issue_comment" {
        env.push(("HUB_CI_FORK".into(), "false".into()));
    }
    env
}

/// The variables of a GitLab job, from a fixture's `NAME=value` lines;
/// a relay's (`trigger.*`) signed by the relay of these tests.
pub(crate) fn gitlab(name: &str) -> Vec<(String, String)> {
    let env = gitlab_unsigned(name);
    match name.starts_with("trigger.") {
        true => relay_signed(env),
        false => env,
    }
}

/// The variables of a fixture as they are, unsigned.
pub(crate) fn gitlab_unsigned(name: &str) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(fixture(&format!("gitlab/{name}.env"))).expect("fixture");
    text.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (name, value) = line.split_once('=').expect("NAME=value");
            (name.to_string(), value.to_string())
        })
        .collect()
}

/// The demo deployed: (its folder's owner, its folder).
pub(crate) fn deployed_demo() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = demo_copy();
    let args = ["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"];
    Output::of(pinned_command(&dir, &args).output().expect("run hub"), &dir).success();
    (tmp, dir)
}

/// `text` with the state's serial replaced by `N`.
fn without_serial(dir: &Path, text: &str) -> String {
    let state = read_documents(&dir.join("demo.state")).remove(0);
    let serial = state["serial"].as_u64().expect("a serial");
    text.replace(&format!("(serial {serial})"), "(serial N)")
}

/// The status line: the last line of stdout (components print theirs
/// before it, as in a deploy).
pub(crate) fn last_line(out: &Output) -> &str {
    out.stdout.lines().last().unwrap_or_default()
}

/// The comment written to `comment.md`.
pub(crate) fn comment(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("comment.md")).expect("a comment")
}

pub(crate) fn state_serial(dir: &Path) -> Option<u64> {
    dir.join("demo.state")
        .exists()
        .then(|| read_documents(&dir.join("demo.state")).remove(0)["serial"].as_u64())
        .flatten()
}

#[test]
fn a_members_plan_comment_plans_the_components_it_names() {
    let (_tmp, dir) = deployed_demo();
    let event = github(
        "issue_comment",
        &fixture("github/issue_comment.plan.member.json"),
    );
    let out = hub_ci(&dir, &event, &["--comment", "comment.md"]);
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: plan of pull request #42 succeeded: 0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail"
    );
    insta::assert_snapshot!(without_serial(&dir, &comment(&dir)), @r#"
    ## hub plan of pull request #42: succeeded

    Event: `issue_comment.created` (GitHub) · by `alice` (MEMBER) · `-c app`

    ### Plan: deploy stack `demo`

    **0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail**

    State: `demo.state` (serial N) · jobs: 1

    | Component | Action | Why |
    |---|---|---|
    | `app` | **update** | runs again: no --changed |
    "#);
}

/// `hub ci` for a recorded GitHub comment.
pub(crate) fn comment_event(dir: &Path, name: &str, extra: &[&str]) -> Output {
    let event = github(
        "issue_comment",
        &fixture(&format!("github/issue_comment.{name}.json")),
    );
    hub_ci(dir, &event, extra)
}

#[test]
fn a_members_apply_comment_applies_the_latest_plan_and_an_outsiders_is_refused() {
    let (_tmp, dir) = deployed_demo();
    let before = state_serial(&dir);
    let refused = comment_event(&dir, "apply.outsider", &["--comment", "comment.md"]);
    assert_eq!(refused.status, 3, "{}", refused.stderr);
    assert_eq!(
        last_line(&refused),
        "hub ci: apply of pull request #42 refused: `mallory` is NONE; only OWNER, MEMBER, COLLABORATOR (`--allow-association`) or the users of `--allow-user` may apply or unlock"
    );
    assert_eq!(state_serial(&dir), before, "nothing ran for an outsider");
    insta::assert_snapshot!(comment(&dir), @r"
    ## hub apply of pull request #42: refused

    Event: `issue_comment.created` (GitHub) · by `mallory` (NONE)

    `mallory` is NONE; only OWNER, MEMBER, COLLABORATOR (`--allow-association`) or the users of `--allow-user` may apply or unlock
    ");

    // A user the workflow names may apply whatever GitHub says of them;
    // but an apply applies a plan, and the change has none yet.
    let unplanned = comment_event(
        &dir,
        "apply.outsider",
        &["--allow-user", "mallory", "--comment", "comment.md"],
    );
    assert_eq!(unplanned.status, 1, "{}", unplanned.stderr);
    assert_eq!(
        last_line(&unplanned),
        "hub ci: apply of pull request #42 failed: change `42` has no plan to apply: `hub deploy --change` applies the latest plan recorded for it"
    );
    assert_eq!(state_serial(&dir), before, "nothing ran without a plan");

    comment_event(&dir, "plan.member", &["--comment", "comment.md"]).success();
    let applied = comment_event(&dir, "apply.member", &["--comment", "comment.md"]);
    applied.success();
    assert_eq!(
        last_line(&applied),
        "hub ci: apply of pull request #42 succeeded: 1 deployed"
    );
    assert!(state_serial(&dir) > before, "the state was written");
    // The run's own output goes to stderr, as a deploy's does.
    assert!(
        applied.stderr.contains("deploy summary:"),
        "{}",
        applied.stderr
    );
    insta::assert_snapshot!(comment(&dir), @r"
    ## hub apply of pull request #42: succeeded

    Event: `issue_comment.created` (GitHub) · by `alice` (MEMBER)

    Apply lock: held by change 42 since 2026-01-01T00:00:00Z (applied: it applied, and its work is not merged yet)

    **1 deployed**

    | Component | Result | Why |
    |---|---|---|
    | `app` | deployed |  |
    ");

    // The owner releases the lock the applied change holds.
    let unlocked = comment_event(&dir, "unlock.owner", &["--comment", "comment.md"]);
    unlocked.success();
    assert_eq!(
        last_line(&unlocked),
        "hub ci: unlock of pull request #42: change 42 is unlocked; apply lock: free"
    );
}

#[test]
fn a_failed_apply_shows_the_masked_tail_of_the_failed_components_log() {
    let (_tmp, dir) = deployed_demo();
    let script = dir.join("components/app/deploy.sh");
    let mut text = std::fs::read_to_string(&script).expect("script");
    text.push_str("echo 'replica 3 did not start' >&2\nexit 3\n");
    std::fs::write(&script, text).expect("script");
    comment_event(&dir, "plan.member", &[]).success();
    let out = comment_event(&dir, "apply.member", &["--comment", "comment.md"]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(
        last_line(&out),
        "hub ci: apply of pull request #42 failed: `app` failed"
    );
    let text = comment(&dir);
    let password = "pw-demo-small-1234";
    assert!(!text.contains(password), "{text}");
    // The log keeps every run: its last lines are this run's.
    let tail = text
        .split("<details><summary>Log of <code>app</code>")
        .nth(1)
        .expect("the log of app");
    assert!(tail.contains("database password: (masked)\n"), "{tail}");
    assert!(tail.contains("replica 3 did not start\n"), "{tail}");
    let head = text.split("<details>").next().expect("head");
    let head = head.replace(&dir.display().to_string(), "DIR");
    insta::assert_snapshot!(head, @r"
    ## hub apply of pull request #42: failed

    Event: `issue_comment.created` (GitHub) · by `alice` (MEMBER)

    Apply lock: held by change 42 since 2026-01-01T00:00:00Z (failed: its apply failed, and only it may apply until it succeeds)

    **1 error**

    | Component | Result | Why |
    |---|---|---|
    | `app` | **error** | `DIR/components/app/deploy.sh` exited with code 3 |

    The apply failed: component `app` failed: `DIR/components/app/deploy.sh` exited with code 3
    ");
}

#[test]
fn comments_that_are_not_commands_do_nothing_and_bad_commands_are_answered() {
    let (_tmp, dir) = deployed_demo();
    let out = comment_event(&dir, "chat.member", &["--comment", "comment.md"]);
    out.success();
    assert_eq!(
        out.stdout,
        "hub ci: nothing to do: the comment is not a `hub` command\n"
    );
    assert!(!dir.join("comment.md").exists(), "no comment to post");

    let member = std::fs::read_to_string(fixture("github/issue_comment.apply.member.json"))
        .expect("fixture");
    let misspelt = member.replace("\"hub apply\\r\\n\"", "\"hub aply -c app\"");
    assert_ne!(misspelt, member);
    let payload = dir.join("event.json");
    std::fs::write(&payload, misspelt).expect("payload");
    let out = hub_ci(&dir, &github("issue_comment", &payload), &[]);
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        "## hub command of pull request #42: refused\n\n\
         Event: `issue_comment.created` (GitHub) · by `alice` (MEMBER)\n\n\
         the comment's `hub` line names no command hub knows; hub understands `hub plan [-c a,b]`, `hub apply` and `hub unlock`\n\
         hub ci: command of pull request #42 refused: the comment's `hub` line names no command hub knows; hub understands `hub plan [-c a,b]`, `hub apply` and `hub unlock`\n"
    );
}

#[test]
fn closed_pull_requests_are_recorded_as_closed_or_merged() {
    let (_tmp, dir) = deployed_demo();
    for (fixture_name, operation, said) in [
        (
            "pull_request.closed.unmerged",
            "closed",
            "change 42 is recorded as closed; apply lock: free",
        ),
        (
            "pull_request.closed.merged",
            "merged",
            "change 42 is recorded as merged (the plans of other open changes are stale); apply lock: free",
        ),
    ] {
        let event = github(
            "pull_request",
            &fixture(&format!("github/{fixture_name}.json")),
        );
        let out = hub_ci(&dir, &event, &["--comment", "comment.md"]);
        out.success();
        assert_eq!(
            last_line(&out),
            format!("hub ci: {operation} of pull request #42: {said}")
        );
        assert_eq!(
            comment(&dir),
            format!(
                "## hub {operation} of pull request #42: succeeded\n\n\
                 Event: `pull_request.closed` (GitHub) · commit `c2d9f6a0e4b1` · by `alice` (MEMBER)\n\n\
                 {said}\n"
            )
        );
    }
}

#[test]
fn no_ci_event_is_an_error_that_says_where_hub_ci_runs() {
    let (_tmp, dir) = demo_copy();
    let out = hub_ci(&dir, &[], &[]);
    assert_eq!(out.status, 1);
    assert_eq!(
        out.stderr,
        "error: no CI event: neither GITHUB_EVENT_NAME (GitHub Actions) nor CI_PIPELINE_SOURCE (GitLab CI) is set\n  \
         help: run `hub ci` in a GitHub Actions workflow on `pull_request` and `issue_comment`, or in a GitLab merge-request pipeline; the README shows both\n"
    );
    let broken = dir.join("event.json");
    std::fs::write(&broken, "{\n  \"action\": \"opened\",\n  \"number\": }\n").expect("write");
    let out = hub_ci(&dir, &github("pull_request", &broken), &[]);
    assert_eq!(out.status, 1);
    assert!(
        out.stderr
            .contains(&format!("  --> {}:3:13\n", broken.display())),
        "{}",
        out.stderr
    );
}

#[test]
fn gitlab_applies_need_an_allowed_role_and_merges_are_recorded() {
    let (_tmp, dir) = deployed_demo();
    let guest = hub_ci(&dir, &gitlab("trigger.apply.guest"), &[]);
    assert_eq!(guest.status, 3, "{}", guest.stderr);
    assert_eq!(
        last_line(&guest),
        "hub ci: apply of merge request #17 refused: `guest-user` has no association GitLab reports; only OWNER, MEMBER, COLLABORATOR (`--allow-association`) or the users of `--allow-user` may apply or unlock"
    );

    let maintainer = gitlab("trigger.apply");
    let by_default = hub_ci(&dir, &maintainer, &[]);
    assert_eq!(
        by_default.status, 3,
        "MAINTAINER is not allowed unless said"
    );
    // The same relay passes a plan comment first, signed for it; a plan is
    // for those who may apply, as the role the relay passes says.
    let mut plan = gitlab_unsigned("trigger.apply");
    for (name, value) in plan.iter_mut() {
        if name == "HUB_CI_COMMAND" {
            *value = "hub plan -c network".into();
        }
    }
    let plan = relay_signed(plan);
    let refused = hub_ci(&dir, &plan, &[]);
    assert_eq!(refused.status, 3, "{}", refused.stderr);
    let planned = hub_ci(&dir, &plan, &["--allow-association", "owner,maintainer"]);
    planned.success();
    assert_eq!(
        last_line(&planned),
        "hub ci: plan of merge request #17 succeeded: 0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail"
    );
    let out = hub_ci(
        &dir,
        &maintainer,
        &[
            "--allow-association",
            "owner,maintainer",
            "--comment",
            "comment.md",
        ],
    );
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: apply of merge request #17 succeeded: 1 deployed"
    );
    insta::assert_snapshot!(comment(&dir), @r"
    ## hub apply of merge request #17: succeeded

    Event: `trigger.comment` (GitLab) · commit `4f3c2b1a0e9d` · by `carol` (MAINTAINER)

    Apply lock: held by change 17 since 2026-01-01T00:00:00Z (applied: it applied, and its work is not merged yet)

    **1 deployed**

    | Component | Result | Why |
    |---|---|---|
    | `network` | deployed |  |
    ");

    let merged = hub_ci(&dir, &gitlab("trigger.merged"), &[]);
    merged.success();
    assert_eq!(
        last_line(&merged),
        "hub ci: merged of merge request #17: change 17 is recorded as merged (the plans of other open changes are stale); apply lock: free"
    );
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .current_dir(root)
        .args(["-c", "user.name=hub", "-c", "user.email=hub@example.com"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_string()
}

/// The deployed demo in a git repository: `main` (the base) and a branch
/// that raises `app.replicas` (the head); their commits.
fn demo_repository() -> Option<(tempfile::TempDir, PathBuf, String, String)> {
    if Command::new("git").arg("--version").output().is_err() {
        skipped("git is not installed");
        return None;
    }
    let (tmp, dir) = deployed_demo();
    std::fs::write(
        dir.join(".gitignore"),
        "demo.state*\n*.log\ncomment.md\nevent.json\napp.conf\n",
    )
    .expect("write");
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-q", "-m", "demo"]);
    let base = git(&dir, &["rev-parse", "HEAD"]);
    git(&dir, &["checkout", "-q", "-b", "scale-app"]);
    let params = std::fs::read_to_string(dir.join("params.yaml")).expect("params");
    std::fs::write(
        dir.join("params.yaml"),
        params.replace("value: 3", "value: 4"),
    )
    .expect("write");
    git(&dir, &["commit", "-q", "-a", "-m", "four replicas"]);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    Some((tmp, dir, base, head))
}

#[test]
fn opened_pushed_and_reopened_pull_requests_plan_what_changed_since_their_base() {
    let Some((_tmp, dir, base, head)) = demo_repository() else {
        return;
    };
    for action in ["opened", "synchronize", "reopened"] {
        // The recorded payload, at the commits of this repository.
        let recorded =
            std::fs::read_to_string(fixture(&format!("github/pull_request.{action}.json")))
                .expect("fixture");
        let payload = recorded
            .replace("9049f1265b7d61be4a8904a9a27120d2064dab3b", &base)
            .replace("6dcb09b5b57875f334f61aebed695e2e4193db5e", &head)
            .replace("c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7", &head);
        assert_ne!(payload, recorded);
        std::fs::write(dir.join("event.json"), payload).expect("payload");
        let out = hub_ci(
            &dir,
            &github("pull_request", &dir.join("event.json")),
            &["--comment", "comment.md"],
        );
        out.success();
        assert_eq!(
            last_line(&out),
            "hub ci: autoplan of pull request #42 succeeded: 0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail",
            "{action}"
        );
        let text = without_serial(&dir, &comment(&dir))
            .replace(&head[..12], "HEAD")
            .replace(&base[..12], "BASE");
        assert!(
            text.starts_with(&format!("## hub autoplan of pull request #42: succeeded\n\nEvent: `pull_request.{action}` (GitHub) · commit `HEAD` · by `alice` (MEMBER) · components changed since `BASE`\n")),
            "{text}"
        );
        if action == "opened" {
            let table = text.split("<details>").next().expect("head").to_string();
            insta::assert_snapshot!(table, @r"
            ## hub autoplan of pull request #42: succeeded

            Event: `pull_request.opened` (GitHub) · commit `HEAD` · by `alice` (MEMBER) · components changed since `BASE`

            ### Plan: deploy stack `demo`

            **0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail**

            State: `demo.state` (serial N) · selection: --affected → app (affected app (parameter `app.replicas` changed in `params.yaml`); nothing added) · jobs: 1

            | Component | Action | Why |
            |---|---|---|
            | `app` | **update** | parameters changed: app.replicas |
            ");
        }
    }
    // GitLab's merge-request pipeline, at the same commits.
    let mut env = gitlab("merge_request_event");
    for (name, value) in env.iter_mut() {
        match name.as_str() {
            "CI_COMMIT_SHA" => *value = head.clone(),
            "CI_MERGE_REQUEST_DIFF_BASE_SHA" => *value = base.clone(),
            _ => {}
        }
    }
    let out = hub_ci(&dir, &env, &["--comment", "comment.md"]);
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: autoplan of merge request #17 succeeded: 0 to create, 1 to update, 0 to replace, 0 to rerun, 0 to delete, 0 unchanged, 0 skipped, 0 would fail"
    );
}

/// The payload of a recorded comment, moved to pull request `number`.
fn on_pull_request(dir: &Path, name: &str, number: u32) -> PathBuf {
    let recorded = std::fs::read_to_string(fixture(&format!("github/issue_comment.{name}.json")))
        .expect("fixture");
    let moved = recorded
        .replace("\"number\": 42", &format!("\"number\": {number}"))
        .replace("/42", &format!("/{number}"));
    assert_ne!(moved, recorded);
    let path = dir.join(format!("event-{name}-{number}.json"));
    std::fs::write(&path, moved).expect("payload");
    path
}

#[test]
fn a_second_pull_request_applies_only_after_the_first_is_merged() {
    let (_tmp, dir) = deployed_demo();
    comment_event(&dir, "plan.member", &[]).success();
    comment_event(&dir, "apply.member", &[]).success();
    let plan_43 = github("issue_comment", &on_pull_request(&dir, "plan.member", 43));
    let apply_43 = github("issue_comment", &on_pull_request(&dir, "apply.member", 43));
    hub_ci(&dir, &plan_43, &[]).success();
    let refused = hub_ci(&dir, &apply_43, &["--comment", "comment.md"]);
    assert_eq!(refused.status, 1, "{}", refused.stderr);
    assert_eq!(
        last_line(&refused),
        "hub ci: apply of pull request #43 failed: change `43` cannot apply: change `42` holds the apply lock since 2026-01-01T00:00:00Z (it applied, and its work is not merged yet)"
    );
    assert!(
        comment(&dir)
            .contains("Apply lock: held by change 42 since 2026-01-01T00:00:00Z (applied: "),
        "{}",
        comment(&dir)
    );
    // Merging 42 releases the lock and makes 43's plan stale.
    let merged = github(
        "pull_request",
        &fixture("github/pull_request.closed.merged.json"),
    );
    hub_ci(&dir, &merged, &[]).success();
    let stale = hub_ci(&dir, &apply_43, &[]);
    assert_eq!(stale.status, 1, "{}", stale.stdout);
    assert!(
        last_line(&stale).starts_with(
            "hub ci: apply of pull request #43 failed: change `43` cannot apply: its latest plan (made at 2026-01-01T00:00:00Z) is stale: "
        ),
        "{}",
        stale.stdout
    );
    hub_ci(&dir, &plan_43, &[]).success();
    let applied = hub_ci(&dir, &apply_43, &[]);
    applied.success();
    assert_eq!(
        last_line(&applied),
        "hub ci: apply of pull request #43 succeeded: 1 deployed"
    );
}

/// A rule that denies the plan fails it: the comment shows the rule and
/// the change it saw, and the apply that follows is refused.
#[test]
fn a_plan_a_policy_denies_fails_and_its_apply_is_refused() {
    let (_tmp, dir) = deployed_demo();
    let rules = "- name: no-pr-42\n  deny: change.id == '42' && change.author == 'alice'\n  message: pull request 42 may not touch the demo\n";
    std::fs::write(dir.join("rules.yaml"), rules).expect("write");
    let before = state_serial(&dir);
    let planned = comment_event(
        &dir,
        "plan.member",
        &["--comment", "comment.md", "--policy", "rules.yaml"],
    );
    assert_eq!(planned.status, 1, "{}", planned.stderr);
    assert!(
        last_line(&planned).starts_with("hub ci: plan of pull request #42 fails:"),
        "{}",
        planned.stdout
    );
    let text = comment(&dir);
    assert!(
        text.starts_with("## hub plan of pull request #42: failed\n"),
        "{text}"
    );
    assert!(
        text.ends_with("| **deny** | `no-pr-42` | pull request 42 may not touch the demo |\n"),
        "{text}"
    );
    let applied = comment_event(&dir, "apply.member", &["--policy", "rules.yaml"]);
    assert_eq!(applied.status, 1, "{}", applied.stderr);
    assert!(
        applied.stdout.contains("its latest plan"),
        "{}",
        applied.stdout
    );
    assert_eq!(state_serial(&dir), before, "nothing ran");
}

/// The checkout is the pull request's own: a link it plants where the
/// comment is written is replaced by the comment, and what it pointed at
/// is left as it was.
#[test]
fn a_link_planted_at_the_comment_is_replaced_not_followed() {
    let (_tmp, dir) = deployed_demo();
    let target = dir.join("precious.txt");
    std::fs::write(&target, "keep me\n").expect("write");
    std::os::unix::fs::symlink(&target, dir.join("comment.md")).expect("link");
    let out = comment_event(&dir, "plan.member", &["--comment", "comment.md"]);
    out.success();
    assert_eq!(
        std::fs::read_to_string(&target).expect("target"),
        "keep me\n"
    );
    let meta = std::fs::symlink_metadata(dir.join("comment.md")).expect("meta");
    assert!(meta.file_type().is_file(), "the link is replaced by a file");
    assert!(comment(&dir).starts_with("## hub plan of pull request #42: succeeded\n"));
}
