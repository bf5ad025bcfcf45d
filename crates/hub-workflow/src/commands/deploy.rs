//! `hub deploy`: a plain deploy, a saved plan (`--plan PLAN`), a change's
//! latest plan (`--change ID`) and one job of a pipeline (`--plan PLAN -c
//! NAME --job`); a plan is applied once [`reviewed::check`] finds it holds.

use super::common;
use super::{change, reviewed, run_stack, runs, selection, Applied, RunRequest};
use crate::error::Error;
use hub_manifest::diag::Warnings;
use std::path::Path;

/// `hub deploy`.
pub fn deploy(args: crate::request::DeployArgs, warnings: &mut Warnings) -> Result<(), Error> {
    use hub_plan::Verb;
    if args.plan.is_some() && !args.common.selection.components.is_empty() {
        return deploy_job(&args, warnings);
    }
    if args.plan.is_none() {
        runs::refuse_open_runs_of(&args.common.state)?;
    }
    if args.replan && args.plan.is_none() && args.change.change.is_none() {
        return Err(Error::Usage {
            flag: "--replan",
            value: String::new(),
            reason: "it accepts parts of a saved plan planned again: give `--plan PLAN` or `--change ID`".into(),
        });
    }
    if args.plan.is_some() && !args.replace.replace.is_empty() {
        return Err(Error::Usage {
            flag: "--replace",
            value: args.replace.replace.join(","),
            reason:
                "with `--plan`, only a job (`-c NAME`) takes it: the plan says what is replaced"
                    .into(),
        });
    }
    if let Some(path) = &args.plan {
        let plan = std::slice::from_ref(path);
        return hub_engine::trace::traced_run("deploy", plan, || {
            let planned = hub_plan::plan::saved::read(path)?;
            deploy_saved(planned, path, &args, warnings, &mut || Ok(())).result
        });
    }
    if args.change.change.is_some() {
        let manifest = &args.common.stack.manifest;
        return hub_engine::trace::traced_run("deploy", manifest, || {
            change::deploy(&args, &mut |saved, path, before_run| {
                deploy_saved(saved, path, &args, warnings, before_run)
            })
            .result
        });
    }
    if args.changed && args.common.state.no_state {
        return Err(Error::Usage {
            flag: "--changed",
            value: String::new(),
            reason: "it compares each component with the state: give `-s STATE` instead of `-n`"
                .into(),
        });
    }
    change::refuse_while_a_change_holds(
        "deploy",
        &args.common.stack.manifest,
        &args.common.state,
        args.change_lock.ignore_change_lock,
    )?;
    let request = RunRequest {
        common: &args.common,
        execute: Some(&args.execute),
        guess: true,
        changed: args.changed,
        replace: &args.replace.replace,
        prune: args.prune,
    };
    run_stack(&request, Verb::Deploy, warnings)
}

/// `hub deploy --plan PLAN -c NAME [--job]`: one component of the plan,
/// as a job of a pipeline (see `runs`).
fn deploy_job(args: &crate::request::DeployArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let Some(path) = args.plan.as_deref() else {
        return Ok(());
    };
    let (name, planned, plan_id) = runs::job_of(args, path)?;
    // A job is an apply: it checks what `deploy --plan` checks, then
    // runs its component alone, on the stack the check loaded.
    let reviewed::Checked {
        mut common,
        mut stack,
        mut options,
        preview,
        policies,
        context,
    } = reviewed::check(&planned, path, args, warnings)?;
    runs::narrow(&mut common, &name);
    let request = RunRequest {
        common: &common,
        execute: Some(&args.execute),
        guess: true,
        changed: false,
        replace: &[],
        prune: false,
    };
    let base_dir = common.stack.base_dir.as_deref();
    options.selection = selection::resolve(&stack, &common.selection, base_dir)?;
    options.scope = hub_plan::options::RunScope::default();
    // The job's working copy is the state with this run's records: the
    // check compared the plan with the state itself.
    (options.running.expected_state, options.running.planned) = (None, None);
    // Its component is checked against the plan as reviewed: what it
    // read, whether it was deferred (see `deploy --plan`).
    options.running.reviewed = Some(std::sync::Arc::new(preview));
    options.running.replan = args.replan;
    let replan = replan_check(&planned, &policies, &stack, context, false)?;
    let clock = common::clock()?;
    let job_request = hub_engine::run::job::JobRequest {
        plan: &planned,
        plan_file: path,
        plan_id,
        component: &name,
        replace: args.replace.replace.contains(&name),
    };
    let Some(job) = runs::start_job(&stack, &job_request, &clock, warnings)? else {
        return Ok(());
    };
    // The engine deploys the component on the job's working copy.
    options.state = vec![job.copy.clone()];
    let replan = replan.as_ref().map(|c| c as _);
    let ran = super::run_loaded_with(&request, &mut stack, &options, replan, warnings).result;
    runs::end_job(job, ran, &job_request, &clock, warnings)
}

/// `hub deploy --plan PLAN` (and `--change ID`): the plan's stack, state
/// and arguments, made again and compared with the plan before anything
/// runs; `path` names the plan in messages. `before_run` is called once
/// the plan is found to hold, just before the run.
pub(crate) fn deploy_saved(
    planned: hub_plan::plan::saved::SavedPlan,
    path: &Path,
    args: &crate::request::DeployArgs,
    warnings: &mut Warnings,
    before_run: &mut dyn FnMut() -> Result<(), Error>,
) -> Applied {
    checked_and_run(planned, path, args, warnings, before_run).unwrap_or_else(Applied::refused)
}

/// [`deploy_saved`]: the checks, then the run.
fn checked_and_run(
    planned: hub_plan::plan::saved::SavedPlan,
    path: &Path,
    args: &crate::request::DeployArgs,
    warnings: &mut Warnings,
    before_run: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<Applied, Error> {
    runs::refuse_open_runs(&planned.state.locations)?;
    let reviewed::Checked {
        common,
        mut stack,
        mut options,
        preview,
        policies,
        context,
    } = reviewed::check(&planned, path, args, warnings)?;
    // A plan that records its components' state entries is applied per
    // component when another run wrote the state: the engine decides each
    // one from the state it reads under its lock.
    let planned = std::sync::Arc::new(planned);
    if hub_plan::plan::saved::stale::records_entries(&planned) {
        options.running.saved = Some(std::sync::Arc::clone(&planned));
    }
    let request = reviewed::planned_request(&planned, &common, args);
    // The engine executes this plan, once the state is found unchanged.
    options.running.planned = Some(std::sync::Arc::new(preview));
    options.running.replan = args.replan;
    let replan = replan_check(&planned, &policies, &stack, context, args.replan)?;
    before_run()?;
    Ok(super::run_loaded_with(
        &request,
        &mut stack,
        &options,
        replan.as_ref().map(|c| c as _),
        warnings,
    ))
}

/// What a component planned again during the run (a plan made with
/// `--plan-steps`, or one `--replan` accepts when the state moved since
/// the plan) is checked by: the rules the apply was checked with,
/// compiled once more.
fn replan_check(
    planned: &hub_plan::plan::saved::SavedPlan,
    policies: &[std::path::PathBuf],
    stack: &hub_plan::source::stack::Stack,
    context: hub_plan::change::ChangeContext,
    replan: bool,
) -> Result<Option<super::policy::ReplanCheck>, Error> {
    match planned.arguments.plan_steps || replan {
        true => Ok(Some(super::policy::ReplanCheck::new(
            policies, stack, context,
        )?)),
        false => Ok(None),
    }
}
