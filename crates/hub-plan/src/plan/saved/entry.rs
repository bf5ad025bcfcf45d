//! The digest of a component's state entry as a saved plan read it
//! (`components[].entry`): when the state moved between the plan and its
//! apply, a component whose own entry changed (another run applied,
//! undeployed or otherwise wrote it) is refused, the others are checked
//! on what they read.
//!
//! The digest covers what a run of the component writes: its status and
//! message, its timestamps, its parameters, raw outputs, fingerprint,
//! folder and `depends`. Not the snapshot of the stack's outputs
//! (`capturedOutputs`), which other components' runs reshape in the
//! linear layout, nor `hub check`'s health.

use hub_state::ComponentState;
use serde::Serialize;

#[derive(Serialize)]
struct Digested<'a> {
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

/// `sha256:…` of the entry's recorded run; [`super::ABSENT`] without one.
pub fn entry_digest(entry: Option<&ComponentState>) -> String {
    let Some(entry) = entry else {
        return super::ABSENT.to_string();
    };
    let digested = Digested {
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
        let before = entry_digest(Some(&entry));
        assert_eq!(before, entry_digest(Some(&entry.clone())));
        entry.timestamp = "2026-01-02T00:00:00Z".into();
        assert_ne!(before, entry_digest(Some(&entry)));
        assert_eq!(entry_digest(None), "absent");
    }
}
