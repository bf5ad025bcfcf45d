//! Changes a run makes to a state, as pure functions: status vocabularies,
//! operations and phases, component entries, provides, which outputs
//! snapshot a run starts from, the stack status at the end of a run, and
//! the state/manifest consistency check.

use super::model::{
    CapturedOutput, ComponentMeta, ComponentState, Operation, Phase, RawOutput, StackMeta, State,
    StateParameter,
};
use super::snapshot::Snapshot;
use super::vocabulary::{ComponentStatus, OperationStatus, Recorded, StackStatus};
use hub_manifest::diag::Warnings;
use indexmap::IndexMap;
use std::collections::HashMap;
use std::fmt;
use yaml_serde::Value;

/// The provider name of capabilities found in the environment; never
/// written to a state.
pub const ENVIRONMENT_PROVIDER: &str = "*environment*";

/// Longest `meta.icon` kept in a component entry.
const MAX_ICON_CHARS: usize = 200;

/// Parameters and outputs whose values differ are not warned about.
const HUB_PREFIX: &str = "hub.";

/// Which operation of [`State::operations`] a run records into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OperationIndex(usize);

/// What a run records when it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperationStart {
    pub id: String,
    /// `deploy` or `undeploy`.
    pub operation: String,
    /// The full command line.
    pub args: Vec<String>,
    pub initiator: String,
}

/// What a component's run leaves in its entry (deploy, after the run).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ComponentRun {
    pub meta: ComponentMeta,
    /// The expanded parameters, `hub.componentName` first.
    pub parameters: Vec<StateParameter>,
    /// Empty when the run produced none: the entry's older ones are kept.
    pub raw_outputs: Vec<RawOutput>,
    /// All captured outputs of the stack known after the run.
    pub snapshot: Vec<CapturedOutput>,
}

impl State {
    /// An empty state for a stack.
    pub fn new(meta: StackMeta, order: Vec<String>) -> State {
        let mut state = State {
            version: 1,
            kind: "state".into(),
            meta,
            ..State::default()
        };
        state.lifecycle.order = order;
        state
    }

    /// Marks the state as updated now.
    pub fn touch(&mut self, now: &str) {
        self.timestamp = now.to_string();
    }

    pub fn set_status(&mut self, status: StackStatus, message: &str, now: &str) {
        self.status = status.into();
        self.message = message.to_string();
        self.touch(now);
    }

    /// Appends an `in-progress` operation; earlier ones are kept.
    pub fn begin_operation(&mut self, start: OperationStart, now: &str) -> OperationIndex {
        let mut options = IndexMap::new();
        let args = start.args.into_iter().map(Value::String).collect();
        options.insert("args".to_string(), Value::Sequence(args));
        self.operations.push(Operation {
            id: start.id,
            operation: start.operation,
            timestamp: now.to_string(),
            status: OperationStatus::InProgress.into(),
            options,
            initiator: start.initiator,
            ..Operation::default()
        });
        self.touch(now);
        OperationIndex(self.operations.len() - 1)
    }

    fn operation_mut(&mut self, index: OperationIndex, now: &str) -> Option<&mut Operation> {
        self.touch(now);
        let operation = self.operations.get_mut(index.0)?;
        operation.timestamp = now.to_string();
        Some(operation)
    }

    /// Sets a component's phase; a component touched the first time is
    /// appended, so phases stay in first-touch order.
    pub fn set_phase(
        &mut self,
        index: OperationIndex,
        component: &str,
        status: OperationStatus,
        now: &str,
    ) {
        self.set_phase_in_order(index, component, status, now, &|_| None);
    }

    /// [`State::set_phase`] keeping the phases in the order `position`
    /// gives, names it has no position for last in first-touch order. The
    /// phases must already be in that order (every one set through here):
    /// the place is found by bisection, so a run's phases cost O(log n)
    /// each however many there are.
    pub fn set_phase_in_order(
        &mut self,
        index: OperationIndex,
        component: &str,
        status: OperationStatus,
        now: &str,
        position: &dyn Fn(&str) -> Option<usize>,
    ) {
        let Some(operation) = self.operation_mut(index, now) else {
            return;
        };
        let status = Recorded::Known(status);
        let rank = |name: &str| position(name).unwrap_or(usize::MAX);
        let key = rank(component);
        let phases = &mut operation.phases;
        let first = phases.partition_point(|p| rank(&p.phase) < key);
        let equal = phases[first..].partition_point(|p| rank(&p.phase) == key);
        // Among equals (names without a position), the one touched last is
        // usually the one touched again.
        match phases[first..first + equal]
            .iter_mut()
            .rev()
            .find(|p| p.phase == component)
        {
            Some(phase) => phase.status = status,
            None => phases.insert(
                first + equal,
                Phase {
                    phase: component.to_string(),
                    status,
                },
            ),
        }
    }

