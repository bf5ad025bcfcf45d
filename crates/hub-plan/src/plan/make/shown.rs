//! How the plan shows a component's parameters: each against the value
//! the state recorded for it, secrets masked, and a value that came from
//! the runner's environment (`fromEnv`, `-e`) as `(from $NAME)`: plans
//! reach pull-request comments, the change registry and saved plans.

use super::Walk;
use crate::decide::fingerprint;
use crate::plan::expand::{self, Expanded};
use crate::plan::{saved_digest, ParameterChange, ParameterPlan};
use hub_manifest::redact::MASK;
use hub_params::{ExpandedParam, Origin};
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
            .filter(|r| !expanded.params.iter().any(|p| p.name == r.name()))
        {
            out.push(ParameterPlan {
                name: gone.name().to_string(),
                value: None,
                previous: Some(self.recorded_text(gone, false)),
                change: ParameterChange::Removed,
                known: true,
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
        let before = recorded.iter().find(|r| r.name() == param.name);
        let current = hub_params::format::substitution_text(param.value.as_ref());
        let change = match before {
            None => ParameterChange::Added,
            Some(before) if recorded_value(before) == current => ParameterChange::Unchanged,
            // `hub.provides` grows as the stack deploys: as for `--changed`
            // (the fingerprint leaves it out), that is no change.
            Some(_) if !fingerprint::fingerprinted(&param.name) => ParameterChange::Unchanged,
            Some(_) => ParameterChange::Changed,
        };
        if let Some(variable) = self
            .env_variable(&param.origin)
            .filter(|_| !self.options.reveal)
        {
            return ParameterPlan {
                name: param.name.clone(),
                value: Some(format!("(from ${variable})")),
                previous: before.map(|_| MASK.to_string()),
                change,
                known: true,
                digest: Some(crate::plan::text_digest(&expand::digest_text(&current))),
            };
        }
        ParameterPlan {
            name: param.name.clone(),
            value: Some(expanded.shown(param, &self.redactor)),
            previous: before.map(|b| self.recorded_text(b, param.secret)),
            change,
            known: !expand::unknown(&current),
            digest: saved_digest(&param.name, param.secret, &expand::digest_text(&current)),
        }
    }

    /// The variable a value came from, when it came from the environment:
    /// its own `fromEnv`, or the stack parameter it was found as.
    fn env_variable<'o>(&'o self, origin: &'o Origin) -> Option<&'o str> {
        match origin {
            Origin::FromEnv { variable, .. } => Some(variable),
            Origin::Found { key } => match self.locked.get(key)?.origin() {
                Origin::FromEnv { variable, .. } => Some(variable),
                _ => None,
            },
            _ => None,
        }
    }

    fn recorded_text(&self, recorded: &StateParameter, secret: bool) -> String {
        self.redactor
            .text(recorded.name(), "", secret, &recorded_value(recorded))
            .into_owned()
    }
}

fn recorded_value(recorded: &StateParameter) -> String {
    hub_params::format::substitution_text(recorded.non_null_value())
}
