//! `hub plan`: what a deploy or undeploy would do, worked out from the
//! stack, the locked parameters and the state, with nothing run, locked,
//! rendered or written.
//!
//! The preparation is the engine's ([`crate::run::setup`]): the same structural
//! checks, order and selection, parameter locking (without prompts),
//! state/stack consistency check, provides map and implementation check.
//! Then each selected component is taken in the effective order and given
//! an [`Action`], through the engine's own decision where the engine makes
//! one ([`crate::run::action::deploy_action`]):
//!
//! * `fail` when a dependency would fail, its parameters cannot be
//!   expanded, or (deploy) a hard requirement is not provided;
//! * `skip` when a parameter condition of `lifecycle.requires.optional` is
//!   off or an optional requirement is not provided;
//! * `delete` for an undeploy;
//! * for a deploy, `create`, `update`, `replace` or (`--changed` only)
//!   `no-op`, with what changed.
//!
//! Components the state holds and the stack no longer lists are listed
//! apart ([`Preview::removed`]); with `--prune` they count as `delete`.
//!
//! Outputs no deploy has produced yet come from the state (the outputs the
//! component saw at its last deploy, [`hub_state::State::outputs_before`]);
//! those of components deploying earlier in this run that the state lacks
//! are shown as `(known after <component> deploys)`.

mod expand;
mod markdown;
mod recorded;
mod render;

pub use markdown::render_markdown;
pub use render::{render_json, render_text};

use super::report::{ReportContext, RunReport};
use super::summary::{Outcome, Summary};
use crate::child::process::ConsoleSink;
use crate::order::plan::{self, Plan, Verb};
use crate::order::requirements::{provides_text, PLATFORM_PROVIDER};
pub use crate::run::action::Action;
use crate::run::action::{self, Decided};
use crate::run::engine::{Host, RunOptions};
use crate::run::error::EngineError;
use crate::run::fingerprint;
use crate::run::interrupt::Interrupts;
use crate::run::prune;
use crate::run::records::scope_outputs;
use crate::run::setup::{
    check_consistency, check_implementations, check_selection, initial_outputs, initial_provides,
    lock_parameters, partial_flag, plan_for, require_state,
};
use crate::run::timeout::Timeouts;
use crate::source::stack::Stack;
use expand::Expanded;
use hub_manifest::diag::Warnings;
use hub_manifest::redact::Redactor;
use hub_manifest::{ComponentRef, Manifest};
use hub_params::{ComponentScope, ExpandedParam, Locked};
use hub_state::{self as state, CapturedOutput, State, StateParameter, ENVIRONMENT_PROVIDER};
use indexmap::IndexMap;
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// What a deploy or undeploy would do. Serialised as the JSON of
/// `hub plan --format json`: see [`render_json`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Preview {
    /// The stack's `meta.name`.
    pub stack: String,
    #[serde(serialize_with = "verb_text")]
    pub verb: Verb,
    /// The state read; `None` with `-n`.
    pub state: Option<StateSeen>,
    /// `-j`: how many components may run at once.
    pub jobs: usize,
    /// The `-c` entries and what they resolved to, when one of them pulls
    /// in more than it names (`app+`, `+app`, `--with-deps`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub selection: Option<SelectionSeen>,
    /// The selected components in waves ([`Plan::waves`]).
    pub waves: Vec<Vec<String>>,
    /// The selected components, in the effective order.
    pub components: Vec<ComponentPreview>,
    /// `--prune`: the removed components are deleted by this deploy.
    pub prune: bool,
    /// Deploy: the components the state holds and the stack no longer
    /// lists, in the order `--prune` undeploys them. Without `--prune` the
    /// deploy leaves them (and warns); they are shown apart and not
    /// counted.
    pub removed: Vec<RemovedPreview>,
}

/// A component the state holds and the stack no longer lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemovedPreview {
    pub name: String,
    /// Always `delete`.
    pub action: Action,
    pub reasons: Vec<String>,
    /// The folder its undeploy runs from, as its entry records it.
    pub dir: Option<String>,
    /// Its `depends` as recorded.
    pub depends: Vec<String>,
    /// Its entry's status.
    pub status: String,
    /// The parameters its undeploy gets (its entry's), kept for a saved
    /// plan (`plan --out`), not printed.
    #[serde(skip)]
    pub parameters: Vec<ParameterPreview>,
}

