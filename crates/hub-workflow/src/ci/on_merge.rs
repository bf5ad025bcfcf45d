//! `ci.apply.on: merge`: when a change is merged, `hub ci` plans the
//! merged commit for the change and applies that plan, under the same
//! apply lock and `ci.apply.requires` as a `hub apply` comment; the merge
//! is recorded (and the change's lock released) only once the apply
//! succeeded. A failed or refused apply records no merge: the change
//! keeps the apply lock as a failed apply keeps it today.

use super::comment::Done;
use super::steps::{apply, merged, plan, Asked};
use super::Event;
use crate::error::Error;
use crate::request::{ChangeArgs, CiArgs};
use hub_manifest::diag::Warnings;
use hub_manifest::ApplyOn;
use std::path::PathBuf;

/// Whether the stack says `ci.apply.on: merge`.
pub(super) fn applies_on_merge(args: &CiArgs) -> Result<bool, Error> {
    Ok(ci_settings(args)?.apply.on == ApplyOn::Merge)
}

/// The stack's `ci:` section (empty when no stack is given).
pub(super) fn ci_settings(args: &CiArgs) -> Result<hub_manifest::Ci, Error> {
    let Some((first, params)) = args.stack.manifest.split_first() else {
        return Ok(hub_manifest::Ci::default());
    };
    let params: Vec<PathBuf> = params.to_vec();
    // Read again by the plan below, which reports what it warns about.
    let mut quiet = Warnings::already_reported();
    let stack = hub_plan::source::stack::Stack::load(
        first,
        &params,
        args.stack.base_dir.as_deref(),
        &indexmap::IndexMap::new(),
        &mut quiet,
    )?;
    Ok(stack.elaborated.stack.ci)
}

/// The merged change's merged commit planned and applied; the merge
/// recorded once the apply succeeded.
pub(super) fn apply_merged(
    args: &CiArgs,
    event: &Event,
    mut change: ChangeArgs,
    warnings: &mut Warnings,
) -> Done {
    let Some(commit) = event.merge_commit.clone() else {
        return Done::Refused(format!(
            "the stack applies changes when they are merged (`ci.apply.on: merge`), and {} does not say which commit the merge made: GitHub's `pull_request.merge_commit_sha`, or `HUB_CI_MERGE_SHA` signed by the relay",
            event.platform.event_noun()
        ));
    };
    if let Err(error) = hub_state::changes::check_sha(&commit, "the merged commit") {
        return Done::Failed(crate::commands::render_error(&error.into()));
    }
    change.merged_head = Some(event.sha.clone());
    change.sha = Some(commit);
    if let Err(error) = plan(
        args,
        change.clone(),
        Asked {
            components: Vec::new(),
            affected: None,
            steps: args.plan_steps,
        },
        warnings,
    ) {
        return Done::Failed(crate::commands::render_error(&error));
    }
    let ran = apply(args, change, warnings);
    if !matches!(ran, Done::Applied { error: None, .. }) {
        // Refused, or failed: no merge recorded, the lock as the apply
        // left it.
        return ran;
    }
    match merged(args, event) {
        Ok(_) => ran,
        Err(error) => Done::Failed(crate::commands::render_error(&error)),
    }
}
