//! `--plan-steps`: planning through the graph. Each component the plan
//! runs gets planned outputs (its plan step's, or every one unknown when
//! it has none); the components after it read those instead of the
//! state's: a known value as planned, an unknown one as a stand-in that
//! makes the reader `deferred` (see [`crate::plan::planned`]).

use super::{Decision, Visible, Walk};
use crate::plan::expand::{self, Expanded};
use crate::plan::planned::{
    self, Deferred, OutputPlan, OutputSource, PlanSteps, PlannedOutput, StepRequest, UnknownInput,
};
use crate::plan::Action;
use crate::source::discover;
use hub_manifest::{ComponentRef, Manifest};
use hub_params::format::substitution_text;
use hub_state::CapturedOutput;
use std::collections::HashMap;

/// What the plan says, and whether it plans through the graph.
pub(super) struct Mode<'a> {
    /// `hub plan` says what changed; the engine compares only what
    /// `--changed` needs.
    pub(super) describe: bool,
    /// `--plan-steps` (deploy only).
    pub(super) through: Option<Through<'a>>,
}

/// The plan steps' runner and what the components taken so far plan to
/// output.
pub(super) struct Through<'a> {
    steps: &'a dyn PlanSteps,
    /// Component → its planned outputs, for the components the plan runs.
    planned: HashMap<String, Vec<PlannedOutput>>,
}

impl<'a> Through<'a> {
    pub(super) fn new(steps: &'a dyn PlanSteps) -> Self {
        Through {
            steps,
            planned: HashMap::new(),
        }
    }

    /// `output` as the plan expects it after its component applies: the
    /// planned value when known, else a stand-in. Outputs of components
    /// the plan does not run keep the state's value.
    fn apply(&self, output: &mut CapturedOutput) {
        let Some(planned) = self.planned.get(&output.component) else {
            return;
        };
        let known = planned.iter().find(|p| p.name == output.name);
        output.value = match known.and_then(|p| p.value.clone()) {
            Some(value) => value,
            None => expand::stand_in(&output.component, &output.name),
        };
    }
}

/// A component's planned outputs and deferral, as the plan shows them.
#[derive(Debug, Default)]
pub(super) struct ThroughDecided {
    pub(super) outputs: Vec<OutputPlan>,
    pub(super) deferred: Option<Deferred>,
}

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
        expanded: &Expanded,
        decision: &mut Decision,
    ) {
        if self.mode.through.is_none() || !decision.action.runs() {
            return;
        }
        let deferred = deferral(expanded);
        let (from_step, source) = match &deferred {
            Some(_) => (None, OutputSource::Deferred),
            None => match self.plan_step(name, reference, manifest, expanded) {
                Ok(Some(said)) => (Some(said), OutputSource::PlanStep),
                Ok(None) => (None, OutputSource::NoPlanStep),
                Err(error) => {
                    decision.action = Action::Fail;
                    decision.reasons = vec![format!("its plan step failed: {error}")];
                    (None, OutputSource::PlanStep)
                }
            },
        };
        let outputs = planned::of_component(manifest, from_step.as_deref());
        decision.through = ThroughDecided {
            outputs: outputs
                .iter()
                .map(|output| self.shown_output(output, source))
                .collect(),
            deferred,
        };
        if let Some(through) = self.mode.through.as_mut() {
            through.planned.insert(name.to_string(), outputs);
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
        through.steps.plan(&request).map(Some)
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