impl RemovedPreview {
    fn of(removed: &prune::Removed, state: Option<&State>, redactor: &Redactor) -> RemovedPreview {
        let entry = state.and_then(|s| s.components.get(&removed.name));
        RemovedPreview {
            name: removed.name.clone(),
            action: Action::Delete,
            reasons: vec![removed.reason()],
            dir: removed.dir.as_ref().map(|d| d.display().to_string()),
            depends: removed.depends.clone(),
            status: removed.status.clone(),
            parameters: entry
                .map(|entry| undeploy_parameters(entry, redactor))
                .unwrap_or_default(),
        }
    }
}

/// The parameters a removed component's undeploy gets, as shown: the
/// recorded values, unchanged.
fn undeploy_parameters(
    entry: &state::ComponentState,
    redactor: &Redactor,
) -> Vec<ParameterPreview> {
    prune::recorded_parameters(entry)
        .iter()
        .map(|param| {
            let text = hub_params::format::substitution_text(param.value.as_ref());
            let shown = redactor
                .text(&param.name, "", param.secret, &text)
                .into_owned();
            ParameterPreview {
                name: param.name.clone(),
                value: Some(shown.clone()),
                previous: Some(shown),
                change: ParameterChange::Unchanged,
                digest: saved_digest(&param.name, param.secret, &text),
            }
        })
        .collect()
}

/// What a saved plan keeps of a value hub masks (with or without
/// `--reveal`): the digest of its text; `None` for a value shown.
fn saved_digest(name: &str, secret: bool, text: &str) -> Option<String> {
    Redactor::new(false)
        .hides(name, "", secret)
        .then(|| crate::view::saved::text_digest(text))
}

/// A widened `-c` list, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SelectionSeen {
    /// The `-c` entries, `--with-deps` and `--with-dependents` applied.
    pub requested: Vec<String>,
    /// Every selected component, in the effective order.
    pub components: Vec<String>,
    /// The ones pulled in besides those named.
    pub added: Vec<AddedSeen>,
    /// All of it on one line ([`Plan::selection_text`]).
    #[serde(skip)]
    pub line: String,
}

/// A component a `-c` entry pulled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddedSeen {
    pub name: String,
    /// The component named in `-c` it was reached from.
    pub from: String,
    /// `dependency` (`from` depends on it) or `dependent` (it depends on
    /// `from`).
    pub relation: &'static str,
}

impl SelectionSeen {
    fn of(plan: &Plan) -> Option<SelectionSeen> {
        let line = plan.selection_text()?;
        Some(SelectionSeen {
            line,
            requested: plan.requested.clone(),
            components: plan.selected.clone(),
            added: plan
                .added
                .iter()
                .map(|a| AddedSeen {
                    name: a.name.clone(),
                    from: a.from.clone(),
                    relation: if a.dependency {
                        "dependency"
                    } else {
                        "dependent"
                    },
                })
                .collect(),
        })
    }
}

/// The state a plan read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateSeen {
    /// As given to `-s` (the one read, with several).
    pub path: String,
    /// Its serial; `None` when the file does not exist (a first deploy).
    pub serial: Option<u64>,
    /// Its lineage; `None` when the file does not exist. Kept for a saved
    /// plan (`plan --out`), not printed.
    #[serde(skip)]
    pub lineage: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentPreview {
    pub name: String,
    pub action: Action,
    /// Why it runs, is skipped or would fail.
    pub reasons: Vec<String>,
    pub requires: Vec<Requirement>,
    /// What it waits for with `-j`: in a deploy the components it runs
    /// after, in an undeploy those that run after it.
    pub waits_for: Vec<Wait>,
    /// It says `depends: []` in a stack with a written order: it waits for
    /// nothing the order put before it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub needs_nothing: bool,
    /// Empty for a skipped component.
    pub parameters: Vec<ParameterPreview>,
    /// How long it may run, from the stack's `lifecycle.timeouts` (`1h30m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
}

/// A component another one waits for, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Wait {
    pub component: String,
    pub reasons: Vec<String>,
}

/// `db (`depends`, provides `sql`)`.
impl std::fmt::Display for Wait {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.component, self.reasons.join(", "))
    }
}

