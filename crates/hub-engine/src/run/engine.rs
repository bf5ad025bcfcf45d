//! A deploy or undeploy run (§2) and the pipeline of each component (§6).
//!
//! # A run
//!
//! 1. Structural checks and the plan (order, selection).
//! 2. The state's lock (`STATE.lock`) is taken for the whole run, on every
//!    location given (`-s a,b`); the state is read, from the newest
//!    location (§11.5). A damaged state is fatal, also on a full deploy,
//!    unless `--force`.
//! 3. Stack parameters are locked (the state fills `kind: user` ones and is
//!    merged in), the state is checked against the stack (§4.4), the
//!    provides map starts from the environment, the platform and the state.
//! 4. Every selected component's folder and implementation must exist.
//! 5. The operation is recorded `in-progress`; the scheduler hands out the
//!    components, up to `-j` at a time (see [`hub_plan::order::scheduler`]); the state
//!    is written (atomically) at each component's start, failure and end,
//!    to every location (one that cannot be written is a warning while
//!    another was written).
//!
//! # Parallel runs
//!
//! Only component processes (and waits for ready conditions) run on
//! threads of their own; parameters, outputs, provides and the state are
//! handled on the run's thread as each component starts and ends, so the
//! state has one writer. At every `-j` a failure cancels what waits for
//! it and the run ends once the rest is done (§9.2). What a component sees
//! is the same whatever the timing: the outputs and capabilities known at
//! the start, with those of the components it waits for ([`super::known`]).
//! 6. The stack status, the stack-level outputs (refreshed at the end of
//!    every deploy), the stack outputs and the operation status are
//!    written; a summary is returned.
//!
//! # Files
//!
//! Each component's output lines (masked) are appended to
//! `STATE.logs/<component>.log` beside the state (the first location given,
//! with several); no log files are written without a state (`-n`).
//! Components see `HUB_STATE`: the first location that held a state file
//! when the run started, else the first location, as an absolute path.

use super::error::EngineError;
use super::fingerprint;
use super::hooks;
use super::known::{Known, View};
use super::logs_ahead::LogsAhead;
use super::outputs::stack_outputs;
use super::prune;
use super::ready;
use super::records::{
    component_meta, component_parameters, log_dir, raw_outputs, refresh_stack_outputs,
    scope_outputs, state_parameters, to_scope_output,
};
use super::setup::{
    check_consistency, check_implementations, check_selection, initial_outputs, initial_provides,
    lock_parameters, plan_for, read_state, release_stack_parameters, removed_components,
    require_state, Implementations,
};
use super::upstream::{Ancestry, Bits};
use crate::child::capture::{self, RawOutputs};
use crate::child::otp;
use crate::child::process::{Exit, Invocation};
use crate::outcome::{finish_line, Outcome, Recorder, Summary};
use crate::plan::make::{self as planner, Inputs, Purpose};
use crate::plan::{preflight, Action, ComponentPlan, Execution, Plan as ActionPlan};
use hub_manifest::diag::Warnings;
use hub_manifest::redact::SecretMasker;
use hub_manifest::Manifest;
use hub_params::format::substitution_text;
use hub_params::{
    self as params, expand_component, expand_outputs, ComponentScope, ExpandedParam, Locked,
    OutputsContext,
};
use hub_plan::env::{self, ComponentVariables, Nested};
use hub_plan::order::requirements::provides_text;
use hub_plan::order::schedule::{self, Schedule, Verb};
use hub_plan::order::scheduler::Scheduler;
use hub_plan::source::discover::{self, Implementation};
use hub_plan::source::stack::{absolute, Stack};
use hub_plan::timeout::{Limit, Timeouts};
use hub_state::Fingerprint;
use hub_state::{
    self as state, Clock, ComponentRun, ComponentStatus, Locations, OperationIndex, OperationStart,
    OperationStatus, StackMeta, StackStatus, State,
};
use indexmap::IndexMap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use yaml_serde::Value;

