//! `lifecycle.wants` under `--changed`: a component the plan runs pulls
//! in what it wants, recursively. A wanted component whose own inputs did
//! not change runs too, with the reason `` wanted by `COMPONENT` ``.
//!
//! Wanting adds no ordering edge, so a wanted component may come before
//! the one that wants it: [`super::make`] makes the plan again with the
//! components found so far until no new one is found.

use super::{Execution, Walk};
use crate::plan::{Action, Plan};
use indexmap::IndexMap;
use std::collections::{HashMap, VecDeque};

impl Plan {
    /// What the components the plan runs want, recursively, each with
    /// the first component found (in the order) to want it.
    pub(super) fn wanted_by_running(
        &self,
        wants: &IndexMap<String, Vec<String>>,
    ) -> HashMap<String, String> {
        let mut queue: VecDeque<&str> = self
            .components
            .iter()
            .filter(|c| c.action.runs())
            .map(|c| c.name.as_str())
            .collect();
        let mut found: HashMap<String, String> = HashMap::new();
        while let Some(name) = queue.pop_front() {
            for other in wants.get(name).into_iter().flatten() {
                if other != name && !found.contains_key(other) {
                    found.insert(other.clone(), name.to_string());
                    queue.push_back(other);
                }
            }
        }
        found
    }
}

impl Walk<'_> {
    /// A component `--changed` found unchanged that a running component
    /// wants: it runs, whatever the engine finds at its turn. The reason.
    pub(super) fn wanted_run(&self, name: &str, execution: &mut Execution) -> Option<String> {
        let from = self.pulled.wanted_by.get(name)?;
        let reason = format!("wanted by `{from}`");
        execution.action = Action::Update;
        execution.reasons = vec![reason.clone()];
        execution.unless_inputs_change = false;
        execution.compared.clear();
        Some(reason)
    }
}
