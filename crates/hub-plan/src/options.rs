//! What a run is asked to do ([`RunOptions`]): plain data shared by the
//! planner, the engine and the commands. What a run gets from the process
//! it runs in (`Host`) is the engine's.

use crate::env::OsEnvironment;
use crate::order::schedule::{Selection, Verb};
use crate::plan::Plan;
use hub_state::{self as state, State};
use indexmap::IndexMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What the command line asked for: what planning reads (and the run
/// too), with what only the run reads in [`RunningOptions`].
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
    /// Undeploy: skip trailing components without a state entry.
    pub guess: bool,
    /// Show secrets in output instead of masking them.
    pub reveal: bool,
    /// How many components may run at once.
    pub concurrency: usize,
    /// `--changed`, `--replace`, `--prune`: which components run beyond
    /// what the selection names.
    pub scope: RunScope,
    /// Run the `deploy-test`/`undeploy-test` implementations; the state is
    /// read but never written.
    pub dry: bool,
    /// The digests of unchanged files kept beside the state, which every
    /// fingerprint of the run and of its plan reuses (see
    /// [`crate::decide::digest_cache`]); `None` reads every file. The
    /// command opens it and saves it after the run.
    pub digest_cache: Option<Arc<crate::decide::digest_cache::DigestCache>>,
    /// `--plan-steps`: `hub plan` runs each component's plan step and
    /// plans the components after it with the outputs it plans (see
    /// [`crate::plan::planned`]); the run itself never does.
    pub plan_steps: bool,
    /// The plan is saved (`plan --out`, a change's plan): it digests each
    /// component's state entry (see [`crate::plan::saved::entry_digest`]);
    /// a plan only shown does not spend the time.
    pub entry_digests: bool,
    /// The plan is read only for the text of its changes (`hub plan`'s
    /// text without `--verbose`, `--report`, `--out`, `--change` or
    /// policies): of a component that changes nothing a reviewer reads
    /// past its action line (see [`crate::plan::ComponentPlan::changes`])
    /// the walk keeps only how many parameters it has, not the parameters
    /// themselves (the Terraform binary's kept for the preflight).
    pub changes_only: bool,
    /// What only the run reads.
    pub running: RunningOptions,
}

/// What the user asked to skip, force or remove beyond the selection:
/// the flags that change which of the selected components run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunScope {
    /// `--changed`: skip components whose fingerprint is unchanged.
    pub changed: bool,
    /// `--replace`: components that run even where `--changed` would skip
    /// them.
    pub replace: Vec<String>,
    /// `--prune`: after the deploy, undeploy the components the state
    /// holds and the stack no longer lists, and forget them.
    pub prune: bool,
}

/// What only a run reads (the planner never does): how it writes the
/// state, what it says, when it stops, how long it waits, and the plan it
/// executes.
#[derive(Debug, Clone, Default)]
pub struct RunningOptions {
    /// `--compressed`, `--state-format` and `--encrypted`: the form the
    /// state is written in, and whether its remote copies are sealed.
    pub write: state::WriteOptions,
    /// The full command line, recorded in the operation.
    pub args: Vec<String>,
    /// `--why`: say why each component runs or is skipped.
    pub why: bool,
    /// `--fail-fast`: after a mandatory failure nothing more starts;
    /// without it every component that does not depend on it still runs.
    pub fail_fast: bool,
    /// `--lock-timeout`: how long to wait for a lock another run holds
    /// (`hub plan` waits as long for a run to end).
    pub lock_timeout: Duration,
    /// `--timeout`: how long a component may run, unless the stack's
    /// `lifecycle.timeouts` says otherwise.
    pub timeout: Option<Duration>,
    /// `deploy --plan`: the state the plan was checked against, checked
    /// again under the lock (another run may write it in between).
    pub expected_state: Option<ExpectedState>,
    /// `deploy --plan`: the plan made again from the saved plan's inputs
    /// and found to be the saved one; the engine executes it (once the
    /// state is found unchanged under the lock) instead of making one.
    pub planned: Option<Arc<Plan>>,
    /// `deploy --replan`: a component of the plan planned again during
    /// the deploy (deferred, or an output it reads changed) that differs
    /// from the plan runs if the policies pass, instead of being refused.
    pub replan: bool,
    /// A pipeline job (`deploy --plan PLAN -c NAME --job`): the saved plan
    /// made again, every component of it, against which the job's
    /// component is checked just before it starts (what it read, whether
    /// it was deferred) as `deploy --plan` checks each one with `planned`.
    pub reviewed: Option<Arc<Plan>>,
    /// `deploy --plan`: the saved plan as reviewed. When the state moved
    /// since it (same lineage, another serial, read under the run's
    /// lock), its per-component entry digests decide which components
    /// another run wrote (refused), and its parameters and `reads` what
    /// the others are checked against just before they start.
    pub saved: Option<Arc<crate::plan::saved::format::SavedPlan>>,
    /// `--report`: the plan's parameters are read after the run (the
    /// HTML report shows those that change). Without it, a run drops the
    /// parameters of a plan it made once the plan is checked: nothing of
    /// the run reads them.
    pub report_plan: bool,
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

    /// The serial the plan read, when `loaded` is the same state (its
    /// lineage) at another serial: another run wrote it since.
    pub fn moved_serial(&self, loaded: Option<&State>) -> Option<u64> {
        let loaded = loaded?;
        let serial = self.serial?;
        (self.lineage.as_deref() == Some(loaded.lineage.as_str()) && loaded.serial != serial)
            .then_some(serial)
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
