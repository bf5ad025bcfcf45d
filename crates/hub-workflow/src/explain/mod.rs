//! `hub explain`: what a state file says about a deployed stack — its
//! parameters, outputs and capabilities, each component's parameters,
//! outputs and status, and the operation log — read only.
//!
//! Data flows one way: the state (and, optionally, the elaborated file for
//! the order of the components) → [`Explained`], with secrets already
//! masked → one of the renderings in [`render`].

pub mod render;
mod time;

use hub_manifest::diag::Warnings;
use hub_manifest::redact::{Redactor, SecretMasker, MASK};
use hub_state::{CapturedOutput, ComponentState, State};
use std::path::{Path, PathBuf};

/// What was asked for.
#[derive(Debug, Clone)]
pub struct Request {
    /// The elaborated file, for the order of the components (optional).
    pub elaborated: Option<PathBuf>,
    /// The state locations (`-s a,b` style): the newest is read.
    pub states: Vec<PathBuf>,
    /// Only this component (`-c`).
    pub component: Option<String>,
    /// The stack's parameters, outputs and capabilities (`-g`); with `-c`
    /// they are shown too, without it they are the only thing shown.
    pub global: bool,
    /// Each component's `Outputs:` lines as printed (`-r`).
    pub raw_outputs: bool,
    /// Print secrets instead of `(masked)`.
    pub reveal: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error("no state file at {}", list(.paths))]
    NoState { paths: Vec<PathBuf> },
    #[error("give the state file to explain")]
    NoLocation,
    #[error("component `{name}` is not in the stack")]
    UnknownComponent {
        name: String,
        suggestion: Option<String>,
        known: Vec<String>,
    },
    #[error(transparent)]
    State(#[from] hub_state::StateError),
    #[error(transparent)]
    Manifest(#[from] hub_manifest::ManifestError),
}

impl ExplainError {
    pub fn hint(&self) -> Option<String> {
        match self {
            ExplainError::NoState { .. } => {
                Some("deploy the stack first, or name the state with its path".into())
            }
            ExplainError::NoLocation => Some("hub explain [-m ELABORATED] -s STATE".into()),
            ExplainError::UnknownComponent {
                suggestion: Some(name),
                ..
            } => Some(format!("did you mean `{name}`?")),
            ExplainError::UnknownComponent { known, .. } => {
                Some(format!("the components are: {}", known.join(", ")))
            }
            ExplainError::State(e) => e.hint(),
            ExplainError::Manifest(e) => e.hint(),
        }
    }

    pub fn location(&self) -> Option<hub_manifest::diag::Location> {
        match self {
            ExplainError::State(e) => e.location(),
            ExplainError::Manifest(e) => e.location(),
            _ => None,
        }
    }
}

fn list(paths: &[PathBuf]) -> String {
    let names: Vec<String> = paths.iter().map(|p| format!("`{}`", p.display())).collect();
    names.join(", ")
}

/// A named value as shown: already masked when it is a secret.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Entry {
    pub name: String,
    pub value: String,
    /// The `env:` name of a parameter.
    pub env: String,
    /// The brief of an output.
    pub brief: String,
    /// The kind of an output (`secret`, …).
    pub kind: String,
    /// An output recorded as a list or a map (Terraform's `[`, `{`), not
    /// masked: what `--json` and `--yaml` show instead of its JSON text.
    pub structured: Option<serde_json::Value>,
}

/// The stack-wide part (`-g`).
#[derive(Debug, Clone, Default)]
pub struct StackPart {
    /// By qualified name (`name|component`), in the state's order.
    pub parameters: Vec<Entry>,
    pub outputs: Vec<Entry>,
    /// Capability → the components that provide it, sorted by capability.
    pub provides: Vec<(String, Vec<String>)>,
}

#[derive(Debug, Clone, Default)]
pub struct ComponentPart {
    pub name: String,
    pub timestamp: String,
    pub start: String,
    pub end: String,
    pub status: String,
    pub message: String,
    pub kind: String,
    pub version: String,
    pub parameters: Vec<Entry>,
    /// The outputs the component itself produced.
    pub outputs: Vec<Entry>,
    /// Its `Outputs:` lines, with `-r` only.
    pub raw_outputs: Vec<Entry>,
    /// What the last `hub check` found.
    pub health: Option<hub_state::Health>,
}

