//! One component of a saved plan deployed as a job of a pipeline
//! (`hub deploy --plan PLAN -c NAME`), while other jobs of the same plan
//! deploy others on the same state; and the fold of what they recorded
//! (`hub run finish`). The records, the run and the leases are
//! [`hub_state::runs`]; this is the order of the steps:
//!
//! 1. the plan's run is opened (first job) or joined; another plan's run,
//!    or a run holding the state's lock, refuses the job;
//! 2. the job takes the lease of its component alone;
//! 3. a component this run already deployed is a no-op (unless
//!    `--replace`); every component it depends on that the plan runs must
//!    be recorded deployed by this run, else the job refuses, naming it;
//! 4. the engine deploys the component, as `hub deploy -c NAME` does, on a
//!    private working copy of the state: the state with what this run's
//!    jobs recorded applied, so the component reads their outputs;
//! 5. the job proves its lease and the run again (fencing) and records the
//!    component's entry, outputs and capabilities; a job that lost its
//!    lease records nothing.

use hub_manifest::diag::Warnings;
use hub_plan::order::edges;
use hub_plan::plan::saved::{PlanAction, SavedPlan};
use hub_plan::source::stack::Stack;
use hub_state::runs::{JobRecord, Lease, Opened, RunError, RunPlace, RunRecord, DEPLOYED, FAILED};
use hub_state::{Clock, State, StateError};
use std::path::{Path, PathBuf};

mod finish;

pub use finish::{finish, Finished};

#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    Run(#[from] RunError),
    #[error(transparent)]
    State(#[from] StateError),
    #[error(transparent)]
    Engine(#[from] Box<super::error::EngineError>),
    #[error("the plan `{plan}` has no component `{component}` (it has {known})")]
    NotInPlan {
        plan: String,
        component: String,
        known: String,
    },
    #[error("the plan `{plan}` undeploys `{component}` (`delete`): a job only deploys")]
    Deletes { plan: String, component: String },
    #[error("`{component}` depends on `{dependency}`, which this run of plan `{plan}` has not deployed: {why}")]
    Dependency {
        plan: String,
        component: String,
        dependency: String,
        why: String,
    },
    #[error("the state `{state}` has a plan with several locations; a pipeline's jobs write one")]
    Locations { state: String },
    #[error("cannot make the working copy of the state in `{}`: {source}", path.display())]
    Copy {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("jobs of the run still hold their component: {}", components.join(", "))]
    Busy { components: Vec<String> },
    #[error(
        "the run of plan `{plan}` is closed, incomplete: {}",
        incomplete_text(failed, never_ran)
    )]
    Incomplete {
        plan: String,
        failed: Vec<String>,
        never_ran: Vec<String>,
    },
}

/// `failed: a, b; never ran: c`.
fn incomplete_text(failed: &[String], never_ran: &[String]) -> String {
    let mut parts = Vec::new();
    if !failed.is_empty() {
        parts.push(format!("failed: {}", failed.join(", ")));
    }
    if !never_ran.is_empty() {
        parts.push(format!("never ran: {}", never_ran.join(", ")));
    }
    parts.join("; ")
}

impl JobError {
    pub fn hint(&self) -> Option<String> {
        match self {
            JobError::Run(e) => e.hint(),
            JobError::State(e) => e.hint(),
            JobError::Engine(e) => e.hint(),
            JobError::Dependency { dependency, plan, .. } => Some(format!(
                "run the job of `{dependency}` first (`hub deploy --plan {plan} -c {dependency}`): in the pipeline, this job needs it"
            )),
            JobError::NotInPlan { .. } => Some("a job deploys a component of the plan: check `-c` and the plan file".into()),
            JobError::Incomplete { plan, .. } => Some(format!(
                "the state records what the jobs deployed; make a new plan (`hub plan … --out {plan}`) and run its pipeline for the rest"
            )),
            JobError::Busy { .. } => Some("wait for those jobs to end (or cancel them: a cancelled job's lease is released, or expires), then run `hub run finish` again".into()),
            _ => None,
        }
    }

    pub fn exit_code(&self) -> i32 {
        match self {
            JobError::Run(e) => e.exit_code(),
            JobError::State(e) => e.exit_code(),
            JobError::Engine(e) => e.exit_code(),
            _ => 1,
        }
    }
}

/// What a job is given.
pub struct JobRequest<'a> {
    pub plan: &'a SavedPlan,
    /// The plan file as given, and its id ([`hub_state::runs::plan_id`]).
    pub plan_file: &'a Path,
    pub plan_id: String,
    pub component: &'a str,
    /// `--replace`: deploy again a component this run already deployed.
    pub replace: bool,
}

