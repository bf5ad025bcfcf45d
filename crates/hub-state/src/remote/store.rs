//! A state on object storage, through the same design as a local file
//! (see [`crate::journal`]):
//!
//! * `KEY` — the folded state; every write of it is conditional on the
//!   ETag this run last read or wrote (`If-Match`; `If-None-Match: *` when
//!   there was none), so a run never overwrites a state that changed
//!   underneath it (fencing);
//! * `KEY.backup` — the previous version of `KEY`, written before each
//!   fold; not written when the bucket keeps versions itself (`KEY` comes
//!   with a version ID), since every earlier `KEY` is kept there;
//! * `KEY.journal/<base>-<serial>` — one small object per checkpoint
//!   (the journal's record line), created only if absent; `base` is the
//!   serial of the `KEY` it applies to. Readers apply the records whose
//!   base is `KEY`'s serial, in serial order; a fold writes `KEY` and then
//!   removes them. Records of another base are stale (a fold removed the
//!   others, or a run whose lock was broken went on appending) and are
//!   ignored.

use super::client::{keeps_versions, Client, Put, Revision, Write};
use super::location::RemoteLocation;
use super::lock::{Fence, HeldLocks, RemoteLock};
use crate::backend::StateStore;
use crate::clock::Clock;
use crate::journal;
use crate::model::State;
use crate::StateError;
use hub_manifest::diag::Warnings;
use std::path::{Path, PathBuf};

const JOURNAL: &str = ".journal";

pub struct RemoteStore {
    /// The location as given (`s3://…`).
    path: PathBuf,
    client: Client,
    /// The revision of `KEY` this run last read or wrote: every write of
    /// `KEY` is conditional on it.
    revision: Option<Revision>,
    /// The content of `KEY` as last read or written: the next backup.
    current: Option<Vec<u8>>,
    /// The serial of `KEY`.
    base: u64,
    /// The bucket keeps every version of `KEY` (learnt from its version
    /// ID when read or written); no `KEY.backup` then.
    versioned: bool,
    /// A fold of this run replaced an earlier `KEY`.
    replaced: bool,
    /// Record objects written or found since the last fold.
    records: Vec<String>,
    records_size: u64,
    lock: Option<RemoteLock>,
    /// The id of the lock this process held on the location when the
    /// store was opened: it must still be `KEY.lock` before a component
    /// starts.
    lock_id: Option<String>,
    /// Why this run lost the state (see [`crate::fence`]): nothing
    /// more is written.
    fenced: Option<String>,
    /// `--encrypted` of the command writing (see [`Self::encode_state`]).
    encrypted: Option<bool>,
    /// Where the run's lock renewers say a lock was broken.
    fence: Fence,
}

/// A record object's key, and its `(base, serial)` back from a key.
fn record_key(location: &RemoteLocation, base: u64, serial: u64) -> String {
    format!("{}{JOURNAL}/{base:020}-{serial:020}", location.key)
}

fn record_numbers(key: &str) -> Option<(u64, u64)> {
    let name = key.rsplit('/').next()?;
    let (base, serial) = name.split_once('-')?;
    Some((base.parse().ok()?, serial.parse().ok()?))
}

/// What a reader sees at a location: `KEY` and the records on top of it.
struct Snapshot {
    object: Option<super::client::Object>,
    records: Vec<(String, u64)>,
    records_size: u64,
}

fn snapshot(client: &Client) -> Result<Snapshot, StateError> {
    client.check()?;
    let location = client.location();
    let object = client.get(&location.key)?;
    let Some(found) = &object else {
        return Ok(Snapshot {
            object,
            records: Vec::new(),
            records_size: 0,
        });
    };
    let base = serial_of_object(&found.bytes);
    let mut records: Vec<(String, u64, u64)> = client
        .list(&format!("{}{JOURNAL}", location.key))?
        .into_iter()
        .filter_map(|listed| {
            let (record_base, serial) = record_numbers(&listed.key)?;
            (record_base == base).then_some((listed.key, serial, listed.size))
        })
        .collect();
    records.sort_by_key(|(_, serial, _)| *serial);
    let records_size = records.iter().map(|(_, _, size)| size).sum();
    Ok(Snapshot {
        object,
        records: records.into_iter().map(|(k, s, _)| (k, s)).collect(),
        records_size,
    })
}

