//! Issue 43, items 1 and 2: `hub ci` records reviews (GitHub
//! `pull_request_review`, GitLab approvals a relay signs) in the change
//! registry, and the stack's `ci.apply.requires` refuses an apply of a
//! change that misses a requirement, under `hub ci` (in the comment) and
//! `hub deploy --change` (on stderr).

use crate::ci::{comment, deployed_demo, fixture, github, hub_ci, last_line, state_serial};
use crate::common::{pinned_command, Output};
use std::path::Path;

/// The head of pull request #42 in the fixtures.
pub(crate) const HEAD: &str = "c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7";
/// The head after a push.
pub(crate) const PUSHED: &str = "d3e0a7b1f5c2f8b4a19d6e2c3b5f7a9102b4c6d8";

/// Appends `ci:` to the demo's stack.
pub(crate) fn require(dir: &Path, ci: &str) {
    let path = dir.join("hub.yaml");
    let mut text = std::fs::read_to_string(&path).expect("stack");
    text.push_str(&format!("\nci:\n{ci}"));
    std::fs::write(&path, text).expect("stack");
}

/// `hub ci` for a recorded comment, the workflow saying the head is `sha`.
pub(crate) fn comment_at(dir: &Path, name: &str, sha: &str, extra: &[(&str, &str)]) -> Output {
    let mut env = github(
        "issue_comment",
        &fixture(&format!("github/issue_comment.{name}.json")),
    );
    env.push(("HUB_CI_SHA".into(), sha.into()));
    env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.to_string())));
    hub_ci(dir, &env, &["--comment", "comment.md"])
}

/// `hub ci` for a recorded review.
pub(crate) fn review(dir: &Path, name: &str) -> Output {
    let env = github(
        "pull_request_review",
        &fixture(&format!("github/pull_request_review.{name}.json")),
    );
    hub_ci(dir, &env, &["--comment", "comment.md"])
}

pub(crate) fn change_show(dir: &Path) -> String {
    let args = ["change", "show", "42", "-s", "demo.state"];
    let out = Output::of(pinned_command(dir, &args).output().expect("run hub"), dir);
    out.success();
    out.stdout.clone()
}

#[test]
fn an_apply_is_refused_without_an_approval_accepted_after_one_of_the_head_and_refused_after_a_push()
{
    let (_tmp, dir) = deployed_demo();
    require(&dir, "  apply:\n    requires: [approved]\n");
    let before = state_serial(&dir);
    comment_at(&dir, "plan.member", HEAD, &[]).success();

    let refused = comment_at(&dir, "apply.member", HEAD, &[]);
    assert_eq!(refused.status, 3, "{}", refused.stderr);
    assert_eq!(
        last_line(&refused),
        "hub ci: apply of pull request #42 refused: change `42` cannot be applied: the stack's `ci.apply` requires `approved`, and 1 approval(s) of commit `c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7` by OWNER, MEMBER, COLLABORATOR other than the change's author, and 0 count (no approval is recorded)"
    );
    let text = comment(&dir);
    assert!(
        text.starts_with("## hub apply of pull request #42: refused"),
        "{text}"
    );
    assert!(
        text.contains(
            "a trusted reviewer other than the author approves the change at this commit"
        ),
        "the comment says how to meet it: {text}"
    );
    assert_eq!(state_serial(&dir), before, "nothing ran");

    let approved = review(&dir, "submitted.approved");
    approved.success();
    assert_eq!(
        last_line(&approved),
        "hub ci: review of pull request #42: review 2 by `bob` of commit `c2d9f6a0e4b1` recorded: approved; approvals of the head `c2d9f6a0e4b1` that count: 1 (`bob`)"
    );
    let shown = change_show(&dir);
    assert!(
        shown.contains("review approved by bob (MEMBER) of c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7, 2026-01-01T00:00:00Z (pull_request_review.submitted)"),
        "{shown}"
    );
    assert!(
        shown.contains(
            "approvals in effect: bob (MEMBER) of c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7\n"
        ),
        "{shown}"
    );

    let applied = comment_at(&dir, "apply.member", HEAD, &[]);
    applied.success();
    assert_eq!(
        last_line(&applied),
        "hub ci: apply of pull request #42 succeeded: 1 deployed"
    );
    let after_apply = state_serial(&dir);
    assert!(after_apply > before);

    // A push: the change is planned at its new head, which nobody approved.
    comment_at(&dir, "plan.member", PUSHED, &[]).success();
    let stale = comment_at(&dir, "apply.member", PUSHED, &[]);
    assert_eq!(stale.status, 3, "{}", stale.stderr);
    assert!(
        last_line(&stale).contains(
            "0 count (`bob` approved commit `c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7`, not `d3e0a7b1f5c2f8b4a19d6e2c3b5f7a9102b4c6d8`)"
        ),
        "{}",
        last_line(&stale)
    );
    assert_eq!(state_serial(&dir), after_apply, "nothing ran");
}