/// What a job does.
pub enum JobStart {
    /// This run deployed the component already: nothing to do.
    AlreadyDeployed(Box<JobRecord>),
    /// The plan does not run the component (`no-op`, `skip`).
    NotRun(PlanAction),
    /// Deploy it: with the engine, on [`Job::copy`].
    Run(Box<Job>),
}

/// A job that holds its component's lease.
pub struct Job {
    place: RunPlace,
    lease: Lease,
    plan_id: String,
    component: String,
    started: String,
    /// The folder of the working copy (removed when the job ends).
    folder: PathBuf,
    /// The working copy of the state the engine deploys on.
    pub copy: PathBuf,
}

/// The one state location of a plan.
pub fn state_of(plan: &SavedPlan) -> Result<PathBuf, JobError> {
    match plan.state.locations.as_slice() {
        [one] => Ok(PathBuf::from(one)),
        _ => Err(JobError::Locations {
            state: plan.state.locations.join(","),
        }),
    }
}

/// `user on host`.
fn who() -> String {
    format!(
        "{} on {}",
        hub_state::lock::user_name(),
        hub_state::lock::hostname()
    )
}

/// Steps 1 to 4 of a job: see the module's documentation.
/// What reading the state warns about goes to `warnings` (the engine
/// reads the working copy, written again).
pub fn start(
    stack: &Stack,
    request: &JobRequest<'_>,
    clock: &Clock,
    warnings: &mut Warnings,
) -> Result<JobStart, JobError> {
    let name = request.component;
    let actions = |n: &str| {
        request
            .plan
            .components
            .iter()
            .find(|c| c.name == n)
            .map(|c| c.action)
    };
    let action = job_action(request, actions(name))?;
    let state = state_of(request.plan)?;
    let place = join_run(request, &state, clock)?;
    let lease = Lease::take(&place, name, clock)?;
    if let Some(done) = place
        .read_job(name)?
        .filter(|r| r.deployed() && r.plan == request.plan_id)
    {
        if !request.replace {
            return Ok(JobStart::AlreadyDeployed(Box::new(done)));
        }
    }
    if !action.runs() {
        return Ok(JobStart::NotRun(action));
    }
    let ancestors = check_dependencies(stack, request, &place, actions)?;
    lease.prove()?;
    place.still_open(&request.plan_id)?;
    let folder = std::env::temp_dir().join(format!(".hub-job-{}", hub_state::random_uuid()));
    hub_state::private::create_folder(&folder).map_err(|source| JobError::Copy {
        path: folder.clone(),
        source,
    })?;
    let copy = folder.join("state");
    let mut working = working_state(&state, &place, &request.plan_id, &ancestors, warnings)?;
    hub_state::write(&copy, &mut working, &hub_state::WriteOptions::default())?;
    Ok(JobStart::Run(Box::new(Job {
        place,
        lease,
        plan_id: request.plan_id.clone(),
        component: name.to_string(),
        started: clock.now(),
        folder,
        copy,
    })))
}

/// What the plan does with the job's component: one it lists and does
/// not delete (a pipeline's undeploy jobs are not jobs of a plan).
fn job_action(
    request: &JobRequest<'_>,
    action: Option<PlanAction>,
) -> Result<PlanAction, JobError> {
    let plan_text = request.plan_file.display().to_string();
    let name = request.component;
    let Some(action) = action else {
        let known: Vec<String> = request
            .plan
            .components
            .iter()
            .map(|c| format!("`{}`", c.name))
            .collect();
        return Err(JobError::NotInPlan {
            plan: plan_text,
            component: name.to_string(),
            known: known.join(", "),
        });
    };
    if action == PlanAction::Delete {
        return Err(JobError::Deletes {
            plan: plan_text,
            component: name.to_string(),
        });
    }
    Ok(action)
}

/// Opens the plan's run on `state` (first job) or joins it; a plain run
/// holding the state's lock refuses the job (and a run it opened just now
/// is closed again).
fn join_run(request: &JobRequest<'_>, state: &Path, clock: &Clock) -> Result<RunPlace, JobError> {
    let place = RunPlace::of(state)?;
    let record = RunRecord {
        plan: request.plan_id.clone(),
        plan_file: request.plan_file.display().to_string(),
        stack: request.plan.stack.name.clone(),
        started: clock.now(),
        by: who(),
        closing: false,
    };
    let opened = place.open(&record)?;
    if let Err(held) = hub_state::lock::await_unheld(
        std::slice::from_ref(&state.to_path_buf()),
        &Default::default(),
    ) {
        if opened == Opened::Created {
            let _ = place.close();
        }
        return Err(held.into());
    }
    Ok(place)
}

