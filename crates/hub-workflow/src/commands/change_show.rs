//! `hub change show ID`: a change's records, its approvals in effect and
//! the apply lock; and the approvals as policies see them.

use crate::error::Error;
use hub_plan::change::Approval;
use hub_state::changes::{
    approvals_in_effect, inert, summarise, ApplyLock, ChangeError, Record, Registry, ReviewRecord,
    Stamp,
};

/// The approvals of `id` in effect, as policies see them (`change.approvals`).
pub(crate) fn approvals(registry: &Registry, id: &str) -> Result<Vec<Approval>, Error> {
    let records = registry.records(id)?;
    Ok(approvals_in_effect(&records)
        .into_iter()
        .map(|review| Approval {
            login: review.stamp.author.unwrap_or_default(),
            association: review.association.unwrap_or_default(),
            commit: review.stamp.sha.unwrap_or_default(),
        })
        .collect())
}

/// `review approved by `bob` (MEMBER) of abc1234, …`: what the registry
/// holds, shown inert.
fn review_line(review: &ReviewRecord) -> String {
    let mut line = format!("review {}", review.state.as_str());
    if let Some(by) = &review.stamp.author {
        line.push_str(&format!(" by {}", inert(by)));
        if let Some(association) = &review.association {
            line.push_str(&format!(" ({})", inert(association)));
        }
    }
    if let Some(sha) = &review.stamp.sha {
        line.push_str(&format!(" of {}", inert(sha)));
    }
    line.push_str(&format!(", {}", inert(&review.stamp.time)));
    if let Some(event) = &review.event {
        line.push_str(&format!(" ({})", inert(event)));
    }
    line
}

/// `approvals in effect: bob (MEMBER) of abc1234, …` (`none`); nothing
/// for a change without reviews.
fn approvals_line(records: &[(u64, Record)]) -> String {
    if !records.iter().any(|(_, r)| matches!(r, Record::Review(_))) {
        return String::new();
    }
    let approvals = approvals_in_effect(records);
    let listed: Vec<String> = approvals
        .iter()
        .map(|review| {
            let mut text = inert(review.stamp.author.as_deref().unwrap_or_default());
            if let Some(association) = &review.association {
                text.push_str(&format!(" ({})", inert(association)));
            }
            text.push_str(&format!(
                " of {}",
                inert(review.stamp.sha.as_deref().unwrap_or("an unnamed commit"))
            ));
            text
        })
        .collect();
    match listed.is_empty() {
        true => "approvals in effect: none\n".into(),
        false => format!("approvals in effect: {}\n", listed.join(", ")),
    }
}

pub(crate) fn show(registry: &Registry, id: &str) -> Result<(), Error> {
    let records = registry.records(id)?;
    if records.is_empty() {
        return Err(ChangeError::Unknown {
            id: id.to_string(),
            registry: registry.location(),
        }
        .into());
    }
    let summary = summarise(&records);
    let mut text = format!("change {id} ({})\n", summary.phase);
    for (number, record) in &records {
        // What the registry holds is shown inert: a registry written by
        // an older version, or by hand, cannot forge a line.
        let by = |stamp: &Stamp| {
            let mut text = inert(&stamp.time);
            if let Some(author) = &stamp.author {
                text.push_str(&format!(" by {}", inert(author)));
            }
            if let Some(sha) = &stamp.sha {
                text.push_str(&format!(" at {}", inert(sha)));
            }
            text
        };
        let line = match record {
            Record::Plan(plan) => {
                let queue = match plan.queue {
                    Some(_) => ", in the merge queue",
                    None => "",
                };
                let mut line = format!(
                    "plan {} ({}{queue}), {}",
                    plan.status.as_str(),
                    inert(&plan.verb),
                    by(&plan.stamp)
                );
                if let Some(reason) = &plan.reason {
                    line.push_str(&format!(": {}", inert(reason)));
                }
                line
            }
            Record::Apply(apply) => format!(
                "apply of plan {} {} ({}), {}",
                apply.plan,
                apply.status.as_str(),
                inert(&apply.verb),
                by(&apply.stamp)
            ),
            Record::Stale { stamp, reason } => {
                format!("plans stale, {}: {}", by(stamp), inert(reason))
            }
            Record::Merged { stamp } => format!("merged, {}", by(stamp)),
            Record::Closed { stamp } => format!("closed, {}", by(stamp)),
            Record::Unlocked { stamp } => format!("apply lock released, {}", by(stamp)),
            Record::Review(review) => review_line(review),
        };
        text.push_str(&format!("{number:>4}  {line}\n"));
    }
    text.push_str(&approvals_line(&records));
    text.push_str(&lock_line(registry.holder()?.as_ref()));
    text.push('\n');
    super::output::write_stdout(text.as_bytes())
}

/// The apply lock in words: `change 3 holds the apply lock since … (…)`.
pub(crate) fn lock_line(lock: Option<&ApplyLock>) -> String {
    match lock.and_then(|l| Some((l, l.change.as_deref()?))) {
        Some((lock, holder)) => format!(
            "apply lock: held by change {} since {} ({}: {})",
            inert(holder),
            inert(&lock.since),
            lock.reason.as_str(),
            lock.reason.why()
        ),
        None => "apply lock: free".into(),
    }
}
