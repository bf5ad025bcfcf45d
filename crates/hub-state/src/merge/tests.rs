use super::*;
use crate::test_support::text_output as output;

const T0: &str = "2024-05-01T10:00:00Z";
const T1: &str = "2024-05-01T10:00:01Z";

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| s.to_string()).collect()
}

fn with_statuses(entries: &[(&str, &str)]) -> State {
    let mut state = State::new(StackMeta::default(), Vec::new());
    for (name, status) in entries {
        state.component_mut(name).status = (*status).into();
    }
    state
}

#[test]
fn vocabularies_round_trip() {
    for status in [
        OperationStatus::InProgress,
        OperationStatus::Success,
        OperationStatus::Error,
    ] {
        assert_eq!(OperationStatus::parse(status.as_str()), Some(status));
    }
    assert_eq!(
        ComponentStatus::parse("deployed"),
        Some(ComponentStatus::Deployed)
    );
    assert_eq!(
        StackStatus::parse("incomplete"),
        Some(StackStatus::Incomplete)
    );
    assert_eq!(ComponentStatus::parse("Deployed"), None);
}

/// Begins the operation of `hub deploy x` at [`T0`].
fn begin_deploy(state: &mut State) -> OperationIndex {
    let start = OperationStart {
        id: "op".into(),
        operation: "deploy".into(),
        args: names(&["hub", "deploy", "x"]),
        initiator: "alice".into(),
    };
    state.begin_operation(start, T0)
}

#[test]
fn operations_record_phases_in_first_touch_order() {
    let mut state = State::new(StackMeta::default(), Vec::new());
    state.operations.push(Operation {
        id: "old".into(),
        ..Operation::default()
    });
    let op = begin_deploy(&mut state);
    state.set_phase(op, "b", OperationStatus::InProgress, T0);
    state.set_phase(op, "a", OperationStatus::InProgress, T0);
    state.set_phase(op, "b", OperationStatus::Success, T1);
    state.append_log(op, "boom", T1);
    state.append_log(op, "--- stdout:", T1);
    state.finish_operation(op, OperationStatus::Error, T1);
    assert_eq!(state.operations.len(), 2);
    let recorded = &state.operations[1];
    assert_eq!(recorded.args(), ["hub", "deploy", "x"]);
    assert_eq!(recorded.status, "error");
    assert_eq!(recorded.timestamp, T1);
    assert_eq!(recorded.logs, "boom\n--- stdout:");
    let phases: Vec<_> = recorded
        .phases
        .iter()
        .map(|p| (p.phase.as_str(), p.status.as_str()))
        .collect();
    assert_eq!(phases, [("b", "success"), ("a", "in-progress")]);
    assert_eq!(state.timestamp, T1);
}

#[test]
fn phases_follow_the_positions_given_and_unknown_names_keep_their_order_last() {
    let mut state = State::new(StackMeta::default(), Vec::new());
    let op = begin_deploy(&mut state);
    let order = names(&["a", "b", "c"]);
    let position = |name: &str| order.iter().position(|n| n == name);
    for name in ["y", "c", "x", "a", "b", "c", "y"] {
        state.set_phase_in_order(op, name, OperationStatus::InProgress, T0, &position);
    }
    state.set_phase_in_order(op, "a", OperationStatus::Success, T1, &position);
    let phases: Vec<(&str, &str)> = state.operations[0]
        .phases
        .iter()
        .map(|p| (p.phase.as_str(), p.status.as_str()))
        .collect();
    assert_eq!(
        phases,
        [
            ("a", "success"),
            ("b", "in-progress"),
            ("c", "in-progress"),
            ("y", "in-progress"),
            ("x", "in-progress")
        ]
    );
}

#[test]
fn component_status_changes_stamp_the_entry() {
    let mut state = State::default();
    state.set_component_status("a", ComponentStatus::Deploying, "", T0);
    state.set_component_status("a", ComponentStatus::Error, "exit 3", T1);
    let entry = &state.components["a"];
    assert_eq!(
        (entry.status.as_str(), entry.message.as_str()),
        ("error", "exit 3")
    );
    assert_eq!(
        (
            entry.timestamps.start.as_str(),
            entry.timestamps.end.as_str()
        ),
        (T0, T1)
    );
    state.set_component_status("a", ComponentStatus::Deployed, "", T1);
    assert_eq!(state.components["a"].message, "");
}

