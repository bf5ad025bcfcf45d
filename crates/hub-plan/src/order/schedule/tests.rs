use super::*;
use hub_manifest::{ComponentRef, Depends, Manifest};

fn stack(order: &[&str], depends: &[(&str, &[&str])]) -> Elaborated {
    let mut stack = Manifest {
        kind: "stack".into(),
        ..Manifest::default()
    };
    for name in order {
        let deps = depends
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, d)| d.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
        stack.components.push(ComponentRef {
            name: name.to_string(),
            depends: deps,
            ..ComponentRef::default()
        });
    }
    stack.lifecycle.order = order.iter().map(|s| s.to_string()).collect();
    let components = order
        .iter()
        .map(|n| {
            let mut m = Manifest::default();
            m.meta.name = n.to_string();
            m
        })
        .collect();
    let mut e = Elaborated {
        stack,
        components,
        ..Elaborated::default()
    };
    // As elaborate leaves a stack that orders itself by `depends`.
    e.provenance.order_derived = true;
    e
}

fn plan(
    verb: Verb,
    selection: Selection,
    guess: Option<&dyn Fn(&str) -> bool>,
) -> Result<Schedule, ScheduleError> {
    let e = stack(&["a", "b", "c"], &[("b", &["a"])]);
    let order = validate(&e)?;
    Schedule::new(&e, order, verb, &selection, guess)
}

fn sel(components: &[&str], offset: Option<&str>, limit: Option<&str>) -> Selection {
    Selection {
        components: components.iter().map(|s| s.to_string()).collect(),
        offset: offset.map(String::from),
        limit: limit.map(String::from),
        ..Selection::default()
    }
}

#[test]
fn undeploy_runs_in_reverse_with_offset_and_limit_in_that_order() {
    let p = plan(Verb::Undeploy, sel(&[], Some("c"), Some("a")), None).unwrap();
    assert_eq!(p.selected, ["c", "b", "a"]);
    let error = plan(Verb::Deploy, sel(&[], Some("c"), Some("a")), None).unwrap_err();
    assert!(matches!(error, ScheduleError::LimitBeforeOffset { .. }));
}

#[test]
fn components_run_in_lifecycle_order() {
    let p = plan(Verb::Deploy, sel(&["c", "a"], None, None), None).unwrap();
    assert_eq!(p.selected, ["a", "c"]);
    assert!(plan(Verb::Deploy, sel(&["a"], Some("b"), None), None).is_err());
    assert!(matches!(
        plan(Verb::Deploy, sel(&["nope"], None, None), None),
        Err(ScheduleError::UnknownSelected { .. })
    ));
}

#[test]
fn picks_read_plus_signs_on_either_side() {
    let parsed: Vec<(&str, bool, bool)> = ["a", "a+", "+a", "+a+"]
        .iter()
        .map(|e| Pick::parse(e))
        .map(|p| (p.name, p.dependencies, p.dependents))
        .collect();
    assert_eq!(
        parsed,
        [
            ("a", false, false),
            ("a", true, false),
            ("a", false, true),
            ("a", true, true)
        ]
    );
    let widened = Selection {
        components: vec!["a".into(), "+b".into()],
        with_deps: true,
        ..Selection::default()
    };
    let picks: Vec<Pick> = widened.picks().collect();
    assert!(picks.iter().all(|p| p.dependencies));
    assert_eq!(widened.widened_to_dependents(&["a", "b"]), ["+a", "+b"]);
    let written: Vec<String> = widened.picks().map(|p| p.to_string()).collect();
    assert_eq!(written, ["a+", "+b+"]);
}

#[test]
fn widening_follows_depends_but_not_the_written_order() {
    // `d` declares no `depends`: the written order alone puts it after
    // `c`, which depends on `a`.
    let mut e = stack(&["a", "b", "c", "d"], &[("c", &["a"])]);
    e.provenance.order_derived = false;
    let order = validate(&e).unwrap();
    let select = |entries: &[&str]| {
        let selection = sel(entries, None, None);
        Schedule::new(&e, order.clone(), Verb::Deploy, &selection, None).unwrap()
    };
    assert_eq!(select(&["c+"]).selected, ["a", "c"]);
    assert_eq!(select(&["d+"]).selected, ["d"]);
    let p = select(&["+a"]);
    assert_eq!(p.selected, ["a", "c"]);
    assert_eq!(p.added[0].to_string(), "c (it depends on `a`)");
    assert!(p.selection_text().is_some());
    assert_eq!(select(&["a", "c"]).selection_text(), None);
    let refused = Schedule::new(
        &e,
        order.clone(),
        Verb::Deploy,
        &Selection {
            with_deps: true,
            ..Selection::default()
        },
        None,
    );
    assert_eq!(refused, Err(ScheduleError::WideningWithoutComponents));
}

#[test]
fn deployed_dependents_outside_the_selection_hold_an_undeploy() {
    let e = stack(&["a", "b", "c"], &[("b", &["a"]), ("c", &["b"])]);
    let order = validate(&e).unwrap();
    let p = Schedule::new(&e, order, Verb::Undeploy, &sel(&["a"], None, None), None).unwrap();
    let all = |_: &str| true;
    let held = p.deployed_dependents(&all);
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].to_string(), "`b` depends on `a` (`depends`)");
    let none = |_: &str| false;
    assert!(p.deployed_dependents(&none).is_empty());
}

