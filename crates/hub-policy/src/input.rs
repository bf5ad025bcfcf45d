//! What a rule reads: `plan`, `change`, `stack` and `now` (the JSON Schema
//! is `schemas/policy-input.schema.json`).

use super::PolicyError;
use hub_manifest::redact::MASK;
use hub_manifest::Elaborated;
use hub_plan::change::ChangeContext;
use hub_plan::plan::Plan;
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// The documents a rule is evaluated over.
#[derive(Debug, Clone)]
pub struct PolicyInput {
    /// The plan as `hub plan --format json` prints it, secrets masked.
    pub plan: Json,
    /// The change the plan is for; empty outside a change.
    pub change: ChangeContext,
    pub stack: StackFacts,
    /// The time of the command (RFC 3339, UTC; `HUB_NOW` pins it).
    pub now: String,
}

impl PolicyInput {
    /// `plan`, `change` (`id`, `sha`, `author`, `event`, empty strings
    /// outside a change; `approvals`, a list of `login`, `association`,
    /// `commit`; `mergeable`, `null` when unknown), `stack` and `now`.
    pub(super) fn documents(&self) -> [(&'static str, Json); 4] {
        let text = |value: &Option<String>| value.clone().unwrap_or_default();
        let change = json!({
            "id": self.change.id,
            "sha": text(&self.change.sha),
            "author": text(&self.change.author),
            "event": text(&self.change.event),
            "approvals": serde_json::to_value(&self.change.approvals).unwrap_or_default(),
            "mergeable": self.change.mergeable,
        });
        let stack = serde_json::to_value(&self.stack).unwrap_or(Json::Null);
        [
            ("plan", self.plan.clone()),
            ("change", change),
            ("stack", stack),
            ("now", Json::String(self.now.clone())),
        ]
    }
}

/// What a rule knows of the stack.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct StackFacts {
    /// `meta.name`.
    pub name: String,
    /// `meta.annotations.environment`, else the value of the stack-level
    /// parameter `environment` when it is plain text; empty otherwise.
    pub environment: String,
    /// `meta.annotations`.
    pub annotations: BTreeMap<String, String>,
}

impl StackFacts {
    pub fn of(elaborated: &Elaborated) -> Self {
        let meta = &elaborated.stack.meta;
        let parameter = || {
            elaborated
                .stack
                .parameters
                .iter()
                .find(|p| p.name == "environment" && p.component.is_empty())
                .and_then(|p| p.value.as_ref().or(p.default_value().as_ref()))
                .and_then(|v| v.as_str())
                .filter(|text| !hub_params::expr::needs_expansion(text))
                .map(str::to_string)
        };
        StackFacts {
            name: meta.name.clone(),
            environment: meta
                .annotations
                .get("environment")
                .cloned()
                .or_else(parameter)
                .unwrap_or_default(),
            annotations: meta.annotations.clone(),
        }
    }
}

/// The plan as `hub plan --format json` prints it, with the values of
/// secrets masked even when the plan was made with `--reveal`.
pub fn plan_document(plan: &Plan) -> Json {
    let mut masked = plan.clone();
    let parameters = masked
        .components
        .iter_mut()
        .flat_map(|c| c.parameters.iter_mut())
        .chain(
            masked
                .removed
                .iter_mut()
                .flat_map(|r| r.parameters.iter_mut()),
        );
    for parameter in parameters.filter(|p| p.digest.is_some()) {
        for value in [&mut parameter.value, &mut parameter.previous]
            .into_iter()
            .flatten()
        {
            *value = MASK.to_string();
        }
    }
    let text = hub_view::preview::render_json(&masked);
    serde_json::from_str(&text).unwrap_or(Json::Null)
}

/// A plan read from a file, for `hub policy test`.
#[derive(Debug, Clone)]
pub struct PlanDocument {
    /// In the shape of `hub plan --format json`.
    pub plan: Json,
    /// What the plan says of the stack: its name.
    pub stack: StackFacts,
    /// A saved plan's stack: the files given to `hub plan` and `-b`; empty
    /// for a JSON plan, which does not name them.
    pub stack_files: Vec<String>,
    pub base_dir: Option<String>,
}

/// The plan in `path`: a plan saved by `hub plan --out` (turned into the
/// shape of `--format json`: what it keeps of each component) or the output
/// of `hub plan --format json`; and what it says of the stack.
pub fn read_plan_document(path: &Path) -> Result<PlanDocument, PolicyError> {
    let not_a_plan = |reason: String| PolicyError::NotAPlan {
        path: path.to_path_buf(),
        reason,
    };
    let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let document: Json =
        serde_json::from_str(&text).map_err(|e| not_a_plan(format!("not JSON ({e})")))?;
    if document.get("version").is_some() && document.get("arguments").is_some() {
        let saved: hub_plan::plan::saved::SavedPlan = serde_json::from_value(document)
            .map_err(|e| not_a_plan(format!("not a saved plan ({e})")))?;
        return Ok(PlanDocument {
            plan: from_saved(&saved),
            stack: StackFacts {
                name: saved.stack.name.clone(),
                ..StackFacts::default()
            },
            stack_files: saved.stack.files.clone(),
            base_dir: saved.arguments.base_dir.clone(),
        });
    }
    match (document.get("stack"), document.get("components")) {
        (Some(Json::String(name)), Some(Json::Array(_))) => {
            let stack = StackFacts {
                name: name.clone(),
                ..StackFacts::default()
            };
            Ok(PlanDocument {
                plan: document,
                stack,
                stack_files: Vec::new(),
                base_dir: None,
            })
        }
        _ => Err(not_a_plan(
            "it has neither the `version` and `arguments` of a saved plan nor the `stack` and `components` of `hub plan --format json`".into(),
        )),
    }
}

/// A saved plan in the shape of `--format json`: the stack, the verb
/// (`deploy`), the state read, each component's `name`, `action`,
/// `reasons` and `parameters` (`name`, `value`; a secret's value masked),
/// `prune` and the counts. What a saved plan does not keep (waits,
/// requirements, previous values) is absent.
fn from_saved(saved: &hub_plan::plan::saved::SavedPlan) -> Json {
    let mut counts: BTreeMap<&str, usize> = [
        "create", "update", "replace", "rerun", "delete", "no-op", "skip", "fail",
    ]
    .into_iter()
    .map(|a| (a, 0))
    .collect();
    let components: Vec<Json> = saved
        .components
        .iter()
        .map(|component| {
            *counts.entry(component.action.as_str()).or_default() += 1;
            let parameters: Vec<Json> = component
                .parameters
                .iter()
                .map(|p| {
                    let value = if p.secret { MASK } else { p.value.as_str() };
                    json!({"name": p.name, "value": value})
                })
                .collect();
            json!({
                "name": component.name,
                "action": component.action.as_str(),
                "reasons": component.reasons,
                "parameters": parameters,
            })
        })
        .collect();
    json!({
        "stack": saved.stack.name,
        "verb": "deploy",
        "state": saved.state.read.as_ref().map(|path| json!({"path": path, "serial": saved.state.serial})),
        "jobs": saved.arguments.jobs,
        "components": components,
        "prune": saved.arguments.prune,
        "counts": counts,
    })
}