pub use crate::options::{ExpectedState, Host, RunOptions};

mod changed;
mod component;
mod execute;
mod failed_upstream;
mod quiet;
mod replace;
mod words;
use words::{describe, or_none, quoted};

/// The result of a run that got as far as running components: its summary,
/// and the error that ended it, if any.
pub struct Finished {
    pub summary: Option<Summary>,
    pub result: Result<(), EngineError>,
    /// How many of the run's warnings (the first ones) were printed
    /// during the run: before the first component, and with the
    /// component they concern.
    pub warnings_shown: usize,
    /// The plan the run executed (`None` when it stopped before making
    /// one): what the HTML report shows of each component's action.
    pub plan: Option<std::sync::Arc<ActionPlan>>,
}

/// Deploys or undeploys `stack`. Once its parameters are locked, the
/// stack's own parameter list is emptied (the run reads the locked ones
/// only): the caller must not read it after the run.
pub fn run<'a>(
    stack: &'a mut Stack,
    options: &'a RunOptions,
    host: Host<'a>,
    warnings: &'a mut Warnings,
) -> Finished {
    let started = Instant::now();
    let mut run = match Run::prepare(stack, options, host, warnings) {
        Ok(run) => run,
        Err(error) => {
            return Finished {
                summary: None,
                result: Err(error),
                warnings_shown: 0,
                plan: None,
            }
        }
    };
    // What is known before the run is said before the first component.
    run.show_warnings();
    let result = run.execute();
    let result = match (result, run.finish()) {
        (Err(error), _) | (Ok(()), Err(error)) => Err(error),
        (Ok(()), Ok(())) => Ok(()),
    };
    let result = result.map_err(|error| keep_unsaved_state(error, run.state.as_ref(), options));
    if let Some(writer) = &run.writer {
        run.summary.state_notes = writer.previous_versions();
    }
    run.summary.total = started.elapsed();
    run.summary.ended = run.clock.now();
    run.show_warnings();
    Finished {
        summary: Some(run.summary),
        result,
        warnings_shown: run.warnings_shown,
        plan: Some(run.planned.clone()),
    }
}

/// A remote state that could not be written, or a state this run lost to
/// another run: the run's state goes to a local `.errored` file, and the
/// error says whether uploading it is safe.
fn keep_unsaved_state(
    error: EngineError,
    state: Option<&State>,
    options: &RunOptions,
) -> EngineError {
    let EngineError::State(
        cause @ (state::StateError::RemoteAccess { .. } | state::StateError::RemoteConflict { .. }),
    ) = error
    else {
        return error;
    };
    let lost_at = match &cause {
        state::StateError::RemoteConflict { location, .. } => Some(location.as_str()),
        _ => None,
    };
    let path = match lost_at {
        Some(at) => options.state.iter().find(|p| names_location(p, at)),
        None => options.state.iter().find(|p| state::is_remote(p)),
    };
    let (Some(state), Some(path)) = (state, path) else {
        return EngineError::State(cause);
    };
    let (folder, basename, location) = match state::remote::RemoteLocation::of_path(path) {
        Ok(remote) => (
            PathBuf::new(),
            remote.basename().to_string(),
            remote.to_string(),
        ),
        Err(_) => (
            path.parent().map(Path::to_path_buf).unwrap_or_default(),
            path.file_name()
                .map_or("state".into(), |n| n.to_string_lossy().into_owned()),
            path.display().to_string(),
        ),
    };
    let taken = lost_at.map(|_| taken_by_another_run(path, state));
    match state::remote::errored::save(&folder, &basename, state) {
        Ok(file) => EngineError::State(state::StateError::RemoteSaved {
            error: Box::new(cause),
            location,
            file,
            taken,
        }),
        Err(_) => EngineError::State(cause),
    }
}

/// `path` (as given to the run) is the location an error names.
fn names_location(path: &Path, named: &str) -> bool {
    path.display().to_string() == named
        || state::remote::RemoteLocation::of_path(path).is_ok_and(|r| r.to_string() == named)
}

