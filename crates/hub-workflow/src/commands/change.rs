//! `hub change …`, and what `--change ID` adds to `plan`, `deploy` and
//! `undeploy`: the plan recorded in the registry beside the state, and
//! the rules an apply passes before anything runs (see
//! `hub_state::changes`).

pub(crate) use super::change_show::lock_line;
use super::common::{clock, non_empty_env, split_list};
use super::results::{Applied, PlanMade};
use crate::error::{ChangeCommandError, Error};
use crate::request::{ChangeArgs, ChangeCommand, ChangeCommandArgs, StateArgs};
use hub_manifest::diag::Warnings;
use hub_plan::plan::saved::{SavedPlan, SavedPlanError};
use hub_state::changes::{
    inert, summarise, ApplyLock, ApplyRecord, ChangeError, Held, PlanRecord, Record, Registry,
    Stamp, Status,
};
use hub_state::lock::LockInfo;
use hub_state::{Clock, LockWait};
use hub_view::preview::{Action, Preview};
use std::path::{Path, PathBuf};

/// Who plans or applies: `--author`, else the CI's user, else `$USER`;
/// only a login (a value that is not one is refused by [`check_args`]
/// before anything is recorded, and never written).
fn author(given: Option<&str>) -> Option<String> {
    author_from(given).ok().flatten().map(|(author, _)| author)
}

/// The author and where it came from (`--author`, `$GITHUB_ACTOR`, …),
/// checked to be a login.
fn author_from(given: Option<&str>) -> Result<Option<(String, String)>, ChangeError> {
    let found = match given {
        Some(author) => Some((author.to_string(), "--author".to_string())),
        None => ["GITHUB_ACTOR", "GITLAB_USER_LOGIN", "USER"]
            .iter()
            .find_map(|name| Some((non_empty_env(name)?, format!("${name}")))),
    };
    if let Some((author, from)) = &found {
        hub_state::changes::check_author(author, from)?;
    }
    Ok(found)
}

/// `--change`, `--sha` and `--author` (or the variable it defaults to):
/// a change id, a commit id and a login, or a clear error naming the flag.
pub(crate) fn check_args(change: &ChangeArgs) -> Result<(), ChangeError> {
    let Some(id) = &change.change else {
        return Ok(());
    };
    hub_state::changes::check_id(id)?;
    if let Some(sha) = &change.sha {
        hub_state::changes::check_sha(sha, "--sha")?;
    }
    if let Some(sha) = &change.base_sha {
        hub_state::changes::check_sha(sha, "--base-sha")?;
    }
    author_from(change.author.as_deref())?;
    Ok(())
}

fn stamp(clock: &Clock, change: &ChangeArgs) -> Stamp {
    Stamp {
        time: clock.now(),
        author: author(change.author.as_deref()),
        sha: change.sha.clone(),
    }
}

fn say(line: &str) {
    hub_manifest::console::err_line(line);
}

/// The registry of a run's state: beside its first `-s` location, once
/// `--change`, `--sha` and `--author` are checked.
fn registry_of(
    change: &ChangeArgs,
    stack: &[PathBuf],
    state: &StateArgs,
) -> Result<Registry, Error> {
    check_args(change)?;
    let locations = split_list(std::slice::from_ref(&state.state));
    let first = locations
        .first()
        .filter(|_| !state.no_state)
        .ok_or(ChangeCommandError::NoState)?;
    Ok(Registry::open(Path::new(first))?.with_stack(&stack_files(stack)))
}

/// The stack's files as given on the command line.
fn stack_files(stack: &[PathBuf]) -> Vec<String> {
    stack.iter().map(|p| p.display().to_string()).collect()
}

