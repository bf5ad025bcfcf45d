//! Serde types of the state document (`hub.yaml.state`).
//!
//! Field order is the order in which keys are written. Reading is lenient:
//! every field may be absent, `null` reads as empty, a scalar where text is
//! expected reads as its text, and unknown keys are ignored (the reader
//! warns about them). Writing follows the format's rules: empty top-level
//! fields are omitted except `version`, `kind` and `timestamp`; inside list
//! items `name` and `value` are always written.
//!
//! Parameter and output entries have their own types here rather than the
//! manifest's [`hub_manifest::Parameter`] and [`hub_manifest::Output`]:
//! the state always writes `value` (even `value: null`), which the manifest
//! types omit, and carries keys the manifests do not have
//! (`componentOrigin`, `componentKind`).

pub use super::captured::CapturedOutput;
use super::snapshot::Snapshot;
use super::vocabulary::{ComponentStatus, HealthStatus, OperationStatus, Recorded, StackStatus};
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use yaml_serde::Value;

pub(crate) mod de;
mod parameter;
use de::{is_empty_str, is_zero, lenient_int, lenient_serial, list, map, text};
pub use parameter::StateParameter;

/// The timestamp written when none was ever set (Go's zero time).
pub const ZERO_TIME: &str = "0001-01-01T00:00:00Z";

/// A whole state file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct State {
    /// Always `1`; reading rejects anything else.
    #[serde(deserialize_with = "lenient_int")]
    pub version: i64,
    /// Always `state`; reading rejects anything else.
    #[serde(deserialize_with = "text")]
    pub kind: String,
    /// RFC 3339 time of the last update; written as [`ZERO_TIME`] when empty.
    #[serde(deserialize_with = "text", serialize_with = "timestamp")]
    pub timestamp: String,
    /// This project's write counter: grows by at least one on every write.
    /// The reference tool does not know the key and ignores it.
    #[serde(skip_serializing_if = "is_zero", deserialize_with = "lenient_serial")]
    pub serial: u64,
    /// This project's identity of the state: set when a state is first
    /// written and kept by every later write, so that a writer can tell a
    /// newer version of its own state from another stack's state.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub lineage: String,
    /// Stack status: see [`super::StackStatus`].
    #[serde(skip_serializing_if = "Recorded::is_empty")]
    pub status: Recorded<StackStatus>,
    #[serde(
        skip_serializing_if = "is_empty_str",
        deserialize_with = "text",
        serialize_with = "masked"
    )]
    pub message: String,
    #[serde(skip_serializing_if = "StackMeta::is_empty")]
    pub meta: StackMeta,
    #[serde(skip_serializing_if = "StateLifecycle::is_empty")]
    pub lifecycle: StateLifecycle,
    /// Locked stack parameters, sorted by qualified name when written.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub stack_parameters: Vec<StateParameter>,
    /// Outputs of the whole stack as of the last final update.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub captured_outputs: Vec<CapturedOutput>,
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub stack_outputs: Vec<StackOutput>,
    /// Capability → the components providing it.
    #[serde(skip_serializing_if = "IndexMap::is_empty", deserialize_with = "map")]
    pub provides: IndexMap<String, Vec<String>>,
    #[serde(skip_serializing_if = "IndexMap::is_empty", deserialize_with = "map")]
    pub components: IndexMap<String, ComponentState>,
    /// One entry per run that used the state, oldest first.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub operations: Vec<Operation>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StackMeta {
    /// The manifest kind (`stack`, `application`).
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub kind: String,
    /// The stack's `meta.name`.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub name: String,
}

impl StackMeta {
    fn is_empty(&self) -> bool {
        self.kind.is_empty() && self.name.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StateLifecycle {
    /// The manifest's `lifecycle.order`.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub order: Vec<String>,
}

impl StateLifecycle {
    fn is_empty(&self) -> bool {
        self.order.is_empty()
    }
}

/// A `name = value` line of a component's `Outputs:` block, verbatim.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RawOutput {
    #[serde(deserialize_with = "text")]
    pub name: String,
    #[serde(deserialize_with = "text")]
    pub value: String,
}

/// A stack output (`outputs:` of the stack manifest), expanded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StackOutput {
    #[serde(deserialize_with = "text")]
    pub name: String,
    pub value: Value,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub brief: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub kind: String,
}

