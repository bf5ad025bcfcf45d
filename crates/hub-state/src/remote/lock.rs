//! The lock of a remote state: `KEY.lock`, created only if absent
//! (`If-None-Match: *`), holding who runs what (JSON) and a lease. A
//! thread renews the lease every third of it with a write conditional on
//! the lock's ETag; when that write fails because the lock changed (it
//! was removed with `hub unlock --force` and maybe taken by another run),
//! the lock is broken: the run's [`Fence`] says so, and this run's next
//! write to the state fails instead of going on.
//!
//! The lease lasts [`DEFAULT_LEASE`] (`HUB_LOCK_LEASE`, in seconds,
//! changes it): a lock whose lease expired belongs to a run that stopped
//! without removing it (killed, or its machine lost), and is reported as
//! stale with the command that removes it — unless its holder runs on
//! this host and its process (the same one, by its start time) is alive:
//! a run whose renewals failed, or that was paused, still holds it.

use super::client::{Client, Put, Revision, Write};
use super::location::RemoteLocation;
use crate::clock::Clock;
use crate::lock::LockInfo;
use crate::StateError;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub const DEFAULT_LEASE: Duration = Duration::from_secs(60);

/// Why a remote lock of a run was broken, shared by the run's locks (whose
/// renewers set it) and the stores it writes through (which refuse to
/// write once it is set): losing one lock stops every write of the run.
#[derive(Debug, Clone, Default)]
pub struct Fence(Arc<Mutex<Option<String>>>);

impl Fence {
    /// Why a lock was broken; `None` while none was.
    pub fn broken(&self) -> Option<String> {
        self.0.lock().ok().and_then(|b| b.clone())
    }

    fn mark(&self, reason: String) {
        if let Ok(mut broken) = self.0.lock() {
            broken.get_or_insert(reason);
        }
    }
}

/// Whether `KEY.lock` is still the lock with `id`; the reason when it is
/// not (removed with `hub unlock --force`, maybe taken by another run).
pub fn still_held(client: &Client, id: &str) -> Result<Option<String>, StateError> {
    let key = client.location().sibling(".lock");
    Ok(match client.get(&key)? {
        None => Some(format!(
            "its lock `{key}` was removed while this run held it (`hub unlock --force`, or by hand)"
        )),
        Some(object) => match read_info(&object.bytes) {
            Some(info) if info.holder.id == id => None,
            Some(info) => Some(format!("its lock `{key}` now belongs to {}", info.holder)),
            None => Some(format!(
                "its lock `{key}` was replaced by one hub cannot read"
            )),
        },
    })
}

/// The remote locks a run holds, by location, and its [`Fence`]: what the
/// stores it writes through prove before writing.
#[derive(Debug, Clone, Default)]
pub struct HeldLocks {
    /// Location (`s3://BUCKET/KEY`) and lock id.
    ids: Vec<(String, String)>,
    fence: Fence,
}

impl HeldLocks {
    /// The locks `locks`, taken with `fence`.
    pub fn of<'l>(locks: impl IntoIterator<Item = &'l RemoteLock>, fence: Fence) -> Self {
        HeldLocks {
            ids: locks
                .into_iter()
                .map(|l| (l.location.to_string(), l.id.clone()))
                .collect(),
            fence,
        }
    }

    /// The id of the lock held on `location`, if any.
    pub fn id_of(&self, location: &RemoteLocation) -> Option<String> {
        let wanted = location.to_string();
        self.ids
            .iter()
            .find(|(at, _)| *at == wanted)
            .map(|(_, id)| id.clone())
    }

    pub fn fence(&self) -> &Fence {
        &self.fence
    }
}

/// The content of `KEY.lock`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RemoteLockInfo {
    #[serde(flatten)]
    pub holder: LockInfo,
    /// The holder's command line, secrets masked
    /// ([`hub_manifest::redact::recorded_args`]).
    pub command: String,
    /// When the lease ends unless renewed (milliseconds since the epoch),
    /// and when the lock was taken (same unit).
    pub expires_ms: u64,
    pub started_ms: u64,
}

pub struct RemoteLock {
    location: RemoteLocation,
    id: String,
    stop: Option<mpsc::Sender<()>>,
    renewer: Option<JoinHandle<()>>,
    released: bool,
    fence: Fence,
}

pub fn lease() -> Duration {
    std::env::var("HUB_LOCK_LEASE")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_LEASE, Duration::from_secs_f64)
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

fn encode(info: &RemoteLockInfo) -> Vec<u8> {
    serde_json::to_vec_pretty(info).unwrap_or_default()
}

