//! What a component sees (the outputs known, its upstream) and, as the
//! plan says, `--changed`: a component whose inputs did not change does
//! not run.

use super::{Job, Run, Step};
use crate::child::capture;
use hub_manifest::redact::SecretMasker;
use hub_manifest::Manifest;
use hub_params::format::substitution_text;
use hub_params::ExpandedParam;
use hub_plan::decide::digest_cache::DigestCache;
use hub_plan::decide::fingerprint;
use hub_plan::decide::known::View;
use hub_plan::decide::upstream::Bits;
use hub_plan::plan::triggers::{self, Triggers};
use hub_plan::plan::{Action, ComponentPlan, Execution};
use hub_plan::Verb;
use hub_state::{self as state, Fingerprint};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;

impl<'a> Run<'a> {
    // ---- what a component sees -------------------------------------------

    pub(super) fn position(&self, name: &str) -> usize {
        self.setup
            .positions
            .get(name)
            .copied()
            .unwrap_or(usize::MAX)
    }

    /// The positions of the components `name` runs after, directly or not:
    /// asked for only in a parallel run, and worked out once per component.
    pub(super) fn upstream(&mut self, name: &str) -> Option<Rc<Bits>> {
        if !self.setup.parallel {
            return None;
        }
        let plan = &self.setup.plan;
        Some(self.ancestry.upstream(name, &|n| plan.after(n)))
    }

    /// The outputs a component is expanded with (see [`Known`]).
    pub(super) fn visible_outputs(&mut self, name: &str) -> View {
        let upstream = self.upstream(name);
        self.known.visible(name, self.position(name), upstream)
    }

    /// Records a component's outputs and capabilities; returns the view of
    /// the outputs known right after it ran (its snapshot in the state).
    pub(super) fn record_produced(
        &mut self,
        name: &str,
        outputs: Vec<state::CapturedOutput>,
        capabilities: Vec<String>,
    ) -> View {
        let position = self.position(name);
        let upstream = self.upstream(name);
        self.known
            .produced(position, name, outputs, capabilities, upstream)
    }

    // ---- --changed ----------------------------------------------------------

    /// `--changed`: a component whose fingerprint equals the one of its
    /// last successful deploy does not run; its recorded outputs stay
    /// visible. Also remembers what the fingerprint of this run will be.
    pub(super) fn unchanged(
        &mut self,
        name: &str,
        manifest: &Manifest,
        depends: &[String],
        params: &[ExpandedParam],
        visible: &View,
    ) -> Option<Step> {
        // Without a state there is nothing to compare with or record in.
        if self.verb != Verb::Deploy || self.ledger.state.is_none() {
            return None;
        }
        let current = Fingerprint {
            folder: String::new(),
            parameters: fingerprint::parameters_digest(params),
            upstream: fingerprint::upstream_digests(
                depends,
                &self.known.of_components(visible, depends),
            ),
        };
        self.tally
            .pending_fingerprints
            .insert(name.to_string(), current.clone());
        let execution = self.settled_execution(name);
        let lifecycle = &self.stack.elaborated.stack.lifecycle;
        let triggers = Triggers::new(lifecycle);
        let described = self.judged(name, current, &execution, params, &triggers);
        let dependency_ran = || self.deployed_in_run(depends);
        let runs = match (&described, execution.unless_inputs_change) {
            (Some(judged), true) => judged.runs || (triggers.always(name) && dependency_ran()),
            _ => execution.action != Action::NoOp,
        };
        if let Some(error) = &execution.unreadable {
            self.warnings
                .warn(None, format!("component `{name}` runs: {error}"));
        }
        if runs {
            self.say_why_it_runs(name, described, &execution, &triggers);
            return None;
        }
        self.say_why_it_is_skipped(name, described, &execution);
        self.keep_recorded_outputs(name, manifest);
        Some(Step::Unchanged)
    }

    /// What the plan says of `name`, with a replacement the plan made
    /// conditional settled: `lifecycle.replaceTriggeredBy` replaces it only
    /// when one of its triggers deployed in this run.
    fn settled_execution(&self, name: &str) -> Execution {
        let mut execution = self.execution(name);
        if let Some(unless) = execution.replace_unless.take() {
            if !self.deployed_in_run(&unless.components) {
                if self.options.running.why {
                    let names = unless.components.join(", ");
                    (self.host.log)(&format!(
                        "hub: {name} not replaced: {names} did not deploy in this run"
                    ));
                }
                execution = *unless.otherwise;
            }
        }
        execution
    }