    pub fn finish_operation(&mut self, index: OperationIndex, status: OperationStatus, now: &str) {
        if let Some(operation) = self.operation_mut(index, now) {
            operation.status = status.into();
        }
    }

    /// How many phases the operation has.
    pub fn phases_of(&self, index: OperationIndex) -> usize {
        self.operations.get(index.0).map_or(0, |o| o.phases.len())
    }

    /// Removes the phase of `component` from the operation (a start that
    /// could not be recorded).
    pub fn remove_phase(&mut self, index: OperationIndex, component: &str) {
        if let Some(operation) = self.operations.get_mut(index.0) {
            operation.phases.retain(|p| p.phase != component);
        }
    }

    /// Replaces the operation's `logs`.
    pub fn set_log(&mut self, index: OperationIndex, text: &str, now: &str) {
        if let Some(operation) = self.operation_mut(index, now) {
            operation.logs = text.to_string();
        }
    }

    /// Appends failure output to the operation's `logs`.
    pub fn append_log(&mut self, index: OperationIndex, text: &str, now: &str) {
        if let Some(operation) = self.operation_mut(index, now) {
            if !operation.logs.is_empty() && !operation.logs.ends_with('\n') {
                operation.logs.push('\n');
            }
            operation.logs.push_str(text);
        }
    }

    /// The entry of `name`, created empty when missing.
    pub fn component_mut(&mut self, name: &str) -> &mut ComponentState {
        self.components.entry(name.to_string()).or_default()
    }

    /// Sets a component's status and message (an empty message clears the
    /// old one). Entering `deploying`/`undeploying` starts a new run and
    /// forgets the component's recorded health.
    pub fn set_component_status(
        &mut self,
        name: &str,
        status: ComponentStatus,
        message: &str,
        now: &str,
    ) {
        let entry = self.component_mut(name);
        entry.status = status.into();
        entry.message = message.to_string();
        entry.timestamp = now.to_string();
        if matches!(
            status,
            ComponentStatus::Deploying | ComponentStatus::Undeploying
        ) {
            entry.timestamps.start = now.to_string();
            // What the last `hub check` found no longer describes it.
            entry.health = None;
        }
        entry.timestamps.end = now.to_string();
        self.touch(now);
    }

    /// Records what a component's deploy run produced.
    pub fn record_component_run(&mut self, name: &str, mut run: ComponentRun, now: &str) {
        let outputs = std::mem::take(&mut run.snapshot);
        self.record_component_run_with(name, run, |base| Snapshot::derive(base, outputs), now);
    }

    /// Records what a component's deploy run produced, with the snapshot
    /// `snapshot` builds from the one it is written against (see
    /// [`State::sharing_base`]); `run.snapshot` is not looked at.
    pub fn record_component_run_with(
        &mut self,
        name: &str,
        run: ComponentRun,
        snapshot: impl FnOnce(&Snapshot) -> Snapshot,
        now: &str,
    ) {
        self.record_component_run_at(name, None, run, snapshot, now);
    }

    /// [`State::record_component_run_with`] for a caller that knows where
    /// `name` probably stands in `lifecycle.order` (`at`, checked), so that
    /// recording every component of a large stack does not search the
    /// order once for each.
    pub fn record_component_run_at(
        &mut self,
        name: &str,
        at: Option<usize>,
        run: ComponentRun,
        snapshot: impl FnOnce(&Snapshot) -> Snapshot,
        now: &str,
    ) {
        let base = self.sharing_base(name, at);
        let entry = self.component_mut(name);
        entry.meta = run.meta;
        if entry.meta.icon.chars().count() >= MAX_ICON_CHARS {
            entry.meta.icon.clear();
        }
        entry.parameters = run.parameters;
        if !run.raw_outputs.is_empty() {
            entry.raw_outputs = run.raw_outputs;
        }
        entry.captured_outputs = snapshot(&base);
        entry.timestamp = now.to_string();
        self.touch(now);
    }

