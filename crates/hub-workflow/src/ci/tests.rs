use super::*;
use std::collections::HashMap;

/// 2026-01-01T00:00:00Z.
const NOW: i64 = 1_767_225_600;
const CONTEXT: ReadContext = ReadContext {
    now: NOW,
    relay_max_age: DEFAULT_RELAY_MAX_AGE,
};
const KEY: &str = "relay-test-key";

fn github(name: &str, payload: &str) -> Result<Event, CiError> {
    let env: HashMap<&str, String> = [
        ("GITHUB_EVENT_NAME", name.to_string()),
        ("GITHUB_EVENT_PATH", "/event.json".to_string()),
    ]
    .into();
    let payload = payload.to_string();
    read(&|n| env.get(n).cloned(), &|_| Ok(payload.clone()), &CONTEXT)
}

fn gitlab(vars: &[(&str, &str)]) -> Result<Event, CiError> {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    read(
        &|n| env.get(n).cloned(),
        &|_| unreachable!("no payload"),
        &CONTEXT,
    )
}

/// `vars` with the relay's time, key and signature added.
fn signed(vars: &[(&str, &str)]) -> Vec<(String, String)> {
    let mut all: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    all.push((relay::TIME.into(), NOW.to_string()));
    let env: HashMap<String, String> = all.iter().cloned().collect();
    let message = relay::message(&|n| env.get(n).cloned()).expect("one line each");
    all.push((relay::KEY.into(), KEY.into()));
    all.push((
        relay::SIGNATURE.into(),
        relay::sign(KEY.as_bytes(), &message),
    ));
    all
}

fn gitlab_owned(vars: &[(String, String)]) -> Result<Event, CiError> {
    let pairs: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    gitlab(&pairs)
}

fn comment(body: &str, association: &str) -> String {
    serde_json::json!({
        "action": "created",
        "issue": {"number": 7, "pull_request": {"url": "https://api.github.com/repos/o/r/pulls/7"}},
        "comment": {"body": body, "user": {"login": "bob"}, "author_association": association}
    })
    .to_string()
}

#[test]
fn comments_are_commands_on_their_first_line_only() {
    let ok = |body| parse_command(body).expect("a hub line").expect("a command");
    assert_eq!(ok("hub plan").verb, CommentVerb::Plan);
    assert_eq!(ok("hub plan -c a,b\nthanks").components, ["a", "b"]);
    assert_eq!(
        ok("  hub plan -ca -c=b --components c+").components,
        ["a", "b", "c+"]
    );
    assert_eq!(ok("hub apply\r\n").verb, CommentVerb::Apply);
    assert_eq!(ok("hub unlock").verb, CommentVerb::Unlock);
    assert_eq!(parse_command("lgtm\nhub apply"), None);
    assert_eq!(parse_command("hubris"), None);
    let bad = |body| parse_command(body).expect("a hub line").expect_err(body);
    // The answer never quotes what the commenter wrote.
    assert!(bad("hub aply").contains("names no command hub knows"));
    assert!(!bad("hub aply <b>@team</b>").contains("aply"));
    assert!(bad("hub").contains("names no command"));
    assert!(bad("hub plan -c").contains("needs a list"));
    assert!(bad("hub apply -c app").contains("takes no `-c`"));
    assert!(bad("hub apply --force").contains("a flag hub does not know"));
    assert!(!bad("hub apply --force").contains("--force"));
    assert!(bad("hub plan -c ../x").contains("cannot be a component name"));
    assert!(!bad("hub plan -c ../x").contains("../x"));
    assert!(bad("hub unlock -c a").contains("takes no `-c`"));
}

fn pull_request(action: &str, merged: bool, association: &str, head_repo: &str) -> String {
    let repo = |name: &str| match name {
        "" => serde_json::Value::Null,
        name => serde_json::json!({"id": if name == "o/r" { 1 } else { 2 }, "full_name": name}),
    };
    serde_json::json!({
        "action": action, "number": 42,
        "pull_request": {"number": 42, "merged": merged, "user": {"login": "alice"},
            "author_association": association,
            "head": {"sha": "h1", "repo": repo(head_repo)}, "base": {"sha": "b1", "repo": repo("o/r")}},
        "sender": {"login": "olivia"}
    })
    .to_string()
}

