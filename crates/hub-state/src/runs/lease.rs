//! The lease of one job on one component: the state's own lock, taken on
//! `STATE.run/NAME` (so the file is `STATE.run/NAME.lock`, or the object
//! `KEY.run/NAME.lock` with its lease renewed while the job runs).

use super::error::RunError;
use super::place::{at_key, RunPlace};
use crate::clock::Clock;
use crate::lock::{self, LockWait, StateLock};
use crate::remote::client::Client;
use crate::remote::lock::{self as remote_lock, RemoteLock};
use crate::remote::RemoteLocation;
use crate::StateError;
use std::path::PathBuf;

/// A job's hold on its component; released when dropped.
pub enum Lease {
    Local {
        component: String,
        base: PathBuf,
        lock: Box<StateLock>,
    },
    Remote {
        component: String,
        client: Box<Client>,
        lock: RemoteLock,
    },
}

/// What the lease of `component` is taken on: a path whose `.lock` is
/// the lease.
fn base(place: &RunPlace, component: &str) -> PathBuf {
    match place {
        RunPlace::Local { folder, .. } => folder.join(component),
        RunPlace::Remote { location, .. } => PathBuf::from(at_key(
            location,
            format!("{}.run/{component}", location.key),
        )),
    }
}

fn held(component: &str, error: StateError) -> RunError {
    match error {
        StateError::Locked { holder, .. } => RunError::LeaseHeld {
            component: component.to_string(),
            holder: holder.to_string(),
        },
        StateError::RemoteLocked { holder, .. } => RunError::LeaseHeld {
            component: component.to_string(),
            holder,
        },
        other => other.into(),
    }
}

impl Lease {
    /// Takes the lease of the job deploying `component`.
    pub fn take(place: &RunPlace, component: &str, clock: &Clock) -> Result<Lease, RunError> {
        hub_manifest::names::check_component_name(component).map_err(|e| RunError::Damaged {
            place: component.to_string(),
            reason: e.to_string(),
        })?;
        let base = base(place, component);
        let operation = format!("deploy {component}");
        match place {
            RunPlace::Local { folder, .. } => {
                crate::beside::create_folder(folder).map_err(|source| RunError::Io {
                    path: folder.clone(),
                    action: "create",
                    source,
                })?;
                let lock =
                    StateLock::acquire(&base, &operation, clock).map_err(|e| held(component, e))?;
                Ok(Lease::Local {
                    component: component.to_string(),
                    base,
                    lock: Box::new(lock),
                })
            }
            RunPlace::Remote { .. } => {
                let lock = match RemoteLock::acquire(&base, &operation, clock) {
                    // The lease of a job that stopped without letting go
                    // (killed, its runner lost) expired: taken over, only
                    // if it is still that one.
                    Err(StateError::RemoteLocked {
                        stale: true, id, ..
                    }) => {
                        remote_lock::unlock(&base, false, Some(&id))?;
                        RemoteLock::acquire(&base, &operation, clock)
                    }
                    taken => taken,
                }
                .map_err(|e| held(component, e))?;
                let location = RemoteLocation::of_path(&base)?;
                Ok(Lease::Remote {
                    component: component.to_string(),
                    client: Box::new(Client::new(&location)?),
                    lock,
                })
            }
        }
    }

    pub fn component(&self) -> &str {
        match self {
            Lease::Local { component, .. } | Lease::Remote { component, .. } => component,
        }
    }

    /// Proves the lease is still this job's (fencing): before the
    /// component starts and before its result is recorded.
    pub fn prove(&self) -> Result<(), RunError> {
        let lost = |reason: String| RunError::LeaseLost {
            component: self.component().to_string(),
            reason,
        };
        match self {
            Lease::Local { base, lock, .. } => {
                lock::still_held(base, &lock.info().id).map_err(lost)
            }
            Lease::Remote { client, lock, .. } => {
                if let Some(reason) = lock.fence().broken() {
                    return Err(lost(reason));
                }
                match remote_lock::still_held(client, lock.id())? {
                    None => Ok(()),
                    Some(reason) => Err(lost(reason)),
                }
            }
        }
    }

    /// Lets go of the lease (dropping it does the same silently).
    pub fn release(self) -> Result<(), RunError> {
        match self {
            Lease::Local { lock, .. } => Ok((*lock).release()?),
            Lease::Remote { lock, .. } => Ok(lock.release()?),
        }
    }

    /// Who holds the lease of `component` when a live job does.
    fn held_by_other(place: &RunPlace, component: &str) -> Result<Option<String>, RunError> {
        let base = base(place, component);
        let checked = match place {
            RunPlace::Local { .. } => lock::await_unheld(&[base], &LockWait::default()),
            RunPlace::Remote { .. } => remote_lock::check_unheld(&base),
        };
        match checked {
            Ok(()) => Ok(None),
            Err(StateError::RemoteLocked {
                holder,
                stale: false,
                ..
            }) => Ok(Some(holder)),
            Err(error) if error.is_held() => Ok(Some(error.to_string())),
            // An expired lease, or a dead job's lock: no job runs.
            Err(StateError::RemoteLocked { .. } | StateError::StaleLock { .. }) => Ok(None),
            Err(other) => Err(other.into()),
        }
    }
}

/// The components of the run at `place` whose job holds a live lease now.
pub fn busy(place: &RunPlace) -> Result<Vec<String>, RunError> {
    let mut busy = Vec::new();
    for name in place.names()? {
        if let Some(component) = name.strip_suffix(".lock") {
            if Lease::held_by_other(place, component)?.is_some() {
                busy.push(component.to_string());
            }
        }
    }
    Ok(busy)
}