/// What `name` waits for in the plan's run, each with why.
pub fn waits_of(plan: &Plan, name: &str) -> Vec<Wait> {
    plan.waits(name)
        .into_iter()
        .map(|(component, reasons)| Wait {
            component: component.to_string(),
            reasons: reasons.iter().map(ToString::to_string).collect(),
        })
        .collect()
}

/// A requirement of a component and who provides it when its turn comes:
/// a component of the stack, `environment`, `platform`, or `NAME (state)`
/// for a provider known only from the state. Empty: nobody.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    pub name: String,
    pub providers: Vec<String>,
}

/// An expanded parameter compared with the component's state entry.
/// Values are as printed: secrets `(masked)` unless `--reveal`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ParameterPreview {
    pub name: String,
    /// `None` for a parameter the component no longer has.
    pub value: Option<String>,
    /// The value in the state entry; `None` when it had none.
    pub previous: Option<String>,
    pub change: ParameterChange,
    /// For a value that is masked without `--reveal`: the digest of its
    /// text, which a saved plan (`plan --out`) keeps instead of the value.
    #[serde(skip)]
    pub digest: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParameterChange {
    Added,
    Changed,
    Removed,
    Unchanged,
}

impl Preview {
    /// Some component would run or be deleted (`--detailed-exitcode`).
    pub fn would_change(&self) -> bool {
        self.components.iter().any(|c| c.action.runs()) || self.pruned().next().is_some()
    }

    /// How many components would get `action` (removed components count
    /// as `delete` with `--prune` only).
    pub fn count(&self, action: Action) -> usize {
        let listed = self
            .components
            .iter()
            .filter(|c| c.action == action)
            .count();
        match action {
            Action::Delete => listed + self.pruned().count(),
            _ => listed,
        }
    }

    /// The removed components `--prune` would undeploy.
    pub fn pruned(&self) -> impl Iterator<Item = &RemovedPreview> {
        self.removed.iter().filter(|_| self.prune)
    }
}

fn verb_text<S: serde::Serializer>(verb: &Verb, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(verb.as_str())
}

/// Works out what `options` would do to `stack`. `environment` is hub's
/// environment (for `fromEnv` parameters and the `PATH` of well-known
/// requirements). Nothing is prompted: `kind: user` parameters without a
/// value (and none in the state) are an error.
pub fn preview(
    stack: &Stack,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    warnings: &mut Warnings,
) -> Result<Preview, EngineError> {
    let Prepared {
        plan,
        locked,
        read_path,
        state,
        provides,
        removed,
    } = prepare(stack, options, environment, warnings)?;
    let mut walk = Walk {
        stack,
        options,
        plan: &plan,
        locked: &locked,
        state: state.as_ref(),
        redactor: Redactor::new(options.reveal),
        provides_now: provides.clone(),
        initial_provides: provides,
        actions: IndexMap::new(),
        declared_outputs: HashMap::new(),
        outputs: initial_outputs(&plan, state.as_ref()),
        recorded: state
            .as_ref()
            .filter(|_| plan.verb == Verb::Deploy)
            .map(|state| recorded::Recorded::new(state, &plan.order)),
        warnings,
    };
    let components = plan
        .selected
        .iter()
        .map(|name| walk.component(name))
        .collect();
    Ok(Preview {
        stack: stack.elaborated.stack.meta.name.clone(),
        verb: plan.verb,
        state: read_path.map(|path| StateSeen {
            path: path.display().to_string(),
            serial: state.as_ref().map(|s| s.serial),
            lineage: state.as_ref().map(|s| s.lineage.clone()),
        }),
        jobs: options.concurrency,
        selection: SelectionSeen::of(&plan),
        waves: plan.waves(),
        components,
        prune: options.prune,
        removed: removed
            .iter()
            .map(|r| RemovedPreview::of(r, state.as_ref(), &Redactor::new(options.reveal)))
            .collect(),
    })
}

/// What the engine checks and reads before its first component.
struct Prepared {
    plan: Plan,
    locked: Locked,
    /// The location read (or that would be), `None` with `-n`.
    read_path: Option<PathBuf>,
    state: Option<State>,
    provides: IndexMap<String, Vec<String>>,
    removed: Vec<prune::Removed>,
}

