//! The lock on a state: `STATE.lock`, present while a deploy, undeploy or
//! invoke works on `STATE`.
//!
//! The lock file is created atomically — written under a temporary name,
//! then hard-linked to `STATE.lock`, which fails when the lock exists (on
//! file systems without hard links: created with `O_EXCL`, then written).
//! It holds, as YAML, who holds the lock:
//!
//! ```yaml
//! pid: 4242
//! host: build-7
//! user: alice
//! operation: deploy
//! started: 2024-05-01T10:00:00Z
//! id: 0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e
//! ```
//!
//! On Linux it also records the holder's process start time
//! (`processStart`, clock ticks after boot, from `/proc/PID/stat`) and the
//! kernel's boot id (`bootId`), so that a later process that happens to get
//! the same pid, or any process after a reboot, is not taken for the
//! holder. Older readers ignore these two keys.
//!
//! A second run on the same state fails at once, naming the holder. A lock
//! whose holder ran on this host and is no longer alive is *stale*: the
//! next run removes it (moved aside under a unique name first, and removed
//! only if it is still the dead holder's, so that two runs clearing it at
//! once cannot remove each other's new lock) and says so with a warning
//! naming the dead run. A holder on another host cannot be checked: its
//! lock refuses the run; `hub unlock --force STATE` removes any lock. The reference tool never creates
//! lock files and refuses to run while `STATE.lock` exists, so the two
//! tools cannot work on one state at the same time.
//!
//! [`StateLock`] releases the lock when dropped, unless the lock file no
//! longer carries its `id` (someone removed it and another run took it).
//!
//! A run may wait for a live holder instead of failing at once
//! (`--lock-timeout`): [`LockWait`] retries any attempt that failed only
//! because the lock is held, with a growing pause, until its timeout. It
//! knows nothing of files, so every kind of lock takes the same parameter.
//!
//! Readers that take no lock (`hub plan`) may run at the same time as each
//! other, but not while a run holds the lock: what they read would be
//! stale at once. [`await_unheld`] refuses (or waits) as taking the lock
//! would, without taking it; a dead holder's lock does not count.

use super::clock::{random_uuid, Clock};
use super::store::{lock_path, sync_folder};
use super::{is_remote, StateError};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

mod holder;
mod info;
mod wait;

pub use crate::error::duration_text;
use holder::HELD;
pub use holder::{hostname, liveness, user_name, Liveness};
pub use info::LockInfo;
pub use wait::LockWait;

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct StateLock {
    lock: PathBuf,
    info: LockInfo,
    released: bool,
    /// The dead holder whose stale lock was removed to take this one.
    cleared: Option<LockInfo>,
}

/// For a reader that takes no lock (`hub plan`): returns once no live run
/// holds the lock of any of `states`, waiting as `wait` allows; fails
/// otherwise as taking the lock would, naming the holder. A dead holder's
/// lock does not count (the next run that takes the lock removes it).
pub fn await_unheld(states: &[PathBuf], wait: &LockWait<'_>) -> Result<(), StateError> {
    wait.retry(|| states.iter().try_for_each(|state| check_unheld(state)))
}

fn check_unheld(state: &Path) -> Result<(), StateError> {
    if is_remote(state) {
        return super::remote::check_unheld(state);
    }
    let lock = lock_path(state);
    match read_holder(&lock) {
        Ok(None) => Ok(()),
        Ok(Some(holder)) if liveness(&holder) == Liveness::Dead => Ok(()),
        Ok(Some(holder)) => Err(held_error(state, &lock, holder, false)),
        Err(reason) => Err(StateError::UnreadableLock {
            state: state.to_path_buf(),
            lock,
            reason,
        }),
    }
}

impl StateLock {
    /// [`StateLock::acquire`], waiting for a live holder as `wait` allows.
    pub fn acquire_waiting(
        state: &Path,
        operation: &str,
        clock: &Clock,
        wait: &LockWait<'_>,
    ) -> Result<StateLock, StateError> {
        wait.retry(|| StateLock::acquire(state, operation, clock))
    }

