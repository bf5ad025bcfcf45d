//! `hub ci` in a merge queue (GitHub `merge_group`) or merge train (a
//! GitLab train's pipeline, relayed and signed). The queue's commit is the
//! change on top of the entries ahead of it: hub plans it for the change,
//! compares each component's plan with the plan recorded for the change
//! outside the queue (the plan its reviewers approved), and goes on only
//! when they match, or when the stack allows re-plans in the queue
//! (`ci.queue.replan: allowed`) and the policies pass. With `ci.apply.on:
//! queue` it then records that plan and applies it as `hub deploy
//! --change` does (the apply lock, `ci.apply.requires` with the approvals
//! of the change's head); otherwise it only says that the entry matches.
//! A gone entry (`destroyed`, `dequeued`) releases the apply lock its apply
//! took, once.

use super::comment::Done;
use super::event::{Platform, QueueStep, Queued};
use super::on_merge::ci_settings;
use super::queue_compare::{differences, Difference};
use super::steps::{apply, change_args, first_state, plan_args, Asked};
use super::{Access, Event};
use crate::commands::change;
use crate::commands::plan::make_plan;
use crate::error::Error;
use crate::request::{ChangeArgs, CiArgs};
use hub_manifest::diag::Warnings;
use hub_manifest::{ApplyOn, Replan};
use hub_plan::plan::saved::SavedPlan;
use hub_state::changes::{
    check_id, check_sha, inert, summarise, ApplyLock, PlanRecord, Record, Registry,
};
use hub_state::changes::{Stamp, Status};
use std::path::PathBuf;

/// The queue's entry `queued` of the event's change: checked, or released.
pub(super) fn run(
    args: &CiArgs,
    event: &Event,
    queued: &Queued,
    access: &Access,
    warnings: &mut Warnings,
) -> Done {
    let done = match &queued.step {
        QueueStep::Checks => check(args, event, queued, access, warnings),
        QueueStep::Destroyed(reason) => release(args, event, reason),
    };
    done.unwrap_or_else(|error| Done::Failed(crate::commands::render_error(&error)))
}

/// The plan approved for the change: the latest plan recorded for it
/// outside a queue.
struct Approved {
    number: u64,
    record: PlanRecord,
    saved: SavedPlan,
}

/// The registry beside the first `-s` location.
fn registry(args: &CiArgs) -> Result<Registry, Error> {
    let state: PathBuf = first_state(args).ok_or_else(|| Error::Usage {
        flag: "-s",
        value: args.state.clone(),
        reason: "give the state whose changes to use".into(),
    })?;
    Ok(Registry::open(&state)?)
}

fn short(sha: &str) -> String {
    inert(&sha.chars().take(12).collect::<String>())
}