    /// The status of `name` as §9.3 counts it: no entry is `undeployed`,
    /// an entry without status is `deployed`; `None` for text outside the
    /// vocabulary.
    pub fn component_status(&self, name: &str) -> Option<ComponentStatus> {
        match self.components.get(name) {
            None => Some(ComponentStatus::Undeployed),
            Some(entry) if entry.status.is_empty() => Some(ComponentStatus::Deployed),
            Some(entry) => entry.status.known(),
        }
    }

    /// The snapshot a new one of `name` is built on: the one it is written
    /// against in the linear layout (the nearest earlier non-empty one in
    /// `lifecycle.order`), so that writing it needs no comparison; else its
    /// own previous one, else the one recorded last.
    fn sharing_base(&self, name: &str, at: Option<usize>) -> Snapshot {
        let order = &self.lifecycle.order;
        let earlier = at
            .filter(|&at| order.get(at).is_some_and(|c| c == name))
            .or_else(|| order.iter().position(|c| c == name))
            .and_then(|at| self.latest_snapshot(&order[..at]));
        let own = self.components.get(name).map(|e| &e.captured_outputs);
        let last = self.components.last().map(|(_, e)| &e.captured_outputs);
        earlier
            .or(own.filter(|s| !s.is_empty()))
            .or(last)
            .cloned()
            .unwrap_or_default()
    }

    /// Each entry's own outputs in its snapshot ([`Snapshot::outputs_of`])
    /// for the entries of `order` with a snapshot, found in one walk along
    /// the order; empty when a snapshot holds an output twice (then ask
    /// each snapshot).
    pub fn own_outputs(&self, order: &[String]) -> HashMap<String, Vec<CapturedOutput>> {
        let snapshots: Vec<(&str, &Snapshot)> = order
            .iter()
            .filter_map(|name| Some((name.as_str(), &self.components.get(name)?.captured_outputs)))
            .filter(|(_, snapshot)| !snapshot.is_empty())
            .collect();
        let Some(each) = super::outputs_of_each(&snapshots) else {
            return HashMap::new();
        };
        let names = snapshots.iter().map(|(name, _)| name.to_string());
        names.zip(each).collect()
    }

    /// Outputs a full undeploy starts with: the stack-level ones, else the
    /// latest non-empty snapshot in `order`.
    pub fn outputs_for_full_undeploy(&self, order: &[String]) -> Vec<CapturedOutput> {
        if !self.captured_outputs.is_empty() {
            return self.captured_outputs.clone();
        }
        self.latest_snapshot(order)
            .map(Snapshot::to_vec)
            .unwrap_or_default()
    }

    /// Outputs a deploy starting at `component` sees: the nearest earlier
    /// non-empty snapshot in `order`; nothing for the first component; the
    /// stack-level outputs when no earlier snapshot has any.
    pub fn outputs_before(&self, order: &[String], component: &str) -> Vec<CapturedOutput> {
        match order.iter().position(|c| c == component) {
            Some(0) => Vec::new(),
            Some(at) => self.snapshot_or_stack_outputs(self.latest_snapshot(&order[..at])),
            None => self.captured_outputs.clone(),
        }
    }

    /// Outputs an undeploy at `component` sees: its own snapshot, else the
    /// nearest earlier non-empty one, else the stack-level outputs.
    pub fn outputs_at(&self, order: &[String], component: &str) -> Vec<CapturedOutput> {
        let upto = order
            .iter()
            .position(|c| c == component)
            .map_or(0, |at| at + 1);
        self.snapshot_or_stack_outputs(self.latest_snapshot(&order[..upto]))
    }

    fn snapshot_or_stack_outputs(&self, snapshot: Option<&Snapshot>) -> Vec<CapturedOutput> {
        match snapshot {
            Some(snapshot) => snapshot.to_vec(),
            None => self.captured_outputs.clone(),
        }
    }