#[test]
fn undeploy_guess_skips_trailing_components_without_entry() {
    let has = |c: &str| c == "a";
    let p = plan(Verb::Undeploy, Selection::default(), Some(&has)).unwrap();
    assert_eq!(p.selected, ["a"]);
    assert_eq!(p.offset.as_deref(), Some("a"));
    let p = plan(Verb::Undeploy, Selection::default(), None).unwrap();
    assert_eq!(p.selected, ["c", "b", "a"]);
}

#[test]
fn structural_checks() {
    let mut e = stack(&["a", "b"], &[]);
    e.stack.lifecycle.order = vec!["a".into()];
    assert!(matches!(validate(&e), Err(ScheduleError::Order { .. })));
    let mut e = stack(&["a", "b"], &[("b", &["zz"])]);
    assert!(matches!(
        validate(&e),
        Err(ScheduleError::UnknownDependency { .. })
    ));
    e.stack.components[1].depends = Depends::default();
    e.stack.lifecycle.optional = vec!["q".into()];
    assert!(matches!(
        validate(&e),
        Err(ScheduleError::UnknownListed { .. })
    ));
    let mut e = stack(&["a", "b"], &[]);
    e.components.pop();
    assert!(matches!(
        validate(&e),
        Err(ScheduleError::MissingDocument(_))
    ));
}

#[test]
fn timeouts_must_name_components_and_read_as_durations() {
    let entry = |name: &str, value: &str| (name.to_string(), value.to_string());
    let mut e = stack(&["a", "b"], &[]);
    e.stack.lifecycle.timeouts = [entry("a", "1h30m"), entry("b", "0")].into_iter().collect();
    assert!(validate(&e).is_ok());
    e.stack.lifecycle.timeouts = [entry("bb", "5m")].into_iter().collect();
    assert_eq!(
        validate(&e),
        Err(ScheduleError::UnknownListed {
            list: "lifecycle.timeouts",
            name: "bb".into(),
            suggestion: Some("b".into()),
        })
    );
    e.stack.lifecycle.timeouts = [entry("a", "5 minutes")].into_iter().collect();
    let error = validate(&e).expect_err("not a duration");
    assert!(
        matches!(&error, ScheduleError::BadTimeout { component, value, .. } if component == "a" && value == "5 minutes"),
        "{error:?}"
    );
    assert!(error.to_string().contains("`5 minutes` is not a duration"));
}

#[test]
fn an_empty_order_is_derived_from_depends() {
    let mut e = stack(&["b", "a"], &[("b", &["a"])]);
    e.stack.lifecycle.order.clear();
    assert_eq!(validate(&e).unwrap(), ["a", "b"]);
}

#[test]
fn optional_and_mandatory() {
    let mut e = stack(&["a", "b"], &[]);
    let order = validate(&e).unwrap();
    let p = Schedule::new(&e, order.clone(), Verb::Deploy, &Selection::default(), None).unwrap();
    assert!(!p.is_optional("a"));
    e.stack.lifecycle.mandatory = vec!["b".into()];
    let p = Schedule::new(&e, order, Verb::Deploy, &Selection::default(), None).unwrap();
    assert!(p.is_optional("a") && !p.is_optional("b"));
}

#[test]
fn tuning_terms_and_conditions() {
    let t = Tuning::parse(&[
        "vault".into(),
        "cdn:app".into(),
        "f.on:app".into(),
        "x:".into(),
        ":y".into(),
    ]);
    assert_eq!(t.terms.len(), 3);
    assert!(t.optional_requirement("vault", "any"));
    assert!(t.optional_requirement("cdn", "app") && !t.optional_requirement("cdn", "web"));
    let absent = |_: &str| None;
    assert_eq!(
        evaluate_conditions(&t, "app", &absent),
        ConditionOutcome::Skip {
            term: "f.on".into()
        }
    );
    assert_eq!(
        evaluate_conditions(&t, "web", &absent),
        ConditionOutcome::Deploy
    );
    for falsy in ["", "false", "0", "no", "(unknown)"] {
        assert!(is_falsy(falsy), "{falsy}");
    }
    for truthy in ["False", "NO", "off", "1", "yes", "true"] {
        assert!(!is_falsy(truthy), "{truthy}");
    }
    let all = Tuning::parse(&["f.all".into()]);
    let zero = |_: &str| Some("0".to_string());
    assert_eq!(
        evaluate_conditions(&all, "a", &zero),
        ConditionOutcome::SkipWildcard {
            term: "f.all".into()
        }
    );
    assert_eq!(
        evaluate_conditions(&all, "a", &absent),
        ConditionOutcome::Deploy
    );
}

