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
use serde::{Deserialize, Serialize};
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Ids of the locks this process holds, to tell a lock of this process
/// from one left by an earlier process that had the same pid.
static HELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Who holds a lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LockInfo {
    pub pid: u32,
    pub host: String,
    pub user: String,
    /// `deploy`, `undeploy`, `invoke`.
    pub operation: String,
    /// RFC 3339 time the lock was taken.
    pub started: String,
    /// Random; identifies this particular lock.
    pub id: String,
    /// When the holder's process started, in clock ticks after boot
    /// (Linux); tells it from a later process with the same pid.
    #[serde(rename = "processStart", skip_serializing_if = "Option::is_none")]
    pub process_start: Option<u64>,
    /// The kernel's boot id when the lock was taken (Linux).
    #[serde(rename = "bootId", skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
}

impl LockInfo {
    /// This process, about to run `operation`.
    pub fn current(operation: &str, clock: &Clock) -> Self {
        LockInfo {
            pid: std::process::id(),
            host: hostname(),
            user: user_name(),
            operation: operation.to_string(),
            started: clock.now(),
            id: random_uuid(),
            process_start: process_start(std::process::id()),
            boot_id: boot_id(),
        }
    }
}

impl fmt::Display for LockInfo {
    /// `` `deploy` started by alice at 2024-… (process 4242 on host build-7) ``
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operation.is_empty() {
            f.write_str("a hub run")?;
        } else {
            write!(f, "`{}`", self.operation)?;
        }
        if !self.user.is_empty() || !self.started.is_empty() {
            f.write_str(" started")?;
        }
        if !self.user.is_empty() {
            write!(f, " by {}", self.user)?;
        }
        if !self.started.is_empty() {
            write!(f, " at {}", self.started)?;
        }
        write!(f, " (process {}", self.pid)?;
        if !self.host.is_empty() {
            write!(f, " on host {}", self.host)?;
        }
        f.write_str(")")
    }
}

/// Whether a lock's holder still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// Ran on this host and is gone.
    Dead,
    /// Runs on another host: cannot be checked.
    Elsewhere,
}

/// Checks the holder's process, on this host only.
pub fn liveness(holder: &LockInfo) -> Liveness {
    if holder.host != hostname() {
        return Liveness::Elsewhere;
    }
    if holder.pid == std::process::id() {
        let held = HELD
            .lock()
            .map(|ids| ids.contains(&holder.id))
            .unwrap_or(true);
        return if held {
            Liveness::Alive
        } else {
            Liveness::Dead
        };
    }
    let rebooted = matches!((&holder.boot_id, boot_id()), (Some(then), Some(now)) if *then != now);
    if rebooted || !process_exists(holder.pid) {
        return Liveness::Dead;
    }
    match (holder.process_start, process_start(holder.pid)) {
        (Some(then), Some(now)) if then != now => Liveness::Dead,
        _ => Liveness::Alive,
    }
}

/// Field 22 of `/proc/PID/stat`: when the process started, in clock ticks
/// after boot. `None` where there is no such file.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|id| !id.is_empty())
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The host name, as the kernel reports it.
pub fn hostname() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most
    // that many bytes.
    let result = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if result == 0 {
        let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
        let name = String::from_utf8_lossy(&buffer[..end]).into_owned();
        if !name.is_empty() {
            return name;
        }
    }
    std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into())
}

/// `$USER`, else `$LOGNAME`, else `uid N`.
pub fn user_name() -> String {
    for variable in ["USER", "LOGNAME"] {
        if let Some(name) = std::env::var(variable).ok().filter(|n| !n.is_empty()) {
            return name;
        }
    }
    // SAFETY: getuid cannot fail and has no preconditions.
    format!("uid {}", unsafe { libc::getuid() })
}

/// A held lock; released when dropped.
#[derive(Debug)]
pub struct StateLock {
    lock: PathBuf,
    info: LockInfo,
    released: bool,
    /// The dead holder whose stale lock was removed to take this one.
    cleared: Option<LockInfo>,
}

/// How long taking a lock waits for a live holder to let go
/// (`--lock-timeout`); the default, zero, fails at once.
#[derive(Clone, Copy, Default)]
pub struct LockWait<'a> {
    pub timeout: Duration,
    /// Told once, when the wait begins, whom it waits for.
    pub notify: Option<&'a dyn Fn(&str)>,
}

impl fmt::Debug for LockWait<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LockWait")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// The first pause between two attempts; each next one is twice as long,
/// up to [`LONGEST_PAUSE`].
const FIRST_PAUSE: Duration = Duration::from_millis(50);
const LONGEST_PAUSE: Duration = Duration::from_millis(500);