#[test]
fn a_dismissal_or_a_request_for_changes_after_an_approval_removes_it() {
    for later in ["dismissed", "submitted.changes_requested"] {
        let (_tmp, dir) = deployed_demo();
        require(
            &dir,
            "  apply:\n    requires: [approved]\n    approvals: 1\n",
        );
        comment_at(&dir, "plan.member", HEAD, &[]).success();
        review(&dir, "submitted.approved").success();
        let out = review(&dir, later);
        out.success();
        assert!(
            last_line(&out).ends_with("approvals of the head `c2d9f6a0e4b1` that count: 0"),
            "{later}: {}",
            last_line(&out)
        );
        assert!(
            change_show(&dir).contains("approvals in effect: none\n"),
            "{later}"
        );
        let refused = comment_at(&dir, "apply.member", HEAD, &[]);
        assert_eq!(refused.status, 3, "{later}: {}", refused.stderr);
        assert!(
            last_line(&refused).contains("requires `approved`"),
            "{later}"
        );
    }
}

#[test]
fn a_review_that_only_comments_changes_nothing() {
    let (_tmp, dir) = deployed_demo();
    let out = review(&dir, "submitted.commented");
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: nothing to do: a review that neither approves nor requests changes: it changes no approval"
    );
}

/// `hub deploy --change 42` with `extra` flags.
fn deploy_change(dir: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "deploy",
        "hub.yaml",
        "params.yaml",
        "-s",
        "demo.state",
        "--change",
        "42",
        "--sha",
        HEAD,
    ];
    args.extend(extra);
    Output::of(pinned_command(dir, &args).output().expect("run hub"), dir)
}

fn plan_change(dir: &Path) {
    let args = [
        "plan",
        "hub.yaml",
        "params.yaml",
        "-s",
        "demo.state",
        "--change",
        "42",
        "--sha",
        HEAD,
    ];
    Output::of(pinned_command(dir, &args).output().expect("run hub"), dir).success();
}

