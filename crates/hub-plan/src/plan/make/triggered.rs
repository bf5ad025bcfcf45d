//! The planner's side of the trigger rules (see [`crate::plan::triggers`]):
//! a dependent whose dependencies run first, and the replacements
//! `lifecycle.replaceTriggeredBy` asks for.

use super::{Action, Execution, ParameterChange, ParameterPlan, Walk};
use crate::plan::triggers::{self, Triggers};
use crate::plan::ReplaceUnless;
use hub_manifest::ComponentRef;

/// What a replacement that `lifecycle.replaceTriggeredBy` causes does,
/// ahead of its reasons in the plan.
pub(crate) const REPLACES: &str = "undeploy, then deploy";

/// Why a component the fingerprint found unchanged runs after all.
pub(super) struct Upstream {
    pub reasons: Vec<String>,
    /// `db's host`: the outputs it reads of the components running first.
    pub compared: Vec<String>,
}

impl Walk<'_> {
    pub(super) fn triggers(&self) -> Triggers<'_> {
        Triggers::new(&self.stack.elaborated.stack.lifecycle)
    }

    /// With `--changed`, a component whose folder and parameters are as at
    /// its last deploy runs only if an output it reads, of a component
    /// running first, changes (known only once that one has run); or, in
    /// `lifecycle.triggerAlways`, whenever a component it depends on runs.
    /// `None`: nothing running first can make it run.
    pub(super) fn upstream_runs(&self, name: &str, reference: &ComponentRef) -> Option<Upstream> {
        let runs = |d: &String| self.taken.actions.get(d).is_some_and(|a| a.runs());
        let reads = self.plan.reads(name);
        let mut compared = Vec::new();
        for producer in self.plan.after(name).iter().filter(|p| runs(p)) {
            for output in self.declared(producer) {
                let qualified = format!("{producer}:{}", output.name);
                let read = reads.is_none_or(|r| r.contains(&output.name) || r.contains(&qualified));
                if read {
                    compared.push(format!("{producer}'s {}", output.name));
                }
            }
        }
        if self.triggers().always(name) {
            let running: Vec<String> = reference
                .depends
                .iter()
                .filter(|d| runs(d))
                .cloned()
                .collect();
            if !running.is_empty() {
                let reason = format!(
                    "{} runs first and `lifecycle.triggerAlways` lists it",
                    super::quoted(&running)
                );
                return Some(Upstream {
                    reasons: vec![reason],
                    compared,
                });
            }
        }
        (!compared.is_empty()).then(|| Upstream {
            reasons: vec![triggers::condition(&compared)],
            compared,
        })
    }

    /// `lifecycle.replaceTriggeredBy`: a deployed component that would run
    /// or stay as it is becomes `replace` when a component it names runs
    /// in this plan, or a parameter it names changed.
    pub(super) fn replace_triggered(
        &self,
        name: &str,
        parameters: &[ParameterPlan],
        decided: (Action, Vec<String>, Option<Execution>),
    ) -> (Action, Vec<String>, Option<Execution>) {
        let (action, reasons, execution) = decided;
        let (Some(mut execution), Action::Update | Action::NoOp) = (execution.clone(), action)
        else {
            return (action, reasons, execution);
        };
        let mut found = Vec::new();
        let mut components = Vec::new();
        let mut parameter = false;
        let reaches = self.reaches(name);
        for trigger in self.triggers().replace_triggers(name) {
            if self.stack.reference(trigger).is_some() {
                // Only a component that ran before its turn can count.
                let runs = self.taken.actions.get(trigger).is_some_and(|a| a.runs());
                if runs && reaches(trigger) {
                    components.push(trigger.clone());
                    found.push(format!(
                        "`{trigger}` deploys in this run (`lifecycle.replaceTriggeredBy`)"
                    ));
                }
                continue;
            }
            let changed = parameters
                .iter()
                .any(|p| p.name == *trigger && p.change != ParameterChange::Unchanged);
            if changed {
                parameter = true;
                found.push(format!(
                    "parameter `{trigger}` changed (`lifecycle.replaceTriggeredBy`)"
                ));
            }
        }
        if found.is_empty() {
            return (action, reasons, Some(execution));
        }
        // A replacement is a new start: the undeploy first, then the deploy.
        found[0] = format!("{REPLACES}: {}", found[0]);
        let otherwise = execution.clone();
        execution.action = Action::Replace;
        execution.reasons.clone_from(&found);
        execution.unless_inputs_change = false;
        execution.undeploy_first = true;
        execution.compared.clear();
        // A component planned to run may find its inputs unchanged and
        // not run: then the replacement does not hold.
        execution.replace_unless = (!parameter).then(|| ReplaceUnless {
            components,
            otherwise: Box::new(otherwise),
        });
        (Action::Replace, found, Some(execution))
    }
}
