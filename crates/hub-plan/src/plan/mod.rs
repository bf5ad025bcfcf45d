//! The action plan: what a deploy or undeploy does with each component,
//! made once by the planner ([`make`]) and then consumed: `hub plan`
//! renders it (`hub_view::preview`), `plan --out` saves it
//! ([`saved`]), and the engine executes it (`hub_engine::run::engine`).
//!
//! Not to be confused with the *ordering* ([`crate::order::schedule::Schedule`]):
//! which components are selected and in which order and waves they run.
//! The action plan is made from that ordering, the locked parameters and
//! the state.
//!
//! Each selected component gets an [`Action`] with its reasons, what it
//! waits for, its parameters, and what the action is conditional on
//! ([`Condition`]): the engine evaluates only those conditions at run
//! time, never the decision itself ([`Execution`]).

mod expand;
pub mod guard;
pub mod make;
pub mod moved;
pub mod planned;
pub mod preflight;
pub mod prepare;
mod recorded;
pub mod replan;
pub mod saved;
#[cfg(test)]
mod tests;
pub mod triggers;

pub use crate::decide::action::Action;
use crate::decide::prune;
use crate::order::schedule::{Schedule, Verb};
use hub_manifest::redact::Redactor;
use hub_state::{self as state, State};
use serde::Serialize;
use sha2::{Digest, Sha256};

/// What a deploy or undeploy would do. Serialised as the JSON of
/// `hub plan --format json`: see `hub_view::preview::render_json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Plan {
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
    /// The selected components in waves ([`Schedule::waves`]).
    pub waves: Vec<Vec<String>>,
    /// The selected components, in the effective order.
    pub components: Vec<ComponentPlan>,
    /// What the run would stop on that is no component's (the preflight:
    /// the state's folder); each counts as a failure.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<PreflightProblem>,
    /// `--prune`: the removed components are deleted by this deploy.
    pub prune: bool,
    /// Deploy: the components the state holds and the stack no longer
    /// lists, in the order `--prune` undeploys them. Without `--prune` the
    /// deploy leaves them (and warns); they are shown apart and not
    /// counted.
    pub removed: Vec<RemovedPlan>,
    /// The stack's `moved` entries the state was renamed by before the
    /// plan was made (`moved OLD → NEW`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<moved::Renamed>,
}

/// A component the state holds and the stack no longer lists.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RemovedPlan {
    pub name: String,
    /// Always `delete`.
    pub action: Action,
    pub reasons: Vec<String>,
    /// The folder its undeploy runs from, as its entry records it.
    pub dir: Option<String>,
    /// Its `depends` as recorded.
    pub depends: Vec<String>,
    /// Its entry's status.
    pub status: hub_state::Recorded<hub_state::ComponentStatus>,
    /// The parameters its undeploy gets (its entry's), kept for a saved
    /// plan (`plan --out`), not printed.
    #[serde(skip)]
    pub parameters: Vec<ParameterPlan>,
}