#[test]
fn deploy_change_says_on_stderr_which_requirement_is_missed_and_how_to_meet_it() {
    let (_tmp, dir) = deployed_demo();
    require(
        &dir,
        "  apply:\n    requires: [mergeable, planned-by-trusted]\n",
    );
    plan_change(&dir);
    let before = state_serial(&dir);
    let out = deploy_change(&dir, &[]);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("change `42` cannot be applied: the stack's `ci.apply` requires `mergeable`, and that the change can be merged, and nothing said whether it can; it also requires `planned-by-trusted`, and that the plan applied was made for a trusted author (OWNER, MEMBER, COLLABORATOR), and plan 1 was made for"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("no association recorded (a plan made outside `hub ci`)"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("`--mergeable true` of `hub deploy --change`"),
        "the hint: {}",
        out.stderr
    );
    let conflicting = deploy_change(&dir, &["--mergeable", "false"]);
    assert!(
        conflicting
            .stderr
            .contains("and the platform says it cannot"),
        "{}",
        conflicting.stderr
    );
    assert_eq!(state_serial(&dir), before, "nothing ran");

    // Met: mergeable, and a plan `hub ci` made for a member.
    require_only(
        &dir,
        "  apply:\n    requires: [mergeable, planned-by-trusted]\n",
    );
    comment_at(&dir, "plan.member", HEAD, &[]).success();
    deploy_change(&dir, &["--mergeable", "true"]).success();
    assert!(state_serial(&dir) > before);
}

/// Replaces the `ci:` the test appended.
fn require_only(dir: &Path, ci: &str) {
    let path = dir.join("hub.yaml");
    let text = std::fs::read_to_string(&path).expect("stack");
    let kept = text.split("\nci:\n").next().expect("stack").to_string();
    std::fs::write(&path, format!("{kept}\nci:\n{ci}")).expect("stack");
}

fn git(root: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(root)
        .args(["-c", "user.name=hub", "-c", "user.email=hub@example.com"])
        .args(args)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

#[test]
fn undiverged_is_checked_with_git_from_the_base_commit_and_refused_when_unknown() {
    let (_tmp, dir) = deployed_demo();
    require(&dir, "  apply:\n    requires: [undiverged]\n");
    git(&dir, &["init", "-q", "-b", "main"]);
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "base"]);
    let base = git(&dir, &["rev-parse", "HEAD"]);
    git(&dir, &["checkout", "-qb", "change"]);
    std::fs::write(dir.join("README.change"), "change\n").expect("write");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "change"]);
    let head = git(&dir, &["rev-parse", "HEAD"]);
    // The base branch moves on.
    git(&dir, &["checkout", "-q", "main"]);
    std::fs::write(dir.join("README.main"), "main\n").expect("write");
    git(&dir, &["add", "-A"]);
    git(&dir, &["commit", "-qm", "main moves"]);
    let moved = git(&dir, &["rev-parse", "HEAD"]);
    git(&dir, &["checkout", "-q", "change"]);
    let plan = [
        "plan",
        "hub.yaml",
        "params.yaml",
        "-s",
        "demo.state",
        "--change",
        "42",
        "--sha",
        &head,
    ];
    Output::of(pinned_command(&dir, &plan).output().expect("run hub"), &dir).success();
    let deploy = |extra: &[&str]| {
        let mut args = vec![
            "deploy",
            "hub.yaml",
            "params.yaml",
            "-s",
            "demo.state",
            "--change",
            "42",
            "--sha",
            &head,
        ];
        args.extend(extra);
        Output::of(pinned_command(&dir, &args).output().expect("run hub"), &dir)
    };
    let unknown = deploy(&[]);
    assert_eq!(unknown.status, 1);
    assert!(unknown.stderr.contains("requires `undiverged`, and that the change contains its base branch's head, and nothing said which commit that is"), "{}", unknown.stderr);
    let diverged = deploy(&["--base-sha", &moved]);
    assert_eq!(diverged.status, 1);
    assert!(
        diverged.stderr.contains(&format!(
            "that commit `{head}` contains the base branch's head `{moved}`, and it does not"
        )),
        "{}",
        diverged.stderr
    );
    assert!(
        diverged
            .stderr
            .contains("merge (or rebase onto) the base branch"),
        "{}",
        diverged.stderr
    );
    deploy(&["--base-sha", &base]).success();
}

#[test]
fn an_unknown_requirement_is_an_error_naming_the_file_and_line() {
    let (_tmp, dir) = deployed_demo();
    require(&dir, "  apply:\n    requires: [approved, reviewed-twice]\n");
    let args = ["plan", "hub.yaml", "params.yaml", "-s", "demo.state"];
    let out = Output::of(pinned_command(&dir, &args).output().expect("run hub"), &dir);
    assert_eq!(out.status, 1, "{}", out.stderr);
    let lines = std::fs::read_to_string(dir.join("hub.yaml"))
        .expect("stack")
        .lines()
        .count();
    assert!(out.stderr.contains("unknown variant `reviewed-twice`, expected one of `approved`, `mergeable`, `undiverged`, `planned-by-trusted`"), "{}", out.stderr);
    assert!(
        out.stderr.contains(&format!("--> hub.yaml:{lines}:")),
        "{}",
        out.stderr
    );
}

#[test]
fn policies_see_the_approvals_and_whether_the_change_can_be_merged() {
    let (_tmp, dir) = deployed_demo();
    std::fs::write(
        dir.join("approved.yaml"),
        "- name: approved-head\n  deny: '!change.approvals.exists(a, a.commit == change.sha && a.association == \"MEMBER\") || change.mergeable != true'\n  message: the head is not approved, or cannot be merged\n",
    )
    .expect("policy");
    comment_at(&dir, "plan.member", HEAD, &[]).success();
    review(&dir, "submitted.approved").success();
    let plan = |mergeable: &str| {
        let args = [
            "plan",
            "hub.yaml",
            "params.yaml",
            "-s",
            "demo.state",
            "--change",
            "42",
            "--sha",
            HEAD,
            "--mergeable",
            mergeable,
            "--policy",
            "approved.yaml",
        ];
        Output::of(pinned_command(&dir, &args).output().expect("run hub"), &dir)
    };
    let conflicting = plan("false");
    assert!(
        conflicting
            .stdout
            .contains("the head is not approved, or cannot be merged"),
        "{}",
        conflicting.stdout
    );
    let ok = plan("true");
    assert!(
        !ok.stdout.contains("the head is not approved"),
        "{}",
        ok.stdout
    );
}