    /// What the plan left to the run: with `--changed`, the inputs known
    /// only now (parameters, the dependencies' outputs), compared with
    /// those of the last deploy; the folder was compared by the plan.
    /// (`execution.folder` is set for the components `--changed`'s rules
    /// decide: all under `--changed`, and the dependents an `--affected`
    /// selection added.) The changes are judged by the trigger rules:
    /// which changes count, and `triggerAlways`.
    fn judged(
        &self,
        name: &str,
        mut current: Fingerprint,
        execution: &Execution,
        params: &[ExpandedParam],
        triggers: &Triggers,
    ) -> Option<triggers::Judged> {
        let entry = self
            .ledger
            .state
            .as_ref()
            .and_then(|s| s.components.get(name));
        let described = execution.folder.is_some().then(|| {
            current.folder = execution.folder.clone().unwrap_or_default();
            fingerprint::changes(entry, &current, params)
        });
        described.map(|changes| {
            let recorded = entry.and_then(|e| e.fingerprint.as_ref());
            triggers.judge(name, changes, recorded.map(|r| &r.upstream))
        })
    }

    /// `--why`: why a component runs.
    fn say_why_it_runs(
        &self,
        name: &str,
        described: Option<triggers::Judged>,
        execution: &Execution,
        triggers: &Triggers,
    ) {
        if !self.options.running.why {
            return;
        }
        let reasons = match described {
            Some(judged) if judged.runs => judged.shown.iter().map(ToString::to_string).collect(),
            Some(_) if triggers.always(name) => {
                vec![
                    "a component it depends on ran and `lifecycle.triggerAlways` lists it"
                        .to_string(),
                ]
            }
            _ => execution.reasons.clone(),
        };
        let reasons = reasons.join("; ");
        (self.host.log)(&format!("hub: {name} runs: {reasons}"));
    }

    /// Says a component is skipped: what was compared, or (`--why`) that
    /// nothing changed; and which changes the trigger rules ignored.
    fn say_why_it_is_skipped(
        &self,
        name: &str,
        described: Option<triggers::Judged>,
        execution: &Execution,
    ) {
        if !execution.compared.is_empty() {
            (self.host.log)(&triggers::skipped_line(name, &execution.compared));
        } else if self.options.running.why {
            (self.host.log)(&format!(
                "hub: {name} unchanged: same folder, parameters and upstream outputs as at its last deploy"
            ));
        }
        if let Some(judged) = described.filter(|j| !j.ignored.is_empty()) {
            if self.options.running.why {
                let ignored = triggers::ignored_reason(&judged.ignored);
                (self.host.log)(&format!("hub: {name}: {ignored}"));
            }
        }
    }

    /// A component that does not run keeps the outputs its entry records:
    /// they stay visible to the components after it.
    pub(super) fn keep_recorded_outputs(&mut self, name: &str, manifest: &Manifest) {
        let entry = self
            .ledger
            .state
            .as_ref()
            .and_then(|s| s.components.get(name));
        let recorded = &mut self.setup.recorded_outputs;
        let outputs: Vec<state::CapturedOutput> = entry
            .map(|e| {
                let found = recorded.remove(name);
                found.unwrap_or_else(|| e.captured_outputs.outputs_of(name))
            })
            .unwrap_or_default();
        self.tally.pending_fingerprints.remove(name);
        self.mask_secret_outputs(&outputs);
        self.record_produced(name, outputs, manifest.provides.clone());
    }

    /// One of `names` deployed earlier in this run.
    pub(super) fn deployed_in_run(&self, names: &[String]) -> bool {
        self.summary.entries.iter().any(|e| {
            e.outcome == hub_plan::outcome::Outcome::Deployed && names.contains(&e.component)
        })
    }

    /// The component's entry in the action plan (the plan lists the
    /// selected components in the order of the selection).
    pub(super) fn planned(&self, name: &str) -> Option<&ComponentPlan> {
        let planned = self.setup.planned.components.get(self.position(name))?;
        (planned.name == name).then_some(planned)
    }