    /// Takes the lock on `state` for `operation`, or fails at once naming
    /// the holder.
    pub fn acquire(state: &Path, operation: &str, clock: &Clock) -> Result<StateLock, StateError> {
        if is_remote(state) {
            return Err(StateError::Remote {
                path: state.to_path_buf(),
            });
        }
        let lock = lock_path(state);
        let info = LockInfo::current(operation, clock);
        let text = yaml_serde::to_string(&info)?;
        if let Ok(mut ids) = HELD.lock() {
            ids.push(info.id.clone());
        }
        let mut guard = StateLock {
            lock,
            info,
            released: true,
            cleared: None,
        };
        // A lock seen but gone by the time it is read was released just
        // then: try again, a few times.
        for _ in 0..3 {
            if create_lock_file(&guard.lock, text.as_bytes())? {
                guard.released = false;
                return Ok(guard);
            }
            match read_holder(&guard.lock) {
                Ok(None) => continue,
                Ok(Some(holder)) if liveness(&holder) == Liveness::Dead => {
                    if clear_stale(&guard.lock, &holder)? {
                        guard.cleared = Some(holder);
                    }
                }
                Ok(Some(holder)) => return Err(held_error(state, &guard.lock, holder, false)),
                Err(reason) => {
                    return Err(StateError::UnreadableLock {
                        state: state.to_path_buf(),
                        lock: guard.lock.clone(),
                        reason,
                    })
                }
            }
        }
        Err(StateError::LockFile {
            lock: guard.lock.clone(),
            action: "create",
            source: std::io::Error::other("it keeps appearing and disappearing"),
        })
    }

    pub fn info(&self) -> &LockInfo {
        &self.info
    }

    pub fn path(&self) -> &Path {
        &self.lock
    }

    /// The dead run whose stale lock was removed to take this one.
    pub fn cleared(&self) -> Option<&LockInfo> {
        self.cleared.as_ref()
    }

    /// Removes the lock file, reporting failures (dropping the guard does
    /// the same silently).
    pub fn release(mut self) -> Result<(), StateError> {
        self.remove_if_ours()
    }

    fn remove_if_ours(&mut self) -> Result<(), StateError> {
        if let Ok(mut ids) = HELD.lock() {
            ids.retain(|id| *id != self.info.id);
        }
        if std::mem::replace(&mut self.released, true) {
            return Ok(());
        }
        let ours = matches!(read_holder(&self.lock), Ok(Some(holder)) if holder.id == self.info.id);
        if !ours {
            return Ok(());
        }
        remove(&self.lock)
    }
}

impl Drop for StateLock {
    fn drop(&mut self) {
        let _ = self.remove_if_ours();
    }
}

/// The id of the lock on `state` when this process holds it (a writer
/// opened under the lock remembers it, see [`still_held`]); `None` when
/// there is no lock file or another process's.
pub fn held_here(state: &Path) -> Option<String> {
    let holder = read_holder(&lock_path(state)).ok()??;
    let ours = HELD.lock().is_ok_and(|ids| ids.contains(&holder.id));
    ours.then_some(holder.id)
}

/// Whether the lock on `state` is still the one with `id`; the reason
/// when it is not (removed by `hub unlock --force`, maybe taken by
/// another run since).
pub fn still_held(state: &Path, id: &str) -> Result<(), String> {
    let lock = lock_path(state);
    match read_holder(&lock) {
        Ok(Some(holder)) if holder.id == id => Ok(()),
        Ok(Some(holder)) => Err(format!(
            "its lock `{}` now belongs to {holder}",
            lock.display()
        )),
        Ok(None) => Err(format!(
            "its lock `{}` was removed while this run held it (`hub unlock --force`, or by hand)",
            lock.display()
        )),
        Err(reason) => Err(format!(
            "its lock `{}` was replaced: {reason}",
            lock.display()
        )),
    }
}