/// The state of one component.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ComponentState {
    /// Last update of the entry.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub timestamp: String,
    #[serde(skip_serializing_if = "Timestamps::is_empty")]
    pub timestamps: Timestamps,
    /// See [`super::ComponentStatus`]; empty for an entry never run.
    #[serde(skip_serializing_if = "Recorded::is_empty")]
    pub status: Recorded<ComponentStatus>,
    /// Deprecated in the format: never set by this project, kept when read.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub version: String,
    #[serde(skip_serializing_if = "ComponentMeta::is_empty")]
    pub meta: ComponentMeta,
    #[serde(
        skip_serializing_if = "is_empty_str",
        deserialize_with = "text",
        serialize_with = "masked"
    )]
    pub message: String,
    /// The component's expanded parameters, in the order they were expanded.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub parameters: Vec<StateParameter>,
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub raw_outputs: Vec<RawOutput>,
    /// Every captured output of the stack known right after this component
    /// ran — not only its own. Shared with the other entries' snapshots in
    /// memory; written whole (the reference's layout) or as a difference
    /// (see [`super::layout`]).
    #[serde(skip_serializing_if = "Snapshot::is_empty")]
    pub captured_outputs: Snapshot,
    /// In the linear layout only (this project's key): the entry whose
    /// snapshot `capturedOutputs` is the difference against. Empty in
    /// memory: set while writing, resolved while reading.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub captured_outputs_base: String,
    /// With `capturedOutputsBase`: the base's outputs (`component:name`)
    /// this snapshot does not hold.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub captured_outputs_removed: Vec<String>,
    /// What the last successful deploy was made of; see [`Fingerprint`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<Fingerprint>,
    /// This project's key: the absolute folder the component last ran
    /// from, so that `deploy --prune` can undeploy it once the stack no
    /// longer lists it. Other readers ignore it.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub dir: String,
    /// This project's key: the component's `depends` when it last ran, for
    /// the order in which `deploy --prune` undeploys removed components.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub depends: Vec<String>,
    /// This project's key: what the last `hub check` found; see [`Health`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<Health>,
}

/// The result of a component's last `check` (`hub check`). A key of this
/// project's own: other readers of the state ignore it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Health {
    /// `healthy`, `drifted`, `failed` or `unverifiable`.
    pub status: Recorded<HealthStatus>,
    /// When the check finished.
    #[serde(deserialize_with = "text")]
    pub time: String,
    /// `sha256:<hex>` of the check's output as logged (masked); empty for
    /// a component without a check.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub digest: String,
}

/// What a component's last successful deploy was made of. A key of this
/// project's own: other readers of the state ignore it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Fingerprint {
    /// `sha256:<hex>` of the component folder's files, taken when its
    /// deploy finished.
    #[serde(deserialize_with = "text")]
    pub folder: String,
    /// `sha256:<hex>` of its expanded parameters (names, env names and
    /// values, in order).
    #[serde(deserialize_with = "text")]
    pub parameters: String,
    /// For each direct dependency (`depends`), in that order: `sha256:<hex>`
    /// of that component's outputs the component could read (sorted by
    /// output name).
    #[serde(skip_serializing_if = "IndexMap::is_empty", deserialize_with = "map")]
    pub upstream: IndexMap<String, String>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Timestamps {
    /// Start of the last run of the component.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub start: String,
    /// Last status change.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub end: String,
}

impl Timestamps {
    fn is_empty(&self) -> bool {
        self.start.is_empty() && self.end.is_empty()
    }
}

/// Copied from the component manifest's `meta`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ComponentMeta {
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub origin: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub kind: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub title: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub brief: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub description: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub version: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub maturity: String,
    /// Kept only when shorter than 200 characters.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub icon: String,
}

impl ComponentMeta {
    fn is_empty(&self) -> bool {
        *self == ComponentMeta::default()
    }
}

/// One run that used the state.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Operation {
    /// A UUID v4.
    #[serde(deserialize_with = "text")]
    pub id: String,
    /// `deploy` or `undeploy`.
    #[serde(deserialize_with = "text")]
    pub operation: String,
    /// Last change of the operation.
    #[serde(deserialize_with = "text", serialize_with = "timestamp")]
    pub timestamp: String,
    /// See [`super::OperationStatus`].
    #[serde(skip_serializing_if = "Recorded::is_empty")]
    pub status: Recorded<OperationStatus>,
    /// `args`: the full command line.
    #[serde(skip_serializing_if = "IndexMap::is_empty", deserialize_with = "map")]
    pub options: IndexMap<String, Value>,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub description: String,
    /// `$USER` of the run.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub initiator: String,
    /// Output of a failed component.
    #[serde(
        skip_serializing_if = "is_empty_str",
        deserialize_with = "text",
        serialize_with = "masked"
    )]
    pub logs: String,
    /// One entry per component touched, in first-touch order.
    #[serde(skip_serializing_if = "Vec::is_empty", deserialize_with = "list")]
    pub phases: Vec<Phase>,
}

