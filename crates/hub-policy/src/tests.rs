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

mod rego {
    use super::*;

    fn rego_set(name: &str, module: &str) -> (tempfile::TempDir, Result<PolicySet, PolicyError>) {
        let dir = tempfile::tempdir().expect("temporary folder");
        let path = dir.path().join(name);
        std::fs::write(&path, module).expect("write");
        let mut set = PolicySet::default();
        let loaded = set.add_file(&path).map(|()| set);
        (dir, loaded)
    }

    const MODULE: &str = "\
package main

deny contains msg if {
\tinput.stack.environment == \"prod\"
\tsome c in input.plan.components
\tc.name == \"db\"
\tc.action in {\"delete\", \"replace\"}
\tmsg := sprintf(\"%s is protected in prod\", [c.name])
}

violation contains {\"msg\": \"no apply on Fridays\", \"details\": {}} if {
\ttime.weekday(time.parse_rfc3339_ns(input.now)) == \"Friday\"
}

warn_small contains msg if {
\tcount([c | some c in input.plan.components; c.action != \"no-op\"]) > 1
\tmsg := \"more than one component changes\"
}

helper := 1
";

    #[test]
    fn a_module_denies_violates_and_warns_with_the_lines_of_its_rules() {
        let (dir, set) = rego_set("policy.rego", MODULE);
        let set = set.expect("parses");
        assert!(set.rules()[0].is_rego());
        let mut friday = input(
            json!([{"name": "db", "action": "replace"}, {"name": "web", "action": "update"}]),
        );
        friday.now = "2026-11-27T10:00:00Z".into();
        let results = evaluate(&set, &friday);
        let seen: Vec<(&str, &str, Option<usize>)> = results
            .results
            .iter()
            .map(|r| (r.verdict.as_str(), r.message.as_str(), r.rule.line))
            .collect();
        assert_eq!(
            seen,
            [
                ("deny", "db is protected in prod", Some(3)),
                ("deny", "no apply on Fridays", Some(11)),
                ("warn", "more than one component changes", Some(15)),
            ]
        );
        let file = dir.path().join("policy.rego");
        assert_eq!(*results.results[0].rule.file, *file);
        assert_eq!(results.results[0].name, "policy.rego");
        assert_eq!(
            results.refusal().expect("denied").to_string(),
            "denied by policy `policy.rego`, `policy.rego`: db is protected in prod"
        );
    }

    #[test]
    fn a_module_that_gives_nothing_passes_once() {
        let (_dir, set) = rego_set("policy.rego", MODULE);
        let mut saturday = input(json!([{"name": "db", "action": "update"}]));
        saturday.now = "2026-11-28T10:00:00Z".into();
        let results = evaluate(&set.expect("parses"), &saturday);
        assert_eq!(results.results.len(), 1);
        assert_eq!(results.results[0].verdict, Verdict::Pass);
        assert!(!results.denied());
        assert_eq!(
            render_text(&results),
            "policies: 1 rule, 0 denied, 0 warned\n"
        );
    }

    #[test]
    fn rego_v0_modules_are_read_too() {
        let module = "package main\n\ndeny[msg] {\n  input.plan.stack == \"demo\"\n  msg := \"v0\"\n}\n\nwarn[\"always\"] { true }\n";
        let (_dir, set) = rego_set("old.rego", module);
        let results = evaluate(&set.expect("parses as v0"), &input(json!([])));
        let seen: Vec<(&str, &str)> = results
            .results
            .iter()
            .map(|r| (r.verdict.as_str(), r.message.as_str()))
            .collect();
        assert_eq!(seen, [("deny", "v0"), ("warn", "always")]);
    }

    #[test]
    fn a_syntax_error_names_the_module_line_and_column() {
        let (dir, set) = rego_set(
            "broken.rego",
            "package main\n\ndeny contains msg if {\n  msg := \n}\n",
        );
        let error = set.expect_err("does not parse");
        let text = error.to_string();
        assert!(
            text.starts_with("the policy `broken.rego` is not valid Rego: 4:7: "),
            "{text}"
        );
        let location = error.location().expect("located");
        assert_eq!(*location.file, *dir.path().join("broken.rego"));
        assert_eq!((location.line, location.column), (Some(4), Some(7)));
        assert!(error.hint().is_some_and(|h| h.contains("Rego v1")));
    }

    #[test]
    fn a_module_over_its_time_is_stopped() {
        let module = "package main\n\ndeny contains \"many\" if {\n  count([1 | some a in numbers.range(1, 2000); some b in numbers.range(1, 2000); some c in numbers.range(1, 2000)]) > 0\n}\n";
        let parsed = crate::rego::Module::parse(
            module,
            "loop.rego",
            crate::rego::Origin::file("loop.rego".into()),
        )
        .expect("parses");
        let started = std::time::Instant::now();
        let budget = hub_params::Budget {
            time: std::time::Duration::from_millis(200),
            ..Default::default()
        };
        let outcomes = crate::rego::evaluate(&[&parsed], &json!({"plan": {}}), budget);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        assert_eq!(
            outcomes,
            [Some(Err(crate::rego::Failure::Budget(
                std::time::Duration::from_millis(200)
            )))]
        );
    }

    #[test]
    fn conftest_rule_names_and_messages() {
        use crate::rego::Severity;
        use crate::rego::{effect_of, findings};
        assert_eq!(effect_of("deny"), Some(Severity::Deny));
        assert_eq!(effect_of("violation_no_public"), Some(Severity::Deny));
        assert_eq!(effect_of("warn_x1"), Some(Severity::Warn));
        for not_a_rule in ["denied", "deny_", "warn__x", "helper", "violation-x"] {
            assert_eq!(effect_of(not_a_rule), None, "{not_a_rule}");
        }
        let found: Vec<String> = findings(&json!({
            "deny": ["a", {"msg": "b", "details": 1}, {"other": 2}],
            "warn": true,
            "violation": false,
            "helper": ["c"],
        }))
        .into_iter()
        .map(|f| format!("{} {}", f.rule, f.message))
        .collect();
        assert_eq!(found, ["deny a", "deny b", "deny {\"other\":2}", "warn "]);
    }

    #[test]
    fn regorus_errors_become_line_column_message() {
        let syntax = crate::rego::syntax(
            "\n--> hub.yaml#r:3:7\n  |\n3 | deny x\n  |       ^\nerror: expecting `{`",
        );
        assert_eq!(syntax.at, Some((3, 7)));
        assert_eq!(syntax.message, "3:7: expecting `{`");
        assert_eq!(
            crate::rego::evaluation_error(
                "--> net.rego:4:12\n  |\n4 | http.send({})\n  |     ^\nerror: could not find function http.send"
            ),
            "net.rego:4:12: could not find function http.send"
        );
        assert_eq!(crate::rego::evaluation_error("no\nplace"), "no place");
    }

    #[test]
    fn an_unsafe_variable_is_refused_when_the_module_is_read() {
        let (_dir, set) = rego_set(
            "unsafe.rego",
            "package main\n\ndeny contains msg if {\n  x == 1\n  msg := \"m\"\n}\n",
        );
        let error = set.expect_err("refused");
        assert!(
            error
                .to_string()
                .starts_with("the policy `unsafe.rego` is not valid Rego: 4:"),
            "{error}"
        );
    }
}

mod places {
    use crate::load::inline_origin;
    use hub_manifest::diag::Location;
    use std::path::Path;

    #[test]
    fn an_inline_block_s_lines_are_the_stack_file_s() {
        let text = "policies:\n  - name: r\n    rego: |\n      package main\n      deny contains \"x\" if { true }\n";
        let at = Location::at(Path::new("hub.yaml"), 3, 5);
        let origin = inline_origin(text, &at);
        let line_2 = origin.at(2, 1);
        assert_eq!((line_2.line, line_2.column), (Some(5), Some(7)));
        // A quoted module: every line is the key's.
        let quoted = "policies:\n  - name: r\n    rego: \"package main\"\n";
        let origin = inline_origin(quoted, &at);
        let line_1 = origin.at(1, 9);
        assert_eq!((line_1.line, line_1.column), (Some(3), Some(5)));
    }

    #[test]
    fn the_resident_size_is_read_on_linux() {
        let size = crate::watch::resident_bytes().expect("/proc/self/status");
        assert!(size > 1 << 20, "{size}");
    }
}
