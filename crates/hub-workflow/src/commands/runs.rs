//! `hub deploy --plan PLAN -c NAME` as one job of a pipeline, and
//! `hub run finish`: the run of a saved plan deployed by many writers
//! (see `hub_engine::run::job`).

use super::common::{clock, split_list};
use crate::error::Error;
use hub_engine::run::job::{self, JobRequest, JobStart};
use hub_manifest::diag::Warnings;
use hub_plan::plan::saved::{self, SavedPlanError};
use std::path::{Path, PathBuf};

/// `hub run …`.
pub fn run(args: crate::request::RunCommandArgs, warnings: &mut Warnings) -> Result<(), Error> {
    match args.command {
        crate::request::RunCommand::Finish(args) => finish(args, warnings),
    }
}

fn say(line: &str) {
    hub_manifest::console::err_line(line);
}

/// The plan at `path` and its id.
fn read_plan(path: &Path) -> Result<(saved::SavedPlan, String), Error> {
    let planned = saved::read(path)?;
    let bytes = std::fs::read(path).map_err(|source| SavedPlanError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((planned, hub_state::runs::plan_id(&bytes)))
}

/// Plans and deploys that are not a job refuse a state held by the run of
/// a plan, naming the command that closes it.
pub fn refuse_open_runs(states: &[String]) -> Result<(), Error> {
    for state in states {
        hub_state::runs::RunPlace::of(Path::new(state))?.refuse_open()?;
    }
    Ok(())
}

/// [`refuse_open_runs`] for `-s LIST` (nothing with `-n`).
pub fn refuse_open_runs_of(state: &crate::request::StateArgs) -> Result<(), Error> {
    if state.no_state {
        return Ok(());
    }
    refuse_open_runs(&split_list(std::slice::from_ref(&state.state)))
}

/// A job's component, its plan and the plan's id, from
/// `hub deploy --plan PLAN -c NAME`.
pub fn job_of(
    args: &crate::request::DeployArgs,
    path: &Path,
) -> Result<(String, saved::SavedPlan, String), Error> {
    let name = match args.common.selection.components.as_slice() {
        [one] if hub_manifest::names::check_component_name(one).is_ok() => one.clone(),
        given => {
            return Err(Error::Usage {
                flag: "-c",
                value: given.join(","),
                reason: "a job of a plan deploys one component: give its name alone".into(),
            })
        }
    };
    let (planned, plan_id) = read_plan(path)?;
    Ok((name, planned, plan_id))
}

/// The run arguments of a job: the plan's, narrowed to its component.
pub fn narrow(common: &mut crate::request::CommonRunArgs, name: &str) {
    common.selection.components = vec![name.to_string()];
    common.selection.with_deps = false;
    common.selection.with_dependents = false;
    common.selection.offset = None;
    common.selection.limit = None;
}

/// Steps 1–4 of a job (see `hub_engine::run::job`): the job to run, or
/// `None` when there is nothing to do (said on stderr).
pub fn start_job(
    stack: &hub_plan::source::stack::Stack,
    request: &JobRequest<'_>,
    clock: &hub_state::Clock,
    warnings: &mut hub_manifest::diag::Warnings,
) -> Result<Option<Box<job::Job>>, Error> {
    let (name, path) = (request.component, request.plan_file.display());
    match job::start(stack, request, clock, warnings)? {
        JobStart::AlreadyDeployed(record) => {
            say(&format!(
                "hub: `{name}` was deployed by this run of plan `{path}` at {} ({}): nothing to do (`--replace {name}` deploys it again)",
                record.finished, record.by
            ));
            Ok(None)
        }
        JobStart::NotRun(action) => {
            say(&format!(
                "hub: the plan `{path}` does not run `{name}` (`{}`): nothing to do",
                action.as_str()
            ));
            Ok(None)
        }
        JobStart::Run(job) => {
            say(&format!(
                "hub: job of `{name}` in the run of plan `{path}` on `{}`",
                request.plan.state.locations.join(",")
            ));
            Ok(Some(job))
        }
    }
}

/// Step 5 of a job, after the engine `ran`: its log kept beside the
/// state, its result recorded (unless it lost its lease).
pub fn end_job(
    job: Box<job::Job>,
    ran: Result<(), Error>,
    request: &JobRequest<'_>,
    clock: &hub_state::Clock,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let name = request.component;
    keep_log(&job.log(), &job::state_of(request.plan)?, name, warnings);
    let failure = ran.as_ref().err().map(ToString::to_string);
    match (job.record(failure, clock), ran) {
        (Ok(_), ran) => ran,
        (Err(recording), Ok(())) => Err(recording.into()),
        (Err(recording), Err(ran)) => {
            warnings.warn(None, ran.to_string());
            Err(recording.into())
        }
    }
}

/// Appends the component's log of the working copy to the state's own
/// log folder (local states; the job's output is the CI's log anyway).
fn keep_log(log: &Path, state: &Path, name: &str, warnings: &mut Warnings) {
    use std::io::Write;
    if hub_state::is_remote(state) {
        return;
    }
    let Ok(text) = std::fs::read(log) else {
        return;
    };
    let folder = hub_plan::decide::records::log_dir(state);
    let target = folder.join(format!("{name}.log"));
    let appended = hub_state::beside::create_folder(&folder)
        .and_then(|()| hub_state::beside::open_append(&target, hub_state::private::FILE_MODE))
        .and_then(|mut file| file.write_all(&text));
    if let Err(error) = appended {
        warnings.warn(
            None,
            format!(
                "the log of `{name}` was not kept in `{}`: {error}",
                target.display()
            ),
        );
    }
}

/// `hub run finish`.
fn finish(args: crate::request::RunFinishArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let (planned, plan_id) = read_plan(&args.plan)?;
    let state = match &args.state {
        Some(given) => PathBuf::from(given),
        None => job::state_of(&planned)?,
    };
    let clock = clock()?;
    let finished = job::finish(&planned, &args.plan, &plan_id, &state, &clock, warnings)?;
    hub_manifest::console::err(&hub_view::summary::render(&finished.summary));
    if let Some(path) = &args.report {
        write_report(path, &finished.summary, &planned, &state, warnings)?;
    }
    say(&format!(
        "hub: closed the run of plan `{}` on `{}`",
        args.plan.display(),
        state.display()
    ));
    if finished.failed.is_empty() && finished.never_ran.is_empty() {
        return Ok(());
    }
    Err(job::JobError::Incomplete {
        plan: args.plan.display().to_string(),
        failed: finished.failed,
        never_ran: finished.never_ran,
    }
    .into())
}

/// `--report FILE` of `hub run finish`: the report of a deploy.
fn write_report(
    path: &Path,
    summary: &hub_plan::outcome::Summary,
    planned: &saved::SavedPlan,
    state: &Path,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use hub_plan::outcome::Outcome;
    use hub_view::report::{self, ReportContext, RunReport};
    let failed = summary
        .entries
        .iter()
        .any(|e| matches!(e.outcome, Outcome::Failed(_) | Outcome::NotRun(_)));
    let context = ReportContext {
        kind: summary.verb.as_str().to_string(),
        stack: planned.stack.name.clone(),
        state: Some(state.display().to_string()),
        jobs: planned.arguments.jobs,
        started: summary.started.clone(),
        ended: summary.ended.clone(),
        result: if failed { "failure" } else { "success" }.into(),
        error: None,
    };
    let mut run = RunReport::from_summary(summary, context);
    run.warnings = warnings.iter().map(ToString::to_string).collect();
    match hub_view::html::is_html(path) {
        true => super::report::write_html(path, &run, None, warnings),
        false => Ok(report::write(path, &run)?),
    }
}