/// A plain `deploy` or `undeploy` (`verb`; not `--change ID`): refused
/// while a change holds the apply lock of its state, unless
/// `--ignore-change-lock`, since the stack then holds that change's
/// unmerged work.
pub(crate) fn refuse_while_a_change_holds(
    verb: &'static str,
    stack: &[PathBuf],
    state: &StateArgs,
    ignore: bool,
) -> Result<(), Error> {
    let locations = split_list(std::slice::from_ref(&state.state));
    let Some(first) = locations.first().filter(|_| !state.no_state && !ignore) else {
        return Ok(());
    };
    let registry = Registry::open(Path::new(first))?;
    let Some(lock) = registry.holder()? else {
        return Ok(());
    };
    Err(ChangeError::HeldAgainstRun {
        verb,
        holder: inert(lock.change.as_deref().unwrap_or_default()),
        since: inert(&lock.since),
        why: lock.reason.why(),
        state: first.clone(),
        stack: hub_state::changes::shell_words(&stack_files(stack)).into(),
    }
    .into())
}

/// `plan --change ID`: the registry, once no apply of a change is about
/// to run (waiting for it as `--lock-timeout` allows).
pub(crate) fn before_plan(args: &crate::request::PlanArgs) -> Result<Option<Registry>, Error> {
    if args.change.change.is_none() {
        return Ok(None);
    }
    let registry = registry_of(
        &args.change,
        &args.common.stack.manifest,
        &args.common.state,
    )?;
    let notify = |line: &str| say(line);
    let wait = LockWait::new(args.common.state.lock.lock_timeout, Some(&notify));
    let mut other = None;
    let waited = wait.retry(|| match registry.check_no_apply_waiting() {
        Ok(()) => Ok(()),
        Err(ChangeError::State(held)) => Err(held),
        Err(error) => {
            other = Some(error);
            Ok(())
        }
    });
    if let Some(error) = other {
        return Err(error.into());
    }
    waited.map_err(|e| registry.waiting_refusal(e))?;
    Ok(Some(registry))
}

/// What `hub plan` made ([`PlanMade`]), or why it made nothing.
pub(crate) type Planned = Result<PlanMade, Error>;

/// What policies see of the change a command works for (`change` in CEL):
/// empty outside a change; its approvals in effect from the registry
/// beside `state`.
pub(crate) fn context(
    args: &ChangeArgs,
    state: &StateArgs,
) -> Result<hub_plan::change::ChangeContext, Error> {
    let Some(id) = &args.change else {
        return Ok(hub_plan::change::ChangeContext::default());
    };
    let locations = split_list(std::slice::from_ref(&state.state));
    let approvals = match locations.first().filter(|_| !state.no_state) {
        Some(first) => super::change_show::approvals(&Registry::open(Path::new(first))?, id)?,
        None => Vec::new(),
    };
    Ok(hub_plan::change::ChangeContext {
        id: id.clone(),
        sha: args.sha.clone(),
        author: author(args.author.as_deref()),
        event: ["GITHUB_EVENT_NAME", "CI_PIPELINE_SOURCE"]
            .iter()
            .find_map(|name| non_empty_env(name)),
        approvals,
        mergeable: args.mergeable,
    })
}

/// Records the plan of `plan --change ID`: succeeded, or failed when a
/// component would fail or the plan could not be made.
pub(crate) fn record_plan(
    registry: &Registry,
    args: &crate::request::PlanArgs,
    planned: &Planned,
) -> Result<(), Error> {
    let id = args.change.change.as_deref().unwrap_or_default();
    let clock = clock()?;
    let verb = if args.undeploy { "undeploy" } else { "deploy" };
    let mut record = PlanRecord {
        stamp: stamp(&clock, &args.change),
        status: Status::Succeeded,
        verb: verb.into(),
        reason: None,
        plan: None,
        lineage: None,
        serial: None,
        stack: stack_files(&args.common.stack.manifest),
        association: args.change.association.clone(),
        queue: args.change.queue.clone(),
    };
    match planned {
        Err(error) => {
            record.status = Status::Failed;
            record.reason = Some(error.to_string());
        }
        Ok(PlanMade {
            preview,
            saved,
            policies,
        }) => {
            if let Some(state) = &preview.state {
                (record.lineage, record.serial) = (state.lineage.clone(), state.serial);
            }
            let failing: Vec<&str> = preview
                .components
                .iter()
                .filter(|c| c.action == Action::Fail)
                .map(|c| c.name.as_str())
                .collect();
            match saved {
                Some(Ok(saved)) => {
                    let value = serde_json::to_value(saved)
                        .map_err(|e| ChangeError::Encode(e.to_string()))?;
                    record.plan = Some(value);
                }
                Some(Err(error)) => {
                    record.status = Status::Failed;
                    record.reason = Some(error.to_string());
                }
                None if !failing.is_empty() => {
                    record.status = Status::Failed;
                    record.reason = Some(format!("`{}` would fail", failing.join("`, `")));
                }
                None => {}
            }
            if let Some(denied) = policies.refusal() {
                record.status = Status::Failed;
                record.reason = Some(denied.to_string());
            }
        }
    }
    let status = record.status;
    let number = registry.append(id, &Record::Plan(record))?;
    say(&format!(
        "change {id}: plan {number} recorded as {} in `{}`",
        status.as_str(),
        registry.location()
    ));
    Ok(())
}

