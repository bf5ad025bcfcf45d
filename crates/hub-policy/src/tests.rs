use super::*;
use serde_json::json;

fn set_from(yaml: &str) -> (tempfile::TempDir, Result<PolicySet, PolicyError>) {
    let dir = tempfile::tempdir().expect("temporary folder");
    let path = dir.path().join("policies.yaml");
    std::fs::write(&path, yaml).expect("write");
    let mut set = PolicySet::default();
    let loaded = set.add_file(&path).map(|()| set);
    (dir, loaded)
}

fn input(components: serde_json::Value) -> PolicyInput {
    PolicyInput {
        plan: json!({"stack": "demo", "verb": "deploy", "components": components}),
        change: hub_plan::change::ChangeContext::default(),
        stack: StackFacts {
            name: "demo".into(),
            environment: "prod".into(),
            annotations: Default::default(),
        },
        now: "2026-11-27T10:00:00Z".into(),
    }
}

const RULES: &str = "\
# rules
- name: protected
  deny: >-
    stack.environment == 'prod' &&
    plan.components.exists(c, c.name == 'db' && c.action in ['delete', 'replace'])
  message: the database is protected in prod
- name: small
  warn: plan.components.filter(c, c.action != 'no-op').size() > 1
  message: more than one component changes
- name: fridays
  deny: timestamp(now).getDayOfWeek() == 5 && change.id == ''
  message: no apply on Fridays outside a change
";

#[test]
fn rules_deny_and_warn_with_their_lines() {
    let (dir, set) = set_from(RULES);
    let set = set.expect("rules compile");
    let lines: Vec<Option<usize>> = set.rules().iter().map(|r| r.location.line).collect();
    assert_eq!(lines, [Some(3), Some(8), Some(11)]);
    let results = evaluate(
        &set,
        &input(json!([{"name": "db", "action": "replace"}, {"name": "web", "action": "update"}])),
    );
    let verdicts: Vec<&str> = results.results.iter().map(|r| r.verdict.as_str()).collect();
    assert_eq!(verdicts, ["deny", "warn", "deny"]);
    assert!(results.denied());
    let file = dir.path().join("policies.yaml").display().to_string();
    assert_eq!(
        render_text(&results),
        format!(
            "policies: 3 rules, 2 denied, 1 warned\n  \
             deny  protected ({file}:3): the database is protected in prod\n  \
             warn  small ({file}:8): more than one component changes\n  \
             deny  fridays ({file}:11): no apply on Fridays outside a change\n"
        )
    );
    let refusal = results.refusal().expect("denied");
    assert_eq!(
        refusal.to_string(),
        "denied by policy `protected`, `fridays`: the database is protected in prod"
    );
}

#[test]
fn a_quiet_plan_passes() {
    // The same rules under `policies:`.
    let nested: String = RULES.lines().map(|l| format!("  {l}\n")).collect();
    let (_dir, set) = set_from(&format!("policies:\n{nested}"));
    let set = set.expect("rules compile");
    let mut quiet = input(json!([{"name": "db", "action": "update"}]));
    quiet.now = "2026-11-28T10:00:00Z".into();
    let results = evaluate(&set, &quiet);
    assert!(!results.denied());
    assert_eq!(results.fired().count(), 0);
    assert_eq!(
        render_markdown(&results),
        "\n#### Policies: 3 rules, 0 denied, 0 warned\n"
    );
}

#[test]
fn a_rule_that_does_not_compile_names_its_line() {
    let (_dir, set) =
        set_from("- name: ok\n  warn: 'true'\n- name: broken\n  deny: plan.components.exists(c,\n");
    let error = set.expect_err("does not compile");
    assert!(
        matches!(&error, PolicyError::Compile { name, .. } if name == "broken"),
        "{error}"
    );
    assert_eq!(error.location().and_then(|l| l.line), Some(4));
    assert!(error.hint().is_some_and(|h| h.contains("CEL")));
}

#[test]
fn a_rule_needs_one_effect() {
    let (_dir, set) = set_from("- name: both\n  deny: 'true'\n  warn: 'true'\n");
    assert_eq!(
        set.expect_err("refused").to_string(),
        "the policy `both` has both `deny` and `warn`"
    );
    let (_dir, set) = set_from("- name: none\n  message: x\n");
    assert_eq!(
        set.expect_err("refused").to_string(),
        "the policy `none` has neither `deny` nor `warn`"
    );
}

#[test]
fn a_misspelt_key_is_refused_with_the_key_meant() {
    let (_dir, set) = set_from("- name: typo\n  message: m\n  dney: 'true'\n");
    let error = set.expect_err("refused");
    assert_eq!(
        error.to_string(),
        "the policy `typo` has an unknown key `dney` (did you mean `deny`?)"
    );
    assert_eq!(error.location().and_then(|l| l.line), Some(3));
}

#[test]
fn a_rule_that_gives_no_answer_is_an_error_that_denies() {
    let (_dir, set) = set_from("- name: count\n  deny: size(plan.components)\n");
    let results = evaluate(&set.expect("compiles"), &input(json!([])));
    assert!(results.denied());
    let failure = results.refusal().expect("fails");
    assert_eq!(
        failure.to_string(),
        "the policy `count` cannot be evaluated: the rule gives int `0`, not true or false"
    );
    assert_eq!(failure.location().and_then(|l| l.line), Some(2));
}

#[test]
fn results_follow_the_plan_json_as_its_last_key() {
    let (_dir, set) = set_from("- name: w\n  warn: 'true'\n  message: m\n");
    let results = evaluate(&set.expect("compiles"), &input(json!([])));
    let text = json_with_results("{\n  \"stack\": \"demo\"\n}\n", &results);
    let parsed: serde_json::Value = serde_json::from_str(&text).expect("JSON");
    assert_eq!(parsed["policies"][0]["result"], "warn");
    assert_eq!(parsed["policies"][0]["effect"], "warn");
    assert!(text.starts_with("{\n  \"stack\": \"demo\",\n  \"policies\": [\n    {\n"));
}

#[test]
fn the_environment_is_the_annotation_else_a_plain_stack_parameter() {
    let stack = |annotation: Option<&str>, parameter: &str| {
        let mut elaborated = hub_manifest::Elaborated::default();
        elaborated.stack.meta.name = "shop".into();
        if let Some(value) = annotation {
            elaborated
                .stack
                .meta
                .annotations
                .insert("environment".into(), value.into());
        }
        elaborated.stack.parameters.push(hub_manifest::Parameter {
            name: "environment".into(),
            value: Some(yaml_serde::Value::String(parameter.into())),
            ..Default::default()
        });
        StackFacts::of(&elaborated).environment
    };
    assert_eq!(stack(Some("prod"), "staging"), "prod");
    assert_eq!(stack(None, "staging"), "staging");
    assert_eq!(
        stack(None, "${dns.name}"),
        "",
        "a template is not known before locking"
    );
}