/// How the run's `state` differs from the one another run left at `path`.
fn taken_by_another_run(path: &Path, state: &State) -> state::Taken {
    match state::read(path, &mut Warnings::default()) {
        Ok(Some(current)) => state::history::diverged(state, &current)
            .map_or(state::Taken::Unknown, |d| {
                state::Taken::Diverged(Box::new(d))
            }),
        _ => state::Taken::Unknown,
    }
}

/// How one component's turn ended.
enum Step {
    Done,
    /// `--changed`: not run, its fingerprint is unchanged.
    Unchanged,
    /// Deployed; its ready conditions (resolved) are waited for on a
    /// thread of their own (parallel runs).
    AwaitReady(Vec<hub_manifest::ReadyCondition>),
    Skipped(String),
    Failed(String),
    Interrupted(i32),
    /// The state could not be written: the run stops.
    Fatal(EngineError),
}

/// What changed in the state since the previous write, so that the entries
/// of the other components need not be compared with what was written.
#[derive(Debug, Clone, Copy)]
enum Changed<'a> {
    /// Anything.
    Any,
    /// This component's entry, and those of the unsaved checkpoints.
    Component(&'a str),
    /// The entries of the unsaved checkpoints.
    Checkpoints,
}

struct Run<'a> {
    stack: &'a Stack,
    options: &'a RunOptions,
    verb: Verb,
    host: Host<'a>,
    warnings: &'a mut Warnings,
    /// The ordering: selection, order, waves.
    plan: Schedule,
    /// The action plan, made once under the lock (or checked against a
    /// saved one): what the run does with each component.
    planned: std::sync::Arc<ActionPlan>,
    locked: Locked,
    clock: Clock,
    /// The state being written; `None` without one.
    state: Option<State>,
    /// The state locations, locked for the whole run; `None` without a
    /// state.
    locations: Option<Locations>,
    /// `STATE.logs` of the first location, beside its real file.
    log_folder: Option<PathBuf>,
    /// The marks of this run's part of each log, made at the first one.
    log_marks: std::sync::OnceLock<crate::child::log_marks::RunMarks>,
    /// The location the state was read from (or would have been).
    read_path: Option<PathBuf>,
    operation: Option<OperationIndex>,
    /// Writes the state to every location (created at the first write);
    /// the locks are held for the whole run, so it alone changes the files.
    writer: Option<state::StateWriter>,
    /// The serial of the state read at the start, when one was read.
    read_serial: Option<u64>,
    /// The components the state read at the start records as deployed
    /// (their outputs are those of a successful deploy).
    deployed_before: Vec<String>,
    failed: Vec<String>,
    skipped: Vec<String>,
    /// Parallel runs: not run because a component they wait for failed.
    cancelled: Vec<String>,
    /// Mandatory components that failed, with the reason.
    mandatory_failures: Vec<(String, String)>,
    /// Components a hook failed: they fail the run even when optional.
    hook_failures: Vec<String>,
    /// The fix for a failure, where the reason alone does not tell it.
    fixes: HashMap<String, String>,
    /// How long each component may run.
    timeouts: Timeouts,
    /// `lifecycle.retry`, read.
    retries: super::retry::Retries,
    /// The components that could run more than once, and how many times
    /// they did.
    attempts: HashMap<String, super::retry::Attempts>,
    /// When each running component started (the clock's text).
    started_at: HashMap<String, String>,
    /// Positions in the selection.
    positions: HashMap<String, usize>,
    /// The outputs and capabilities known, and what each component sees.
    known: Known,
    /// `--changed`: each component's outputs in its entry's snapshot as
    /// read, taken when the run started.
    recorded_outputs: HashMap<String, Vec<state::CapturedOutput>>,
    /// The fingerprint of a running component, without its folder.
    pending_fingerprints: HashMap<String, Fingerprint>,
    /// Parallel runs: checkpoints recorded but not written yet.
    /// Components whose checkpoint is not written yet (a parallel run
    /// writes those of the components that start together at once).
    unsaved_checkpoints: Vec<String>,
    /// `-j` above 1.
    parallel: bool,
    /// Parallel runs: each component's upstream, once worked out.
    ancestry: Ancestry,
    /// Parallel runs: each failed component's part of the operation's log,
    /// by position.
    failure_logs: std::collections::BTreeMap<usize, String>,
    base_env: Vec<(String, String)>,
    masker: SecretMasker,
    summary: Summary,
    /// The run stopped early (failure or interrupt).
    stopped: bool,
    /// Deploy: the components the state holds and the stack no longer
    /// lists, in the order `--prune` undeploys them.
    removed: Vec<prune::Removed>,
    /// What implements the run's verb, by component, as found before the
    /// run; looked for again after a component's templates are rendered.
    implementations: HashMap<String, Implementation>,
    /// How many of `warnings` (the first ones) were printed.
    warnings_shown: usize,
    /// The start lines of components the plan leaves unchanged
    /// (`--changed`), said only if they run after all.
    quiet_starts: HashMap<String, String>,
    /// Nothing written yet and nothing to write (see [`quiet`]).
    quiet: bool,
}

