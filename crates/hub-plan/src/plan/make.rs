//! The planner: the one place where what a deploy or undeploy does with
//! each component is decided ([`make`]).
//!
//! The selected components are taken in the effective order, each given
//! an [`Action`], through the deploy's decision
//! ([`crate::decide::action::deploy_action`], called from here only):
//!
//! * `fail` when a dependency would fail, its parameters cannot be
//!   expanded, or (deploy) a hard requirement is not provided;
//! * `skip` when a parameter condition of `lifecycle.requires.optional` is
//!   off or an optional requirement is not provided;
//! * `delete` for an undeploy;
//! * for a deploy, `create`, `update`, `replace` or (`--changed` only)
//!   `no-op`, with what changed.
//!
//! Outputs no deploy has produced yet come from the state (the outputs the
//! component saw at its last deploy, [`hub_state::State::outputs_before`]);
//! those of components deploying earlier in this run that the state lacks
//! are shown as `(known after <component> deploys)`.

use super::expand::{self, Expanded};
use super::preflight::EnvEntry;
use super::recorded;
use super::triggers;
use super::{
    Action, ComponentPlan, Execution, ParameterChange, ParameterPlan, Plan, RemovedPlan,
    Requirement, SelectionSeen, StateSeen,
};
use crate::decide::action::{self, ActionOptions, Decided};
use crate::decide::fingerprint;
use crate::decide::known::initial_outputs;
use crate::decide::prune;
use crate::decide::records::scope_outputs;
use crate::decide::upstream::Ancestry;
use crate::options::RunOptions;
use crate::order::requirements::provides_text;
use crate::order::schedule::{self, Schedule, Verb};
use crate::plan::planned::{self, PlanSteps};
use crate::source::stack::Stack;
use crate::timeout::Timeouts;
use hub_manifest::diag::Warnings;
use hub_manifest::redact::Redactor;
use hub_manifest::{ComponentRef, Manifest};
use hub_params::{ComponentScope, ExpandedParam, Locked};
use hub_state::{self as state, CapturedOutput, State};
use indexmap::IndexMap;
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;

/// What the plan is made from: the ordering and selection, the locked
/// parameters, the state as read, the provides map before the first
/// component and the components the stack no longer lists. All borrowed:
/// nothing is copied per component.
pub struct Inputs<'a> {
    pub stack: &'a Stack,
    pub options: &'a RunOptions,
    pub schedule: &'a Schedule,
    pub locked: &'a Locked,
    pub state: Option<&'a State>,
    /// The location the state was read from (or would have been); `None`
    /// with `-n`.
    pub read_path: Option<&'a Path>,
    pub provides: &'a IndexMap<String, Vec<String>>,
    pub removed: &'a [prune::Removed],
    /// `--plan-steps`: what runs each component's plan step (`hub plan`
    /// only); `None` plans with the outputs of the state.
    pub steps: Option<&'a dyn PlanSteps>,
}

/// Who the plan is made for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// `hub plan` (and a saved plan): each action says what changed.
    Show,
    /// A deploy or undeploy about to execute it: only what `--changed`
    /// needs is compared (no folder is read without it).
    Execute,
}

/// Makes the plan: every selected component's action, reasons, waits,
/// parameters and conditions, then the removed components. Warnings (a
/// wildcard condition, a parameter problem) go to `warnings`.
pub fn make(inputs: &Inputs<'_>, purpose: Purpose, warnings: &mut Warnings) -> Plan {
    let wants = &inputs.stack.elaborated.stack.lifecycle.wants;
    let mut wanted_by = HashMap::new();
    // `--changed`: a running component runs what it wants. Wanting adds
    // no ordering edge, so the plan is made again until no new wanted
    // component runs (running more only makes more run: this ends).
    if inputs.options.scope.changed && inputs.schedule.verb == Verb::Deploy && !wants.is_empty() {
        loop {
            // A trial: the plan made last, below, says its warnings.
            let mut trial = Warnings::already_reported();
            let plan = walk(inputs, purpose, &mut trial, wanted_by.clone());
            let found = plan.wanted_by_running(wants);
            if found.keys().all(|name| wanted_by.contains_key(name)) {
                break;
            }
            wanted_by = found;
        }
    }
    walk(inputs, purpose, warnings, wanted_by)
}

