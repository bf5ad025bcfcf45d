//! The checks a run makes before it starts anything: where its logs go,
//! and the size of the state it would write.

use crate::order::plan::Plan;
use crate::run::error::EngineError;
use crate::run::records::log_dir;
use crate::source::stack::Stack;
use hub_params::Locked;
use hub_state as state;
use std::path::Path;

/// The log folder of the state at `state`, when there is one, is a folder
/// of the user's (see [`state::beside`]): its logs are never written
/// through a planted link.
pub(super) fn check_log_folder(state: &Path) -> Result<(), state::StateError> {
    let folder = log_dir(state);
    match state::beside::check_folder(&folder) {
        Ok(_) => Ok(()),
        Err(source) => Err(state::StateError::Beside {
            path: folder,
            source,
        }),
    }
}

/// Refuses a deploy whose parameters alone would write a state larger
/// than every command reads (see [`crate::run::size`]).
pub(super) fn check_state_size(
    stack: &Stack,
    plan: &Plan,
    locked: &Locked,
) -> Result<(), EngineError> {
    let components = plan
        .selected
        .iter()
        .filter_map(|name| Some((name.as_str(), stack.elaborated.component(name)?)));
    let (estimate, weights) = crate::run::size::estimate(locked, components);
    match crate::run::size::over_limit(estimate, weights) {
        None => Ok(()),
        Some(heaviest) => Err(EngineError::StateTooLarge {
            estimate,
            limit: hub_manifest::limits::MAX_FILE_BYTES as u64,
            heaviest,
        }),
    }
}