#[test]
fn a_run_without_raw_outputs_keeps_the_older_ones() {
    let mut state = State::default();
    let raw = vec![RawOutput {
        name: "host".into(),
        value: "h".into(),
    }];
    let run = ComponentRun {
        raw_outputs: raw.clone(),
        snapshot: vec![output("b", "x", "1"), output("a", "y", "2")],
        ..ComponentRun::default()
    };
    state.record_component_run("a", run, T0);
    let icon = "x".repeat(MAX_ICON_CHARS);
    let run = ComponentRun {
        meta: ComponentMeta {
            icon,
            kind: "k".into(),
            ..ComponentMeta::default()
        },
        snapshot: vec![output("b", "x", "1"), output("a", "y", "2")],
        ..ComponentRun::default()
    };
    state.record_component_run("a", run, T1);
    let entry = &state.components["a"];
    assert_eq!(entry.raw_outputs, raw);
    assert_eq!(entry.meta.icon, "");
    assert_eq!(entry.meta.kind, "k");
    let order: Vec<_> = entry
        .captured_outputs
        .to_vec()
        .iter()
        .map(CapturedOutput::qualified_name)
        .collect();
    assert_eq!(order, ["a:y", "b:x"]);
}

#[test]
fn provides_merge_unions_and_undeploy_removes() {
    let mut current = IndexMap::new();
    add_provider(&mut current, "dns", "a");
    let mut stored = IndexMap::new();
    stored.insert("dns".to_string(), names(&["b", "a"]));
    stored.insert("vault".to_string(), names(&["vault"]));
    merge_provides(&mut current, &stored);
    assert_eq!(current["dns"], ["a", "b"]);
    assert_eq!(current["vault"], ["vault"]);
    remove_provider(&mut current, "vault");
    assert!(!current.contains_key("vault"));
    add_provider(&mut current, "aws", ENVIRONMENT_PROVIDER);
    assert!(!provides_for_state(&current).contains_key("aws"));
}

fn snapshots() -> (State, Vec<String>) {
    let mut state = State {
        captured_outputs: vec![output("z", "final", "f")],
        ..State::default()
    };
    state.component_mut("x").captured_outputs = vec![output("x", "o", "x-value")].into();
    state.component_mut("y");
    state.component_mut("z").captured_outputs =
        vec![output("x", "o", "x-value"), output("z", "o", "z")].into();
    (state, names(&["x", "y", "z"]))
}

#[test]
fn deploy_preloads_the_nearest_earlier_snapshot() {
    let (state, order) = snapshots();
    assert!(state.outputs_before(&order, "x").is_empty());
    assert_eq!(
        state.outputs_before(&order, "y")[0].value,
        Value::String("x-value".into())
    );
    assert_eq!(state.outputs_before(&order, "z").len(), 1);
    let mut empty = state.clone();
    empty.component_mut("x").captured_outputs = Snapshot::default();
    assert_eq!(empty.outputs_before(&order, "y")[0].name, "final");
}

#[test]
fn undeploy_preloads_its_own_snapshot_first() {
    let (state, order) = snapshots();
    assert_eq!(state.outputs_at(&order, "z").len(), 2);
    assert_eq!(state.outputs_at(&order, "y")[0].component, "x");
    assert_eq!(state.outputs_for_full_undeploy(&order)[0].name, "final");
    let mut no_stack = state.clone();
    no_stack.captured_outputs.clear();
    assert_eq!(no_stack.outputs_for_full_undeploy(&order).len(), 2);
}

