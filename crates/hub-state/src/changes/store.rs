//! Where the registry's documents are kept: files in `STATE.changes/`
//! ([`Local`]) or objects under `KEY.changes/` ([`Remote`]), behind one
//! interface of conditional writes.

use super::ChangeError;
use crate::beside;
use crate::clock::Clock;
use crate::remote::client::{Client, Put, Write};
use crate::remote::RemoteLocation;
use crate::{is_remote, real_location, LockWait, StateLock};
use sha2::{Digest, Sha256};
use std::fs::OpenOptions;
use std::io::{self, Read, Write as _};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A document's revision as read: what a conditional write checks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// A local file: the digest of its content.
    Digest(String),
    /// An object: its ETag or generation.
    Remote(crate::remote::client::Revision),
}

/// The registry's storage. Names are relative (`apply-lock.json`,
/// `CHANGE/000001.json`).
pub(super) trait RecordStore {
    /// `STATE.changes` or `s3://BUCKET/KEY.changes`.
    fn location(&self) -> String;
    /// Where `name` is, for messages.
    fn shown(&self, name: &str) -> String {
        format!("{}/{name}", self.location())
    }
    fn read(&self, name: &str) -> Result<Option<(Vec<u8>, Revision)>, ChangeError>;
    /// Creates `name` holding `bytes`, only if there is none: `false`
    /// when there is.
    fn create(&self, name: &str, bytes: &[u8]) -> Result<bool, ChangeError>;
    /// Replaces `name` only if it is still `seen`: `false` otherwise.
    fn update(
        &self,
        name: &str,
        bytes: &[u8],
        seen: &Revision,
        clock: &Clock,
    ) -> Result<bool, ChangeError>;
    /// Replaces `name` whatever is there.
    fn overwrite(&self, name: &str, bytes: &[u8]) -> Result<(), ChangeError>;
    fn remove(&self, name: &str) -> Result<(), ChangeError>;
    /// The names of the documents of the folder `folder`.
    fn list(&self, folder: &str) -> Result<Vec<String>, ChangeError>;
    /// The names of the folders in the folder `under` (`""`: the top).
    fn folders(&self, under: &str) -> Result<Vec<String>, ChangeError>;
}

pub(super) fn open(state: &Path) -> Result<Box<dyn RecordStore>, ChangeError> {
    if is_remote(state) {
        let location = RemoteLocation::of_path(state)?;
        let client = Client::new(&location)?;
        return Ok(Box::new(Remote {
            prefix: location.sibling(".changes"),
            client,
            location,
        }));
    }
    let real = real_location(state);
    let mut folder = real.clone().into_os_string();
    folder.push(".changes");
    Ok(Box::new(Local {
        state: state.to_path_buf(),
        folder: PathBuf::from(folder),
    }))
}

/// `STATE.changes/`.
pub(super) struct Local {
    state: PathBuf,
    pub(super) folder: PathBuf,
}

fn digest(bytes: &[u8]) -> String {
    format!("{:x}", Sha256::digest(bytes))
}

impl Local {
    fn path(&self, name: &str) -> PathBuf {
        self.folder.join(name)
    }