/// The log folder of the state at `state`, when there is one, is a folder
/// of the user's (see [`state::beside`]): its logs are never written
/// through a planted link.
fn check_log_folder(state: &Path) -> Result<(), state::StateError> {
    let folder = log_dir(state);
    match state::beside::check_folder(&folder) {
        Ok(_) => Ok(()),
        Err(source) => Err(state::StateError::Beside {
            path: folder,
            source,
        }),
    }
}

impl<'a> Run<'a> {
    fn prepare(
        stack: &'a mut Stack,
        options: &'a RunOptions,
        mut host: Host<'a>,
        warnings: &'a mut Warnings,
    ) -> Result<Run<'a>, EngineError> {
        let verb = options.verb.unwrap_or(Verb::Deploy);
        crate::trace::stack_name(verb.as_str(), &stack.elaborated.stack.meta.name);
        let order = stack.validated_order()?;
        let timeouts = run_timeouts(stack, options.timeout)?;
        let retries = super::retry::Retries::new(&stack.elaborated.stack.lifecycle.retry)?;
        let clock = Clock::from_env(&|name| host.var(name))?;
        hub_plan::order::schedule::check_selected(&order, &options.selection)?;
        require_state(options)?;
        let locations = match options.state.is_empty() {
            true => None,
            false => Some(crate::trace::lock(|| {
                Locations::lock_waiting(
                    &options.state,
                    verb.as_str(),
                    &clock,
                    &state::LockWait::new(options.lock_timeout, Some(host.log)),
                    warnings,
                )
            })?),
        };
        if let Some(locations) = &locations {
            check_log_folder(locations.first())?;
        }
        let read_path = locations
            .as_ref()
            .map(|l| l.to_read().unwrap_or(l.first()).to_path_buf());
        // `HUB_STATE` (§6.9.3): the first location holding a state file.
        let exported_state = locations.as_ref().map(|l| {
            let (paths, given) = (l.paths(), l.given());
            let first_file = paths.iter().position(|p| p.is_file()).unwrap_or(0);
            let exported = &given[first_file];
            match state::is_remote(exported) {
                true => exported.clone(),
                false => absolute(exported),
            }
        });
        let loaded = read_state(read_path.as_deref(), verb, options, warnings)?;
        if let (Some(expected), Some(path)) = (&options.expected_state, &read_path) {
            if !expected.holds(loaded.as_ref()) {
                return Err(EngineError::StateMoved { path: path.clone() });
            }
        }
        let mut loaded = loaded;
        let moved = crate::plan::moved::apply(stack, loaded.as_mut())?;
        let quiet = moved.is_empty() && loaded.is_some();
        for renamed in moved {
            let (from, to) = (&renamed.from, &renamed.to);
            (host.log)(&format!(
                "hub: moved `{from}` → `{to}` in the state (`moved`)"
            ));
        }
        let plan = plan_for(stack, order, verb, options, loaded.as_ref())?;
        check_selection(&plan, options, loaded.as_ref(), warnings)?;
        if let Some(selection) = plan.selection_text() {
            (host.log)(&format!("hub: selection {selection}"));
        }
        if options.why {
            let reasons = plan.selection_reasons();
            for name in &plan.selected {
                if let Some(why) = reasons.get(name.as_str()) {
                    (host.log)(&format!("hub: {name}: selected: {why}"));
                }
            }
        }
        let locked = crate::trace::in_span("parameters", || {
            lock_parameters(
                stack,
                options,
                &mut host,
                read_path.as_deref(),
                loaded.as_ref(),
                warnings,
            )
        })?;
        // Locked: from here on the run reads the locked parameters only,
        // so the stack's own list (half of the elaborated document at
        // scale) is not held for the rest of the run.
        release_stack_parameters(stack);
        let stack: &'a Stack = stack;
        if verb == Verb::Deploy && locations.is_some() {
            check_state_size(stack, &plan, &locked)?;
        }
        if let (Some(state), Some(path)) = (&loaded, &read_path) {
            check_consistency(stack, state, &locked, path, options, false, warnings)?;
        }
        let provides = initial_provides(stack, &plan, loaded.as_ref(), host.var("PATH"))?;
        let Implementations {
            found: implementations,
            missing,
        } = check_implementations(stack, &plan, options)?;
        let removed = removed_components(stack, verb, loaded.as_ref(), options, warnings)?;
        // The plan, made once from what was just read (the planner's
        // warnings come from the checks above, or again as each component
        // runs): a saved one was made again from the same inputs and found
        // equal before the run, from the state read under the lock.
        let planned = match &options.planned {
            Some(planned) => planned.clone(),
            None => {
                let _span = crate::trace::span("plan");
                let inputs = Inputs {
                    stack,
                    options,
                    schedule: &plan,
                    locked: &locked,
                    state: loaded.as_ref(),
                    read_path: read_path.as_deref(),
                    provides: &provides,
                    removed: &removed,
                };
                let mut quiet = Warnings::default();
                std::sync::Arc::new(planner::make(&inputs, Purpose::Execute, &mut quiet))
            }
        };
        crate::plan::guard::check(stack, &planned, &options.replace)?;
        let nested = Nested {
            hub: host.hub.clone(),
            elaborate: stack.file.clone(),
            state: exported_state,
            components_base_dir: options.components_base_dir.as_deref().map(absolute),
        };
        let base_env = env::base(options.os_environment, &host.environment, &nested);
        let findings = preflight::check(&preflight::Inputs {
            stack,
            options,
            plan: &planned,
            implementations: &implementations,
            base_env: &base_env,
            state_folders: false,
        });
        for warning in findings.warnings {
            warnings.warn(None, warning);
        }
        let goes_on = |name: &str| plan.is_optional(name) || options.force;
        let mut problems = missing;
        problems.extend(findings.problems);
        let problems = preflight::with_predicted(problems, &planned, goes_on);
        if !problems.is_empty() {
            return Err(EngineError::Preflight { problems });
        }
        let mut masker = SecretMasker::new(options.reveal);
        for param in locked.params.values().filter(|p| p.secret) {
            masker.add(&substitution_text(param.value.as_ref()));
        }
        masker.add_credentials_in(&base_env);
        masker.add_credentials(|name| host.var(name));
        if let Some(state) = &loaded {
            super::records::mask_recorded_secrets(&mut masker, state);
        }
        let outputs = initial_outputs(&plan, loaded.as_ref());
        let read_serial = loaded.as_ref().map(|state| state.serial);
        let deployed_before = loaded
            .as_ref()
            .map(|state| {
                let deployed = state::ComponentStatus::Deployed.as_str();
                state
                    .components
                    .iter()
                    .filter(|(_, e)| e.status == deployed)
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default();
        let recorded_outputs = match (options.changed || plan.affected.is_some(), &loaded) {
            (true, Some(state)) => state.own_outputs(&state.lifecycle.order),
            _ => HashMap::new(),
        };
        let state = match (loaded, &locations, verb) {
            (Some(state), _, _) => Some(state),
            (None, Some(_), Verb::Deploy) => Some(State::new(StackMeta::default(), Vec::new())),
            _ => None,
        };
        let positions = plan_positions(&plan);
        let ancestry = Ancestry::new(&plan.selected);
        let mut run = Run {
            stack,
            options,
            verb,
            host,
            warnings,
            plan,
            planned,
            locked,
            clock,
            state,
            log_folder: locations.as_ref().map(|l| log_dir(l.first())),
            log_marks: std::sync::OnceLock::new(),
            locations,
            read_path,
            operation: None,
            writer: None,
            read_serial,
            positions,
            known: Known::new(outputs, provides, options.concurrency > 1),
            deployed_before,
            failed: Vec::new(),
            skipped: Vec::new(),
            cancelled: Vec::new(),
            mandatory_failures: Vec::new(),
            hook_failures: Vec::new(),
            fixes: HashMap::new(),
            timeouts,
            retries,
            attempts: HashMap::new(),
            started_at: HashMap::new(),
            recorded_outputs,
            pending_fingerprints: HashMap::new(),
            unsaved_checkpoints: Vec::new(),
            parallel: options.concurrency > 1,
            ancestry,
            failure_logs: std::collections::BTreeMap::new(),
            base_env,
            masker,
            summary: Summary {
                verb,
                ..Summary::default()
            },
            stopped: false,
            removed,
            implementations,
            warnings_shown: 0,
            quiet_starts: HashMap::new(),
            quiet,
        };
        run.preload_all();
        run.begin()?;
        Ok(run)
    }

    /// Records the operation `in-progress` and the stack's identity.
    fn begin(&mut self) -> Result<(), EngineError> {
        let now = self.clock.now();
        self.summary.started = now.clone();
        let start = OperationStart {
            id: state::operation_id(&|name| self.host.var(name)),
            operation: self.verb.as_str().to_string(),
            args: self.options.args.clone(),
            initiator: self.host.var("USER").unwrap_or_default(),
        };
        let stack = &self.stack.elaborated.stack;
        let parameters = state_parameters(&self.locked);
        let order = self.plan.order.clone();
        self.quiet = self.starts_quiet(&parameters, &order);
        let lineage = |host: &Host| state::new_lineage(&|name| host.var(name));
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        if state.lineage.is_empty() {
            state.lineage = lineage(&self.host);
        }
        state.meta = StackMeta {
            kind: stack.kind.clone(),
            name: stack.meta.name.clone(),
        };
        state.lifecycle.order = order;
        // An undeploy keeps the record of what was deployed (§10.4).
        if self.verb == Verb::Deploy {
            state.stack_parameters = parameters;
        }
        self.operation = Some(state.begin_operation(start, &now));
        match self.quiet {
            true => Ok(()),
            false => self.save(),
        }
    }
}

/// The latest of `outputs` named `comp:name`, or plain `name`.
fn output_in<'o>(outputs: &'o [state::CapturedOutput], key: &str) -> Option<&'o Value> {
    let latest = outputs.iter().rev();
    latest
        .clone()
        .find(|o| o.qualified_name() == key)
        .or_else(|| latest.clone().find(|o| o.name == key))
        .map(|o| &o.value)
}