/// `checks_requested`: the queue's commit planned, compared, applied.
fn check(
    args: &CiArgs,
    event: &Event,
    queued: &Queued,
    access: &Access,
    warnings: &mut Warnings,
) -> Result<Done, Error> {
    let id = event.change.clone().unwrap_or_default();
    check_id(&id)?;
    let commit = event.sha.clone().unwrap_or_default();
    check_sha(&commit, "the queue's commit")?;
    if let Some(head) = &queued.head {
        check_sha(head, "the change's head")?;
    }
    let records = registry(args)?.records(&id)?;
    let approved = match approved_plan(event, queued, &records) {
        Ok(approved) => approved,
        Err(refusal) => return Ok(Done::Refused(refusal)),
    };
    let selected = approved.saved.arguments.selected.clone();
    if selected.is_empty() {
        return Ok(Done::Said(format!(
            "plan {} approved for the change runs no component: the queue's commit `{}` has nothing to apply for it",
            approved.number,
            short(&commit)
        )));
    }
    let settings = ci_settings(args)?;
    let change = queue_change(event, access, &approved, &commit);
    let asked = Asked {
        components: selected,
        affected: None,
        steps: approved.saved.arguments.plan_steps && args.plan_steps,
    };
    let plan_args = plan_args(args, change.clone(), asked);
    let registry = change::before_plan(&plan_args)?;
    let made = make_plan(&plan_args, true, warnings)?;
    if let Some(failure) = made.policies.failure() {
        return Err(failure.into());
    }
    let queue_plan = match made.saved {
        Some(Ok(ref saved)) => saved.clone(),
        // A component would fail: the plan says which.
        None => return Ok(Done::Planned(Box::new(made.preview), made.policies)),
        Some(Err(error)) => return Err(Error::SavedPlan(error)),
    };
    let found = differences(&approved.saved, &queue_plan);
    let replan = settings.queue.replan == Replan::Allowed;
    if !found.is_empty() && !replan {
        return Ok(Done::Refused(left_the_queue(&approved, &commit, &found)));
    }
    if made.policies.denied() {
        return Ok(Done::Planned(Box::new(made.preview), made.policies));
    }
    let said = agreement(&approved, &commit, &found);
    if settings.apply.on != ApplyOn::Queue {
        return Ok(Done::Said(format!(
            "{said} Nothing is applied in the queue: the stack applies on {} (`ci.apply.on`)",
            settings.apply.on.as_str()
        )));
    }
    if let Some(registry) = &registry {
        change::record_plan(registry, &plan_args, &Ok(made))?;
    }
    let mut done = apply(args, change, warnings);
    if let Done::Applied { note, .. } = &mut done {
        *note = Some(said);
    }
    Ok(done)
}

/// The change's plan, made again at the queue's commit, for the author
/// (and association) the approved plan was made for; its approvals are
/// those of the change's head.
fn queue_change(event: &Event, access: &Access, approved: &Approved, commit: &str) -> ChangeArgs {
    let mut change = change_args(event, access);
    change.author = approved.record.stamp.author.clone();
    change.association = approved.record.association.clone();
    change.merged_head = Some(approved.record.stamp.sha.clone());
    change.queue = Some(commit.to_string());
    change
}

/// What the queue's plan is, next to the approved one, when it goes on.
fn agreement(approved: &Approved, commit: &str, found: &[Difference]) -> String {
    match found.is_empty() {
        true => format!(
            "The queue's commit `{}` plans each component as plan {} approved at `{}` did.",
            short(commit),
            approved.number,
            short(approved.record.stamp.sha.as_deref().unwrap_or_default())
        ),
        false => format!(
            "The queue's commit `{}` was planned again (`ci.queue.replan: allowed`), and its policies pass; it differs from plan {} approved: {}.",
            short(commit),
            approved.number,
            lines(found).join("; ")
        ),
    }
}

/// The differences, one line each.
fn lines(found: &[Difference]) -> Vec<String> {
    found.iter().map(Difference::line).collect()
}

/// Why the change leaves the queue: its first line names the first
/// component and input that differ; then each, and what to do.
fn left_the_queue(approved: &Approved, commit: &str, found: &[Difference]) -> String {
    let more = match found.len() {
        1 => String::new(),
        n => format!(" (and {} more)", n - 1),
    };
    let mut text = format!(
        "the entries ahead in the queue changed what the change's components read: {}{more}; the queue's commit `{}` does not plan as plan {} approved at `{}`, and the stack does not allow re-plans in the queue (`ci.queue.replan: allowed`)\n",
        found[0].line(),
        short(commit),
        approved.number,
        short(approved.record.stamp.sha.as_deref().unwrap_or_default())
    );
    for line in lines(found) {
        text.push_str(&format!("  - {line}\n"));
    }
    text.push_str("hint: update the change on its base branch, plan it again (a `hub plan` comment), have it approved, and add it to the queue again");
    text
}