/// The state, as explained.
#[derive(Debug, Clone, Default)]
pub struct Explained {
    pub kind: String,
    pub name: String,
    pub timestamp: String,
    pub status: String,
    pub message: String,
    pub stack: Option<StackPart>,
    pub components: Vec<ComponentPart>,
    pub operations: Vec<hub_state::Operation>,
}

/// Reads the state (the newest of the locations, as `hub deploy` chooses)
/// and explains it.
pub fn explain(request: &Request, warnings: &mut Warnings) -> Result<Explained, ExplainError> {
    if request.states.is_empty() {
        return Err(ExplainError::NoLocation);
    }
    // A remote location that cannot be read (bucket, credentials,
    // endpoint) is reported as such, not taken for a missing file.
    if let Some(remote) = request.states.iter().find(|p| hub_state::is_remote(p)) {
        hub_state::read(remote, warnings)?;
    }
    let path =
        hub_state::locations::to_read(&request.states).ok_or_else(|| ExplainError::NoState {
            paths: request.states.clone(),
        })?;
    let state = hub_state::read(path, warnings)?.ok_or_else(|| ExplainError::NoState {
        paths: vec![path.to_path_buf()],
    })?;
    let order = match &request.elaborated {
        Some(file) => elaborated_order(file, warnings)?,
        None => Vec::new(),
    };
    build(&state, order, request)
}

/// The `lifecycle.order` of an elaborated file (empty when it has none).
fn elaborated_order(file: &Path, warnings: &mut Warnings) -> Result<Vec<String>, ExplainError> {
    let source = hub_manifest::SourceFile::read(file)?;
    let elaborated = hub_manifest::parse_elaborated(&source, warnings)?;
    Ok(elaborated.stack.lifecycle.order)
}

/// [`Explained`] from a state already read; `order` (from an elaborated
/// file) replaces the state's own when not empty.
pub fn build(
    state: &State,
    order: Vec<String>,
    request: &Request,
) -> Result<Explained, ExplainError> {
    let order = component_order(state, order);
    let secrets = Secrets::of(state, request.reveal);
    let selected: Vec<&str> = match &request.component {
        Some(name) => vec![known_component(name, &order)?],
        None => order.iter().map(String::as_str).collect(),
    };
    let show_stack = request.global || request.component.is_none();
    let show_components = !request.global || request.component.is_some();
    let components = if show_components {
        selected
            .iter()
            .filter_map(|name| Some((*name, state.components.get(*name)?)))
            .map(|(name, entry)| component_part(name, entry, request.raw_outputs, &secrets))
            .collect()
    } else {
        Vec::new()
    };
    Ok(Explained {
        kind: state.meta.kind.clone(),
        name: state.meta.name.clone(),
        timestamp: state.timestamp.clone(),
        status: state.status.to_string(),
        message: secrets.free_text(&state.message),
        stack: show_stack.then(|| stack_part(state, &secrets)),
        components,
        operations: state
            .operations
            .iter()
            .map(|op| hub_state::Operation {
                logs: secrets.free_text(&op.logs),
                ..op.clone()
            })
            .collect(),
    })
}

/// The elaborated file's order, else the state's, then any component the
/// state has that neither lists.
fn component_order(state: &State, order: Vec<String>) -> Vec<String> {
    let mut order = if order.is_empty() {
        state.lifecycle.order.clone()
    } else {
        order
    };
    for name in state.components.keys() {
        if !order.contains(name) {
            order.push(name.clone());
        }
    }
    order
}

fn known_component<'a>(name: &str, order: &'a [String]) -> Result<&'a str, ExplainError> {
    if let Some(found) = order.iter().find(|c| *c == name) {
        return Ok(found);
    }
    Err(ExplainError::UnknownComponent {
        name: name.to_string(),
        suggestion: hub_manifest::keys::suggest(name, order).map(|s| s.key.to_string()),
        known: order.to_vec(),
    })
}

fn stack_part(state: &State, secrets: &Secrets) -> StackPart {
    let parameters = state
        .stack_parameters
        .iter()
        .map(|p| secrets.parameter(p.qualified_name(), &p.value, p.env()))
        .collect();
    let outputs = state
        .stack_outputs
        .iter()
        .map(|o| secrets.output(&o.name, &o.value, &o.kind, &o.brief))
        .collect();
    let mut provides: Vec<(String, Vec<String>)> = state
        .provides
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    provides.sort_by(|a, b| a.0.cmp(&b.0));
    StackPart {
        parameters,
        outputs,
        provides,
    }
}