/// [`make`], told which components run because a running one wants them.
fn walk(
    inputs: &Inputs<'_>,
    purpose: Purpose,
    warnings: &mut Warnings,
    wanted_by: HashMap<String, String>,
) -> Plan {
    let Inputs {
        stack,
        options,
        schedule,
        locked,
        state,
        read_path,
        provides,
        removed,
        steps,
    } = *inputs;
    let mut walk = Walk {
        stack,
        options,
        plan: schedule,
        locked,
        state,
        redactor: Redactor::new(options.reveal),
        provides: ProvidesMaps {
            initial: provides.clone(),
            now: provides.clone(),
        },
        taken: Taken::default(),
        declarations: Declarations::default(),
        ancestry: RefCell::new(Ancestry::new(&schedule.selected)),
        outputs: initial_outputs(schedule, state),
        recorded: state
            .filter(|_| schedule.verb == Verb::Deploy)
            .map(|state| recorded::Recorded::new(state, &schedule.order)),
        mode: Mode {
            describe: purpose == Purpose::Show,
            keep_parameters: purpose == Purpose::Show || options.running.report_plan,
            changes_only: purpose == Purpose::Show && options.changes_only,
            through: steps
                .filter(|_| schedule.verb == Verb::Deploy)
                .map(Through::new),
        },
        pulled: Pulled {
            wanted_by,
            judged: schedule.judged_dependents(),
        },
        warnings,
    };
    let components = schedule
        .selected
        .iter()
        .map(|name| walk.component(name))
        .collect();
    Plan {
        stack: stack.elaborated.stack.meta.name.clone(),
        verb: schedule.verb,
        state: read_path.map(|path| StateSeen {
            path: path.display().to_string(),
            serial: state.map(|s| s.serial),
            lineage: state.map(|s| s.lineage.clone()),
            entries: options
                .entry_digests
                .then(|| entry_digests(state, schedule, removed)),
        }),
        jobs: options.concurrency,
        selection: SelectionSeen::of(schedule),
        waves: schedule.waves(),
        components,
        problems: Vec::new(),
        prune: options.scope.prune,
        removed: removed
            .iter()
            .map(|r| RemovedPlan::of(r, state, &Redactor::new(options.reveal)))
            .collect(),
        moved: Vec::new(),
    }
}

/// The digest of each selected and removed component's state entry.
fn entry_digests(
    state: Option<&State>,
    schedule: &Schedule,
    removed: &[prune::Removed],
) -> HashMap<String, String> {
    let names = schedule
        .selected
        .iter()
        .chain(removed.iter().map(|r| &r.name));
    super::saved::entry_digests(state, names)
}

/// The walk through the selected components, keeping what the run would
/// have changed by each turn: the provides map and the outputs.
struct Walk<'a> {
    stack: &'a Stack,
    options: &'a RunOptions,
    plan: &'a Schedule,
    locked: &'a Locked,
    state: Option<&'a State>,
    redactor: Redactor,
    /// The provides map before the first component and after those taken.
    provides: ProvidesMaps,
    /// The components taken so far.
    taken: Taken,
    /// Which components declare which outputs.
    declarations: Declarations,
    /// Each component's upstream in a parallel run, as bits over the
    /// selection, each computed once from its predecessors' (asking the
    /// graph again for every component cost the square of the stack).
    ancestry: RefCell<Ancestry>,
    /// Undeploy: the outputs the run has (it adds none).
    outputs: Vec<CapturedOutput>,
    /// Deploy with a state: its snapshots along the order.
    recorded: Option<recorded::Recorded<'a>>,
    /// What the plan says, and whether it plans through the graph.
    mode: Mode<'a>,
    /// Components decided for another's sake.
    pulled: Pulled,
    warnings: &'a mut Warnings,
}

/// The outputs a component would see.
struct Visible {
    outputs: Vec<CapturedOutput>,
    /// `outputs` holds only what the component's parameters read.
    read: bool,
    /// The outputs of its dependencies, when `outputs` may not hold them.
    of_depends: Option<Vec<CapturedOutput>>,
}

impl Visible {
    fn whole(outputs: Vec<CapturedOutput>) -> Visible {
        Visible {
            outputs,
            read: false,
            of_depends: None,
        }
    }

    /// What the fingerprint's upstream digests are taken from.
    fn of_depends(&self) -> &[CapturedOutput] {
        self.of_depends.as_deref().unwrap_or(&self.outputs)
    }
}

