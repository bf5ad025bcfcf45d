use super::*;
use crate::PromptRequest;

fn stack(yaml: &str) -> Manifest {
    yaml_serde::from_str(yaml).expect("stack yaml")
}

/// Locks without `-e` overrides and with an empty environment.
fn lock_plain(stack: &Manifest, warnings: &mut Warnings) -> Result<Locked, ParamsError> {
    lock(
        stack,
        LockOptions::new(&IndexMap::new(), &|_: &str| None),
        warnings,
    )
}

/// Answers from a list and records what was asked.
struct Answers {
    answers: Vec<Option<String>>,
    asked: Vec<PromptRequest>,
}

impl Prompter for Answers {
    fn ask(&mut self, request: &PromptRequest) -> Result<Option<String>, String> {
        self.asked.push(request.clone());
        if self.answers.is_empty() {
            return Err("no more answers".into());
        }
        Ok(self.answers.remove(0))
    }
}

fn text(locked: &Locked, name: &str) -> String {
    substitution_text(locked.value(name))
}

#[test]
fn flatten_inherits_kind_empty_and_component() {
    let s = stack("parameters:\n- name: a\n  kind: user\n  component: c\n  parameters:\n  - name: b\n  - name: d\n    kind: tech\n    parameters:\n    - {name: e, empty: allow}\n- {name: f}\n");
    let flat: Vec<(String, String, String, String, usize)> = flatten(&s.parameters)
        .into_iter()
        .map(|(p, i)| {
            let p = p.into_owned();
            let empty = p.empty().to_string();
            (p.name, p.kind, p.component, empty, i)
        })
        .collect();
    assert_eq!(
        flat,
        vec![
            ("a.b".into(), "user".into(), "c".into(), String::new(), 0),
            ("a.d.e".into(), "tech".into(), "c".into(), "allow".into(), 0),
            ("f".into(), String::new(), String::new(), String::new(), 1),
        ]
    );
}

#[test]
fn prompt_comes_after_env_and_file_and_before_default() {
    let s = stack("meta: {name: 'demo:x'}\nparameters:\n- {name: from.env, kind: user, fromEnv: V}\n- {name: asked, kind: user, brief: Asked, default: d}\n- {name: db.password, kind: user}\n- {name: falls.back, kind: user, default: dv}\n- {name: quiet, kind: user, empty: allow}\n");
    let overrides = IndexMap::new();
    let environment = |name: &str| (name == "V").then(|| "env".to_string());
    let mut answers = Answers {
        answers: vec![Some("typed value".into()), Some("hunter2".into()), None],
        asked: Vec::new(),
    };
    let mut options = LockOptions::new(&overrides, &environment);
    options.prompter = Some(&mut answers);
    let locked = lock(&s, options, &mut Warnings::default()).expect("locks");
    assert_eq!(text(&locked, "from.env"), "env");
    assert_eq!(
        text(&locked, "asked"),
        "typed value",
        "whole line, spaces kept"
    );
    assert_eq!(
        locked.get("asked").map(|p| p.origin()),
        Some(&Origin::Prompt)
    );
    assert_eq!(text(&locked, "db.password"), "hunter2");
    assert_eq!(
        text(&locked, "falls.back"),
        "dv",
        "empty answer falls through to the default"
    );
    assert_eq!(text(&locked, "quiet"), "", "`empty: allow` is not asked");
    assert_eq!(text(&locked, "hub.stackName"), "demo");
    let asked: Vec<(&str, bool)> = answers
        .asked
        .iter()
        .map(|r| (r.qualified_name.as_str(), r.secret))
        .collect();
    assert_eq!(
        asked,
        vec![
            ("asked", false),
            ("db.password", true),
            ("falls.back", false)
        ]
    );
    assert_eq!(answers.asked[0].text(), "Enter value for Asked (asked) [d]");
}

