//! How the state moved since a saved plan, found under the run's lock:
//! which components another run wrote (see `since_plan`, which decides
//! each component from it).

use hub_plan::plan::saved::{entry_digests, stale, PlanAction, SavedPlan};
use hub_state::State;
use std::collections::HashSet;

/// How the state moved since the plan, found under the lock.
pub(super) struct SincePlan {
    /// The serial the plan read, and the one read now.
    pub(super) from: u64,
    pub(super) to: u64,
    /// The components whose entry another run wrote.
    pub(super) written: HashSet<String>,
}

/// `Some` when the plan `saved` (that read serial `from` of the same
/// lineage) can be applied per component on `loaded`: it records every
/// component's entry and no removed component it deletes was written.
pub(super) fn since_plan(saved: &SavedPlan, loaded: &State, from: u64) -> Option<SincePlan> {
    if !stale::records_entries(saved) || saved.state.lineage.as_deref() != Some(&loaded.lineage) {
        return None;
    }
    let now = entry_digests(Some(loaded), saved.components.iter().map(|c| &c.name));
    let written: HashSet<String> = saved
        .components
        .iter()
        .filter(|c| c.entry.as_ref() != now.get(&c.name))
        .map(|c| c.name.clone())
        .collect();
    let deletes_written = saved
        .components
        .iter()
        .any(|c| c.action == PlanAction::Delete && written.contains(&c.name));
    (!deletes_written).then_some(SincePlan {
        from,
        to: loaded.serial,
        written,
    })
}