/// Creates `lock` holding `bytes`; `Ok(false)` when it already exists.
fn create_lock_file(lock: &Path, bytes: &[u8]) -> Result<bool, StateError> {
    let failure = |action: &'static str| {
        let lock = lock.to_path_buf();
        move |source| StateError::LockFile {
            lock,
            action,
            source,
        }
    };
    let (folder, temp) = beside(lock, "tmp");
    write_new(&temp, bytes).map_err(failure("create"))?;
    let linked = std::fs::hard_link(&temp, lock);
    let _ = std::fs::remove_file(&temp);
    let created = match linked {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        // No hard links here: exclusive creation, then the content.
        Err(_) => match write_exclusive(lock, bytes) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
            Err(e) => return Err(failure("create")(e)),
        },
    };
    if created {
        sync_folder(&folder).map_err(failure("create"))?;
    }
    Ok(created)
}

/// The folder of `lock` and a unique hidden name beside it:
/// `.STATE.lock.ID.SUFFIX`.
fn beside(lock: &Path, suffix: &str) -> (PathBuf, PathBuf) {
    let folder = match lock.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = lock
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let path = folder.join(format!(".{name}.{}.{suffix}", random_uuid()));
    (folder, path)
}

/// Removes the stale lock of `dead`. The lock is first renamed aside, which
/// only one run can do; if what was renamed is not `dead`'s lock (another
/// run replaced it in the meantime) it is put back. `Ok(true)` when the
/// stale lock is gone.
fn clear_stale(lock: &Path, dead: &LockInfo) -> Result<bool, StateError> {
    let (_, aside) = beside(lock, "stale");
    match std::fs::rename(lock, &aside) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(source) => {
            return Err(StateError::LockFile {
                lock: lock.to_path_buf(),
                action: "remove",
                source,
            })
        }
    }
    let still_dead = matches!(read_holder(&aside), Ok(Some(holder)) if holder.id == dead.id && holder.pid == dead.pid);
    if !still_dead {
        let _ = std::fs::hard_link(&aside, lock);
    }
    let _ = std::fs::remove_file(&aside);
    Ok(still_dead)
}

fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => write_exclusive(path, bytes),
    }
}

/// Creates `path` (failing when it exists) holding `bytes`; a file that
/// could not be written completely is removed.
fn write_exclusive(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let options = &mut std::fs::OpenOptions::new();
    let options = options.write(true).create_new(true);
    let mut file = super::private::open(path, options, super::private::FILE_MODE)?;
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    if written.is_err() {
        let _ = std::fs::remove_file(path);
    }
    written
}

/// `Ok(None)`: no lock file. `Err(reason)`: a lock file that does not say
/// who holds it.
fn read_holder(lock: &Path) -> Result<Option<LockInfo>, String> {
    let text = match read_lock_text(lock) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    parse_holder(&text).map(Some)
}

/// A lock file is a few lines: more than this is not a lock of ours.
const MAX_LOCK_BYTES: u64 = 64 * 1024;

fn read_lock_text(lock: &Path) -> std::io::Result<String> {
    use std::io::Read;
    // Another user's run may hold the lock, but a link is never followed.
    super::beside::check_shared_file(lock)?;
    let mut text = String::new();
    std::fs::File::open(lock)?
        .take(MAX_LOCK_BYTES)
        .read_to_string(&mut text)?;
    Ok(text)
}

fn parse_holder(text: &str) -> Result<LockInfo, String> {
    if text.trim().is_empty() {
        return Err("it is empty (another tool may have created it)".into());
    }
    hub_manifest::limits::scan(text)
        .map_err(|e| format!("it is not a lock of hub ({})", e.message))?;
    let info: LockInfo = yaml_serde::from_str(text)
        .map_err(|e| format!("it does not say who holds the lock ({e})"))?;
    if info.pid == 0 {
        return Err("it names no process".into());
    }
    Ok(info)
}

