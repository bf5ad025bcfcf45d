//! How component snapshots are laid out in the file.
//!
//! * `reference` — the Hub CLI's layout (§11.3): every entry's
//!   `capturedOutputs` lists every output known after it ran. A stack of N
//!   components adding one output each writes N²/2 outputs.
//! * `linear` (written by default) — an entry whose snapshot is not empty
//!   and that has an earlier entry with a non-empty snapshot in
//!   `lifecycle.order` names that entry in `capturedOutputsBase`, and
//!   `capturedOutputs` lists only the outputs added or changed against
//!   the base's snapshot; `capturedOutputsRemoved` lists the base's
//!   outputs (`component:name`) it does not hold. Other entries are
//!   written whole, as in the reference's layout.
//!
//! Reading accepts both, and a mix: an entry without `capturedOutputsBase`
//! holds its whole snapshot. A reader that does not know the two keys (the
//! reference tool) reads a linear state as one whose snapshots hold only
//! what each component changed.

use super::model::State;
use super::snapshot::Snapshot;
use super::StateError;
use std::collections::HashMap;
use std::path::Path;

/// The layout a state is written in (`--state-format`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum StateFormat {
    /// Each snapshot as a difference against the previous one.
    #[default]
    Linear,
    /// Every snapshot whole, as the Hub CLI writes it.
    Reference,
}

/// For each component entry with a non-empty snapshot, the entry its
/// snapshot is written against: the nearest earlier one in
/// `lifecycle.order` with a non-empty snapshot. One pass over the order.
pub(super) fn snapshot_bases(state: &State) -> HashMap<&str, &str> {
    let mut bases = HashMap::new();
    let mut previous: Option<&str> = None;
    for name in &state.lifecycle.order {
        let Some(entry) = state.components.get(name) else {
            continue;
        };
        if entry.captured_outputs.is_empty() {
            continue;
        }
        if let Some(base) = previous {
            bases.insert(name.as_str(), base);
        }
        previous = Some(name.as_str());
    }
    bases
}

/// Turns the snapshots read from a file into shared ones: each entry
/// naming a base gets the base's snapshot changed by its lists; an entry
/// written whole shares what it has in common with the previous one.
pub(super) fn resolve_snapshots(path: &Path, state: &mut State) -> Result<(), StateError> {
    let mut names: Vec<String> = state
        .lifecycle
        .order
        .iter()
        .filter(|name| state.components.contains_key(*name))
        .cloned()
        .collect();
    let in_order: std::collections::HashSet<&String> = names.iter().collect();
    let strays: Vec<String> = state
        .components
        .keys()
        .filter(|name| !in_order.contains(name))
        .cloned()
        .collect();
    names.extend(strays);
    let mut resolved: HashMap<String, Snapshot> = HashMap::new();
    let mut previous = Snapshot::default();
    for name in names {
        let Some(entry) = state.components.get_mut(&name) else {
            continue;
        };
        let base_name = std::mem::take(&mut entry.captured_outputs_base);
        let removed = std::mem::take(&mut entry.captured_outputs_removed);
        let read = std::mem::take(&mut entry.captured_outputs);
        entry.captured_outputs = if base_name.is_empty() {
            if !removed.is_empty() {
                return Err(damaged(path, format!("the entry of `{name}` lists `capturedOutputsRemoved` without `capturedOutputsBase`")));
            }
            Snapshot::derive_shared(&previous, read.into_shared())
        } else {
            let Some(base) = resolved.get(&base_name) else {
                return Err(damaged(path, format!("the snapshot of `{name}` is written against `{base_name}`, which is not an earlier component entry of `lifecycle.order`")));
            };
            Snapshot::apply_shared(base, read.into_shared(), removed)
        };
        if !entry.captured_outputs.is_empty() {
            previous = entry.captured_outputs.clone();
        }
        resolved.insert(name, entry.captured_outputs.clone());
    }
    Ok(())
}

fn damaged(path: &Path, reason: String) -> StateError {
    StateError::Damaged {
        path: path.to_path_buf(),
        reason,
        backup: None,
    }
}
