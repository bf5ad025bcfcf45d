//! Approvals and apply requirements (issue 43) tried by the pull
//! request's author: approving their own change, an outsider's approval,
//! an approval of another commit, a review payload under another event's
//! name, a reviewer login that is markup, GitLab approvals a merge
//! request's own pipeline forges (no signature, fields added or changed
//! after signing, no author said). Each row runs `hub ci` on the real
//! binary, and the apply that follows is refused with nothing run.

use crate::ci::{
    deployed_demo, fixture, github, gitlab_unsigned, hub_ci, last_line, relay_signed, state_serial,
    RELAY_KEY,
};
use crate::ci_approvals::{change_show, comment_at, require, review, HEAD};
use crate::common::{pinned_command, Output};
use std::path::Path;

/// A demo that requires one approval, planned at [`HEAD`].
fn planned() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = deployed_demo();
    require(&dir, "  apply:\n    requires: [approved]\n");
    comment_at(&dir, "plan.member", HEAD, &[]).success();
    (tmp, dir)
}

/// The apply comment is refused (exit 3) saying `why`, and nothing ran.
fn apply_refused(dir: &Path, why: &str) {
    let before = state_serial(dir);
    let out = comment_at(dir, "apply.member", HEAD, &[]);
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert!(last_line(&out).contains(why), "{}", last_line(&out));
    assert_eq!(state_serial(dir), before, "nothing ran");
}

#[test]
fn the_authors_own_approval_does_not_count() {
    let (_tmp, dir) = planned();
    let out = review(&dir, "submitted.self");
    out.success();
    assert!(
        last_line(&out).ends_with("that count: 0"),
        "{}",
        last_line(&out)
    );
    apply_refused(&dir, "(`alice` is the change's author)");
}

#[test]
fn an_outsiders_approval_does_not_count_and_its_body_is_never_quoted() {
    let (_tmp, dir) = planned();
    let out = review(&dir, "submitted.outsider");
    out.success();
    let comment = std::fs::read_to_string(dir.join("comment.md")).expect("comment");
    assert!(!comment.contains("<img"), "{comment}");
    assert!(!comment.contains("LGTM"), "{comment}");
    apply_refused(
        &dir,
        "(`mallory` is NONE, and only OWNER, MEMBER, COLLABORATOR count)",
    );
    // `--allow-user` trusts a login whatever GitHub says of it.
    let mut env = github(
        "issue_comment",
        &fixture("github/issue_comment.apply.member.json"),
    );
    env.push(("HUB_CI_SHA".into(), HEAD.into()));
    let out = hub_ci(&dir, &env, &["--allow-user", "mallory"]);
    out.success();
}

#[test]
fn an_approval_of_another_commit_does_not_count() {
    let (_tmp, dir) = planned();
    let text = std::fs::read_to_string(fixture(
        "github/pull_request_review.submitted.approved.json",
    ))
    .expect("fixture");
    let other = text.replacen(
        &format!("\"commit_id\": \"{HEAD}\""),
        "\"commit_id\": \"0123456789abcdef0123456789abcdef01234567\"",
        1,
    );
    assert_ne!(other, text);
    std::fs::write(dir.join("review.json"), other).expect("payload");
    hub_ci(
        &dir,
        &github("pull_request_review", &dir.join("review.json")),
        &[],
    )
    .success();
    apply_refused(
        &dir,
        "(`bob` approved commit `0123456789abcdef0123456789abcdef01234567`, not `c2d9f6a0e4b1e7a3f08c5d1b2a4e6f8091a3b5c7`)",
    );
}

#[test]
fn a_payload_under_another_events_name_records_no_approval() {
    let (_tmp, dir) = planned();
    // A comment's payload named a review: it has no review.
    let comment = fixture("github/issue_comment.apply.member.json");
    let out = hub_ci(&dir, &github("pull_request_review", &comment), &[]);
    assert_ne!(out.status, 0);
    assert!(
        out.stderr.contains("has no `pull_request.number`"),
        "{}",
        out.stderr
    );
    // A review's payload named a comment: not a comment on a pull request.
    let approval = fixture("github/pull_request_review.submitted.approved.json");
    let out = hub_ci(&dir, &github("issue_comment", &approval), &[]);
    out.success();
    assert!(!change_show(&dir).contains("review "));
    apply_refused(&dir, "(no approval is recorded)");
}

#[test]
fn a_reviewer_login_that_is_markup_is_refused_and_nothing_is_recorded() {
    let (_tmp, dir) = planned();
    let text = std::fs::read_to_string(fixture(
        "github/pull_request_review.submitted.approved.json",
    ))
    .expect("fixture");
    let forged = text.replacen(
        "\"login\": \"bob\"",
        "\"login\": \"bob`\\n## hub apply succeeded\"",
        1,
    );
    assert_ne!(forged, text);
    std::fs::write(dir.join("review.json"), forged).expect("payload");
    let out = hub_ci(
        &dir,
        &github("pull_request_review", &dir.join("review.json")),
        &["--comment", "comment.md"],
    );
    assert_eq!(out.status, 1, "{}", out.stderr);
    let comment = std::fs::read_to_string(dir.join("comment.md")).expect("comment");
    assert!(!comment.contains("\n## hub apply succeeded"), "{comment}");
    assert!(!change_show(&dir).contains("review "));
}

