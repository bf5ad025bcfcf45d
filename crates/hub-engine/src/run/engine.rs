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
//! the start, with those of the components it waits for ([`hub_plan::decide::known`]).
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
use super::hooks;
use crate::child::process::Invocation;
use hub_manifest::diag::Warnings;
use hub_manifest::redact::SecretMasker;
use hub_manifest::Manifest;
use hub_params::ExpandedParam;
use hub_plan::decide::digest_cache::DigestCache;
use hub_plan::decide::known::Known;
use hub_plan::decide::upstream::Ancestry;
use hub_plan::error::PlanningError;
use hub_plan::outcome::log_marks::RunMarks;
use hub_plan::outcome::Summary;
use hub_plan::plan::Plan as ActionPlan;
use hub_plan::source::stack::Stack;
use hub_plan::timeout::Limit;
use hub_plan::Verb;
use hub_state::{self as state, Clock, OperationStatus, State};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use yaml_serde::Value;

pub(crate) use crate::options::Host;
use hub_plan::options::RunOptions;

mod changed;
mod component;
mod ended;
mod execute;
mod failed_upstream;
mod moved_state;
mod parts;
mod prepare;
mod quiet;
mod reads_checked;
mod replace;
mod replanned;
mod since_plan;
mod turns;
mod words;
use parts::{Ledger, Setup, Tally};

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
    let result = result.map_err(|error| {
        keep_unsaved_state(error, run.ledger.state.as_ref(), options, run.warnings)
    });
    if let Some(writer) = &run.ledger.writer {
        run.summary.state_notes = writer.previous_versions();
    }
    run.summary.total = started.elapsed();
    run.summary.ended = run.clock.now();
    run.show_warnings();
    Finished {
        summary: Some(run.summary),
        result,
        warnings_shown: run.warnings_shown,
        plan: Some(run.setup.planned.clone()),
    }
}

/// A remote state that could not be written, or a state this run lost to
/// another run: the run's state goes to a local `.errored` file, and the
/// error says whether uploading it is safe.
fn keep_unsaved_state(
    error: EngineError,
    state: Option<&State>,
    options: &RunOptions,
    warnings: &mut Warnings,
) -> EngineError {
    let EngineError::Planning(PlanningError::State(
        cause @ (state::StateError::RemoteAccess { .. } | state::StateError::RemoteConflict { .. }),
    )) = error
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
        return EngineError::Planning(PlanningError::State(cause));
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
    let taken = lost_at.map(|_| taken_by_another_run(path, state, warnings));
    match state::remote::errored::save(&folder, &basename, state) {
        Ok(file) => EngineError::Planning(PlanningError::State(state::StateError::RemoteSaved {
            error: Box::new(cause),
            location,
            file,
            taken,
        })),
        Err(_) => EngineError::Planning(PlanningError::State(cause)),
    }
}

/// `path` (as given to the run) is the location an error names.
fn names_location(path: &Path, named: &str) -> bool {
    path.display().to_string() == named
        || state::remote::RemoteLocation::of_path(path).is_ok_and(|r| r.to_string() == named)
}

/// How the run's `state` differs from the one another run left at `path`.
fn taken_by_another_run(path: &Path, state: &State, warnings: &mut Warnings) -> state::Taken {
    match state::read(path, warnings) {
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
    /// Anything, in the run's last write.
    Last,
    /// This component's entry, and those of the unsaved checkpoints.
    Component(&'a str),
    /// The entries of the unsaved checkpoints.
    Checkpoints,
}

/// A run: what it runs with (the stack, the options, the host), what it
/// set up before the first component ([`Setup`]), the state it writes
/// ([`Ledger`]) and how far it got ([`Tally`]).
struct Run<'a> {
    stack: &'a Stack,
    options: &'a RunOptions,
    verb: Verb,
    host: Host<'a>,
    warnings: &'a mut Warnings,
    /// How many of `warnings` (the first ones) were printed.
    warnings_shown: usize,
    clock: Clock,
    /// What was prepared before the first component.
    setup: Setup,
    /// The state, where it is written, and what is not written yet.
    ledger: Ledger,
    /// The live progress of the run.
    tally: Tally,
    /// The outputs and capabilities known, and what each component sees.
    known: Known,
    /// Parallel runs: each component's upstream, once worked out.
    ancestry: Ancestry,
    masker: SecretMasker,
    summary: Summary,
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
    /// The run's marks of the logs: the job marks its log file on its
    /// thread, before its hooks and process write to it.
    log_marks: Option<Arc<RunMarks>>,
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
    retry: Option<hub_plan::decide::retry::Policy>,
    /// How many times it ran (set by its thread).
    attempts: super::retry::Attempts,
    /// The folder whose digest the component's fingerprint records, with
    /// the digest cache: hashed on the component's thread once its process
    /// (and hooks) ended, not on the run's thread (`None`: no fingerprint).
    fingerprint_folder: Option<(PathBuf, Option<Arc<DigestCache>>)>,
    /// That digest (set by its thread).
    folder_digest: Option<Result<String, String>>,
}

/// A component's thread ended: its process, or its wait for readiness.
struct Ended<'a> {
    name: String,
    result: JobResult<'a>,
}

enum JobResult<'a> {
    Process(Box<Job<'a>>, hooks::Around),
    /// Its checkpoint could not be flushed: its process did not start.
    NotStarted(state::StateError),
    Ready(Result<(), String>),
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

/// What a component's start changes in the state, kept to be put back
/// when that start could not be recorded (a full disk): the component
/// never ran, and the state must say so.
struct StartUndo {
    entry: Option<state::ComponentState>,
    status: state::Recorded<state::StackStatus>,
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

/// Sets a component's phase; in a parallel run (`positions` given) the
/// phases follow the plan's order, not the timing.
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
