use super::*;
use crate::model::{RawOutput, Timestamps};
use hub_manifest::diag::Warnings;
use std::path::Path;

const EXAMPLE: &str = include_str!("../testdata/example.yaml");

fn example() -> State {
    super::super::parse(Path::new("example.yaml"), EXAMPLE, &mut Warnings::default())
        .expect("example parses")
}

fn same(renderer: &mut Renderer, state: &State) {
    let expected = super::super::render(state).expect("render");
    assert_eq!(renderer.render(state).expect("cached render"), expected);
}

#[test]
fn the_example_renders_as_the_plain_writer_does() {
    let mut renderer = Renderer::new(StateFormat::Reference);
    same(&mut renderer, &example());
    same(&mut renderer, &example());
    same(
        &mut Renderer::new(StateFormat::Reference),
        &State::default(),
    );
    same(&mut renderer, &State::default());
}

#[test]
fn components_added_one_by_one_are_written_in_order() {
    let mut renderer = Renderer::new(StateFormat::Reference);
    let mut state = example();
    state.components.clear();
    for name in ["m", "b", "z", "a", "b2", "0"] {
        state.components.insert(
            name.into(),
            ComponentState {
                status: "deploying".into(),
                ..ComponentState::default()
            },
        );
        same(&mut renderer, &state);
        state.components[name].status = "deployed".into();
        same(&mut renderer, &state);
    }
    state.components.swap_indices(0, 3);
    same(&mut renderer, &state);
    state.components.shift_remove("z");
    same(&mut renderer, &state);
}

#[test]
fn a_write_of_one_component_renders_that_one_again() {
    let mut renderer = Renderer::new(StateFormat::Reference);
    let mut state = example();
    same(&mut renderer, &state);
    let mut out = String::new();
    for name in ["a", "b", "new"] {
        let entry = state.component_mut(name);
        entry.status = format!("{name} again").into();
        entry.timestamp = "2024-05-01T10:00:00Z".into();
        state.serial += 1;
        renderer
            .render_into(&state, Changed::Only(name), &mut out)
            .expect("render");
        assert_eq!(out, super::super::render(&state).expect("render"));
    }
    state.components.shift_remove("a");
    renderer
        .render_into(&state, Changed::Only("b"), &mut out)
        .expect("render");
    assert_eq!(out, super::super::render(&state).expect("render"));
}

#[test]
#[cfg(debug_assertions)]
#[should_panic(expected = "the entry of `b` changed, but the write said it did not")]
fn a_broken_promise_is_caught_in_debug_builds() {
    let mut renderer = Renderer::new(StateFormat::Reference);
    let mut state = example();
    same(&mut renderer, &state);
    state.component_mut("b").status = "changed".into();
    let _ = renderer.render_into(&state, Changed::Only("a"), &mut String::new());
}

#[test]
fn several_changed_entries_are_rendered_again_and_the_others_reused() {
    let mut renderer = Renderer::new(StateFormat::Reference);
    let mut state = example();
    same(&mut renderer, &state);
    state.component_mut("a").status = "one".into();
    state.component_mut("b").status = "two".into();
    let changed = ["a".to_string(), "b".to_string()];
    let mut out = String::new();
    renderer
        .render_into(&state, Changed::Several(&changed), &mut out)
        .expect("cached render");
    assert_eq!(out, super::super::render(&state).expect("render"));
}

