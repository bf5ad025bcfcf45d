//! `hub run finish`: the fold of what a plan's jobs recorded into the
//! state, under the state's own lock (one writer, a write conditional on
//! the version read), then the run closed and its summary. A record never
//! replaces an entry another run wrote after the plan was made: the state
//! moved since the plan, and the entry is newer than the plan; that
//! component is reported failed, not recorded.

use super::{JobError, RunError, RunPlace};
use hub_plan::outcome::{Entry, Outcome, Summary};
use hub_plan::plan::saved::{PlanAction, PlannedComponent, SavedPlan};
use hub_state::runs::{JobRecord, RunRecord};
use hub_state::{Clock, Locations, Operation, Phase, State, StateWriter, WriteOptions};
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

/// What `hub run finish` did.
pub struct Finished {
    pub summary: Summary,
    /// The components whose job failed, and those the plan runs that no
    /// job recorded.
    pub failed: Vec<String>,
    pub never_ran: Vec<String>,
}

/// Folds the jobs' records of the run of `plan` on `state` into it,
/// closes the run and says what happened to each component.
pub fn finish(
    plan: &SavedPlan,
    plan_file: &Path,
    plan_id: &str,
    state: &Path,
    clock: &Clock,
    warnings: &mut hub_manifest::diag::Warnings,
) -> Result<Finished, JobError> {
    let place = RunPlace::of(state)?;
    let run = open_run(&place, plan_id, plan_file)?;
    // No job starts or records once the run is marked closing; a job that
    // took its lease before the mark holds it still, and finishing waits.
    place.set_closing(&run, true)?;
    let busy = hub_state::runs::busy(&place)?;
    if !busy.is_empty() {
        place.set_closing(&run, false)?;
        return Err(JobError::Busy { components: busy });
    }
    let records: HashMap<String, JobRecord> = place
        .jobs()?
        .into_iter()
        .filter(|r| r.plan == plan_id)
        .map(|r| (r.component.clone(), r))
        .collect();
    let locked = Locations::lock(
        std::slice::from_ref(&state.to_path_buf()),
        "finish",
        clock,
        warnings,
    )?;
    let read_path = locked.to_read().map(Path::to_path_buf);
    let mut folded = match &read_path {
        Some(path) => hub_state::read(path, warnings)?,
        None => None,
    }
    .unwrap_or_else(|| State {
        version: 1,
        kind: "state".into(),
        ..State::default()
    });
    let read_serial = folded.serial;
    let moved = moved_since(plan, read_path.is_some().then_some(&folded));
    let fold = fold(plan, &records, &mut folded, moved);
    let now = clock.now();
    folded.operations.push(operation(
        &run,
        &fold.entries,
        fold.failed.is_empty() && fold.never_ran.is_empty(),
        &now,
    ));
    let order = folded.lifecycle.order.clone();
    let (status, message) = hub_state::stack_status(&folded, &order, &|_| false, &[]);
    folded.set_status(status, &message, &now);
    let read = read_path.as_deref().map(|path| (path, read_serial));
    let mut writer = StateWriter::open_locked(&locked, WriteOptions::default(), read)?;
    writer.write(&mut folded)?;
    for failure in writer.take_failures() {
        warnings.warn(None, failure.to_string());
    }
    place.close()?;
    drop(locked);
    let summary = Summary {
        verb: hub_plan::Verb::Deploy,
        entries: fold.entries,
        stack_status: folded.status.clone(),
        stack_components: order.len(),
        outputs: Vec::new(),
        total: between(&run.started, &now),
        started: run.started.clone(),
        ended: now,
        // The jobs' runs each recorded an operation of their own.
        operation: String::new(),
        failed_logs: Vec::new(),
        state_notes: Vec::new(),
    };
    Ok(Finished {
        summary,
        failed: fold.failed,
        never_ran: fold.never_ran,
    })
}

/// The run of the plan `plan_id` on the state, open (a finish that
/// stopped half-way is run again); another plan's run, or none, refuses.
fn open_run(place: &RunPlace, plan_id: &str, plan_file: &Path) -> Result<RunRecord, JobError> {
    match place.read_run()? {
        Some(run) if run.plan == plan_id => Ok(RunRecord {
            closing: false,
            ..run
        }),
        Some(other) => Err(RunError::OtherRun {
            state: place.state_text(),
            run: Box::new(other),
        }
        .into()),
        None => Err(RunError::NotOpen {
            state: place.state_text(),
            plan: plan_file.display().to_string(),
        }
        .into()),
    }
}

/// What the fold found of each component the plan lists.
struct Fold {
    entries: Vec<Entry>,
    failed: Vec<String>,
    never_ran: Vec<String>,
}