    fn latest_snapshot(&self, order: &[String]) -> Option<&Snapshot> {
        order
            .iter()
            .rev()
            .filter_map(|name| self.components.get(name))
            .map(|entry| &entry.captured_outputs)
            .find(|snapshot| !snapshot.is_empty())
    }

    /// Merges the snapshots of `depends` (those with an entry) into
    /// `outputs`, last dependency first: new outputs are added, empty ones
    /// replaced, different ones replaced with a warning (none for `hub.*`).
    pub fn merge_dependency_outputs(
        &self,
        outputs: &mut Vec<CapturedOutput>,
        depends: &[String],
        warnings: &mut Warnings,
    ) {
        // Where each output is, by qualified name: a snapshot holds every
        // output known when its component ran, so looking each one up by
        // scanning would cost the square of the stack per component.
        let mut index: HashMap<String, usize> = HashMap::with_capacity(outputs.len());
        for (i, output) in outputs.iter().enumerate() {
            // The first of the same name is the one a scan would find.
            index.entry(output.qualified_name()).or_insert(i);
        }
        for dependency in depends.iter().rev() {
            let Some(entry) = self.components.get(dependency) else {
                continue;
            };
            for output in &entry.captured_outputs.to_vec() {
                merge_output(outputs, &mut index, output, dependency, warnings);
            }
        }
    }
}

fn merge_output(
    outputs: &mut Vec<CapturedOutput>,
    index: &mut HashMap<String, usize>,
    output: &CapturedOutput,
    dependency: &str,
    warnings: &mut Warnings,
) {
    let key = output.qualified_name();
    match index.get(&key).map(|&i| &mut outputs[i]) {
        None => {
            index.insert(key, outputs.len());
            outputs.push(output.clone());
        }
        Some(current) if current.value == output.value => {}
        Some(current) => {
            if !is_empty_value(&current.value) && !output.name.starts_with(HUB_PREFIX) {
                warnings.warn(
                    None,
                    format!("output `{key}` differs in the state of `{dependency}`; using the value stored there"),
                );
            }
            *current = output.clone();
        }
    }
}

fn is_empty_value(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        _ => false,
    }
}

/// Adds the state's providers to `current`: current providers first, no
/// duplicates.
pub fn merge_provides(
    current: &mut IndexMap<String, Vec<String>>,
    from_state: &IndexMap<String, Vec<String>>,
) {
    for (capability, providers) in from_state {
        for provider in providers {
            add_provider(current, capability, provider);
        }
    }
}

pub fn add_provider(
    provides: &mut IndexMap<String, Vec<String>>,
    capability: &str,
    provider: &str,
) {
    let providers = provides.entry(capability.to_string()).or_default();
    if !providers.iter().any(|p| p == provider) {
        providers.push(provider.to_string());
    }
}

/// Removes `component` from every capability (undeploy); capabilities left
/// without providers are dropped.
pub fn remove_provider(provides: &mut IndexMap<String, Vec<String>>, component: &str) {
    for providers in provides.values_mut() {
        providers.retain(|p| p != component);
    }
    provides.retain(|_, providers| !providers.is_empty());
}

/// The provides map as a state stores it: without environment-provided
/// capabilities.
pub fn provides_for_state(
    provides: &IndexMap<String, Vec<String>>,
) -> IndexMap<String, Vec<String>> {
    let mut out = provides.clone();
    remove_provider(&mut out, ENVIRONMENT_PROVIDER);
    out
}

