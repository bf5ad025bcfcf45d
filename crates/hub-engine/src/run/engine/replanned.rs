//! Issue 42, item 3: a component a saved plan deferred (a parameter read
//! an output known only once its upstream applied) is planned again just
//! before it starts, with the outputs the run produced: its plan step, if
//! it has one, runs with its parameters as they are now (a failure
//! refuses it: it would `fail`), and the parameters the plan showed as
//! known are compared with the new ones. So is a component whose read
//! outputs changed, under `--replan`. What differs refuses it
//! ([`Refusal::Replanned`]) unless `--replan` accepts re-planned parts.
//! The policies are then evaluated on the plan with the component as
//! re-planned (for a deferred component, also when nothing differs: the
//! values the plan did not know are checked now), and it runs only if
//! they pass.

use super::{Run, Step};
use hub_manifest::Manifest;
use hub_params::ExpandedParam;
use hub_plan::plan::planned::{PlanSteps, PlannedOutput, StepRequest};
use hub_plan::plan::replan::{self, ChangedInput, Refusal};
use hub_plan::source::discover;
use std::path::Path;

impl<'a> Run<'a> {
    /// `Err` (the component refused) when the component planned again
    /// is not what the plan said and `--replan` does not accept it.
    /// `stale`: the outputs it reads that changed since the plan.
    pub(super) fn replanned(
        &mut self,
        name: &str,
        manifest: &Manifest,
        dir: &Path,
        params: &[ExpandedParam],
        stale: Vec<ChangedInput>,
    ) -> Result<(), Step> {
        let Some(planned) = self.reviewed(name) else {
            return Ok(());
        };
        let deferred = planned.through.deferred.is_some();
        if !deferred && stale.is_empty() {
            return Ok(());
        }
        let mut differing = stale;
        if deferred {
            differing.extend(replan::known_parameters_changed(
                &planned.parameters,
                params,
                self.options.reveal,
            ));
        }
        if let Err(error) = self.plan_step(name, manifest, dir, params) {
            return Err(self.fail(name, &Refusal::PlanStepFailed(error).to_string(), None));
        }
        if !differing.is_empty() && !self.options.running.replan {
            return Err(self.fail(name, &Refusal::Replanned(differing).to_string(), None));
        }
        // The values the plan did not know are checked by the policies
        // now; so is what `--replan` accepts (without policies to check
        // it with, it is refused).
        let plan = replan::with_replanned(self.reviewed_plan(), name, params, self.options.reveal);
        let verdict = match (self.host.replan_policies, differing.is_empty()) {
            (Some(policies), _) => policies.check(&plan),
            (None, true) => Ok(()),
            (None, false) => Err("no policies were given to check it with".to_string()),
        };
        if let Err(denied) = verdict {
            return Err(self.fail(name, &Refusal::PolicyDenied(denied).to_string(), None));
        }
        let said = match differing.is_empty() {
            true => format!(
                "hub: {name}: planned again with the outputs its upstreams applied: as the plan said"
            ),
            false => {
                let each: Vec<String> = differing.iter().map(ToString::to_string).collect();
                format!(
                    "hub: {name}: re-planned (`--replan`): {}; the policies pass",
                    each.join(", ")
                )
            }
        };
        (self.host.log)(&said);
        Ok(())
    }

    /// Runs the component's plan step with its parameters as they are
    /// now, when it has one.
    fn plan_step(
        &self,
        name: &str,
        manifest: &Manifest,
        dir: &Path,
        params: &[ExpandedParam],
    ) -> Result<Option<Vec<PlannedOutput>>, String> {
        let Some(implementation) = discover::plan_step(dir) else {
            return Ok(None);
        };
        let runner = crate::plan_step::Runner::new(
            self.stack,
            self.options,
            &self.host.environment,
            self.host.hub.clone(),
        );
        let request = StepRequest {
            component: name,
            dir,
            implementation: &implementation,
            manifest,
            params,
        };
        runner.plan(&request).map(Some)
    }
}
