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
//!    components, up to `-j` at a time (see [`crate::order::schedule`]); the state
//!    is written (atomically) at each component's start, failure and end,
//!    to every location (one that cannot be written is a warning while
//!    another was written).
//!
//! # Parallel runs
//!
//! Only component processes (and waits for ready conditions) run on
//! threads of their own; parameters, outputs, provides and the state are
//! handled on the run's thread as each component starts and ends, so the
//! state has one writer. With one slot a mandatory failure stops the run
//! (§9.2); with more, it cancels what waits for the failed component and
//! the run ends once the rest is done. What a component sees is the same
//! whatever the timing: the outputs and capabilities known at the start,
//! with those of the components it waits for ([`super::known`]).
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

use super::action::{self, Action};
use super::error::EngineError;
use super::fingerprint;
use super::hooks;
use super::interrupt::Interrupts;
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
    lock_parameters, plan_for, read_state, require_state,
};
use super::timeout::{Limit, Timeouts};
use super::upstream::{Ancestry, Bits};
use crate::child::capture::{self, RawOutputs};
use crate::child::env::{self, ComponentVariables, Nested, OsEnvironment};
use crate::child::otp;
use crate::child::process::{Exit, Invocation, LineSink};
use crate::order::plan::{self, Plan, Selection, Verb};
use crate::order::requirements::provides_text;
use crate::order::schedule::Scheduler;
use crate::source::discover::{self, Implementation};
use crate::source::stack::{absolute, Stack};
use crate::view::progress::{finish_line, Progress, Recorder};
use crate::view::summary::{Outcome, Summary};
use hub_manifest::diag::Warnings;
use hub_manifest::redact::SecretMasker;
use hub_manifest::Manifest;
use hub_params::format::substitution_text;
use hub_params::{
    self as params, expand_component, expand_outputs, ComponentScope, ExpandedParam, Locked,
    OutputsContext, Prompter,
};
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

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub verb: Option<Verb>,
    pub selection: Selection,
    /// The state locations (`-s a,b`), in the order given; empty with `-n`.
    pub state: Vec<PathBuf>,
    /// `-e`: for `fromEnv`/`fromFile: $VAR` lookups only.
    pub overrides: IndexMap<String, String>,
    pub os_environment: OsEnvironment,
    /// `-b`.
    pub components_base_dir: Option<PathBuf>,
    pub force: bool,
    pub compressed: bool,
    /// `--state-format`.
    pub state_format: state::StateFormat,
    /// Undeploy: skip trailing components without a state entry.
    pub guess: bool,
    /// Show secrets in output instead of masking them.
    pub reveal: bool,
    /// The full command line, recorded in the operation.
    pub args: Vec<String>,
    /// How many components may run at once.
    pub concurrency: usize,
    /// `--changed`: skip components whose fingerprint is unchanged.
    pub changed: bool,
    /// `--replace`: components that run even where `--changed` would skip
    /// them.
    pub replace: Vec<String>,
    /// `--why`: say why each component runs or is skipped.
    pub why: bool,
    /// `--prune`: after the deploy, undeploy the components the state
    /// holds and the stack no longer lists, and forget them.
    pub prune: bool,
    /// Run the `deploy-test`/`undeploy-test` implementations; the state is
    /// read but never written.
    pub dry: bool,
    /// `--lock-timeout`: how long to wait for a lock another run holds.
    pub lock_timeout: Duration,
    /// `--timeout`: how long a component may run, unless the stack's
    /// `lifecycle.timeouts` says otherwise.
    pub timeout: Option<Duration>,
    /// `deploy --plan`: the state the plan was checked against, checked
    /// again under the lock (another run may write it in between).
    pub expected_state: Option<ExpectedState>,
}

/// A state's identity and version as a saved plan read them; `None` for
/// no state yet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExpectedState {
    pub lineage: Option<String>,
    pub serial: Option<u64>,
}

impl ExpectedState {
    /// Whether `loaded` is still that state.
    pub fn holds(&self, loaded: Option<&State>) -> bool {
        let found = loaded.map(|s| (s.lineage.as_str(), s.serial));
        found == self.lineage.as_deref().zip(self.serial)
    }
}

impl RunOptions {
    /// The verb implementations are looked up for: `V`, or `V-test` for a
    /// dry run.
    pub fn implementation_verb(&self, verb: &str) -> String {
        if self.dry {
            format!("{verb}-test")
        } else {
            verb.to_string()
        }
    }
}

/// What the run gets from the process it runs in.
pub struct Host<'a> {
    /// Hub's environment.
    pub environment: Vec<(String, String)>,
    /// The hub executable (`$HUB` for components).
    pub hub: PathBuf,
    pub sink: &'a dyn LineSink,
    pub interrupts: &'a Interrupts,
    /// Hub's own progress lines.
    pub log: &'a dyn Fn(&str),
    /// Asks for missing `kind: user` parameters; `None` without a terminal.
    pub prompter: Option<&'a mut dyn Prompter>,
    /// Hears when components start and end; `None`: plain lines through
    /// `log` (in a parallel run).
    pub progress: Option<&'a dyn Progress>,
}