/// `hub ci` for the recorded merge of pull request #42.
fn merged_event(dir: &Path) -> Output {
    let env = github(
        "pull_request",
        &fixture("github/pull_request.closed.merged.json"),
    );
    hub_ci(dir, &env, &["--comment", "comment.md"])
}

fn lock_line(dir: &Path) -> String {
    change_show(dir)
        .lines()
        .last()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn on_merge_the_merged_commit_is_planned_and_applied_and_a_comment_apply_is_refused() {
    let (_tmp, dir) = deployed_demo();
    require(
        &dir,
        "  apply:\n    on: merge\n    requires: [approved, mergeable]\n",
    );
    let before = state_serial(&dir);
    comment_at(&dir, "plan.member", HEAD, &[]).success();
    review(&dir, "submitted.approved").success();
    let comment_apply = comment_at(&dir, "apply.member", HEAD, &[]);
    assert_eq!(comment_apply.status, 3, "{}", comment_apply.stderr);
    assert!(
        last_line(&comment_apply).contains("requires `on: merge`, and that changes are applied when they are merged, not on a comment"),
        "{}",
        last_line(&comment_apply)
    );
    assert_eq!(state_serial(&dir), before, "nothing ran on the comment");

    let out = merged_event(&dir);
    out.success();
    assert_eq!(
        last_line(&out),
        "hub ci: merged of pull request #42 succeeded: 3 deployed, 1 skipped"
    );
    assert!(state_serial(&dir) > before, "the merged commit was applied");
    let shown = change_show(&dir);
    // Planned at the merged commit, applied, then recorded as merged.
    assert!(
        shown.contains("plan succeeded (deploy), 2026-01-01T00:00:00Z by alice at e5bd3914e2e596debea16f433f57875b5b90bcd6"),
        "{shown}"
    );
    assert!(shown.contains("apply of plan 3 succeeded (deploy), 2026-01-01T00:00:00Z by alice at e5bd3914e2e596debea16f433f57875b5b90bcd6"), "{shown}");
    assert!(shown.contains("change 42 (merged)"), "{shown}");
    assert_eq!(lock_line(&dir), "apply lock: free");
}

#[test]
fn on_merge_a_failed_apply_keeps_the_lock_and_records_no_merge() {
    let (_tmp, dir) = deployed_demo();
    require(&dir, "  apply:\n    on: merge\n");
    let script = dir.join("components/app/deploy.sh");
    let mut text = std::fs::read_to_string(&script).expect("script");
    text.push_str("exit 3\n");
    std::fs::write(&script, text).expect("script");
    let out = merged_event(&dir);
    assert_eq!(out.status, 1, "{}", out.stderr);
    assert_eq!(
        last_line(&out),
        "hub ci: merged of pull request #42 failed: `app` failed"
    );
    let shown = change_show(&dir);
    assert!(!shown.contains("merged,"), "no merge recorded: {shown}");
    assert!(
        lock_line(&dir)
            .starts_with("apply lock: held by change 42 since 2026-01-01T00:00:00Z (failed:"),
        "{shown}"
    );
}

#[test]
fn on_merge_an_unapproved_change_is_refused_and_records_no_merge() {
    let (_tmp, dir) = deployed_demo();
    require(&dir, "  apply:\n    on: merge\n    approvals: 1\n");
    let before = state_serial(&dir);
    let out = merged_event(&dir);
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert!(
        last_line(&out).contains("requires `approved`, and 1 approval(s) of commit `c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7`"),
        "approvals are of the head that was merged: {}",
        last_line(&out)
    );
    assert_eq!(state_serial(&dir), before);
    assert!(!change_show(&dir).contains("merged,"));
}
