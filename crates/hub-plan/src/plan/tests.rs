use super::*;
use crate::order::plan;
use hub_params::{ExpandedParam, Locked, LockedParam, Origin};
use hub_state::StateParameter;
use std::path::PathBuf;
use yaml_serde::Value;

fn removed(name: &str) -> prune::Removed {
    prune::Removed {
        name: name.into(),
        dir: Some(PathBuf::from(format!("/stack/{name}"))),
        depends: Vec::new(),
        status: "deployed".into(),
    }
}

#[test]
fn a_removed_component_keeps_the_parameters_its_undeploy_gets() {
    let mut state = State::default();
    state.component_mut("old").parameters = vec![
        StateParameter::new("old.size", Value::from("small")),
        StateParameter::new("old.password", Value::from("hunter2")),
    ];
    let shown = RemovedPlan::of(&removed("old"), Some(&state), &Redactor::default());
    let kept: Vec<(&str, Option<&str>, bool)> = shown
        .parameters
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_deref(), p.digest.is_some()))
        .collect();
    assert_eq!(
        kept,
        [
            ("old.size", Some("small"), false),
            ("old.password", Some(hub_manifest::redact::MASK), true),
        ]
    );
    assert_eq!(
        shown.parameters[1].digest.as_deref(),
        Some(text_digest("hunter2").as_str())
    );
    let revealed = RemovedPlan::of(&removed("old"), Some(&state), &Redactor::new(true));
    assert_eq!(revealed.parameters[1].value.as_deref(), Some("hunter2"));
    assert_eq!(revealed.parameters[1].digest, shown.parameters[1].digest);
}

#[test]
fn conditions_read_expanded_parameters_before_stack_parameters() {
    let tuning = plan::Tuning::parse(&["f.on:c".into()]);
    let mut locked = Locked::default();
    locked.params.insert(
        "f.on".into(),
        LockedParam {
            name: "f.on".into(),
            component: String::new(),
            kind: String::new(),
            value: Some(Value::String("false".into())),
            env: String::new(),
            origin: Origin::Value,
            expression: None,
            declared: None,
            secret: false,
        },
    );
    let off = plan::component_conditions(&tuning, "c", None, &locked);
    assert_eq!(off.skip_reason().as_deref(), Some("`f.on` is off"));
    assert_eq!(off.wildcard_warning(), None);
    let expanded = [ExpandedParam {
        name: "f.on".into(),
        value: Some(Value::String("true".into())),
        env: String::new(),
        origin: Origin::Value,
        expression: None,
        declared: None,
        secret: false,
    }];
    let on = plan::component_conditions(&tuning, "c", Some(&expanded), &locked);
    assert_eq!(on.skip_reason(), None);
    let everywhere = plan::Tuning::parse(&["f.on".into()]);
    let wildcard = plan::component_conditions(&everywhere, "c", None, &locked);
    assert!(wildcard
        .wildcard_warning()
        .is_some_and(|w| w.contains("`f.on:<component>`")));
}