#[test]
fn pull_requests_autoplan_and_close() {
    let access = Access::default();
    for action in ["opened", "synchronize", "reopened"] {
        let payload = pull_request(action, false, "MEMBER", "o/r");
        let event = github("pull_request", &payload).expect("event");
        assert_eq!(event.name, format!("pull_request.{action}"));
        assert_eq!(event.change.as_deref(), Some("42"));
        assert_eq!(event.sha.as_deref(), Some("h1"));
        assert_eq!(event.author.as_deref(), Some("alice"), "the code's author");
        assert_eq!(event.fork, Some(false));
        assert_eq!(
            decide(&event, &access),
            Operation::Autoplan {
                base: Some("b1".into())
            }
        );
    }
    let merged = github(
        "pull_request",
        &pull_request("closed", true, "MEMBER", "o/r"),
    );
    assert_eq!(decide(&merged.expect("event"), &access), Operation::Merged);
    let closed = github(
        "pull_request",
        &pull_request("closed", false, "NONE", "x/r"),
    );
    assert_eq!(decide(&closed.expect("event"), &access), Operation::Closed);
    let labeled = github(
        "pull_request",
        &pull_request("labeled", false, "MEMBER", "o/r"),
    );
    assert_eq!(decide(&labeled.expect("event"), &access).name(), "nothing");
}

#[test]
fn outsiders_and_forks_are_not_planned_unless_allowed() {
    let outsider = github(
        "pull_request",
        &pull_request("opened", false, "CONTRIBUTOR", "o/r"),
    )
    .expect("event");
    let Operation::Refused { asked, reason } = decide(&outsider, &Access::default()) else {
        panic!("an outsider's pull request is not planned");
    };
    assert_eq!(asked, "autoplan");
    assert_eq!(reason, "`alice` is CONTRIBUTOR; only OWNER, MEMBER, COLLABORATOR (`--allow-association`) or the users of `--allow-user` may plan; `--plan-from anyone` plans for anyone");
    let anyone = Access {
        plan_from: PlanFrom::Anyone,
        ..Access::default()
    };
    assert_eq!(decide(&outsider, &anyone).name(), "autoplan");
    assert!(matches!(
        decide(&outsider, &anyone),
        Operation::Autoplan { .. }
    ));

    for head in ["m/r", ""] {
        let fork = github(
            "pull_request",
            &pull_request("opened", false, "MEMBER", head),
        )
        .expect("event");
        assert_eq!(fork.fork, Some(true), "{head}");
        assert_eq!(
            decide(&fork, &Access::default()),
            Operation::Refused {
                asked: "autoplan",
                reason: "pull request #42 comes from a fork: hub plans a fork's code only with `--plan-forks`".into()
            }
        );
        let forks = Access {
            plan_forks: true,
            ..Access::default()
        };
        assert!(matches!(decide(&fork, &forks), Operation::Autoplan { .. }));
    }

    // A comment's payload does not say: a fork unless the workflow does.
    let member = github("issue_comment", &comment("hub plan", "MEMBER")).expect("event");
    assert_eq!(member.fork, None);
    let Operation::Refused { asked, reason } = decide(&member, &Access::default()) else {
        panic!("a plan of a pull request that may be a fork");
    };
    assert_eq!(asked, "plan");
    assert!(reason.starts_with("the event's payload does not say whether pull request #7 comes from a fork, so hub takes it as one: the workflow passes `HUB_CI_FORK`"), "{reason}");
    let told = |fork: &str| {
        let env: HashMap<&str, String> = [
            ("GITHUB_EVENT_NAME", "issue_comment".to_string()),
            ("GITHUB_EVENT_PATH", "/event.json".to_string()),
            ("HUB_CI_FORK", fork.to_string()),
        ]
        .into();
        let payload = comment("hub plan", "MEMBER");
        read(&|n| env.get(n).cloned(), &|_| Ok(payload.clone()), &CONTEXT)
    };
    let same = told("false").expect("event");
    assert_eq!(
        decide(&same, &Access::default()),
        Operation::Plan { components: vec![] }
    );
    assert_eq!(
        decide(&told("true").expect("event"), &Access::default()).name(),
        "plan"
    );
    assert!(matches!(
        decide(&told("true").expect("event"), &Access::default()),
        Operation::Refused { .. }
    ));
    let bad = told("yes").expect_err("not a boolean");
    assert_eq!(
        bad.to_string(),
        "`HUB_CI_FORK` is `yes`: it is `true` (the pull request comes from a fork) or `false`"
    );
}

