//! What a run keeps: the run record and each job's record.

use crate::model::{CapturedOutput, ComponentState, State};
use serde::{Deserialize, Serialize};

/// The run record's name in the run's folder.
pub(super) const RUN_FILE: &str = "run.json";
pub(super) const JOB_SUFFIX: &str = ".job";

/// Who opened a run, for which plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RunRecord {
    /// The plan's id: the start of the SHA-256 of the plan file.
    pub plan: String,
    /// The plan file as the job that opened the run was given it.
    pub plan_file: String,
    /// The stack's `meta.name`.
    pub stack: String,
    /// RFC 3339.
    pub started: String,
    /// `user on host`.
    pub by: String,
    /// `hub run finish` is closing it: no job starts or records any more.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub closing: bool,
}

impl std::fmt::Display for RunRecord {
    /// `` the run of plan `plan.json` (id 0a1b…) opened by alice on ci-3 at … ``
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the run of plan `{}` (id {}) opened by {} at {}",
            self.plan_file, self.plan, self.by, self.started
        )
    }
}

/// What a job recorded of its component.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct JobRecord {
    /// The plan id of the run that recorded it.
    pub plan: String,
    pub component: String,
    /// `deployed` or `failed`.
    pub status: String,
    /// Why it failed.
    pub message: String,
    /// RFC 3339.
    pub started: String,
    pub finished: String,
    pub by: String,
    /// The component's entry in the state after its run.
    pub entry: ComponentState,
    /// Its outputs among the stack's captured outputs.
    pub captured_outputs: Vec<CapturedOutput>,
    /// The capabilities it provides.
    pub provides: Vec<String>,
    /// The stack's locked parameters, name and order as the job's run
    /// wrote them (a state's first run records them).
    pub stack_parameters: Vec<crate::model::StateParameter>,
    pub meta: crate::model::StackMeta,
    pub order: Vec<String>,
}

pub const DEPLOYED: &str = "deployed";
pub const FAILED: &str = "failed";

impl JobRecord {
    pub fn deployed(&self) -> bool {
        self.status == DEPLOYED
    }

    /// What `state` says of `component` after a run: its entry, outputs
    /// and capabilities.
    pub fn from_state(state: &State, component: &str) -> JobRecord {
        JobRecord {
            component: component.to_string(),
            entry: state.components.get(component).cloned().unwrap_or_default(),
            captured_outputs: state
                .captured_outputs
                .iter()
                .filter(|o| o.component == component)
                .cloned()
                .collect(),
            provides: state
                .provides
                .iter()
                .filter(|(_, by)| by.iter().any(|c| c == component))
                .map(|(capability, _)| capability.clone())
                .collect(),
            ..JobRecord::default()
        }
    }

    /// Puts what the job recorded into `state`: the component's entry,
    /// its outputs (replacing those it had) and its capabilities.
    pub fn apply(&self, state: &mut State) {
        if state.stack_parameters.is_empty() {
            state.stack_parameters = self.stack_parameters.clone();
        }
        if state.meta.name.is_empty() {
            state.meta = self.meta.clone();
        }
        if state.lifecycle.order.is_empty() {
            state.lifecycle.order = self.order.clone();
        }
        let name = &self.component;
        state.components.insert(name.clone(), self.entry.clone());
        state.captured_outputs.retain(|o| o.component != *name);
        state
            .captured_outputs
            .extend(self.captured_outputs.iter().cloned());
        for capability in &self.provides {
            let by = state.provides.entry(capability.clone()).or_default();
            if !by.contains(name) {
                by.push(name.clone());
            }
        }
    }
}
