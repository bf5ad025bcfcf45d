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
use serde_json::Value as Json;
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

/// What `--plan-steps` adds to a component's plan: the outputs it will
/// produce, whether it is deferred, and the planned outputs it reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Through {
    /// The outputs it will produce, for a component the plan runs (each
    /// known or not).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<OutputPlan>,
    /// A parameter reads an output known only after an upstream applies;
    /// it is planned then.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deferred: Option<Deferred>,
    /// The planned outputs of components the plan runs that its
    /// parameters read (kept by a saved plan, checked by its deploy; not
    /// printed).
    #[serde(skip)]
    pub reads: Vec<ReadOutput>,
}

/// An output of a component the plan runs that a component after it read
/// with its planned value (`--plan-steps`): a deploy of the plan checks,
/// just before the reader starts, that the output it will read is still
/// that value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct ReadOutput {
    /// The component that produces it.
    pub component: String,
    /// The output's name.
    pub output: String,
    /// `sha256:…` of the planned value's text.
    pub digest: String,
    /// The planned value as shown (`(masked)` for a secret).
    pub planned: String,
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
/// (`name/json`) is unknown: the planner computes neither. A former name
/// the component's `moved` keeps is planned as the output it became.
pub(crate) fn of_component(
    manifest: &Manifest,
    from_step: Option<&[PlannedOutput]>,
) -> Vec<PlannedOutput> {
    let mut planned: Vec<PlannedOutput> = manifest
        .outputs
        .iter()
        .map(|declared| {
            let said = raw_name(declared).and_then(|raw| from_step?.iter().find(|o| o.name == raw));
            PlannedOutput {
                name: declared.name.clone(),
                value: said.and_then(|o| o.value.clone()),
                secret: said.is_some_and(|o| o.secret) || declared.kind.starts_with("secret"),
            }
        })
        .collect();
    for at in 0..planned.len() {
        let Some(moved) = crate::source::renamed::renamed_to(manifest, &planned[at].name) else {
            continue;
        };
        if let Some(now) = planned.iter().find(|p| p.name == moved.to).cloned() {
            planned[at].value = now.value;
            planned[at].secret |= now.secret;
        }
    }
    planned
}

/// The output of the plan step a declared output reads its value from,
/// when it reads one as printed.
fn raw_name(declared: &hub_manifest::Output) -> Option<&str> {
    match declared.from_tf_var.as_str() {
        "" if declared.value.is_some() => None,
        "" => Some(declared.name.as_str()),
        named if named.contains('/') => None,
        named => Some(named),
    }
}

/// The outputs a plan step of hub's built-in Terraform planned: read from
/// [`crate::terraform::PLANNED_FILE`] (`terraform show -json` of the plan), which is then
/// removed; `None` when the step left none.
pub fn take_terraform_planned(dir: &Path) -> Option<Result<Vec<PlannedOutput>, String>> {
    let path = dir.join(crate::terraform::PLANNED_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
        Err(error) => return Some(Err(format!("cannot read `{}`: {error}", path.display()))),
    };
    let _ = std::fs::remove_file(&path);
    Some(parse_planned_json(&text).map_err(|reason| {
        format!("`terraform show -json` did not print what hub expects: {reason}")
    }))
}

/// `output_changes` of `terraform show -json`: each output's `after`,
/// unknown when `after_unknown` is true, secret when `after_sensitive` is
/// (Terraform writes `true` for a whole value, a structure of booleans
/// for parts of one: any `true` in it makes the output secret).
pub(crate) fn parse_planned_json(text: &str) -> Result<Vec<PlannedOutput>, String> {
    let json: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Some(changes) = json.get("output_changes") else {
        return Ok(Vec::new());
    };
    let Json::Object(changes) = changes else {
        return Err("`output_changes` is not an object".into());
    };
    let mut planned = Vec::new();
    for (name, change) in changes {
        if change
            .get("actions")
            .and_then(Json::as_array)
            .is_some_and(|actions| {
                actions.iter().any(|a| a.as_str() == Some("delete"))
                    && change.get("after").is_none()
            })
        {
            continue;
        }
        let unknown = change.get("after_unknown").is_some_and(any_true);
        let value = match (unknown, change.get("after")) {
            (false, Some(after)) => Some(json_value(after)?),
            _ => None,
        };
        planned.push(PlannedOutput {
            name: name.clone(),
            value,
            secret: change.get("after_sensitive").is_some_and(any_true),
        });
    }
    Ok(planned)
}

/// `true`, or a structure holding one.
fn any_true(value: &Json) -> bool {
    match value {
        Json::Bool(flag) => *flag,
        Json::Array(items) => items.iter().any(any_true),
        Json::Object(map) => map.values().any(any_true),
        _ => false,
    }
}

/// A planned value as an output's: text as text, anything else as its
/// JSON text (as the deploy records a Terraform collection).
fn json_value(value: &Json) -> Result<Value, String> {
    Ok(Value::String(match value {
        Json::String(text) => text.clone(),
        other => serde_json::to_string(other).map_err(|e| e.to_string())?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_plan_says_which_outputs_are_known_unknown_or_sensitive() {
        // As Terraform 1.0.3 prints `show -json` of a plan of `val = var.x`,
        // `id = uuid()` and a sensitive output.
        let text = json!({
            "format_version": "0.2",
            "output_changes": {
                "id": {"actions": ["create"], "before": null, "after_unknown": true,
                       "before_sensitive": false, "after_sensitive": false},
                "sec": {"actions": ["create"], "before": null, "after": "s-v1",
                        "after_unknown": false, "after_sensitive": true},
                "val": {"actions": ["create"], "before": null, "after": "v1",
                        "after_unknown": false, "after_sensitive": false},
                "list": {"actions": ["create"], "after": ["a", 1],
                         "after_unknown": [false, false], "after_sensitive": [false, true]}
            }
        })
        .to_string();
        let planned = parse_planned_json(&text).expect("planned");
        let get = |name: &str| planned.iter().find(|p| p.name == name).expect(name);
        assert_eq!(get("id").value, None);
        assert!(!get("id").secret);
        assert_eq!(
            get("val").value,
            Some(yaml_serde::Value::String("v1".into()))
        );
        assert!(get("sec").secret);
        assert_eq!(
            get("list").value,
            Some(yaml_serde::Value::String(r#"["a",1]"#.into()))
        );
        assert!(get("list").secret);
        assert_eq!(parse_planned_json("{}").expect("no outputs"), Vec::new());
        assert!(parse_planned_json(r#"{"output_changes": 1}"#).is_err());
        assert!(parse_planned_json("not json").is_err());
    }
}
