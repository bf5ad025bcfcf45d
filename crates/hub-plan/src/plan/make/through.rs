//! `--plan-steps`: planning through the graph. Each component the plan
//! runs gets planned outputs (its plan step's, or every one unknown when
//! it has none); the components after it read those instead of the
//! state's: a known value as planned, an unknown one as a stand-in that
//! makes the reader `deferred` (see [`crate::plan::planned`]).

use super::{Decision, Visible, Walk};
use crate::plan::expand::{self, Expanded};
use crate::plan::planned::{
    self, Deferred, OutputPlan, OutputSource, PlannedOutput, ReadOutput, StepRequest, UnknownInput,
};
use crate::plan::Action;
use crate::source::discover;
use hub_manifest::{ComponentRef, Manifest};
use hub_params::format::substitution_text;

impl Walk<'_> {
    /// The outputs a component sees, with the planned values of the
    /// components that run before it.
    pub(super) fn through_outputs(&self, visible: &mut Visible) {
        let Some(through) = &self.mode.through else {
            return;
        };
        let of_depends = visible.of_depends.iter_mut().flatten();
        for output in visible.outputs.iter_mut().chain(of_depends) {
            through.apply(output);
        }
    }

    /// For a component the plan runs: deferred when a parameter reads an
    /// unknown output, else planned by its plan step (a failing step makes
    /// it `fail`); its planned outputs are recorded for those after it.
    pub(super) fn through(
        &mut self,
        name: &str,
        reference: &ComponentRef,
        manifest: &Manifest,
        (expanded, visible): (&Expanded, &Visible),
        decision: &mut Decision,
    ) {
        if self.mode.through.is_none() || !decision.action.runs() {
            return;
        }
        let reads = self.planned_reads(name, visible);
        let deferred = deferral(expanded);
        let (from_step, source) = match &deferred {
            Some(_) => (None, OutputSource::Deferred),
            None => match self.plan_step(name, reference, manifest, expanded) {
                Ok(Some(said)) => {
                    if let Some(broken) = self.step_contract_failure(name, manifest, &said) {
                        decision.broken(broken.reason, broken.certain);
                    }
                    (Some(said), OutputSource::PlanStep)
                }
                Ok(None) => (None, OutputSource::NoPlanStep),
                Err(error) => {
                    decision.action = Action::Fail;
                    decision.reasons = vec![format!("its plan step failed: {error}")];
                    (None, OutputSource::PlanStep)
                }
            },
        };
        let outputs = planned::of_component(manifest, from_step.as_deref());
        // A secret planned value is masked wherever hub writes it, as a
        // secret output of a deploy is.
        for output in outputs.iter().filter(|o| o.secret) {
            if let Some(value) = &output.value {
                hub_manifest::masked::learn(&substitution_text(Some(value)));
            }
        }
        decision.through = crate::plan::planned::Through {
            outputs: outputs
                .iter()
                .map(|output| self.shown_output(output, source))
                .collect(),
            deferred,
            reads,
        };
        if let Some(through) = self.mode.through.as_mut() {
            through.record(name, outputs);
        }
    }

    /// Runs the component's plan step, when it has one.
    fn plan_step(
        &self,
        name: &str,
        reference: &ComponentRef,
        manifest: &Manifest,
        expanded: &Expanded,
    ) -> Result<Option<Vec<PlannedOutput>>, String> {
        let Some(through) = &self.mode.through else {
            return Ok(None);
        };
        let base = self.options.components_base_dir.as_deref();
        let dir = self
            .stack
            .component_dir(reference, base)
            .map_err(|e| e.to_string())?;
        let Some(implementation) = discover::plan_step(&dir) else {
            return Ok(None);
        };
        let request = StepRequest {
            component: name,
            dir: &dir,
            implementation: &implementation,
            manifest,
            params: &expanded.params,
        };
        through.steps().plan(&request).map(Some)
    }

    fn shown_output(&self, output: &PlannedOutput, source: OutputSource) -> OutputPlan {
        let value = output.value.as_ref().map(|value| {
            let text = substitution_text(Some(value));
            self.redactor
                .text(&output.name, "", output.secret, &text)
                .into_owned()
        });
        OutputPlan {
            name: output.name.clone(),
            known: value.is_some(),
            value,
            source,
        }
    }
}

impl Walk<'_> {
    /// The known planned outputs of components the plan runs that
    /// `name`'s parameters read (`name` of an output, or `component:name`).
    fn planned_reads(&self, name: &str, visible: &Visible) -> Vec<ReadOutput> {
        let Some(through) = &self.mode.through else {
            return Vec::new();
        };
        let mut reads: Vec<ReadOutput> = Vec::new();
        for read in self.plan.reads(name).into_iter().flatten() {
            let (wanted, output) = match read.split_once(':') {
                Some((component, output)) => (Some(component), output),
                None => (None, read.as_str()),
            };
            let found = visible
                .outputs
                .iter()
                .rev()
                .find(|o| o.name == output && wanted.is_none_or(|w| w == o.component));
            let Some(found) = found.filter(|o| through.runs(&o.component)) else {
                continue;
            };
            let text = substitution_text(Some(&found.value));
            if expand::unknown(&text)
                || reads
                    .iter()
                    .any(|r| r.component == found.component && r.output == found.name)
            {
                continue;
            }
            let secret = found.kind.starts_with("secret");
            reads.push(ReadOutput {
                component: found.component.clone(),
                output: found.name.clone(),
                digest: crate::plan::text_digest(&text),
                planned: self
                    .redactor
                    .text(&found.name, "", secret, &text)
                    .into_owned(),
            });
        }
        // `reads` of the schedule is a set: in the outputs' order.
        reads.sort_by(|a, b| (&a.component, &a.output).cmp(&(&b.component, &b.output)));
        reads
    }
}

/// The unknown outputs a component's parameters read, when there are any.
fn deferral(expanded: &Expanded) -> Option<Deferred> {
    let mut deferred = Deferred {
        after: Vec::new(),
        inputs: Vec::new(),
    };
    for param in &expanded.params {
        let text = substitution_text(param.value.as_ref());
        for (component, output) in expand::unknown_reads(&text) {
            if !deferred.after.contains(&component) {
                deferred.after.push(component.clone());
            }
            deferred.inputs.push(UnknownInput {
                parameter: param.name.clone(),
                component,
                output,
            });
        }
    }
    (!deferred.inputs.is_empty()).then_some(deferred)
}