/// What one component's turn decided.
struct Decision {
    action: Action,
    reasons: Vec<String>,
    parameters: Vec<ParameterPlan>,
    /// Deploy: what the engine does once the component gets past its
    /// conditions.
    execution: Option<Execution>,
    /// The variables its parameters set, for the preflight.
    environment: Vec<EnvEntry>,
    /// A `fail` that nothing the run produces can change: what the
    /// deploy would say.
    certain: Option<String>,
    /// `--plan-steps`: its planned outputs, and whether it is deferred.
    through: planned::Through,
}

impl Decision {
    /// A `fail` nothing the run does changes: the plan says `reason`, the
    /// deploy refuses with `certain`.
    fn broken(&mut self, reason: String, certain: String) {
        self.action = Action::Fail;
        self.reasons = vec![reason];
        self.certain = Some(certain);
        self.execution = None;
    }

    fn new(action: Action, reason: String) -> Self {
        Decision {
            action,
            reasons: vec![reason],
            parameters: Vec::new(),
            execution: None,
            environment: Vec::new(),
            certain: None,
            through: planned::Through::default(),
        }
    }
}

mod contracts;
mod kept;
mod parts;
use parts::{Declarations, Mode, ProvidesMaps, Pulled, Taken, Through};
mod outputs;
mod providers;
mod reach;
mod runtime;
mod shown;
mod stand_ins;
mod through;
mod triggered;
mod wanted;

