use super::*;
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
    let blank = format!("{}\n{}", &body[..at], first);
    assert!(piecewise(&integrity::framed(&blank)).is_none());
}