/// What runs a saved plan (`deploy --plan`'s code): the plan, the path
/// that names it in messages, and what to call just before the run.
pub(crate) type RunSaved<'a> =
    &'a mut dyn FnMut(SavedPlan, &Path, &mut dyn FnMut() -> Result<(), Error>) -> Applied;

/// `deploy --change ID`: the latest plan of ID, applied by `run_saved` as
/// `deploy --plan` applies a plan, after the rules of the registry.
pub(crate) fn deploy(args: &crate::request::DeployArgs, run_saved: RunSaved<'_>) -> Applied {
    let id = args.change.change.as_deref().unwrap_or_default();
    let (registry, number, record, shown, saved) = match plan_to_apply(args, id) {
        Ok(found) => found,
        Err(error) => return Applied::refused(error),
    };
    // A plan found stale because another change applied in the meantime
    // is refused for that change's lock, which says what to do.
    let stale = |reasons: Vec<String>| match registry.plan_to_apply(id, "deploy") {
        Err(held @ ChangeError::Held { .. }) => held,
        _ => ChangeError::PlanStale {
            id: id.to_string(),
            time: record.stamp.time.clone(),
            reason: reasons.join("; "),
            state: registry.state().display().to_string(),
            stack: registry.stack_for(Some(&record)).into(),
        },
    };
    apply(
        &registry,
        id,
        args.common.state.lock.lock_timeout,
        &args.change,
        "deploy",
        number,
        |before_run| match run_saved(saved, &shown, before_run) {
            Applied {
                result: Err(Error::SavedPlan(SavedPlanError::Stale { reasons, .. })),
                summary,
            } => Applied {
                result: Err(stale(reasons).into()),
                summary,
            },
            other => other,
        },
    )
}

/// The registry of `deploy --change ID`, ID's latest plan (its number,
/// its record, the path that names it in messages) and the plan itself.
fn plan_to_apply(
    args: &crate::request::DeployArgs,
    id: &str,
) -> Result<(Registry, u64, PlanRecord, PathBuf, SavedPlan), Error> {
    let registry = registry_of(
        &args.change,
        &args.common.stack.manifest,
        &args.common.state,
    )?;
    let (number, record) = registry.plan_to_apply(id, "deploy")?;
    let shown = PathBuf::from(registry.shown_record(id, number));
    let value = record.plan.clone().ok_or_else(|| ChangeError::Corrupt {
        path: shown.display().to_string(),
        reason: "its saved plan is missing or not a plan".into(),
    })?;
    // A plan recorded by an older hub, without its commit and files, is
    // refused: it cannot be checked against what was reviewed.
    let saved = hub_plan::plan::saved::from_value(&shown, value)?;
    Ok((registry, number, record, shown, saved))
}

/// What runs an undeploy: given the check to make on its fresh plan
/// (which calls `before_run` once it passes) before the first component.
pub(crate) type RunUndeploy<'a> =
    &'a mut dyn FnMut(&mut dyn FnMut(&Preview) -> Result<(), Error>) -> Result<(), Error>;

