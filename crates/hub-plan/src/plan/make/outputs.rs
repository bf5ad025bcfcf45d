//! The declared outputs of a component checked before it runs: what the
//! run would find wrong with them whatever the component prints (a
//! `value` naming something that will not exist, an output with no source)
//! fails the plan instead of the component after its script ran.

use super::Walk;
use crate::order::schedule::Verb;
use hub_manifest::Manifest;
use hub_params::{certain_output_problems, ExpandedParam, ParamsError};

/// Why a component's outputs cannot be computed: one line for the plan's
/// reasons, and the full text with the fix for the deploy that refuses it.
#[derive(Debug, Clone)]
pub(super) struct OutputsFailure {
    pub reason: String,
    pub certain: String,
}

impl Walk<'_> {
    /// Why the component's outputs cannot be computed, whatever it
    /// prints; `None` when they can, or when it does not deploy.
    pub(super) fn outputs_failure(
        &self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
    ) -> Option<OutputsFailure> {
        // An output read from what the component prints (`fromTfVar`)
        // cannot fail before it runs: only the others are looked at.
        let printed_only = manifest.outputs.iter().all(|o| !o.from_tf_var.is_empty());
        if self.plan.verb != Verb::Deploy || printed_only {
            return None;
        }
        certain_output_problems(name, params, &manifest.outputs, None)?;
        // Again, pointing at the declarations: that scans the file, done
        // only when there is something to report.
        let source = self.stack.declarations(name);
        let error = certain_output_problems(name, params, &manifest.outputs, source)?;
        Some(OutputsFailure::of(&error))
    }
}

impl OutputsFailure {
    fn of(error: &ParamsError) -> OutputsFailure {
        let problems: Vec<String> = match error {
            ParamsError::Outputs { problems, .. } => {
                problems.iter().map(|p| p.to_string()).collect()
            }
            other => vec![other.to_string()],
        };
        let lines: Vec<String> = problems.iter().map(|p| format!("\n    - {p}")).collect();
        let hint = error
            .hint()
            .map(|h| format!("\n    help: {h}"))
            .unwrap_or_default();
        OutputsFailure {
            reason: format!("its outputs cannot be computed: {}", problems.join("; ")),
            certain: format!("its outputs cannot be computed:{}{hint}", lines.concat()),
        }
    }
}
