use super::*;
use std::collections::HashMap;

fn github(name: &str, payload: &str) -> Result<Event, CiError> {
    let env: HashMap<&str, String> = [
        ("GITHUB_EVENT_NAME", name.to_string()),
        ("GITHUB_EVENT_PATH", "/event.json".to_string()),
    ]
    .into();
    let payload = payload.to_string();
    read(&|n| env.get(n).cloned(), &|_| Ok(payload.clone()))
}

fn gitlab(vars: &[(&str, &str)]) -> Result<Event, CiError> {
    let env: HashMap<String, String> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    read(&|n| env.get(n).cloned(), &|_| unreachable!("no payload"))
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
    assert_eq!(ok("hub plan").verb, Verb::Plan);
    assert_eq!(ok("hub plan -c a,b\nthanks").components, ["a", "b"]);
    assert_eq!(
        ok("  hub plan -ca -c=b --components c+").components,
        ["a", "b", "c+"]
    );
    assert_eq!(ok("hub apply\r\n").verb, Verb::Apply);
    assert_eq!(ok("hub unlock").verb, Verb::Unlock);
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

#[test]
fn pull_requests_autoplan_and_close() {
    let pr = |action: &str, merged: bool| {
        serde_json::json!({
            "action": action, "number": 42,
            "pull_request": {"number": 42, "merged": merged, "user": {"login": "alice"},
                "author_association": "CONTRIBUTOR",
                "head": {"sha": "h1"}, "base": {"sha": "b1"}},
            "sender": {"login": "alice"}
        })
        .to_string()
    };
    let access = Access::default();
    for action in ["opened", "synchronize", "reopened"] {
        let event = github("pull_request", &pr(action, false)).expect("event");
        assert_eq!(event.name, format!("pull_request.{action}"));
        assert_eq!(event.change.as_deref(), Some("42"));
        assert_eq!(event.sha.as_deref(), Some("h1"));
        assert_eq!(
            decide(&event, &access),
            Operation::Autoplan {
                base: Some("b1".into())
            }
        );
    }
    let merged = github("pull_request", &pr("closed", true)).expect("event");
    assert_eq!(decide(&merged, &access), Operation::Merged);
    let closed = github("pull_request", &pr("closed", false)).expect("event");
    assert_eq!(decide(&closed, &access), Operation::Closed);
    let labeled = github("pull_request", &pr("labeled", false)).expect("event");
    assert_eq!(decide(&labeled, &access).name(), "nothing");
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
    assert_eq!(decide(&plan, &Access::default()).name(), "plan");
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
        read(&|_| None, &|_| unreachable!()),
        Err(CiError::NoEvent)
    ));
}

#[test]
fn gitlab_merge_request_pipelines() {
    let base = [
        ("GITLAB_CI", "true"),
        ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ("CI_MERGE_REQUEST_IID", "5"),
        ("CI_COMMIT_SHA", "c5"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "d5"),
        ("GITLAB_USER_LOGIN", "carol"),
    ];
    let event = gitlab(&base).expect("event");
    assert_eq!(
        decide(&event, &Access::default()),
        Operation::Autoplan {
            base: Some("d5".into())
        }
    );
    let mut command = base.to_vec();
    command.push(("HUB_CI_COMMAND", "hub apply"));
    let event = gitlab(&command).expect("event");
    assert!(matches!(
        decide(&event, &Access::default()),
        Operation::Refused { asked: "apply", .. }
    ));
    let carol = Access {
        users: vec!["carol".into()],
        ..Access::default()
    };
    assert_eq!(decide(&event, &carol).name(), "apply");
    command.push(("HUB_CI_ASSOCIATION", "maintainer"));
    let maintainers = Access {
        associations: vec!["MAINTAINER".into()],
        users: Vec::new(),
    };
    assert_eq!(
        decide(&gitlab(&command).expect("event"), &maintainers).name(),
        "apply"
    );
    let mut merged = base.to_vec();
    merged[1] = ("CI_PIPELINE_SOURCE", "trigger");
    merged.push(("HUB_CI_EVENT", "merged"));
    assert_eq!(
        decide(&gitlab(&merged).expect("event"), &Access::default()),
        Operation::Merged
    );
    let push = gitlab(&[("GITLAB_CI", "true"), ("CI_PIPELINE_SOURCE", "push")]).expect("event");
    assert_eq!(decide(&push, &Access::default()).name(), "nothing");
    let no_iid = gitlab(&[("CI_PIPELINE_SOURCE", "merge_request_event")]).expect_err("no iid");
    assert_eq!(no_iid.to_string(), "GitLab sets no `CI_MERGE_REQUEST_IID`");
}