/// Every component `request.component` runs after that the plan runs
/// is recorded deployed by this run. Returns every component it runs
/// after, directly or not, in the stack's order.
fn check_dependencies(
    stack: &Stack,
    request: &JobRequest<'_>,
    place: &RunPlace,
    actions: impl Fn(&str) -> Option<PlanAction>,
) -> Result<Vec<String>, JobError> {
    let order = stack
        .validated_order()
        .map_err(|e| Box::new(super::error::EngineError::from(e)))?;
    let elaborated = &stack.elaborated;
    let written =
        !elaborated.stack.lifecycle.order.is_empty() && !elaborated.provenance.order_derived;
    let edges = edges::upstream(elaborated, &order, written);
    let Some(upstream) = edges.get(request.component) else {
        return Ok(Vec::new());
    };
    for dependency in &upstream.names {
        if !actions(dependency).is_some_and(PlanAction::runs) {
            continue;
        }
        let recorded = place
            .read_job(dependency)?
            .filter(|r| r.plan == request.plan_id);
        let why = match recorded {
            Some(r) if r.deployed() => continue,
            Some(r) => format!("its job failed ({})", r.message),
            None => "its job has not recorded it (not run yet, still running, or stopped)".into(),
        };
        return Err(JobError::Dependency {
            plan: request.plan_file.display().to_string(),
            component: request.component.to_string(),
            dependency: dependency.clone(),
            why,
        });
    }
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let mut next: Vec<&str> = upstream.names.iter().map(String::as_str).collect();
    while let Some(name) = next.pop() {
        if seen.insert(name) {
            let further = edges
                .get(name)
                .map(|u| u.names.as_slice())
                .unwrap_or_default();
            next.extend(further.iter().map(String::as_str));
        }
    }
    Ok(order
        .iter()
        .filter(|n| seen.contains(n.as_str()))
        .cloned()
        .collect())
}

/// What the component's job sees: the state, with what this run's jobs
/// recorded deployed of the components it runs after (`ancestors`)
/// applied; not its siblings', whose jobs may or may not have ended, so
/// that what it sees does not depend on timing (as in `hub deploy -j`).
fn working_state(
    state: &Path,
    place: &RunPlace,
    plan: &str,
    ancestors: &[String],
    warnings: &mut Warnings,
) -> Result<State, JobError> {
    let mut working = hub_state::read(state, warnings)?.unwrap_or_else(|| State {
        version: 1,
        kind: "state".into(),
        ..State::default()
    });
    for name in ancestors {
        if let Some(record) = place.read_job(name)? {
            if record.plan == plan && record.deployed() {
                record.apply(&mut working);
            }
        }
    }
    Ok(working)
}

impl Job {
    /// Step 5: records what the engine left of the component in the
    /// working copy, once the lease and the run are proven still this
    /// job's. `failure`: why the engine's run failed.
    pub fn record(self, failure: Option<String>, clock: &Clock) -> Result<JobRecord, JobError> {
        let result = self.record_inner(failure, clock);
        let _ = std::fs::remove_dir_all(&self.folder);
        let recorded = result?;
        self.lease.release()?;
        Ok(recorded)
    }

    fn record_inner(&self, failure: Option<String>, clock: &Clock) -> Result<JobRecord, JobError> {
        // The copy is this job's own, written at its start from the state
        // (whose warnings [`start`] reported) and by the engine's run.
        let mut warnings = Warnings::already_reported();
        let working = hub_state::read(&self.copy, &mut warnings)?.unwrap_or_default();
        let mut record = JobRecord::from_state(&working, &self.component);
        let deployed = failure.is_none() && record.entry.status == DEPLOYED;
        record.plan = self.plan_id.clone();
        record.status = if deployed { DEPLOYED } else { FAILED }.into();
        record.message = match (failure, deployed) {
            (_, true) => String::new(),
            (Some(why), false) => why,
            (None, false) => format!("it ended `{}`", record.entry.status),
        };
        record.started = self.started.clone();
        record.finished = clock.now();
        record.by = who();
        record.stack_parameters = working.stack_parameters.clone();
        record.meta = working.meta.clone();
        record.order = working.lifecycle.order.clone();
        // Fencing: a job that lost its lease, or whose run was closed or
        // replaced, writes nothing.
        self.lease.prove()?;
        self.place.still_open(&self.plan_id)?;
        self.place.write_job(&record)?;
        Ok(record)
    }

    /// The component's log in the working copy's log folder.
    pub fn log(&self) -> PathBuf {
        self.folder
            .join("state.logs")
            .join(format!("{}.log", self.component))
    }
}