/// Reads the state at the remote location `path` as hub sees it: `KEY`
/// with its records applied; `Ok(None)` when there is no state.
pub fn read(path: &Path, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
    let location = RemoteLocation::of_path(path)?;
    let client = Client::new(&location)?;
    let seen = snapshot(&client)?;
    let Some(object) = seen.object else {
        return Ok(None);
    };
    let mut state = parse(path, object.bytes, warnings)?;
    for (index, (key, _)) in seen.records.iter().enumerate() {
        let damaged = |reason: String| StateError::Journal {
            path: PathBuf::from(format!("{}://{}/{key}", scheme_of(path), location.bucket)),
            record: index + 1,
            reason,
        };
        // A record removed by a fold since the listing: the fold wrote
        // `KEY` after it, so reading again sees it there.
        let Some(record) = client.get(key)? else {
            return read(path, warnings);
        };
        let bytes = decode_state(path, record.bytes)?;
        let line = String::from_utf8_lossy(&bytes);
        let record = journal::decode(line.trim_end_matches('\n'))
            .ok_or_else(|| damaged("it is cut or its checksum does not match".into()))?;
        journal::apply(&mut state, record).map_err(damaged)?;
    }
    Ok(Some(state))
}

/// The serial of a state object's content; 0 when it cannot be read.
fn serial_of_object(bytes: &[u8]) -> u64 {
    decode_state(Path::new(""), bytes.to_vec()).map_or(0, |yaml| crate::store::serial_of(&yaml))
}

/// Whether two revisions of an object are the same version: by ETag
/// where both have one, else by version (a GCS generation). Revisions
/// that tell nothing are taken as the same: the conditional write that
/// follows still fences.
fn same_revision(a: &Revision, b: &Revision) -> bool {
    match (&a.etag, &b.etag, &a.version, &b.version) {
        (Some(x), Some(y), _, _) => x == y,
        (_, _, Some(x), Some(y)) => x == y,
        _ => true,
    }
}

fn scheme_of(path: &Path) -> String {
    path.to_string_lossy()
        .split_once("://")
        .map_or(String::new(), |(s, _)| s.to_string())
}