#[test]
fn changed_parts_are_rendered_again() {
    let mut renderer = Renderer::new(StateFormat::Reference);
    let mut state = example();
    same(&mut renderer, &state);
    state.serial += 1;
    state.status = "incomplete".into();
    same(&mut renderer, &state);
    let first = state.components.keys().next().cloned().expect("component");
    let entry = state.components.get_mut(&first).expect("entry");
    entry.status = "deploying".into();
    entry.timestamps = Timestamps {
        start: "2024-05-01T10:00:00Z".into(),
        end: String::new(),
    };
    entry.raw_outputs.push(RawOutput {
        name: "yes".into(),
        value: "on".into(),
    });
    same(&mut renderer, &state);
    state
        .components
        .insert("0-first".into(), ComponentState::default());
    state.components.shift_remove(&first);
    same(&mut renderer, &state);
    state.lifecycle.order.reverse();
    state.stack_parameters.reverse();
    state.captured_outputs.reverse();
    state
        .provides
        .insert("z".into(), vec!["b".into(), "a".into()]);
    same(&mut renderer, &state);
    let operation = state.operations.last_mut().expect("operation");
    operation.status = "error".into();
    operation.phases.push(Phase {
        phase: "c".into(),
        status: "deploying".into(),
    });
    same(&mut renderer, &state);
    let operation = state.operations.last_mut().expect("operation");
    operation.phases.last_mut().expect("phase").status = "deployed".into();
    operation.phases.insert(0, Phase::default());
    same(&mut renderer, &state);
    let mut second = state.operations[0].clone();
    second.phases.clear();
    second.id = "second".into();
    state.operations.push(second);
    same(&mut renderer, &state);
    state.operations.remove(0);
    state.components.clear();
    state.lifecycle.order.clear();
    same(&mut renderer, &state);
}

#[test]
fn a_long_value_shared_with_a_stack_parameter_is_written_once_and_read_back_whole() {
    let long = "line of a certificate\n".repeat(1000);
    let mut state = example();
    state
        .stack_parameters
        .push(StateParameter::new("cert", Value::String(long.clone())));
    // Written in the order of their names: read back so.
    state
        .stack_parameters
        .sort_by_cached_key(StateParameter::qualified_name);
    let short = crate::StateParameter::new("cert", Value::String("short".into()));
    for name in ["a", "b"] {
        let entry = state.component_mut(name);
        entry
            .parameters
            .push(StateParameter::new("cert", Value::String(long.clone())));
    }
    state.component_mut("b").parameters.push(short);
    for format in [StateFormat::Reference, StateFormat::Linear] {
        let mut renderer = Renderer::new(format);
        let text = renderer.render(&state).expect("render");
        assert_eq!(
            text.matches("line of a certificate").count(),
            1000,
            "{format:?}"
        );
        assert_eq!(text.matches("value: &hub-").count(), 1, "{text}");
        assert_eq!(text.matches("value: *hub-").count(), 2, "{text}");
        assert!(text.contains("value: short\n"), "{text}");
        let again =
            super::super::parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
        assert_eq!(again, state, "{format:?}");
        // A component entry changed alone is written with its alias.
        let mut changed = state.clone();
        changed.component_mut("a").status = "deploying".into();
        let mut out = String::new();
        renderer
            .render_into(&changed, Changed::Only("a"), &mut out)
            .expect("render");
        let again =
            super::super::parse(Path::new("s"), &out, &mut Warnings::default()).expect("parse");
        assert_eq!(again, changed, "{format:?}");
        // The stack parameter changes: no entry aliases it any more.
        let cert = changed
            .stack_parameters
            .iter_mut()
            .find(|p| p.name() == "cert");
        cert.expect("cert").value = Value::String("x".repeat(SHARED_VALUE_BYTES));
        renderer
            .render_into(&changed, Changed::Only("a"), &mut out)
            .expect("render");
        assert!(!out.contains("*hub-"), "{out}");
        // Each entry holds the old value once, under its own anchor.
        assert_eq!(out.matches("line of a certificate").count(), 2000);
        let again =
            super::super::parse(Path::new("s"), &out, &mut Warnings::default()).expect("parse");
        assert_eq!(again, changed, "{format:?}");
    }
}

fn output(component: &str, value: &str) -> CapturedOutput {
    CapturedOutput {
        component: component.into(),
        name: "out".into(),
        value: Value::String(value.into()),
        ..CapturedOutput::default()
    }
}

