//! `hub ci` on a review (GitHub `pull_request_review`, a GitLab approval
//! the relay signed): the review recorded in the change registry, and
//! what the approvals of the change's head add up to now.

use super::comment::Done;
use super::steps::first_state;
use super::{Access, Event, Review};
use crate::commands::requirements::{tally, Tally};
use crate::error::Error;
use crate::request::CiArgs;
use hub_state::changes::{
    approvals_in_effect, check_author, check_sha, Record, Registry, ReviewRecord, Stamp,
};

/// Records `review` of the event's change; says what the approvals of the
/// change's head (the event's commit) add up to.
pub(super) fn record(
    args: &CiArgs,
    event: &Event,
    review: &Review,
    access: &Access,
) -> Result<Done, Error> {
    let id = event.change.clone().unwrap_or_default();
    let reviewer = event.author.clone().unwrap_or_default();
    // What the event says is data: a login and commits, or refused.
    check_author(&reviewer, "the reviewer's login")?;
    if let Some(author) = &event.change_author {
        check_author(author, "the change's author")?;
    }
    for sha in [&review.commit, &event.sha].into_iter().flatten() {
        check_sha(sha, "the reviewed commit")?;
    }
    let state = first_state(args).ok_or_else(|| Error::Usage {
        flag: "-s",
        value: args.state.clone(),
        reason: "give the state whose changes to use".into(),
    })?;
    let registry = Registry::open(&state)?;
    let clock = crate::commands::common::clock()?;
    let record = ReviewRecord {
        stamp: Stamp {
            time: clock.now(),
            author: Some(reviewer.clone()),
            sha: review.commit.clone(),
        },
        state: review.state,
        association: event.association.clone(),
        change_author: event.change_author.clone(),
        event: Some(event.name.clone()),
    };
    let number = registry.append(&id, &Record::Review(record))?;
    let commit = review.commit.as_deref().map_or_else(
        || "an unnamed commit".to_string(),
        |sha| format!("commit `{}`", short(sha)),
    );
    let mut said = format!(
        "review {number} by `{reviewer}` of {commit} recorded: {}",
        review.state.as_str()
    );
    if let Some(head) = &event.sha {
        let approvals = approvals_in_effect(&registry.records(&id)?);
        let Tally { counted, .. } = tally(&approvals, head, &access.trusted());
        let names: Vec<String> = counted.iter().map(|login| format!("`{login}`")).collect();
        said.push_str(&format!(
            "; approvals of the head `{}` that count: {}{}",
            short(head),
            counted.len(),
            match names.is_empty() {
                true => String::new(),
                false => format!(" ({})", names.join(", ")),
            }
        ));
    }
    Ok(Done::Said(said))
}

fn short(sha: &str) -> String {
    sha.chars().take(12).collect()
}