fn component_part(
    name: &str,
    entry: &ComponentState,
    raw_outputs: bool,
    secrets: &Secrets,
) -> ComponentPart {
    let parameters = entry
        .parameters
        .iter()
        .map(|p| secrets.parameter(p.name().to_string(), &p.value, p.env()))
        .collect();
    let outputs = entry
        .captured_outputs
        .iter()
        .filter(|o| produced_by(o, name))
        .map(|o| secrets.output(&o.name, &o.value, &o.kind, &o.brief))
        .collect();
    let raw_outputs = match raw_outputs {
        true => entry
            .raw_outputs
            .iter()
            .map(|o| Entry {
                name: o.name.clone(),
                value: secrets.text(&o.name, "", &o.value),
                ..Entry::default()
            })
            .collect(),
        false => Vec::new(),
    };
    ComponentPart {
        name: name.to_string(),
        timestamp: entry.timestamp.clone(),
        start: entry.timestamps.start.clone(),
        end: entry.timestamps.end.clone(),
        status: entry.status.to_string(),
        message: secrets.free_text(&entry.message),
        kind: entry.meta.kind.clone(),
        version: match entry.meta.version.is_empty() {
            true => entry.version.clone(),
            false => entry.meta.version.clone(),
        },
        parameters,
        outputs,
        raw_outputs,
        health: entry.health.clone(),
    }
}

/// An output of a component's snapshot that the component produced (the
/// snapshot also holds what the components before it produced);
/// `hub.components.*` bookkeeping outputs are left out.
fn produced_by(output: &CapturedOutput, component: &str) -> bool {
    output.component == component && !output.name.starts_with("hub.components.")
}

/// Decides what is masked: values of secret-looking names and of
/// `kind: secret…` outputs, and those values wherever else they appear.
struct Secrets {
    redactor: Redactor,
    masker: SecretMasker,
}

impl Secrets {
    fn of(state: &State, reveal: bool) -> Secrets {
        let redactor = Redactor::new(false);
        let mut masker = SecretMasker::new(reveal);
        let mut add = |name: &str, kind: &str, value: &yaml_serde::Value| {
            if redactor.hides(name, kind, false) {
                masker.add(&value_text(value));
            }
        };
        for p in &state.stack_parameters {
            add(p.name(), "", &p.value);
        }
        for o in &state.stack_outputs {
            add(&o.name, &o.kind, &o.value);
        }
        for o in &state.captured_outputs {
            add(&o.name, &o.kind, &o.value);
        }
        for entry in state.components.values() {
            for p in &entry.parameters {
                add(p.name(), "", &p.value);
            }
            for o in entry.captured_outputs.iter() {
                add(&o.name, &o.kind, &o.value);
            }
        }
        Secrets {
            redactor: Redactor::new(reveal),
            masker,
        }
    }

    fn value(&self, name: &str, kind: &str, value: &yaml_serde::Value) -> String {
        self.text(name, kind, &value_text(value))
    }

    fn parameter(&self, name: String, value: &yaml_serde::Value, env: &str) -> Entry {
        Entry {
            value: self.value(&name, "", value),
            name,
            env: env.to_string(),
            ..Entry::default()
        }
    }

    fn output(&self, name: &str, value: &yaml_serde::Value, kind: &str, brief: &str) -> Entry {
        let shown = self.value(name, kind, value);
        let structured = match value {
            yaml_serde::Value::Sequence(_) | yaml_serde::Value::Mapping(_)
                if shown == value_text(value) =>
            {
                serde_json::to_value(value).ok()
            }
            _ => None,
        };
        Entry {
            name: name.to_string(),
            value: shown,
            structured,
            brief: brief.to_string(),
            kind: kind.to_string(),
            ..Entry::default()
        }
    }

    fn text(&self, name: &str, kind: &str, text: &str) -> String {
        if self.redactor.hides(name, kind, false) {
            return MASK.to_string();
        }
        self.free_text(text)
    }

    fn free_text(&self, text: &str) -> String {
        self.masker.mask(text).into_owned()
    }
}

/// Strings as they are, numbers and booleans in their YAML spelling, null
/// as empty, lists and maps as compact JSON.
pub fn value_text(value: &yaml_serde::Value) -> String {
    use yaml_serde::Value;
    match value {
        Value::Sequence(_) | Value::Mapping(_) => {
            serde_json::to_string(value).unwrap_or_else(|_| hub_state::scalar_text(value))
        }
        other => hub_state::scalar_text(other),
    }
}
