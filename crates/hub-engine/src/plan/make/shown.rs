//! How the plan shows a component's parameters: each against the value
//! the state recorded for it, secrets masked.

use super::Walk;
use crate::plan::expand::Expanded;
use crate::plan::{saved_digest, ParameterChange, ParameterPlan};
use hub_params::ExpandedParam;
use hub_state::StateParameter;

impl Walk<'_> {
    /// Each parameter as shown, against the state entry's `parameters`.
    pub(super) fn parameters(&self, name: &str, expanded: &Expanded) -> Vec<ParameterPlan> {
        if expanded.params.is_empty() {
            return Vec::new();
        }
        let recorded: &[StateParameter] = self
            .state
            .and_then(|s| s.components.get(name))
            .map(|entry| entry.parameters.as_slice())
            .unwrap_or_default();
        let mut out: Vec<ParameterPlan> = expanded
            .params
            .iter()
            .map(|param| self.parameter(param, expanded, recorded))
            .collect();
        for gone in recorded
            .iter()
            .filter(|r| !expanded.params.iter().any(|p| p.name == r.name))
        {
            out.push(ParameterPlan {
                name: gone.name.clone(),
                value: None,
                previous: Some(self.recorded_text(gone, false)),
                change: ParameterChange::Removed,
                digest: None,
            });
        }
        out
    }

    fn parameter(
        &self,
        param: &ExpandedParam,
        expanded: &Expanded,
        recorded: &[StateParameter],
    ) -> ParameterPlan {
        let before = recorded.iter().find(|r| r.name == param.name);
        let current = hub_params::format::substitution_text(param.value.as_ref());
        let change = match before {
            None => ParameterChange::Added,
            Some(before) if recorded_value(before) == current => ParameterChange::Unchanged,
            Some(_) => ParameterChange::Changed,
        };
        ParameterPlan {
            name: param.name.clone(),
            value: Some(expanded.shown(param, &self.redactor)),
            previous: before.map(|b| self.recorded_text(b, param.secret)),
            change,
            digest: saved_digest(&param.name, param.secret, &current),
        }
    }

    fn recorded_text(&self, recorded: &StateParameter, secret: bool) -> String {
        self.redactor
            .text(&recorded.name, "", secret, &recorded_value(recorded))
            .into_owned()
    }
}

fn recorded_value(recorded: &StateParameter) -> String {
    hub_params::format::substitution_text(recorded.non_null_value())
}
