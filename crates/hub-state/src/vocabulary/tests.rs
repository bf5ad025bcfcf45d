use super::*;
use crate::{parse, render, ComponentState, Health, State};
use hub_manifest::diag::Warnings;
use proptest::prelude::*;
use std::path::Path;

/// A state whose component `a` has status `status` and health `health`,
/// as the file text this project writes.
fn state_text(status: &str, health: &str) -> String {
    let mut state = State::new(Default::default(), vec!["a".into()]);
    state.components.insert(
        "a".into(),
        ComponentState {
            status: status.into(),
            health: Some(Health {
                status: health.into(),
                time: "2026-01-01T00:00:00Z".into(),
                digest: String::new(),
            }),
            ..ComponentState::default()
        },
    );
    render(&state).expect("render")
}

fn round_trip(text: &str) -> String {
    let state = parse(Path::new("hub.yaml.state"), text, &mut Warnings::default()).expect("parse");
    render(&state).expect("render")
}

#[test]
fn a_status_outside_the_vocabulary_is_kept_as_read() {
    let text = state_text("half-deployed", "flaky");
    assert!(text.contains("status: half-deployed"), "{text}");
    assert!(text.contains("status: flaky"), "{text}");
    let state = parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
    let entry = &state.components["a"];
    assert_eq!(entry.status, Recorded::Other("half-deployed".into()));
    assert_eq!(state.component_status("a"), None);
    assert_eq!(
        entry.health.as_ref().map(|h| h.status.clone()),
        Some(Recorded::Other("flaky".into()))
    );
    assert_eq!(round_trip(&text), text);
}

#[test]
fn known_words_read_as_the_vocabulary() {
    let text = state_text("deployed", "drifted");
    let state = parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
    let entry = &state.components["a"];
    assert_eq!(entry.status, Recorded::Known(ComponentStatus::Deployed));
    assert_eq!(
        entry.health.as_ref().and_then(|h| h.status.known()),
        Some(HealthStatus::Drifted)
    );
    assert_eq!(round_trip(&text), text);
}

#[test]
fn a_missing_or_null_status_reads_as_empty_and_is_not_written() {
    let text = state_text("", "unverifiable");
    assert!(!text.contains("status: \n"), "{text}");
    let state = parse(Path::new("s"), &text, &mut Warnings::default()).expect("parse");
    assert!(state.components["a"].status.is_empty());
    let null = text.replace("    health:", "    status: null\n    health:");
    assert_ne!(
        null, text,
        "the entry has a health key to put status before"
    );
    assert_eq!(round_trip(&null), text);
}

proptest! {
    /// Any status text a file holds is written back as it was read.
    #[test]
    fn any_status_text_round_trips(
        status in "[a-zA-Z][a-zA-Z0-9 _.-]{0,20}",
        health in "[a-zA-Z][a-zA-Z0-9_-]{0,12}",
    ) {
        let text = state_text(&status, &health);
        prop_assert_eq!(round_trip(&text), text);
        let recorded: Recorded<ComponentStatus> = status.clone().into();
        prop_assert_eq!(recorded.as_str(), status.as_str());
    }
}
