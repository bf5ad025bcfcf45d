//! Reading a state as hub sees it: the file, with its journal applied.

use super::codec::{existing_backup, parse_source, read_bytes, state_source, unseal};
use super::paths::real_location;
use crate::model::State;
use crate::{is_remote, StateError};
use hub_manifest::diag::Warnings;
use std::path::Path;

/// Reads the state at `path` as hub sees it: the file, with the records of
/// its journal (`STATE.journal`, see [`crate::journal`]) applied in memory;
/// `Ok(None)` when the file does not exist. Nothing is written: every
/// command reads the state through this function, the read-only ones
/// without a lock.
pub fn read(path: &Path, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
    if is_remote(path) {
        return crate::remote::store::read(path, warnings);
    }
    let Some(mut state) = read_file(path, warnings)? else {
        return Ok(None);
    };
    crate::journal::fold_into(&real_location(path), &mut state)?;
    Ok(Some(state))
}

/// Reads the state file alone, without its journal: the state as of its
/// last fold; `Ok(None)` when it does not exist.
pub fn read_file(path: &Path, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
    if is_remote(path) {
        return Err(StateError::Remote {
            path: path.to_path_buf(),
        });
    }
    let Some(bytes) = read_bytes(path, existing_backup(path))? else {
        return Ok(None);
    };
    let bytes = unseal(path, bytes)?;
    let source = state_source(path, bytes)?;
    parse_source(&source, warnings).map(Some)
}
