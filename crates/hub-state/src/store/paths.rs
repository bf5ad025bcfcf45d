//! Where the files of a local state are: the state's real location (links
//! followed) and the backup, lock and journal named after it.

use super::files::folder_of;
use crate::is_remote;
use std::path::{Path, PathBuf};

/// `STATE.backup`: the previous content of `STATE` (beside the state's
/// real location, see [`real_location`]).
pub fn backup_path(state: &Path) -> PathBuf {
    with_suffix(&real_location(state), ".backup")
}

/// `STATE.lock`: present while a run holds the state (beside the state's
/// real location, see [`real_location`]).
pub fn lock_path(state: &Path) -> PathBuf {
    with_suffix(&real_location(state), ".lock")
}

/// Where the state at `path` really is: symbolic links followed (also a
/// link to a file that does not exist yet), a relative path and `.` and
/// `..` resolved. Every file kept beside a state is named after this, so
/// that runs given different paths to one state (a link, a relative
/// path) share one lock, one journal and one log folder. Where the file
/// does not exist yet its folder is resolved; where the folder does not
/// exist either, the path is only made absolute. A path that needs no
/// resolving (no link, no `..`) is returned as given, so that messages
/// keep the path the user wrote. A remote location is returned as it is.
pub fn real_location(path: &Path) -> PathBuf {
    shown_location(path, resolved_location(path))
}

/// [`real_location`] of `path`, given its [`resolved_location`].
pub(crate) fn shown_location(path: &Path, resolved: PathBuf) -> PathBuf {
    match std::path::absolute(path) {
        Ok(absolute) if absolute == resolved => path.to_path_buf(),
        _ => resolved,
    }
}

/// [`real_location`], always absolute: the same for every path to one
/// state.
pub(crate) fn resolved_location(path: &Path) -> PathBuf {
    if is_remote(path) {
        return path.to_path_buf();
    }
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let target = resolve_link(path);
    let absolute = std::path::absolute(&target).unwrap_or(target);
    match (absolute.parent(), absolute.file_name()) {
        (Some(parent), Some(name)) => std::fs::canonicalize(parent)
            .map(|parent| parent.join(name))
            .unwrap_or(absolute),
        _ => absolute,
    }
}

/// `STATE.journal`: the records appended since the last fold.
pub fn journal_path(state: &Path) -> PathBuf {
    let mut name = state.as_os_str().to_os_string();
    name.push(".journal");
    PathBuf::from(name)
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// The journal of the state at `path`: beside its real location (see
/// [`real_location`]).
pub(crate) fn journal_of(path: &Path) -> PathBuf {
    journal_path(&real_location(path))
}

/// A symbolic link is followed (also one whose target does not exist
/// yet), so that the file it points to is replaced rather than the link.
fn resolve_link(path: &Path) -> PathBuf {
    let mut current = path.to_path_buf();
    for _ in 0..40 {
        let is_link = std::fs::symlink_metadata(&current).is_ok_and(|m| m.file_type().is_symlink());
        let target = match std::fs::read_link(&current) {
            Ok(target) if is_link => target,
            _ => return current,
        };
        current = folder_of(&current).join(target);
    }
    current
}