#[test]
fn dependency_snapshots_are_merged_with_warnings() {
    let mut state = State::default();
    state.component_mut("a").captured_outputs =
        vec![output("a", "host", "new"), output("a", "hub.x", "1")].into();
    state.component_mut("b").captured_outputs = vec![output("b", "url", "u")].into();
    let mut current = vec![output("a", "host", "old"), output("a", "hub.x", "0")];
    let mut warnings = Warnings::default();
    state.merge_dependency_outputs(&mut current, &names(&["a", "b", "missing"]), &mut warnings);
    let values: Vec<_> = current
        .iter()
        .map(|o| (o.qualified_name(), super::super::scalar_text(&o.value)))
        .collect();
    assert_eq!(
        values,
        [
            ("a:host".to_string(), "new".to_string()),
            ("a:hub.x".into(), "1".into()),
            ("b:url".into(), "u".into())
        ]
    );
    assert_eq!(warnings.len(), 1);
    assert!(warnings.iter().any(|w| w.message.contains("a:host")));
}

#[test]
fn stack_status_with_mandatory_components() {
    let order = names(&["net", "db", "app"]);
    let mandatory = |_: &str| false;
    let state = with_statuses(&[("net", "deployed"), ("db", ""), ("app", "deployed")]);
    assert_eq!(
        stack_status(&state, &order, &mandatory, &[]).0,
        StackStatus::Deployed
    );
    let state = with_statuses(&[("net", "deployed"), ("db", "error")]);
    let (status, message) = stack_status(&state, &order, &mandatory, &[]);
    assert_eq!(status, StackStatus::Incomplete);
    assert_eq!(message, "deployed: net; error: db; undeployed: app");
    let state = with_statuses(&[("net", "undeployed"), ("db", "undeployed")]);
    assert_eq!(
        stack_status(&state, &order, &mandatory, &[]).0,
        StackStatus::Undeployed
    );
}

#[test]
fn stack_status_with_optional_components() {
    let order = names(&["net", "db", "app"]);
    let db_optional = |name: &str| name == "db";
    let state = with_statuses(&[("net", "deployed"), ("db", "error"), ("app", "deployed")]);
    assert_eq!(
        stack_status(&state, &order, &db_optional, &[]).0,
        StackStatus::Deployed
    );
    let state = with_statuses(&[
        ("net", "undeployed"),
        ("db", "deployed"),
        ("app", "undeployed"),
    ]);
    assert_eq!(
        stack_status(&state, &order, &db_optional, &[]).0,
        StackStatus::Incomplete
    );
    let all_optional = |_: &str| true;
    assert_eq!(
        stack_status(&state, &order, &all_optional, &[]).0,
        StackStatus::Deployed
    );
    let none = with_statuses(&[]);
    assert_eq!(
        stack_status(&none, &order, &all_optional, &[]).0,
        StackStatus::Undeployed
    );
}

#[test]
fn components_skipped_for_an_optional_reason_do_not_count() {
    let order = names(&["a", "b"]);
    let state = with_statuses(&[("a", "deployed")]);
    let mandatory = |_: &str| false;
    assert_eq!(
        stack_status(&state, &order, &mandatory, &[]).0,
        StackStatus::Incomplete
    );
    assert_eq!(
        stack_status(&state, &order, &mandatory, &names(&["b"])).0,
        StackStatus::Deployed
    );
}

#[test]
fn consistency_check_follows_the_spec() {
    let mut state = State::new(
        StackMeta {
            kind: "stack".into(),
            name: "other".into(),
        },
        Vec::new(),
    );
    state.stack_parameters = vec![
        StateParameter::new("dns.domain", Value::String("a.com".into())),
        StateParameter::new("cloud.kind", Value::String("aws".into())),
    ];
    for name in ["a", "b", "c", "d"] {
        state.component_mut(name);
    }
    let stack = |name: &str| match name {
        "dns.domain" => Some("b.com".to_string()),
        "cloud.region" => Some("eu".to_string()),
        "cloud.kind" => Some("aws".to_string()),
        _ => None,
    };
    let problems = consistency_problems(&state, "demo", &stack, &names(&["a"]));
    let text: Vec<_> = problems.iter().map(ToString::to_string).collect();
    assert_eq!(text.len(), 3, "{text:?}");
    assert!(text[0].contains("other") && text[0].contains("demo"));
    assert!(
        text[1].contains("dns.domain") && text[1].contains("a.com") && text[1].contains("b.com")
    );
    assert_eq!(
        problems[2],
        Inconsistency::Components { known: 1, total: 4 }
    );
    assert!(consistency_problems(&state, "other", &|_| None, &names(&["a", "b"])).is_empty());
}