/// The YAML (or gzip) of a state object's bytes: the one place where what
/// [`RemoteStore::encode_state`] made is undone.
pub fn decode_state(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, StateError> {
    crate::store::unseal(path, bytes)
}

fn parse(path: &Path, bytes: Vec<u8>, warnings: &mut Warnings) -> Result<State, StateError> {
    let source = crate::store::state_source(path, decode_state(path, bytes)?)?;
    crate::store::parse(path, &source.text, warnings)
}

/// Size and age of the state at `path` (its records included), for
/// choosing among several locations; `None` when there is none.
pub fn candidate(path: &Path) -> Result<Option<crate::locations::Candidate>, StateError> {
    let location = RemoteLocation::of_path(path)?;
    let client = Client::new(&location)?;
    client.check()?;
    let Some(head) = client.head(&location.key)? else {
        return Ok(None);
    };
    let records = client.list(&format!("{}{JOURNAL}", location.key))?;
    let newest = records
        .iter()
        .map(|r| r.modified)
        .chain([head.modified])
        .max()
        .unwrap_or(0);
    let size = head.size + records.iter().map(|r| r.size).sum::<u64>();
    Ok(Some(crate::locations::Candidate {
        modified: std::time::UNIX_EPOCH + std::time::Duration::from_secs(newest.max(0) as u64),
        size,
    }))
}

impl RemoteStore {
    /// The remote location `path` and its serial (records included).
    /// `known`: the serial of the state this run just read from it; a
    /// different one there now means another writer came in between.
    pub fn open(
        path: &Path,
        known: Option<u64>,
        encrypted: Option<bool>,
        held: &HeldLocks,
    ) -> Result<(RemoteStore, u64), StateError> {
        let location = RemoteLocation::of_path(path)?;
        let client = Client::new(&location)?;
        let seen = snapshot(&client)?;
        let (revision, current, base, versioned) = match seen.object {
            Some(object) => {
                let base = serial_of_object(&object.bytes);
                let revision = object.revision;
                let versioned = keeps_versions(location.scheme, revision.version.as_deref());
                (Some(revision), Some(object.bytes), base, versioned)
            }
            None => (None, None, 0, false),
        };
        let serial = seen.records.last().map_or(base, |(_, serial)| *serial);
        if let Some(known) = known.filter(|known| *known != serial) {
            return Err(StateError::RemoteConflict {
                location: location.to_string(),
                reason: format!("its serial is {serial} now, {known} when this run read it"),
            });
        }
        let store = RemoteStore {
            path: path.to_path_buf(),
            client,
            revision,
            current,
            base,
            versioned,
            replaced: false,
            records: seen.records.into_iter().map(|(key, _)| key).collect(),
            records_size: seen.records_size,
            lock: None,
            lock_id: held.id_of(&location),
            fenced: None,
            encrypted,
            fence: held.fence().clone(),
        };
        Ok((store, serial))
    }

    /// The bytes stored for a state whose YAML (or gzip) is `yaml`: the one
    /// place where the content of a remote state object is made (an
    /// encryption goes here, and its reverse in [`decode_state`]).
    /// With `HUB_CRYPTO_PASSWORD` (and not `--encrypted=false`) the object
    /// is sealed as the reference seals states; journal records too, since
    /// they hold outputs.
    pub fn encode_state(&self, yaml: &[u8]) -> Result<Vec<u8>, StateError> {
        let sealed = |error| StateError::Sealed {
            path: self.path.clone(),
            error,
        };
        let Some(password) = crate::crypto::remote_password(self.encrypted).map_err(sealed)? else {
            return Ok(yaml.to_vec());
        };
        crate::crypto::seal(&password, yaml).map_err(sealed)
    }

    pub fn records(&self) -> usize {
        self.records.len()
    }

    pub fn records_size(&self) -> u64 {
        self.records_size
    }

    pub fn folded_size(&self) -> u64 {
        self.current.as_ref().map_or(0, |c| c.len() as u64)
    }

    fn location(&self) -> &RemoteLocation {
        self.client.location()
    }

    fn refuse_when_lock_broken(&mut self) -> Result<(), StateError> {
        if self.fenced.is_none() {
            self.fenced = self.fence.broken();
        }
        match &self.fenced {
            Some(reason) => Err(StateError::RemoteConflict {
                location: self.location().to_string(),
                reason: reason.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Fails when this run no longer owns the state: `KEY.lock` is not its
    /// lock any more, or `KEY` is not the revision it last read or wrote
    /// (another run folded, or a state was pushed). Once it failed, it
    /// always fails.
    fn prove_owner(&mut self) -> Result<(), StateError> {
        self.refuse_when_lock_broken()?;
        let mut lost = match self.lock_id.clone() {
            Some(id) => super::lock::still_held(&self.client, &id)?,
            None => None,
        };
        if lost.is_none() {
            lost = self.state_changed()?;
        }
        self.fenced = lost;
        self.refuse_when_lock_broken()
    }

    /// Why `KEY` is not the revision this run last read or wrote; `None`
    /// when it is.
    fn state_changed(&self) -> Result<Option<String>, StateError> {
        let key = &self.location().key;
        let now = self.client.revision(key)?;
        let same = match (&self.revision, &now) {
            (None, None) => true,
            (Some(mine), Some(now)) => same_revision(mine, now),
            _ => false,
        };
        Ok((!same).then(|| {
            format!(
                "`{}` changed since this run last wrote it (another run, or a push)",
                self.location()
            )
        }))
    }
}

impl StateStore for RemoteStore {
    fn location(&self) -> &Path {
        &self.path
    }

    fn load(&self, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
        read(&self.path, warnings)
    }

    fn append(&mut self, _operation: &str, record: &str) -> Result<(), StateError> {
        self.refuse_when_lock_broken()?;
        let serial = journal::decode(record.trim_end_matches('\n')).map_or(0, |r| r.serial());
        let key = record_key(self.location(), self.base, serial);
        let bytes = self.encode_state(record.as_bytes())?;
        let size = bytes.len() as u64;
        match self.client.put(&key, bytes, Write::Create)? {
            Put::Written(_) => {
                self.records.push(key);
                self.records_size += size;
                Ok(())
            }
            Put::Conflict => Err(StateError::RemoteConflict {
                location: self.location().to_string(),
                reason: format!("the record `{key}` was written by another run"),
            }),
        }
    }

    fn fold(&mut self, serial: u64, backup: Option<&[u8]>, state: &[u8]) -> Result<(), StateError> {
        // `KEY.backup` is written before `KEY` and unconditionally: only
        // by a run that still owns the state.
        RemoteStore::prove_owner(self)?;
        let previous = match backup {
            Some(backup) => Some(self.encode_state(backup)?),
            None => self.current.clone(),
        };
        let key = self.location().key.clone();
        if let Some(previous) = previous.filter(|_| !self.versioned) {
            let backup_key = self.location().sibling(".backup");
            self.client.put(&backup_key, previous, Write::Overwrite)?;
        }
        let bytes = self.encode_state(state)?;
        let mode = match &self.revision {
            Some(revision) => Write::Update(revision.clone()),
            None => Write::Create,
        };
        match self.client.put(&key, bytes.clone(), mode)? {
            Put::Written(written) => {
                self.replaced |= self.revision.is_some();
                self.versioned = keeps_versions(self.location().scheme, written.version.as_deref());
                self.revision = Some(written);
            }
            Put::Conflict => {
                return Err(StateError::RemoteConflict {
                    location: self.location().to_string(),
                    reason:
                        "the state object changed since this run read it (another run, or a push)"
                            .into(),
                })
            }
        }
        self.current = Some(bytes);
        self.base = serial;
        for record in std::mem::take(&mut self.records) {
            // A record left behind is stale (its base is not `KEY`'s
            // serial any more): readers ignore it.
            let _ = self.client.delete(&record);
        }
        self.records_size = 0;
        Ok(())
    }

    fn lock(&mut self, operation: &str, clock: &Clock) -> Result<(), StateError> {
        if self.lock.is_none() {
            let lock = RemoteLock::acquire_fenced(&self.path, operation, clock, &self.fence)?;
            self.lock_id = Some(lock.id().to_string());
            self.lock = Some(lock);
        }
        Ok(())
    }

    fn prove_owner(&mut self) -> Result<(), StateError> {
        RemoteStore::prove_owner(self)
    }

    fn unlock(&mut self) -> Result<(), StateError> {
        self.lock_id = None;
        match self.lock.take() {
            Some(lock) => lock.release(),
            None => Ok(()),
        }
    }

    fn journal_records(&self) -> usize {
        self.records()
    }

    fn journal_size(&self) -> u64 {
        self.records_size()
    }

    fn folded_size(&self) -> u64 {
        RemoteStore::folded_size(self)
    }

    fn previous_version(&self) -> Option<String> {
        if !self.replaced {
            return None;
        }
        Some(match self.versioned {
            true => format!(
                "{}: the previous version is kept by the bucket's versioning",
                self.path.display()
            ),
            false => format!(
                "{}: the previous version is kept as `{}.backup` (the bucket keeps no versions)",
                self.path.display(),
                self.path.display()
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_keys_carry_base_and_serial_in_order() {
        let location = RemoteLocation::parse("s3://b/envs/dev").expect("parse");
        let key = record_key(&location, 7, 12);
        assert_eq!(
            key,
            "envs/dev.journal/00000000000000000007-00000000000000000012"
        );
        assert_eq!(record_numbers(&key), Some((7, 12)));
        assert!(record_key(&location, 7, 9) < record_key(&location, 7, 10));
        assert_eq!(record_numbers("envs/dev.journal/junk"), None);
    }
}