#[test]
fn missing_values_are_listed_together_without_a_terminal() {
    let s = stack("parameters:\n- {name: p1, kind: user}\n- {name: p2, kind: user, fromEnv: P2}\n- {name: x, value: '${nope}'}\n");
    let error = lock_plain(&s, &mut Warnings::default()).expect_err("missing");
    let ParamsError::Lock { problems, .. } = &error else {
        panic!("{error}")
    };
    assert!(
        matches!(&problems[0], Problem::Missing(m) if m.len() == 2),
        "{problems:?}"
    );
    assert!(
        matches!(&problems[1], Problem::Unknown { names, .. } if names == &["nope".to_string()])
    );
}

#[test]
fn implicit_parameters_fill_empty_declarations() {
    let s = stack("meta: {name: demo}\nparameters:\n- {name: hub.stackName, env: NAME}\n- {name: label, value: '${hub.stackName}-${hub.deploymentId}'}\n");
    let overrides = IndexMap::new();
    let environment = |_: &str| None;
    let mut options = LockOptions::new(&overrides, &environment);
    options.deployment_id = Some("id".into());
    let locked = lock(&s, options, &mut Warnings::default()).expect("locks");
    assert_eq!(text(&locked, "label"), "demo-id");
    assert_eq!(locked.get("hub.stackName").map(|p| p.env()), Some("NAME"));
    assert_eq!(
        locked.get("hub.deploymentId").map(|p| p.env()),
        Some("DEPLOYMENT_ID")
    );
}

#[test]
fn links_stay_raw_but_expand_where_used() {
    let s = stack("parameters:\n- {name: n, value: demo}\n- {name: img, kind: link, value: '${n}:1'}\n- {name: ref, value: 'x-${img}'}\n- {name: out, kind: link, value: '${ecr:image}'}\n");
    let locked = lock_plain(&s, &mut Warnings::default()).expect("locks");
    assert_eq!(
        text(&locked, "img"),
        "${n}:1",
        "a link keeps its expression"
    );
    assert_eq!(text(&locked, "ref"), "x-demo:1");
    assert_eq!(
        text(&locked, "out"),
        "${ecr:image}",
        "unused links are not expanded"
    );
    let s = stack("parameters:\n- {name: out, kind: link, value: '${ecr:image}'}\n- {name: ref, value: '${out}'}\n");
    let error = lock_plain(&s, &mut Warnings::default()).expect_err("unknown");
    assert!(
        error
            .to_string()
            .contains("`out` references unknown `ecr:image`"),
        "{error}"
    );
}

#[test]
fn non_user_defaults_warn_and_empty_values_stay_null() {
    let s = stack("parameters:\n- {name: x, default: d}\n");
    let mut warnings = Warnings::default();
    let locked = lock_plain(&s, &mut warnings).expect("locks");
    assert_eq!(locked.value("x"), None);
    assert_eq!(locked.get("x").map(|p| p.origin()), Some(&Origin::Unset));
    assert!(warnings
        .iter()
        .any(|w| w.message.contains("`x`") && w.message.contains("default")));
}

#[test]
fn qualified_parameters_expand_with_their_qualifier() {
    let s = stack("parameters:\n- {name: host, value: plain}\n- {name: host, component: a, value: qualified}\n- {name: url, component: a, value: 'https://${host}'}\n- {name: url, value: 'https://${host}'}\n- {name: n, value: 5}\n- {name: list, value: '${n}-#{[1, 2].size()}'}\n");
    let locked = lock_plain(&s, &mut Warnings::default()).expect("locks");
    assert_eq!(text(&locked, "url|a"), "https://qualified");
    assert_eq!(text(&locked, "url"), "https://plain");
    assert_eq!(text(&locked, "list"), "5-2");
    assert_eq!(
        locked.value("n"),
        Some(&Value::Number(5.into())),
        "non-strings stay as they are"
    );
}