/// `undeploy --change ID`: the undeploy planned for ID (`plan --undeploy
/// --change ID`), refused when the state changed since it was planned.
pub(crate) fn undeploy(
    args: &crate::request::UndeployArgs,
    run_undeploy: RunUndeploy<'_>,
) -> Result<(), Error> {
    let id = args.change.change.as_deref().unwrap_or_default();
    let registry = registry_of(
        &args.change,
        &args.common.stack.manifest,
        &args.common.state,
    )?;
    let (number, record) = registry.plan_to_apply(id, "undeploy")?;
    let applied = apply(
        &registry,
        id,
        args.common.state.lock.lock_timeout,
        &args.change,
        "undeploy",
        number,
        |before_run| {
            run_undeploy(&mut |now: &Preview| {
                let (lineage, serial) = now
                    .state
                    .as_ref()
                    .map_or((None, None), |s| (s.lineage.clone(), s.serial));
                if (lineage, serial) != (record.lineage.clone(), record.serial) {
                    return Err(ChangeError::PlanStale {
                        id: id.to_string(),
                        time: record.stamp.time.clone(),
                        reason: format!(
                            "the state was written since (serial {}, now {})",
                            record.serial.unwrap_or(0),
                            serial.unwrap_or(0)
                        ),
                        state: registry.state().display().to_string(),
                        stack: registry.stack_for(Some(&record)).into(),
                    }
                    .into());
                }
                before_run()
            })
            .into()
        },
    );
    applied.result
}

/// Runs `run`, which calls `before_run` once everything is checked and
/// just before the first component: the apply lock is taken for `id`
/// there (refused when another change got it in between) and plans are
/// told an apply waits. After the run, the apply and its outcome are
/// recorded and the lock kept: `applied` or `failed`.
fn apply(
    registry: &Registry,
    id: &str,
    wait: std::time::Duration,
    change: &ChangeArgs,
    verb: &str,
    plan: u64,
    run: impl FnOnce(&mut dyn FnMut() -> Result<(), Error>) -> Applied,
) -> Applied {
    let clock = match clock() {
        Ok(clock) => clock,
        Err(error) => return Applied::refused(error),
    };
    let me = LockInfo::current("apply", &clock);
    let mut taken = None;
    let mut applied = run(&mut || {
        let who = (change.sha.clone(), author(change.author.as_deref()));
        taken = Some(registry.take_lock(id, &me, who, &clock)?);
        registry.mark_waiting(id, &me, wait)?;
        Ok(())
    });
    let Some(taken) = taken else {
        return applied;
    };
    let _ = registry.done_waiting(&me);
    let done = Done {
        registry,
        id,
        change,
        verb,
        plan,
        clock: &clock,
    };
    let give_back = || registry.give_back(&taken, &clock);
    if let Err(error) = record_apply(&done, &give_back, &applied.result) {
        applied.result = Err(error);
    }
    applied
}

/// An apply that took the apply lock: who, what, of which plan.
struct Done<'a> {
    registry: &'a Registry,
    id: &'a str,
    change: &'a ChangeArgs,
    verb: &'a str,
    plan: u64,
    clock: &'a Clock,
}

/// After the run: the lock given back when it ran nothing, else the apply
/// recorded with its outcome and the lock kept (`applied` or `failed`).
fn record_apply(
    done: &Done<'_>,
    give_back: &dyn Fn() -> Result<(), ChangeError>,
    result: &Result<(), Error>,
) -> Result<(), Error> {
    let Done {
        registry,
        id,
        change,
        verb,
        plan,
        clock,
    } = *done;
    if let Err(error) = result {
        if ran_nothing(error) {
            // Refused before the first component (another run holds the
            // state, or wrote it since): not an apply of this change.
            give_back()?;
            say(&format!(
                "change {id}: nothing was applied, and nothing was recorded"
            ));
            return Ok(());
        }
    }
    let (status, held) = match result {
        Ok(()) => (Status::Succeeded, Held::Applied),
        Err(_) => (Status::Failed, Held::Failed),
    };
    let apply = ApplyRecord {
        stamp: stamp(clock, change),
        status,
        verb: verb.into(),
        plan,
    };
    let number = registry.append(id, &Record::Apply(apply))?;
    registry.update_lock(clock, |current| {
        let since = current
            .filter(|l| l.change.as_deref() == Some(id))
            .map_or_else(|| clock.now(), |l| l.since.clone());
        let lock = ApplyLock {
            change: Some(id.to_string()),
            since,
            reason: held,
            sha: change.sha.clone(),
            author: author(change.author.as_deref()),
            run: None,
        };
        Ok((Some(lock), ()))
    })?;
    say(&format!(
        "change {id}: apply {number} recorded as {}; change {id} holds the apply lock ({})",
        status.as_str(),
        held.as_str()
    ));
    Ok(())
}

