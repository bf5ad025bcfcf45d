//! Merge queues and merge trains (issue 43, item 3) tried by someone who
//! can open a pull request or a merge request: a `merge_group` whose
//! `head_ref` names another pull request than the queue's branch form
//! allows, a queue entry for a change nobody approved a plan of, a merge
//! train's variables the relay did not sign (added after signing, unsigned,
//! or set by the merge request's own train pipeline), and names and markup
//! of the pull request quoted in the comment. Each row runs `hub ci` on
//! the real binary: refused (exit 3, or nothing to do for the merge
//! request's own pipeline), with nothing applied and nothing recorded.

use crate::ci::{fixture, github, gitlab_unsigned, relay_signed};
use crate::ci_queue::{
    comment, gitlab_planned, last_line, merge_group, planned_demo, signed_with_optional, Place,
};
use std::path::Path;

/// Each row runs with the stack applying on merge (the queue only checks
/// the entry: a hub without queues takes the stack too) and applying in
/// the queue.
const MODES: [&str; 2] = ["  apply:\n    on: merge\n", "  apply:\n    on: queue\n"];

/// `hub ci` for the recorded `checks_requested` with its `head_ref` set
/// to `head_ref`.
fn forged_group(place: &Place, dir: &Path, head_ref: &str) -> crate::common::Output {
    let text = std::fs::read_to_string(fixture("github/merge_group.checks_requested.json"))
        .expect("fixture");
    let real = "refs/heads/gh-readonly-queue/main/pr-42-9b8a7c6d5e4f30211a2b3c4d5e6f708192a3b4c5";
    assert!(text.contains(real));
    // As a JSON string (the rows hold no control characters).
    let json = head_ref.replace('\\', "\\\\").replace('"', "\\\"");
    let path = dir.join("forged-event.json");
    std::fs::write(&path, text.replace(real, &json)).expect("event");
    place.ci(dir, &github("merge_group", &path))
}

/// How many records `hub change show ID` lists.
fn records(place: &Place, dir: &Path, id: &str) -> usize {
    place
        .hub(dir, &["change", "show", id, "-s", &place.state], &[])
        .stdout
        .lines()
        .filter(|l| l.starts_with(' '))
        .count()
}

#[test]
fn a_head_ref_that_is_not_the_queue_branch_of_its_base_names_no_pull_request() {
    for mode in MODES {
        let place = Place::local();
        let (_tmp, dir) = planned_demo(&place, mode);
        let before = records(&place, &dir, "42");
        let sha = "9b8a7c6d5e4f30211a2b3c4d5e6f708192a3b4c5";
        for forged in [
            // Another base's queue.
            format!("refs/heads/gh-readonly-queue/release/pr-42-{sha}"),
            // Not the queue's namespace: any branch a writer pushes.
            format!("refs/heads/feature/gh-readonly-queue/main/pr-42-{sha}"),
            // A number GitHub never writes, a number with a path after it.
            format!("refs/heads/gh-readonly-queue/main/pr-042-{sha}"),
            format!("refs/heads/gh-readonly-queue/main/pr-42-{sha}/../pr-7"),
            "refs/heads/gh-readonly-queue/main/pr-42".to_string(),
            "refs/heads/gh-readonly-queue/main/pr--42-x".to_string(),
        ] {
            let out = forged_group(&place, &dir, &forged);
            assert_eq!(out.status, 3, "{forged}: {}", out.stdout);
            assert!(
                last_line(&out).starts_with(
                    "hub ci: queue of no pull request refused: the merge group's `head_ref`"
                ),
                "{forged}: {}",
                last_line(&out)
            );
            assert!(!out.stdout.contains("deploying"), "{forged}");
        }
        assert_eq!(records(&place, &dir, "42"), before, "nothing recorded");
    }
}

#[test]
fn a_group_for_a_pull_request_with_no_approved_plan_is_refused() {
    for mode in MODES {
        let place = Place::local();
        let (_tmp, dir) = planned_demo(&place, mode);
        // Pull request #7 was never planned: its queue entry has nothing to
        // be compared with.
        let sha = "9b8a7c6d5e4f30211a2b3c4d5e6f708192a3b4c5";
        let out = forged_group(
            &place,
            &dir,
            &format!("refs/heads/gh-readonly-queue/main/pr-7-{sha}"),
        );
        assert_eq!(out.status, 3, "{}", out.stderr);
        assert!(
            last_line(&out).contains("pull request #7 has no plan recorded in the change registry"),
            "{}",
            last_line(&out)
        );
        assert!(!out.stdout.contains("deploying"));
        assert_eq!(records(&place, &dir, "7"), 0);

        // #42's latest plan failed: the queue does not fall back to an older one.
        let script = dir.join("components/app/hub-component.yaml");
        let text = std::fs::read_to_string(&script).expect("manifest");
        std::fs::write(
            &script,
            text.replace(
                "env: DB_HOST",
                "env: DB_HOST\n  - name: nowhere.to.be.found\n    env: NOWHERE",
            ),
        )
        .expect("manifest");
        let mut env = github(
            "issue_comment",
            &fixture("github/issue_comment.plan.member.json"),
        );
        env.push(("HUB_CI_SHA".into(), crate::ci_approvals::PUSHED.into()));
        let failed_plan = place.ci(&dir, &env);
        assert_ne!(failed_plan.status, 0, "{}", failed_plan.stdout);
        let out = place.ci(&dir, &merge_group("checks_requested"));
        assert_eq!(out.status, 3, "{}", out.stderr);
        assert!(
            last_line(&out).contains("is a deploy that failed"),
            "{}",
            last_line(&out)
        );
        assert!(!out.stdout.contains("deploying"));
    }
}

