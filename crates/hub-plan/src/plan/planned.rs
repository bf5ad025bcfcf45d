//! Planning through the graph (`hub plan --plan-steps`): what a component
//! that runs will output, as its plan step says ([`PlanSteps`]), and the
//! components whose parameters read an output not known before an
//! upstream applies ([`Deferred`]).
//!
//! The planner asks for a component's plan step only; running it is the
//! engine's ([`PlanSteps`] is implemented in `hub_engine::plan_step`), so
//! this crate still starts no process. Each planned output is known (its
//! value) or unknown; a component that runs without a plan step has every
//! output unknown; one that does not run keeps the outputs the state
//! recorded.

use crate::source::discover::Implementation;
use hub_manifest::Manifest;
use hub_params::ExpandedParam;
use serde::Serialize;
use std::path::Path;
use yaml_serde::Value;

/// One output a plan step says its component will produce.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedOutput {
    /// The declared output's name.
    pub name: String,
    /// `None`: known only after the component applies.
    pub value: Option<Value>,
    /// Terraform says it is sensitive, or the output is declared secret.
    pub secret: bool,
}

/// What a plan step is run with: the component, its folder, what runs
/// its `plan` verb, its manifest and its parameters as planned (every one
/// known: a component with an unknown input is deferred, not planned).
pub struct StepRequest<'a> {
    pub component: &'a str,
    pub dir: &'a Path,
    pub implementation: &'a Implementation,
    pub manifest: &'a Manifest,
    pub params: &'a [ExpandedParam],
}

/// Runs a component's plan step and reads the outputs it plans; the
/// error says why the step failed (the component then plans `fail`).
pub trait PlanSteps {
    fn plan(&self, request: &StepRequest<'_>) -> Result<Vec<PlannedOutput>, String>;
}

/// An output of a component the plan runs, as the plan shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OutputPlan {
    pub name: String,
    /// Its value is known before the component applies.
    pub known: bool,
    /// The planned value (`(masked)` for a secret unless `--reveal`);
    /// absent when unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    /// Where the planner has it from.
    pub source: OutputSource,
}

/// Where a planned output comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputSource {
    /// The component's plan step (`plan.sh`, `make plan`, `terraform plan`).
    PlanStep,
    /// The component runs and has no plan step: unknown until it applies.
    NoPlanStep,
    /// The plan step was not run because the component is deferred.
    Deferred,
}

/// A component whose parameters read an output known only after an
/// upstream applies: it is planned then, not now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Deferred {
    /// The components it waits for, in the order first read.
    pub after: Vec<String>,
    /// Each parameter whose value is unknown, with the output it reads.
    pub inputs: Vec<UnknownInput>,
}

/// A parameter whose value reads an unknown output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UnknownInput {
    pub parameter: String,
    /// The upstream component.
    pub component: String,
    /// The output read.
    pub output: String,
}

impl Deferred {
    /// `planned after a applies (unknown: `p` ← output `id` of a)`.
    pub fn text(&self) -> String {
        let inputs: Vec<String> = self
            .inputs
            .iter()
            .map(|i| {
                format!(
                    "`{}` ← output `{}` of {}",
                    i.parameter, i.output, i.component
                )
            })
            .collect();
        format!(
            "planned after {} applies (unknown: {})",
            self.after.join(", "),
            inputs.join(", ")
        )
    }
}

/// The declared outputs of a component that runs, from what its plan
/// step said (`None`: it has none, every output unknown). A declared
/// output reads the planned output its `fromTfVar` names, else the one of
/// its own name; one with a `value:` or a decoded `fromTfVar`
/// (`name/json`) is unknown: the planner computes neither.
pub(crate) fn of_component(
    manifest: &Manifest,
    from_step: Option<&[PlannedOutput]>,
) -> Vec<PlannedOutput> {
    manifest
        .outputs
        .iter()
        .map(|declared| {
            let raw = match declared.from_tf_var.as_str() {
                "" if declared.value.is_some() => None,
                "" => Some(declared.name.as_str()),
                named if named.contains('/') => None,
                named => Some(named),
            };
            let said = raw.and_then(|raw| from_step?.iter().find(|o| o.name == raw));
            PlannedOutput {
                name: declared.name.clone(),
                value: said.and_then(|o| o.value.clone()),
                secret: said.is_some_and(|o| o.secret) || declared.kind.starts_with("secret"),
            }
        })
        .collect()
}