/// Whether a run failed before its first component: refused by the
/// change registry, by the state's lock (held, or stale), or because the
/// state was written since the plan was checked.
fn ran_nothing(error: &Error) -> bool {
    use hub_engine::run::error::EngineError;
    use hub_state::StateError;
    let state = |e: &StateError| {
        matches!(
            e,
            StateError::Locked { .. }
                | StateError::RemoteLocked { .. }
                | StateError::StaleLock { .. }
                | StateError::UnreadableLock { .. }
                | StateError::LockTimeout { .. }
        )
    };
    match error {
        Error::Change(_) => true,
        Error::State(e) => state(e),
        Error::Lifecycle(engine) => match engine.as_ref() {
            EngineError::Planning(hub_plan::error::PlanningError::State(e)) => state(e),
            EngineError::StateMoved { .. } => true,
            _ => false,
        },
        _ => false,
    }
}

/// `hub change …`.
pub fn change(args: ChangeCommandArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    match args.command {
        ChangeCommand::List(args) => list(&Registry::open(&args.state.state)?),
        ChangeCommand::Show(args) => {
            hub_state::changes::check_id_from(&args.id, "ID")?;
            super::change_show::show(&Registry::open(&args.state.state)?, &args.id)
        }
        ChangeCommand::Merged(args) => merged(&args),
        ChangeCommand::Closed(args) => closed(&args),
        ChangeCommand::Unlock(args) => unlock(&args),
    }
}