impl<'a> LockWait<'a> {
    pub fn new(timeout: Duration, notify: Option<&'a dyn Fn(&str)>) -> Self {
        LockWait { timeout, notify }
    }

    /// Runs `attempt` again while it fails because a live run holds the
    /// lock ([`StateError::is_held`]), until the timeout; any other result
    /// is returned at once. After the timeout the last error is returned,
    /// wrapped in [`StateError::LockTimeout`] (unchanged with no timeout).
    pub fn retry<T>(
        &self,
        mut attempt: impl FnMut() -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let started = Instant::now();
        let mut pause = FIRST_PAUSE;
        let mut told = false;
        loop {
            let error = match attempt() {
                Err(error) if error.is_held() => error,
                done => return done,
            };
            let waited = started.elapsed();
            let left = self.timeout.saturating_sub(waited);
            if left.is_zero() {
                return Err(match self.timeout.is_zero() {
                    true => error,
                    false => StateError::LockTimeout {
                        waited,
                        source: Box::new(error),
                    },
                });
            }
            if let (false, Some(notify)) = (told, self.notify) {
                notify(&self.waiting(&error));
                told = true;
            }
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(LONGEST_PAUSE);
        }
    }

    /// `hub: waiting up to 5s for the lock on `s`: `deploy` started by …`
    fn waiting(&self, error: &StateError) -> String {
        match error {
            StateError::Locked { state, holder, .. } => format!(
                "hub: waiting up to {} for the lock on `{}`: {holder}",
                duration_text(self.timeout),
                state.display()
            ),
            other => format!(
                "hub: waiting up to {} for the lock: {other}",
                duration_text(self.timeout)
            ),
        }
    }
}

