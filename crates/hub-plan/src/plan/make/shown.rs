//! How the plan shows a component's parameters: each against the value
//! the state recorded for it, secrets masked, and a value that came from
//! the runner's environment (`fromEnv`, `-e`) as `(from $NAME)`: plans
//! reach pull-request comments, the change registry and saved plans.

use super::Walk;
use crate::decide::action::Action;
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

/// Of a component's shown parameters, those a run that does not report
/// them reads before it drops them (`Run::prepare`): the Terraform
/// binary's, which its preflight looks for.
pub(super) fn only_read_by_the_run(mut parameters: Vec<ParameterPlan>) -> Vec<ParameterPlan> {
    parameters.retain(|p| p.name == crate::terraform::BINARY_PARAMETER);
    parameters.shrink_to_fit();
    parameters
}

/// With [`crate::options::RunOptions::changes_only`]: the parameters of a
/// component the text of a plan's changes shows as one line (`action`
/// neither creates, deletes nor fails, and every parameter is as its state
/// entry records it, see [`crate::plan::ComponentPlan::changes`]) are left
/// out but for those the preflight reads ([`only_read_by_the_run`]). Gives
/// the parameters kept and how many, all unchanged, were left out.
pub(super) fn left_out_unchanged(
    action: Action,
    parameters: Vec<ParameterPlan>,
) -> (Vec<ParameterPlan>, usize) {
    let shown = matches!(action, Action::Create | Action::Delete | Action::Fail)
        || parameters
            .iter()
            .any(|p| p.change != ParameterChange::Unchanged);
    if shown {
        return (parameters, 0);
    }
    let all = parameters.len();
    let kept = only_read_by_the_run(parameters);
    let left_out = all - kept.len();
    (kept, left_out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parameter(name: &str, change: ParameterChange) -> ParameterPlan {
        ParameterPlan {
            name: name.to_string(),
            value: Some("v".to_string()),
            previous: Some("v".to_string()),
            change,
            known: true,
            digest: None,
        }
    }

    fn unchanged(names: &[&str]) -> Vec<ParameterPlan> {
        names
            .iter()
            .map(|n| parameter(n, ParameterChange::Unchanged))
            .collect()
    }

    #[test]
    fn a_component_that_changes_nothing_keeps_only_the_count_and_the_binary() {
        let binary = crate::terraform::BINARY_PARAMETER;
        let (kept, left_out) =
            left_out_unchanged(Action::NoOp, unchanged(&["a", binary, "b", "c"]));
        assert_eq!(left_out, 3);
        assert_eq!(kept.len(), 1);
        assert_eq!(kept[0].name, binary);
        let (kept, left_out) = left_out_unchanged(Action::Update, unchanged(&["a", "b"]));
        assert_eq!((kept.len(), left_out), (0, 2));
    }

    #[test]
    fn a_component_that_changes_keeps_every_parameter() {
        for action in [Action::Create, Action::Delete, Action::Fail] {
            let (kept, left_out) = left_out_unchanged(action, unchanged(&["a", "b"]));
            assert_eq!((kept.len(), left_out), (2, 0), "{action:?}");
        }
        let mut parameters = unchanged(&["a", "b"]);
        parameters.push(parameter("c", ParameterChange::Changed));
        let (kept, left_out) = left_out_unchanged(Action::NoOp, parameters);
        assert_eq!((kept.len(), left_out), (3, 0));
    }
}
