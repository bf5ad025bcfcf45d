//! One local location a writer writes: the state file, its backup and
//! its journal, replaced atomically.

use super::codec::{serial_in_head, serial_of, HEAD_BYTES};
use super::files::{
    exchange, folder_of, remove_leftovers, sync_opened_folder, temp_path, unsupported, write_error,
    write_reused, write_synced, write_synced_content, Content, Swapped,
};
use super::paths::{backup_path, real_location};
use crate::backend::StateStore;
use crate::clock::Clock;
use crate::journal::{self};
use crate::lock::StateLock;
use crate::model::State;
use crate::{beside, private};
use crate::{is_remote, StateError};
use hub_manifest::diag::Warnings;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One location a [`StateWriter`] writes: a local state file, its backup
/// and its journal.
pub struct LocalStore {
    /// The path as given.
    path: PathBuf,
    /// The file replaced: the given path, with symbolic links followed.
    target: PathBuf,
    backup: PathBuf,
    folder: PathBuf,
    /// Mode of the written files: the existing file's, else private.
    mode: u32,
    /// The state file at `target`: whether it exists, its serial and size.
    file: OnDisk,
    /// The folder, opened at the first write to flush it after each.
    folder_handle: Option<File>,
    /// The file each write goes to before it is swapped into place; after
    /// the swaps it holds an old version, and the next write reuses it.
    spare: Option<PathBuf>,
    /// The file system swaps two names atomically (`RENAME_EXCHANGE`).
    swaps: bool,
    journal: JournalFile,
    /// Held while a run works on this location (see [`crate::lock`]).
    lock: Option<StateLock>,
    /// The id of the lock this process held on the state when the store
    /// was opened: it must still be there before a component starts.
    lock_id: Option<String>,
    /// The state file as last read or written (see [`crate::fence`]).
    identity: Option<crate::fence::FileIdentity>,
    /// Why this run lost the state: nothing more is written.
    fenced: Option<String>,
}

/// The state file on disk, as last read or written.
#[derive(Debug, Clone, Copy)]
struct OnDisk {
    /// A file exists at `target`.
    exists: bool,
    serial: u64,
    size: u64,
}

/// `STATE.journal` as a writer sees it.
struct JournalFile {
    path: PathBuf,
    /// Open for writing once a record was written; shared with the
    /// [`Flush`](super::flush::Flush)es of records not flushed yet.
    file: Option<Arc<File>>,
    /// Bytes of complete records (and the header).
    size: u64,
    /// Bytes of the file: `size`, then the zeros written ahead of the
    /// records (see [`journal::ZEROS_AHEAD`]).
    allocated: u64,
    /// Complete records since the last fold.
    records: usize,
    /// An append failed and the file may end in a partial record: the
    /// next write folds.
    broken: bool,
}

/// The steps of [`LocalStore::fold_without_record`] a test may stop a fold
/// after, as a kill there would (see [`fail_point`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum FoldStep {
    /// Both files written and flushed, nothing renamed.
    Written,
    /// `STATE` renamed, the folder not flushed.
    Renamed,
    /// The folder flushed after the rename of `STATE`.
    Flushed,
    /// `STATE.backup` renamed, the journal not removed.
    BackedUp,
}

#[cfg(test)]
thread_local! {
    /// The step after which this thread's next fold stops (tests only).
    pub(super) static STOP_AFTER: std::cell::Cell<Option<FoldStep>> =
        const { std::cell::Cell::new(None) };
}

/// Stops the fold under way after `step` when a test asked for it: the
/// files are left as a kill at that instant would leave them, except the
/// temporary files, which a kill would leave too and a reader ignores.
fn fail_point(step: FoldStep) -> Result<(), StateError> {
    #[cfg(test)]
    if STOP_AFTER.with(|stop| stop.get()) == Some(step) {
        return Err(StateError::Write {
            path: PathBuf::new(),
            action: KILLED,
            source: std::io::Error::other(format!("stopped after {step:?}")),
        });
    }
    let _ = step;
    Ok(())
}

/// The error is a test's kill point's (see [`fail_point`]).
fn killed(error: &StateError) -> bool {
    matches!(error, StateError::Write { action, .. } if *action == KILLED)
}