/// `2.5s`, `90s`, `5m`, `1h30m`: whole seconds where there are no
/// fractions, minutes and hours from a minute on.
pub fn duration_text(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 60_000 && millis % 1000 != 0 {
        return format!("{:.1}s", duration.as_secs_f64());
    }
    let seconds = duration.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut text = String::new();
    if hours > 0 {
        text += &format!("{hours}h");
    }
    if minutes > 0 {
        text += &format!("{minutes}m");
    }
    if seconds > 0 || text.is_empty() {
        text += &format!("{seconds}s");
    }
    text
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
mod tests {
    use super::*;

    fn clock() -> Clock {
        Clock::pinned("2024-05-01T10:00:00Z").expect("clock")
    }

    use crate::dead_pid;

    fn write_lock(state: &Path, holder: &LockInfo) {
        std::fs::write(
            lock_path(state),
            yaml_serde::to_string(holder).expect("yaml"),
        )
        .expect("lock");
    }

    #[test]
    fn a_second_acquire_fails_naming_the_holder() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let first = StateLock::acquire(&state, "deploy", &clock()).expect("first");
        let text = std::fs::read_to_string(lock_path(&state)).expect("lock text");
        assert!(text.contains("operation: deploy"), "{text}");
        let error = StateLock::acquire(&state, "undeploy", &clock()).unwrap_err();
        assert!(
            matches!(
                error,
                StateError::Locked {
                    elsewhere: false,
                    ..
                }
            ),
            "{error}"
        );
        let message = error.to_string();
        assert!(
            message.contains(&format!("process {}", std::process::id())),
            "{message}"
        );
        assert!(message.contains("deploy"), "{message}");
        drop(first);
        assert!(!lock_path(&state).exists());
        let again = StateLock::acquire(&state, "deploy", &clock()).expect("again");
        again.release().expect("release");
        assert!(!lock_path(&state).exists());
    }

    #[test]
    fn of_racing_acquirers_exactly_one_wins() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let results: Vec<bool> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| StateLock::acquire(&state, "deploy", &clock()).ok()))
                .collect();
            let guards: Vec<_> = handles
                .into_iter()
                .map(|h| h.join().expect("thread"))
                .collect();
            guards.iter().map(Option::is_some).collect()
        });
        assert_eq!(results.iter().filter(|won| **won).count(), 1, "{results:?}");
        assert!(!lock_path(&state).exists(), "the winner released the lock");
    }

    #[test]
    fn the_lock_file_itself_names_its_state() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        assert_eq!(state_of(&state), state);
        std::fs::write(lock_path(&state), "pid: 1").expect("lock");
        assert_eq!(state_of(&lock_path(&state)), state);
    }

    #[test]
    fn a_dead_holders_lock_is_cleared_and_named() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let holder = LockInfo {
            pid: dead_pid(),
            host: hostname(),
            operation: "deploy".into(),
            id: "dead-run".into(),
            ..LockInfo::default()
        };
        write_lock(&state, &holder);
        let guard = StateLock::acquire(&state, "deploy", &clock()).expect("cleared");
        assert_eq!(guard.cleared(), Some(&holder));
        let text = std::fs::read_to_string(lock_path(&state)).expect("new lock");
        assert!(text.contains(&guard.info().id), "{text}");
        drop(guard);
        let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
        assert!(left.is_empty(), "nothing left aside: {left:?}");
    }

    #[test]
    fn a_lock_replaced_while_clearing_is_put_back() {
        let dir = tempfile::tempdir().expect("dir");
        let lock = lock_path(&dir.path().join("s"));
        let dead = LockInfo {
            pid: dead_pid(),
            id: "dead-run".into(),
            ..LockInfo::default()
        };
        let fresh = LockInfo {
            id: "fresh-run".into(),
            ..dead.clone()
        };
        std::fs::write(&lock, yaml_serde::to_string(&fresh).expect("yaml")).expect("lock");
        assert!(!clear_stale(&lock, &dead).expect("clear"));
        let back = std::fs::read_to_string(&lock).expect("put back");
        assert!(back.contains("fresh-run"), "{back}");
    }

    #[test]
    fn a_live_pid_that_started_later_is_not_the_holder() {
        let mut child = std::process::Command::new("sleep")
            .arg("10")
            .spawn()
            .expect("sleep");
        let started = process_start(child.id()).expect("/proc/PID/stat");
        let holder = LockInfo {
            pid: child.id(),
            host: hostname(),
            process_start: Some(started.saturating_sub(1)),
            ..LockInfo::default()
        };
        let earlier = liveness(&holder);
        let same = liveness(&LockInfo {
            process_start: Some(started),
            ..holder
        });
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!((earlier, same), (Liveness::Dead, Liveness::Alive));
    }

    #[test]
    fn a_lock_from_before_a_reboot_is_dead() {
        let holder = LockInfo {
            pid: 1,
            host: hostname(),
            boot_id: Some("another-boot".into()),
            ..LockInfo::default()
        };
        assert_eq!(liveness(&holder), Liveness::Dead);
    }

    #[test]
    fn the_lock_text_keeps_the_keys_older_readers_know() {
        let info = LockInfo::current("deploy", &clock());
        let text = yaml_serde::to_string(&info).expect("yaml");
        for key in [
            "pid:",
            "host:",
            "user:",
            "operation:",
            "started:",
            "id:",
            "processStart:",
            "bootId:",
        ] {
            assert!(text.contains(key), "{key} in {text}");
        }
        let older: LockInfo = yaml_serde::from_str("pid: 7\nhost: h\n").expect("older lock");
        assert_eq!((older.process_start, older.boot_id), (None, None));
    }

    #[test]
    fn an_earlier_process_with_this_pid_is_dead() {
        let holder = LockInfo {
            pid: std::process::id(),
            host: hostname(),
            id: "not-held".into(),
            ..LockInfo::default()
        };
        assert_eq!(liveness(&holder), Liveness::Dead);
    }

    #[test]
    fn another_host_cannot_be_checked() {
        let holder = LockInfo {
            pid: 1,
            host: format!("{}-elsewhere", hostname()),
            ..LockInfo::default()
        };
        assert_eq!(liveness(&holder), Liveness::Elsewhere);
    }

    #[test]
    fn a_hostile_lock_file_is_refused_at_once() {
        let deep = format!("pid: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let reason = parse_holder(&deep).unwrap_err();
        assert!(reason.contains("nested deeper"), "{reason}");
    }

    #[test]
    fn an_empty_lock_file_is_reported() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        std::fs::write(lock_path(&state), "").expect("lock");
        let error = StateLock::acquire(&state, "deploy", &clock()).unwrap_err();
        assert!(
            matches!(error, StateError::UnreadableLock { .. }),
            "{error}"
        );
        assert!(error.hint().is_some_and(|h| h.contains("--force")));
    }

    #[test]
    fn a_guard_does_not_remove_a_lock_it_no_longer_owns() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let guard = StateLock::acquire(&state, "deploy", &clock()).expect("lock");
        let other = LockInfo {
            id: "someone-else".into(),
            ..guard.info().clone()
        };
        write_lock(&state, &other);
        drop(guard);
        assert!(lock_path(&state).exists());
    }

    #[test]
    fn a_wait_takes_the_lock_once_its_holder_lets_go() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let first = StateLock::acquire(&state, "deploy", &clock()).expect("first");
        let told = std::sync::Mutex::new(Vec::new());
        let notify = |line: &str| told.lock().expect("told").push(line.to_string());
        let wait = LockWait::new(Duration::from_secs(30), Some(&notify));
        let letting_go = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            drop(first);
        });
        let second = StateLock::acquire_waiting(&state, "plan", &clock(), &wait);
        letting_go.join().expect("thread");
        let second = second.expect("taken after the wait");
        assert_eq!(second.info().operation, "plan");
        let told = told.into_inner().expect("told");
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(
            told[0].starts_with("hub: waiting up to 30s for the lock on"),
            "{told:?}"
        );
        assert!(told[0].contains("`deploy`"), "{told:?}");
    }

    #[test]
    fn a_wait_that_runs_out_says_how_long_it_waited() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let _held = StateLock::acquire(&state, "deploy", &clock()).expect("held");
        let started = Instant::now();
        let wait = LockWait::new(Duration::from_millis(200), None);
        let error = StateLock::acquire_waiting(&state, "deploy", &clock(), &wait).unwrap_err();
        assert!(started.elapsed() >= Duration::from_millis(200));
        assert!(matches!(error, StateError::LockTimeout { .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains("is locked: `deploy`"), "{message}");
        assert!(message.ends_with("(waited 0.2s)"), "{message}");
        assert!(error.hint().is_some_and(|h| h.contains("hub unlock")));
        let at_once = StateLock::acquire(&state, "deploy", &clock()).unwrap_err();
        assert!(
            matches!(at_once, StateError::Locked { .. }),
            "no wait: {at_once}"
        );
    }

    #[test]
    fn a_wait_does_not_retry_other_errors() {
        let mut attempts = 0;
        let wait = LockWait::new(Duration::from_secs(30), None);
        let result: Result<(), StateError> = wait.retry(|| {
            attempts += 1;
            Err(StateError::Remote {
                path: PathBuf::from("s3://b/k"),
            })
        });
        assert!(matches!(result, Err(StateError::Remote { .. })));
        assert_eq!(attempts, 1);
    }

    #[test]
    fn readers_wait_for_live_holders_only() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let states = [state.clone()];
        await_unheld(&states, &LockWait::default()).expect("no lock");
        write_lock(
            &state,
            &LockInfo {
                pid: dead_pid(),
                host: hostname(),
                id: "dead".into(),
                ..LockInfo::default()
            },
        );
        await_unheld(&states, &LockWait::default()).expect("a dead holder does not count");
        assert!(lock_path(&state).exists(), "a reader removes nothing");
        std::fs::remove_file(lock_path(&state)).expect("remove");
        let held = StateLock::acquire(&state, "deploy", &clock()).expect("held");
        let error = await_unheld(&states, &LockWait::default()).unwrap_err();
        assert!(matches!(error, StateError::Locked { .. }), "{error}");
        drop(held);
        await_unheld(&states, &LockWait::default()).expect("released");
    }

    #[test]
    fn durations_read_as_people_write_them() {
        let text = |millis| duration_text(Duration::from_millis(millis));
        assert_eq!(text(0), "0s");
        assert_eq!(text(300), "0.3s");
        assert_eq!(text(1_000), "1s");
        assert_eq!(text(2_500), "2.5s");
        assert_eq!(text(90_000), "1m30s");
        assert_eq!(text(300_000), "5m");
        assert_eq!(text(5_400_000), "1h30m");
    }

    #[test]
    fn unlock_removes_stale_locks_only_unless_forced() {
        let dir = tempfile::tempdir().expect("dir");
        let state = dir.path().join("s");
        let error = unlock(&state, false).unwrap_err();
        assert!(matches!(error, StateError::NotLocked { .. }), "{error}");

        let stale = LockInfo {
            pid: dead_pid(),
            host: hostname(),
            ..LockInfo::default()
        };
        write_lock(&state, &stale);
        let removed = unlock(&state, false).expect("stale");
        assert!(removed.stale);
        assert!(
            removed.to_string().contains("no longer running"),
            "{removed}"
        );
        assert!(!lock_path(&state).exists());

        let live = LockInfo {
            pid: std::process::id(),
            host: hostname(),
            id: "live".into(),
            ..LockInfo::default()
        };
        HELD.lock().expect("held").push("live".into());
        write_lock(&state, &live);
        let error = unlock(&state, false).unwrap_err();
        assert!(
            matches!(
                error,
                StateError::Locked {
                    unlocking: true,
                    ..
                }
            ),
            "{error}"
        );
        assert!(error.hint().is_some_and(|h| h.contains("--force")));
        let removed = unlock(&state, true).expect("forced");
        assert!(!removed.stale);
        HELD.lock().expect("held").retain(|id| id != "live");
        assert!(!lock_path(&state).exists());
    }
}
