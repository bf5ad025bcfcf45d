//! What a change's records add up to, and the rules an apply must pass
//! before anything runs.

use super::{
    inert, ApplyLock, ChangeError, Held, PlanRecord, Record, Registry, ReviewRecord, ReviewState,
    Status,
};
use crate::clock::Clock;
use crate::lock::{liveness, Liveness, LockInfo};

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
            Record::Stale { .. } | Record::Unlocked { .. } | Record::Review(_) => {}
            Record::Merged { .. } => summary.phase = "merged",
            Record::Closed { .. } => summary.phase = "closed",
        }
    }
    summary
}

/// The approvals of `records` (in order) still in effect: each
/// reviewer's latest review, when it approved. A later `changes
/// requested` or dismissal by the same reviewer removes their approval; an
/// approval of another commit is kept here (with its commit): whether it
/// counts for the commit applied is the apply's rule.
pub fn approvals_in_effect(records: &[(u64, Record)]) -> Vec<ReviewRecord> {
    let mut latest: Vec<ReviewRecord> = Vec::new();
    for (_, record) in records {
        let Record::Review(review) = record else {
            continue;
        };
        // Logins are case-insensitive on GitHub and GitLab.
        let same = |r: &ReviewRecord| match (&r.stamp.author, &review.stamp.author) {
            (Some(a), Some(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        };
        latest.retain(|r| !same(r));
        latest.push(review.clone());
    }
    latest.retain(|r| r.state == ReviewState::Approved && r.stamp.author.is_some());
    latest
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
                return Err(held(id, &lock, state));
            }
        }
        let summary = summarise(&self.records(id)?);
        let stack = self.stack_for(summary.latest_plan.as_ref().map(|(_, plan)| plan));
        let Some((number, plan)) = summary.latest_plan else {
            return Err(ChangeError::NoPlan {
                id: id.to_string(),
                state,
                stack: stack.as_str().into(),
            });
        };
        let time = plan.stamp.time.clone();
        if plan.status == Status::Failed {
            return Err(ChangeError::PlanFailed {
                id: id.to_string(),
                time,
                reason: plan
                    .reason
                    .as_deref()
                    .map_or_else(|| "no reason was recorded".into(), inert),
                state,
                stack: stack.as_str().into(),
            });
        }
        if let Some(reason) = summary.stale {
            return Err(ChangeError::PlanStale {
                id: id.to_string(),
                time,
                reason: inert(&reason),
                state,
                stack: stack.as_str().into(),
            });
        }
        if plan.verb != verb {
            return Err(ChangeError::WrongVerb {
                id: id.to_string(),
                planned: inert(&plan.verb),
                verb: verb.to_string(),
                state,
                stack: stack.as_str().into(),
            });
        }
        Ok((number, plan))
    }
}

/// The refusal of `id` while another change holds `lock`; what the lock
/// says is shown inert.
fn held(id: &str, lock: &ApplyLock, state: String) -> ChangeError {
    ChangeError::Held {
        id: id.to_string(),
        holder: inert(lock.change.as_deref().unwrap_or_default()),
        since: inert(&lock.since),
        why: lock.reason.why(),
        state,
    }
}

/// Whether the apply `run` recorded in an apply lock still runs: on this
/// host, its process is alive (and the same one, by its start time).
/// Another host's cannot be checked from here: the state's own lock
/// keeps two runs apart there.
fn still_applying(lock: &ApplyLock) -> Option<&LockInfo> {
    let run = lock.run.as_ref()?;
    (lock.reason == Held::Applying && liveness(run) == Liveness::Alive).then_some(run)
}

/// What an apply writes in the lock, and what was there before.
#[derive(Debug, Clone)]
pub struct Taken {
    /// The lock as this apply wrote it.
    pub lock: ApplyLock,
    /// The lock as it was (`None`: there was none).
    pub before: Option<ApplyLock>,
}

impl Registry {
    /// Takes the apply lock for `id` (applying, by `run`), or keeps it
    /// when `id` holds it; refused when another change holds it, or when
    /// another apply of `id` still runs on this host.
    pub fn take_lock(
        &self,
        id: &str,
        run: &LockInfo,
        stamp: (Option<String>, Option<String>),
        clock: &Clock,
    ) -> Result<Taken, ChangeError> {
        let state = self.state().display().to_string();
        let (sha, author) = stamp;
        self.update_lock(clock, |current| {
            if let Some(lock) = current.filter(|l| l.change.as_deref() != Some(id)) {
                return Err(held(id, lock, state.clone()));
            }
            if let Some(other) = current.and_then(still_applying) {
                return Err(ChangeError::Applying {
                    id: id.to_string(),
                    holder: Box::new(other.clone()),
                });
            }
            let lock = ApplyLock {
                change: Some(id.to_string()),
                since: current.map_or_else(|| clock.now(), |l| l.since.clone()),
                reason: Held::Applying,
                sha: sha.clone(),
                author: author.clone(),
                run: Some(run.clone()),
            };
            let taken = Taken {
                lock: lock.clone(),
                before: current.cloned(),
            };
            Ok((Some(lock), taken))
        })
    }

    /// Puts the lock back as it was before `taken`, when it is still the
    /// one `taken` wrote: for an apply that ran nothing.
    pub fn give_back(&self, taken: &Taken, clock: &Clock) -> Result<(), ChangeError> {
        self.update_lock(clock, |current| {
            if current != Some(&taken.lock) {
                return Ok((None, ()));
            }
            let back = taken.before.clone().unwrap_or_else(|| ApplyLock {
                change: None,
                since: clock.now(),
                ..taken.lock.clone()
            });
            let back = ApplyLock {
                run: back.change.is_some().then_some(back.run).flatten(),
                ..back
            };
            Ok((Some(back), ()))
        })
    }
}