const KILLED: &str = "stop (a test's kill point)";

/// The first [`HEAD_BYTES`] of the file at `path` (all of it when shorter).
fn read_head(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut head = Vec::with_capacity(HEAD_BYTES);
    File::open(path)?
        .take(HEAD_BYTES as u64)
        .read_to_end(&mut head)?;
    Ok(head)
}

impl Drop for LocalStore {
    fn drop(&mut self) {
        if let Some(spare) = self.spare.take() {
            let _ = std::fs::remove_file(spare);
        }
    }
}

impl LocalStore {
    /// The location `path` and its serial (`known` when given: the serial
    /// of the state just read from it, journal included). A stale journal
    /// is removed, a cut last record cut off: the caller holds the lock.
    pub(super) fn open(path: &Path, known: Option<u64>) -> Result<(LocalStore, u64), StateError> {
        if is_remote(path) {
            return Err(StateError::Remote {
                path: path.to_path_buf(),
            });
        }
        let target = real_location(path);
        let (exists, mode, file_size) = match std::fs::metadata(&target) {
            Ok(meta) => (true, meta.permissions().mode() & 0o7777, meta.len()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, private::FILE_MODE, 0),
            Err(source) => {
                return Err(StateError::Write {
                    path: target,
                    action: "read the current content to back it up",
                    source,
                })
            }
        };
        let journal_path = journal::journal_path(&target);
        let backup = backup_path(&target);
        for companion in [&journal_path, &backup] {
            beside::check_file(companion).map_err(|source| StateError::Beside {
                path: companion.clone(),
                source,
            })?;
        }
        let has_journal = std::fs::symlink_metadata(&journal_path).is_ok();
        let read_error = |source| StateError::Write {
            path: target.clone(),
            action: "read the current content to back it up",
            source,
        };
        // With a journal, `known` may be its last record's: the file's own
        // serial is read from the file, from its head when the caller just
        // decoded it (see `serial_in_head`), else by parsing it.
        let from_head = match (known, has_journal && exists) {
            (Some(_), true) => serial_in_head(&read_head(&target).map_err(read_error)?),
            _ => None,
        };
        let file_serial = match (known, from_head) {
            (Some(serial), _) if !has_journal => serial,
            (_, Some(serial)) => serial,
            _ if exists => serial_of(&std::fs::read(&target).map_err(read_error)?),
            _ => 0,
        };
        remove_leftovers(&target);
        let identity = crate::fence::identity_of(&target);
        let mut location = LocalStore {
            path: path.to_path_buf(),
            backup,
            folder: folder_of(&target),
            target,
            mode,
            file: OnDisk {
                exists,
                serial: file_serial,
                size: file_size,
            },
            folder_handle: None,
            spare: None,
            swaps: true,
            journal: JournalFile {
                path: journal_path,
                file: None,
                size: 0,
                allocated: 0,
                records: 0,
                broken: false,
            },
            lock: None,
            lock_id: crate::lock::held_here(path),
            identity,
            fenced: None,
        };
        let mut serial = known.unwrap_or(file_serial).max(file_serial);
        if has_journal {
            serial = serial.max(location.adopt_journal()?);
        }
        Ok((location, serial))
    }

    /// The location `path`, locked for `operation` first (the lock is held
    /// until [`super::StateStore::unlock`] or the store is dropped).
    pub fn locked(path: &Path, operation: &str, clock: &Clock) -> Result<LocalStore, StateError> {
        let lock = StateLock::acquire(path, operation, clock)?;
        let (mut store, _) = LocalStore::open(path, None)?;
        store.lock = Some(lock);
        Ok(store)
    }

    /// The path as given.
    pub(super) fn given_path(&self) -> &Path {
        &self.path
    }

    /// The journal's records since the last fold, its size, and whether
    /// an append failed on it.
    pub(super) fn journal_counts(&self) -> (usize, u64, bool) {
        (self.journal.records, self.journal.size, self.journal.broken)
    }

    /// The size of the state file as last read or written.
    pub(super) fn file_size(&self) -> u64 {
        self.file.size
    }