impl Operation {
    /// `options.args` as text, when present.
    pub fn args(&self) -> Vec<String> {
        match self.options.get("args") {
            Some(Value::Sequence(items)) => items.iter().map(scalar_text).collect(),
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Phase {
    /// The component's name.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub phase: String,
    /// See [`super::OperationStatus`].
    #[serde(skip_serializing_if = "Recorded::is_empty")]
    pub status: Recorded<OperationStatus>,
}

impl State {
    /// The form in which a state is written: stack parameters sorted by
    /// qualified name, captured outputs by `component:name`, map keys
    /// (`provides`, `components`, operation `options`) sorted. Values are
    /// left as they are.
    pub fn canonical(&self) -> State {
        let mut state = self.clone();
        state
            .stack_parameters
            .sort_by_cached_key(StateParameter::qualified_name);
        state
            .captured_outputs
            .sort_by_cached_key(CapturedOutput::qualified_name);
        state.provides.sort_keys();
        state.components.sort_keys();
        for operation in &mut state.operations {
            operation.options.sort_keys();
        }
        state
    }

    /// The capabilities named in `provides`, sorted.
    pub fn provided(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.provides.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }
}

/// The text of a scalar value: strings as they are, numbers and booleans
/// in their YAML spelling, null as empty; lists and maps as YAML.
pub fn scalar_text(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        other => yaml_serde::to_string(other)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_default(),
    }
}

fn timestamp<S: serde::Serializer>(value: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(if value.is_empty() { ZERO_TIME } else { value })
}

/// A message or a log, written with the runner's secrets masked
/// ([`hub_manifest::masked`]): a component's failure can quote them.
fn masked<S: serde::Serializer>(value: &str, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(&hub_manifest::masked::text(value))
}

/// Read without a schema: unknown keys are warned about, with no suggestion.
impl hub_manifest::Document for State {}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> State {
        yaml_serde::from_str(text).expect("state")
    }

    #[test]
    fn nulls_and_scalars_read_as_text() {
        let state = parse("version: 1\nkind: state\nstatus: ~\nmeta: {name: 42}\nserial: \"7\"\n");
        assert_eq!(state.status, "");
        assert_eq!(state.meta.name, "42");
        assert_eq!(state.serial, 7);
    }

    #[test]
    fn null_lists_read_as_empty() {
        let state =
            parse("version: 1\nkind: state\noperations:\ncomponents:\nstackParameters: null\n");
        assert!(state.operations.is_empty());
        assert!(state.components.is_empty());
        assert!(state.stack_parameters.is_empty());
    }

    #[test]
    fn a_non_numeric_serial_is_an_error() {
        let error =
            yaml_serde::from_str::<State>("version: 1\nkind: state\nserial: many\n").unwrap_err();
        assert!(error.to_string().contains("serial"), "{error}");
    }

    #[test]
    fn value_is_always_written_and_empty_fields_are_not() {
        let state = State {
            version: 1,
            kind: "state".into(),
            stack_parameters: vec![StateParameter::new("x", Value::Null)],
            ..State::default()
        };
        let text = yaml_serde::to_string(&state).expect("yaml");
        assert!(text.contains("- name: x\n  value: null\n"), "{text}");
        assert!(text.contains(&format!("timestamp: {ZERO_TIME}")), "{text}");
        assert!(!text.contains("serial"), "{text}");
        assert!(!text.contains("status"), "{text}");
    }

    #[test]
    fn canonical_sorts_lists_and_maps() {
        let mut state = State::default();
        let mut b = StateParameter::new("b", Value::Null);
        b.set_component("x");
        state.stack_parameters = vec![b, StateParameter::new("a", Value::Null)];
        state
            .components
            .insert("z".into(), ComponentState::default());
        state
            .components
            .insert("a".into(), ComponentState::default());
        let canonical = state.canonical();
        let names: Vec<_> = canonical
            .stack_parameters
            .iter()
            .map(StateParameter::qualified_name)
            .collect();
        assert_eq!(names, ["a", "b|x"]);
        assert_eq!(canonical.components.keys().collect::<Vec<_>>(), ["a", "z"]);
    }

    #[test]
    fn operation_args_as_text() {
        let op: Operation =
            yaml_serde::from_str("id: x\noptions: {args: [hub, deploy, 3]}\n").expect("op");
        assert_eq!(op.args(), ["hub", "deploy", "3"]);
    }
}