#[test]
fn applies_need_an_allowed_association_or_user() {
    let member = github("issue_comment", &comment("hub apply", "MEMBER")).expect("event");
    assert_eq!(decide(&member, &Access::default()), Operation::Apply);
    let outsider = github("issue_comment", &comment("hub apply", "NONE")).expect("event");
    let Operation::Refused { asked, reason } = decide(&outsider, &Access::default()) else {
        panic!("an outsider's apply is refused");
    };
    assert_eq!(asked, "apply");
    assert_eq!(reason, "`bob` is NONE; only OWNER, MEMBER, COLLABORATOR (`--allow-association`) or the users of `--allow-user` may apply or unlock");
    let bob = Access {
        users: vec!["bob".into()],
        ..Access::default()
    };
    assert_eq!(decide(&outsider, &bob).name(), "apply");
    let plan = github("issue_comment", &comment("hub plan", "NONE")).expect("event");
    assert!(matches!(
        decide(&plan, &Access::default()),
        Operation::Refused { asked: "plan", .. }
    ));
    let unlock = github("issue_comment", &comment("hub unlock", "NONE")).expect("event");
    assert!(matches!(
        decide(&unlock, &Access::default()),
        Operation::Refused {
            asked: "unlock",
            ..
        }
    ));
}

#[test]
fn comments_on_issues_and_other_events_do_nothing() {
    let on_issue = serde_json::json!({
        "action": "created", "issue": {"number": 3},
        "comment": {"body": "hub apply", "user": {"login": "o"}, "author_association": "OWNER"}
    })
    .to_string();
    let event = github("issue_comment", &on_issue).expect("event");
    assert_eq!(decide(&event, &Access::default()).name(), "nothing");
    let push = github("push", "{}").expect("event");
    assert_eq!(decide(&push, &Access::default()).name(), "nothing");
}