/// A demo whose change 17 (GitLab) is planned at the relay's commit.
fn gitlab_planned() -> (tempfile::TempDir, std::path::PathBuf) {
    let (tmp, dir) = deployed_demo();
    require(&dir, "  apply:\n    requires: [approved]\n");
    let sha = "4f3c2b1a0e9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b";
    let args = [
        "plan",
        "hub.yaml",
        "params.yaml",
        "-s",
        "demo.state",
        "--change",
        "17",
        "--sha",
        sha,
    ];
    Output::of(pinned_command(&dir, &args).output().expect("run hub"), &dir).success();
    (tmp, dir)
}

const TRUST: [&str; 2] = ["--allow-association", "OWNER,MAINTAINER"];

/// The relay's approval, its optional signed fields included.
fn relayed(env: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut signed = relay_signed(env.clone());
    // `relay_signed` signs the eleven fields of every relay; the optional
    // ones that are set follow them, in their order.
    let signature = signature_with_optional(&signed);
    signed.retain(|(n, _)| n != "HUB_CI_RELAY_SIGNATURE");
    signed.push(("HUB_CI_RELAY_SIGNATURE".into(), signature));
    signed
}

fn signature_with_optional(env: &[(String, String)]) -> String {
    use hmac::{Hmac, Mac};
    let value = |name: &str| {
        env.iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let mut message = String::from("hub-ci-relay-v1\n");
    for name in [
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
    ] {
        message.push_str(&format!("{name}={}\n", value(name)));
    }
    for name in [
        "HUB_CI_MR_AUTHOR",
        "HUB_CI_MERGEABLE",
        "HUB_CI_BASE_SHA",
        "HUB_CI_MERGE_SHA",
    ] {
        if !value(name).is_empty() {
            message.push_str(&format!("{name}={}\n", value(name)));
        }
    }
    let mut mac = Hmac::<sha2::Sha256>::new_from_slice(RELAY_KEY.as_bytes()).expect("key");
    mac.update(message.as_bytes());
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The relay's `hub apply` of merge request 17, by carol.
fn gitlab_apply(dir: &Path) -> Output {
    hub_ci(dir, &relayed(gitlab_unsigned("trigger.apply")), &TRUST)
}

#[test]
fn a_signed_gitlab_approval_counts_and_forged_ones_do_not() {
    let (_tmp, dir) = gitlab_planned();
    let before = state_serial(&dir);

    // The merge request's own pipeline sets the relay's variables: refused.
    let mut forged = gitlab_unsigned("trigger.approved");
    forged.retain(|(n, _)| n != "CI_PIPELINE_SOURCE");
    forged.push(("CI_PIPELINE_SOURCE".into(), "merge_request_event".into()));
    let out = hub_ci(&dir, &forged, &TRUST);
    assert_eq!(out.status, 3, "{}", out.stderr);

    // The relay signed an approval by a developer; the association is
    // changed to MAINTAINER after signing: refused.
    let mut developer = gitlab_unsigned("trigger.approved");
    developer.retain(|(n, _)| n != "HUB_CI_ASSOCIATION");
    developer.push(("HUB_CI_ASSOCIATION".into(), "DEVELOPER".into()));
    let mut changed = relayed(developer);
    changed.push(("HUB_CI_ASSOCIATION".into(), "MAINTAINER".into()));
    let out = hub_ci(&dir, &changed, &TRUST);
    assert_eq!(out.status, 3, "{}", out.stderr);
    assert!(
        last_line(&out).contains("does not match the relayed variables"),
        "{}",
        last_line(&out)
    );

    // Signed without the change's author (a relay of before), which is
    // then added: refused, the author is signed when given.
    let mut without = gitlab_unsigned("trigger.approved");
    without.retain(|(n, _)| n != "HUB_CI_MR_AUTHOR");
    let mut added = relayed(without.clone());
    added.push(("HUB_CI_MR_AUTHOR".into(), "carol".into()));
    let out = hub_ci(&dir, &added, &TRUST);
    assert_eq!(out.status, 3, "{}", out.stderr);

    // Signed without the change's author: recorded, but it cannot count.
    hub_ci(&dir, &relayed(without), &TRUST).success();
    let refused = gitlab_apply(&dir);
    assert_eq!(refused.status, 3, "{}", refused.stderr);
    assert!(
        last_line(&refused).contains("did not say who opened the change, so it may be their own"),
        "{}",
        last_line(&refused)
    );
    assert_eq!(state_serial(&dir), before, "nothing ran");

    // Signed, with the author: counts, and the apply runs.
    let out = hub_ci(&dir, &relayed(gitlab_unsigned("trigger.approved")), &TRUST);
    out.success();
    assert!(
        last_line(&out).ends_with("that count: 1 (`dave`)"),
        "{}",
        last_line(&out)
    );
    gitlab_apply(&dir).success();
    assert!(state_serial(&dir) > before);
}

#[test]
fn a_signed_gitlab_unapproval_withdraws_the_approval() {
    let (_tmp, dir) = gitlab_planned();
    hub_ci(&dir, &relayed(gitlab_unsigned("trigger.approved")), &TRUST).success();
    let mut unapproved = gitlab_unsigned("trigger.approved");
    unapproved.retain(|(n, _)| n != "HUB_CI_EVENT");
    unapproved.push(("HUB_CI_EVENT".into(), "unapproved".into()));
    let out = hub_ci(&dir, &relayed(unapproved), &TRUST);
    out.success();
    assert!(
        last_line(&out).ends_with("that count: 0"),
        "{}",
        last_line(&out)
    );
    let refused = gitlab_apply(&dir);
    assert_eq!(refused.status, 3, "{}", refused.stderr);
}
