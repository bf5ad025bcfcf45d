//! Issue 42: a deploy of a saved plan when the state moved since the plan
//! (the same lineage, another serial: another run wrote it), decided per
//! component from the state read under the run's lock.
//!
//! - a component whose own state entry is not the one the plan read
//!   (another run applied, undeployed or otherwise wrote it) is never
//!   applied from the stale plan, `--replan` or not: it is refused
//!   ([`Refusal::ChangedSincePlan`]) without failing its dependents, which
//!   read what that run applied; the run ends `incomplete`;
//! - every other component is checked just before it starts on what it
//!   reads: the plan's `reads` (see `reads_checked`), else its parameters
//!   expanded now against the plan's ([`Refusal::ReadsChanged`], its
//!   dependents failing); `--replan` accepts it once the policies pass.
//!
//! A plan without entry digests, or with a removed component another run
//! wrote, is refused whole before anything runs (`EngineError::StateMoved`).

use super::{Run, Step};
use hub_manifest::Manifest;
use hub_params::ExpandedParam;
use hub_plan::plan::replan::{self, ChangedInput, Refusal};
use hub_plan::plan::saved::PlannedComponent;

impl<'a> Run<'a> {
    /// The component as the saved plan has it, when the state moved since
    /// the plan.
    pub(super) fn saved_since_moved(&self, name: &str) -> Option<&PlannedComponent> {
        self.setup.since_plan.as_ref()?;
        let saved = self.options.running.saved.as_deref()?;
        // The saved plan lists the components in the run's order: the
        // run's index finds it without a walk of the plan per component.
        saved
            .components
            .get(self.position(name))
            .filter(|c| c.name == name)
            .or_else(|| saved.components.iter().find(|c| c.name == name))
    }

    /// Refuses a component another run wrote since the plan: said, the run
    /// to end `incomplete`, its entry left alone, and the outputs that run
    /// recorded kept for its dependents (each checked on what it reads).
    pub(super) fn not_written_since_plan(
        &mut self,
        name: &str,
        manifest: &Manifest,
    ) -> Result<(), Step> {
        let Some(since) = &self.setup.since_plan else {
            return Ok(());
        };
        if !since.written.contains(name) {
            return Ok(());
        }
        let reason = Refusal::ChangedSincePlan {
            from: since.from,
            to: since.to,
        }
        .to_string();
        self.keep_recorded_outputs(name, manifest);
        self.tally.fixes.insert(
            name.to_string(),
            "plan again (`hub plan --out`) against the state that run left, review it, then deploy it".into(),
        );
        self.tally
            .mandatory_failures
            .push((name.to_string(), reason.clone()));
        Err(Step::Skipped(reason))
    }

    /// With the state moved since the plan: the parameters of `name` that
    /// differ from the plan's, unless what it reads was compared already
    /// (`reads`); without `--replan` one refuses the component.
    pub(super) fn parameters_since_plan(
        &mut self,
        name: &str,
        params: &[ExpandedParam],
        stale: Vec<ChangedInput>,
    ) -> Result<Vec<ChangedInput>, Step> {
        if !stale.is_empty() {
            return Ok(stale);
        }
        let Some(saved) = self.saved_since_moved(name) else {
            return Ok(stale);
        };
        if !saved.reads.is_empty() {
            return Ok(stale);
        }
        let written = self.setup.since_plan.as_ref().map(|s| &s.written);
        let changed = match written {
            Some(written) => replan::saved_parameters_changed(
                &saved.parameters,
                params,
                written,
                self.options.reveal,
            ),
            None => Vec::new(),
        };
        if changed.is_empty() || self.options.running.replan {
            return Ok(changed);
        }
        let reason = Refusal::ReadsChanged(changed).to_string();
        Err(self.fail(name, &reason, None))
    }
}