/// How long the run waits for a component to end before saying which
/// are still running.
const HEARTBEAT: Duration = Duration::from_secs(30);

/// What a component needs once its process may start.
enum Prepared<'a> {
    Run(Box<Job<'a>>),
    Ended(Step),
}

/// A component's process and what its result is recorded with.
struct Job<'a> {
    invocation: Invocation,
    /// How long it may run, its hooks included.
    limit: Option<Limit>,
    /// Its hooks, run on the same thread before and after it.
    hooks: hooks::Planned,
    /// The secrets known when it started.
    masker: SecretMasker,
    manifest: &'a Manifest,
    params: Vec<ExpandedParam>,
    dir: PathBuf,
    pad: Vec<u8>,
    /// The implementation, for messages.
    implementation: String,
    /// `lifecycle.retry`: when a failure runs it again.
    retry: Option<super::retry::Policy>,
    /// How many times it ran (set by its thread).
    attempts: super::retry::Attempts,
}

/// A component's thread ended: its process, or its wait for readiness.
struct Ended<'a> {
    name: String,
    result: JobResult<'a>,
}

enum JobResult<'a> {
    Process(Box<Job<'a>>, hooks::Around),
    Ready(Result<(), String>),
}

/// The limits of a run: the stack's `lifecycle.timeouts` over `--timeout`.
fn run_timeouts(stack: &Stack, default: Option<Duration>) -> Result<Timeouts, EngineError> {
    Timeouts::new(&stack.elaborated.stack.lifecycle.timeouts, default).map_err(|bad| {
        EngineError::Plan(schedule::ScheduleError::BadTimeout {
            component: bad.component,
            value: bad.value,
            reason: bad.reason,
        })
    })
}