/// Components `c0..c{n}` in order, each knowing the outputs of those
/// before it and its own.
fn chain(n: usize) -> State {
    let mut state = State::new(
        Default::default(),
        (0..n).map(|i| format!("c{i}")).collect(),
    );
    let mut known = Vec::new();
    for i in 0..n {
        known.push(output(&format!("c{i}"), &format!("v{i}")));
        let run = crate::ComponentRun {
            snapshot: known.clone(),
            ..Default::default()
        };
        state.record_component_run(&format!("c{i}"), run, "2024-05-01T10:00:00Z");
    }
    state
}

/// Component `c{i}` of a [`chain`] runs again and changes its output.
fn run_again_with_a_new_output(state: &mut State, i: usize) {
    let name = format!("c{i}");
    let mut known = state.components[&name].captured_outputs.to_vec();
    known[i] = output(&name, "changed");
    let run = crate::ComponentRun {
        snapshot: known,
        ..Default::default()
    };
    state.record_component_run(&name, run, "2024-05-01T10:00:01Z");
}

fn linear(renderer: &mut Renderer, state: &State, changed: Changed<'_>) -> String {
    let mut out = String::new();
    renderer
        .render_into(state, changed, &mut out)
        .expect("render");
    let fresh = super::super::render_as(state, StateFormat::Linear).expect("render");
    assert_eq!(out, fresh, "cached and fresh linear texts differ");
    out
}

#[test]
fn the_linear_layout_writes_each_output_once_and_reads_back_the_same_snapshots() {
    let state = chain(30);
    let text = linear(
        &mut Renderer::new(StateFormat::Linear),
        &state,
        Changed::Any,
    );
    assert_eq!(text.matches("value: v7\n").count(), 1, "{text}");
    assert_eq!(text.matches("capturedOutputsBase:").count(), 29);
    let again =
        super::super::parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
    assert_eq!(again, state);
    assert_eq!(
        super::super::render(&again).expect("render"),
        super::super::render(&state).expect("render")
    );
    let reference = super::super::render(&state).expect("render");
    assert_eq!(reference.matches("value: v7\n").count(), 30 - 7);
}

#[test]
fn an_entry_is_written_again_when_the_snapshot_it_is_written_against_changes() {
    let mut renderer = Renderer::new(StateFormat::Linear);
    let mut state = chain(5);
    linear(&mut renderer, &state, Changed::Any);
    // c2 runs again and changes its output: c3 is written against it.
    run_again_with_a_new_output(&mut state, 2);
    let text = linear(&mut renderer, &state, Changed::Only("c2"));
    let again =
        super::super::parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
    assert_eq!(again, state);
    // c2 leaves the stack: c3 is written against c1.
    state.components.shift_remove("c2");
    let text = linear(&mut renderer, &state, Changed::Only("c2"));
    assert!(text.contains("capturedOutputsBase: c1"), "{text}");
    let again =
        super::super::parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
    assert_eq!(again, state);
}

/// A long value of the pool `0..3`, or a short one (`3`).
fn pooled(choice: usize) -> String {
    match choice {
        3 => "short".into(),
        n => format!("{n}: a \"long\" value\n").repeat(SHARED_VALUE_BYTES / 8),
    }
}

/// A stack whose components, raw outputs, snapshots, parameters, captured
/// and stack outputs hold values of the pool, as `choices` say.
fn sharing(choices: &[(usize, usize)], head: (usize, usize)) -> State {
    let names: Vec<String> = (0..choices.len()).map(|i| format!("c{i}")).collect();
    let mut state = State::new(Default::default(), names.clone());
    let mut known = Vec::new();
    for (name, &(output, parameter)) in names.iter().zip(choices) {
        known.push(output_of(name, &pooled(output)));
        let run = crate::ComponentRun {
            parameters: vec![StateParameter::new("p", Value::String(pooled(parameter)))],
            raw_outputs: vec![RawOutput {
                name: "out".into(),
                value: pooled(output),
            }],
            snapshot: known.clone(),
            ..Default::default()
        };
        state.record_component_run(name, run, "2024-05-01T10:00:00Z");
    }
    state
        .stack_parameters
        .push(StateParameter::new("s", Value::String(pooled(head.0))));
    state.captured_outputs = known;
    state.stack_outputs.push(crate::model::StackOutput {
        name: "o".into(),
        value: Value::String(pooled(head.1)),
        ..Default::default()
    });
    state
}

