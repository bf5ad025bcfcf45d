//! A replacement that `lifecycle.replaceTriggeredBy` causes (issue 26,
//! item 7): the component's undeploy, with the parameters its state entry
//! records (as `--prune` undeploys a removed component), then its deploy,
//! in the same turn. `--replace` stays a deploy that runs even if nothing
//! changed.

use super::{Run, Step};
use crate::run::prune;
use hub_plan::plan::Action;
use hub_plan::Verb;
use hub_state::ComponentStatus;

impl<'a> Run<'a> {
    /// The plan replaces `name` (undeploy, then deploy) and the replacement
    /// holds: the components it waits for did deploy in this run.
    fn replaces(&self, name: &str) -> bool {
        let execution = self.execution(name);
        execution.undeploy_first
            && execution.action == Action::Replace
            && execution
                .replace_unless
                .as_ref()
                .is_none_or(|unless| self.deployed_in_run(&unless.components))
    }

    /// Runs `name`'s undeploy when its replacement holds. A failed or
    /// interrupted undeploy ends its turn: it is not deployed again.
    pub(super) fn undeploy_before_replace(&mut self, name: &str) -> Result<(), Step> {
        if self.verb != Verb::Deploy || !self.replaces(name) {
            return Ok(());
        }
        let Some(entry) = self
            .ledger
            .state
            .as_ref()
            .and_then(|s| s.components.get(name))
        else {
            return Ok(());
        };
        let entry = entry.clone();
        let mut removed = hub_plan::decide::prune::removed_entry(name, &entry);
        if removed.dir.is_none() {
            removed.dir = self.component_dir(name).ok();
        }
        let reasons = self.execution(name).reasons.join("; ");
        (self.host.log)(&format!("hub: {name}: {reasons}"));
        let verb = self.options.implementation_verb("undeploy");
        let run = prune::Undeploy {
            verb: &verb,
            base_env: &self.setup.base_env,
            base_dir: &self.stack.base_dir,
            sink: self.host.sink,
            interrupts: self.host.interrupts,
            reveal: self.options.reveal,
            log_file: self.log_file(name),
            limit: self.setup.timeouts.limit(name),
        };
        match prune::undeploy(&removed, &entry, &run, self.warnings) {
            prune::Ended::Undeployed => {
                let now = self.clock.now();
                let message = format!("undeployed before its replacement ({reasons})");
                if let Some(state) = self.ledger.state.as_mut() {
                    state.set_component_status(name, ComponentStatus::Undeployed, &message, &now);
                    if let Some(op) = self.ledger.operation {
                        state.append_log(op, &format!("{name}: {message}\n"), &now);
                    }
                }
                self.save_component(name).map_err(Step::Fatal)
            }
            prune::Ended::Failed(reason) => {
                let reason = format!(
                    "its undeploy before the replacement failed ({reason}): it was not deployed again"
                );
                Err(self.fail(name, &reason, None))
            }
            prune::Ended::Interrupted(signal) => Err(self.interrupted(name, signal)),
        }
    }
}
