//! `ci.apply.requires` of a stack: what an apply of a change
//! (`deploy --change ID`, `hub ci`'s apply) needs before anything runs,
//! checked on the plan about to be applied. Each requirement missed is
//! refused with what it needs and how to meet it; information that is
//! missing (no approval recorded, no word on mergeability, no base
//! commit) refuses too, saying what is missing.

use crate::error::{Miss, RequirementError};
use crate::request::{ChangeArgs, Trusted};
use hub_manifest::{ApplyOn, ApplyRequirement};
use hub_plan::source::stack::Stack;
use hub_state::changes::{
    approvals_in_effect, inert, summarise, PlanRecord, Record, Registry, ReviewRecord,
};
use std::path::Path;
use std::process::Command;

/// Which approvals of a change count for the commit applied, and why the
/// others do not.
#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub counted: Vec<String>,
    pub not_counted: Vec<String>,
}

/// Whether two commit ids name the same commit (either may be
/// abbreviated, to 7 digits at least).
fn same_commit(a: &str, b: &str) -> bool {
    let (a, b) = (a.to_ascii_lowercase(), b.to_ascii_lowercase());
    a.len().min(b.len()) >= 7 && (a.starts_with(&b) || b.starts_with(&a))
}

/// The approvals of `approvals` that count for `head`: of that commit, by
/// a trusted reviewer, who is not the change's author (known from the
/// event that reported the approval: unknown, it does not count).
pub(crate) fn tally(approvals: &[ReviewRecord], head: &str, trusted: &Trusted) -> Tally {
    let mut tally = Tally::default();
    for approval in approvals {
        let login = approval.stamp.author.as_deref().unwrap_or_default();
        let who = format!("`{}`", inert(login));
        let commit = approval.stamp.sha.as_deref().unwrap_or_default();
        let why_not = if !same_commit(commit, head) {
            Some(format!(
                "{who} approved commit `{}`, not `{}`",
                inert(commit),
                inert(head)
            ))
        } else if let Some(author) = approval.change_author.as_deref() {
            if author.eq_ignore_ascii_case(login) {
                Some(format!("{who} is the change's author"))
            } else if !trusted.trusts(Some(login), approval.association.as_deref()) {
                let association = approval.association.as_deref().map_or_else(
                    || "has no association the event said".to_string(),
                    |a| format!("is {}", inert(a)),
                );
                Some(format!(
                    "{who} {association}, and only {} count",
                    trusted.describe()
                ))
            } else {
                None
            }
        } else {
            Some(format!(
                "the event of {who}'s approval did not say who opened the change, so it may be their own"
            ))
        };
        match why_not {
            None => tally.counted.push(login.to_string()),
            Some(reason) => tally.not_counted.push(reason),
        }
    }
    tally
}

/// Checks `ci.apply` of `stack` for the apply of change `id` at `commit`
/// (the commit its plan was made at), with the registry beside `state`.
pub(crate) fn check(
    stack: &Stack,
    state: &Path,
    commit: Option<&str>,
    change: &ChangeArgs,
) -> Result<(), crate::error::Error> {
    let apply = &stack.elaborated.stack.ci.apply;
    let id = change.change.clone().unwrap_or_default();
    // Under `hub ci` (which says whom it trusts), a stack that applies on
    // merge or in the merge queue takes no `hub apply` comment.
    if apply.on != ApplyOn::Comment && change.trusted.is_some() && change.merged_head.is_none() {
        let miss = match apply.on {
            ApplyOn::Queue => Miss {
                requirement: "on: queue",
                reason: "that changes are applied in the merge queue (or merge train), not on a comment".into(),
                fix: "add the change to the merge queue: `hub ci` applies the queue commit's plan when it matches the approved one".into(),
            },
            _ => Miss {
                requirement: "on: merge",
                reason: "that changes are applied when they are merged, not on a comment".into(),
                fix: "merge the change: `hub ci` applies the merged commit's plan then".into(),
            },
        };
        return Err(RequirementError {
            id,
            misses: vec![miss],
        }
        .into());
    }
    let needed = apply.approvals_needed();
    let mut requires: Vec<ApplyRequirement> = apply.requires.clone();
    if needed > 0 && !requires.contains(&ApplyRequirement::Approved) {
        requires.insert(0, ApplyRequirement::Approved);
    }
    if requires.is_empty() {
        return Ok(());
    }
    let registry = Registry::open(state)?;
    let records = registry.records(&id)?;
    let trusted = change.trusted.clone().unwrap_or_default();
    let mut misses = Vec::new();
    for requirement in requires {
        let missed = match requirement {
            // On merge, approvals are of the head that was merged.
            ApplyRequirement::Approved => {
                let reviewed = match &change.merged_head {
                    Some(head) => head.as_deref(),
                    None => commit,
                };
                approved(&records, reviewed, needed, &trusted)
            }
            ApplyRequirement::Mergeable => mergeable(change.mergeable),
            ApplyRequirement::Undiverged => undiverged(&stack.base_dir, commit, change),
            ApplyRequirement::PlannedByTrusted => planned_by_trusted(&records, &trusted),
        };
        if let Some((reason, fix)) = missed {
            misses.push(Miss {
                requirement: requirement.as_str(),
                reason,
                fix,
            });
        }
    }
    match misses.is_empty() {
        true => Ok(()),
        false => Err(RequirementError { id, misses }.into()),
    }
}

