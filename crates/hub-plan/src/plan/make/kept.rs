//! Which of a component's shown parameters the plan keeps: all of them
//! for `hub plan` (or a run's report), the Terraform binary's alone for a
//! run, and for the text of a plan's changes only how many a component
//! that changes nothing has.

use crate::decide::action::Action;
use crate::plan::{ParameterChange, ParameterPlan};

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