    pub(super) fn take_lock(&mut self, operation: &str, clock: &Clock) -> Result<(), StateError> {
        if self.lock.is_none() {
            let lock = StateLock::acquire(&self.path, operation, clock)?;
            self.lock_id = Some(lock.info().id.clone());
            self.lock = Some(lock);
        }
        Ok(())
    }

    pub(super) fn release_lock(&mut self) -> Result<(), StateError> {
        self.lock_id = None;
        match self.lock.take() {
            Some(lock) => lock.release(),
            None => Ok(()),
        }
    }

    /// Takes over the journal a killed run left: a stale one (or one
    /// without a record) is removed, a cut last record cut off. Returns the
    /// serial of its last record.
    fn adopt_journal(&mut self) -> Result<u64, StateError> {
        let path = self.journal.path.clone();
        let failure = |action| write_error(&path, action);
        let scanned = match journal::scan(&path)? {
            Some(scanned)
                if self.file.exists
                    && scanned.base == self.file.serial
                    && !scanned.records.is_empty() =>
            {
                scanned
            }
            _ => match std::fs::remove_file(&path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                    return Err(failure("remove the stale journal")(e))
                }
                _ => return Ok(0),
            },
        };
        if scanned.cut {
            let file = beside::open(&path, OpenOptions::new().write(true), private::FILE_MODE)
                .map_err(failure("cut the journal's last record"))?;
            file.set_len(scanned.valid_length)
                .and_then(|()| file.sync_all())
                .map_err(failure("cut the journal's last record"))?;
        }
        self.journal.size = scanned.valid_length;
        self.journal.records = scanned.records.len();
        Ok(scanned.last_serial())
    }

    /// Appends `line` (one record) to the journal, created with its header
    /// if needed; on disk when it returns if `durable` (which flushes the
    /// records appended before it too). The record is written over the
    /// zeros ahead of the records, more of which are written first when it
    /// would not fit.
    pub(super) fn append_record(
        &mut self,
        operation: &str,
        line: &str,
        durable: bool,
    ) -> Result<(), StateError> {
        if self.fenced.is_some() {
            return self.prove_owner();
        }
        let path = self.journal.path.clone();
        let failure = |action| write_error(&path, action);
        let created = self.journal.file.is_none();
        if created {
            // The journal's name may be another run's by now.
            self.prove_owner()?;
            // A new journal is created, never opened: a link or file
            // planted at its path since the last fold is refused.
            let mut options = OpenOptions::new();
            options.write(true).create_new(self.journal.size == 0);
            let file = beside::open(&path, &mut options, private::FILE_MODE)
                .map_err(failure("create the journal"))?;
            // A new journal starts empty, an adopted one at its last record.
            file.set_len(self.journal.size)
                .map_err(failure("create the journal"))?;
            self.journal.allocated = self.journal.size;
            self.journal.file = Some(Arc::new(file));
        }
        let mut bytes = Vec::with_capacity(line.len() + 64);
        if self.journal.size == 0 {
            bytes.extend_from_slice(journal::header(self.file.serial, operation).as_bytes());
        }
        bytes.extend_from_slice(line.as_bytes());
        let end = self.journal.size + bytes.len() as u64;
        let mut allocated = self.journal.allocated;
        if end > allocated {
            allocated = end.next_multiple_of(journal::ZEROS_AHEAD);
            bytes.resize(bytes.len() + (allocated - end) as usize, 0);
        }
        let Some(file) = self.journal.file.as_deref() else {
            return Ok(());
        };
        let written =
            file.write_all_at(&bytes, self.journal.size)
                .and_then(|()| match durable || created {
                    true => file.sync_data(),
                    false => Ok(()),
                });
        if let Err(source) = written {
            self.journal.broken = file
                .set_len(self.journal.size)
                .and_then(|()| file.sync_data())
                .is_err();
            self.journal.allocated = self.journal.size;
            return Err(failure("append to the journal")(source));
        }
        self.journal.allocated = allocated;
        self.journal.size = end;
        self.journal.records += 1;
        if created {
            // The journal's name must reach the disk with its first record.
            self.flush_folder()?;
        }
        Ok(())
    }

    /// [`LocalStore::append_record`] not flushed: the journal to flush
    /// before anything relies on the record (see [`super::flush`]), if
    /// the record was written to one.
    pub(super) fn append_deferred(
        &mut self,
        operation: &str,
        line: &str,
    ) -> Result<Option<(PathBuf, Arc<File>)>, StateError> {
        self.append_record(operation, line, false)?;
        Ok(self
            .journal
            .file
            .as_ref()
            .map(|file| (self.journal.path.clone(), Arc::clone(file))))
    }

    /// Replaces the state file with `state` and removes the journal.
    /// `backup`: written as `STATE.backup` first (the state as folded
    /// before); `None`: the current file becomes the backup. A
    /// [`Content::Derived`] `state` is made from the backup so written.
    pub(super) fn fold_files(
        &mut self,
        serial: u64,
        backup: Option<&mut Content<'_>>,
        state: &mut Content<'_>,
    ) -> Result<(), StateError> {
        self.prove_owner()?;
        let size = match backup {
            None => self.replace(state)?,
            Some(backup) => {
                self.install(&self.backup.clone(), backup)?;
                // Made from the backup just written, when it can be.
                Content::after(state, &self.backup.clone(), |state| {
                    self.install(&self.target.clone(), state)
                })?
            }
        };
        self.file.exists = true;
        self.file.size = size;
        self.file.serial = serial;
        self.identity = crate::fence::identity_of(&self.target);
        self.drop_journal()
    }

    /// Replaces the state file with `state` (serial `serial`), newer than
    /// the state file with its journal, and `STATE.backup` with `backup`
    /// (the same state one serial earlier), without a record of `state` in
    /// the journal; then removes the journal.
    ///
    /// A reader gets the state file with the journal's records up to the
    /// rename of `STATE`, and the new state from then on: the journal's
    /// `base` is the old file's serial, lower than `serial`, so the
    /// journal is stale (ignored) from the instant the new file has its
    /// name. The backup is replaced only after that rename reached the
    /// disk (the folder flushed): it never holds a state newer than the
    /// one a reader gets. A kill between the two renames leaves the
    /// backup one version older, as a kill inside a plain write does.
    /// Both files are written and flushed before either is renamed: a
    /// failure before the first rename leaves everything as it was. The
    /// state is written first: a [`Content::Derived`] `backup` is made
    /// from it.
    pub(super) fn fold_without_record(
        &mut self,
        serial: u64,
        backup: &mut Content<'_>,
        state: &mut Content<'_>,
    ) -> Result<(), StateError> {
        self.prove_owner()?;
        let new_state = temp_path(&self.target);
        let new_backup = temp_path(&self.backup);
        let mut size = 0;
        let written = write_synced_content(&new_state, state, self.mode)
            .and_then(|written| {
                size = written;
                // Made from the state just written, when it can be.
                Content::after(backup, &new_state, |backup| {
                    write_synced_content(&new_backup, backup, self.mode)
                })
                .map(|_| ())
            })
            .map_err(|source| StateError::Write {
                path: self.target.clone(),
                action: "write a temporary file",
                source,
            });
        let renamed = written.and_then(|()| {
            fail_point(FoldStep::Written)?;
            std::fs::rename(&new_state, &self.target).map_err(|source| StateError::Write {
                path: self.target.clone(),
                action: "rename the temporary file",
                source,
            })
        });
        if let Err(error) = renamed {
            let _ = std::fs::remove_file(&new_state);
            let _ = std::fs::remove_file(&new_backup);
            return Err(error);
        }
        // `STATE` is the new state from here on, whatever follows.
        self.file.exists = true;
        self.file.size = size;
        self.file.serial = serial;
        self.identity = crate::fence::identity_of(&self.target);
        let backed_up = fail_point(FoldStep::Renamed)
            .and_then(|()| self.flush_folder())
            .and_then(|()| fail_point(FoldStep::Flushed))
            .and_then(|()| {
                std::fs::rename(&new_backup, &self.backup).map_err(|source| StateError::Write {
                    path: self.backup.clone(),
                    action: "rename the backup",
                    source,
                })
            })
            .and_then(|()| fail_point(FoldStep::BackedUp));
        if backed_up.as_ref().is_err_and(killed) {
            // A test's kill: the journal stays, as after a real one.
            return backed_up;
        }
        if backed_up.is_err() {
            let _ = std::fs::remove_file(&new_backup);
        }
        // The journal is stale whether or not the backup was replaced.
        let dropped = self.drop_journal();
        backed_up.and(dropped)
    }

    /// Fails when this run no longer owns the state (see
    /// [`crate::fence`]); once it failed, it always fails.
    pub(super) fn prove_owner(&mut self) -> Result<(), StateError> {
        if self.fenced.is_none() {
            self.fenced = crate::fence::local_owner_lost(&crate::fence::LocalOwnership {
                given: &self.path,
                target: &self.target,
                lock_id: self.lock_id.as_deref(),
                seen: self.identity,
                serial: if self.file.exists {
                    self.file.serial
                } else {
                    0
                },
            });
        }
        match &self.fenced {
            Some(reason) => Err(crate::fence::lost(&self.path, reason.clone())),
            None => Ok(()),
        }
    }

    /// Writes `content` to a flushed temporary file renamed over `path`;
    /// returns its length.
    fn install(&self, path: &Path, content: &mut Content<'_>) -> Result<u64, StateError> {
        let temp = temp_path(path);
        let result = write_synced_content(&temp, content, self.mode)
            .and_then(|written| std::fs::rename(&temp, path).map(|()| written))
            .map_err(|source| StateError::Write {
                path: path.to_path_buf(),
                action: "replace the file",
                source,
            });
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }

    /// Removes the journal after a fold, and flushes the folder.
    fn drop_journal(&mut self) -> Result<(), StateError> {
        let had =
            self.journal.file.take().is_some() || self.journal.records > 0 || self.journal.broken;
        self.journal.size = 0;
        self.journal.allocated = 0;
        self.journal.records = 0;
        self.journal.broken = false;
        if !had {
            return Ok(());
        }
        match std::fs::remove_file(&self.journal.path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(StateError::Write {
                    path: self.journal.path.clone(),
                    action: "remove the folded journal",
                    source: e,
                })
            }
            _ => {}
        }
        self.flush_folder()
    }

    /// The plain atomic write of `content`; returns its length.
    fn replace(&mut self, content: &mut Content<'_>) -> Result<u64, StateError> {
        if self.swaps {
            match self.swap_in(content) {
                Swapped::Done(result) => {
                    let written = result?;
                    self.flush_folder()?;
                    return Ok(written);
                }
                Swapped::Unsupported => self.swaps = false,
                Swapped::NotFiles => {}
            }
        }
        let failure = |action: &'static str| {
            let path = self.target.clone();
            move |source| StateError::Write {
                path,
                action,
                source,
            }
        };
        let temp = temp_path(&self.target);
        let result = write_synced_content(&temp, content, self.mode)
            .map_err(failure("write a temporary file"))
            .and_then(|written| {
                if self.file.exists {
                    self.back_up()?;
                }
                std::fs::rename(&temp, &self.target)
                    .map_err(failure("rename the temporary file"))?;
                Ok(written)
            });
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        let written = result?;
        self.flush_folder()?;
        Ok(written)
    }

    /// The new content goes to the spare file (reused from one write to the
    /// next), which then swaps names with `STATE`, and the previous content
    /// with `STATE.backup`: `STATE` and `STATE.backup` are whole at every
    /// moment, and no file is created or deleted after the first writes,
    /// which keeps file systems from hunting for a free inode each time.
    fn swap_in(&mut self, content: &mut Content<'_>) -> Swapped {
        let failure = |action: &'static str, path: &Path| {
            let path = path.to_path_buf();
            move |source| StateError::Write {
                path,
                action,
                source,
            }
        };
        // Only regular files trade names: anything else at either path is
        // left to the plain write, which reports it.
        let regular =
            |path: &Path| std::fs::symlink_metadata(path).map(|meta| meta.file_type().is_file());
        if self.file.exists
            && (!matches!(regular(&self.target), Ok(true))
                || matches!(regular(&self.backup), Ok(false)))
        {
            return Swapped::NotFiles;
        }
        let spare = self
            .spare
            .get_or_insert_with(|| temp_path(&self.target))
            .clone();
        let written = match write_reused(&spare, content, self.mode) {
            Ok(written) => written,
            Err(error) => {
                return Swapped::Done(Err(failure("write a temporary file", &self.target)(error)))
            }
        };
        if !self.file.exists {
            self.spare = None;
            let renamed = std::fs::rename(&spare, &self.target).map(|()| written);
            return Swapped::Done(
                renamed.map_err(failure("rename the temporary file", &self.target)),
            );
        }
        match exchange(&spare, &self.target) {
            Err(error) if unsupported(&error) => return Swapped::Unsupported,
            Err(error) => {
                return Swapped::Done(Err(failure("rename the temporary file", &self.target)(
                    error,
                )))
            }
            Ok(()) => {}
        }
        // `spare` now holds the previous content: it becomes the backup.
        let backed_up = match exchange(&spare, &self.backup) {
            Ok(()) => Ok(()),
            Err(_) => {
                self.spare = None;
                std::fs::rename(&spare, &self.backup)
            }
        };
        Swapped::Done(
            backed_up
                .map(|()| written)
                .map_err(failure("rename the backup", &self.backup)),
        )
    }

    fn flush_folder(&mut self) -> Result<(), StateError> {
        let failure = |action: &'static str| {
            let path = self.target.clone();
            move |source| StateError::Write {
                path,
                action,
                source,
            }
        };
        let folder = match &self.folder_handle {
            Some(folder) => folder,
            None => self
                .folder_handle
                .insert(File::open(&self.folder).map_err(failure("flush the folder"))?),
        };
        sync_opened_folder(folder).map_err(failure("flush the folder"))
    }

    /// `STATE.backup` becomes the current `STATE`: a hard link renamed into
    /// place, or a flushed copy where links are not supported.
    fn back_up(&self) -> Result<(), StateError> {
        let failure = |action: &'static str| {
            let path = self.backup.clone();
            move |source| StateError::Write {
                path,
                action,
                source,
            }
        };
        let temp = temp_path(&self.backup);
        let _ = std::fs::remove_file(&temp);
        let result = match std::fs::hard_link(&self.target, &temp) {
            Ok(()) => Ok(()),
            Err(_) => std::fs::read(&self.target)
                .and_then(|bytes| write_synced(&temp, &bytes, self.mode))
                .map_err(failure("copy the current content")),
        }
        .and_then(|()| std::fs::rename(&temp, &self.backup).map_err(failure("rename the backup")));
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result
    }
}

