//! The steps of `hub ci`'s operations, each run in this process as its
//! command runs it: a plan as `hub plan --change`, an apply as `hub
//! deploy --change`, merged, closed and unlock as `hub change`; each says
//! what it did ([`Done`]).

use super::comment::{Done, LogTail};
use crate::ci::{Access, Event};
use crate::commands::change;
use crate::commands::common::split_list;
use crate::commands::deploy::deploy_saved;
use crate::commands::plan::make_plan;
use crate::error::Error;
use crate::request::{
    ChangeArgs, ChangeIdArgs, ChangeStateArgs, ChangeUnlockArgs, CiArgs, CommonRunArgs,
    CompatibilityArgs, DeployArgs, ExecuteArgs, GuessArgs, LockTimeoutArgs, PlanArgs, ReplaceArgs,
    RunArgs, SelectionArgs, StackArgs, StateArgs,
};
use hub_manifest::diag::Warnings;
use hub_plan::outcome::Summary;
use std::path::{Path, PathBuf};

/// How many lines of a failed component's log the comment shows.
const TAIL_LINES: usize = 20;

/// The flags `hub plan` and `hub deploy` would be given.
pub(super) fn run_args(
    args: &CiArgs,
    components: Vec<String>,
    affected: Option<String>,
) -> CommonRunArgs {
    let stack = &args.stack;
    CommonRunArgs {
        stack: StackArgs {
            manifest: stack.manifest.clone(),
            environment: stack.environment.clone(),
            base_dir: stack.base_dir.clone(),
            lenient: stack.lenient,
            strict: stack.strict,
            clouds: stack.clouds.clone(),
        },
        state: StateArgs {
            state: args.state.clone(),
            no_state: false,
            lock: LockTimeoutArgs {
                lock_timeout: args.lock.lock_timeout,
            },
        },
        selection: SelectionArgs {
            components,
            affected,
            with_deps: false,
            with_dependents: false,
            offset: None,
            limit: None,
            status: Vec::new(),
        },
        run: RunArgs {
            force: false,
            reveal: false,
            jobs: args.jobs,
            report: None,
        },
        policy: crate::request::PolicyArgs {
            policies: args.policy.policies.clone(),
        },
    }
}

/// `--change ID --sha SHA --author NAME` of the event's change, with
/// what the event says of its base and whether it can be merged, and
/// whom `hub ci` trusts.
pub(super) fn change_args(event: &Event, access: &Access) -> ChangeArgs {
    ChangeArgs {
        change: event.change.clone(),
        sha: event.sha.clone(),
        author: event.author.clone(),
        base_sha: event.base.clone(),
        mergeable: event.mergeable,
        association: event.association.clone(),
        trusted: Some(access.trusted()),
        merged_head: None,
        queue: None,
    }
}

/// A plan, as `hub plan --change ID` makes and records it.
pub(super) fn plan(
    args: &CiArgs,
    change: ChangeArgs,
    asked: Asked,
    warnings: &mut Warnings,
) -> Result<Done, Error> {
    let plan_args = plan_args(args, change, asked);
    let registry = change::before_plan(&plan_args)?;
    // What `hub plan --change` makes, shown by the comment instead of on
    // stdout; a policy that cannot be evaluated fails the plan.
    let planned =
        make_plan(&plan_args, true, warnings).and_then(|made| match made.policies.failure() {
            Some(failure) => Err(failure.into()),
            None => Ok(made),
        });
    if let Some(registry) = &registry {
        change::record_plan(registry, &plan_args, &planned)?;
    }
    let made = planned?;
    Ok(Done::Planned(Box::new(made.preview), made.policies))
}

/// The arguments of `hub plan --change` for the event's change.
pub(super) fn plan_args(args: &CiArgs, change: ChangeArgs, asked: Asked) -> PlanArgs {
    let Asked {
        components,
        affected,
        steps,
    } = asked;
    PlanArgs {
        change,
        common: run_args(args, components, affected),
        guess: GuessArgs { guess: true },
        replace: ReplaceArgs {
            replace: Vec::new(),
        },
        changed: false,
        prune: false,
        undeploy: false,
        out: None,
        format: crate::request::OutputFormat::Markdown,
        detailed_exitcode: false,
        verbose: false,
        plan_steps: steps,
    }
}

/// What a plan of `hub ci` is asked for: `-c`, `--affected` and
/// `--plan-steps`.
pub(super) struct Asked {
    pub(super) components: Vec<String>,
    pub(super) affected: Option<String>,
    pub(super) steps: bool,
}