fn output_of(component: &str, value: &str) -> CapturedOutput {
    CapturedOutput {
        value: Value::String(value.into()),
        ..output(component, value)
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Whatever places share which values, every long value is written
    /// once (once per entry for one the head does not hold), the text reads back as the same state in both layouts, and a
    /// write of one changed entry after a changed head is the fresh text.
    #[test]
    fn shared_values_are_written_once_and_read_back(
        choices in proptest::collection::vec((0usize..4, 0usize..4), 1..5),
        head in (0usize..4, 0usize..4),
        later in (0usize..4, 0usize..4),
    ) {
        let state = sharing(&choices, head);
        for format in [StateFormat::Reference, StateFormat::Linear] {
            let mut renderer = Renderer::new(format);
            let text = renderer.render(&state).expect("render");
            for n in 0..3 {
                let written = emit::string(&pooled(n));
                // Once in the head, which every entry aliases; else once
                // in each entry holding it.
                let in_head = n == head.0 || n == head.1 || choices.iter().any(|c| c.0 == n);
                let entries = choices.iter().filter(|c| c.1 == n).count();
                let most = if in_head { 1 } else { entries };
                let count = text.matches(&written).count();
                proptest::prop_assert!(count <= most, "{format:?} {n}: {count}");
            }
            let again = super::super::parse(Path::new("s"), &text, &mut Warnings::default())
                .expect("parse");
            proptest::prop_assert_eq!(&again, &state);
            // The head changes, then one entry.
            let mut changed = state.clone();
            changed.stack_parameters[0].value = Value::String(pooled(later.0));
            changed.stack_outputs[0].value = Value::String(pooled(later.1));
            changed.component_mut("c0").parameters[0].value = Value::String(pooled(later.0));
            let mut out = String::new();
            renderer
                .render_into(&changed, Changed::Only("c0"), &mut out)
                .expect("render");
            let fresh = Renderer::new(format).render(&changed).expect("render");
            proptest::prop_assert!(out == fresh, "cached and fresh texts differ");
            let again = super::super::parse(Path::new("s"), &out, &mut Warnings::default())
                .expect("parse");
            proptest::prop_assert_eq!(&again, &changed);
        }
    }
}

/// A run's last write renders what changed without keeping it and lets go
/// of every kept text, yet writes what a fresh render writes; a render
/// after it (which a run does not make) is still right.
#[test]
fn a_last_render_writes_the_fresh_text_and_keeps_none() {
    for format in [StateFormat::Reference, StateFormat::Linear] {
        let mut renderer = Renderer::new(format);
        let mut state = example();
        state.components.extend(chain(6).components);
        linear_or_reference(&mut renderer, &state, Changed::Any, format);
        run_again_with_a_new_output(&mut state, 3);
        state.status = "deployed".into();
        renderer.keep_no_texts();
        linear_or_reference(&mut renderer, &state, Changed::Only("c3"), format);
        let cache = &renderer.components;
        assert!(cache.entries.iter().all(Option::is_none), "{format:?}");
        assert!(renderer.stack_parameters.is_none() && renderer.lifecycle.is_none());
        assert!(renderer.operations.iter().all(|o| o.head.is_none()));
        state.component_mut("c1").status = "undeployed".into();
        linear_or_reference(&mut renderer, &state, Changed::Only("c1"), format);
    }
}

fn linear_or_reference(
    renderer: &mut Renderer,
    state: &State,
    changed: Changed<'_>,
    format: StateFormat,
) {
    let mut out = String::new();
    renderer
        .render_into(state, changed, &mut out)
        .expect("render");
    let fresh = super::super::render_as(state, format).expect("render");
    assert_eq!(out, fresh, "{format:?}: cached and fresh texts differ");
}

/// Components `c0..c{n}` in order, each knowing its own output only.
fn wide(n: usize) -> State {
    let mut state = State::new(
        Default::default(),
        (0..n).map(|i| format!("c{i}")).collect(),
    );
    for i in 0..n {
        let name = format!("c{i}");
        let run = crate::ComponentRun {
            snapshot: vec![output(&name, &format!("v{i}"))],
            ..Default::default()
        };
        state.record_component_run(&name, run, "2024-05-01T10:00:00Z");
    }
    state
}

/// [`linear_or_reference`], and the text read back by the parser (which
/// renders nothing): the same state, its entries in name order, each once.
fn read_back_in_order(
    renderer: &mut Renderer,
    state: &State,
    changed: Changed<'_>,
    format: StateFormat,
) {
    linear_or_reference(renderer, state, changed, format);
    let text = super::super::render_as(state, format).expect("render");
    let again =
        super::super::parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
    assert_eq!(again, *state, "{format:?}");
    let mut sorted: Vec<&String> = state.components.keys().collect();
    sorted.sort();
    let written: Vec<&String> = again.components.keys().collect();
    let first_out = written.iter().zip(&sorted).position(|(w, s)| w != s);
    assert_eq!(first_out, None, "{format:?}: entries out of name order");
}

/// Entries beyond one window, settled on several threads where the
/// machine has the processors, are written in the file's order, the
/// cached and the rendered alike, and a last render lets go of them all.
#[test]
fn many_entries_render_as_the_plain_writer_does_window_after_window() {
    for format in [StateFormat::Reference, StateFormat::Linear] {
        let mut renderer = Renderer::new(format);
        let mut state = wide(700);
        read_back_in_order(&mut renderer, &state, Changed::Any, format);
        let changed: std::collections::HashSet<String> = [3, 255, 256, 257, 511, 600, 699]
            .map(|i| format!("c{i}"))
            .into();
        for name in &changed {
            state.component_mut(name).status = "undeployed".into();
        }
        read_back_in_order(&mut renderer, &state, Changed::Set(&changed), format);
        read_back_in_order(&mut renderer, &state, Changed::Any, format);
        state.component_mut("c10").status = "undeployed".into();
        renderer.keep_no_texts();
        read_back_in_order(&mut renderer, &state, Changed::Only("c10"), format);
        let cache = &renderer.components;
        assert!(cache.entries.iter().all(Option::is_none), "{format:?}");
        assert_eq!(cache.sorted.len(), 700, "{format:?}");
    }
}

/// Stack parameters are turned into text a window at a time, on several
/// threads, but for those holding a long value (anchored or aliased in
/// order on one thread): across windows, the list reads back whole and in
/// its order, with one anchor for a long value and aliases after it.
#[test]
fn many_stack_parameters_read_back_in_order_with_their_anchors_across_windows() {
    let long = "x".repeat(SHARED_VALUE_BYTES);
    let other = "y".repeat(SHARED_VALUE_BYTES + 1);
    let count = 3 * super::PARAMETERS_WINDOW + 17;
    let mut state = example();
    state.stack_parameters = (0..count)
        .map(|at| {
            let edge = super::PARAMETERS_WINDOW;
            let value = match at {
                _ if at == edge - 1 || at == edge || at == 3 * edge + 3 => long.clone(),
                _ if at == 2 * edge => other.clone(),
                _ => format!("value {at}"),
            };
            StateParameter::new(&format!("p{at:06}"), Value::String(value))
        })
        .collect();
    for format in [StateFormat::Reference, StateFormat::Linear] {
        let text = Renderer::new(format).render(&state).expect("render");
        let head = &text[text.find("stackParameters:").expect("list")..];
        assert_eq!(head.matches("value: &hub-").count(), 2, "{format:?}");
        assert_eq!(head.matches("value: *hub-").count(), 2, "{format:?}");
        assert_eq!(text.matches(long.as_str()).count(), 1, "{format:?}");
        let again =
            super::super::parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
        assert_eq!(again.stack_parameters, state.stack_parameters, "{format:?}");
        assert_eq!(again, state, "{format:?}");
    }
}
