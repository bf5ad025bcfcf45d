//! The parts of the planner's walk that grow as components are taken:
//! the provides maps, the components taken, which declare which outputs,
//! those decided for another's sake, and (`--plan-steps`) what the
//! components taken plan to output.

use super::Action;
use crate::plan::expand;
use crate::plan::planned::{PlanSteps, PlannedOutput};
use hub_state::CapturedOutput;
use indexmap::IndexMap;
use std::collections::{HashMap, HashSet};

/// The provides map before the first component, and after the components
/// taken so far (one at a time).
pub(super) struct ProvidesMaps {
    pub(super) initial: IndexMap<String, Vec<String>>,
    pub(super) now: IndexMap<String, Vec<String>>,
}

/// The components taken so far, with their action.
#[derive(Default)]
pub(super) struct Taken {
    pub(super) actions: IndexMap<String, Action>,
    /// Those whose `fail` nothing the run produces can change.
    pub(super) certain: HashSet<String>,
    /// Those of `actions` that change the provides map (they declare
    /// capabilities, or are deleted): the only ones `visible_provides`
    /// needs to look at.
    pub(super) providing: Vec<usize>,
}

/// Which components declare which outputs.
#[derive(Default)]
pub(super) struct Declarations {
    /// Output name → the components taken so far that deploy (or are
    /// unchanged) and declare it, in order.
    pub(super) by_name: HashMap<String, Vec<String>>,
    /// Every output the stack's components declare, as `name` and
    /// `component:name`: made on the first failure that asks.
    pub(super) anywhere: std::cell::OnceCell<HashSet<String>>,
}

/// Components decided for another's sake.
pub(super) struct Pulled {
    /// `--changed`: the components a running one wants, each with the
    /// first that wants it ([`crate::plan::Plan::wanted_by_running`]).
    pub(super) wanted_by: HashMap<String, String>,
    /// Dependents an `--affected` selection added: decided as under
    /// `--changed` ([`crate::order::Schedule::judged_dependents`]).
    pub(super) judged: HashSet<String>,
}

/// What the plan says, and whether it plans through the graph.
pub(super) struct Mode<'a> {
    /// `hub plan` says what changed; the engine compares only what
    /// `--changed` needs.
    pub(super) describe: bool,
    /// The plan keeps every component's shown parameters: `hub plan`,
    /// and a run whose report shows them (`--report`). A run without a
    /// report reads only the Terraform binary's (its preflight) and drops
    /// the plan's parameters once it is checked: they are not held for
    /// every component until then.
    pub(super) keep_parameters: bool,
    /// `hub plan` shows only the text of the changes
    /// ([`crate::options::RunOptions::changes_only`]): of a component that
    /// changes nothing the plan keeps how many parameters it has, not
    /// the parameters.
    pub(super) changes_only: bool,
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

    pub(super) fn steps(&self) -> &'a dyn PlanSteps {
        self.steps
    }

    /// Whether `component` is one the plan runs (its outputs are planned).
    pub(super) fn runs(&self, component: &str) -> bool {
        self.planned.contains_key(component)
    }

    /// What a component the plan runs will output.
    pub(super) fn record(&mut self, name: &str, outputs: Vec<PlannedOutput>) {
        self.planned.insert(name.to_string(), outputs);
    }

    /// `output` as the plan expects it after its component applies: the
    /// planned value when known, else a stand-in. Outputs of components
    /// the plan does not run keep the state's value.
    pub(super) fn apply(&self, output: &mut CapturedOutput) {
        let Some(planned) = self.planned.get(&output.component) else {
            return;
        };
        let known = planned.iter().find(|p| p.name == output.name);
        if known.is_some_and(|p| p.secret) && !output.kind.starts_with("secret") {
            output.kind = "secret".to_string();
        }
        output.value = match known.and_then(|p| p.value.clone()) {
            Some(value) => value,
            None => expand::stand_in(&output.component, &output.name),
        };
    }
}
