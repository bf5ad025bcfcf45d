//! A journal record of the whole state (written when a run's journal is
//! folded away), serialized from the state as it is: a record of the whole
//! state is as large as the state, so it is not copied first.

use super::encode_value;
#[cfg(test)]
use super::Record;
use crate::model::{ComponentState, State};
use crate::snapshot::Snapshot;
use crate::StateError;
use serde::Serialize;
use std::collections::HashMap;

/// The line of [`whole`], written from `state` without copying it first:
/// the same text as `encode(&whole(state, serial))`.
pub(crate) fn encode_whole(state: &State, serial: u64) -> Result<String, StateError> {
    encode_value(&WholeRecord { state, serial })
}

/// `whole` borrowed: serializes as the `Record` it returns, field for
/// field, each entry made linear only while it is written.
struct WholeRecord<'s> {
    state: &'s State,
    serial: u64,
}

impl Serialize for WholeRecord<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let state = self.state;
        let components = WholeComponents {
            state,
            bases: crate::layout::snapshot_bases(state),
        };
        // The fields of `Record`, in its order, as it names them.
        let mut record = serializer.serialize_struct("Record", 16)?;
        record.serialize_field("version", &state.version)?;
        record.serialize_field("kind", &state.kind)?;
        record.serialize_field("serial", &self.serial)?;
        record.serialize_field("lineage", &state.lineage)?;
        record.serialize_field("timestamp", &state.timestamp)?;
        record.serialize_field("status", &state.status)?;
        record.serialize_field("message", &state.message)?;
        record.serialize_field("meta", &state.meta)?;
        record.serialize_field("lifecycle", &state.lifecycle)?;
        record.serialize_field("stackParameters", &state.stack_parameters)?;
        record.serialize_field("capturedOutputs", &state.captured_outputs)?;
        record.serialize_field("stackOutputs", &state.stack_outputs)?;
        record.serialize_field("provides", &state.provides)?;
        if !state.components.is_empty() {
            record.serialize_field("components", &components)?;
        }
        if !state.operations.is_empty() {
            record.serialize_field("operations", &state.operations)?;
        }
        record.end()
    }
}

/// The entries of [`WholeRecord`], each in the linear layout.
struct WholeComponents<'s> {
    state: &'s State,
    bases: HashMap<&'s str, &'s str>,
}

impl Serialize for WholeComponents<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let state = self.state;
        let mut map = serializer.serialize_map(Some(state.components.len()))?;
        for (name, entry) in &state.components {
            match self.bases.get(name.as_str()) {
                Some(base) => {
                    let delta = entry
                        .captured_outputs
                        .delta_from(&state.components[*base].captured_outputs);
                    let written = ComponentState {
                        captured_outputs: Snapshot::from_outputs(delta.set),
                        captured_outputs_base: base.to_string(),
                        captured_outputs_removed: delta.removed,
                        ..entry.clone()
                    };
                    map.serialize_entry(name, &written)?;
                }
                None => map.serialize_entry(name, entry)?,
            }
        }
        map.end()
    }
}

/// The whole state as one record: its entries in the linear layout.
#[cfg(test)]
pub(crate) fn whole(state: &State, serial: u64) -> Record {
    let bases = crate::layout::snapshot_bases(state);
    let components = state
        .components
        .iter()
        .map(|(name, entry)| {
            let mut written = entry.clone();
            if let Some(base) = bases.get(name.as_str()) {
                let delta = entry
                    .captured_outputs
                    .delta_from(&state.components[*base].captured_outputs);
                written.captured_outputs = Snapshot::from_outputs(delta.set);
                written.captured_outputs_base = base.to_string();
                written.captured_outputs_removed = delta.removed;
            }
            (name.clone(), Some(written))
        })
        .collect();
    Record {
        version: Some(state.version),
        kind: Some(state.kind.clone()),
        serial,
        lineage: Some(state.lineage.clone()),
        timestamp: Some(state.timestamp.clone()),
        status: Some(state.status.to_string()),
        message: Some(state.message.clone()),
        stack: super::StackHead {
            meta: Some(state.meta.clone()),
            lifecycle: Some(state.lifecycle.clone()),
            stack_parameters: Some(state.stack_parameters.clone()),
            captured_outputs: Some(state.captured_outputs.clone()),
        },
        stack_outputs: Some(state.stack_outputs.clone()),
        provides: Some(state.provides.clone()),
        components,
        operations: state.operations.clone(),
        logs_appended: None,
    }
}