impl RemovedPlan {
    pub(crate) fn of(
        removed: &prune::Removed,
        state: Option<&State>,
        redactor: &Redactor,
    ) -> RemovedPlan {
        let entry = state.and_then(|s| s.components.get(&removed.name));
        RemovedPlan {
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
fn undeploy_parameters(entry: &state::ComponentState, redactor: &Redactor) -> Vec<ParameterPlan> {
    prune::recorded_parameters(entry)
        .iter()
        .map(|param| {
            let text = hub_params::format::substitution_text(param.value.as_ref());
            let shown = redactor
                .text(&param.name, "", param.secret, &text)
                .into_owned();
            ParameterPlan {
                name: param.name.clone(),
                value: Some(shown.clone()),
                previous: Some(shown),
                change: ParameterChange::Unchanged,
                known: true,
                digest: saved_digest(&param.name, param.secret, &text),
            }
        })
        .collect()
}

/// What a saved plan keeps of a value hub masks (with or without
/// `--reveal`): the digest of its text; `None` for a value shown.
pub(crate) fn saved_digest(name: &str, secret: bool, text: &str) -> Option<String> {
    Redactor::new(false)
        .hides(name, "", secret)
        .then(|| text_digest(text))
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
    /// `--affected`: the components it selected, each with why (absent
    /// without the flag).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub affected: Option<Vec<AffectedSeen>>,
    /// All of it on one line ([`Schedule::selection_text`]).
    #[serde(skip)]
    pub line: String,
}

/// A component a `-c` entry pulled in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AddedSeen {
    pub name: String,
    /// The component named in `-c` it was reached from.
    pub from: String,
    /// `dependency` (`from` depends on it), `dependent` (it depends on
    /// `from`) or `wanted` (`from` wants it: `lifecycle.wants`).
    pub relation: &'static str,
}

/// A component `--affected` selected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AffectedSeen {
    pub name: String,
    /// The file (and, for a stack or parameters file, the parameter) whose
    /// change selected it.
    pub why: String,
}

impl SelectionSeen {
    /// Why each component it names is selected, when `--affected` or
    /// `lifecycle.wants` selected it: `` affected: `app/main.tf` changed ``,
    /// `wanted by app`; worked out in one pass over the lists rather than
    /// a search per component.
    pub fn reasons(&self) -> std::collections::HashMap<&str, String> {
        let mut reasons = std::collections::HashMap::new();
        for chosen in self.affected.iter().flatten() {
            reasons
                .entry(chosen.name.as_str())
                .or_insert_with(|| format!("affected: {}", chosen.why));
        }
        for added in self.added.iter().filter(|a| a.relation == "wanted") {
            reasons
                .entry(added.name.as_str())
                .or_insert_with(|| format!("wanted by {}", added.from));
        }
        reasons
    }

    pub(crate) fn of(plan: &Schedule) -> Option<SelectionSeen> {
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
                    relation: a.relation.as_str(),
                })
                .collect(),
            affected: plan.affected.as_ref().map(|chosen| {
                chosen
                    .iter()
                    .map(|c| AffectedSeen {
                        name: c.name.clone(),
                        why: c.why.clone(),
                    })
                    .collect()
            }),
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
    /// For a plan that is saved ([`crate::options::RunOptions::entry_digests`]):
    /// the digest of each selected or removed component's state entry
    /// (see [`saved::entry_digest`]); `None` otherwise. Not printed.
    #[serde(skip)]
    pub entries: Option<std::collections::HashMap<String, String>>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ComponentPlan {
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
    /// What runs it (`deploy.sh`, `make deploy`…), for a component the
    /// plan runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub implementation: Option<String>,
    /// Empty for a skipped component.
    pub parameters: Vec<ParameterPlan>,
    /// With [`crate::options::RunOptions::changes_only`], how many
    /// parameters, all unchanged, the plan left out of `parameters` for a
    /// component that changes nothing (not printed; counted by
    /// [`ComponentPlan::unchanged_parameters`]).
    #[serde(skip)]
    pub unchanged_left_out: usize,
    /// How long it may run, from the stack's `lifecycle.timeouts` (`1h30m`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout: Option<String>,
    /// When a failure runs it again, from the stack's `lifecycle.retry`
    /// (`up to 3 attempts, 10s apart`); set for `hub plan`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry: Option<String>,
    /// What the action is conditional on, evaluated by the engine when
    /// the component's turn comes (not printed).
    #[serde(skip)]
    pub conditions: Vec<Condition>,
    /// A `fail` that nothing the run produces can change, with what the
    /// deploy would say (not printed): a deploy refuses it before the
    /// first component starts.
    #[serde(skip)]
    pub certain_failure: Option<String>,
    /// Deploy: what the engine does with the component once it gets past
    /// its conditions (not printed). `None` for an undeploy.
    #[serde(skip)]
    pub execution: Option<Execution>,
    /// The environment variables its parameters set (not printed): what
    /// the preflight checks against the system's limits.
    #[serde(skip)]
    pub environment: Vec<EnvEntry>,
    /// `--plan-steps`: its planned outputs, deferral and reads.
    #[serde(flatten)]
    pub through: planned::Through,
}

impl ComponentPlan {
    /// The parameters that differ from its state entry: added, changed or
    /// gone (all of them for a component never deployed).
    pub fn differences(&self) -> impl Iterator<Item = &ParameterPlan> {
        self.parameters
            .iter()
            .filter(|p| p.change != ParameterChange::Unchanged)
    }