/// An apply of the change's latest plan, as `hub deploy --change ID`
/// runs it.
pub(super) fn apply(args: &CiArgs, change: ChangeArgs, warnings: &mut Warnings) -> Done {
    let deploy_args = DeployArgs {
        plan: None,
        job: false,
        // A pull request's apply runs exactly the reviewed plan: what is
        // planned again during it and differs is refused.
        replan: false,
        change,
        change_lock: Default::default(),
        common: run_args(args, Vec::new(), None),
        execute: ExecuteArgs {
            os_environment: "no-tfvars".into(),
            compressed: false,
            encrypted: None,
            state_format: hub_state::StateFormat::default(),
            dry: false,
            timeout: args.timeout,
            why: false,
            fail_fast: false,
        },
        changed: false,
        replace: ReplaceArgs {
            replace: Vec::new(),
        },
        prune: false,
        compatibility: CompatibilityArgs {
            git_outputs: true,
            git_outputs_status: false,
            load_global_state: false,
            write_oplog_to_state_on_error: false,
            switch_kube_context: false,
        },
    };
    let applied = change::deploy(&deploy_args, &mut |saved, path, before_run| {
        deploy_saved(saved, path, &deploy_args, warnings, before_run)
    });
    if let Err(error @ Error::Requirement(_)) = &applied.result {
        return Done::Refused(crate::commands::render_error(error));
    }
    let error = applied
        .result
        .err()
        .map(|error| crate::commands::render_error(&error));
    let Some(summary) = applied.summary else {
        // Refused (no plan, a failed or stale plan, another change's lock)
        // or stopped before the run.
        return Done::Failed(error.unwrap_or_default());
    };
    let tails = failed_tails(&summary, first_state(args).as_deref());
    Done::Applied {
        summary,
        error,
        tails,
        note: None,
    }
}

/// The first location of `-s`: where the registry and the logs are.
pub(super) fn first_state(args: &CiArgs) -> Option<PathBuf> {
    split_list(std::slice::from_ref(&args.state))
        .first()
        .map(PathBuf::from)
}

/// `hub change … ID -s STATE --author AUTHOR` of the event's change.
fn change_id_args(args: &CiArgs, event: &Event) -> Result<ChangeIdArgs, Error> {
    let state = first_state(args).ok_or_else(|| Error::Usage {
        flag: "-s",
        value: args.state.clone(),
        reason: "give the state whose changes to use".into(),
    })?;
    Ok(ChangeIdArgs {
        id: event.change.clone().unwrap_or_default(),
        state: ChangeStateArgs { state },
        author: event.author.clone(),
    })
}

/// What the change's operation left: the apply lock, in words.
fn after_change(id_args: &ChangeIdArgs, what: &str) -> Result<Done, Error> {
    let registry = hub_state::changes::Registry::open(&id_args.state.state)?;
    let holder = registry.holder()?;
    Ok(Done::Said(format!(
        "change {} {what}; {}",
        id_args.id,
        change::lock_line(holder.as_ref())
    )))
}

/// `hub unlock`: releases the change's apply lock (the comment's author
/// may; no terminal is asked).
pub(super) fn unlock(args: &CiArgs, event: &Event) -> Result<Done, Error> {
    let id_args = change_id_args(args, event)?;
    let unlock_args = ChangeUnlockArgs {
        change: change_id_args(args, event)?,
        yes: true,
    };
    change::unlock(&unlock_args)?;
    after_change(&id_args, "is unlocked")
}

/// The change was merged: `hub change merged ID`.
pub(super) fn merged(args: &CiArgs, event: &Event) -> Result<Done, Error> {
    let id_args = change_id_args(args, event)?;
    change::merged(&id_args)?;
    after_change(
        &id_args,
        "is recorded as merged (the plans of other open changes are stale)",
    )
}

/// The change was closed unmerged: `hub change closed ID`.
pub(super) fn closed(args: &CiArgs, event: &Event) -> Result<Done, Error> {
    let id_args = change_id_args(args, event)?;
    change::closed(&id_args)?;
    after_change(&id_args, "is recorded as closed")
}

/// Which change holds the stack's apply lock, and why.
pub(super) fn apply_lock_holder(args: &CiArgs) -> Option<String> {
    let state = first_state(args)?;
    let registry = hub_state::changes::Registry::open(&state).ok()?;
    let holder = registry.holder().ok()??;
    let line = change::lock_line(Some(&holder));
    Some(
        line.strip_prefix("apply lock: ")
            .unwrap_or(&line)
            .to_string(),
    )
}

/// The last lines of the log of each component that failed, from
/// `STATE.logs/NAME.log` (written masked).
pub(super) fn failed_tails(summary: &Summary, state: Option<&Path>) -> Vec<LogTail> {
    let Some(state) = state else {
        return Vec::new();
    };
    let folder = hub_plan::decide::records::log_dir(state);
    summary
        .entries
        .iter()
        .filter(|entry| matches!(entry.outcome, hub_plan::outcome::Outcome::Failed(_)))
        .filter_map(|entry| {
            let path = folder.join(format!("{}.log", entry.component));
            let text = read_log(&path)?;
            let lines: Vec<&str> = text.lines().collect();
            let kept = lines.len().min(TAIL_LINES);
            Some(LogTail {
                component: entry.component.clone(),
                lines: lines[lines.len() - kept..]
                    .iter()
                    .map(|l| l.to_string())
                    .collect(),
                omitted: lines.len() - kept,
            })
        })
        .collect()
}

/// A log beside the state, opened without following a link; `None` when
/// it cannot be read.
fn read_log(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file =
        hub_state::beside::open(path, std::fs::OpenOptions::new().read(true), 0o600).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