impl Host<'_> {
    /// A variable of hub's environment.
    pub fn var(&self, name: &str) -> Option<String> {
        self.environment
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

/// The result of a run that got as far as running components: its summary,
/// and the error that ended it, if any.
pub struct Finished {
    pub summary: Option<Summary>,
    pub result: Result<(), EngineError>,
}

/// Deploys or undeploys `stack`.
pub fn run<'a>(
    stack: &'a Stack,
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
            }
        }
    };
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
    Finished {
        summary: Some(run.summary),
        result,
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
    plan: Plan,
    locked: Locked,
    clock: Clock,
    /// The state being written; `None` without one.
    state: Option<State>,
    /// The state locations, locked for the whole run; `None` without a
    /// state.
    locations: Option<Locations>,
    /// `STATE.logs` of the first location, beside its real file.
    log_folder: Option<PathBuf>,
    /// The location the state was read from (or would have been).
    read_path: Option<PathBuf>,
    operation: Option<OperationIndex>,
    /// Writes the state to every location (created at the first write);
    /// the locks are held for the whole run, so it alone changes the files.
    writer: Option<state::StateWriter>,
    /// The serial of the state read at the start, when one was read.
    read_serial: Option<u64>,
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
        stack: &'a Stack,
        options: &'a RunOptions,
        mut host: Host<'a>,
        warnings: &'a mut Warnings,
    ) -> Result<Run<'a>, EngineError> {
        let verb = options.verb.unwrap_or(Verb::Deploy);
        let order = stack.validated_order()?;
        let timeouts = run_timeouts(stack, options.timeout)?;
        let clock = Clock::from_env(&|name| host.var(name))?;
        require_state(options)?;
        let locations = match options.state.is_empty() {
            true => None,
            false => Some(Locations::lock_waiting(
                &options.state,
                verb.as_str(),
                &clock,
                &state::LockWait::new(options.lock_timeout, Some(host.log)),
                warnings,
            )?),
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
        let plan = plan_for(stack, order, verb, options, loaded.as_ref())?;
        check_selection(&plan, options, loaded.as_ref(), warnings)?;
        if let Some(selection) = plan.selection_text() {
            (host.log)(&format!("hub: selection {selection}"));
        }
        let locked = lock_parameters(
            stack,
            options,
            &mut host,
            read_path.as_deref(),
            loaded.as_ref(),
            warnings,
        )?;
        if verb == Verb::Deploy && locations.is_some() {
            check_state_size(stack, &plan, &locked)?;
        }
        if let (Some(state), Some(path)) = (&loaded, &read_path) {
            check_consistency(stack, state, &locked, path, options, warnings)?;
        }
        let provides = initial_provides(stack, &plan, loaded.as_ref(), host.var("PATH"))?;
        let implementations = check_implementations(stack, &plan, options)?;
        let removed = removed_components(stack, verb, loaded.as_ref(), options, warnings)?;
        let nested = Nested {
            hub: host.hub.clone(),
            elaborate: stack.file.clone(),
            state: exported_state,
            components_base_dir: options.components_base_dir.as_deref().map(absolute),
        };
        let base_env = env::base(options.os_environment, &host.environment, &nested);
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
        let recorded_outputs = match (options.changed, &loaded) {
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
            locked,
            clock,
            state,
            log_folder: locations.as_ref().map(|l| log_dir(l.first())),
            locations,
            read_path,
            operation: None,
            writer: None,
            read_serial,
            positions,
            known: Known::new(outputs, provides, options.concurrency > 1),
            failed: Vec::new(),
            skipped: Vec::new(),
            cancelled: Vec::new(),
            mandatory_failures: Vec::new(),
            hook_failures: Vec::new(),
            fixes: HashMap::new(),
            timeouts,
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
                verb: verb.as_str().to_string(),
                ..Summary::default()
            },
            stopped: false,
            removed,
            implementations,
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
        self.save()
    }

    /// Runs the selected components through the scheduler: up to
    /// `concurrency` component processes at once, each on a thread of its
    /// own; everything else (parameters, state, outputs) happens here, one
    /// component at a time, as each starts and ends.
    fn execute(&mut self) -> Result<(), EngineError> {
        let mut scheduler = self.plan.scheduler(self.options.concurrency.max(1));
        let total = self.plan.selected.len();
        let sink = Recorder::new(self.host.sink, self.parallel());
        let interrupts = self.host.interrupts;
        let mut stop: Option<Stop> = None;
        let mut started = 0;
        let logs_ahead = self.logs_ahead();
        std::thread::scope(|threads| {
            let (done, finished) = mpsc::channel::<Ended>();
            let mut running: IndexMap<String, Instant> = IndexMap::new();
            let mut steps: Vec<(String, Step)> = Vec::new();
            let mut starting: Vec<(String, Box<Job>)> = Vec::new();
            loop {
                if stop.is_none() {
                    if let Some(signal) = self.interrupt_signal() {
                        stop = Some(Stop::Interrupted(None, signal));
                    }
                }
                while stop.is_none() && steps.is_empty() {
                    let Some(name) = scheduler.next_ready() else {
                        break;
                    };
                    started += 1;
                    if let Some(logs) = &logs_ahead {
                        logs.reached(started);
                    }
                    self.announce_start(&name, started, total);
                    running.insert(name.clone(), Instant::now());
                    match self.component(&name) {
                        Prepared::Ended(step) => steps.push((name, step)),
                        Prepared::Run(job) => starting.push((name, job)),
                    }
                }
                if let Err(error) = self.write_checkpoints() {
                    for (name, _) in starting.drain(..) {
                        let step = self.fail(&name, &format!("not started: {error}"), None);
                        steps.push((name, step));
                    }
                    stop = stop.take().or(Some(Stop::Fatal(error)));
                }
                for (name, job) in starting.drain(..) {
                    let done = done.clone();
                    let sink = &sink;
                    threads.spawn(move || {
                        let result = hooks::run_around(
                            &job.hooks,
                            Some(&job.invocation),
                            job.limit,
                            &job.masker,
                            sink,
                            interrupts,
                        );
                        // The receiver lives until every job has ended.
                        let _ = done.send(Ended {
                            name,
                            result: JobResult::Process(job, result),
                        });
                    });
                }
                let progressed = !steps.is_empty();
                for (name, step) in steps.drain(..) {
                    if let Step::AwaitReady(conditions) = step {
                        let done = done.clone();
                        threads.spawn(move || {
                            let result = ready::wait_resolved(&conditions, interrupts);
                            let _ = done.send(Ended {
                                name,
                                result: JobResult::Ready(result),
                            });
                        });
                        continue;
                    }
                    let clock = running.shift_remove(&name).unwrap_or_else(Instant::now);
                    scheduler.finish(&name);
                    let outcome = self.settle(&name, step, clock.elapsed(), &mut scheduler);
                    stop = match (stop.take(), outcome) {
                        // The signal was seen before the component it
                        // stopped ended: the message names the component.
                        (Some(Stop::Interrupted(None, _)), Some(named @ Stop::Interrupted(..))) => {
                            Some(named)
                        }
                        (stop, outcome) => stop.or(outcome),
                    };
                }
                if progressed {
                    continue;
                }
                if running.is_empty() {
                    break;
                }
                match finished.recv_timeout(HEARTBEAT) {
                    Ok(ended) => {
                        let step = match ended.result {
                            JobResult::Process(job, result) => self.ran(&ended.name, job, result),
                            JobResult::Ready(Ok(())) => self.succeeded(&ended.name),
                            JobResult::Ready(Err(reason)) => self.fail(&ended.name, &reason, None),
                        };
                        steps.push((ended.name, step));
                    }
                    Err(_) => self.heartbeat(&running),
                }
            }
        });
        if let Some(logs) = logs_ahead {
            logs.finish();
        }
        // Failures in the run's order, not the order they came in.
        let positions = &self.positions;
        let position = |name: &String| positions.get(name).copied().unwrap_or(usize::MAX);
        self.failed.sort_by_key(position);
        self.mandatory_failures
            .sort_by_key(|(name, _)| position(name));
        self.summary.failed_logs = sink.failed_logs(&self.failed);
        self.not_run(&scheduler);
        // The table and the report follow the order, not the timing.
        let positions = &self.positions;
        self.summary
            .entries
            .sort_by_key(|e| positions.get(&e.component).copied().unwrap_or(usize::MAX));
        match stop {
            Some(Stop::Interrupted(component, signal)) => {
                return self.stop_interrupted(component.as_deref(), signal)
            }
            Some(Stop::Fatal(error)) => {
                self.stopped = true;
                self.record_fatal(&error);
                return Err(error);
            }
            Some(Stop::Failed(error)) => return self.stop_failed(error),
            None => {}
        }
        if let Some(signal) = self.interrupt_signal() {
            return self.stop_interrupted(None, signal);
        }
        if let Some(error) = self.deferred_failure() {
            return self.stop_failed(error);
        }
        self.stack_ready()?;
        self.prune()
    }

    /// `--prune`: undeploys the removed components, dependents first, and
    /// forgets each one whose undeploy succeeded (written at once). A
    /// failure keeps the entry and fails the run once the others are done.
    fn prune(&mut self) -> Result<(), EngineError> {
        if !self.options.prune || self.removed.is_empty() {
            return Ok(());
        }
        let removed = std::mem::take(&mut self.removed);
        let verb = self.options.implementation_verb("undeploy");
        let total = removed.len();
        for (index, gone) in removed.iter().enumerate() {
            let name = gone.name.as_str();
            (self.host.log)(&format!(
                "hub: prune {name} ({}/{total}): removed from the stack",
                index + 1
            ));
            let started = Instant::now();
            let failed_dependents: Vec<&str> = removed[..index]
                .iter()
                .filter(|r| r.depends.iter().any(|d| d == name))
                .map(|r| r.name.as_str())
                .filter(|r| self.mandatory_failures.iter().any(|(f, _)| f == r))
                .collect();
            if let Some(dependent) = failed_dependents.first() {
                let reason = format!("`{dependent}` depends on it and was not undeployed");
                self.summary
                    .push(name, Outcome::Cancelled(reason), Duration::ZERO);
                self.cancelled.push(name.to_string());
                continue;
            }
            let entry = self.state.as_ref().and_then(|s| s.components.get(name));
            let ended = match (gone.runs(), entry.cloned()) {
                (true, Some(entry)) => {
                    let run = prune::Undeploy {
                        verb: &verb,
                        base_env: &self.base_env,
                        base_dir: &self.stack.base_dir,
                        sink: self.host.sink,
                        interrupts: self.host.interrupts,
                        reveal: self.options.reveal,
                        log_file: self.log_file(name),
                        limit: self.timeouts.limit(name),
                    };
                    prune::undeploy(gone, &entry, &run)
                }
                _ => prune::Ended::Undeployed,
            };
            let elapsed = started.elapsed();
            let now = self.clock.now();
            let phase = match ended {
                prune::Ended::Undeployed => OperationStatus::Success,
                _ => OperationStatus::Error,
            };
            let positions = self.parallel().then_some(&self.positions);
            if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
                record_phase(state, op, name, phase, &now, positions);
            }
            match ended {
                prune::Ended::Undeployed => {
                    if let Some(state) = self.state.as_mut() {
                        prune::forget(state, name);
                    }
                    state::remove_provider(&mut self.known.provides, name);
                    self.summary.push(name, Outcome::Undeployed, elapsed);
                    self.save()?;
                }
                prune::Ended::Failed(reason) => {
                    self.summary
                        .push(name, Outcome::Failed(reason.clone()), elapsed);
                    self.mandatory_failures.push((name.to_string(), reason));
                }
                prune::Ended::Interrupted(signal) => {
                    self.summary.push(name, Outcome::Interrupted, elapsed);
                    return self.stop_interrupted(Some(name), signal);
                }
            }
        }
        match self.mandatory_failures.is_empty() {
            true => Ok(()),
            false => {
                let failed = self.mandatory_failures.clone();
                let cancelled = self.cancelled.clone();
                self.stop_failed(EngineError::PruneFailed { failed, cancelled })
            }
        }
    }

    /// Records how a component's turn ended; returns why the run must stop
    /// handing out components, if it must.
    fn settle(
        &mut self,
        name: &str,
        step: Step,
        took: Duration,
        scheduler: &mut Scheduler,
    ) -> Option<Stop> {
        let outcome = match &step {
            Step::Done => match self.verb {
                Verb::Deploy => Outcome::Deployed,
                Verb::Undeploy => Outcome::Undeployed,
            },
            Step::Unchanged => Outcome::Unchanged,
            Step::AwaitReady(_) => Outcome::NotRun,
            Step::Skipped(why) => Outcome::Skipped(why.clone()),
            Step::Interrupted(_) => Outcome::Interrupted,
            Step::Fatal(error) => Outcome::Failed(error.to_string()),
            Step::Failed(_) if self.interrupt_signal().is_some() => Outcome::Interrupted,
            Step::Failed(reason) => Outcome::Failed(reason.clone()),
        };
        self.record_outcome(name, &outcome, took);
        match step {
            Step::Done | Step::Unchanged | Step::AwaitReady(_) => None,
            Step::Skipped(why) => {
                if !self.parallel() {
                    (self.host.log)(&format!("hub: {name} skipped: {why}"));
                }
                self.skipped.push(name.to_string());
                None
            }
            Step::Interrupted(signal) => Some(Stop::Interrupted(Some(name.to_string()), signal)),
            Step::Fatal(error) => Some(Stop::Fatal(error)),
            Step::Failed(_) if outcome == Outcome::Interrupted => {
                let signal = self.interrupt_signal().unwrap_or(libc::SIGINT);
                Some(Stop::Interrupted(Some(name.to_string()), signal))
            }
            Step::Failed(reason) => self.after_failure(name, &reason, scheduler),
        }
    }

    /// Puts a component's outcome in the summary and tells the console.
    fn record_outcome(&mut self, name: &str, outcome: &Outcome, took: Duration) {
        self.summary.push(name, outcome.clone(), took);
        let outputs = self.known.output_names(self.position(name));
        let started = self.started_at.remove(name).unwrap_or_default();
        let ended = self.clock.now();
        if let Some(entry) = self.summary.entry_mut(name) {
            entry.started = started;
            entry.ended = ended;
            entry.outputs = outputs;
        }
        match (self.host.progress, self.parallel()) {
            (Some(progress), _) => progress.ended(name, outcome, took),
            (None, true) => (self.host.log)(&finish_line(name, outcome, took)),
            (None, false) => {}
        }
    }

    fn announce_start(&mut self, name: &str, index: usize, total: usize) {
        self.started_at.insert(name.to_string(), self.clock.now());
        if let Some(progress) = self.host.progress {
            progress.started(name);
        }
        (self.host.log)(&format!(
            "hub: {} {name} ({index}/{total})",
            self.verb.as_str()
        ));
        if self.options.why {
            let waits: Vec<String> = crate::view::preview::waits_of(&self.plan, name)
                .iter()
                .map(ToString::to_string)
                .collect();
            if !waits.is_empty() {
                (self.host.log)(&format!("hub: {name} waited for {}", waits.join("; ")));
            }
        }
    }

    /// A plain line every [`HEARTBEAT`] while components run.
    fn heartbeat(&self, running: &IndexMap<String, Instant>) {
        let list: Vec<String> = running
            .iter()
            .map(|(name, since)| format!("{name} ({}s)", since.elapsed().as_secs()))
            .collect();
        (self.host.log)(&format!("hub: running: {}", list.join(", ")));
    }

    /// Whether components may run at once (`-j` above 1).
    fn parallel(&self) -> bool {
        self.parallel
    }

    fn not_run(&mut self, scheduler: &Scheduler) {
        for name in scheduler.pending() {
            self.summary.push(&name, Outcome::NotRun, Duration::ZERO);
        }
    }

    fn interrupt_signal(&self) -> Option<i32> {
        self.host
            .interrupts
            .requested()
            .then(|| self.host.interrupts.last_signal().unwrap_or(libc::SIGINT))
    }

    /// A failed component: optional ones and `--force` let the run go on;
    /// a mandatory one ends it (§9.2). In a parallel run nothing new starts
    /// that depends on it, and a mandatory failure ends the run only once
    /// the components independent of it have finished.
    fn after_failure(
        &mut self,
        name: &str,
        reason: &str,
        scheduler: &mut Scheduler,
    ) -> Option<Stop> {
        self.failed.push(name.to_string());
        if self.parallel() {
            let why = match self.verb {
                Verb::Deploy => format!("upstream `{name}` failed"),
                Verb::Undeploy => format!("`{name}`, which depends on it, failed to undeploy"),
            };
            for cancelled in scheduler.cancel_after(name) {
                let why = why.clone();
                self.record_outcome(&cancelled, &Outcome::Cancelled(why), Duration::ZERO);
                self.cancelled.push(cancelled);
            }
        }
        let optional = self.plan.is_optional(name) && !self.hook_failures.iter().any(|h| h == name);
        if optional || self.options.force {
            let which = if optional {
                "optional component"
            } else {
                "component (--force)"
            };
            self.warnings
                .warn(None, format!("{which} `{name}` failed: {reason}"));
            return None;
        }
        self.mandatory_failures
            .push((name.to_string(), reason.to_string()));
        match self.parallel() {
            true => None,
            false => Some(Stop::Failed(EngineError::ComponentFailed {
                component: name.to_string(),
                reason: reason.to_string(),
                fix: self.fixes.get(name).cloned(),
            })),
        }
    }

    /// The error of a parallel run in which mandatory components failed.
    fn deferred_failure(&self) -> Option<EngineError> {
        match &self.mandatory_failures[..] {
            [] => None,
            [(component, reason)] if self.cancelled.is_empty() => {
                Some(EngineError::ComponentFailed {
                    component: component.clone(),
                    reason: reason.clone(),
                    fix: self.fixes.get(component).cloned(),
                })
            }
            failures => Some(EngineError::Incomplete {
                failed: failures.to_vec(),
                cancelled: self.cancelled.clone(),
                verb: self.verb.as_str(),
            }),
        }
    }

    /// The run's operation ends as `error`, its log saying why (the
    /// stack's status stays what the components' records make it); the
    /// state is written by [`Run::finish`].
    fn record_fatal(&mut self, error: &EngineError) {
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
            state.finish_operation(op, OperationStatus::Error, &now);
            state.append_log(op, &format!("the run stopped: {error}\n"), &now);
        }
    }

    /// Ends a run after a mandatory failure: the stack is `incomplete`.
    fn stop_failed(&mut self, error: EngineError) -> Result<(), EngineError> {
        self.stopped = true;
        let now = self.clock.now();
        let names: Vec<String> = self
            .mandatory_failures
            .iter()
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        let message = match names.len() {
            1 => format!("component {} failed", names[0]),
            _ => format!("components {} failed", names.join(", ")),
        };
        if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
            state.set_status(StackStatus::Incomplete, &message, &now);
            state.finish_operation(op, OperationStatus::Error, &now);
        }
        self.save()?;
        Err(error)
    }

    fn stop_interrupted(
        &mut self,
        component: Option<&str>,
        signal: i32,
    ) -> Result<(), EngineError> {
        self.stopped = true;
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
            state.set_status(StackStatus::Incomplete, "interrupted", &now);
            state.finish_operation(op, OperationStatus::Error, &now);
        }
        self.save()?;
        Err(EngineError::Interrupted {
            component: component.map(String::from),
            signal,
        })
    }

    /// The end of a run that was not stopped: stack outputs, status,
    /// operation `success`.
    fn finish(&mut self) -> Result<(), EngineError> {
        let now = self.clock.now();
        let stopped = self.stopped;
        let final_outputs =
            !self.options.selection.is_partial() && self.options.selection.limit.is_none();
        let is_optional = |name: &str| self.plan.is_optional(name);
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        if self.verb == Verb::Deploy {
            refresh_stack_outputs(state, &self.known.outputs(), final_outputs);
            state.stack_outputs = stack_outputs(
                &self.stack.elaborated.stack.outputs,
                &state.captured_outputs,
                &self.locked,
                &state.stack_outputs,
                true,
                self.warnings,
            );
        }
        state.provides = state::provides_for_state(&self.known.provides);
        if let (Some(op), true) = (self.operation, self.failure_logs.len() > 1) {
            let logs: String = self.failure_logs.values().map(String::as_str).collect();
            state.set_log(op, &logs, &now);
        }
        if !stopped {
            let (status, message) =
                state::stack_status(state, &self.plan.order, &is_optional, &self.skipped);
            state.set_status(status, &message, &now);
            if let Some(op) = self.operation {
                state.finish_operation(op, OperationStatus::Success, &now);
            }
        }
        self.summary.stack_status = state.status.clone();
        let redactor = hub_manifest::redact::Redactor::new(self.options.reveal);
        // After an undeploy the recorded outputs describe nothing live.
        let shown_outputs = if self.verb == Verb::Deploy {
            &state.stack_outputs[..]
        } else {
            &[]
        };
        self.summary.outputs = shown_outputs
            .iter()
            .map(|o| {
                let value = substitution_text(Some(&o.value));
                let shown = redactor.text(&o.name, &o.kind, false, &value);
                (o.name.clone(), self.masker.mask(&shown).into_owned())
            })
            .collect();
        self.save()
    }

    /// The checkpoints of the components about to start, in one write.
    fn write_checkpoints(&mut self) -> Result<(), EngineError> {
        match self.unsaved_checkpoints.is_empty() {
            true => Ok(()),
            false => self.write_state(Changed::Checkpoints),
        }
    }

    /// Writes the state, when there is one (never on a dry run).
    fn save(&mut self) -> Result<(), EngineError> {
        self.write_state(Changed::Any)
    }

    /// [`Run::save`] when, since the previous save, no component entry
    /// changed but `name`'s (the others are then not compared with what
    /// was last written).
    fn save_component(&mut self, name: &str) -> Result<(), EngineError> {
        self.write_state(Changed::Component(name))
    }

    fn write_state(&mut self, changed: Changed<'_>) -> Result<(), EngineError> {
        let (Some(state), Some(locations), false) =
            (self.state.as_mut(), &self.locations, self.options.dry)
        else {
            return Ok(());
        };
        state.touch(&self.clock.now());
        let writer = match &mut self.writer {
            Some(writer) => writer,
            None => {
                let options = state::WriteOptions {
                    compressed: self.options.compressed,
                    format: self.options.state_format,
                };
                let read = self.read_path.as_deref().zip(self.read_serial);
                let writer = state::StateWriter::open_all(locations.paths(), options, read)?;
                self.writer.insert(writer)
            }
        };
        let unsaved = &mut self.unsaved_checkpoints;
        let written = match changed {
            Changed::Any => writer.write(state),
            Changed::Component(name) if unsaved.is_empty() => writer.write_component(state, name),
            Changed::Component(name) => {
                unsaved.push(name.to_string());
                let written = writer.write_components(state, unsaved);
                unsaved.pop();
                written
            }
            Changed::Checkpoints => writer.write_components(state, unsaved),
        };
        if written.is_ok() {
            unsaved.clear();
        }
        // §11.5: with several locations, one that cannot be written is a
        // warning while another was written.
        let failures = writer.take_failures();
        if !failures.is_empty() {
            let reached: Vec<String> = writer
                .written()
                .map(|p| format!("`{}`", p.display()))
                .collect();
            for failure in failures {
                let message = match reached.is_empty() {
                    true => failure.to_string(),
                    false => format!("{failure}; the state was written to {}", reached.join(", ")),
                };
                self.warnings.warn(None, message);
            }
        }
        written?;
        Ok(())
    }

    // ---- one component -------------------------------------------------

    /// Everything before a component's process starts; a component that
    /// needs no process (skipped, failed early, bare) ends here.
    fn component(&mut self, name: &str) -> Prepared<'a> {
        match self.prepare_component(name) {
            Ok(job) => Prepared::Run(Box::new(job)),
            Err(step) => Prepared::Ended(step),
        }
    }

    fn prepare_component(&mut self, name: &str) -> Result<Job<'a>, Step> {
        let (Some(reference), Some(manifest)) = (
            self.stack.reference(name),
            self.stack.elaborated.component(name),
        ) else {
            return Err(Step::Failed(format!("`{name}` has no component document")));
        };
        if self.plan.per_component || self.plan.offset.as_deref() == Some(name) {
            self.preload(name);
        }
        if self.verb == Verb::Deploy {
            let failed: Vec<&String> = reference
                .depends
                .iter()
                .filter(|d| self.failed.contains(d))
                .collect();
            if !failed.is_empty() {
                let list = failed
                    .iter()
                    .map(|d| format!("`{d}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let reason = format!("it depends on {list}, which failed in this run");
                return Err(self.fail(name, &reason, None));
            }
        }
        let visible = self.visible_outputs(name);
        let provides = self.known.provides_for(&visible);
        let expanded = self.expand(name, &reference.depends, manifest, &visible, &provides);
        if let Some(why) = self.condition_skip(name, expanded.as_ref().ok()) {
            return Err(self.skip(name, why));
        }
        let params = match expanded {
            Ok(params) => params,
            Err(error) => return Err(self.fail(name, &error.to_string(), None)),
        };
        let unmet =
            plan::unmet_requirements(&manifest.requires, name, &provides, &self.plan.tuning);
        if !unmet.optional.is_empty() {
            return Err(self.skip(
                name,
                format!(
                    "optional requirement {} not provided",
                    quoted(&unmet.optional)
                ),
            ));
        }
        if !unmet.hard.is_empty() {
            let reason = format!(
                "requirement {} not provided (provided: {})",
                quoted(&unmet.hard),
                or_none(&provides_text(&provides))
            );
            match self.verb {
                Verb::Deploy => return Err(self.fail(name, &reason, None)),
                Verb::Undeploy => self
                    .warnings
                    .warn(None, format!("component `{name}`: {reason}")),
            }
        }
        for param in params.iter().filter(|p| p.secret) {
            self.masker.add(&substitution_text(param.value.as_ref()));
        }
        let dir = self
            .component_dir(name)
            .map_err(|error| self.fail(name, &error.to_string(), None))?;
        if let Some(step) =
            self.unchanged(name, manifest, &reference.depends, &dir, &params, &visible)
        {
            return Err(step);
        }
        let ran_from = (dir.as_path(), reference.depends.as_slice());
        if let Err(error) = self.checkpoint(name, manifest, &params, visible, ran_from) {
            return Err(Step::Fatal(error));
        }
        self.invocation(name, manifest, params, dir)
    }

    /// §6.3 with the outputs known now.
    fn expand(
        &mut self,
        name: &str,
        depends: &[String],
        manifest: &Manifest,
        visible: &View,
        provides: &IndexMap<String, Vec<String>>,
    ) -> Result<Vec<ExpandedParam>, params::ParamsError> {
        let outputs: Vec<params::CapturedOutput> = match self.plan.reads(name) {
            Some(reads) => self
                .known
                .read(visible, reads)
                .into_iter()
                .map(to_scope_output)
                .collect(),
            None => scope_outputs(&self.known.all(visible), None),
        };
        let mut scope = ComponentScope {
            name,
            depends,
            manifest,
            outputs: &outputs,
            provides: provides_text(provides),
            source: None,
        };
        // Pointing at declarations scans the whole elaborated file: that is
        // done again only when there is something to report.
        let mut quiet = Warnings::default();
        match expand_component(&self.locked, &scope, &mut quiet) {
            Ok(params) if quiet.is_empty() => Ok(params),
            _ => {
                scope.source = self.stack.declarations(name);
                expand_component(&self.locked, &scope, self.warnings)
            }
        }
    }

    /// §6.4: the component's parameter conditions.
    fn condition_skip(
        &mut self,
        name: &str,
        params: Option<&Vec<ExpandedParam>>,
    ) -> Option<String> {
        let outcome = plan::component_conditions(
            &self.plan.tuning,
            name,
            params.map(Vec::as_slice),
            &self.locked,
        );
        if let Some(warning) = outcome.wildcard_warning() {
            self.warnings.warn(None, warning);
        }
        outcome.skip_reason()
    }

    /// A skipped component leaves no entry that never ran (§6.4, §6.6).
    fn skip(&mut self, name: &str, why: String) -> Step {
        if let Some(state) = self.state.as_mut() {
            if state
                .components
                .get(name)
                .is_some_and(|e| e.status.is_empty())
            {
                state.components.shift_remove(name);
            }
        }
        Step::Skipped(why)
    }

    /// §6.7: the state says what is running before it starts.
    fn checkpoint(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        visible: View,
        (dir, depends): (&Path, &[String]),
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        let (component_status, stack_status) = match self.verb {
            Verb::Deploy => (ComponentStatus::Deploying, StackStatus::Deploying),
            Verb::Undeploy => (ComponentStatus::Undeploying, StackStatus::Undeploying),
        };
        let verb = self.verb;
        let parallel = self.parallel();
        let positions = parallel.then_some(&self.positions);
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        let undo = StartUndo::before(state, name, self.operation);
        if verb == Verb::Deploy {
            let run = ComponentRun {
                meta: component_meta(manifest),
                parameters: component_parameters(params),
                raw_outputs: Vec::new(),
                snapshot: Vec::new(),
            };
            let known = &mut self.known;
            let snapshot = |base: &state::Snapshot| known.snapshot(&visible, base);
            state.record_component_run_with(name, run, snapshot, &now);
            let entry = state.component_mut(name);
            entry.fingerprint = None;
            entry.dir = absolute(dir).display().to_string();
            entry.depends = depends.to_vec();
        }
        state.set_component_status(name, component_status, "", &now);
        state.set_status(stack_status, "", &now);
        if let Some(op) = self.operation {
            record_phase(
                state,
                op,
                name,
                OperationStatus::InProgress,
                &now,
                positions,
            );
        }
        if self.parallel() {
            // Written once for all the components that start together,
            // before any of them starts.
            self.unsaved_checkpoints.push(name.to_string());
            return Ok(());
        }
        let saved = self.save_component(name);
        if saved.is_err() {
            // The component does not start: the state must not say it did.
            if let Some(state) = self.state.as_mut() {
                undo.apply(state, name, self.operation);
            }
        }
        saved
    }

    /// Renders templates, builds the environment and finds the
    /// implementation; a bare component ends here.
    fn invocation(
        &mut self,
        name: &str,
        manifest: &'a Manifest,
        params: Vec<ExpandedParam>,
        dir: PathBuf,
    ) -> Result<Job<'a>, Step> {
        if let Err(reason) = self.render_templates(name, manifest, &params, &dir) {
            return Err(self.fail(name, &reason, None));
        }
        let bytes = match manifest.lifecycle.options.random.bytes {
            n if n > 0 => n as usize,
            _ => otp::DEFAULT_PAD_BYTES,
        };
        let pad = otp::random_pad(bytes);
        let random = otp::pad_to_env(&pad);
        let vars = ComponentVariables {
            component: name,
            params: &params,
            random: &random,
            component_dir: &dir,
            base_dir: &self.stack.base_dir,
        };
        let environment = env::component(&self.base_env, &vars, self.warnings);
        let bare = manifest.lifecycle.bare == "allow";
        let verb = self.options.implementation_verb(self.verb.as_str());
        let found = match manifest.templates.is_empty() {
            true => self.implementations.remove(name),
            false => None,
        };
        let implementation = match found.map_or_else(|| discover::discover(&dir, &verb, bare), Ok) {
            Ok(implementation) => implementation,
            Err(error) => return Err(self.fail(name, &error.to_string(), None)),
        };
        let hooks = self.plan_hooks(name, &verb, &dir, &environment);
        let Some((program, args)) = implementation.command() else {
            let around = hooks::run_around(
                &hooks,
                None,
                self.timeouts.limit(name),
                &self.masker,
                self.host.sink,
                self.host.interrupts,
            );
            self.report_ignored_hooks(name, &around.ignored);
            return Err(match (around.pre, around.post) {
                (Err(stopped), _) | (_, Err(stopped)) => self.hook_stopped(name, stopped),
                _ => self.conclude(name, manifest, &params, &dir, "", &pad),
            });
        };
        let invocation = Invocation {
            label: name.to_string(),
            program,
            args,
            cwd: dir.clone(),
            env: environment,
            log_file: self.log_file(name),
            timeout: None,
        };
        Ok(Job {
            invocation,
            limit: self.timeouts.limit(name),
            hooks,
            masker: self.component_masker(manifest),
            manifest,
            params,
            dir,
            pad,
            implementation: describe(&implementation),
        })
    }

    /// Records what a component's process (and its hooks) did.
    fn ran(&mut self, name: &str, job: Box<Job<'a>>, around: hooks::Around) -> Step {
        self.report_ignored_hooks(name, &around.ignored);
        if let Err(stopped) = around.pre {
            return self.hook_stopped(name, stopped);
        }
        let stdout = match around.main {
            None => String::new(),
            Some(Err(error)) => {
                if let Some(fix) = error.hint().filter(|_| error.planted()) {
                    self.fixes.insert(name.to_string(), fix);
                }
                return self.fail(name, &error.to_string(), None);
            }
            Some(Ok(finished)) => match finished.exit {
                Exit::Code(0) => finished.stdout,
                Exit::Interrupted { signal } => return self.interrupted(name, signal),
                Exit::TimedOut => {
                    let Some(limit) = job.limit else {
                        let reason = format!("{} timed out", job.implementation);
                        return self.fail(name, &reason, Some(&finished.tail));
                    };
                    let reason = format!("{} {limit}", job.implementation);
                    self.fixes.insert(name.to_string(), limit.fix(name));
                    return self.fail(name, &reason, Some(&finished.tail));
                }
                exit => {
                    let reason = format!("{} {exit}", job.implementation);
                    return self.fail(name, &reason, Some(&finished.tail));
                }
            },
        };
        if let Err(stopped) = around.post {
            return self.hook_stopped(name, stopped);
        }
        self.conclude(name, job.manifest, &job.params, &job.dir, &stdout, &job.pad)
    }

    /// The component's hooks that this verb triggers (§12.1).
    fn plan_hooks(
        &mut self,
        name: &str,
        verb: &str,
        dir: &Path,
        environment: &[(String, String)],
    ) -> hooks::Planned {
        let Some(reference) = self.stack.reference(name) else {
            return hooks::Planned::default();
        };
        if reference.hooks.is_empty() {
            return hooks::Planned::default();
        }
        let context = hooks::Context {
            component: name,
            verb,
            component_dir: dir,
            stack_dir: &self.stack.base_dir,
            env: environment,
            log_file: self.log_file(name),
        };
        let (planned, warnings) = hooks::plan(&reference.hooks, &context);
        for warning in warnings {
            self.warnings.warn(None, warning);
        }
        planned
    }

    fn report_ignored_hooks(&mut self, name: &str, ignored: &[String]) {
        for message in ignored {
            self.warnings
                .warn(None, format!("component `{name}`: {message}"));
        }
    }

    /// A hook failed (the component fails, optional or not) or was
    /// interrupted.
    fn hook_stopped(&mut self, name: &str, stopped: hooks::Stopped) -> Step {
        match stopped {
            hooks::Stopped::Interrupted(signal) => self.interrupted(name, signal),
            hooks::Stopped::Failed(reason) => {
                self.hook_failures.push(name.to_string());
                self.fail(name, &reason, None)
            }
            hooks::Stopped::TimedOut(reason, limit) => {
                self.fixes.insert(name.to_string(), limit.fix(name));
                self.fail(name, &reason, None)
            }
        }
    }

    fn conclude(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        stdout: &str,
        pad: &[u8],
    ) -> Step {
        match self.verb {
            Verb::Deploy => self.deployed(name, manifest, params, dir, stdout, pad),
            Verb::Undeploy => self.undeployed(name),
        }
    }

    fn render_templates(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
    ) -> Result<(), String> {
        if manifest.templates.is_empty() {
            return Ok(());
        }
        crate::child::templates::render(dir, &manifest.templates, params, name, self.warnings)
            .map(|_| ())
            .map_err(|errors| errors.with_hints())
    }

    fn component_dir(&self, name: &str) -> Result<PathBuf, EngineError> {
        let reference =
            self.stack
                .reference(name)
                .ok_or_else(|| EngineError::UnknownComponent {
                    component: name.to_string(),
                    available: self.plan.order.clone(),
                })?;
        self.stack
            .component_dir(reference, self.options.components_base_dir.as_deref())
    }

    /// Log files made ahead of the components, when the run keeps logs;
    /// not for `--changed`, whose components mostly do not run (and whose
    /// earlier deploy left their files).
    fn logs_ahead(&self) -> Option<LogsAhead> {
        if self.options.changed {
            return None;
        }
        let folder = self.log_folder.as_ref()?;
        Some(LogsAhead::start(folder, &self.plan.selected))
    }

    fn log_file(&self, name: &str) -> Option<PathBuf> {
        self.log_folder
            .as_ref()
            .map(|folder| folder.join(format!("{name}.log")))
    }

    /// §6.11–6.15 for a deploy that exited 0: capture, provides, state.
    fn deployed(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        stdout: &str,
        pad: &[u8],
    ) -> Step {
        let mut raw = capture::parse_outputs(stdout);
        capture::decode_secrets(&mut raw, pad, self.warnings);
        let (captured, problems) = self.capture(name, manifest, params, dir, &raw);
        self.mask_secret_outputs(&captured);
        self.mask_secret_raw_outputs(manifest, &raw);
        let dynamic = capture::dynamic_provides(&raw);
        let capabilities = manifest.provides.iter().chain(&dynamic).cloned().collect();
        let after = self.record_produced(name, captured, capabilities);
        let now = self.clock.now();
        let provides = state::provides_for_state(&self.known.provides);
        let stack_outputs_declared = &self.stack.elaborated.stack.outputs;
        let conditions = &manifest.lifecycle.ready_conditions;
        // The whole list only where it is looked through.
        let snapshot = match stack_outputs_declared.is_empty() && conditions.is_empty() {
            true => Vec::new(),
            false => self.known.all(&after),
        };
        if let Some(state) = self.state.as_mut() {
            let run = ComponentRun {
                meta: component_meta(manifest),
                parameters: component_parameters(params),
                raw_outputs: raw_outputs(&raw),
                snapshot: Vec::new(),
            };
            let running = state
                .components
                .get(name)
                .map(|e| e.captured_outputs.clone());
            let known = &mut self.known;
            let shared = |base: &state::Snapshot| known.snapshot_on(&after, running.as_ref(), base);
            state.record_component_run_with(name, run, shared, &now);
            state.provides = provides;
            state.stack_outputs = stack_outputs(
                stack_outputs_declared,
                &snapshot,
                &self.locked,
                &state.stack_outputs,
                false,
                &mut Warnings::default(),
            );
        }
        if !problems.is_empty() {
            return self.fail(name, &problems.join("\n"), None);
        }
        if !conditions.is_empty() {
            let lookup = |key: &str| {
                params
                    .iter()
                    .find(|p| p.name == key)
                    .map(|p| p.value.as_ref())
                    .or_else(|| output_in(&snapshot, key).map(Some))
                    .map(substitution_text)
            };
            let resolved = match ready::resolve(conditions, &lookup) {
                Ok(resolved) => resolved,
                Err(reason) => return self.fail(name, &reason, None),
            };
            if self.parallel() {
                return Step::AwaitReady(resolved);
            }
            if let Err(reason) = ready::wait_resolved(&resolved, self.host.interrupts) {
                return self.fail(name, &reason, None);
            }
        }
        self.succeeded(name)
    }

    /// The latest output named `comp:name`, or plain `name`.
    fn output_value(&self, key: &str) -> Option<Value> {
        output_in(&self.known.outputs(), key).cloned()
    }

    /// §2 step 17: the stack's ready conditions after the last component.
    fn stack_ready(&mut self) -> Result<(), EngineError> {
        let conditions = &self.stack.elaborated.stack.lifecycle.ready_conditions;
        if self.verb != Verb::Deploy || conditions.is_empty() {
            return Ok(());
        }
        let lookup = |key: &str| {
            self.output_value(key)
                .or_else(|| self.locked.value(key).cloned())
                .map(|v| substitution_text(Some(&v)))
        };
        let Err(reason) = ready::wait_ready(conditions, &lookup, self.host.interrupts) else {
            return Ok(());
        };
        if self.options.force {
            self.warnings
                .warn(None, format!("the stack is not ready (--force): {reason}"));
            return Ok(());
        }
        self.stopped = true;
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
            state.set_status(StackStatus::Incomplete, &reason, &now);
            state.finish_operation(op, OperationStatus::Error, &now);
        }
        self.save()?;
        Err(EngineError::NotReady { reason })
    }

    /// The declared outputs of a component that ran, and the problems.
    fn capture(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        raw: &RawOutputs,
    ) -> (Vec<state::CapturedOutput>, Vec<String>) {
        let (decoded, errors) =
            capture::decode_declared(&manifest.outputs, raw, dir, self.warnings);
        let mut problems: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        let printed: Vec<String> = raw.keys().cloned().collect();
        let context = OutputsContext {
            source: self.stack.declarations(name),
            printed: &printed,
        };
        let expanded = match expand_outputs(name, params, &manifest.outputs, &decoded, context) {
            Ok(expanded) => expanded,
            Err(error) => {
                if let Some(fix) = error.hint() {
                    self.fixes.insert(name.to_string(), fix);
                }
                problems.push(error.to_string());
                decoded
                    .iter()
                    .map(|(output, value)| params::ExpandedOutput {
                        name: output.clone(),
                        value: Some(value.clone()),
                        kind: String::new(),
                        secret: false,
                    })
                    .collect()
            }
        };
        let captured = expanded
            .into_iter()
            .map(|output| {
                let declared = manifest.outputs.iter().find(|o| o.name == output.name);
                state::CapturedOutput {
                    component: name.to_string(),
                    component_origin: manifest.meta.origin.clone(),
                    component_kind: manifest.meta.kind.clone(),
                    name: output.name,
                    value: output.value.unwrap_or(Value::Null),
                    brief: declared.map(|d| d.brief.clone()).unwrap_or_default(),
                    kind: declared.map(|d| d.kind.clone()).unwrap_or_default(),
                }
            })
            .collect();
        (captured, problems)
    }

    fn undeployed(&mut self, name: &str) -> Step {
        self.known.undeployed(self.position(name), name);
        let provides = state::provides_for_state(&self.known.provides);
        if let Some(state) = self.state.as_mut() {
            state.provides = provides;
        }
        self.succeeded(name)
    }

    /// §6.15: `deployed`/`undeployed`, phase `success`, written.
    fn succeeded(&mut self, name: &str) -> Step {
        if self.verb == Verb::Deploy {
            self.record_fingerprint(name);
        }
        let now = self.clock.now();
        let status = match self.verb {
            Verb::Deploy => ComponentStatus::Deployed,
            Verb::Undeploy => ComponentStatus::Undeployed,
        };
        let positions = self.parallel().then_some(&self.positions);
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, status, "", &now);
            if let Some(op) = self.operation {
                record_phase(state, op, name, OperationStatus::Success, &now, positions);
            }
        }
        match self.save_component(name) {
            Ok(()) => Step::Done,
            Err(error) => Step::Fatal(error),
        }
    }

    /// §9.2: the component's entry says `error` with the reason; the
    /// operation log gets the reason and the (masked) output.
    fn fail(&mut self, name: &str, reason: &str, stdout: Option<&str>) -> Step {
        let now = self.clock.now();
        let mut log = format!("{name}: {reason}\n");
        if let Some(stdout) = stdout.filter(|s| !s.is_empty()) {
            log.push_str("--- stdout:\n");
            log.push_str(&self.masker.mask(stdout));
            if !log.ends_with('\n') {
                log.push('\n');
            }
        }
        let positions = self.parallel().then_some(&self.positions);
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, reason, &now);
            if let Some(op) = self.operation {
                record_phase(state, op, name, OperationStatus::Error, &now, positions);
                // Appended as the failures come (a checkpoint records only
                // what was appended); a parallel run puts them in the run's
                // order when it ends.
                state.append_log(op, &log, &now);
                if self.parallel {
                    let position = self.positions.get(name).copied().unwrap_or(usize::MAX);
                    self.failure_logs.insert(position, log);
                }
            }
        }
        if let Err(error) = self.save_component(name) {
            return Step::Fatal(error);
        }
        Step::Failed(reason.to_string())
    }

    fn interrupted(&mut self, name: &str, signal: i32) -> Step {
        let now = self.clock.now();
        let message = format!("interrupted by {}", super::interrupt::signal_name(signal));
        let positions = self.parallel().then_some(&self.positions);
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, &message, &now);
            if let Some(op) = self.operation {
                record_phase(state, op, name, OperationStatus::Error, &now, positions);
            }
        }
        Step::Interrupted(signal)
    }

    /// §4.3: the outputs a component sees when the run starts at it (one
    /// at a time: taken when it starts).
    fn preload(&mut self, name: &str) {
        if self.parallel() {
            // Taken when the run started: what a component sees must not
            // depend on which others happened to finish first.
            return;
        }
        if let Some(outputs) = self.preloaded_outputs(name) {
            let position = self.position(name);
            self.known.preload(name, position, outputs);
        }
    }

    fn preloaded_outputs(&mut self, name: &str) -> Option<Vec<state::CapturedOutput>> {
        let state = self.state.as_ref()?;
        let order = &self.plan.order;
        let mut outputs = match self.verb {
            Verb::Deploy => state.outputs_before(order, name).to_vec(),
            Verb::Undeploy => state.outputs_at(order, name).to_vec(),
        };
        state.merge_dependency_outputs(&mut outputs, self.plan.depends(name), self.warnings);
        Some(outputs)
    }

    /// A parallel run takes every preload when it starts.
    fn preload_all(&mut self) {
        if !self.parallel() {
            return;
        }
        let names: Vec<String> = self
            .plan
            .selected
            .iter()
            .filter(|n| self.plan.per_component || self.plan.offset.as_deref() == Some(n))
            .cloned()
            .collect();
        for name in names {
            if let Some(outputs) = self.preloaded_outputs(&name) {
                let position = self.position(&name);
                self.known.preload(&name, position, outputs);
            }
        }
    }

    // ---- what a component sees -------------------------------------------

    fn position(&self, name: &str) -> usize {
        self.positions.get(name).copied().unwrap_or(usize::MAX)
    }

    /// The positions of the components `name` runs after, directly or not:
    /// asked for only in a parallel run, and worked out once per component.
    fn upstream(&mut self, name: &str) -> Option<Rc<Bits>> {
        if !self.parallel {
            return None;
        }
        let plan = &self.plan;
        Some(self.ancestry.upstream(name, &|n| plan.after(n)))
    }

    /// The outputs a component is expanded with (see [`Known`]).
    fn visible_outputs(&mut self, name: &str) -> View {
        let upstream = self.upstream(name);
        self.known.visible(name, self.position(name), upstream)
    }

    /// Records a component's outputs and capabilities; returns the view of
    /// the outputs known right after it ran (its snapshot in the state).
    fn record_produced(
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
    fn unchanged(
        &mut self,
        name: &str,
        manifest: &Manifest,
        depends: &[String],
        dir: &Path,
        params: &[ExpandedParam],
        visible: &View,
    ) -> Option<Step> {
        // Without a state there is nothing to compare with or record in.
        if self.verb != Verb::Deploy || self.state.is_none() {
            return None;
        }
        let mut current = Fingerprint {
            folder: String::new(),
            parameters: fingerprint::parameters_digest(params),
            upstream: fingerprint::upstream_digests(
                depends,
                &self.known.of_components(visible, depends),
            ),
        };
        self.pending_fingerprints
            .insert(name.to_string(), current.clone());
        let entry = self.state.as_ref().and_then(|s| s.components.get(name));
        let replace = self.options.replace.iter().any(|r| r == name);
        let mut unreadable = None;
        let compare = || match fingerprint::folder_digest(dir) {
            Ok(folder) => {
                current.folder = folder;
                Ok(fingerprint::changes(entry, &current, params))
            }
            Err(error) => {
                unreadable = Some(error.to_string());
                Err(error.to_string())
            }
        };
        let decided = action::deploy_action(entry, self.options.changed, replace, false, compare);
        if let Some(error) = unreadable {
            self.warnings
                .warn(None, format!("component `{name}` runs: {error}"));
        }
        if decided.action != Action::NoOp {
            if self.options.why {
                let reasons = decided.reasons.join("; ");
                (self.host.log)(&format!("hub: {name} runs: {reasons}"));
            }
            return None;
        }
        if self.options.why {
            (self.host.log)(&format!(
                "hub: {name} unchanged: same folder, parameters and upstream outputs as at its last deploy"
            ));
        }
        let entry = self.state.as_ref().and_then(|s| s.components.get(name));
        let recorded = &mut self.recorded_outputs;
        let outputs: Vec<state::CapturedOutput> = entry
            .map(|e| {
                let found = recorded.remove(name);
                found.unwrap_or_else(|| e.captured_outputs.outputs_of(name))
            })
            .unwrap_or_default();
        self.pending_fingerprints.remove(name);
        self.mask_secret_outputs(&outputs);
        self.record_produced(name, outputs, manifest.provides.clone());
        Some(Step::Unchanged)
    }

    fn mask_secret_outputs(&mut self, outputs: &[state::CapturedOutput]) {
        for output in outputs
            .iter()
            .filter(|o| super::records::is_secret_output(o))
        {
            self.masker.add(&substitution_text(Some(&output.value)));
        }
    }

    /// The raw outputs whose values were masked as the component printed
    /// them (see [`SecretMasker::names_secret_output`]) stay masked in the
    /// later components' output, as printed (before any decoding).
    fn mask_secret_raw_outputs(&mut self, manifest: &Manifest, raw: &capture::RawOutputs) {
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
    fn component_masker(&self, manifest: &Manifest) -> SecretMasker {
        let mut masker = self.masker.clone();
        masker.add_secret_outputs(&manifest.outputs);
        masker
    }

    /// Records the fingerprint of a component that deployed: its folder
    /// as the deploy left it.
    fn record_fingerprint(&mut self, name: &str) {
        let Some(mut fingerprint) = self.pending_fingerprints.remove(name) else {
            return;
        };
        let folder = self
            .component_dir(name)
            .map_err(|e| e.to_string())
            .and_then(|dir| fingerprint::folder_digest(&dir).map_err(|e| e.to_string()));
        let Some(entry) = self.state.as_mut().map(|s| s.component_mut(name)) else {
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
        EngineError::Plan(plan::PlanError::BadTimeout {
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
}

/// Sets a component's phase; in a parallel run (`positions` given) the
/// phases follow the plan's order, not the timing.
/// Refuses a deploy whose parameters alone would write a state larger
/// than every command reads (see [`super::size`]).
fn check_state_size(stack: &Stack, plan: &Plan, locked: &Locked) -> Result<(), EngineError> {
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

fn plan_positions(plan: &Plan) -> HashMap<String, usize> {
    plan.selected
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect()
}

fn describe(implementation: &Implementation) -> String {
    format!("`{implementation}`")
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn or_none(text: &str) -> &str {
    if text.is_empty() {
        "nothing"
    } else {
        text
    }
}

/// A deploy's removed components ([`prune::removed`]): with `--prune`
/// each one that has something to undeploy must have its folder, checked
/// before anything runs; without it, a warning names them.
pub(crate) fn removed_components(
    stack: &Stack,
    verb: Verb,
    state: Option<&State>,
    options: &RunOptions,
    warnings: &mut Warnings,
) -> Result<Vec<prune::Removed>, EngineError> {
    let Some(state) = state.filter(|_| verb == Verb::Deploy) else {
        return Ok(Vec::new());
    };
    let removed = prune::removed(state, &|name| stack.reference(name).is_some());
    if options.prune {
        prune::check_folders(&removed)?;
    } else if let Some(warning) = prune::warning(&removed) {
        warnings.warn(None, warning);
    }
    Ok(removed)
}