#[test]
fn merge_train_variables_the_relay_did_not_sign_are_refused() {
    for mode in MODES {
        let place = Place::local();
        let (_tmp, dir) = gitlab_planned(mode);
        let before = records(&place, &dir, "17");

        // A relay of before signed the entry without the train's variables,
        // which are added after signing.
        let mut without = gitlab_unsigned("trigger.merge_train");
        without.retain(|(n, _)| n != "CI_MERGE_REQUEST_EVENT_TYPE" && n != "HUB_CI_MR_SHA");
        let mut added = relay_signed(without);
        added.push(("CI_MERGE_REQUEST_EVENT_TYPE".into(), "merge_train".into()));
        added.push(("HUB_CI_MR_SHA".into(), crate::ci_queue::MR_HEAD.into()));
        let out = place.ci(&dir, &added);
        assert_eq!(out.status, 3, "{}", out.stdout);
        assert!(
            last_line(&out).contains("does not match the relayed variables"),
            "{}",
            last_line(&out)
        );

        // The train's variable in a triggered pipeline, nothing signed.
        let bare: Vec<(String, String)> = gitlab_unsigned("trigger.merge_train")
            .into_iter()
            .filter(|(n, _)| !n.starts_with("HUB_CI_"))
            .collect();
        let out = place.ci(&dir, &bare);
        assert_eq!(out.status, 3, "{}", out.stdout);
        assert!(
            last_line(&out).contains("`HUB_CI_RELAY_KEY` is not set"),
            "{}",
            last_line(&out)
        );

        // Signed, then the train's commit changed.
        let mut moved = signed_with_optional(gitlab_unsigned("trigger.merge_train"));
        moved.push((
            "HUB_CI_SHA".into(),
            "1111111111111111111111111111111111111111".into(),
        ));
        let out = place.ci(&dir, &moved);
        assert_eq!(out.status, 3, "{}", out.stdout);

        // The merge request's own train pipeline (its `.gitlab-ci.yml` sets
        // what it likes): nothing is planned or applied.
        let mut own = gitlab_unsigned("trigger.merge_train");
        own.retain(|(n, _)| n != "CI_PIPELINE_SOURCE");
        own.retain(|(n, _)| !n.starts_with("HUB_CI_") || n == "HUB_CI_SHA");
        own.push(("CI_PIPELINE_SOURCE".into(), "merge_request_event".into()));
        let out = place.ci(&dir, &own);
        out.success();
        assert!(
            last_line(&out).starts_with("hub ci: nothing to do: a merge-train pipeline runs the merge request's own `.gitlab-ci.yml`"),
            "{}",
            last_line(&out)
        );
        assert!(!out.stdout.contains("deploying"));
        assert_eq!(records(&place, &dir, "17"), before, "nothing recorded");
    }
}

/// The text of `comment` outside its fenced blocks.
fn outside_fences(comment: &str) -> String {
    let mut out = String::new();
    let mut fence: Option<String> = None;
    for line in comment.lines() {
        let ticks: String = line.chars().take_while(|c| *c == '`').collect();
        match &fence {
            Some(open) if line.trim_end() == open.as_str() => fence = None,
            Some(_) => {}
            None if ticks.len() >= 3 => fence = Some(ticks),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    out
}

#[test]
fn names_and_markup_of_the_pull_request_are_inert_in_the_comment() {
    for mode in MODES {
        let place = Place::local();
        // A head_ref with markup: quoted as code.
        let (_tmp, dir) = planned_demo(&place, mode);
        let out = forged_group(
            &place,
            &dir,
            "refs/heads/gh-readonly-queue/main/pr-42-<img src=x onerror=alert(1)>",
        );
        assert_eq!(out.status, 3, "{}", out.stdout);
        let text = comment(&dir);
        // Only inside code spans (single backticks here), which are inert.
        let prose: String = text.split('`').step_by(2).collect();
        assert!(!prose.contains("<img"), "{text}");
        assert!(
            text.contains("`refs/heads/gh-readonly-queue/main/pr-42-<img src=x onerror=alert(1)>`"),
            "{text}"
        );

        // A parameter whose name is markup, changed by the entry ahead: named
        // in the refusal, inside a fenced block only.
        let (_tmp, dir) = planned_demo(&place, mode);
        let name = "app.<b>note</b>@everyone";
        let stack = std::fs::read_to_string(dir.join("hub.yaml")).expect("stack");
        let with = stack.replace(
            "parameters:\n  - name: dns.domain",
            &format!("parameters:\n  - name: '{name}'\n    value: one\n  - name: dns.domain"),
        );
        std::fs::write(dir.join("hub.yaml"), &with).expect("stack");
        let manifest = dir.join("components/app/hub-component.yaml");
        let text = std::fs::read_to_string(&manifest).expect("manifest");
        std::fs::write(
            &manifest,
            text.replace(
                "parameters:\n",
                &format!("parameters:\n  - name: '{name}'\n    env: NOTE\n"),
            ),
        )
        .expect("manifest");
        let mut env = github(
            "issue_comment",
            &fixture("github/issue_comment.plan.member.json"),
        );
        env.push(("HUB_CI_SHA".into(), crate::ci_approvals::HEAD.into()));
        place.ci(&dir, &env).success();
        std::fs::write(
            dir.join("hub.yaml"),
            with.replace("value: one", "value: two"),
        )
        .expect("stack");
        let out = place.ci(&dir, &merge_group("checks_requested"));
        assert_eq!(out.status, 3, "{}", out.stdout);
        let text = comment(&dir);
        assert!(
            text.contains(&format!("  - `app`: its parameter `{name}` differs")),
            "{text}"
        );
        let prose = outside_fences(&text);
        assert!(!prose.contains("<b>"), "{prose}");
        assert!(!prose.contains("@everyone"), "{prose}");
    }
}
