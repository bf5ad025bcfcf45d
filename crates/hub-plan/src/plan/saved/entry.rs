//! The digest of a component's state entry as a saved plan read it
//! (`components[].entry`): when the state moved between the plan and its
//! apply, a component whose own entry changed (another run applied,
//! undeployed or otherwise wrote it) is refused, the others are checked
//! on what they read.
//!
//! The digest covers what a run of the component writes: its status and
//! message, its timestamps, its parameters, raw outputs, fingerprint,
//! folder and `depends`, and how many operations of the state's history
//! ran it (a phase of theirs names it): a run that wrote the same values
//! at the same recorded time still counts. Not the snapshot of the
//! stack's outputs (`capturedOutputs`), which other components' runs
//! reshape in the linear layout, nor `hub check`'s health.

use hub_state::{ComponentState, State};
use serde::Serialize;
use std::collections::HashMap;

#[derive(Serialize)]
struct Digested<'a> {
    runs: usize,
    timestamp: &'a str,
    timestamps: &'a hub_state::Timestamps,
    status: &'a hub_state::Recorded<hub_state::ComponentStatus>,
    message: &'a str,
    parameters: &'a [hub_state::StateParameter],
    raw_outputs: &'a [hub_state::RawOutput],
    fingerprint: &'a Option<hub_state::Fingerprint>,
    dir: &'a str,
    depends: &'a [String],
}

/// The digest of each of `names`' entries in `state` (see
/// [`entry_digest`]), the history read once.
pub fn entry_digests<'a>(
    state: Option<&State>,
    names: impl Iterator<Item = &'a String>,
) -> HashMap<String, String> {
    let runs = phase_counts(state);
    names
        .map(|name| {
            let entry = state.and_then(|s| s.components.get(name));
            let ran = runs.get(name.as_str()).copied().unwrap_or(0);
            (name.clone(), entry_digest(entry, ran))
        })
        .collect()
}

/// How many operations of the state's history have a phase for each
/// component.
fn phase_counts(state: Option<&State>) -> HashMap<&str, usize> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    for operation in state.map(|s| s.operations.as_slice()).unwrap_or_default() {
        for phase in &operation.phases {
            *counts.entry(phase.phase.as_str()).or_default() += 1;
        }
    }
    counts
}

/// `sha256:…` of the entry's recorded run, `runs` the operations that ran
/// it; [`super::ABSENT`] without an entry.
pub fn entry_digest(entry: Option<&ComponentState>, runs: usize) -> String {
    let Some(entry) = entry else {
        return super::ABSENT.to_string();
    };
    let digested = Digested {
        runs,
        timestamp: &entry.timestamp,
        timestamps: &entry.timestamps,
        status: &entry.status,
        message: &entry.message,
        parameters: &entry.parameters,
        raw_outputs: &entry.raw_outputs,
        fingerprint: &entry.fingerprint,
        dir: &entry.dir,
        depends: &entry.depends,
    };
    super::text_digest(&serde_json::to_string(&digested).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_entry_has_another_digest_and_none_is_absent() {
        let mut entry = ComponentState::default();
        let before = entry_digest(Some(&entry), 1);
        assert_eq!(before, entry_digest(Some(&entry.clone()), 1));
        // Another run of the same values at the same time.
        assert_ne!(before, entry_digest(Some(&entry), 2));
        entry.timestamp = "2026-01-02T00:00:00Z".into();
        assert_ne!(before, entry_digest(Some(&entry), 1));
        assert_eq!(entry_digest(None, 0), "absent");
    }
}
