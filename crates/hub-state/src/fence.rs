//! Fencing: a run proves that it still owns a state before it starts a
//! component and before it replaces the state. It owns a state while its
//! lock is still the one it took (same lock id) and the state is still
//! the version it last read or wrote. A run that lost the state (its lock
//! was removed with `hub unlock --force`, another run or a push wrote
//! since) starts nothing more and writes nothing more there.

use super::StateError;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// What tells one version of a local state file from another without
/// reading it: a write replaces the file (a new inode) or changes its size
/// or modification time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct FileIdentity {
    device: u64,
    inode: u64,
    size: u64,
    modified: (i64, i64),
}

/// The identity of the file at `path` now; `None` when there is none.
pub(super) fn identity_of(path: &Path) -> Option<FileIdentity> {
    let meta = std::fs::metadata(path).ok()?;
    Some(FileIdentity {
        device: meta.dev(),
        inode: meta.ino(),
        size: meta.size(),
        modified: (meta.mtime(), meta.mtime_nsec()),
    })
}

/// What a local writer knows of the state it last read or wrote.
pub(super) struct LocalOwnership<'a> {
    /// The state as given (its lock is beside it).
    pub given: &'a Path,
    /// The file written (symbolic links followed).
    pub target: &'a Path,
    /// The id of the lock this run holds on the state, if it holds one.
    pub lock_id: Option<&'a str>,
    /// The file as this run last read or wrote it.
    pub seen: Option<FileIdentity>,
    /// Its serial then (0: there was no file).
    pub serial: u64,
}

/// Why the run no longer owns the local state; `None` while it does.
pub(super) fn local_owner_lost(owner: &LocalOwnership<'_>) -> Option<String> {
    if let Some(id) = owner.lock_id {
        if let Err(reason) = super::lock::still_held(owner.given, id) {
            return Some(reason);
        }
    }
    let now = identity_of(owner.target);
    if now == owner.seen {
        return None;
    }
    let shown = owner.target.display();
    if now.is_none() {
        return Some(format!(
            "`{shown}` was removed since this run last wrote it"
        ));
    }
    if !owner.target.is_file() {
        // Not a state file any more (a folder…): the write itself fails,
        // naming it.
        return None;
    }
    let serial = std::fs::read(owner.target)
        .ok()
        .and_then(|bytes| super::store::unseal(owner.target, bytes).ok())
        .map_or(0, |bytes| super::store::serial_of(&bytes));
    match (owner.seen, serial == owner.serial) {
        (Some(_), true) => None,
        _ => Some(format!(
            "`{shown}` is at serial {serial} now, not the serial {} this run last wrote (another run, or a push)",
            owner.serial
        )),
    }
}

/// The error of a write refused because the run lost the state at
/// `location`: the run stops starting components.
pub fn lost(location: &Path, reason: String) -> StateError {
    StateError::RemoteConflict {
        location: location.display().to_string(),
        reason,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_replaced_by_another_serial_is_lost_and_an_untouched_one_is_not() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        std::fs::write(&state, "version: 1\nkind: state\nserial: 3\n").expect("write");
        let seen = identity_of(&state);
        let owner = LocalOwnership {
            given: &state,
            target: &state,
            lock_id: None,
            seen,
            serial: 3,
        };
        assert_eq!(local_owner_lost(&owner), None);
        std::fs::write(&state, "version: 1\nkind: state\nserial: 9\n").expect("write");
        let reason = local_owner_lost(&owner).expect("lost");
        assert!(reason.contains("serial 9"), "{reason}");
        std::fs::remove_file(&state).expect("rm");
        let reason = local_owner_lost(&owner).expect("lost");
        assert!(reason.contains("was removed"), "{reason}");
    }

    #[test]
    fn a_lock_that_is_not_the_runs_own_any_more_is_lost() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let owner = LocalOwnership {
            given: &state,
            target: &state,
            lock_id: Some("mine"),
            seen: None,
            serial: 0,
        };
        let reason = local_owner_lost(&owner).expect("no lock file");
        assert!(reason.contains("was removed"), "{reason}");
    }
}
