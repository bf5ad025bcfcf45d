//! `hub render GLOB…`: renders templates in the current folder, from a
//! component's script or by hand, as the reference's `render` does. The
//! state is read, never locked or written.
//!
//! Bindings, later ones replacing earlier ones:
//! * with an elaborated file and a component: the stack parameters locked
//!   against the state, the outputs the state recorded for the component
//!   (its snapshot, then its `depends`), and the component's expanded
//!   parameters (as `invoke` sees them);
//! * otherwise: the parameters and outputs the state recorded for the
//!   component, or the stack-level ones without a component (or when the
//!   state has no entry for it, with a warning);
//! * then `-a NAME=VALUE` additional values.
//!
//! Unlike during a deploy, outputs are visible to the templates.

use super::error::EngineError;
use super::invoke::{current_parameters, CurrentParameters};
use crate::child::templates::{self, TemplateErrors};
use hub_manifest::diag::Warnings;
use hub_manifest::Templates;
use hub_plan::error::PlanningError;
use hub_plan::source::stack::Stack;
use hub_state::{self as state, State};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

pub struct RenderOptions {
    /// Files or globs, relative to `dir`.
    pub globs: Vec<String>,
    /// `curly`, `mustache`, `_mustache` or `go`.
    pub kind: String,
    /// `-a` values.
    pub additional: IndexMap<String, String>,
    /// The state's locations: the newest file is read, as `hub deploy`
    /// chooses.
    pub states: Vec<PathBuf>,
    pub component: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    State(#[from] state::StateError),
    #[error(transparent)]
    Templates(#[from] TemplateErrors),
}

impl RenderError {
    pub fn exit_code(&self) -> i32 {
        match self {
            RenderError::Engine(e) => e.exit_code(),
            RenderError::State(e) => e.exit_code(),
            RenderError::Templates(_) => 1,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            RenderError::Engine(EngineError::Planning(PlanningError::StateRequired { .. })) => {
                Some("give the state of a deployed stack with `-s` (or `$HUB_STATE`)".into())
            }
            RenderError::Engine(e) => e.hint(),
            RenderError::State(e) => e.hint(),
            RenderError::Templates(e) => e.hint(),
        }
    }
}

/// Renders the templates; returns the files written.
pub fn render(
    stack: Option<&Stack>,
    options: &RenderOptions,
    dir: &Path,
    environment: &[(String, String)],
    warnings: &mut Warnings,
) -> Result<Vec<PathBuf>, RenderError> {
    let required = || {
        EngineError::Planning(PlanningError::StateRequired {
            flag: "render",
            path: options.states.first().cloned(),
        })
    };
    // A remote location that cannot be read (bucket, credentials,
    // endpoint) is reported as such, not taken for a missing file.
    if let Some(remote) = options.states.iter().find(|p| state::is_remote(p)) {
        state::read(remote, warnings)?;
    }
    let path = state::locations::to_read(&options.states).ok_or_else(required)?;
    let Some(stored) = state::read(path, warnings)? else {
        return Err(required().into());
    };
    let mut values = match (stack, options.component.as_deref()) {
        (Some(stack), Some(name)) => from_stack(stack, name, path, &stored, environment, warnings)?,
        (_, component) => from_state(&stored, component, warnings),
    };
    values.extend(
        options
            .additional
            .iter()
            .map(|(name, value)| (name.clone(), Some(Value::String(value.clone())))),
    );
    let selection = Templates {
        kind: options.kind.clone(),
        files: options.globs.clone(),
        ..Templates::default()
    };
    let component = options.component.as_deref().unwrap_or("*stack*");
    Ok(templates::render_values(
        dir, &selection, &values, component, warnings,
    )?)
}

fn from_stack(
    stack: &Stack,
    name: &str,
    state_path: &Path,
    stored: &State,
    environment: &[(String, String)],
    warnings: &mut Warnings,
) -> Result<Vec<(String, Option<Value>)>, EngineError> {
    let CurrentParameters {
        locked,
        outputs,
        expanded,
    } = current_parameters(
        stack,
        name,
        state_path,
        Some(stored),
        &IndexMap::new(),
        environment,
        warnings,
    )?;
    let mut values: Vec<(String, Option<Value>)> = locked
        .params
        .values()
        .filter(|p| p.component().is_empty() || p.component() == name)
        .map(|p| (p.name().to_string(), p.value.clone()))
        .collect();
    values.extend(
        outputs
            .iter()
            .map(|o| (o.name.clone(), o.non_null_value().cloned())),
    );
    values.extend(expanded.into_iter().map(|p| (p.name, p.value)));
    Ok(values)
}

fn from_state(
    stored: &State,
    component: Option<&str>,
    warnings: &mut Warnings,
) -> Vec<(String, Option<Value>)> {
    let entry = component.and_then(|name| {
        let entry = stored.components.get(name);
        if entry.is_none() {
            warnings.warn(
                None,
                format!("the state has no entry for component `{name}`; rendering with the stack-level parameters and outputs"),
            );
        }
        entry
    });
    let (parameters, outputs) = match entry {
        Some(entry) => (&entry.parameters, entry.captured_outputs.to_vec()),
        None => (&stored.stack_parameters, stored.captured_outputs.clone()),
    };
    let mut values: Vec<(String, Option<Value>)> = parameters
        .iter()
        .filter(|p| p.component().is_empty() || component.is_none_or(|name| p.component() == name))
        .map(|p| (p.name().to_string(), p.non_null_value().cloned()))
        .collect();
    values.extend(
        outputs
            .iter()
            .map(|o| (o.name.clone(), o.non_null_value().cloned())),
    );
    values
}
