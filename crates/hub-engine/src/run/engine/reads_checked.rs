//! Issue 42, item 4: a deploy of a plan made with `--plan-steps` checks,
//! just before a component starts, that each planned output it read (the
//! plan's `reads`) is the output it is about to read. One that differs
//! refuses the component ([`Refusal::ReadsChanged`]: its dependents then
//! fail as after any failure; independent components go on), naming the
//! output and its planned and current values, masked when secret; with
//! `--replan` it is planned again instead (see `replanned`).

use super::Run;
use hub_manifest::redact::Redactor;
use hub_params::format::substitution_text;
use hub_plan::decide::known::View;
use hub_plan::plan::replan::{ChangedInput, Input, Refusal};
use std::collections::HashSet;

impl<'a> Run<'a> {
    /// The outputs `name` read in the plan that differ from what the run
    /// produced; without `--replan` one refuses the component.
    pub(super) fn reads_unchanged(
        &mut self,
        name: &str,
        visible: &View,
    ) -> Result<Vec<ChangedInput>, super::Step> {
        let changed = self.reads_changed(name, visible);
        if changed.is_empty() || self.options.running.replan {
            return Ok(changed);
        }
        let reason = Refusal::ReadsChanged(changed).to_string();
        Err(self.fail(name, &reason, None))
    }

    fn reads_changed(&self, name: &str, visible: &View) -> Vec<ChangedInput> {
        // The state moved since the plan: what the saved plan read, not
        // the plan made again on the moved state.
        let reads = match self.saved_since_moved(name) {
            Some(saved) => Some(&saved.reads),
            None => self.reviewed(name).map(|c| &c.through.reads),
        };
        let Some(reads) = reads else {
            return Vec::new();
        };
        if reads.is_empty() {
            return Vec::new();
        }
        let wanted: HashSet<String> = reads
            .iter()
            .map(|r| format!("{}:{}", r.component, r.output))
            .collect();
        let found = self.known.read(visible, &wanted);
        let redactor = Redactor::new(self.options.reveal);
        let mut changed = Vec::new();
        for read in reads {
            let now = found
                .iter()
                .rev()
                .find(|o| o.component == read.component && o.name == read.output);
            let text = now.map(|o| substitution_text(Some(&o.value)));
            if text.as_deref().map(hub_plan::plan::text_digest) == Some(read.digest.clone()) {
                continue;
            }
            let secret = now.is_some_and(|o| o.kind.starts_with("secret"))
                || read.planned == hub_manifest::redact::MASK;
            changed.push(ChangedInput {
                input: Input::Output {
                    component: read.component.clone(),
                    output: read.output.clone(),
                },
                planned: read.planned.clone(),
                now: match &text {
                    Some(text) => redactor.text(&read.output, "", secret, text).into_owned(),
                    None => "(none)".to_string(),
                },
            });
        }
        changed
    }

    /// The component as the reviewed plan has it: a pipeline job's saved
    /// plan made again, else the plan the run executes.
    pub(super) fn reviewed(&self, name: &str) -> Option<&hub_plan::plan::ComponentPlan> {
        match &self.options.running.reviewed {
            // The reviewed plan lists the components in the run's order
            // (it was made again and found equal), so the run's index
            // finds it without a walk of the whole plan per component.
            Some(plan) => plan
                .components
                .get(self.position(name))
                .filter(|c| c.name == name)
                .or_else(|| plan.components.iter().find(|c| c.name == name)),
            None => self.planned(name),
        }
    }

    /// The reviewed plan (see [`Run::reviewed`]).
    pub(super) fn reviewed_plan(&self) -> &hub_plan::plan::Plan {
        match &self.options.running.reviewed {
            Some(plan) => plan,
            None => &self.setup.planned,
        }
    }
}