    /// How many of its parameters are as its state entry records them.
    pub fn unchanged_parameters(&self) -> usize {
        let kept = self
            .parameters
            .iter()
            .filter(|p| p.change == ParameterChange::Unchanged)
            .count();
        kept + self.unchanged_left_out
    }

    /// It changes something a reviewer reads beyond its action and
    /// reasons: it is created or deleted, one of its parameters differs
    /// from its state entry, or it would fail (what it waits for and
    /// requires says why). A component that does not is one line in a
    /// plan (`app: update (runs again: no --changed)`, `db: no-op`) unless
    /// `--verbose`.
    pub fn changes(&self) -> bool {
        matches!(self.action, Action::Create | Action::Delete | Action::Fail)
            || self.differences().next().is_some()
    }
}

/// What a planned action depends on that is only known when the
/// component's turn comes. The engine evaluates these, and only these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    /// Deploy: it fails (is not run) if one of these dependencies fails in
    /// the run.
    SkippedIfDependencyFails(Vec<String>),
    /// Its parameters, parameter conditions and requirements are worked
    /// out again with the outputs and capabilities the components before
    /// it really produced (the plan only knows those of the state, and
    /// stand-ins): an expansion that fails, a condition that is off or a
    /// requirement nobody provides then fails or skips it.
    OutputsKnownAtRunTime,
    /// `--changed`: it does not run (`no-op`) unless its parameters or the
    /// outputs of its dependencies, as the run produced them, differ from
    /// those of its last deploy; its folder was compared by the plan.
    NoOpUnlessInputsChange,
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Condition::SkippedIfDependencyFails(depends) => {
                let quoted: Vec<String> = depends.iter().map(|d| format!("`{d}`")).collect();
                write!(f, "not run if {} fails", quoted.join(" or "))
            }
            Condition::OutputsKnownAtRunTime => {
                f.write_str("parameters and requirements checked again with the outputs of the run")
            }
            Condition::NoOpUnlessInputsChange => {
                f.write_str("no-op unless an output it reads or a parameter changes")
            }
        }
    }
}

/// What a deploy does with a component that gets past its conditions:
/// decided by the planner ([`crate::decide::action::deploy_action`]), only
/// carried out by the engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Execution {
    /// `create`, `update`, `replace`, `rerun` or (with `--changed`) `no-op`.
    pub action: Action,
    pub reasons: Vec<String>,
    /// `--changed`: the digest of its folder as the plan read it.
    pub folder: Option<String>,
    /// The folder could not be read (`--changed`): it runs, and the run
    /// says why.
    pub unreadable: Option<String>,
    /// [`Condition::NoOpUnlessInputsChange`]: `action` is `no-op` or
    /// `update`, and the run compares the inputs it knows only then.
    pub unless_inputs_change: bool,
    /// The outputs it reads of the components that run before it
    /// (`db's host`), when it runs only if one of them changes: the run
    /// names them when none did.
    pub compared: Vec<String>,
    /// `lifecycle.replaceTriggeredBy` by components only: `replace` if
    /// one of them deploys in the run, else what it would have been.
    pub replace_unless: Option<ReplaceUnless>,
    /// `lifecycle.replaceTriggeredBy`: the component's undeploy runs
    /// first, with the parameters its state entry records, then its
    /// deploy, in the same turn.
    pub undeploy_first: bool,
}