/// The stack status at the end of a run, and its message.
///
/// Every component of `order` counts with its state status (no entry:
/// `undeployed`, empty: `deployed`), except those in `skipped` — skipped in
/// this run for an optional reason, which count neither as mandatory nor as
/// optional. With mandatory components: all `deployed` → `deployed`; all
/// `undeployed` and no optional one `deployed` → `undeployed`; otherwise
/// `incomplete`. With optional components only: `deployed` when any is.
pub fn stack_status(
    state: &State,
    order: &[String],
    is_optional: &dyn Fn(&str) -> bool,
    skipped: &[String],
) -> (StackStatus, String) {
    let counted: Vec<(&str, Option<ComponentStatus>, bool)> = order
        .iter()
        .filter(|name| !skipped.contains(name))
        .map(|name| {
            (
                name.as_str(),
                state.component_status(name),
                is_optional(name),
            )
        })
        .collect();
    let mandatory: Vec<_> = counted
        .iter()
        .filter(|(_, _, optional)| !optional)
        .collect();
    let any_optional_deployed = counted
        .iter()
        .any(|(_, status, optional)| *optional && *status == Some(ComponentStatus::Deployed));
    let all_mandatory = |wanted: ComponentStatus| {
        mandatory
            .iter()
            .all(|(_, status, _)| *status == Some(wanted))
    };
    let status = if mandatory.is_empty() {
        if any_optional_deployed {
            StackStatus::Deployed
        } else {
            StackStatus::Undeployed
        }
    } else if all_mandatory(ComponentStatus::Deployed) {
        StackStatus::Deployed
    } else if all_mandatory(ComponentStatus::Undeployed) && !any_optional_deployed {
        StackStatus::Undeployed
    } else {
        StackStatus::Incomplete
    };
    let message = if status == StackStatus::Incomplete {
        group_by_status(&counted, state)
    } else {
        String::new()
    };
    (status, message)
}

/// `deployed: net, app; error: db`, groups in order of first appearance.
fn group_by_status(counted: &[(&str, Option<ComponentStatus>, bool)], state: &State) -> String {
    let mut groups: IndexMap<String, Vec<&str>> = IndexMap::new();
    for (name, status, _) in counted {
        let label = match status {
            Some(status) => status.as_str().to_string(),
            None => state
                .components
                .get(*name)
                .map(|e| e.status.to_string())
                .unwrap_or_default(),
        };
        groups.entry(label).or_default().push(name);
    }
    groups
        .iter()
        .map(|(status, names)| format!("{status}: {}", names.join(", ")))
        .collect::<Vec<_>>()
        .join("; ")
}

/// The parameters whose values must agree between a state and the stack
/// it is used with.
pub const CONSISTENT_PARAMETERS: [&str; 5] = [
    "cloud.kind",
    "cloud.region",
    "terraform.bucket.name",
    "dns.name",
    "dns.domain",
];

/// A way in which a state does not belong to a stack.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inconsistency {
    StackName {
        state: String,
        stack: String,
    },
    Parameter {
        name: String,
        state: String,
        stack: String,
    },
    Components {
        known: usize,
        total: usize,
    },
}

impl fmt::Display for Inconsistency {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Inconsistency::StackName { state, stack } => {
                write!(f, "the state belongs to stack `{state}`, not `{stack}`")
            }
            Inconsistency::Parameter { name, state, stack } => {
                write!(
                    f,
                    "`{name}` is `{state}` in the state but `{stack}` in the stack"
                )
            }
            Inconsistency::Components { known, total } => write!(
                f,
                "only {known} of the state's {total} components are in the stack"
            ),
        }
    }
}

/// Everything that says the state belongs to another stack (§4.4).
/// `stack_parameter` gives the stack's locked value of an unqualified
/// parameter.
pub fn consistency_problems(
    state: &State,
    stack_name: &str,
    stack_parameter: &dyn Fn(&str) -> Option<String>,
    stack_components: &[String],
) -> Vec<Inconsistency> {
    let mut problems = Vec::new();
    if !state.meta.name.is_empty() && state.meta.name != stack_name {
        problems.push(Inconsistency::StackName {
            state: state.meta.name.clone(),
            stack: stack_name.to_string(),
        });
    }
    for name in CONSISTENT_PARAMETERS {
        let in_state = state
            .stack_parameters
            .iter()
            .find(|p| p.name() == name && p.component().is_empty())
            .map(|p| super::model::scalar_text(&p.value));
        if let (Some(in_state), Some(in_stack)) = (in_state, stack_parameter(name)) {
            if in_state != in_stack {
                problems.push(Inconsistency::Parameter {
                    name: name.to_string(),
                    state: in_state,
                    stack: in_stack,
                });
            }
        }
    }
    let total = state.components.len();
    let known = state
        .components
        .keys()
        .filter(|name| stack_components.contains(name))
        .count();
    if total > 2 && known < total / 2 {
        problems.push(Inconsistency::Components { known, total });
    }
    problems
}

#[cfg(test)]
mod tests;
