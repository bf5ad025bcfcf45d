//! The serial read from a state's head agrees with the serial read by
//! parsing the whole document.

use super::codec::{serial_in_head, serial_of, HEAD_BYTES};
use crate::integrity;
use crate::model::State;
use crate::render::Renderer;
use crate::StateFormat;
use proptest::prelude::*;

/// A state as a run writes it: rendered, then framed.
fn written(state: &State) -> String {
    let mut text = Renderer::new(StateFormat::default())
        .render(state)
        .expect("render");
    integrity::frame_in_place(&mut text);
    text
}

proptest! {
    #[test]
    fn the_head_of_a_written_state_holds_its_serial(
        serial in any::<u64>(),
        timestamp in prop_oneof![
            Just(String::new()),
            Just("2026-11-28T18:05:39.091891576Z".to_string()),
            "[ -~]{0,12}",
        ],
        status in "[a-z]{0,8}",
        components in 0usize..4,
    ) {
        let mut state = State {
            version: 1,
            kind: "state".into(),
            serial,
            timestamp,
            status: status.into(),
            ..State::default()
        };
        for i in 0..components {
            state.component_mut(&format!("c{i}")).status = "deployed".into();
        }
        let text = written(&state);
        let full = serial_of(text.as_bytes());
        prop_assert_eq!(full, serial);
        // Found in the head, or left to the whole parse; never different.
        match serial_in_head(text.as_bytes()) {
            Some(found) => prop_assert_eq!(found, full),
            // A serial of 0 is not written; other timestamps may be quoted.
            None => prop_assert!(
                serial == 0 || !state.timestamp.starts_with("2026-"),
                "a run's head was not read: {}", &text[..text.len().min(300)]
            ),
        }
    }
}

#[test]
fn a_run_s_state_is_read_from_its_head() {
    let state = State {
        version: 1,
        kind: "state".into(),
        serial: 1869,
        timestamp: "2026-11-28T18:05:39.091891576Z".into(),
        ..State::default()
    };
    assert_eq!(serial_in_head(written(&state).as_bytes()), Some(1869));
}

#[test]
fn other_heads_are_left_to_the_whole_parse() {
    for text in [
        // Another order (the reference's files), flow style, indentation.
        "kind: state\nversion: 1\nserial: 3\n",
        "{version: 1, kind: state, serial: 3}\n",
        "version: 1\n  serial: 3\n",
        // A value that may go on over lines, or is not a plain decimal.
        "version: 1\ntimestamp: '2026\nserial: 3\n'\n",
        "version: 1\nserial: 03\n",
        "version: 1\nserial: +3\n",
        "version: 1\nserial: 3 # third\n",
        "version: 1\nserial: 99999999999999999999\n",
        "version: 1\nserial: 3\r\n",
        // A key twice, or an unknown key before the serial.
        "version: 1\nversion: 1\nserial: 3\n",
        "version: 1\nstatus: x\nserial: 3\n",
        // The head ends inside the serial's line.
        "version: 1\nserial: 3",
        "",
    ] {
        assert_eq!(serial_in_head(text.as_bytes()), None, "{text:?}");
    }
    // Past the head: not looked for.
    let long = format!("# {}\nversion: 1\nserial: 3\n", "x".repeat(HEAD_BYTES));
    assert_eq!(serial_in_head(long.as_bytes()), None);
    // Comments before the head are skipped.
    assert_eq!(
        serial_in_head(b"# a\n# b\nversion: 1\nkind: state\nserial: 0\n"),
        Some(0)
    );
}
