use super::*;
use crate::cel::{Cel, CelFailure, Predicates};
use serde_json::json;
use std::time::Instant;

const TWENTY: &str = "[0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19]";

/// `TWENTY.all(a, TWENTY.all(b, … true))`, `depth` deep: 20^depth steps.
fn nested_all(depth: usize) -> String {
    let mut rule = "true".to_string();
    for level in 0..depth {
        rule = format!("{TWENTY}.all(v{level}, {rule})");
    }
    rule
}

/// Lists that grow sixteenfold a level: 16^6 elements copied.
fn hungry() -> String {
    let sixteen = |v: &str| format!("[{}]", vec![v; 16].join(","));
    let mut rule = sixteen("e");
    for (outer, inner) in [("d", "e"), ("c", "d"), ("b", "c"), ("a", "b")] {
        rule = format!("[{}].map({inner}, {rule})", sixteen(outer));
        let _ = outer;
    }
    format!("[{TWENTY}].map(a, {rule}).size() == 0")
}

fn small() -> Budget {
    Budget {
        steps: 100_000,
        memory: 8 << 20,
        time: Duration::from_secs(5),
    }
}

fn evaluate(rule: &str, budget: Budget) -> Result<bool, CelFailure> {
    let predicates = Predicates::default();
    let predicate = predicates.compile(rule)?;
    let plan = json!({"components": [{"name": "db"}]});
    predicates.evaluate_within(&predicate, &[("plan", &plan)], budget)
}

#[test]
fn a_rule_that_loops_for_ever_stops_on_its_steps() {
    let started = Instant::now();
    let failure = evaluate(&format!("!({})", nested_all(7)), small()).expect_err("stops");
    assert_eq!(
        failure,
        CelFailure::Budget(
            "it ran over its budget of 100000 steps (loop iterations, HUB_CEL_MAX_STEPS)".into()
        )
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn a_rule_that_copies_lists_stops_on_its_memory() {
    let failure = evaluate(&hungry(), small()).expect_err("stops");
    assert_eq!(
        failure,
        CelFailure::Budget("it ran over its budget of 8 MB of memory (HUB_CEL_MAX_MEMORY)".into())
    );
}

#[test]
fn a_rule_that_runs_too_long_stops_on_its_time() {
    let budget = Budget {
        steps: u64::MAX,
        memory: u64::MAX,
        time: Duration::from_millis(50),
    };
    let failure = evaluate(&nested_all(7), budget).expect_err("stops");
    assert_eq!(
        failure,
        CelFailure::Budget("it ran over its budget of 50 ms (HUB_CEL_MAX_TIME)".into())
    );
}

#[test]
fn a_budget_error_swallowed_by_the_rule_still_fails_it() {
    // `err || true` is `true` in CEL, and `all` drops an error when a later
    // element is false: the spent budget wins over both.
    for rule in [
        format!("{} || true", nested_all(5)),
        format!("[1, 2].all(x, {} && x == 1)", nested_all(5)),
    ] {
        assert!(
            matches!(evaluate(&rule, small()), Err(CelFailure::Budget(_))),
            "{rule}"
        );
    }
}

#[test]
fn ordinary_rules_are_within_any_sane_budget() {
    assert_eq!(
        evaluate("plan.components.exists(c, c.name == 'db')", small()),
        Ok(true)
    );
    assert_eq!(evaluate(&nested_all(3), small()), Ok(true));
    assert_eq!(
        evaluate(
            "[1, 2, 3].map(x, x * 2).filter(y, y > 2).size() == 2",
            small()
        ),
        Ok(true)
    );
    assert_eq!(
        evaluate("{'a': [1, 2]}['a'] + [3] == [1, 2, 3]", small()),
        Ok(true)
    );
}

#[test]
fn parameter_expressions_have_the_same_budget() {
    let cel = Cel::default();
    let compiled = cel.compile(&nested_all(7)).expect("parses");
    assert_eq!(
        cel.evaluate_within(&compiled, |_| None, small()),
        Err(CelFailure::Budget(
            "it ran over its budget of 100000 steps (loop iterations, HUB_CEL_MAX_STEPS)".into()
        ))
    );
    let compiled = cel.compile(&hungry()).expect("parses");
    assert!(matches!(
        cel.evaluate_within(&compiled, |_| None, small()),
        Err(CelFailure::Budget(_))
    ));
    let compiled = cel.compile("[1, 2, 3].map(x, x + 1)").expect("parses");
    assert_eq!(cel.evaluate(&compiled, |_| None), Ok("[2,3,4]".into()));
}

#[test]
fn sizes_and_durations_are_read_with_their_units() {
    assert_eq!(parse_size("256MB"), Some(256 << 20));
    assert_eq!(parse_size("1 GB"), Some(1 << 30));
    assert_eq!(parse_size("4096"), Some(4096));
    assert_eq!(parse_size("lots"), None);
    assert_eq!(parse_time("5s"), Some(Duration::from_secs(5)));
    assert_eq!(parse_time("500ms"), Some(Duration::from_millis(500)));
    assert_eq!(parse_time("5 days"), None);
}

#[test]
fn one_loop_over_slow_work_stops_on_its_time_too() {
    // No loop nests here: only the clock read on iterations stops it.
    let numbers: Vec<String> = (0..3000).map(|n| n.to_string()).collect();
    let rule = format!("[{}].all(i, plan.a == plan.b)", numbers.join(","));
    let text = "x".repeat(4 << 20);
    let plan = json!({"a": text, "b": text});
    let predicates = Predicates::default();
    let predicate = predicates.compile(&rule).expect("parses");
    let budget = Budget {
        steps: u64::MAX,
        memory: u64::MAX,
        time: Duration::from_millis(50),
    };
    let started = Instant::now();
    let failure = predicates
        .evaluate_within(&predicate, &[("plan", &plan)], budget)
        .expect_err("stops");
    assert_eq!(
        failure,
        CelFailure::Budget("it ran over its budget of 50 ms (HUB_CEL_MAX_TIME)".into())
    );
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}