fn list(registry: &Registry) -> Result<(), Error> {
    let holder = registry.holder()?;
    let held_by = holder.as_ref().and_then(|l| l.change.clone());
    let mut rows = vec![[
        "CHANGE".to_string(),
        "STATE".into(),
        "LATEST PLAN".into(),
        "APPLIES".into(),
        "LOCK".into(),
    ]];
    for id in registry.changes()? {
        let summary = summarise(&registry.records(&id)?);
        let plan = match &summary.latest_plan {
            Some((number, plan)) => {
                let mut text = format!(
                    "{number} {} {}",
                    plan.status.as_str(),
                    inert(&plan.stamp.time)
                );
                if summary.stale.is_some() {
                    text.push_str(" (stale)");
                }
                text
            }
            None => "-".into(),
        };
        let applies = match &summary.last_apply {
            Some((time, status)) => {
                let time = inert(time);
                format!("{} (last {} {time})", summary.applies, status.as_str())
            }
            None => "0".into(),
        };
        let lock = match (&held_by, &holder) {
            (Some(h), Some(lock)) if *h == id => format!("held ({})", lock.reason.as_str()),
            _ => "-".into(),
        };
        rows.push([id, summary.phase.into(), plan, applies, lock]);
    }
    let mut text = String::new();
    let widths: Vec<usize> = (0..5)
        .map(|i| rows.iter().map(|r| r[i].len()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(&widths)
            .map(|(cell, width)| format!("{cell:width$}"))
            .collect();
        text.push_str(cells.join("  ").trim_end());
        text.push('\n');
    }
    text.push_str(&lock_line(holder.as_ref()));
    text.push('\n');
    super::output::write_stdout(text.as_bytes())
}

/// `hub change merged|closed|unlock ID [--author NAME]`: a change id and
/// a login.
fn check_id_args(args: &crate::request::ChangeIdArgs) -> Result<(), ChangeError> {
    hub_state::changes::check_id_from(&args.id, "ID")?;
    author_from(args.author.as_deref())?;
    Ok(())
}

fn stamp_of(args: &crate::request::ChangeIdArgs, clock: &Clock) -> Stamp {
    Stamp {
        time: clock.now(),
        author: author(args.author.as_deref()),
        sha: None,
    }
}

/// Releases the apply lock when `id` holds it; whether it did.
fn release(registry: &Registry, id: &str, clock: &Clock) -> Result<bool, Error> {
    Ok(registry.update_lock(clock, |current| {
        match current.filter(|l| l.change.as_deref() == Some(id)) {
            Some(lock) => {
                let released = ApplyLock {
                    change: None,
                    since: clock.now(),
                    run: None,
                    ..lock.clone()
                };
                Ok((Some(released), true))
            }
            None => Ok((None, false)),
        }
    })?)
}

fn released_line(id: &str, released: bool) -> String {
    match released {
        true => format!("change {id}: the apply lock is released"),
        false => format!("change {id}: it did not hold the apply lock"),
    }
}

pub(crate) fn merged(args: &crate::request::ChangeIdArgs) -> Result<(), Error> {
    let id = args.id.as_str();
    check_id_args(args)?;
    let registry = Registry::open(&args.state.state)?;
    let clock = clock()?;
    let stamp = stamp_of(args, &clock);
    let released = release(&registry, id, &clock)?;
    registry.append(
        id,
        &Record::Merged {
            stamp: stamp.clone(),
        },
    )?;
    say(&released_line(id, released));
    for other in registry.changes()? {
        let summary = summarise(&registry.records(&other)?);
        if other == id || summary.phase != "open" || summary.latest_plan.is_none() {
            continue;
        }
        let reason = format!(
            "change `{id}` was merged at {} after it was made",
            stamp.time
        );
        registry.append(
            &other,
            &Record::Stale {
                stamp: stamp.clone(),
                reason,
            },
        )?;
        say(&format!(
            "change {other}: its plans are stale now (plan it again)"
        ));
    }
    Ok(())
}

pub(crate) fn closed(args: &crate::request::ChangeIdArgs) -> Result<(), Error> {
    let id = args.id.as_str();
    check_id_args(args)?;
    let registry = Registry::open(&args.state.state)?;
    let clock = clock()?;
    let holds = registry
        .holder()?
        .is_some_and(|l| l.change.as_deref() == Some(id));
    let summary = summarise(&registry.records(id)?);
    if let (true, Some((time, _))) = (holds, &summary.last_apply) {
        return Err(ChangeError::ClosedWithApplies {
            id: id.to_string(),
            time: time.clone(),
            state: args.state.state.display().to_string(),
        }
        .into());
    }
    let released = release(&registry, id, &clock)?;
    registry.append(
        id,
        &Record::Closed {
            stamp: stamp_of(args, &clock),
        },
    )?;
    say(&released_line(id, released));
    Ok(())
}

pub(crate) fn unlock(args: &crate::request::ChangeUnlockArgs) -> Result<(), Error> {
    let id = args.change.id.as_str();
    check_id_args(&args.change)?;
    let registry = Registry::open(&args.change.state.state)?;
    let clock = clock()?;
    let holder = registry.holder()?;
    let Some(lock) = holder.filter(|l| l.change.as_deref() == Some(id)) else {
        say(&released_line(id, false));
        return Ok(());
    };
    if !args.yes {
        confirm_unlock(id, &lock, &args.change.state.state)?;
    }
    let released = release(&registry, id, &clock)?;
    if released {
        registry.append(
            id,
            &Record::Unlocked {
                stamp: stamp_of(&args.change, &clock),
            },
        )?;
    }
    say(&released_line(id, released));
    Ok(())
}

/// Asks on the terminal; refuses when nobody can answer.
fn confirm_unlock(id: &str, lock: &ApplyLock, state: &Path) -> Result<(), ChangeCommandError> {
    if !hub_params::interactive() {
        return Err(ChangeCommandError::NeedsYes {
            id: id.to_string(),
            state: hub_state::shell_word(state),
        });
    }
    let question = format!(
        "Release the apply lock change {id} holds since {} ({})? Other changes may then apply over its unmerged work",
        lock.since,
        lock.reason.why()
    );
    match super::common::confirm(question).map_err(ChangeCommandError::Prompt)? {
        true => Ok(()),
        false => Err(ChangeCommandError::Declined),
    }
}