impl StateStore for LocalStore {
    fn location(&self) -> &Path {
        self.given_path()
    }

    fn load(&self, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
        super::read::read(self.given_path(), warnings)
    }

    fn append(&mut self, operation: &str, record: &str) -> Result<(), StateError> {
        self.append_record(operation, record, true)
    }

    fn append_unsynced(&mut self, operation: &str, record: &str) -> Result<(), StateError> {
        self.append_record(operation, record, false)
    }

    fn fold(&mut self, serial: u64, backup: Option<&[u8]>, state: &[u8]) -> Result<(), StateError> {
        let mut backup = backup.map(Content::Bytes);
        self.fold_files(serial, backup.as_mut(), &mut Content::Bytes(state))
    }

    fn lock(&mut self, operation: &str, clock: &Clock) -> Result<(), StateError> {
        self.take_lock(operation, clock)
    }

    fn unlock(&mut self) -> Result<(), StateError> {
        self.release_lock()
    }

    fn prove_owner(&mut self) -> Result<(), StateError> {
        LocalStore::prove_owner(self)
    }

    fn journal_records(&self) -> usize {
        self.journal_counts().0
    }

    fn journal_size(&self) -> u64 {
        self.journal_counts().1
    }

    fn folded_size(&self) -> u64 {
        self.file_size()
    }

    /// A journal file smaller than [`crate::journal::FOLD_MIN_JOURNAL`] is
    /// read at once whatever the state's size: folding a small state after
    /// every few records would cost more than the records themselves.
    fn journal_outgrown(&self) -> bool {
        let (records, size, _) = self.journal_counts();
        records > 0 && size > self.file_size().max(crate::journal::FOLD_MIN_JOURNAL)
    }

    fn journal_broken(&self) -> bool {
        self.journal_counts().2
    }
}

#[cfg(test)]
mod tests;