/// Applies the jobs' records to `folded`, each unless the state's entry
/// is newer than the plan (`moved`: the state was written since).
fn fold(
    plan: &SavedPlan,
    records: &HashMap<String, JobRecord>,
    folded: &mut State,
    moved: bool,
) -> Fold {
    let mut fold = Fold {
        entries: Vec::new(),
        failed: Vec::new(),
        never_ran: Vec::new(),
    };
    for planned in &plan.components {
        if planned.action == PlanAction::Delete {
            continue;
        }
        let name = &planned.name;
        let recorded = records.get(name);
        let newer = moved.then(|| newer_entry(plan, folded, name)).flatten();
        if let (Some(record), None) = (recorded, &newer) {
            record.apply(folded);
        }
        let outcome = fold.outcome(plan, planned, recorded, newer);
        fold.entries.push(entry(name, outcome, recorded));
    }
    fold
}

impl Fold {
    /// How one component of the plan ended, from its job's record.
    fn outcome(
        &mut self,
        plan: &SavedPlan,
        planned: &PlannedComponent,
        recorded: Option<&JobRecord>,
        newer: Option<String>,
    ) -> Outcome {
        let name = &planned.name;
        match (recorded, planned.action.runs()) {
            (Some(_), _) if newer.is_some() => {
                self.failed.push(name.clone());
                let written = newer.unwrap_or_default();
                Outcome::Failed(format!(
                    "not recorded: the state's entry of `{name}` was written at {written}, after the plan (made at {}), by another run",
                    plan.created
                ))
            }
            (Some(r), _) if r.deployed() => Outcome::Deployed,
            (Some(r), _) => {
                self.failed.push(name.clone());
                Outcome::Failed(r.message.clone())
            }
            (None, true) => {
                self.never_ran.push(name.clone());
                Outcome::NotRun(Some("its pipeline job recorded no run".into()))
            }
            (None, false) if planned.action == PlanAction::NoOp => Outcome::Unchanged,
            (None, false) => Outcome::Skipped(format!("`{}` in the plan", planned.action.as_str())),
        }
    }
}

/// The state was written since the plan was made (another lineage, or
/// another serial): the jobs' runs did not write it, something else did.
fn moved_since(plan: &SavedPlan, state: Option<&State>) -> bool {
    let now = state.map(|s| (s.lineage.as_str(), s.serial));
    let planned = plan.state.lineage.as_deref().zip(plan.state.serial);
    now != planned
}

/// When the state's entry of `name` was written after the plan was made:
/// the time it was written (a job's record must not replace it).
fn newer_entry(plan: &SavedPlan, state: &State, name: &str) -> Option<String> {
    let entry = state.components.get(name)?;
    let at = |text: &str| hub_state::rfc3339_to_unix(text);
    match (at(&entry.timestamp), at(&plan.created)) {
        (Some(written), Some(made)) if written > made => Some(entry.timestamp.clone()),
        _ => None,
    }
}

/// The run in the state's operation log, as a deploy records itself:
/// the command that closed it, who, and each component's phase.
fn operation(run: &RunRecord, entries: &[Entry], succeeded: bool, now: &str) -> Operation {
    let status = |ok: bool| {
        hub_state::Recorded::Known(if ok {
            hub_state::OperationStatus::Success
        } else {
            hub_state::OperationStatus::Error
        })
    };
    let args = hub_manifest::redact::recorded_args(std::env::args())
        .into_iter()
        .map(yaml_serde::Value::String)
        .collect();
    Operation {
        id: hub_state::operation_id(&|name| std::env::var(name).ok()),
        operation: "deploy".into(),
        timestamp: now.to_string(),
        status: status(succeeded),
        options: [("args".to_string(), yaml_serde::Value::Sequence(args))]
            .into_iter()
            .collect(),
        description: format!("pipeline run of plan `{}` (id {})", run.plan_file, run.plan),
        initiator: std::env::var("USER").unwrap_or_default(),
        logs: String::new(),
        phases: entries
            .iter()
            .filter_map(|e| match &e.outcome {
                Outcome::Deployed => Some((e, true)),
                Outcome::Failed(_) => Some((e, false)),
                _ => None,
            })
            .map(|(e, ok)| Phase {
                phase: e.component.clone(),
                status: status(ok),
            })
            .collect(),
    }
}

fn entry(name: &str, outcome: Outcome, record: Option<&JobRecord>) -> Entry {
    let (started, ended) = record.map_or((String::new(), String::new()), |r| {
        (r.started.clone(), r.finished.clone())
    });
    Entry {
        component: name.to_string(),
        outcome,
        duration: between(&started, &ended),
        outputs: record.map_or_else(Vec::new, |r| {
            r.captured_outputs.iter().map(|o| o.name.clone()).collect()
        }),
        started,
        ended,
        attempt: None,
    }
}

/// The time from `start` to `end` (RFC 3339); zero when either is not a
/// time.
fn between(start: &str, end: &str) -> Duration {
    let at = |text: &str| {
        hub_state::rfc3339_to_unix(text).map(|(s, n)| Duration::new(s.max(0) as u64, n))
    };
    match (at(start), at(end)) {
        (Some(a), Some(b)) => b.saturating_sub(a),
        _ => Duration::ZERO,
    }
}