/// A replacement that holds only if one of `components` deploys first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplaceUnless {
    pub components: Vec<String>,
    pub otherwise: Box<Execution>,
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
pub fn waits_of(plan: &Schedule, name: &str) -> Vec<Wait> {
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
pub struct ParameterPlan {
    pub name: String,
    /// `None` for a parameter the component no longer has.
    pub value: Option<String>,
    /// The value in the state entry; `None` when it had none.
    pub previous: Option<String>,
    pub change: ParameterChange,
    /// Its value is known now: `false` when it reads an output known only
    /// after a component of the run applies.
    pub known: bool,
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

impl Plan {
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
            Action::Fail => listed + self.problems.len(),
            _ => listed,
        }
    }

    /// Some component would run or fail: not every one is `no-op` or
    /// `skip`.
    pub fn acts(&self) -> bool {
        !self.problems.is_empty()
            || self.pruned().next().is_some()
            || self
                .components
                .iter()
                .any(|c| !matches!(c.action, Action::NoOp | Action::Skip))
    }

    /// How many components are deferred (`--plan-steps`).
    pub fn deferred(&self) -> usize {
        self.components
            .iter()
            .filter(|c| c.through.deferred.is_some())
            .count()
    }

    /// The removed components `--prune` would undeploy.
    pub fn pruned(&self) -> impl Iterator<Item = &RemovedPlan> {
        self.removed.iter().filter(|_| self.prune)
    }
}

/// One thing the run would stop on, found by the preflight
/// ([`preflight`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PreflightProblem {
    /// The component it stops; `None` for the run as a whole.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component: Option<String>,
    /// What is wrong, as the deploy says it.
    pub message: String,
    /// What to do about it.
    pub hint: String,
}

impl std::fmt::Display for PreflightProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.component {
            Some(component) => write!(f, "component `{component}`: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// What one component's environment variable holds, as planned. The plan
/// holds one for every variable of every component until its preflight
/// has read them: the variable's and the parameter's names are one text
/// (40 bytes and one allocation an entry, where two `String`s took 64 and
/// two).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvEntry {
    /// The variable (`env:` of the parameter), then the parameter it
    /// comes from.
    names: Box<str>,
    /// Where the parameter's name starts in `names`.
    split: u32,
    /// The size of its value, in bytes.
    pub bytes: usize,
    /// Where the value holds a NUL byte, which no process environment
    /// can carry: where it was set, when known. `None` for nearly every
    /// variable.
    pub nul_byte: Option<Box<NulByte>>,
}

impl EnvEntry {
    /// The entry of `variable`, set by `parameter`, `bytes` long.
    pub fn new(
        variable: &str,
        parameter: &str,
        bytes: usize,
        nul_byte: Option<Box<NulByte>>,
    ) -> EnvEntry {
        let names = [variable, parameter].concat().into_boxed_str();
        // No name is 4 GB long (a state or stack file is far smaller).
        let split = u32::try_from(variable.len()).unwrap_or(u32::MAX);
        EnvEntry {
            names,
            split,
            bytes,
            nul_byte,
        }
    }

    /// The variable (`env:` of the parameter).
    pub fn variable(&self) -> &str {
        self.names.get(..self.split as usize).unwrap_or(&self.names)
    }

    /// The parameter it comes from.
    pub fn parameter(&self) -> &str {
        self.names.get(self.split as usize..).unwrap_or_default()
    }
}

/// A variable's value holds a NUL byte (YAML's `\0`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NulByte {
    /// Where the value was set: the stack parameter's declaration when
    /// the component found one, else the component's own declaration.
    pub set_at: Option<hub_manifest::diag::Location>,
}

fn verb_text<S: serde::Serializer>(verb: &Verb, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(verb.as_str())
}

/// `sha256:<hex>` of `text`: how a saved plan keeps a secret.
pub fn text_digest(text: &str) -> String {
    let hash = Sha256::digest(text.as_bytes());
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}