impl Walk<'_> {
    fn component(&mut self, name: &str) -> ComponentPlan {
        let (Some(reference), Some(manifest)) = (
            self.stack.reference(name),
            self.stack.elaborated.component(name),
        ) else {
            let reason = format!("`{name}` has no component document");
            return self.finish(name, Decision::new(Action::Fail, reason), Vec::new());
        };
        let provides = self.visible_provides(name);
        let requires = self.requirements(&manifest.requires, &provides);
        let decision = self.decide(name, reference, manifest, &provides);
        self.finish(name, decision, requires)
    }

    /// The outputs `name` declares.
    fn declared(&self, name: &str) -> &[hub_manifest::Output] {
        self.stack
            .elaborated
            .component(name)
            .map(|m| m.outputs.as_slice())
            .unwrap_or_default()
    }

    /// What a component's action changes for the components after it: the
    /// capabilities and the outputs (only known after it deploys).
    fn took(&mut self, name: &str, action: Action) {
        match action {
            action if action.keeps_outputs() => {
                // Through the stack itself, not `self`: the fields change.
                let manifest = self.stack.elaborated.component(name);
                for capability in manifest.map(|m| m.provides.as_slice()).unwrap_or_default() {
                    state::add_provider(&mut self.provides.now, capability, name);
                }
                for output in manifest.map(|m| m.outputs.as_slice()).unwrap_or_default() {
                    self.declarations
                        .by_name
                        .entry(output.name.clone())
                        .or_default()
                        .push(name.to_string());
                }
            }
            Action::Delete => state::remove_provider(&mut self.provides.now, name),
            _ => {}
        }
    }

    /// Records the turn.
    fn finish(
        &mut self,
        name: &str,
        decision: Decision,
        requires: Vec<Requirement>,
    ) -> ComponentPlan {
        let (at, _) = self
            .taken
            .actions
            .insert_full(name.to_string(), decision.action);
        if decision.action == Action::Delete || !self.capabilities(name).is_empty() {
            self.taken.providing.push(at);
        }
        self.took(name, decision.action);
        if decision.certain.is_some() {
            self.taken.certain.insert(name.to_string());
        }
        let conditions = self.conditions(name, decision.execution.as_ref());
        let (parameters, unchanged_left_out) = match self.mode.changes_only {
            true => kept::left_out_unchanged(decision.action, decision.parameters),
            false => (decision.parameters, 0),
        };
        ComponentPlan {
            name: name.to_string(),
            action: decision.action,
            reasons: decision.reasons,
            requires,
            waits_for: super::waits_of(self.plan, name),
            needs_nothing: self.plan.needs_nothing(name),
            implementation: None,
            parameters,
            unchanged_left_out,
            timeout: self.timeout_of(name),
            retry: None,
            conditions,
            certain_failure: decision.certain,
            execution: decision.execution,
            environment: decision.environment,
            through: decision.through,
        }
    }

    /// The component's `lifecycle.timeouts` entry, when it has a limit.
    fn timeout_of(&self, name: &str) -> Option<String> {
        let timeouts = &self.stack.elaborated.stack.lifecycle.timeouts;
        let limit = Timeouts::new(timeouts, None).ok()?.limit(name)?;
        Some(crate::timeout::text(limit.duration))
    }

    /// The engine's checks, in its order (see `Run::component`).
    fn decide(
        &mut self,
        name: &str,
        reference: &ComponentRef,
        manifest: &Manifest,
        provides: &IndexMap<String, Vec<String>>,
    ) -> Decision {
        let verb = self.plan.verb;
        let failed: Vec<String> = reference
            .depends
            .iter()
            .filter(|d| self.taken.actions.get(*d) == Some(&Action::Fail))
            .cloned()
            .collect();
        if verb == Verb::Deploy && !failed.is_empty() {
            let reason = format!("it depends on {}, which would fail", quoted(&failed));
            let mut decision = Decision::new(Action::Fail, reason.clone());
            decision.certain = failed
                .iter()
                .all(|f| self.taken.certain.contains(f))
                .then_some(reason);
            return self.gated(name, reference, decision);
        }
        let mut outputs = self.outputs_for(name, &reference.depends);
        self.through_outputs(&mut outputs);
        let expanded = self.expand(name, &reference.depends, manifest, &outputs, provides);
        let condition = schedule::component_conditions(
            &self.plan.tuning,
            name,
            expanded.complete(),
            self.locked,
        );
        if let Some(warning) = condition.wildcard_warning() {
            self.warnings.warn(None, warning);
        }
        if let Some(why) = condition.skip_reason() {
            return self.gated(name, reference, Decision::new(Action::Skip, why));
        }
        let parameters = self.parameters(name, &expanded);
        let outputs_failure = match expanded.failure() {
            Some(_) => None,
            None => self.outputs_failure(name, manifest, &expanded.params),
        };
        let outputs_reason = outputs_failure.as_ref().map(|f| f.reason.clone());
        let (action, reasons, execution) = match expanded.failure().or(outputs_reason) {
            Some(reason) => (Action::Fail, vec![reason], None),
            None => {
                let expanded = (&expanded.params[..], outputs.of_depends());
                let decided = self.after_expansion(name, reference, manifest, provides, expanded);
                match self.plan.verb {
                    Verb::Deploy => self.replace_triggered(name, &parameters, decided),
                    Verb::Undeploy => decided,
                }
            }
        };
        let mut decision = Decision {
            action,
            reasons,
            parameters: match action {
                Action::Skip => Vec::new(),
                _ if !self.mode.keep_parameters => kept::only_read_by_the_run(parameters),
                _ => parameters,
            },
            execution,
            environment: super::preflight::env_entries(&expanded.params, self.locked),
            certain: match outputs_failure {
                Some(failure) => Some(failure.certain),
                None => self.certain_failure(&expanded),
            },
            through: planned::Through::default(),
        };
        if decision.action.runs() {
            if let Some(broken) = self.contract_failure(name, manifest) {
                decision.broken(broken.reason, broken.certain);
            }
        }
        if !manifest.moved.is_empty() {
            self.warn_renamed_readers(name, manifest);
        }
        self.through(
            name,
            reference,
            manifest,
            (&expanded, &outputs),
            &mut decision,
        );
        match decision.execution {
            None => self.gated(name, reference, decision),
            Some(_) => decision,
        }
    }

    /// A deploy component the plan does not run (it would be skipped or
    /// fail): what the engine does if, with the outputs of the run, it
    /// gets past its conditions after all. Its folder alone is compared.
    fn gated(&self, name: &str, reference: &ComponentRef, mut decision: Decision) -> Decision {
        if self.plan.verb != Verb::Deploy || decision.execution.is_some() {
            return decision;
        }
        let entry = self.state.and_then(|s| s.components.get(name));
        let mut folder = None;
        let compare = || {
            let Some(recorded) = entry.and_then(|e| e.fingerprint.as_ref()) else {
                return Ok(vec![fingerprint::Change::NoFingerprint]);
            };
            let digest = self.folder_digest(reference);
            folder = Some(digest.clone());
            match digest? == recorded.folder {
                true => Ok(Vec::new()),
                false => Ok(vec![fingerprint::Change::Folder]),
            }
        };
        let asked = self.asked(name, false);
        let decided = action::deploy_action(entry, asked, compare);
        decision.execution = Some(self.execution(asked, entry, decided, folder));
        decision
    }

    /// What the decision for `name` is asked: `--changed`'s rules,
    /// `--replace`, and whether to say what changed (`describe`).
    fn asked(&self, name: &str, describe: bool) -> ActionOptions {
        ActionOptions {
            changed: self.changed(name),
            replace: self.options.scope.replace.iter().any(|r| r == name),
            describe,
        }
    }

    /// Whether `--changed`'s rules decide `name`'s action: every component
    /// under `--changed`, and the dependents an `--affected` selection
    /// added.
    fn changed(&self, name: &str) -> bool {
        self.options.scope.changed || self.pulled.judged.contains(name)
    }

    fn folder_digest(&self, reference: &ComponentRef) -> Result<String, String> {
        let dir = self
            .stack
            .component_dir(reference, self.options.components_base_dir.as_deref())
            .map_err(|e| e.to_string())?;
        fingerprint::folder_digest_with(&dir, self.options.digest_cache.as_deref())
            .map_err(|e| e.to_string())
    }

    /// What the engine does with a component, from the deploy's decision
    /// and the folder the decision read (`--changed`, or `hub plan`).
    fn execution(
        &self,
        asked: ActionOptions,
        entry: Option<&hub_state::ComponentState>,
        decided: Decided,
        folder: Option<Result<String, String>>,
    ) -> Execution {
        let ActionOptions {
            changed, replace, ..
        } = asked;
        let (folder, unreadable) = match folder {
            Some(Ok(digest)) => (Some(digest), None),
            Some(Err(error)) => (None, Some(error)),
            None => (None, None),
        };
        let recorded = entry
            .filter(|e| e.status == hub_state::ComponentStatus::Deployed.as_str())
            .and_then(|e| e.fingerprint.as_ref());
        let unless_inputs_change = changed
            && !replace
            && matches!(decided.action, Action::Update | Action::NoOp)
            && recorded.is_some_and(|r| folder.as_deref() == Some(r.folder.as_str()));
        let reasons = match decided.action {
            Action::Update if !changed => vec![action::RUNS_AGAIN.to_string()],
            _ => decided.reasons,
        };
        Execution {
            action: decided.action,
            reasons,
            folder: folder.filter(|_| changed),
            unreadable: unreadable.filter(|_| changed),
            unless_inputs_change,
            compared: Vec::new(),
            replace_unless: None,
            undeploy_first: false,
        }
    }

    /// Requirements, then the verb's own decision.
    fn after_expansion(
        &self,
        name: &str,
        reference: &ComponentRef,
        manifest: &Manifest,
        provides: &IndexMap<String, Vec<String>>,
        (params, outputs): (&[ExpandedParam], &[CapturedOutput]),
    ) -> (Action, Vec<String>, Option<Execution>) {
        let unmet =
            schedule::unmet_requirements(&manifest.requires, name, provides, &self.plan.tuning);
        if !unmet.optional.is_empty() {
            let reason = format!(
                "optional requirement {} not provided",
                quoted(&unmet.optional)
            );
            return (Action::Skip, vec![reason], None);
        }
        let mut reasons = Vec::new();
        if !unmet.hard.is_empty() {
            let provided = provides_text(provides);
            let reason = format!(
                "requirement {} not provided (provided: {})",
                quoted(&unmet.hard),
                if provided.is_empty() {
                    "nothing"
                } else {
                    &provided
                }
            );
            if self.plan.verb == Verb::Deploy {
                return (Action::Fail, vec![reason], None);
            }
            reasons.push(reason);
        }
        match self.plan.verb {
            Verb::Undeploy => (Action::Delete, reasons, None),
            Verb::Deploy => self.deploy_reasons(name, reference, params, outputs),
        }
    }

    /// The deploy's decision ([`action::deploy_action`]), told what
    /// changed. With `--changed`, a component whose dependencies run first
    /// is planned to run: their outputs are not known before they do.
    fn deploy_reasons(
        &self,
        name: &str,
        reference: &ComponentRef,
        params: &[ExpandedParam],
        outputs: &[CapturedOutput],
    ) -> (Action, Vec<String>, Option<Execution>) {
        let entry = self.state.and_then(|s| s.components.get(name));
        let mut folder = None;
        let mut ignored = Vec::new();
        let compare = || {
            let digest = self.folder_digest(reference);
            folder = Some(digest.clone());
            let current = hub_state::Fingerprint {
                folder: digest?,
                parameters: fingerprint::parameters_digest(params),
                upstream: fingerprint::upstream_digests(&reference.depends, outputs),
            };
            let changes = fingerprint::changes(entry, &current, params);
            let recorded = entry.and_then(|e| e.fingerprint.as_ref());
            let judged = self
                .triggers()
                .judge(name, changes, recorded.map(|r| &r.upstream));
            ignored = judged.ignored;
            Ok(if judged.runs {
                judged.shown
            } else {
                Vec::new()
            })
        };
        let asked = self.asked(name, self.mode.describe);
        let decided = action::deploy_action(entry, asked, compare);
        let mut execution = self.execution(asked, entry, decided.clone(), folder);
        let Decided {
            action,
            mut reasons,
        } = decided;
        if !ignored.is_empty() && action != Action::Create {
            reasons.push(triggers::ignored_reason(&ignored));
        }
        if action != Action::NoOp {
            return (action, reasons, Some(execution));
        }
        if let Some(wanted) = self.wanted_run(name, &mut execution) {
            return (Action::Update, vec![wanted], Some(execution));
        }
        match self.upstream_runs(name, reference) {
            None => (Action::NoOp, reasons, Some(execution)),
            Some(upstream) => {
                execution.compared = upstream.compared;
                reasons.splice(0..0, upstream.reasons);
                (Action::Update, reasons, Some(execution))
            }
        }
    }

    /// The outputs the component would see: for a deploy, those of the
    /// state ([`State::outputs_before`], with its dependencies' snapshots)
    /// and stand-ins for what components deploying earlier in this run
    /// would add; for an undeploy, the run's (§4.3).
    fn outputs_for(&mut self, name: &str, depends: &[String]) -> Visible {
        let order = &self.plan.order;
        // An output that differs in a dependency's snapshot is said by the
        // run, which merges the same snapshots (`run/engine/component.rs`,
        // `run/invoke.rs`); a plan made from the recorded snapshots
        // (`outputs_recorded`) does not merge at all, so the plan does not
        // say it either way.
        let mut quiet = Warnings::already_reported();
        match self.plan.verb {
            Verb::Undeploy => {
                let preload = self.plan.per_component || self.plan.offset.as_deref() == Some(name);
                if let (true, Some(state)) = (preload, self.state) {
                    let mut outputs = state.outputs_at(order, name).to_vec();
                    state.merge_dependency_outputs(&mut outputs, depends, &mut quiet);
                    self.outputs = outputs;
                }
                Visible::whole(self.outputs.clone())
            }
            Verb::Deploy => {
                if let Some(visible) = self.outputs_recorded(name, depends) {
                    return visible;
                }
                let mut outputs = Vec::new();
                if let Some(state) = self.state {
                    outputs = state.outputs_before(order, name).to_vec();
                    state.merge_dependency_outputs(&mut outputs, depends, &mut quiet);
                }
                let holds =
                    |c: &str, n: &str| outputs.iter().any(|o| o.component == c && o.name == n);
                let stand_ins = self.stand_ins(name, depends, &holds);
                outputs.extend(stand_ins);
                Visible::whole(outputs)
            }
        }
    }

    /// A deploy's outputs from the state's snapshots looked up by name
    /// (see [`recorded`]): only what the component reads and its
    /// dependencies' outputs, so the cost does not grow with the stack.
    fn outputs_recorded(&mut self, name: &str, depends: &[String]) -> Option<Visible> {
        let reads = self.plan.reads(name)?;
        let mut recorded = self.recorded.take()?;
        let visible = recorded.seen(name, depends).map(|mut seen| {
            let stand_ins = self.stand_ins(name, depends, &|c, n| seen.holds(c, n));
            seen.extend(stand_ins);
            Visible {
                outputs: seen.read(reads),
                read: true,
                of_depends: Some(seen.of_components(depends)),
            }
        });
        self.recorded = Some(recorded);
        visible
    }

    fn expand(
        &mut self,
        name: &str,
        depends: &[String],
        manifest: &Manifest,
        visible: &Visible,
        provides: &IndexMap<String, Vec<String>>,
    ) -> Expanded {
        let reads = self.plan.reads(name).filter(|_| !visible.read);
        let outputs = scope_outputs(&visible.outputs, reads);
        let scope = ComponentScope {
            name,
            depends,
            manifest,
            outputs: &outputs,
            provides: provides_text(provides),
            source: None,
        };
        let expanded = expand::expand(self.locked, &scope, self.warnings);
        if expanded.problems.is_empty() {
            return expanded;
        }
        // Again, pointing at the declarations: that scans the whole
        // elaborated file, done only when there is something to report.
        let source = self.stack.declarations(name);
        let located = ComponentScope { source, ..scope };
        // The same expansion as above, which said its warnings.
        expand::expand(self.locked, &located, &mut Warnings::already_reported())
    }
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