/// The plan approved for the change: its latest plan made outside a
/// queue, succeeded, of a deploy, at the change's head (when the event
/// names it); else why the change cannot be checked in the queue.
fn approved_plan(
    event: &Event,
    queued: &Queued,
    records: &[(u64, Record)],
) -> Result<Approved, String> {
    let noun = event.platform.change_noun();
    let id = event.change.as_deref().unwrap_or_default();
    let summary = summarise(records);
    if summary.phase != "open" {
        return Err(format!(
            "{noun} #{id} is recorded as {}: hub checks queue entries of open changes",
            summary.phase
        ));
    }
    let latest = records
        .iter()
        .rev()
        .find_map(|(number, record)| match record {
            Record::Plan(plan) if plan.queue.is_none() => Some((*number, plan.clone())),
            _ => None,
        });
    let plan_it = "plan it (`hub ci` plans a pull request when it is opened or pushed to, and on a `hub plan` comment), have the plan approved, then add it to the queue";
    let Some((number, record)) = latest else {
        return Err(format!(
            "{noun} #{id} has no plan recorded in the change registry, so nothing was approved to compare the queue's commit with: {plan_it}"
        ));
    };
    if record.status != Status::Succeeded || record.verb != "deploy" {
        return Err(format!(
            "the latest plan of {noun} #{id} (plan {number}) is a {} that {}: {plan_it}",
            inert(&record.verb),
            record.status.as_str()
        ));
    }
    let Some(planned_at) = record.stamp.sha.clone() else {
        return Err(format!(
            "plan {number} of {noun} #{id} records no commit: {plan_it}"
        ));
    };
    if let Some(head) = &queued.head {
        if !head.eq_ignore_ascii_case(&planned_at) {
            return Err(format!(
                "plan {number} of {noun} #{id} was made at `{}`, and the head of the {noun} in the queue is `{}`: {plan_it}",
                inert(&planned_at),
                inert(head)
            ));
        }
    }
    let value = record.plan.clone().unwrap_or_default();
    let saved = hub_plan::plan::saved::from_value(std::path::Path::new("plan"), value)
        .map_err(|error| format!("plan {number} of {noun} #{id} cannot be read: {error}"))?;
    Ok(Approved {
        number,
        record,
        saved,
    })
}

/// `destroyed` (GitHub) or `dequeued` (GitLab): the apply lock the entry's
/// apply took (held by the change, at the queue's commit) released and
/// recorded; nothing when it holds none (a second event says so).
fn release(args: &CiArgs, event: &Event, reason: &str) -> Result<Done, Error> {
    let id = event.change.clone().unwrap_or_default();
    check_id(&id)?;
    let commit = event.sha.clone().unwrap_or_default();
    check_sha(&commit, "the queue's commit")?;
    let registry = registry(args)?;
    let clock = crate::commands::common::clock()?;
    let held = |lock: &ApplyLock| {
        lock.change.as_deref() == Some(id.as_str())
            && lock
                .sha
                .as_deref()
                .is_some_and(|sha| sha.eq_ignore_ascii_case(&commit))
    };
    let released = registry.update_lock(&clock, |current| match current.filter(|l| held(l)) {
        Some(lock) => {
            let free = ApplyLock {
                change: None,
                since: clock.now(),
                run: None,
                ..lock.clone()
            };
            Ok((Some(free), true))
        }
        None => Ok((None, false)),
    })?;
    let why = match event.platform {
        Platform::GitHub => format!("the merge group is destroyed ({})", inert(reason)),
        Platform::GitLab => "the merge request left the merge train".to_string(),
    };
    if !released {
        return Ok(Done::Said(format!(
            "{why}; the entry at `{}` held nothing (no apply lock of change {id} at that commit)",
            short(&commit)
        )));
    }
    let stamp = Stamp {
        time: clock.now(),
        author: event.author.clone().filter(|a| check_author_ok(a)),
        sha: Some(commit.clone()),
    };
    registry.append(&id, &Record::Unlocked { stamp })?;
    Ok(Done::Said(format!(
        "{why}; the apply lock change {id} took for the queue's commit `{}` is released",
        short(&commit)
    )))
}

/// Whether a login from the event may be recorded.
fn check_author_ok(login: &str) -> bool {
    hub_state::changes::check_author(login, "the event's sender").is_ok()
}
