use super::*;
use hub_manifest::diag::Warnings;
use std::path::Path;

fn whole(text: &str) -> (Option<State>, usize) {
    let source = SourceFile {
        path: Path::new("s").to_path_buf(),
        text: text.to_string(),
    };
    source
        .first_document::<State>(&mut Warnings::default())
        .expect("whole")
}

fn piecewise(text: &str) -> Option<(State, usize)> {
    first_state(&SourceFile {
        path: Path::new("s").to_path_buf(),
        text: text.to_string(),
    })
}

#[test]
fn a_state_read_a_piece_at_a_time_is_the_state_read_whole() {
    let body = include_str!("../testdata/example.yaml");
    let text = integrity::framed(body);
    let (state, documents) = piecewise(&text).expect("read a piece at a time");
    let (expected, expected_documents) = whole(&text);
    assert_eq!(Some(state.clone()), expected);
    assert!(state.components.len() >= 2);
    assert_eq!(documents, expected_documents);
    // As written again, in both layouts.
    for format in [
        crate::layout::StateFormat::Reference,
        crate::layout::StateFormat::Linear,
    ] {
        let text = integrity::framed(&crate::render_as(&state, format).expect("render"));
        let (again, _) = piecewise(&text).expect("read a piece at a time");
        assert_eq!(Some(again), whole(&text).0);
    }
}

#[test]
fn anything_else_is_read_whole() {
    let body = include_str!("../testdata/example.yaml");
    // Not framed; an unknown key; a name twice; a flow section; a
    // blank line inside the section.
    assert!(piecewise(body).is_none());
    let unknown = body.replacen("    status:", "    statuss: x\n    status:", 1);
    assert!(piecewise(&integrity::framed(&unknown)).is_none());
    let at = body.find("\ncomponents:\n").expect("components") + "\ncomponents:\n".len();
    let first = &body[at..];
    let entry_end = first[2..]
        .find("\n  ")
        .map(|n| n + 3)
        .expect("second entry");
    let twice = format!("{}{}{}", &body[..at], &first[..entry_end], first);
    assert!(piecewise(&integrity::framed(&twice)).is_none());
    let flow = body.replacen("\ncomponents:\n", "\ncomponents: {}\nx:\n", 1);
    assert!(piecewise(&integrity::framed(&flow)).is_none());
    let tabs = body.replacen("    status:", "    status:\t", 1);
    assert!(piecewise(&integrity::framed(&tabs)).is_none());
    let broken = body.replacen("    status:", "    status: [x\n    status:", 1);
    assert!(piecewise(&integrity::framed(&broken)).is_none());
    let anchored = body
        .replacen("    status: ", "    status: &a ", 1)
        .replacen("    status: ", "    status: *a\n    x: ", 2);
    assert!(piecewise(&integrity::framed(&anchored)).is_none());
    // A blank line between entries is read the same.
    let before_first = format!("{}\n{}", &body[..at], first);
    assert!(piecewise(&integrity::framed(&before_first)).is_none());
    let blank = format!(
        "{}{}\n{}",
        &body[..at],
        &first[..entry_end],
        &first[entry_end..]
    );
    let blank = integrity::framed(&blank);
    assert!(piecewise(&blank).is_some());
    assert_eq!(piecewise(&blank).map(|(s, _)| s), whole(&blank).0);
}

#[test]
fn stack_parameters_and_captured_outputs_are_read_a_piece_at_a_time() {
    let body = include_str!("../testdata/example.yaml");
    let mut state = whole(&integrity::framed(body)).0.expect("a state");
    let parameter = state.stack_parameters.first().cloned();
    let output = state.captured_outputs.first().cloned();
    for i in 0..30 {
        if let Some(mut parameter) = parameter.clone() {
            let name = format!("{}.{i}", parameter.name());
            parameter.set_name(&name);
            state.stack_parameters.push(parameter);
        }
        if let Some(mut output) = output.clone() {
            output.name = format!("{}.{i}", output.name);
            state.captured_outputs.push(output);
        }
    }
    assert!(state.stack_parameters.len() > 30 && state.captured_outputs.len() > 30);
    let text = integrity::framed(
        &crate::render_as(&state, crate::layout::StateFormat::Reference).expect("render"),
    );
    let split = hub_manifest::pieces::split(&text, &SECTIONS, 1).expect("split");
    assert!(split.sections.iter().all(|s| s.items.len() > 1));
    let (read, _) = piecewise(&text).expect("read a piece at a time");
    assert_eq!(Some(read), whole(&text).0);
}