#[test]
fn broken_payloads_name_their_file_and_line() {
    let error = github("pull_request", "{\n  \"action\": }").expect_err("not JSON");
    let location = error.location().expect("a location").to_string();
    assert!(location.contains("/event.json:2"), "{location}");
    let error = github("pull_request", r#"{"action": "opened"}"#).expect_err("no number");
    assert_eq!(
        error.to_string(),
        "the `pull_request` event payload has no `pull_request.number`"
    );
    assert!(matches!(
        read(&|_| None, &|_| unreachable!(), &CONTEXT),
        Err(CiError::NoEvent)
    ));
}

#[test]
fn gitlab_merge_request_pipelines() {
    let base = [
        ("GITLAB_CI", "true"),
        ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ("CI_PROJECT_ID", "1000"),
        ("CI_MERGE_REQUEST_IID", "5"),
        ("CI_MERGE_REQUEST_PROJECT_ID", "1000"),
        ("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "1000"),
        ("CI_COMMIT_SHA", "c5"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "d5"),
        ("GITLAB_USER_LOGIN", "carol"),
    ];
    let event = gitlab(&base).expect("event");
    assert!(event.member_pipeline);
    assert_eq!(
        decide(&event, &Access::default()),
        Operation::Autoplan {
            base: Some("d5".into())
        }
    );
    let mut fork = base.to_vec();
    fork[5] = ("CI_MERGE_REQUEST_SOURCE_PROJECT_ID", "2000");
    assert!(matches!(
        decide(&gitlab(&fork).expect("event"), &Access::default()),
        Operation::Refused {
            asked: "autoplan",
            ..
        }
    ));
    let push = gitlab(&[("GITLAB_CI", "true"), ("CI_PIPELINE_SOURCE", "push")]).expect("event");
    assert_eq!(decide(&push, &Access::default()).name(), "nothing");
    let no_iid = gitlab(&[("CI_PIPELINE_SOURCE", "merge_request_event")]).expect_err("no iid");
    assert_eq!(no_iid.to_string(), "GitLab sets no `CI_MERGE_REQUEST_IID`");
}

/// A relay's pipeline: a trigger with the relayed comment.
fn relay(command: &str, association: &str) -> Vec<(&'static str, String)> {
    vec![
        ("GITLAB_CI", "true".into()),
        ("CI_PIPELINE_SOURCE", "trigger".into()),
        ("CI_PROJECT_ID", "1000".into()),
        ("CI_MERGE_REQUEST_IID", "5".into()),
        ("CI_COMMIT_SHA", "m1".into()),
        ("GITLAB_USER_LOGIN", "relay-bot".into()),
        ("HUB_CI_SHA", "c5".into()),
        ("HUB_CI_COMMAND", command.into()),
        ("HUB_CI_AUTHOR", "carol".into()),
        ("HUB_CI_ASSOCIATION", association.into()),
        ("HUB_CI_MR_STATE", "opened".into()),
        ("HUB_CI_FORK", "false".into()),
    ]
}

fn borrowed<'a>(vars: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    vars.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn gitlab_relays_are_honoured_only_when_signed() {
    let maintainers = Access {
        associations: vec!["MAINTAINER".into()],
        ..Access::default()
    };
    let apply = relay("hub apply", "maintainer");
    let event = gitlab_owned(&signed(&borrowed(&apply))).expect("event");
    assert_eq!(event.name, "trigger.comment");
    assert_eq!(event.sha.as_deref(), Some("c5"), "the signed commit");
    assert_eq!(event.author.as_deref(), Some("carol"));
    assert_eq!(event.association.as_deref(), Some("MAINTAINER"));
    assert_eq!(decide(&event, &maintainers), Operation::Apply);
    assert!(matches!(
        decide(&event, &Access::default()),
        Operation::Refused { asked: "apply", .. }
    ));

    let refusal =
        |vars: &[(String, String)]| match decide(&gitlab_owned(vars).expect("event"), &maintainers)
        {
            Operation::Refused {
                asked: "relay",
                reason,
            } => reason,
            other => panic!("not refused: {other:?}"),
        };
    let owned = |vars: &[(&'static str, String)]| -> Vec<(String, String)> {
        vars.iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect()
    };
    // Unsigned: the variables alone prove nothing.
    assert!(refusal(&owned(&apply)).starts_with("`HUB_CI_RELAY_KEY` is not set in this job"));
    let mut keyed = owned(&apply);
    keyed.push((relay::KEY.into(), KEY.into()));
    assert!(refusal(&keyed).starts_with("`HUB_CI_RELAY_SIGNATURE` is not set"));
    // Signed with another key.
    let mut forged = signed(&borrowed(&apply));
    for (name, value) in forged.iter_mut() {
        if name == relay::KEY {
            *value = "another-key".into();
        }
    }
    assert!(refusal(&forged).starts_with("`HUB_CI_RELAY_SIGNATURE` does not match"));
    // A signature replayed for another command or merge request.
    for (field, value) in [
        ("HUB_CI_COMMAND", "hub unlock"),
        ("CI_MERGE_REQUEST_IID", "6"),
    ] {
        let mut replayed = signed(&borrowed(&apply));
        for (name, v) in replayed.iter_mut() {
            if name == field {
                *v = value.into();
            }
        }
        assert!(
            refusal(&replayed).starts_with("`HUB_CI_RELAY_SIGNATURE` does not match"),
            "{field}"
        );
    }
    // Signed, but in a pipeline the merge request's files started.
    let mut in_mr = borrowed(&apply);
    in_mr[1] = ("CI_PIPELINE_SOURCE", "merge_request_event");
    assert_eq!(
        refusal(&signed(&in_mr)),
        "`HUB_CI_COMMAND` is set in a `merge_request_event` pipeline: hub honours a relayed comment or event only in a pipeline the relay started (`CI_PIPELINE_SOURCE` `trigger` or `api`), signed in `HUB_CI_RELAY_SIGNATURE`"
    );
    // Too old, or from the future.
    let mut old = signed(&borrowed(&apply));
    let context = ReadContext {
        now: NOW + 16 * 60,
        ..CONTEXT
    };
    let env: HashMap<String, String> = old.drain(..).collect();
    let late = read(&|n| env.get(n).cloned(), &|_| unreachable!(), &context).expect("event");
    let Operation::Refused { reason, .. } = decide(&late, &maintainers) else {
        panic!("an old signature is refused");
    };
    assert_eq!(reason, "the relay signed this request 960s ago, more than `--relay-max-age` (900s) allows: a signed request is not replayed; the relay starts a new pipeline for each comment");
    // A line break would make the message ambiguous.
    let broken = relay("hub apply\nHUB_CI_AUTHOR=x", "maintainer");
    let mut with_key = owned(&broken);
    with_key.push((relay::KEY.into(), KEY.into()));
    with_key.push((relay::SIGNATURE.into(), "00".into()));
    assert!(refusal(&with_key).starts_with("`HUB_CI_COMMAND` holds a line break"));
}

#[test]
fn gitlab_merges_and_closes_need_the_signed_state() {
    let closing = |event: &str, state: &str| -> Vec<(&'static str, String)> {
        vec![
            ("CI_PIPELINE_SOURCE", "api".into()),
            ("CI_MERGE_REQUEST_IID", "5".into()),
            ("HUB_CI_EVENT", event.into()),
            ("HUB_CI_MR_STATE", state.into()),
        ]
    };
    let decided = |vars: Vec<(&'static str, String)>| {
        decide(
            &gitlab_owned(&signed(&borrowed(&vars))).expect("event"),
            &Access::default(),
        )
    };
    assert_eq!(decided(closing("merged", "merged")), Operation::Merged);
    assert_eq!(decided(closing("closed", "closed")), Operation::Closed);
    assert_eq!(
        decided(closing("merged", "opened")),
        Operation::Refused {
            asked: "relay",
            reason: "`HUB_CI_EVENT` is `merged` but the signed state of the merge request (`HUB_CI_MR_STATE`) is `opened`: hub records a merge or a close only when the merge request's state says so".into()
        }
    );
    assert!(matches!(
        decided(closing("closed", "merged")),
        Operation::Refused { .. }
    ));
    // A comment on a merged merge request is not acted on.
    let mut late = relay("hub apply", "MAINTAINER");
    late[10] = ("HUB_CI_MR_STATE", "merged".into());
    assert!(matches!(
        decided(late),
        Operation::Refused { asked: "relay", .. }
    ));
}

/// The canonical form, byte for byte, as the guide gives it.
#[test]
fn the_signed_message_is_one_line_per_variable_in_a_fixed_order() {
    let vars = relay("hub plan -c app", "MAINTAINER");
    let env: HashMap<&str, String> = vars.iter().cloned().collect();
    let message = relay::message(&|n| env.get(n).cloned()).expect("message");
    assert_eq!(
        message,
        "hub-ci-relay-v1\nCI_PROJECT_ID=1000\nCI_MERGE_REQUEST_IID=5\nHUB_CI_SHA=c5\nHUB_CI_EVENT=\nHUB_CI_COMMAND=hub plan -c app\nHUB_CI_AUTHOR=carol\nHUB_CI_ASSOCIATION=MAINTAINER\nHUB_CI_MR_STATE=opened\nHUB_CI_FORK=false\nHUB_CI_RELAY_TIME=\nCI_PIPELINE_SOURCE=trigger\n"
    );
    // RFC 4231, test case 2: HMAC-SHA256 with the key "Jefe".
    assert_eq!(
        relay::sign(b"Jefe", "what do ya want for nothing?"),
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
}

#[test]
fn the_optional_fields_are_signed_after_the_others_only_when_set() {
    let base: HashMap<&str, String> = [("CI_MERGE_REQUEST_IID", "17".to_string())].into();
    let without = relay::message(&|n| base.get(n).cloned()).expect("message");
    assert!(!without.contains("HUB_CI_MR_AUTHOR"), "{without}");
    let mut with = base.clone();
    with.insert("HUB_CI_MR_AUTHOR", "carol".into());
    with.insert("HUB_CI_MERGE_SHA", "abc1234".into());
    let message = relay::message(&|n| with.get(n).cloned()).expect("message");
    assert_eq!(
        message,
        format!("{without}HUB_CI_MR_AUTHOR=carol\nHUB_CI_MERGE_SHA=abc1234\n")
    );
}

fn review_payload(action: &str, state: &str) -> String {
    serde_json::json!({
        "action": action,
        "review": {"user": {"login": "bob"}, "author_association": "MEMBER", "commit_id": "abc1234", "state": state, "body": "hub apply"},
        "pull_request": {"number": 7, "user": {"login": "alice"}, "head": {"sha": "def5678"}, "base": {"sha": "0001112"}, "mergeable": true}
    })
    .to_string()
}

#[test]
fn reviews_are_recorded_approvals_requests_for_changes_and_dismissals() {
    use hub_state::changes::ReviewState;
    let event = github(
        "pull_request_review",
        &review_payload("submitted", "APPROVED"),
    )
    .expect("event");
    assert_eq!(event.author.as_deref(), Some("bob"));
    assert_eq!(event.change_author.as_deref(), Some("alice"));
    assert_eq!(event.mergeable, Some(true));
    assert_eq!(
        decide(&event, &Access::default()),
        Operation::Review(Review {
            state: ReviewState::Approved,
            commit: Some("abc1234".into())
        })
    );
    for (action, state, expected) in [
        (
            "submitted",
            "changes_requested",
            ReviewState::ChangesRequested,
        ),
        ("dismissed", "dismissed", ReviewState::Dismissed),
    ] {
        let event = github("pull_request_review", &review_payload(action, state)).expect("event");
        assert!(
            matches!(&event.request, Request::Review(r) if r.state == expected),
            "{action} {state}: {:?}",
            event.request
        );
    }
    // A review body is never a command.
    let event = github(
        "pull_request_review",
        &review_payload("submitted", "commented"),
    )
    .expect("event");
    assert!(matches!(event.request, Request::Ignored(_)));
}