/// Why a run stops handing out components.
enum Stop {
    Interrupted(Option<String>, i32),
    /// The state could not be written.
    Fatal(EngineError),
    /// A mandatory component failed in a one-at-a-time run.
    Failed(EngineError),
    /// A mandatory component failed in a parallel run: nothing new starts,
    /// the components running finish, then the run ends with the failure.
    Draining,
}

/// Sets a component's phase; in a parallel run (`positions` given) the
/// phases follow the plan's order, not the timing.
/// Refuses a deploy whose parameters alone would write a state larger
/// than every command reads (see [`super::size`]).
fn check_state_size(stack: &Stack, plan: &Schedule, locked: &Locked) -> Result<(), EngineError> {
    let components = plan
        .selected
        .iter()
        .filter_map(|name| Some((name.as_str(), stack.elaborated.component(name)?)));
    let (estimate, weights) = super::size::estimate(locked, components);
    match super::size::over_limit(estimate, weights) {
        None => Ok(()),
        Some(heaviest) => Err(EngineError::StateTooLarge {
            estimate,
            limit: hub_manifest::limits::MAX_FILE_BYTES as u64,
            heaviest,
        }),
    }
}

/// What a component's start changes in the state, kept to be put back
/// when that start could not be recorded (a full disk): the component
/// never ran, and the state must say so.
struct StartUndo {
    entry: Option<state::ComponentState>,
    status: String,
    message: String,
    phases: usize,
}

impl StartUndo {
    fn before(state: &State, name: &str, op: Option<state::OperationIndex>) -> StartUndo {
        StartUndo {
            entry: state.components.get(name).cloned(),
            status: state.status.clone(),
            message: state.message.clone(),
            phases: op.map_or(0, |op| state.phases_of(op)),
        }
    }

    fn apply(self, state: &mut State, name: &str, op: Option<state::OperationIndex>) {
        match self.entry {
            Some(entry) => {
                state.components.insert(name.to_string(), entry);
            }
            None => {
                state.components.shift_remove(name);
            }
        }
        state.status = self.status;
        state.message = self.message;
        if let Some(op) = op.filter(|op| state.phases_of(*op) > self.phases) {
            state.remove_phase(op, name);
        }
    }
}

fn record_phase(
    state: &mut State,
    op: state::OperationIndex,
    name: &str,
    status: OperationStatus,
    now: &str,
    positions: Option<&HashMap<String, usize>>,
) {
    match positions {
        Some(positions) => {
            state.set_phase_in_order(op, name, status, now, &|name| positions.get(name).copied())
        }
        None => state.set_phase(op, name, status, now),
    }
}

fn plan_positions(plan: &Schedule) -> HashMap<String, usize> {
    plan.selected
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect()
}