    /// What the plan says the deploy does with `name` once it gets past
    /// its conditions; a component the plan does not know runs again.
    pub(super) fn execution(&self, name: &str) -> Execution {
        let planned = self.planned(name).and_then(|c| c.execution.clone());
        planned.unwrap_or_else(|| Execution {
            action: Action::Update,
            reasons: vec![hub_plan::decide::action::RUNS_AGAIN.to_string()],
            folder: None,
            unreadable: None,
            unless_inputs_change: false,
            compared: Vec::new(),
            replace_unless: None,
            undeploy_first: false,
        })
    }

    /// `HUB_TRACE_PLAN=1`: one line per component as its turn comes, with
    /// the action the plan gives it.
    pub(super) fn trace_planned(&self, name: &str) {
        if self.host.var("HUB_TRACE_PLAN").as_deref() != Some("1") {
            return;
        }
        let line = match self.planned(name) {
            Some(planned) => format!(
                "hub: component {name}: executing planned {}",
                planned.action.as_str()
            ),
            None => format!("hub: component {name}: not in the plan"),
        };
        (self.host.log)(&line);
    }

    pub(super) fn mask_secret_outputs(&mut self, outputs: &[state::CapturedOutput]) {
        for output in outputs
            .iter()
            .filter(|o| hub_plan::decide::records::is_secret_output(o))
        {
            self.masker.add(&substitution_text(Some(&output.value)));
        }
    }

    /// The raw outputs whose values were masked as the component printed
    /// them (see [`SecretMasker::names_secret_output`]) stay masked in the
    /// later components' output, as printed (before any decoding).
    pub(super) fn mask_secret_raw_outputs(
        &mut self,
        manifest: &Manifest,
        raw: &capture::RawOutputs,
    ) {
        let mut secret = SecretMasker::new(false);
        secret.add_secret_outputs(&manifest.outputs);
        for (key, value) in raw {
            if secret.names_secret_output(key) {
                self.masker.add(value);
            }
        }
    }

    /// The run's masker, which also masks the values of the component's
    /// secret outputs as it prints them.
    pub(super) fn component_masker(&self, manifest: &Manifest) -> SecretMasker {
        let mut masker = self.masker.clone();
        masker.add_secret_outputs(&manifest.outputs);
        masker
    }

    /// Records the fingerprint of a component that deployed: its folder
    /// as the deploy left it.
    pub(super) fn record_fingerprint(&mut self, name: &str) {
        let Some(mut fingerprint) = self.tally.pending_fingerprints.remove(name) else {
            return;
        };
        let hashed = self.tally.folder_digests.remove(name);
        let folder = hashed.unwrap_or_else(|| {
            self.component_dir(name)
                .map_err(|e| e.to_string())
                .and_then(|dir| folder_digest(&dir, self.options.digest_cache.as_deref()))
        });
        let Some(entry) = self.ledger.state.as_mut().map(|s| s.component_mut(name)) else {
            return;
        };
        match folder {
            Ok(digest) => {
                fingerprint.folder = digest;
                entry.fingerprint = Some(fingerprint);
            }
            Err(error) => {
                entry.fingerprint = None;
                self.warnings.warn(
                    None,
                    format!("component `{name}`: no fingerprint recorded ({error}); `--changed` will run it"),
                );
            }
        }
    }

    /// The folder a component's fingerprint hashes, when it records one:
    /// its thread hashes it once the process ended ([`Job::hash_folder`]).
    pub(super) fn fingerprint_folder(
        &self,
        name: &str,
        dir: &Path,
    ) -> Option<(PathBuf, Option<Arc<DigestCache>>)> {
        self.tally
            .pending_fingerprints
            .contains_key(name)
            .then(|| (dir.to_path_buf(), self.options.digest_cache.clone()))
    }
}

impl Job<'_> {
    /// Hashes the folder its fingerprint records (on the component's
    /// thread, after its process and hooks ended well).
    pub(super) fn hash_folder(&mut self) {
        if let Some((dir, cache)) = &self.fingerprint_folder {
            self.folder_digest = Some(folder_digest(dir, cache.as_deref()));
        }
    }
}

fn folder_digest(dir: &Path, cache: Option<&DigestCache>) -> Result<String, String> {
    fingerprint::folder_digest_with(dir, cache).map_err(|e| e.to_string())
}