#[test]
fn unmet_requirements_split_hard_and_optional() {
    let mut provides = IndexMap::new();
    provides.insert("net".to_string(), vec!["a".to_string()]);
    let t = Tuning::parse(&["zz:b".into()]);
    let unmet = unmet_requirements(
        &["net".into(), "zz".into(), "yy".into()],
        "b",
        &provides,
        &t,
    );
    assert_eq!(unmet.hard, ["yy"]);
    assert_eq!(unmet.optional, ["zz"]);
}

#[test]
fn scheduler_with_one_slot_follows_the_effective_order() {
    let e = stack(&["a", "b", "c", "d"], &[("c", &["a"]), ("d", &["b", "c"])]);
    let order = validate(&e).unwrap();
    for verb in [Verb::Deploy, Verb::Undeploy] {
        let p = Schedule::new(&e, order.clone(), verb, &Selection::default(), None).unwrap();
        let mut s = p.scheduler(1);
        let mut seen = Vec::new();
        while let Some(next) = s.next_ready() {
            assert!(s.next_ready().is_none(), "one at a time");
            s.finish(&next);
            seen.push(next);
        }
        assert_eq!(seen, p.effective);
    }
}

#[test]
fn a_written_order_keeps_components_without_depends_in_line() {
    let mut e = stack(&["a", "b", "c", "d"], &[("c", &["a"])]);
    e.provenance.order_derived = false;
    let order = validate(&e).unwrap();
    let p = Schedule::new(&e, order, Verb::Deploy, &Selection::default(), None).unwrap();
    assert_eq!(p.waves(), [vec!["a"], vec!["b", "c"], vec!["d"]]);
    assert_eq!(
        p.waits("d"),
        [("b", &[Reason::Order][..]), ("c", &[Reason::Order][..])]
    );
    let p = Schedule::new(
        &e,
        validate(&e).unwrap(),
        Verb::Undeploy,
        &Selection::default(),
        None,
    )
    .unwrap();
    assert_eq!(
        p.waits("a"),
        [("b", &[Reason::Order][..]), ("c", &[Reason::Depends][..])]
    );
}

#[test]
fn scheduler_with_more_slots_respects_dependencies() {
    let e = stack(&["a", "b", "c"], &[("c", &["a"])]);
    let order = validate(&e).unwrap();
    let p = Schedule::new(&e, order, Verb::Deploy, &Selection::default(), None).unwrap();
    let mut s = p.scheduler(3);
    assert_eq!(s.next_ready().as_deref(), Some("a"));
    assert_eq!(s.next_ready().as_deref(), Some("b"));
    assert_eq!(s.next_ready(), None, "c waits for a");
    s.finish("a");
    assert_eq!(s.next_ready().as_deref(), Some("c"));
    assert!(s.pending().is_empty());
}

#[test]
fn affected_components_are_selected_widened_and_bring_what_they_want() {
    let mut e = stack(&["a", "b", "c", "d"], &[("b", &["a"])]);
    e.stack.lifecycle.wants = [("a".to_string(), vec!["d".to_string()])]
        .into_iter()
        .collect();
    let order = validate(&e).unwrap();
    let affected = |names: &[&str], with_dependents: bool| Selection {
        affected: Some(
            names
                .iter()
                .map(|n| Chosen {
                    name: n.to_string(),
                    why: format!("`{n}/x` changed"),
                })
                .collect(),
        ),
        with_dependents,
        ..Selection::default()
    };
    let p = Schedule::new(
        &e,
        order.clone(),
        Verb::Deploy,
        &affected(&["a"], false),
        None,
    )
    .unwrap();
    assert_eq!(p.selected, ["a", "d"]);
    assert!(p.per_component);
    assert_eq!(
        p.selection_text().as_deref(),
        Some("--affected → a, d (affected a (`a/x` changed); added d (wanted by `a`))")
    );
    assert_eq!(
        p.selected_because("a").as_deref(),
        Some("affected: `a/x` changed")
    );
    assert_eq!(p.selected_because("d").as_deref(), Some("wanted by a"));
    // Wanting adds no edge: `d` waits for nothing.
    assert!(p.after("d").is_empty());
    let p = Schedule::new(
        &e,
        order.clone(),
        Verb::Deploy,
        &affected(&["a"], true),
        None,
    )
    .unwrap();
    assert_eq!(p.selected, ["a", "b", "d"]);
    // Nothing affected selects nothing (not everything).
    let p = Schedule::new(&e, order.clone(), Verb::Deploy, &affected(&[], false), None).unwrap();
    assert!(p.selected.is_empty());
    assert_eq!(
        p.selection_text().as_deref(),
        Some("--affected → nothing (nothing affected; nothing added)")
    );
    let with_offset = Selection {
        offset: Some("b".into()),
        ..affected(&["a"], false)
    };
    assert_eq!(
        Schedule::new(&e, order.clone(), Verb::Deploy, &with_offset, None),
        Err(ScheduleError::AffectedAndOffset)
    );
    e.stack.lifecycle.wants = [("a".to_string(), vec!["zz".to_string()])]
        .into_iter()
        .collect();
    assert!(matches!(
        validate(&e),
        Err(ScheduleError::UnknownListed {
            list: "lifecycle.wants",
            ..
        })
    ));
}