fn held_error(state: &Path, lock: &Path, holder: LockInfo, unlocking: bool) -> StateError {
    let state = state.to_path_buf();
    let lock = lock.to_path_buf();
    match liveness(&holder) {
        Liveness::Dead if !unlocking => StateError::StaleLock {
            state,
            lock,
            holder: Box::new(holder),
        },
        live => StateError::Locked {
            state,
            lock,
            holder: Box::new(holder),
            elsewhere: live == Liveness::Elsewhere,
            unlocking,
        },
    }
}

fn remove(lock: &Path) -> Result<(), StateError> {
    std::fs::remove_file(lock).map_err(|source| StateError::LockFile {
        lock: lock.to_path_buf(),
        action: "remove",
        source,
    })
}

/// What `hub unlock` removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unlocked {
    pub lock: PathBuf,
    /// `None` when the lock file did not say who held it.
    pub holder: Option<LockInfo>,
    /// The holder was gone (`false`: removed because of `--force`).
    pub stale: bool,
}

impl fmt::Display for Unlocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = if self.stale { "stale lock" } else { "lock" };
        write!(f, "removed the {kind} `{}`", self.lock.display())?;
        match &self.holder {
            Some(holder) if self.stale => write!(f, ": {holder}, which is no longer running"),
            Some(holder) => write!(f, ": {holder}"),
            None => Ok(()),
        }
    }
}

/// Removes the lock on `state` when its holder is gone, or with `force`
/// whatever holds it. The lock file's own path is accepted for `state`.
pub fn unlock(state: &Path, force: bool) -> Result<Unlocked, StateError> {
    if is_remote(state) {
        return Err(StateError::Remote {
            path: state.to_path_buf(),
        });
    }
    let state = &state_of(state);
    let lock = lock_path(state);
    let text = match read_lock_text(&lock) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(StateError::NotLocked {
                state: state.to_path_buf(),
                lock,
            })
        }
        Err(source) => {
            return Err(StateError::LockFile {
                lock,
                action: "read",
                source,
            })
        }
    };
    let holder = match parse_holder(&text) {
        Ok(holder) => Some(holder),
        Err(_) if force => None,
        Err(reason) => {
            return Err(StateError::UnreadableLock {
                state: state.to_path_buf(),
                lock,
                reason,
            })
        }
    };
    let stale = holder
        .as_ref()
        .is_some_and(|h| liveness(h) == Liveness::Dead);
    if let (Some(holder), false, false) = (&holder, stale, force) {
        return Err(held_error(state, &lock, holder.clone(), true));
    }
    remove_unchanged(&lock, &text)?;
    Ok(Unlocked {
        lock,
        holder,
        stale,
    })
}

/// The holder of the lock on `state` when it is a process still running
/// on this host; `None` otherwise (no lock, an unreadable one, a dead or
/// a remote holder).
pub fn live_holder(state: &Path) -> Option<LockInfo> {
    let holder = read_holder(&lock_path(&state_of(state))).ok()??;
    (liveness(&holder) == Liveness::Alive).then_some(holder)
}

/// The state a path names: itself, or, for an existing `X.lock` that is
/// not itself locked, `X`.
fn state_of(given: &Path) -> PathBuf {
    let stripped = given.to_str().and_then(|text| text.strip_suffix(".lock"));
    match stripped {
        Some(state) if given.is_file() && !lock_path(given).exists() => PathBuf::from(state),
        _ => given.to_path_buf(),
    }
}

/// Removes `lock` unless it changed since it was read as `seen`.
fn remove_unchanged(lock: &Path, seen: &str) -> Result<(), StateError> {
    match std::fs::read_to_string(lock) {
        Ok(now) if now == seen => remove(lock),
        Ok(_) => Err(StateError::LockFile {
            lock: lock.to_path_buf(),
            action: "remove",
            source: std::io::Error::other("it was replaced meanwhile; run the command again"),
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(source) => Err(StateError::LockFile {
            lock: lock.to_path_buf(),
            action: "read",
            source,
        }),
    }
}

#[cfg(test)]
mod tests;
