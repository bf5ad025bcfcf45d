//! The parts of the planner's walk that grow as components are taken:
//! the provides maps, the components taken, which declare which outputs,
//! and those decided for another's sake.

use super::Action;
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
