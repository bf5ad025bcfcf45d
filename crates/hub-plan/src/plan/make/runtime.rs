//! What of a component's action the run can still change: the conditions
//! the engine checks when its turn comes, and whether a `fail` is certain
//! (nothing the run produces can give what it lacks), so that a deploy
//! refuses it before the first component starts.

use super::{Execution, Expanded, Walk};
use crate::order::schedule::Verb;
use crate::plan::Condition;

impl Walk<'_> {
    /// What the component's action is conditional on at run time.
    pub(super) fn conditions(&self, name: &str, execution: Option<&Execution>) -> Vec<Condition> {
        let mut conditions = Vec::new();
        let depends = self
            .stack
            .reference(name)
            .map(|r| r.depends.as_slice())
            .unwrap_or_default();
        if self.plan.verb == Verb::Deploy && !depends.is_empty() {
            conditions.push(Condition::SkippedIfDependencyFails(depends.to_vec()));
        }
        let requires = self
            .stack
            .elaborated
            .component(name)
            .is_some_and(|m| !m.requires.is_empty());
        let reads = self.plan.reads(name).is_some_and(|r| !r.is_empty());
        if reads || requires || !depends.is_empty() {
            conditions.push(Condition::OutputsKnownAtRunTime);
        }
        if execution.is_some_and(|e| e.unless_inputs_change) {
            conditions.push(Condition::NoOpUnlessInputsChange);
        }
        conditions
    }

    /// A `fail` of expansion that the run cannot change, with each
    /// problem as the deploy would give it: every problem is a name looked
    /// for that no component of the stack declares as an output (a stack
    /// parameter would have been found already).
    pub(super) fn certain_failure(&self, expanded: &Expanded) -> Option<String> {
        if expanded.error.is_some() || expanded.problems.is_empty() {
            return None;
        }
        let names = expanded.unresolved.as_ref()?;
        if names.iter().any(|n| self.declared_anywhere(n)) {
            return None;
        }
        let lines: Vec<String> = expanded
            .problems
            .iter()
            .map(|(_, problem)| format!("\n    - {problem}"))
            .collect();
        Some(format!(
            "its parameters cannot be expanded:{}",
            lines.concat()
        ))
    }

    /// Whether a component of the stack declares the output `name`
    /// (`output`, or `component:output`). The names are gathered once, so
    /// a stack of many failing components costs one pass over it.
    fn declared_anywhere(&self, name: &str) -> bool {
        let declared = self.declarations.anywhere.get_or_init(|| {
            let mut names = std::collections::HashSet::new();
            for manifest in &self.stack.elaborated.components {
                for output in &manifest.outputs {
                    names.insert(output.name.clone());
                    names.insert(format!("{}:{}", manifest.meta.name, output.name));
                }
            }
            names
        });
        declared.contains(name)
    }
}
