//! What an apply of a saved plan checks before anything runs, in one
//! place for `deploy --plan PLAN`, `deploy --change ID` (and `hub ci`'s
//! apply) and each job of a pipeline (`deploy --plan PLAN -c NAME --job`):
//! that it applies what was reviewed.
//!
//! 1. the stack and state given, if any, are the plan's; with `--sha`
//!    (`hub ci`: the event's head commit), the plan records that commit;
//! 2. no change other than the plan's holds the stack's apply lock;
//! 3. the plan made again now, from the same files and arguments, is the
//!    same: the state (lineage, serial), the commit, every file the plan
//!    read (stack and parameters files, component folders, hooks, watched
//!    files, Terraform modules from outside a folder), the policy files it
//!    was checked with, each component's action and parameters;
//! 4. the stack's rules, the plan's policy files and the `--policy` files
//!    given now do not deny it;
//! 5. for a change (`--change ID`), what the stack's `ci.apply.requires`
//!    asks for (see `requirements`).

use super::common::split_list;
use super::{change, load_run, policy, RunRequest};
use crate::error::{ChangeCommandError, Error};
use crate::request::{CommonRunArgs, DeployArgs};
use hub_manifest::diag::Warnings;
use hub_plan::options::{ExpectedState, RunOptions};
use hub_plan::plan::saved::{self, SavedPlan, SavedPlanError};
use hub_plan::source::stack::Stack;
use hub_plan::Verb;
use hub_view::preview::Preview;
use std::path::{Path, PathBuf};

/// A plan found to hold: the stack and options to run it with (the
/// state expected as the plan read it), and the plan made again.
pub(crate) struct Checked {
    pub common: CommonRunArgs,
    pub stack: Stack,
    pub options: RunOptions,
    pub preview: Preview,
    /// The policy files the plan was checked with (the plan's and those
    /// given now), and the change they were evaluated for: what
    /// `--replan` checks a re-planned component with.
    pub policies: Vec<PathBuf>,
    pub context: hub_plan::change::ChangeContext,
}

/// The commit a plan is made at or applied at: `--sha` (the event's head
/// commit in `hub ci`), else the `HEAD` of the git work tree the stack is
/// in; `None` outside git.
pub(crate) fn commit_here(sha: Option<&str>, stack: &Stack) -> Option<String> {
    match sha.filter(|s| !s.is_empty()) {
        Some(sha) => Some(sha.to_string()),
        None => hub_plan::source::affected::head_commit(&stack.base_dir),
    }
}

/// Checks 1 to 4 (see the module's documentation) of `planned`, named by
/// `path` in messages, applied with `args`.
pub(crate) fn check(
    planned: &SavedPlan,
    path: &Path,
    args: &DeployArgs,
    warnings: &mut Warnings,
) -> Result<Checked, Error> {
    let stale = |reasons: Vec<String>| SavedPlanError::Stale {
        path: path.to_path_buf(),
        reasons,
    };
    let mismatch = invocation_mismatch(planned, args);
    if !mismatch.is_empty() {
        return Err(stale(mismatch).into());
    }
    // `--sha` (the head commit of `hub ci`'s event) names the commit under
    // review: a plan that records none was not made at it.
    if let (Some(sha), None) = (args.change.sha.as_deref(), &planned.stack.commit) {
        return Err(stale(vec![format!(
            "it records no commit, and the commit under review is `{sha}`"
        )])
        .into());
    }
    refuse_held_lock(planned, path, args.change.change.as_deref())?;
    let common = planned_run_args(planned, &args.common);
    let request = planned_request(planned, &common, args);
    let (stack, mut options) = load_run(&request, Verb::Deploy, warnings)?;
    // `deploy --change ID`, `hub ci`'s apply: the stack's `ci.apply`.
    if let (Some(_), Some(state)) = (&args.change.change, planned.state.locations.first()) {
        super::requirements::check(
            &stack,
            Path::new(state),
            planned.stack.commit.as_deref(),
            &args.change,
        )?;
    }
    options.running.expected_state = Some(ExpectedState {
        lineage: planned.state.lineage.clone(),
        serial: planned.state.serial,
    });
    // Made again as the plan was made; the engine says again what it
    // would warn about.
    let as_planned = RunOptions {
        concurrency: planned.arguments.jobs,
        plan_steps: planned.arguments.plan_steps,
        ..options.clone()
    };
    let mut quiet = Warnings::already_reported();
    let environment = std::env::vars().collect();
    let preview = super::common::plan_with_steps(&stack, &as_planned, environment, &mut quiet)?;
    let recorded: Vec<PathBuf> = planned
        .policies
        .iter()
        .map(|p| PathBuf::from(&p.path))
        .collect();
    let made = saved::Made {
        files: &common.stack.manifest,
        clouds: &common.stack.clouds,
        created: planned.created.clone(),
        commit: commit_here(args.change.sha.as_deref(), &stack),
        policies: &recorded,
        change: planned.change.clone(),
    };
    let now =
        SavedPlan::new(&preview, &stack, &as_planned, &made).map_err(|error| match error {
            SavedPlanError::WouldFail { components, .. } => stale(vec![format!(
                "`{}` would now fail",
                components.join("`, `")
            )]),
            other => other,
        })?;
    // The state moved since the plan (same lineage): what else moved
    // still refuses the whole plan; each component is decided by the run,
    // under its lock. A pipeline job runs on a working copy the run's own
    // jobs write: its plan is refused whole, as before.
    let narrowed = match args.job {
        true => None,
        false => saved::stale::narrowed(planned, &now),
    };
    let per_component = narrowed.is_some();
    let reasons = narrowed.unwrap_or_else(|| saved::stale::differences(planned, &now));
    if !reasons.is_empty() {
        return Err(stale(reasons).into());
    }
    if per_component {
        warnings.warn(
            None,
            format!(
                "the state `{}` moved from serial {} to {} since the plan `{}`: a component that run wrote is refused, the others are checked on what they read before they start",
                now.state.read.as_deref().unwrap_or("-"),
                planned.state.serial.unwrap_or_default(),
                now.state.serial.unwrap_or_default(),
                path.display()
            ),
        );
    }
    let mut files = recorded;
    files.extend(
        args.common
            .policy
            .policies
            .iter()
            .filter(|given| !files_contain(&planned.policies, given))
            .cloned(),
    );
    let context = change::context(&args.change, &common.state)?;
    policy::refuse_denied_files(&files, &stack, &preview, &context, warnings)?;
    Ok(Checked {
        common,
        stack,
        options,
        preview,
        policies: files,
        context,
    })
}