    fn io(&self, name: &str, action: &'static str) -> impl Fn(io::Error) -> ChangeError + '_ {
        let path = self.path(name);
        move |source| ChangeError::Io {
            path: path.clone(),
            action,
            source,
        }
    }

    /// The folder of `path`, made (a folder of the user's, never a link).
    fn make_folders(&self, name: &str) -> Result<(), ChangeError> {
        let path = self.path(name);
        let folder = path.parent().unwrap_or(&self.folder);
        beside::create_folder(&self.folder).map_err(self.io("", "create the folder"))?;
        beside::create_folder(folder).map_err(self.io(name, "create the folder of"))
    }

    /// `bytes` in a new temporary file beside `name`, flushed.
    fn temporary(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, ChangeError> {
        self.make_folders(name)?;
        let path = self.path(name);
        let file_name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        let temp = path.with_file_name(format!(
            ".{}.{}-{}.tmp",
            file_name.unwrap_or_default(),
            std::process::id(),
            crate::random_uuid()
        ));
        let mut file = beside::create_new(&temp, 0o600).map_err(self.io(name, "create"))?;
        file.write_all(bytes)
            .and_then(|()| file.sync_all())
            .map_err(self.io(name, "write"))?;
        Ok(temp)
    }

    fn sync(&self, name: &str) {
        if let Some(folder) = self.path(name).parent() {
            let _ = crate::store::sync_folder(folder);
        }
    }
}

impl RecordStore for Local {
    fn location(&self) -> String {
        self.folder.display().to_string()
    }

    fn read(&self, name: &str) -> Result<Option<(Vec<u8>, Revision)>, ChangeError> {
        let path = self.path(name);
        let mut file = match beside::open(&path, OpenOptions::new().read(true), 0o600) {
            Ok(file) => file,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(self.io(name, "read")(e)),
        };
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(self.io(name, "read"))?;
        let revision = Revision::Digest(digest(&bytes));
        Ok(Some((bytes, revision)))
    }

    fn create(&self, name: &str, bytes: &[u8]) -> Result<bool, ChangeError> {
        let temp = self.temporary(name, bytes)?;
        let created = rename_no_replace(&temp, &self.path(name));
        let _ = std::fs::remove_file(&temp);
        match created {
            Ok(()) => {
                self.sync(name);
                Ok(true)
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                // What is there must be a file of the user's all the same.
                beside::check_file(&self.path(name)).map_err(self.io(name, "read"))?;
                Ok(false)
            }
            Err(e) => Err(self.io(name, "create")(e)),
        }
    }

    fn update(
        &self,
        name: &str,
        bytes: &[u8],
        seen: &Revision,
        clock: &Clock,
    ) -> Result<bool, ChangeError> {
        // The state's own lock makes the check and the rename one step.
        let wait = LockWait::new(Duration::from_secs(30), None);
        let lock = StateLock::acquire_waiting(&self.state, "change", clock, &wait)?;
        let current = self.read(name)?.map(|(_, revision)| revision);
        if current.as_ref() != Some(seen) {
            return Ok(false);
        }
        let temp = self.temporary(name, bytes)?;
        let renamed = std::fs::rename(&temp, self.path(name));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        renamed.map_err(self.io(name, "replace"))?;
        self.sync(name);
        lock.release()?;
        Ok(true)
    }

    fn overwrite(&self, name: &str, bytes: &[u8]) -> Result<(), ChangeError> {
        beside::check_file(&self.path(name)).map_err(self.io(name, "replace"))?;
        let temp = self.temporary(name, bytes)?;
        let renamed = std::fs::rename(&temp, self.path(name));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        renamed.map_err(self.io(name, "replace"))
    }

    fn remove(&self, name: &str) -> Result<(), ChangeError> {
        match beside::check_file(&self.path(name)) {
            Ok(None) => return Ok(()),
            Ok(Some(_)) => {}
            Err(e) => return Err(self.io(name, "remove")(e)),
        }
        match std::fs::remove_file(self.path(name)) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(self.io(name, "remove")(e)),
            _ => Ok(()),
        }
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, ChangeError> {
        self.entries(folder, false)
    }

    fn folders(&self, under: &str) -> Result<Vec<String>, ChangeError> {
        self.entries(under, true)
    }
}

impl Local {
    fn entries(&self, folder: &str, folders: bool) -> Result<Vec<String>, ChangeError> {
        let path = match folder {
            "" => self.folder.clone(),
            _ => self.path(folder),
        };
        let fail = |source| ChangeError::Io {
            path: path.clone(),
            action: "list",
            source,
        };
        if !beside::check_folder(&self.folder).map_err(fail)?
            || !beside::check_folder(&path).map_err(fail)?
        {
            return Ok(Vec::new());
        }
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&path).map_err(fail)? {
            let entry = entry.map_err(fail)?;
            let is_folder = entry.file_type().map_err(fail)?.is_dir();
            let name = entry.file_name().to_string_lossy().into_owned();
            if is_folder == folders && !name.starts_with('.') {
                names.push(name);
            }
        }
        Ok(names)
    }
}

/// Renames `from` to `to` only if `to` does not exist (`AlreadyExists`
/// otherwise), in one step: `renameat2(RENAME_NOREPLACE)`, or where the
/// file system lacks it a hard link (which fails the same way).
fn rename_no_replace(from: &Path, to: &Path) -> io::Result<()> {
    match crate::store::rename_with_flags(from, to, libc::RENAME_NOREPLACE) {
        Err(error)
            if matches!(
                error.raw_os_error(),
                Some(libc::EINVAL) | Some(libc::ENOSYS)
            ) =>
        {
            std::fs::hard_link(from, to)
        }
        renamed => renamed,
    }
}

/// `KEY.changes/` objects.
pub(super) struct Remote {
    client: Client,
    location: RemoteLocation,
    prefix: String,
}

impl Remote {
    fn key(&self, name: &str) -> String {
        format!("{}/{name}", self.prefix)
    }
}

impl RecordStore for Remote {
    fn location(&self) -> String {
        format!("{}.changes", self.location)
    }

    fn read(&self, name: &str) -> Result<Option<(Vec<u8>, Revision)>, ChangeError> {
        Ok(self
            .client
            .get(&self.key(name))?
            .map(|object| (object.bytes, Revision::Remote(object.revision))))
    }

    fn create(&self, name: &str, bytes: &[u8]) -> Result<bool, ChangeError> {
        let put = self
            .client
            .put(&self.key(name), bytes.to_vec(), Write::Create)?;
        Ok(matches!(put, Put::Written(_)))
    }

    fn update(
        &self,
        name: &str,
        bytes: &[u8],
        seen: &Revision,
        _clock: &Clock,
    ) -> Result<bool, ChangeError> {
        let Revision::Remote(revision) = seen else {
            return Ok(false);
        };
        let mode = Write::Update(revision.clone());
        let put = self.client.put(&self.key(name), bytes.to_vec(), mode)?;
        Ok(matches!(put, Put::Written(_)))
    }

    fn overwrite(&self, name: &str, bytes: &[u8]) -> Result<(), ChangeError> {
        self.client
            .put(&self.key(name), bytes.to_vec(), Write::Overwrite)?;
        Ok(())
    }

    fn remove(&self, name: &str) -> Result<(), ChangeError> {
        Ok(self.client.delete(&self.key(name))?)
    }

    fn list(&self, folder: &str) -> Result<Vec<String>, ChangeError> {
        let below = self.key(folder);
        Ok(self
            .client
            .list(&below)?
            .into_iter()
            .filter_map(|o| {
                let rest = o.key.strip_prefix(&below)?.strip_prefix('/')?;
                (!rest.contains('/')).then(|| rest.to_string())
            })
            .collect())
    }

    fn folders(&self, under: &str) -> Result<Vec<String>, ChangeError> {
        let below = match under {
            "" => self.prefix.clone(),
            _ => self.key(under),
        };
        let mut found: Vec<String> = self
            .client
            .list(&below)?
            .into_iter()
            .filter_map(|o| {
                let rest = o.key.strip_prefix(&below)?.strip_prefix('/')?;
                let (folder, _) = rest.split_once('/')?;
                Some(folder.to_string())
            })
            .collect();
        found.sort();
        found.dedup();
        Ok(found)
    }
}