/// The engine's preparation (`Run::prepare`) without the lock, the clock
/// and anything written.
fn prepare(
    stack: &Stack,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    warnings: &mut Warnings,
) -> Result<Prepared, EngineError> {
    let verb = options.verb.unwrap_or(Verb::Deploy);
    let order = stack.validated_order()?;
    require_state(options)?;
    // The location a run would read, without locking anything; the first
    // one when none holds a file.
    let read_path = state::locations::to_read(&options.state)
        .or(options.state.first().map(PathBuf::as_path))
        .map(Path::to_path_buf);
    let state = read_state(read_path.as_deref(), options, warnings)?;
    let plan = plan_for(stack, order, verb, options, state.as_ref())?;
    check_selection(&plan, options, state.as_ref(), warnings)?;
    let path_variable = environment
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.clone());
    let locked = lock_without_prompts(stack, options, environment, &read_path, &state, warnings)?;
    if let (Some(state), Some(path)) = (&state, &read_path) {
        check_consistency(stack, state, &locked, path, options, warnings)?;
    }
    let provides = initial_provides(stack, &plan, state.as_ref(), path_variable)?;
    check_implementations(stack, &plan, options)?;
    let removed = match state.as_ref().filter(|_| verb == Verb::Deploy) {
        Some(state) => prune::removed(state, &|name| stack.reference(name).is_some()),
        None => Vec::new(),
    };
    if options.prune {
        prune::check_folders(&removed)?;
    }
    Ok(Prepared {
        plan,
        locked,
        read_path,
        state,
        provides,
        removed,
    })
}

/// The run report (`--report FILE.json`) of a plan made at `now`: each
/// component with its action as status and its reasons.
pub fn report(preview: &Preview, now: &str) -> RunReport {
    let mut summary = Summary {
        verb: preview.verb.as_str().to_string(),
        ..Summary::default()
    };
    for component in &preview.components {
        let reasons = component.reasons.join("; ");
        let outcome = match component.action {
            Action::Create | Action::Update | Action::Replace | Action::Delete => Outcome::NotRun,
            Action::NoOp => Outcome::Unchanged,
            Action::Skip => Outcome::Skipped(reasons),
            Action::Fail => Outcome::Failed(reasons),
        };
        summary.push(&component.name, outcome, std::time::Duration::ZERO);
    }
    // A pruned component is undeployed by the deploy planned.
    for removed in preview.pruned() {
        summary.push(
            &removed.name,
            Outcome::Undeployed,
            std::time::Duration::ZERO,
        );
    }
    let context = ReportContext {
        kind: "plan".into(),
        stack: preview.stack.clone(),
        state: preview.state.as_ref().map(|s| s.path.clone()),
        jobs: preview.jobs,
        started: now.to_string(),
        ended: now.to_string(),
        result: "success".into(),
        error: None,
    };
    let mut report = RunReport::from_summary(&summary, context);
    let reasons = preview
        .components
        .iter()
        .map(|c| &c.reasons)
        .chain(preview.pruned().map(|r| &r.reasons));
    for (entry, reasons) in report.components.iter_mut().zip(reasons) {
        if entry.reason.is_none() && !reasons.is_empty() {
            entry.reason = Some(reasons.join("; "));
        }
    }
    report
}

/// The state, read only: missing is a first deploy (an error for `-c`/`-o`
/// unless `--force`), unreadable an error naming the file.
fn read_state(
    path: Option<&Path>,
    options: &RunOptions,
    warnings: &mut Warnings,
) -> Result<Option<State>, EngineError> {
    let Some(path) = path else {
        return Ok(None);
    };
    match state::read(path, warnings)? {
        None if options.selection.is_partial() && !options.force => {
            Err(EngineError::StateRequired {
                flag: partial_flag(options),
                path: Some(path.to_path_buf()),
            })
        }
        read => Ok(read),
    }
}

/// [`lock_parameters`] with a host that cannot prompt and runs nothing.
fn lock_without_prompts(
    stack: &Stack,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    read_path: &Option<PathBuf>,
    loaded: &Option<State>,
    warnings: &mut Warnings,
) -> Result<Locked, EngineError> {
    // A watcher without signal handlers: nothing runs that could be
    // interrupted.
    let interrupts = Interrupts::unwatched();
    let log = |_: &str| {};
    let mut host = Host {
        environment,
        hub: PathBuf::from("hub"),
        sink: &ConsoleSink,
        interrupts: &interrupts,
        log: &log,
        prompter: None,
        progress: None,
    };
    lock_parameters(
        stack,
        options,
        &mut host,
        read_path.as_deref(),
        loaded.as_ref(),
        warnings,
    )
}