#[test]
fn a_name_declared_twice_keeps_the_first_slot_and_the_last_value() {
    let s = stack("parameters:\n- {name: y, value: z}\n- {name: x, env: FIRST, value: '${y}-1'}\n- {name: hub.stackName, value: mine}\n- {name: x, env: SECOND, value: '${y}-2'}\n- {name: w, value: a}\n- {name: w, value: b}\n");
    let locked = lock_plain(&s, &mut Warnings::default()).expect("locks");
    let names: Vec<&str> = locked.params.keys().map(|k| &**k).collect();
    assert_eq!(names, ["hub.deploymentId", "y", "x", "hub.stackName", "w"]);
    let x = locked.get("x").expect("x");
    assert_eq!((x.env(), x.expression()), ("FIRST", Some("${y}-1")));
    assert_eq!(text(&locked, "x"), "z-2");
    assert_eq!(text(&locked, "w"), "b");
    assert_eq!(text(&locked, "hub.stackName"), "mine");
    assert_eq!(
        locked.get("hub.stackName").map(|p| p.origin()),
        Some(&Origin::Value)
    );
}

#[test]
fn taking_the_list_locks_as_borrowing_it_does() {
    // Names declared again (templates and plain values in each order),
    // implicit names declared empty, with a value and again, a group, a
    // link and a value from the environment.
    let s = stack(
        "meta: {name: demo}\nparameters:\n\
         - {name: y, value: z}\n\
         - {name: t, value: '${y}-1'}\n- {name: t, value: plain}\n\
         - {name: p, value: plain}\n- {name: p, value: '${y}-2'}\n\
         - {name: q, value: '${y}-3'}\n- {name: q, value: '${y}-4'}\n- {name: q}\n\
         - {name: hub.deploymentId}\n- {name: hub.deploymentId, value: 'id-${y}'}\n\
         - {name: hub.stackName, value: '${y}'}\n- {name: hub.stackName, value: 'other-${y}'}\n\
         - {name: g, component: c, kind: tech, parameters: [{name: a, value: '${y}'}, {name: b, env: B}]}\n\
         - {name: l, kind: link, value: '${y}:1'}\n- {name: r, value: 'x-${l}'}\n\
         - {name: db.password, value: '#{\"s\" + \"3\"}'}\n\
         - {name: e, kind: user, fromEnv: E}\n",
    );
    let overrides = IndexMap::new();
    let environment = |name: &str| (name == "E").then(|| "from env".to_string());
    let options = || {
        let mut options = LockOptions::new(&overrides, &environment);
        options.deployment_id = Some("given".into());
        options
    };
    let (mut borrowed_warnings, mut owned_warnings) = (Warnings::default(), Warnings::default());
    let borrowed = lock(&s, options(), &mut borrowed_warnings).expect("locks");
    let owned =
        lock_owned(&s, s.parameters.clone(), options(), &mut owned_warnings).expect("locks");
    assert_eq!(owned, borrowed);
    assert_eq!(
        format!("{owned_warnings:?}"),
        format!("{borrowed_warnings:?}")
    );
    let q = borrowed.get("q").expect("q");
    assert_eq!(
        (text(&borrowed, "q"), q.expression()),
        ("z-4".into(), Some("${y}-3"))
    );
    let p = borrowed.get("p").expect("p");
    assert_eq!(
        (text(&borrowed, "p"), p.expression()),
        ("z-2".into(), Some("plain"))
    );
    assert_eq!(text(&borrowed, "t"), "plain");
    assert_eq!(text(&borrowed, "hub.deploymentId"), "id-z");
    assert_eq!(text(&borrowed, "hub.stackName"), "other-z");
    assert_eq!(text(&borrowed, "g.a|c"), "z");
    // Without an owned list the stack's own is not read.
    let empty = lock_owned(&s, Vec::new(), options(), &mut Warnings::default()).expect("locks");
    let names: Vec<&str> = empty.params.keys().map(|k| &**k).collect();
    assert_eq!(names, ["hub.deploymentId", "hub.stackName"]);
}
