//! The parts of a run: what it set up before the first component
//! ([`Setup`]), the state it writes ([`Ledger`]) and its live progress
//! ([`Tally`]).

use crate::run::retry::Attempts;
use hub_params::Locked;
use hub_plan::decide::retry::Retries;
use hub_plan::order::Schedule;
use hub_plan::outcome::log_marks::RunMarks;
use hub_plan::plan::Plan as ActionPlan;
use hub_plan::source::discover::Implementation;
use hub_plan::timeout::Timeouts;
use hub_state::{self as state, Fingerprint, Locations, OperationIndex, State};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// What the run prepared before its first component: the schedule, the
/// plan, the locked parameters and what each component runs with.
pub(super) struct Setup {
    /// The ordering: selection, order, waves.
    pub(super) plan: Schedule,
    /// The action plan, made once under the lock (or checked against a
    /// saved one): what the run does with each component.
    pub(super) planned: Arc<ActionPlan>,
    pub(super) locked: Locked,
    /// How long each component may run.
    pub(super) timeouts: Timeouts,
    /// `lifecycle.retry`, read.
    pub(super) retries: Retries,
    /// Positions in the selection.
    pub(super) positions: HashMap<String, usize>,
    pub(super) base_env: Vec<(String, String)>,
    /// `-j` above 1.
    pub(super) parallel: bool,
    /// The components the state read at the start records as deployed
    /// (their outputs are those of a successful deploy).
    pub(super) deployed_before: Vec<String>,
    /// `--changed`: each component's outputs in its entry's snapshot as
    /// read, taken when the run started.
    pub(super) recorded_outputs: HashMap<String, Vec<state::CapturedOutput>>,
    /// What implements the run's verb, by component, as found before the
    /// run; looked for again after a component's templates are rendered.
    pub(super) implementations: HashMap<String, Implementation>,
    /// Deploy: the components the state holds and the stack no longer
    /// lists, in the order `--prune` undeploys them.
    pub(super) removed: Vec<hub_plan::decide::prune::Removed>,
    /// `deploy --plan`: the state moved since the plan (see
    /// `since_plan`); `None` when it did not.
    pub(super) since_plan: Option<super::moved_state::SincePlan>,
}

/// The state being written, where it is written, and what is not written
/// yet.
pub(super) struct Ledger {
    /// The state being written; `None` without one.
    pub(super) state: Option<State>,
    /// The state locations, locked for the whole run; `None` without a
    /// state.
    pub(super) locations: Option<Locations>,
    /// `STATE.logs` of the first location, beside its real file.
    pub(super) log_folder: Option<PathBuf>,
    /// The marks of this run's part of each log, made at the first one.
    pub(super) log_marks: OnceLock<Arc<RunMarks>>,
    /// The location the state was read from (or would have been).
    pub(super) read_path: Option<PathBuf>,
    /// The serial of the state read at the start, when one was read.
    pub(super) read_serial: Option<u64>,
    pub(super) operation: Option<OperationIndex>,
    /// Writes the state to every location (created at the first write);
    /// the locks are held for the whole run, so it alone changes the files.
    pub(super) writer: Option<state::StateWriter>,
    /// Parallel runs: checkpoints recorded but not written yet.
    /// Components whose checkpoint is not written yet (a parallel run
    /// writes those of the components that start together at once).
    pub(super) unsaved_checkpoints: Vec<String>,
    /// What the components of the last checkpoints wait for before they
    /// start (see [`state::Flush`]), until they are handed out.
    pub(super) flush: Option<state::Flush>,
    /// Nothing written yet and nothing to write (see [`super::quiet`]).
    pub(super) quiet: bool,
}

/// How far the run got: what failed, was skipped or cancelled, and what
/// each running component carries until it ends.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) failed: Vec<String>,
    pub(super) skipped: Vec<String>,
    /// Parallel runs: not run because a component they wait for failed.
    pub(super) cancelled: Vec<String>,
    /// Mandatory components that failed, with the reason.
    pub(super) mandatory_failures: Vec<(String, String)>,
    /// Components a hook failed: they fail the run even when optional.
    pub(super) hook_failures: Vec<String>,
    /// The fix for a failure, where the reason alone does not tell it.
    pub(super) fixes: HashMap<String, String>,
    /// The components that could run more than once, and how many times
    /// they did.
    pub(super) attempts: HashMap<String, Attempts>,
    /// When each running component started (the clock's text).
    pub(super) started_at: HashMap<String, String>,
    /// Parallel runs: each failed component's part of the operation's log,
    /// by position.
    pub(super) failure_logs: BTreeMap<usize, String>,
    /// The run stopped early (failure or interrupt).
    pub(super) stopped: bool,
    /// The fingerprint of a running component, without its folder.
    pub(super) pending_fingerprints: HashMap<String, Fingerprint>,
    /// The folder digests the components' threads computed, to record
    /// with their fingerprints when they succeed.
    pub(super) folder_digests: HashMap<String, Result<String, String>>,
    /// The start lines of components the plan leaves unchanged
    /// (`--changed`), said only if they run after all.
    pub(super) quiet_starts: HashMap<String, String>,
}
