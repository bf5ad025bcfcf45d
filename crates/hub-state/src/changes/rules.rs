//! What a change's records add up to, and the rules an apply must pass
//! before anything runs.

use super::{ChangeError, PlanRecord, Record, Registry, Status};

/// One change, as `hub change list` and `show` tell it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// Its latest plan: number and record.
    pub latest_plan: Option<(u64, PlanRecord)>,
    /// Why the latest plan is stale (a record after it said so).
    pub stale: Option<String>,
    pub applies: usize,
    /// The latest apply: time and status.
    pub last_apply: Option<(String, Status)>,
    /// `open`, `merged` or `closed`: the latest of these records.
    pub phase: &'static str,
}

/// The summary of `records` (in order).
pub fn summarise(records: &[(u64, Record)]) -> Summary {
    let mut summary = Summary {
        phase: "open",
        ..Summary::default()
    };
    for (number, record) in records {
        match record {
            Record::Plan(plan) => {
                summary.latest_plan = Some((*number, plan.clone()));
                summary.stale = None;
                summary.phase = "open";
            }
            Record::Apply(apply) => {
                summary.applies += 1;
                summary.last_apply = Some((apply.stamp.time.clone(), apply.status));
                summary.phase = "open";
            }
            Record::Stale { reason, .. } if summary.latest_plan.is_some() => {
                summary.stale = Some(reason.clone());
            }
            Record::Stale { .. } | Record::Unlocked { .. } => {}
            Record::Merged { .. } => summary.phase = "merged",
            Record::Closed { .. } => summary.phase = "closed",
        }
    }
    summary
}

impl Registry {
    /// The plan an apply (`verb`: deploy or undeploy) of `id` runs, after
    /// the rules: no other change holds the apply lock, `id` has a plan,
    /// its latest plan succeeded, is for `verb`, and nothing made it
    /// stale since.
    pub fn plan_to_apply(&self, id: &str, verb: &str) -> Result<(u64, PlanRecord), ChangeError> {
        let state = self.state().display().to_string();
        if let Some(lock) = self.holder()? {
            let holder = lock.change.clone().unwrap_or_default();
            if holder != id {
                return Err(ChangeError::Held {
                    id: id.to_string(),
                    holder,
                    since: lock.since,
                    why: lock.reason.why(),
                    state,
                });
            }
        }
        let summary = summarise(&self.records(id)?);
        let Some((number, plan)) = summary.latest_plan else {
            return Err(ChangeError::NoPlan {
                id: id.to_string(),
                state,
            });
        };
        let time = plan.stamp.time.clone();
        if plan.status == Status::Failed {
            return Err(ChangeError::PlanFailed {
                id: id.to_string(),
                time,
                reason: plan
                    .reason
                    .clone()
                    .unwrap_or_else(|| "no reason was recorded".into()),
                state,
            });
        }
        if let Some(reason) = summary.stale {
            return Err(ChangeError::PlanStale {
                id: id.to_string(),
                time,
                reason,
                state,
            });
        }
        if plan.verb != verb {
            return Err(ChangeError::WrongVerb {
                id: id.to_string(),
                planned: plan.verb,
                verb: verb.to_string(),
                state,
            });
        }
        Ok((number, plan))
    }
}