type Missed = Option<(String, String)>;

const NO_COMMIT: &str = "the plan records no commit";
const PLAN_AT_COMMIT: &str =
    "plan the change at its commit (`hub ci` does; `hub plan --change ID --sha SHA`)";

fn approved(
    records: &[(u64, Record)],
    commit: Option<&str>,
    needed: u32,
    trusted: &Trusted,
) -> Missed {
    let Some(head) = commit else {
        return Some((
            format!("{needed} approval(s) of the commit applied, and {NO_COMMIT}"),
            PLAN_AT_COMMIT.into(),
        ));
    };
    let approvals = approvals_in_effect(records);
    let tally = tally(&approvals, head, trusted);
    if tally.counted.len() as u64 >= u64::from(needed) {
        return None;
    }
    let mut reason = format!(
        "{needed} approval(s) of commit `{}` by {} other than the change's author, and {} count",
        inert(head),
        trusted.describe(),
        tally.counted.len()
    );
    match tally.not_counted.is_empty() {
        true => reason.push_str(" (no approval is recorded)"),
        false => reason.push_str(&format!(" ({})", tally.not_counted.join("; "))),
    }
    Some((
        reason,
        "a trusted reviewer other than the author approves the change at this commit (an approval of an earlier commit does not count after a push), then apply again".into(),
    ))
}

fn mergeable(said: Option<bool>) -> Missed {
    match said {
        Some(true) => None,
        Some(false) => Some((
            "that the change can be merged, and the platform says it cannot".into(),
            "resolve its conflicts (or what blocks the merge), plan again and apply".into(),
        )),
        None => Some((
            "that the change can be merged, and nothing said whether it can".into(),
            "the `pull_request` event's `mergeable`, or `HUB_CI_MERGEABLE` in the job (`gh pr view NUMBER --json mergeable --jq .mergeable`; a GitLab relay signs it), or `--mergeable true` of `hub deploy --change`".into(),
        )),
    }
}

fn undiverged(dir: &Path, commit: Option<&str>, change: &ChangeArgs) -> Missed {
    let fix_base = "the head of the base branch as `HUB_CI_BASE_SHA` in the job (`git rev-parse origin/main` after a fetch; a GitLab relay signs it), or `--base-sha SHA` of `hub deploy --change`";
    let Some(head) = commit else {
        return Some((
            format!("that the change contains its base branch's head, and {NO_COMMIT}"),
            PLAN_AT_COMMIT.into(),
        ));
    };
    let Some(base) = change.base_sha.as_deref() else {
        return Some((
            "that the change contains its base branch's head, and nothing said which commit that is".into(),
            fix_base.into(),
        ));
    };
    if hub_state::changes::check_sha(base, "the base commit").is_err() {
        return Some((
            format!(
                "that the change contains its base branch's head, and `{}` is not a commit id",
                inert(base)
            ),
            fix_base.into(),
        ));
    }
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["merge-base", "--is-ancestor", base, head])
        .output();
    let merge = "merge (or rebase onto) the base branch, push, and apply the new plan";
    match output.as_ref().map(|o| o.status.code()) {
        Ok(Some(0)) => None,
        Ok(Some(1)) => Some((
            format!(
                "that commit `{}` contains the base branch's head `{}`, and it does not",
                inert(head),
                inert(base)
            ),
            merge.into(),
        )),
        _ => {
            let said = output.map_or_else(
                |e| e.to_string(),
                |o| String::from_utf8_lossy(&o.stderr).trim().to_string(),
            );
            Some((
                format!(
                    "that commit `{}` contains the base branch's head `{}`, and git cannot tell in `{}` ({})",
                    inert(head),
                    inert(base),
                    dir.display(),
                    inert(&said)
                ),
                "run in a checkout that has both commits (`actions/checkout` with `fetch-depth: 0`, `git fetch origin BASE`)".into(),
            ))
        }
    }
}

fn planned_by_trusted(records: &[(u64, Record)], trusted: &Trusted) -> Missed {
    let summary = summarise(records);
    let (number, plan): (u64, PlanRecord) = summary.latest_plan?;
    let author = plan.stamp.author.as_deref();
    if trusted.trusts(author, plan.association.as_deref()) {
        return None;
    }
    let who = author.map_or_else(
        || "an unknown author".to_string(),
        |a| format!("`{}`", inert(a)),
    );
    let association = plan.association.as_deref().map_or_else(
        || "no association recorded (a plan made outside `hub ci`)".to_string(),
        |a| format!("association {}", inert(a)),
    );
    Some((
        format!(
            "that the plan applied was made for a trusted author ({}), and plan {number} was made for {who}, with {association}",
            trusted.describe()
        ),
        "a trusted author plans the change again (`hub plan` in a comment), then apply".into(),
    ))
}