impl RemoteLock {
    /// Takes the lock of the state at `path` for `operation`, or fails at
    /// once naming the holder (and whether its lease expired).
    pub fn acquire(path: &Path, operation: &str, clock: &Clock) -> Result<RemoteLock, StateError> {
        RemoteLock::acquire_fenced(path, operation, clock, &Fence::default())
    }

    /// [`RemoteLock::acquire`], the lock broken in `fence` (the run's).
    pub fn acquire_fenced(
        path: &Path,
        operation: &str,
        clock: &Clock,
        fence: &Fence,
    ) -> Result<RemoteLock, StateError> {
        let location = RemoteLocation::of_path(path)?;
        let client = Client::new(&location)?;
        client.check()?;
        let lease = lease();
        let started = now_ms();
        let info = RemoteLockInfo {
            holder: LockInfo::current(operation, clock),
            command: hub_manifest::redact::recorded_args(std::env::args()).join(" "),
            expires_ms: started + lease.as_millis() as u64,
            started_ms: started,
        };
        let key = location.sibling(".lock");
        match client.put(&key, encode(&info), Write::Create)? {
            Put::Written(written) => {
                let (stop, stopped) = mpsc::channel();
                let renew = Renew {
                    lease,
                    stopped,
                    fence: fence.clone(),
                };
                let renewer = spawn_renewer(client, info.clone(), written, renew);
                Ok(RemoteLock {
                    location,
                    id: info.holder.id,
                    stop: Some(stop),
                    renewer: Some(renewer),
                    released: false,
                    fence: fence.clone(),
                })
            }
            Put::Conflict => Err(held_error(&client, &location)),
        }
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn location(&self) -> &RemoteLocation {
        &self.location
    }

    /// Where the renewer says the lock was broken.
    pub fn fence(&self) -> &Fence {
        &self.fence
    }

    /// Stops renewing and removes the lock, if it is still this run's.
    pub fn release(mut self) -> Result<(), StateError> {
        self.release_now()
    }

    fn release_now(&mut self) -> Result<(), StateError> {
        if std::mem::replace(&mut self.released, true) {
            return Ok(());
        }
        drop(self.stop.take());
        if let Some(renewer) = self.renewer.take() {
            let _ = renewer.join();
        }
        let client = Client::new(&self.location)?;
        let key = self.location.sibling(".lock");
        let Some(current) = client.get(&key)? else {
            return Ok(());
        };
        if read_info(&current.bytes).is_some_and(|info| info.holder.id == self.id) {
            client.delete(&key)?;
        }
        Ok(())
    }
}

impl Drop for RemoteLock {
    fn drop(&mut self) {
        let _ = self.release_now();
    }
}

fn read_info(bytes: &[u8]) -> Option<RemoteLockInfo> {
    serde_json::from_slice(bytes).ok()
}

/// What the renewer of a lock needs besides the lock: how often, when to
/// stop, and where to say the lock was broken.
struct Renew {
    lease: Duration,
    stopped: mpsc::Receiver<()>,
    fence: Fence,
}

fn spawn_renewer(
    client: Client,
    mut info: RemoteLockInfo,
    mut revision: Revision,
    renew: Renew,
) -> JoinHandle<()> {
    let Renew {
        lease,
        stopped,
        fence,
    } = renew;
    std::thread::spawn(move || {
        let key = client.location().sibling(".lock");
        loop {
            match stopped.recv_timeout(lease / 3) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            info.expires_ms = now_ms() + lease.as_millis() as u64;
            if revision.etag.is_none() && revision.version.is_none() {
                return;
            }
            match client.put(&key, encode(&info), Write::Update(revision.clone())) {
                Ok(Put::Written(new)) => revision = new,
                Ok(Put::Conflict) => {
                    fence.mark(format!(
                        "its lock `{}` was removed or taken by another run while this one held it",
                        client.location().sibling(".lock")
                    ));
                    return;
                }
                // The store failing: tried again at the next renewal; the
                // state's own writes report it.
                Err(_) => {}
            }
        }
    })
}

/// The error for a lock someone else holds: who, since when, and whether
/// its lease expired.
fn held_error(client: &Client, location: &RemoteLocation) -> StateError {
    let key = location.sibling(".lock");
    let info = client
        .get(&key)
        .ok()
        .flatten()
        .and_then(|object| read_info(&object.bytes));
    let Some(info) = info else {
        return StateError::RemoteLocked {
            location: location.to_string(),
            holder: "another run (its lock could not be read)".into(),
            id: String::new(),
            stale: false,
            alive_here: false,
        };
    };
    let now = now_ms();
    let age = describe_age(now.saturating_sub(info.started_ms));
    let alive_here = alive_here(&info.holder);
    let expired = info.expires_ms < now;
    let mut holder = format!("{}, {age} ago", info.holder);
    if expired && alive_here {
        holder.push_str(", still running on this host (its lease expired without being renewed)");
    }
    StateError::RemoteLocked {
        location: location.to_string(),
        holder,
        id: info.holder.id.clone(),
        stale: expired && !alive_here,
        alive_here,
    }
}

/// Whether the holder is a process still running on this host (the same
/// one: its start time is compared): then its lock is not stale, whatever
/// its lease says.
fn alive_here(holder: &LockInfo) -> bool {
    crate::lock::liveness(holder) == crate::lock::Liveness::Alive
}

fn describe_age(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0..=119 => format!("{seconds}s"),
        120..=7199 => format!("{}m", seconds / 60),
        _ => format!("{}h", seconds / 3600),
    }
}