/// The walk through the selected components, keeping what the run would
/// have changed by each turn: the provides map and the outputs.
struct Walk<'a> {
    stack: &'a Stack,
    options: &'a RunOptions,
    plan: &'a Plan,
    locked: &'a Locked,
    state: Option<&'a State>,
    redactor: Redactor,
    /// The provides map before the first component.
    initial_provides: IndexMap<String, Vec<String>>,
    /// The components taken so far and their action.
    actions: IndexMap<String, Action>,
    /// The provides map after the components taken so far (one at a time).
    provides_now: IndexMap<String, Vec<String>>,
    /// Output name → the components taken so far that deploy (or are
    /// unchanged) and declare it, in order.
    declared_outputs: HashMap<String, Vec<String>>,
    /// Undeploy: the outputs the run has (it adds none).
    outputs: Vec<CapturedOutput>,
    /// Deploy with a state: its snapshots along the order.
    recorded: Option<recorded::Recorded<'a>>,
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
    parameters: Vec<ParameterPreview>,
}

impl Decision {
    fn new(action: Action, reason: String) -> Self {
        Decision {
            action,
            reasons: vec![reason],
            parameters: Vec::new(),
        }
    }
}

impl Walk<'_> {
    fn component(&mut self, name: &str) -> ComponentPreview {
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

    /// Whether a component's outputs and capabilities reach `name`: in a
    /// parallel run (`-j` > 1) only those of its upstream do, as in the
    /// engine.
    fn reaches(&self, name: &str) -> impl Fn(&str) -> bool {
        let upstream = (self.options.concurrency > 1).then(|| self.plan.upstream(name));
        move |other: &str| upstream.as_ref().is_none_or(|u| u.contains(other))
    }

    /// The provides map `name` is checked against: the initial one with
    /// what the components taken before it would provide (or stop
    /// providing).
    fn visible_provides(&self, name: &str) -> IndexMap<String, Vec<String>> {
        if self.options.concurrency <= 1 {
            return self.provides_now.clone();
        }
        let reaches = self.reaches(name);
        let mut provides = self.initial_provides.clone();
        for (other, action) in &self.actions {
            match action {
                action if action.keeps_outputs() && reaches(other) => {
                    for capability in self.capabilities(other) {
                        state::add_provider(&mut provides, capability, other);
                    }
                }
                Action::Delete => state::remove_provider(&mut provides, other),
                _ => {}
            }
        }
        provides
    }

    fn capabilities(&self, name: &str) -> &[String] {
        self.stack
            .elaborated
            .component(name)
            .map(|m| m.provides.as_slice())
            .unwrap_or_default()
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
                    state::add_provider(&mut self.provides_now, capability, name);
                }
                for output in manifest.map(|m| m.outputs.as_slice()).unwrap_or_default() {
                    self.declared_outputs
                        .entry(output.name.clone())
                        .or_default()
                        .push(name.to_string());
                }
            }
            Action::Delete => state::remove_provider(&mut self.provides_now, name),
            _ => {}
        }
    }

    /// Records the turn.
    fn finish(
        &mut self,
        name: &str,
        decision: Decision,
        requires: Vec<Requirement>,
    ) -> ComponentPreview {
        self.actions.insert(name.to_string(), decision.action);
        self.took(name, decision.action);
        ComponentPreview {
            name: name.to_string(),
            action: decision.action,
            reasons: decision.reasons,
            requires,
            waits_for: waits_of(self.plan, name),
            needs_nothing: self.plan.needs_nothing(name),
            parameters: decision.parameters,
            timeout: self.timeout_of(name),
        }
    }

    /// The component's `lifecycle.timeouts` entry, when it has a limit.
    fn timeout_of(&self, name: &str) -> Option<String> {
        let timeouts = &self.stack.elaborated.stack.lifecycle.timeouts;
        let limit = Timeouts::new(timeouts, None).ok()?.limit(name)?;
        Some(crate::run::timeout::text(limit.duration))
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
            .filter(|d| self.actions.get(*d) == Some(&Action::Fail))
            .cloned()
            .collect();
        if verb == Verb::Deploy && !failed.is_empty() {
            let reason = format!("it depends on {}, which would fail", quoted(&failed));
            return Decision::new(Action::Fail, reason);
        }
        let outputs = self.outputs_for(name, &reference.depends);
        let expanded = self.expand(name, &reference.depends, manifest, &outputs, provides);
        let condition =
            plan::component_conditions(&self.plan.tuning, name, expanded.complete(), self.locked);
        if let Some(warning) = condition.wildcard_warning() {
            self.warnings.warn(None, warning);
        }
        if let Some(why) = condition.skip_reason() {
            return Decision::new(Action::Skip, why);
        }
        let parameters = self.parameters(name, &expanded);
        let (action, reasons) = match expanded.failure() {
            Some(reason) => (Action::Fail, vec![reason]),
            None => {
                let expanded = (&expanded.params[..], outputs.of_depends());
                self.after_expansion(name, reference, manifest, provides, expanded)
            }
        };
        Decision {
            action,
            reasons,
            parameters: if action == Action::Skip {
                Vec::new()
            } else {
                parameters
            },
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
    ) -> (Action, Vec<String>) {
        let unmet = plan::unmet_requirements(&manifest.requires, name, provides, &self.plan.tuning);
        if !unmet.optional.is_empty() {
            let reason = format!(
                "optional requirement {} not provided",
                quoted(&unmet.optional)
            );
            return (Action::Skip, vec![reason]);
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
                return (Action::Fail, vec![reason]);
            }
            reasons.push(reason);
        }
        match self.plan.verb {
            Verb::Undeploy => (Action::Delete, reasons),
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
    ) -> (Action, Vec<String>) {
        let entry = self.state.and_then(|s| s.components.get(name));
        let dir = self
            .stack
            .component_dir(reference, self.options.components_base_dir.as_deref());
        let compare = || {
            let dir = dir.map_err(|e| e.to_string())?;
            let current = fingerprint::take(&dir, params, &reference.depends, outputs)
                .map_err(|e| e.to_string())?;
            Ok(fingerprint::changes(entry, &current, params))
        };
        let replace = self.options.replace.iter().any(|r| r == name);
        let Decided { action, reasons } =
            action::deploy_action(entry, self.options.changed, replace, true, compare);
        if action != Action::NoOp {
            return (action, reasons);
        }
        let first: Vec<String> = reference
            .depends
            .iter()
            .filter(|d| self.actions.get(*d).is_some_and(|a| a.runs()))
            .map(|d| format!("`{d}` runs first: its outputs may change"))
            .collect();
        match first.is_empty() {
            true => (Action::NoOp, reasons),
            false => (Action::Update, first),
        }
    }

    /// The outputs the component would see: for a deploy, those of the
    /// state ([`State::outputs_before`], with its dependencies' snapshots)
    /// and stand-ins for what components deploying earlier in this run
    /// would add; for an undeploy, the run's (§4.3).
    fn outputs_for(&mut self, name: &str, depends: &[String]) -> Visible {
        let order = &self.plan.order;
        let mut quiet = Warnings::default();
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

    /// An output declared by a component that deploys earlier in this run
    /// and not among the outputs seen (`holds`) is only known after that
    /// deploy: its stand-in. Only
    /// the outputs the component may read, and those of its `depends`
    /// (their digests say whether it runs again), are needed: they are
    /// looked up by name, so the cost does not grow with the stack.
    fn stand_ins(
        &self,
        name: &str,
        depends: &[String],
        holds: &dyn Fn(&str, &str) -> bool,
    ) -> Vec<CapturedOutput> {
        let reaches = self.reaches(name);
        let mut wanted: Vec<(usize, usize, &str)> = Vec::new();
        let mut want = |producer: &str, output: &str| {
            let taken = self.actions.get_full(producer);
            let Some((at, _, action)) = taken else {
                return;
            };
            if !action.keeps_outputs() {
                return;
            }
            let manifest = self.stack.elaborated.component(producer);
            let declared = manifest.and_then(|m| m.outputs.iter().position(|o| o.name == output));
            if let (Some(index), true) = (declared, reaches(producer)) {
                wanted.push((at, index, self.actions.get_index(at).map_or("", |(k, _)| k)));
            }
        };
        // Every component of the plan has its reads.
        for read in self.plan.reads(name).into_iter().flatten() {
            for producer in self.declared_outputs.get(read).into_iter().flatten() {
                want(producer, read);
            }
            if let Some((producer, output)) = read.split_once(':') {
                want(producer, output);
            }
        }
        for dependency in depends {
            for output in self.declared(dependency) {
                want(dependency, &output.name);
            }
        }
        // In the run's order, as one at a time would have found them.
        wanted.sort_unstable();
        wanted.dedup();
        let mut known: HashSet<(String, String)> = HashSet::new();
        let mut stand_ins = Vec::new();
        for (_, index, producer) in wanted {
            let Some(manifest) = self.stack.elaborated.component(producer) else {
                continue;
            };
            let declared = &manifest.outputs[index];
            let key = (producer.to_string(), declared.name.clone());
            if known.contains(&key) || holds(producer, &declared.name) {
                continue;
            }
            known.insert(key);
            stand_ins.push(CapturedOutput {
                component: producer.to_string(),
                component_kind: manifest.meta.kind.clone(),
                name: declared.name.clone(),
                value: expand::stand_in(producer),
                kind: declared.kind.clone(),
                ..CapturedOutput::default()
            });
        }
        stand_ins
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
        expand::expand(self.locked, &scope, self.warnings)
    }

    /// Each parameter as shown, against the state entry's `parameters`.
    fn parameters(&self, name: &str, expanded: &Expanded) -> Vec<ParameterPreview> {
        if expanded.params.is_empty() {
            return Vec::new();
        }
        let recorded: &[StateParameter] = self
            .state
            .and_then(|s| s.components.get(name))
            .map(|entry| entry.parameters.as_slice())
            .unwrap_or_default();
        let mut out: Vec<ParameterPreview> = expanded
            .params
            .iter()
            .map(|param| self.parameter(param, expanded, recorded))
            .collect();
        for gone in recorded
            .iter()
            .filter(|r| !expanded.params.iter().any(|p| p.name == r.name))
        {
            out.push(ParameterPreview {
                name: gone.name.clone(),
                value: None,
                previous: Some(self.recorded_text(gone, false)),
                change: ParameterChange::Removed,
                digest: None,
            });
        }
        out
    }

    fn parameter(
        &self,
        param: &ExpandedParam,
        expanded: &Expanded,
        recorded: &[StateParameter],
    ) -> ParameterPreview {
        let before = recorded.iter().find(|r| r.name == param.name);
        let current = hub_params::format::substitution_text(param.value.as_ref());
        let change = match before {
            None => ParameterChange::Added,
            Some(before) if recorded_value(before) == current => ParameterChange::Unchanged,
            Some(_) => ParameterChange::Changed,
        };
        ParameterPreview {
            name: param.name.clone(),
            value: Some(expanded.shown(param, &self.redactor)),
            previous: before.map(|b| self.recorded_text(b, param.secret)),
            change,
            digest: saved_digest(&param.name, param.secret, &current),
        }
    }

    fn recorded_text(&self, recorded: &StateParameter, secret: bool) -> String {
        self.redactor
            .text(&recorded.name, "", secret, &recorded_value(recorded))
            .into_owned()
    }

    /// Each requirement with its providers as the component's turn comes.
    fn requirements(
        &self,
        requires: &[String],
        provides: &IndexMap<String, Vec<String>>,
    ) -> Vec<Requirement> {
        requires
            .iter()
            .map(|name| Requirement {
                name: name.clone(),
                providers: provides
                    .get(name)
                    .into_iter()
                    .flatten()
                    .map(|provider| self.provider_label(provider))
                    .collect(),
            })
            .collect()
    }

    fn provider_label(&self, provider: &str) -> String {
        match provider {
            ENVIRONMENT_PROVIDER => "environment".to_string(),
            PLATFORM_PROVIDER => "platform".to_string(),
            name if self
                .actions
                .get(name)
                .is_some_and(|a| a.runs() || *a == Action::NoOp) =>
            {
                name.to_string()
            }
            name => format!("{name} (state)"),
        }
    }
}

fn recorded_value(recorded: &StateParameter) -> String {
    hub_params::format::substitution_text(recorded.non_null_value())
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_params::{LockedParam, Origin};
    use yaml_serde::Value;

    fn component(name: &str, action: Action, reason: &str) -> ComponentPreview {
        ComponentPreview {
            name: name.into(),
            action,
            reasons: [reason]
                .iter()
                .filter(|r| !r.is_empty())
                .map(|r| r.to_string())
                .collect(),
            requires: Vec::new(),
            waits_for: Vec::new(),
            needs_nothing: false,
            parameters: Vec::new(),
            timeout: None,
        }
    }

    fn removed(name: &str) -> prune::Removed {
        prune::Removed {
            name: name.into(),
            dir: Some(PathBuf::from(format!("/stack/{name}"))),
            depends: Vec::new(),
            status: "deployed".into(),
        }
    }

    #[test]
    fn a_removed_component_keeps_the_parameters_its_undeploy_gets() {
        let mut state = State::default();
        state.component_mut("old").parameters = vec![
            StateParameter::new("old.size", Value::from("small")),
            StateParameter::new("old.password", Value::from("hunter2")),
        ];
        let shown = RemovedPreview::of(&removed("old"), Some(&state), &Redactor::default());
        let kept: Vec<(&str, Option<&str>, bool)> = shown
            .parameters
            .iter()
            .map(|p| (p.name.as_str(), p.value.as_deref(), p.digest.is_some()))
            .collect();
        assert_eq!(
            kept,
            [
                ("old.size", Some("small"), false),
                ("old.password", Some(hub_manifest::redact::MASK), true),
            ]
        );
        assert_eq!(
            shown.parameters[1].digest.as_deref(),
            Some(crate::view::saved::text_digest("hunter2").as_str())
        );
        let revealed = RemovedPreview::of(&removed("old"), Some(&state), &Redactor::new(true));
        assert_eq!(revealed.parameters[1].value.as_deref(), Some("hunter2"));
        assert_eq!(revealed.parameters[1].digest, shown.parameters[1].digest);
    }

    #[test]
    fn the_report_gives_each_component_its_action_and_reasons() {
        let preview = Preview {
            stack: "s".into(),
            verb: Verb::Deploy,
            state: None,
            jobs: 1,
            selection: None,
            waves: Vec::new(),
            prune: true,
            removed: vec![RemovedPreview::of(
                &removed("old"),
                None,
                &Redactor::default(),
            )],
            components: vec![
                component("a", Action::Update, "folder content changed"),
                component("b", Action::NoOp, ""),
                component("c", Action::Skip, "`x` is off"),
                component("d", Action::Fail, "requirement `dns` not provided"),
            ],
        };
        assert_eq!(
            (
                preview.count(Action::Update),
                preview.count(Action::Delete),
                preview.count(Action::Fail)
            ),
            (1, 1, 1)
        );
        let report = report(&preview, "2026-01-01T00:00:00Z");
        let seen: Vec<(&str, Option<&str>)> = report
            .components
            .iter()
            .map(|c| (c.status.as_str(), c.reason.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                ("deploy", Some("folder content changed")),
                ("unchanged", None),
                ("skipped", Some("`x` is off")),
                ("error", Some("requirement `dns` not provided")),
                (
                    "undeploy",
                    Some("removed from the stack; implementation in `/stack/old`")
                ),
            ]
        );
        assert_eq!(
            (report.kind.as_str(), report.status.as_str()),
            ("plan", "planned")
        );
    }

    #[test]
    fn conditions_read_expanded_parameters_before_stack_parameters() {
        let tuning = plan::Tuning::parse(&["f.on:c".into()]);
        let mut locked = Locked::default();
        locked.params.insert(
            "f.on".into(),
            LockedParam {
                name: "f.on".into(),
                component: String::new(),
                kind: String::new(),
                value: Some(Value::String("false".into())),
                env: String::new(),
                origin: Origin::Value,
                expression: None,
                declared: None,
                secret: false,
            },
        );
        let off = plan::component_conditions(&tuning, "c", None, &locked);
        assert_eq!(off.skip_reason().as_deref(), Some("`f.on` is off"));
        assert_eq!(off.wildcard_warning(), None);
        let expanded = [ExpandedParam {
            name: "f.on".into(),
            value: Some(Value::String("true".into())),
            env: String::new(),
            origin: Origin::Value,
            expression: None,
            declared: None,
            secret: false,
        }];
        let on = plan::component_conditions(&tuning, "c", Some(&expanded), &locked);
        assert_eq!(on.skip_reason(), None);
        let everywhere = plan::Tuning::parse(&["f.on".into()]);
        let wildcard = plan::component_conditions(&everywhere, "c", None, &locked);
        assert!(wildcard
            .wildcard_warning()
            .is_some_and(|w| w.contains("`f.on:<component>`")));
    }
}