fn files_contain(files: &[saved::PlannedFile], path: &Path) -> bool {
    files.iter().any(|f| Path::new(&f.path) == path)
}

/// No change but the one applying (`--change`'s, else the plan's) holds
/// the apply lock of the plan's state: another change's unmerged work
/// would be deployed over.
fn refuse_held_lock(planned: &SavedPlan, path: &Path, change: Option<&str>) -> Result<(), Error> {
    let applying = change.or(planned.change.as_deref());
    let Some(first) = planned.state.locations.first() else {
        return Ok(());
    };
    let registry = hub_state::changes::Registry::open(Path::new(first))?;
    let Some(lock) = registry.holder()? else {
        return Ok(());
    };
    let holder = match lock.change.as_deref() {
        Some(holder) if Some(holder) != applying => holder.to_string(),
        _ => return Ok(()),
    };
    let (since, why, state) = (lock.since.clone(), lock.reason.why(), first.clone());
    Err(match change {
        // `deploy --change ID`: said as the registry's own rules say it.
        Some(id) => hub_state::changes::ChangeError::Held {
            id: id.to_string(),
            holder,
            since,
            why,
            state,
        }
        .into(),
        None => ChangeCommandError::LockHeld {
            plan: path.display().to_string(),
            holder,
            since,
            why,
            state,
        }
        .into(),
    })
}

/// A stack or state given to `deploy --plan` that is not the plan's.
pub(crate) fn invocation_mismatch(
    planned: &hub_plan::plan::saved::SavedPlan,
    args: &crate::request::DeployArgs,
) -> Vec<String> {
    let mut found = Vec::new();
    let given: Vec<String> = args
        .common
        .stack
        .manifest
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if !given.is_empty() && given != planned.stack.files {
        found.push(format!(
            "it was made for the stack `{}`, not `{}`",
            planned.stack.files.join(" "),
            given.join(" ")
        ));
    }
    let state = split_list(std::slice::from_ref(&args.common.state.state));
    if !state.is_empty() && state != planned.state.locations {
        let made_for = match planned.state.locations.is_empty() {
            true => "no state (`-n`)".to_string(),
            false => format!("the state `{}`", planned.state.locations.join(",")),
        };
        found.push(format!(
            "it was made for {made_for}, not `{}`",
            state.join(",")
        ));
    }
    found
}

/// The run arguments of `deploy --plan`: what decides what runs from the
/// plan, how it runs (`-j`, `--reveal`, `--report`, `-e`) from the command.
/// The run of `planned` as the apply `args` asks for it, on `common`
/// (the plan's own stack and state arguments).
pub(crate) fn planned_request<'a>(
    planned: &'a SavedPlan,
    common: &'a CommonRunArgs,
    args: &'a DeployArgs,
) -> RunRequest<'a> {
    RunRequest {
        common,
        execute: Some(&args.execute),
        guess: true,
        changed: planned.arguments.changed,
        replace: &planned.arguments.replace,
        prune: planned.arguments.prune,
    }
}

pub(crate) fn planned_run_args(
    planned: &hub_plan::plan::saved::SavedPlan,
    given: &crate::request::CommonRunArgs,
) -> crate::request::CommonRunArgs {
    use crate::request::{
        CommonRunArgs, LockTimeoutArgs, RunArgs, SelectionArgs, StackArgs, StateArgs,
    };
    let arguments = &planned.arguments;
    CommonRunArgs {
        policy: given.policy.clone(),
        stack: StackArgs {
            manifest: planned.stack.files.iter().map(PathBuf::from).collect(),
            environment: given.stack.environment.clone(),
            base_dir: arguments.base_dir.as_ref().map(PathBuf::from),
            lenient: given.stack.lenient,
            strict: given.stack.strict,
            clouds: arguments.clouds.clone(),
        },
        state: StateArgs {
            state: planned.state.locations.join(","),
            no_state: planned.state.locations.is_empty(),
            lock: LockTimeoutArgs {
                lock_timeout: given.state.lock.lock_timeout,
            },
        },
        selection: SelectionArgs {
            components: arguments.components.clone(),
            with_deps: arguments.with_deps,
            with_dependents: arguments.with_dependents,
            offset: arguments.offset.clone(),
            limit: arguments.limit.clone(),
            affected: None,
            status: Vec::new(),
        },
        run: RunArgs {
            force: arguments.force || given.run.force,
            reveal: given.run.reveal,
            jobs: given.run.jobs,
            report: given.run.report.clone(),
        },
    }
}