/// What `hub unlock` removed.
#[derive(Debug)]
pub struct RemoteUnlocked {
    pub location: String,
    pub holder: String,
    pub stale: bool,
}

impl std::fmt::Display for RemoteUnlocked {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = if self.stale {
            "the expired lock"
        } else {
            "the lock"
        };
        write!(f, "removed {kind} of `{}`: {}", self.location, self.holder)
    }
}

/// Removes the lock of the remote state `path`: a stale one (its lease
/// expired), any with `force`, only the one with `id` when given.
/// For a reader that takes no lock (`hub plan`): fails, naming the
/// holder, while a run holds the lock of `path` with a live lease; an
/// expired lease does not count.
pub fn check_unheld(path: &Path) -> Result<(), StateError> {
    let location = RemoteLocation::of_path(path)?;
    let client = Client::new(&location)?;
    match client.get(&location.sibling(".lock"))? {
        None => Ok(()),
        Some(_) => match held_error(&client, &location) {
            StateError::RemoteLocked { stale: true, .. } => Ok(()),
            held => Err(held),
        },
    }
}

/// The holder of the lock of the remote state `path` when it is a process
/// still running on this host; `None` otherwise.
pub fn live_holder(path: &Path) -> Result<Option<LockInfo>, StateError> {
    let location = RemoteLocation::of_path(path)?;
    let client = Client::new(&location)?;
    let info = client
        .get(&location.sibling(".lock"))?
        .and_then(|object| read_info(&object.bytes));
    Ok(info
        .map(|info| info.holder)
        .filter(|holder| crate::lock::liveness(holder) == crate::lock::Liveness::Alive))
}

pub fn unlock(path: &Path, force: bool, id: Option<&str>) -> Result<RemoteUnlocked, StateError> {
    let location = RemoteLocation::of_path(path)?;
    let client = Client::new(&location)?;
    client.check()?;
    let key = location.sibling(".lock");
    let Some(object) = client.get(&key)? else {
        return Err(StateError::RemoteNotLocked {
            location: location.to_string(),
        });
    };
    let info = read_info(&object.bytes).unwrap_or_default();
    let stale = info.expires_ms < now_ms() && !alive_here(&info.holder);
    if let Some(id) = id {
        if info.holder.id != id {
            return Err(StateError::RemoteLockId {
                location: location.to_string(),
                wanted: id.to_string(),
                found: info.holder.id,
            });
        }
    } else if !stale && !force {
        return Err(held_error(&client, &location));
    }
    client.delete(&key)?;
    Ok(RemoteUnlocked {
        location: location.to_string(),
        holder: info.holder.to_string(),
        stale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_seconds_minutes_and_hours() {
        assert_eq!(describe_age(5_400), "5s");
        assert_eq!(describe_age(600_000), "10m");
        assert_eq!(describe_age(3 * 3_600_000), "3h");
    }

    #[test]
    fn the_lock_object_round_trips() {
        let info = RemoteLockInfo {
            holder: LockInfo {
                pid: 7,
                user: "alice".into(),
                id: "abc".into(),
                ..Default::default()
            },
            command: "hub deploy".into(),
            expires_ms: 2,
            started_ms: 1,
        };
        let text = String::from_utf8(encode(&info)).expect("utf8");
        assert!(text.contains("\"expiresMs\": 2"), "{text}");
        assert_eq!(read_info(text.as_bytes()), Some(info));
    }
}
