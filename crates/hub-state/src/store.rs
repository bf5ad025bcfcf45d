//! Reading and writing state files: gzip and encryption detection,
//! kind/version checks,
//! atomic replacement with a backup of the previous content, the serial.

use super::backend::StateStore;
use super::clock::Clock;
use super::crypto;
use super::integrity;
use super::journal::{self, Recorder};
use super::layout::{resolve_snapshots, StateFormat};
use super::lock::StateLock;
use super::model::State;
use super::render::{Changed, Renderer};
use super::{beside, private};
use super::{is_remote, StateError};
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::{locate, ManifestError, Segment, SourceFile};
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{FileExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Write gzip-compressed YAML instead of plain YAML.
    pub compressed: bool,
    /// How component snapshots are laid out.
    pub format: StateFormat,
}

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

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Reads the state at `path` as hub sees it: the file, with the records of
/// its journal (`STATE.journal`, see [`super::journal`]) applied in memory;
/// `Ok(None)` when the file does not exist. Nothing is written: every
/// command reads the state through this function, the read-only ones
/// without a lock.
pub fn read(path: &Path, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
    if is_remote(path) {
        return super::remote::store::read(path, warnings);
    }
    let Some(mut state) = read_file(path, warnings)? else {
        return Ok(None);
    };
    super::journal::fold_into(&real_location(path), &mut state)?;
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
    let source = SourceFile::from_bytes(path, bytes).map_err(|e| decode_error(path, e))?;
    parse_source(&source, warnings).map(Some)
}

/// The state's own bytes: a sealed (encrypted) state is decrypted with the
/// password in `HUB_CRYPTO_PASSWORD` (see [`super::crypto`]); anything else
/// is returned as it is.
pub(crate) fn unseal(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, StateError> {
    if !crypto::is_sealed(&bytes) {
        return Ok(bytes);
    }
    crypto::password_from_environment()
        .and_then(|password| crypto::open(&password, &bytes))
        .map_err(|error| StateError::Sealed {
            path: path.to_path_buf(),
            error,
        })
}

/// The bytes of the file at `path`; `Ok(None)` when it does not exist.
/// `backup` is named in the error when it cannot be read.
pub(super) fn read_bytes(
    path: &Path,
    backup: Option<PathBuf>,
) -> Result<Option<Vec<u8>>, StateError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StateError::Read {
            path: path.to_path_buf(),
            source,
            backup,
        }),
    }
}

/// Parses the text of a state file; `path` is used in messages only.
pub fn parse(path: &Path, text: &str, warnings: &mut Warnings) -> Result<State, StateError> {
    let source = SourceFile {
        path: path.to_path_buf(),
        text: text.to_string(),
    };
    parse_source(&source, warnings)
}

/// [`parse`] of a file's text as read, without copying it (a state's
/// text is as large as the state).
fn parse_source(source: &SourceFile, warnings: &mut Warnings) -> Result<State, StateError> {
    let (path, text) = (source.path.as_path(), source.text.as_str());
    integrity::check(text).map_err(|reason| StateError::Broken {
        path: path.to_path_buf(),
        reason,
        backup: existing_backup(path),
    })?;
    let (state, documents) = match super::pieces::first_state(source) {
        Some((state, documents)) => (Some(state), documents),
        None => source
            .first_document::<State>(warnings)
            .map_err(|e| decode_error(path, e))?,
    };
    let mut state = state.ok_or_else(|| StateError::Empty {
        path: path.to_path_buf(),
        backup: existing_backup(path),
    })?;
    if documents > 1 {
        warnings.warn(
            Some(Location::file(path)),
            "the state file holds more than one YAML document; only the first is read",
        );
    }
    check_document(path, text, &state)?;
    resolve_snapshots(path, &mut state)?;
    Ok(state)
}

fn check_document(path: &Path, text: &str, state: &State) -> Result<(), StateError> {
    let at = |key: &str| {
        let (line, column) = locate(text, &[Segment::Key(key.to_string())]).unwrap_or((1, 1));
        Location::at(path, line, column)
    };
    if state.kind != "state" {
        return Err(StateError::WrongKind {
            location: at("kind"),
            kind: state.kind.clone(),
        });
    }
    if state.version != 1 {
        return Err(StateError::WrongVersion {
            location: at("version"),
            version: state.version,
        });
    }
    for name in state.components.keys() {
        if let Err(error) = hub_manifest::names::check_component_name(name) {
            let entry = [
                Segment::Key("components".to_string()),
                Segment::Key(name.clone()),
            ];
            let (line, column) = locate(text, &entry).unwrap_or((1, 1));
            let location = Location::at(path, line, column);
            return Err(StateError::BadComponentName { location, error });
        }
    }
    Ok(())
}

pub(super) fn decode_error(path: &Path, error: ManifestError) -> StateError {
    let backup = existing_backup(path);
    match error {
        ManifestError::Yaml {
            location, message, ..
        }
        | ManifestError::Limit { location, message } => StateError::Yaml {
            location,
            message,
            backup,
        },
        ManifestError::Read { source, .. } => StateError::Read {
            path: path.to_path_buf(),
            source,
            backup,
        },
        ManifestError::Gzip { source, .. } => StateError::Damaged {
            path: path.to_path_buf(),
            reason: format!("it looks gzip-compressed but cannot be decompressed ({source})"),
            backup,
        },
        other => StateError::Damaged {
            path: path.to_path_buf(),
            reason: other.to_string(),
            backup,
        },
    }
}

fn existing_backup(path: &Path) -> Option<PathBuf> {
    let backup = backup_path(path);
    backup.is_file().then_some(backup)
}

/// The YAML text a state is written as in the reference's layout
/// (canonical order, block style).
pub fn render(state: &State) -> Result<String, StateError> {
    Ok(hub_manifest::emit::document(&yaml_serde::to_value(
        state.canonical(),
    )?))
}

/// The YAML text of `state` in `format`, as a run writes it (long values
/// a component shares with a stack parameter written once, see
/// [`super::render`]).
pub fn render_as(state: &State, format: StateFormat) -> Result<String, StateError> {
    Renderer::new(format).render(state)
}

/// Writes `state` to `path` atomically, after saving the current content
/// as `path.backup`. The written serial is one more than the larger of
/// `state.serial` and the serial on disk; `state.serial` is updated once
/// the write succeeded. A run writing many times uses a [`StateWriter`].
pub fn write(path: &Path, state: &mut State, options: &WriteOptions) -> Result<(), StateError> {
    StateWriter::open(path, *options)?.write(state)
}

/// Writes one state again and again — to one location, or the same bytes to
/// several (`-s a,b`) — while the locations' locks are held (see
/// [`super::lock`]), so that nothing else changes the files between writes.
///
/// A checkpoint ([`StateWriter::write_component`],
/// [`StateWriter::write_components`]) appends one record of what changed
/// to each location's journal, flushed before it returns (see
/// [`super::journal`]). Any other write, the writer's first one, and a
/// checkpoint after which the journal outgrew the file or the last fold is
/// older than [`journal::FOLD_AFTER`], fold: the whole state is written
/// and the journal removed. A fold after records first appends the
/// pending change (a whole-state record), writes `STATE.backup` as the
/// state so folded, then `STATE` with the next serial.
///
/// Created once per run, it knows the serial on disk and whether a file
/// exists at each location, and keeps the text of every part of the state
/// that did not change since the previous fold (a `Renderer`): a fold
/// neither reads nor parses the files, and renders only what changed, once
/// for all locations. At each location, a fold without records:
///
/// 1. writes the new content to a temporary file in the same folder and
///    flushes it (`fsync`);
/// 2. hard-links the current file as a temporary name and renames that
///    over `STATE.backup` (a copy, flushed, where hard links are not
///    supported);
/// 3. renames the temporary file over `STATE`;
/// 4. flushes the folder.
///
/// `STATE` holds a complete version at every instant: the old one until
/// the rename of step 3, the new one (already on disk) after it. The backup
/// is a complete version at every instant too: the one before, or the one
/// `STATE` held before this write. Once `write` returns, everything is on
/// disk. A failed write leaves `STATE` as it was and removes its temporary
/// files.
///
/// Every location gets the same serial: one more than the largest found
/// on disk or written before. A location that cannot be written does not
/// stop the others: a write succeeds when at least one location was
/// written, and the errors of the others are kept for
/// [`StateWriter::take_failures`] (a run shows them as warnings). When no
/// location was written, the write fails with the first location's error
/// (the others' are kept as well).
pub struct StateWriter {
    /// The locations, in the order given.
    targets: Vec<Target>,
    options: WriteOptions,
    /// The largest serial on disk, or the last one written.
    serial: u64,
    renderer: Renderer,
    /// The text being written: empty between writes (a state's text is
    /// as large as the state; it is not kept once written).
    text: String,
    /// The length of the last text rendered, reserved for the next.
    text_len: usize,
    /// The entries checkpoints changed since the last render; `None`: any
    /// may have (a whole write), so every entry is compared.
    changed_since_render: Option<HashSet<String>>,
    /// Errors of locations that could not be written while another was.
    failures: Vec<StateError>,
    /// Builds the journal records of checkpoints.
    recorder: Recorder,
    /// When this writer last folded; `None` before its first write, which
    /// always folds.
    last_fold: Option<Instant>,
    /// When the fold under way started, and what the last one took.
    fold_started: Instant,
    last_fold_took: std::time::Duration,
}

/// `text` with its top-level `serial: from` line (the first, in the head)
/// reading `serial: to`, into `out`; false when there is no such line.
fn with_serial(text: &str, from: u64, to: u64, out: &mut String) -> bool {
    let line = format!("\nserial: {from}\n");
    let Some(at) = text.find(&line) else {
        return false;
    };
    // Room for the frame as well (see `StateWriter::encoded_owned`).
    out.reserve(text.len() + 256);
    out.push_str(&text[..at]);
    out.push_str(&format!("\nserial: {to}\n"));
    out.push_str(&text[at + line.len()..]);
    true
}

/// One location of a [`StateWriter`], and whether its last write
/// reached it.
struct Target {
    store: Box<dyn StateStore>,
    written: bool,
}

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
    /// A file exists at `target`.
    exists: bool,
    /// The folder, opened at the first write to flush it after each.
    folder_handle: Option<File>,
    /// The file each write goes to before it is swapped into place; after
    /// the swaps it holds an old version, and the next write reuses it.
    spare: Option<PathBuf>,
    /// The file system swaps two names atomically (`RENAME_EXCHANGE`).
    swaps: bool,
    /// The serial and size of the state file on disk.
    file_serial: u64,
    file_size: u64,
    journal: JournalFile,
    /// Held while a run works on this location (see [`super::lock`]).
    lock: Option<StateLock>,
    /// The id of the lock this process held on the state when the store
    /// was opened: it must still be there before a component starts.
    lock_id: Option<String>,
    /// The state file as last read or written (see [`super::fence`]).
    identity: Option<super::fence::FileIdentity>,
    /// Why this run lost the state: nothing more is written.
    fenced: Option<String>,
}

/// `STATE.journal` as a writer sees it.
struct JournalFile {
    path: PathBuf,
    /// Open for writing once a record was written.
    file: Option<File>,
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

impl Drop for LocalStore {
    fn drop(&mut self) {
        if let Some(spare) = self.spare.take() {
            let _ = std::fs::remove_file(spare);
        }
    }
}

impl StateWriter {
    /// A writer for `path`; the serial on disk is read from the file.
    pub fn open(path: &Path, options: WriteOptions) -> Result<StateWriter, StateError> {
        StateWriter::open_all(&[path.to_path_buf()], options, None)
    }

    /// A writer for `path` whose content was just read (under the lock) as
    /// a state with `serial`; the file is not read again.
    pub fn resume(
        path: &Path,
        options: WriteOptions,
        serial: u64,
    ) -> Result<StateWriter, StateError> {
        StateWriter::open_all(&[path.to_path_buf()], options, Some((path, serial)))
    }

    /// A writer for every location of `paths`, in that order. `read`: a
    /// location whose content was just read (under the lock) as a state
    /// with that serial; it is not read again. The serial of every other
    /// existing location is read from its file.
    ///
    /// A location that cannot be examined is left out, its error kept for
    /// [`StateWriter::take_failures`]; when none can be, the first error is
    /// returned.
    pub fn open_all(
        paths: &[PathBuf],
        options: WriteOptions,
        read: Option<(&Path, u64)>,
    ) -> Result<StateWriter, StateError> {
        let mut writer = StateWriter {
            targets: Vec::with_capacity(paths.len()),
            options,
            serial: 0,
            renderer: Renderer::new(options.format),
            text: String::new(),
            text_len: 0,
            changed_since_render: Some(HashSet::new()),
            failures: Vec::new(),
            recorder: Recorder::default(),
            last_fold: None,
            fold_started: Instant::now(),
            last_fold_took: std::time::Duration::ZERO,
        };
        for path in paths {
            let known = read
                .filter(|(read, _)| *read == path.as_path())
                .map(|(_, serial)| serial);
            let opened = match is_remote(path) {
                true => super::remote::RemoteStore::open(path, known)
                    .map(|(store, serial)| (Box::new(store) as Box<dyn StateStore>, serial)),
                false => LocalStore::open(path, known)
                    .map(|(store, serial)| (Box::new(store) as Box<dyn StateStore>, serial)),
            };
            match opened {
                Ok((store, serial)) => {
                    writer.serial = writer.serial.max(serial);
                    writer.targets.push(Target {
                        store,
                        written: false,
                    });
                }
                Err(error) => writer.failures.push(error),
            }
        }
        if writer.targets.is_empty() {
            let mut failures = std::mem::take(&mut writer.failures).into_iter();
            return Err(failures.next().unwrap_or_else(no_location));
        }
        Ok(writer)
    }

    /// The serial of the last version written, or found on disk.
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The locations (as given) the last write reached.
    pub fn written(&self) -> impl Iterator<Item = &Path> {
        self.targets
            .iter()
            .filter(|t| t.written)
            .map(|t| t.store.location())
    }

    /// The errors of the locations that could not be written (or opened)
    /// since the previous call, while another location was.
    /// Where each location keeps the state this run replaced, where that
    /// needs saying (see [`StateStore::previous_version`]).
    pub fn previous_versions(&self) -> Vec<String> {
        self.targets
            .iter()
            .filter_map(|t| t.store.previous_version())
            .collect()
    }

    pub fn take_failures(&mut self) -> Vec<StateError> {
        std::mem::take(&mut self.failures)
    }

    /// Writes `state` with a serial one more than the larger of
    /// `state.serial` and the last one on disk; `state.serial` is updated
    /// once the write succeeded (at one location at least).
    pub fn write(&mut self, state: &mut State) -> Result<(), StateError> {
        self.write_changed(state, Changed::Any)
    }

    /// [`StateWriter::write`] after a change to the entry of `component`
    /// only (and to anything outside `components`; other entries may have
    /// been removed) since the previous write through this writer: the
    /// other entries are not compared with what was last written, which
    /// keeps a write's cost from growing with the number of components.
    /// Debug builds check the promise.
    pub fn write_component(
        &mut self,
        state: &mut State,
        component: &str,
    ) -> Result<(), StateError> {
        self.write_changed(state, Changed::Only(component))
    }

    /// [`StateWriter::write_component`] after changes to the entries of
    /// `components` only.
    pub fn write_components(
        &mut self,
        state: &mut State,
        components: &[String],
    ) -> Result<(), StateError> {
        self.write_changed(state, Changed::Several(components))
    }

    /// A checkpoint (the entries named) goes to the journals; anything else,
    /// and the first write, fold.
    fn write_changed(&mut self, state: &mut State, changed: Changed<'_>) -> Result<(), StateError> {
        let names: Vec<&str> = match changed {
            Changed::Any => return self.fold(state, true),
            Changed::Only(name) => vec![name],
            Changed::Several(names) => names.iter().map(String::as_str).collect(),
            Changed::Set(names) => names.iter().map(String::as_str).collect(),
        };
        if self.last_fold.is_none() || self.targets.iter().any(|t| t.store.journal_broken()) {
            return self.fold(state, true);
        }
        let serial = state.serial.max(self.serial) + 1;
        if let Some(changed) = &mut self.changed_since_render {
            changed.extend(names.iter().map(|name| name.to_string()));
        }
        let record = self.recorder.checkpoint(state, serial, &names);
        let Ok(line) = journal::encode(&record) else {
            // A value JSON cannot hold (a float that is not a number):
            // the whole file is written instead.
            return self.fold(state, true);
        };
        // Only a start must be on disk before the run goes on (the
        // component runs next); an end is flushed with the next record
        // that must be, or by the next fold. A start is written only by a
        // run that still owns the state.
        let starts = record.starts_a_component();
        if starts {
            self.prove_owners()?;
        }
        self.append(state, serial, &line, starts)?;
        if self.fold_due() {
            self.fold(state, false)?;
        }
        Ok(())
    }

    /// Fails when this run lost one of its locations to another run or a
    /// push (see [`super::fence`]): it must start nothing more. A location
    /// that cannot be reached is left to the write that follows.
    fn prove_owners(&mut self) -> Result<(), StateError> {
        for target in &mut self.targets {
            if let Err(lost @ StateError::RemoteConflict { .. }) = target.store.prove_owner() {
                return Err(lost);
            }
        }
        Ok(())
    }

    /// Appends one record to every location; at least one must take it.
    /// `durable`: on disk before this returns.
    fn append(
        &mut self,
        state: &mut State,
        serial: u64,
        line: &str,
        durable: bool,
    ) -> Result<(), StateError> {
        let operation = state.operations.last().map_or("", |o| o.id.as_str());
        let errors = self.at_every(|target| match durable {
            true => target.append(operation, line),
            false => target.append_unsynced(operation, line),
        });
        self.settle(state, serial, errors)
    }

    /// The journals grew larger than the files, or the last fold is old.
    fn fold_due(&self) -> bool {
        let interval = journal::FOLD_AFTER.max(self.last_fold_took * journal::FOLD_SHARE);
        self.last_fold.is_none_or(|at| at.elapsed() > interval)
            || self.targets.iter().any(|t| t.store.journal_outgrown())
    }

    /// Writes the whole state to every location and drops the journals.
    /// `pending`: `state` holds changes no record holds yet.
    fn fold(&mut self, state: &mut State, pending: bool) -> Result<(), StateError> {
        self.fold_started = Instant::now();
        let journaled = self
            .targets
            .iter()
            .any(|t| t.store.journal_records() > 0 || t.store.journal_broken());
        if !journaled {
            return self.write_whole(state);
        }
        let mut serial = state.serial.max(self.serial);
        if pending {
            serial += 1;
            self.changed_since_render = None;
            let line = journal::encode_whole(state, serial);
            match line {
                Ok(line) => self.append(state, serial, &line, true)?,
                // Not recordable: the plain write, the old file as backup.
                Err(_) => return self.write_whole(state),
            }
        }
        // The backup is the same state one serial earlier: rendered once.
        self.render_text(state, serial + 1)?;
        let mut backup_text = String::new();
        if !with_serial(&self.text, serial + 1, serial, &mut backup_text) {
            let text = std::mem::take(&mut self.text);
            self.render_text(state, serial)?;
            backup_text = std::mem::replace(&mut self.text, text);
        }
        // Each text is framed where it is and dropped once written: a fold
        // holds two copies of the state's text, and none between folds.
        let backup = self.encoded_owned(backup_text)?;
        let text = std::mem::take(&mut self.text);
        let text = self.encoded_owned(text)?;
        self.fold_every(state, serial + 1, Some(&backup), &text)
    }

    /// The plain atomic write: the current file becomes the backup.
    fn write_whole(&mut self, state: &mut State) -> Result<(), StateError> {
        let serial = state.serial.max(self.serial) + 1;
        self.changed_since_render = None;
        self.render_text(state, serial)?;
        let text = std::mem::take(&mut self.text);
        let bytes = self.encoded_owned(text)?;
        self.fold_every(state, serial, None, &bytes)
    }

    /// Folds every location ([`StateStore::fold`]).
    fn fold_every(
        &mut self,
        state: &mut State,
        serial: u64,
        backup: Option<&[u8]>,
        bytes: &[u8],
    ) -> Result<(), StateError> {
        let errors = self.at_every(|target| target.fold(serial, backup, bytes));
        self.settle(state, serial, errors)?;
        self.folded(state);
        Ok(())
    }

    /// Runs `step` at every location; returns the errors.
    fn at_every(
        &mut self,
        mut step: impl FnMut(&mut dyn StateStore) -> Result<(), StateError>,
    ) -> Vec<StateError> {
        let mut errors = Vec::new();
        for target in &mut self.targets {
            target.written = false;
            match step(target.store.as_mut()) {
                Ok(()) => target.written = true,
                Err(error) => errors.push(error),
            }
        }
        errors
    }

    /// Renders `state` with `serial` into the writer's text, comparing
    /// only the entries changed since the last render.
    fn render_text(&mut self, state: &mut State, serial: u64) -> Result<(), StateError> {
        let previous = std::mem::replace(&mut state.serial, serial);
        let changed = match &self.changed_since_render {
            Some(names) => Changed::Set(names),
            None => Changed::Any,
        };
        // Room for the text of the last render, and for the frame.
        self.text.reserve(self.text_len + 256);
        let rendered = self.renderer.render_into(state, changed, &mut self.text);
        self.text_len = self.text.len();
        state.serial = previous;
        rendered?;
        self.changed_since_render = Some(HashSet::new());
        Ok(())
    }

    /// The bytes written for `text`: framed (see [`integrity`]), and
    /// compressed when asked.
    fn encoded_owned(&self, mut text: String) -> Result<Vec<u8>, StateError> {
        integrity::frame_in_place(&mut text);
        if !self.options.compressed {
            return Ok(text.into_bytes());
        }
        gzip(text.as_bytes()).map_err(|source| StateError::Write {
            path: self
                .targets
                .first()
                .map(|t| t.store.location().to_path_buf())
                .unwrap_or_default(),
            action: "compress",
            source,
        })
    }

    fn folded(&mut self, state: &State) {
        let now = Instant::now();
        self.last_fold_took = now.duration_since(self.fold_started);
        self.last_fold = Some(now);
        self.recorder.reset(state);
    }

    /// After a write reached the locations that did not fail: succeeds when
    /// one was written, keeping the others' errors for
    /// [`StateWriter::take_failures`].
    fn settle(
        &mut self,
        state: &mut State,
        serial: u64,
        errors: Vec<StateError>,
    ) -> Result<(), StateError> {
        // A location that failed may hold the new version (only the
        // folder's flush failed): a later write must not reuse its serial.
        self.serial = serial;
        // Another run changed a remote state underneath this one: the run
        // must stop, whatever the other locations took.
        if let Some(at) = errors
            .iter()
            .position(|e| matches!(e, StateError::RemoteConflict { .. }))
        {
            let mut errors = errors;
            let conflict = errors.remove(at);
            self.failures.extend(errors);
            return Err(conflict);
        }
        if self.targets.iter().any(|t| t.written) {
            state.serial = serial;
            self.failures.extend(errors);
            return Ok(());
        }
        let mut errors = errors.into_iter();
        let first = errors.next().unwrap_or_else(no_location);
        self.failures.extend(errors);
        Err(first)
    }
}

impl LocalStore {
    /// The location `path` and its serial (`known` when given: the serial
    /// of the state just read from it, journal included). A stale journal
    /// is removed, a cut last record cut off: the caller holds the lock.
    fn open(path: &Path, known: Option<u64>) -> Result<(LocalStore, u64), StateError> {
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
        let file_serial = match known {
            Some(serial) if !has_journal => serial,
            _ if exists => {
                let bytes = std::fs::read(&target).map_err(|source| StateError::Write {
                    path: target.clone(),
                    action: "read the current content to back it up",
                    source,
                })?;
                serial_of(&bytes)
            }
            _ => 0,
        };
        remove_leftovers(&target);
        let identity = super::fence::identity_of(&target);
        let mut location = LocalStore {
            path: path.to_path_buf(),
            backup,
            folder: folder_of(&target),
            target,
            mode,
            exists,
            folder_handle: None,
            spare: None,
            swaps: true,
            file_serial,
            file_size,
            journal: JournalFile {
                path: journal_path,
                file: None,
                size: 0,
                allocated: 0,
                records: 0,
                broken: false,
            },
            lock: None,
            lock_id: super::lock::held_here(path),
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
        self.file_size
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
                if self.exists
                    && scanned.base == self.file_serial
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
            self.journal.file = Some(file);
        }
        let mut bytes = Vec::with_capacity(line.len() + 64);
        if self.journal.size == 0 {
            bytes.extend_from_slice(journal::header(self.file_serial, operation).as_bytes());
        }
        bytes.extend_from_slice(line.as_bytes());
        let end = self.journal.size + bytes.len() as u64;
        let mut allocated = self.journal.allocated;
        if end > allocated {
            allocated = end.next_multiple_of(journal::ZEROS_AHEAD);
            bytes.resize(bytes.len() + (allocated - end) as usize, 0);
        }
        let Some(file) = self.journal.file.as_mut() else {
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

    /// Replaces the state file with `state` and removes the journal.
    /// `backup`: written as `STATE.backup` first (the state as folded
    /// before); `None`: the current file becomes the backup.
    pub(super) fn fold_files(
        &mut self,
        serial: u64,
        backup: Option<&[u8]>,
        state: &[u8],
    ) -> Result<(), StateError> {
        self.prove_owner()?;
        match backup {
            None => self.replace(state)?,
            Some(backup) => {
                self.install(&self.backup.clone(), backup)?;
                self.install(&self.target.clone(), state)?;
                self.exists = true;
            }
        }
        self.exists = true;
        self.file_size = state.len() as u64;
        self.file_serial = serial;
        self.identity = super::fence::identity_of(&self.target);
        self.drop_journal()
    }

    /// Fails when this run no longer owns the state (see
    /// [`super::fence`]); once it failed, it always fails.
    pub(super) fn prove_owner(&mut self) -> Result<(), StateError> {
        if self.fenced.is_none() {
            self.fenced = super::fence::local_owner_lost(&super::fence::LocalOwnership {
                given: &self.path,
                target: &self.target,
                lock_id: self.lock_id.as_deref(),
                seen: self.identity,
                serial: if self.exists { self.file_serial } else { 0 },
            });
        }
        match &self.fenced {
            Some(reason) => Err(super::fence::lost(&self.path, reason.clone())),
            None => Ok(()),
        }
    }

    /// Writes `bytes` to a flushed temporary file renamed over `path`.
    fn install(&self, path: &Path, bytes: &[u8]) -> Result<(), StateError> {
        let temp = temp_path(path);
        let result = write_synced(&temp, bytes, self.mode)
            .and_then(|()| std::fs::rename(&temp, path))
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

    fn replace(&mut self, bytes: &[u8]) -> Result<(), StateError> {
        if self.swaps {
            match self.swap_in(bytes) {
                Swapped::Done(result) => {
                    result?;
                    return self.flush_folder();
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
        let result = write_synced(&temp, bytes, self.mode)
            .map_err(failure("write a temporary file"))
            .and_then(|()| match self.exists {
                true => self.back_up(),
                false => Ok(()),
            })
            .and_then(|()| {
                std::fs::rename(&temp, &self.target).map_err(failure("rename the temporary file"))
            });
        if result.is_err() {
            let _ = std::fs::remove_file(&temp);
        }
        result?;
        self.flush_folder()
    }

    /// The new content goes to the spare file (reused from one write to the
    /// next), which then swaps names with `STATE`, and the previous content
    /// with `STATE.backup`: `STATE` and `STATE.backup` are whole at every
    /// moment, and no file is created or deleted after the first writes,
    /// which keeps file systems from hunting for a free inode each time.
    fn swap_in(&mut self, bytes: &[u8]) -> Swapped {
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
        if self.exists
            && (!matches!(regular(&self.target), Ok(true))
                || matches!(regular(&self.backup), Ok(false)))
        {
            return Swapped::NotFiles;
        }
        let spare = self
            .spare
            .get_or_insert_with(|| temp_path(&self.target))
            .clone();
        if let Err(error) = write_reused(&spare, bytes, self.mode) {
            return Swapped::Done(Err(failure("write a temporary file", &self.target)(error)));
        }
        if !self.exists {
            self.spare = None;
            let renamed = std::fs::rename(&spare, &self.target);
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
        Swapped::Done(backed_up.map_err(failure("rename the backup", &self.backup)))
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

/// Turns an I/O error of `action` on `path` into a write error.
fn write_error(path: &Path, action: &'static str) -> impl FnOnce(std::io::Error) -> StateError {
    let path = path.to_path_buf();
    move |source| StateError::Write {
        path,
        action,
        source,
    }
}

/// The error of a writer given no location (a caller's mistake).
fn no_location() -> StateError {
    StateError::Write {
        path: PathBuf::new(),
        action: "choose a location",
        source: std::io::Error::other("no state location was given"),
    }
}

/// The journal of the state at `path`: beside its real location (see
/// [`real_location`]).
pub(super) fn journal_of(path: &Path) -> PathBuf {
    journal::journal_path(&real_location(path))
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

/// The `serial` of a state file's content; 0 when it has none or cannot
/// be read.
pub(super) fn serial_of(bytes: &[u8]) -> u64 {
    let Ok(source) = SourceFile::from_bytes(Path::new("state"), bytes.to_vec()) else {
        return 0;
    };
    if source.check_limits().is_err() {
        return 0;
    }
    let value: yaml_serde::Value = yaml_serde::Deserializer::from_str(&source.text)
        .next()
        .and_then(|document| serde::Deserialize::deserialize(document).ok())
        .unwrap_or(yaml_serde::Value::Null);
    match value.get("serial") {
        Some(yaml_serde::Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(yaml_serde::Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}

/// `.NAME.PID-N.tmp` beside `path`.
fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    folder_of(path).join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        next_temp_number()
    ))
}

/// Removes the temporary files that writes to `target` (or its backup) by
/// processes that are gone left behind: a run killed in the middle of a
/// write. They hold whole or partial states, secrets included.
fn remove_leftovers(target: &Path) {
    let Some(name) = target.file_name().map(|n| n.to_string_lossy().into_owned()) else {
        return;
    };
    let Ok(entries) = std::fs::read_dir(folder_of(target)) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let writer = [name.clone(), format!("{name}.backup")]
            .iter()
            .find_map(|owner| leftover_of(&file, owner));
        if writer.is_some_and(|pid| !process_alive(pid)) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The pid in `.{owner}.{pid}-{n}.tmp`, the name [`temp_path`] gives.
fn leftover_of(file: &str, owner: &str) -> Option<i32> {
    let rest = file
        .strip_prefix('.')?
        .strip_prefix(owner)?
        .strip_prefix('.')?;
    let (pid, number) = rest.strip_suffix(".tmp")?.split_once('-')?;
    number.parse::<u64>().ok()?;
    pid.parse().ok()
}

fn process_alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// Distinguishes the temporary files of writes running at the same time
/// in one process.
fn next_temp_number() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    COUNTER.fetch_add(1, Ordering::Relaxed)
}

fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Replaces `path` with `bytes` atomically: a flushed temporary file in the
/// same folder renamed over it, then the folder flushed. A new file is
/// readable by its owner only; an existing one keeps its mode.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mode =
        std::fs::metadata(path).map_or(private::FILE_MODE, |m| m.permissions().mode() & 0o7777);
    let temp = temp_path(path);
    let result = write_synced(&temp, bytes, mode).and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
        return result;
    }
    sync_folder(&folder_of(path))
}

fn write_synced(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = beside::open(path, OpenOptions::new().write(true).create_new(true), mode)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// How a write by swapping names went.
enum Swapped {
    Done(Result<(), StateError>),
    /// The file system cannot swap names: nothing was changed.
    Unsupported,
    /// `STATE` or `STATE.backup` is not a regular file: nothing was changed.
    NotFiles,
}

/// Writes `bytes` to `path`, created with `mode` or truncated, and flushes.
/// Anything but a file of hub's own at `path` (a link, a file with another
/// name) is not written through: its name is removed and a new file made.
fn write_reused(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let options = &mut OpenOptions::new();
    let mut file = match beside::open(path, options.write(true).truncate(true), mode) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || beside::Planted::of(&e).is_some() => {
            return write_synced(path, bytes, mode);
        }
        Err(e) => return Err(e),
    };
    file.write_all(bytes)?;
    file.sync_all()
}

/// Swaps the names `a` and `b` atomically (both must exist).
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let a = std::ffi::CString::new(a.as_os_str().as_bytes())?;
    let b = std::ffi::CString::new(b.as_os_str().as_bytes())?;
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let result = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    match result {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// The error of a file system (or kernel) that cannot swap names.
fn unsupported(error: &std::io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP)
    )
}

/// Flushes a folder's entries; file systems that cannot do this for
/// folders are not an error.
pub(crate) fn sync_folder(folder: &Path) -> std::io::Result<()> {
    File::open(folder).and_then(|f| sync_opened_folder(&f))
}

fn sync_opened_folder(folder: &File) -> std::io::Result<()> {
    match folder.sync_all() {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOTSUP)) => Ok(()),
        other => other,
    }
}

fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_path_to_one_state_has_one_real_location() {
        let dir = tempfile::tempdir().expect("dir");
        let root = std::fs::canonicalize(dir.path()).expect("root");
        std::fs::create_dir(root.join("st")).expect("st");
        let real = root.join("st/s.state");
        // Not there yet: the folder is resolved, a link to it followed.
        std::os::unix::fs::symlink("st/s.state", root.join("link.state")).expect("link");
        std::os::unix::fs::symlink("st", root.join("folder")).expect("folder link");
        for path in [
            real.clone(),
            root.join("link.state"),
            root.join("st/../st/./s.state"),
            root.join("folder/s.state"),
        ] {
            assert_eq!(real_location(&path), real, "{}", path.display());
        }
        std::fs::write(&real, "version: 1\nkind: state\n").expect("state");
        assert_eq!(real_location(&root.join("link.state")), real);
        assert_eq!(
            lock_path(&root.join("link.state")),
            root.join("st/s.state.lock")
        );
        assert_eq!(
            backup_path(&root.join("folder/s.state")),
            root.join("st/s.state.backup")
        );
        assert_eq!(
            journal_of(&root.join("link.state")),
            root.join("st/s.state.journal")
        );
        // A folder that does not exist: made absolute only.
        let missing = root.join("gone/../x.state");
        assert_eq!(real_location(&missing), missing);
        let remote = Path::new("s3://bucket/key");
        assert_eq!(real_location(remote), remote);
    }

    #[test]
    fn a_companion_planted_before_the_run_is_refused_by_name() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s.state");
        std::fs::write(&path, "version: 1\nkind: state\nserial: 3\n").expect("state");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").expect("victim");
        for companion in [backup_path(&path), journal::journal_path(&path)] {
            std::os::unix::fs::symlink(&victim, &companion).expect("plant");
            let error = StateWriter::open(&path, WriteOptions::default())
                .err()
                .expect("refused");
            assert!(
                matches!(&error, StateError::Beside { path, .. } if *path == companion),
                "{error}"
            );
            assert!(error.to_string().contains("symbolic link"), "{error}");
            std::fs::remove_file(&companion).expect("unplant");
        }
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep");
    }

    /// The names of the files in `dir`, sorted.
    fn files_in(dir: &Path) -> Vec<String> {
        let mut names: Vec<_> = std::fs::read_dir(dir)
            .expect("list")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    fn sample() -> State {
        State {
            version: 1,
            kind: "state".into(),
            status: "deployed".into(),
            ..State::default()
        }
    }

    fn read_ok(path: &Path) -> State {
        read(path, &mut Warnings::default())
            .expect("read")
            .expect("exists")
    }

    #[test]
    fn the_backup_text_differs_from_the_state_text_by_its_serial_only() {
        let mut state = State::default();
        state.component_mut("a").status = "deployed".into();
        state.serial = 7;
        let text = render(&state).expect("render");
        state.serial = 6;
        let mut backup = String::new();
        assert!(with_serial(&text, 7, 6, &mut backup));
        assert_eq!(backup, render(&state).expect("render"));
        assert!(!with_serial(&text, 8, 6, &mut String::new()));
    }

    #[test]
    fn a_missing_file_reads_as_none() {
        let dir = tempfile::tempdir().expect("dir");
        assert!(read(&dir.path().join("nope"), &mut Warnings::default())
            .expect("read")
            .is_none());
    }

    #[test]
    fn writes_back_up_and_count() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("hub.yaml.state");
        let mut state = sample();
        write(&path, &mut state, &WriteOptions::default()).expect("first");
        assert_eq!(state.serial, 1);
        assert!(!backup_path(&path).exists());
        let first = std::fs::read(&path).expect("bytes");
        state.status = "incomplete".into();
        write(&path, &mut state, &WriteOptions::default()).expect("second");
        assert_eq!(state.serial, 2);
        assert_eq!(std::fs::read(backup_path(&path)).expect("backup"), first);
        assert_eq!(read_ok(&path).status, "incomplete");
        assert_eq!(read_ok(&path).serial, 2);
    }

    #[test]
    fn a_writer_counts_and_backs_up_every_write() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        let mut state = sample();
        let mut previous: Option<Vec<u8>> = None;
        for round in 1..=5u64 {
            state.message = format!("round {round}");
            writer.write(&mut state).expect("write");
            assert_eq!((state.serial, writer.serial()), (round, round));
            let written = read_ok(&path);
            assert_eq!(
                (written.serial, written.message.as_str()),
                (round, state.message.as_str())
            );
            match &previous {
                Some(bytes) => {
                    assert_eq!(&std::fs::read(backup_path(&path)).expect("backup"), bytes)
                }
                None => assert!(!backup_path(&path).exists()),
            }
            previous = Some(std::fs::read(&path).expect("bytes"));
        }
        // The backup is a file of its own, not the state under another name.
        let backup = std::fs::read(backup_path(&path)).expect("backup");
        state.message = "last".into();
        writer.write(&mut state).expect("write");
        assert_ne!(std::fs::read(backup_path(&path)).expect("backup"), backup);
        assert_eq!(read_ok(&backup_path(&path)).message, "round 5");
        assert_eq!(read_ok(&path).message, "last");
        // The spare file the writes go through is gone with the writer.
        drop(writer);
        assert_eq!(files_in(dir.path()), ["s", "s.backup"]);
    }

    fn deploy(state: &mut State, name: &str, status: &str) {
        state.component_mut(name).status = status.into();
    }

    /// A state larger than a few checkpoints' records, with a timestamp
    /// (written as Go's zero time when empty).
    fn padded() -> State {
        let mut state = sample();
        state.timestamp = "2026-01-01T00:00:00Z".into();
        state.stack_parameters = vec![crate::StateParameter::new(
            "padding",
            yaml_serde::Value::String("p".repeat(4000)),
        )];
        state
    }

    #[test]
    fn checkpoints_go_to_the_journal_until_a_fold() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let journal = journal::journal_path(&path);
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        let mut state = padded();
        state.lifecycle.order = vec!["a".into(), "b".into()];
        writer.write(&mut state).expect("first write");
        let folded = std::fs::read(&path).expect("bytes");
        deploy(&mut state, "a", "deploying");
        writer.write_component(&mut state, "a").expect("checkpoint");
        deploy(&mut state, "a", "deployed");
        deploy(&mut state, "b", "deploying");
        writer
            .write_components(&mut state, &["a".into(), "b".into()])
            .expect("checkpoint");
        assert_eq!(state.serial, 3);
        assert_eq!(
            std::fs::read(&path).expect("bytes"),
            folded,
            "the file is left alone"
        );
        let mode = std::fs::metadata(&journal)
            .expect("journal")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let read_back = read_ok(&path);
        assert_eq!(read_back, state);
        assert_eq!(
            read_file(&path, &mut Warnings::default())
                .expect("read")
                .expect("file")
                .serial,
            1
        );

        // A fold: the backup is the state as folded, the file one serial on.
        state.status = "deployed".into();
        writer.write(&mut state).expect("fold");
        assert!(!journal.exists(), "the journal was removed");
        let backup = read_ok(&backup_path(&path));
        let file = read_ok(&path);
        assert_eq!((backup.serial, file.serial, state.serial), (4, 5, 5));
        assert_eq!(file, state);
        assert_eq!(
            backup,
            State {
                serial: 4,
                ..state.clone()
            }
        );
    }

    #[test]
    fn a_journal_outgrowing_the_file_and_the_minimum_is_folded() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        let mut state = sample();
        state.timestamp = "2026-01-01T00:00:00Z".into();
        writer.write(&mut state).expect("first write");
        let bulk = "b".repeat(journal::FOLD_MIN_JOURNAL as usize / 10);
        let mut folded_at = Vec::new();
        for round in 0..20 {
            let name = format!("c{round}");
            deploy(&mut state, &name, "deployed");
            state.component_mut(&name).parameters = vec![crate::StateParameter::new(
                "bulk",
                yaml_serde::Value::String(bulk.clone()),
            )];
            writer
                .write_component(&mut state, &name)
                .expect("checkpoint");
            if !journal::journal_path(&path).exists() {
                folded_at.push(round);
            }
            assert_eq!(read_ok(&path), state);
        }
        // Records of a tenth of the minimum each, plus their framing: the
        // tenth passes it, then ten more pass the state folded from them.
        assert_eq!(folded_at, [9, 19]);
    }

    #[test]
    fn a_small_journal_is_not_folded_for_its_size() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        let mut state = sample();
        writer.write(&mut state).expect("first write");
        for round in 0..50 {
            let name = format!("c{round}");
            deploy(&mut state, &name, "deployed");
            writer
                .write_component(&mut state, &name)
                .expect("checkpoint");
            assert!(journal::journal_path(&path).exists(), "folded at {round}");
        }
        assert_eq!(read_ok(&path), state);
    }

    #[test]
    fn every_location_gets_the_same_records() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        let paths = [a.clone(), b.clone()];
        let mut writer =
            StateWriter::open_all(&paths, WriteOptions::default(), None).expect("open");
        let mut state = padded();
        writer.write(&mut state).expect("write");
        deploy(&mut state, "x", "deploying");
        writer.write_component(&mut state, "x").expect("checkpoint");
        let journal = |p: &Path| std::fs::read(journal::journal_path(p)).expect("journal");
        assert_eq!(journal(&a), journal(&b));
        assert_eq!(read_ok(&a), state);
        assert_eq!(read_ok(&b), state);
    }

    #[test]
    fn a_new_writer_folds_the_journal_a_killed_one_left() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let mut state = padded();
        {
            let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
            writer.write(&mut state).expect("write");
            deploy(&mut state, "x", "deploying");
            writer.write_component(&mut state, "x").expect("checkpoint");
        }
        // A cut record after the last complete one.
        let journal = journal::journal_path(&path);
        let mut bytes = std::fs::read(&journal).expect("journal");
        bytes.extend_from_slice(b"12 0123");
        std::fs::write(&journal, bytes).expect("cut");
        let read_back = read_ok(&path);
        assert_eq!(read_back, state);
        let mut writer =
            StateWriter::resume(&path, WriteOptions::default(), read_back.serial).expect("open");
        deploy(&mut state, "x", "deployed");
        writer
            .write_component(&mut state, "x")
            .expect("first write folds");
        assert!(!journal.exists());
        assert_eq!(read_ok(&path), state);
        assert_eq!(read_ok(&backup_path(&path)).serial + 1, state.serial);
    }

    #[test]
    fn leftovers_of_dead_writers_are_removed() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let dead = crate::dead_pid();
        let own = std::process::id();
        for leftover in [
            format!(".s.{dead}-3.tmp"),
            format!(".s.backup.{dead}-4.tmp"),
            format!(".s.{own}-999.tmp"),
            format!(".s.x.{dead}-1.tmp"),
            format!(".t.{dead}-1.tmp"),
        ] {
            std::fs::write(dir.path().join(leftover), "partial").expect("leftover");
        }
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        writer.write(&mut sample()).expect("write");
        drop(writer);
        let mut left = files_in(dir.path());
        left.sort();
        let mut expected = vec![
            format!(".s.{own}-999.tmp"),
            format!(".s.x.{dead}-1.tmp"),
            format!(".t.{dead}-1.tmp"),
            "s".to_string(),
        ];
        expected.sort();
        assert_eq!(left, expected, "only the dead writer's files of `s` go");
        assert_eq!(leftover_of(".s.12-3.tmp", "s"), Some(12));
        assert_eq!(leftover_of(".s.12-3.tmp", "s.backup"), None);
        assert_eq!(leftover_of(".s.backup.12-3.tmp", "s.backup"), Some(12));
        assert_eq!(leftover_of(".s.x.12-3.tmp", "s"), None);
    }

    #[test]
    fn writes_reuse_the_same_three_files() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        let mut state = sample();
        let inodes = |dir: &Path| -> std::collections::BTreeSet<u64> {
            std::fs::read_dir(dir)
                .expect("list")
                .flatten()
                .map(|e| e.metadata().expect("meta").ino())
                .collect()
        };
        for _ in 0..3 {
            writer.write(&mut state).expect("write");
        }
        let settled = inodes(dir.path());
        for round in 0..5 {
            state.message = format!("round {round}");
            writer.write(&mut state).expect("write");
            assert_eq!(inodes(dir.path()), settled, "no file created or deleted");
            assert_eq!(read_ok(&path).message, format!("round {round}"));
        }
        assert_eq!(read_ok(&backup_path(&path)).message, "round 3");
    }

    #[test]
    fn a_writer_writes_the_same_bytes_to_every_location() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&b, "version: 1\nkind: state\nserial: 7\n").expect("seed b");
        let paths = [a.clone(), b.clone()];
        let mut writer =
            StateWriter::open_all(&paths, WriteOptions::default(), None).expect("open");
        assert_eq!(writer.serial(), 7, "the largest serial on disk");
        let mut state = sample();
        writer.write(&mut state).expect("write");
        writer.write(&mut state).expect("write");
        assert_eq!(state.serial, 9);
        assert_eq!(std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
        assert_eq!(read_ok(&backup_path(&a)).serial, 8);
        assert_eq!(read_ok(&backup_path(&b)).serial, 8);
        assert_eq!(
            writer.written().collect::<Vec<_>>(),
            [a.as_path(), b.as_path()]
        );
        assert!(writer.take_failures().is_empty());

        // One location fails: the other is written, the failure is kept.
        std::fs::remove_file(&b).expect("remove b");
        std::fs::create_dir(&b).expect("block b");
        std::fs::write(b.join("x"), "x").expect("fill");
        state.message = "one".into();
        writer.write(&mut state).expect("written to a");
        assert_eq!((state.serial, read_ok(&a).message.as_str()), (10, "one"));
        assert_eq!(writer.written().collect::<Vec<_>>(), [a.as_path()]);
        let failures = writer.take_failures();
        assert_eq!(failures.len(), 1);
        let failure = failures[0].to_string();
        assert!(failure.contains(&*b.to_string_lossy()), "{failure}");

        // Every location fails: the first error, the others kept.
        std::fs::remove_file(&a).expect("remove a");
        std::fs::create_dir(&a).expect("block a");
        std::fs::write(a.join("x"), "x").expect("fill");
        let error = writer.write(&mut state).unwrap_err();
        assert!(error.to_string().contains(&*a.to_string_lossy()), "{error}");
        assert_eq!(error.exit_code(), 2);
        assert_eq!(state.serial, 10);
        assert_eq!(writer.take_failures().len(), 1);
        assert_eq!(writer.written().count(), 0);
    }

    #[test]
    fn a_resumed_writer_reads_only_the_other_locations() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        std::fs::write(&a, "version: 1\nkind: state\nserial: 3\n").expect("seed a");
        std::fs::write(&b, "version: 1\nkind: state\nserial: 5\n").expect("seed b");
        let paths = [a.clone(), b.clone()];
        let writer =
            StateWriter::open_all(&paths, WriteOptions::default(), Some((&a, 4))).expect("open");
        assert_eq!(writer.serial(), 5);
        let writer =
            StateWriter::open_all(&paths, WriteOptions::default(), Some((&b, 2))).expect("open");
        assert_eq!(writer.serial(), 3);
    }

    #[test]
    fn a_writer_continues_from_the_serial_on_disk() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        std::fs::write(&path, "version: 1\nkind: state\nserial: 41\n").expect("seed");
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        assert_eq!(writer.serial(), 41);
        let mut state = sample();
        writer.write(&mut state).expect("write");
        assert_eq!(state.serial, 42);
        let mut resumed = StateWriter::resume(&path, WriteOptions::default(), 42).expect("resume");
        let mut stale = sample();
        resumed.write(&mut stale).expect("write");
        assert_eq!(stale.serial, 43);
        state.serial = 100;
        resumed.write(&mut state).expect("write");
        assert_eq!((state.serial, read_ok(&path).serial), (101, 101));
        assert_eq!(read_ok(&backup_path(&path)).serial, 43);
    }

    #[test]
    fn a_writer_keeps_modes_and_compresses() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        write(&path, &mut sample(), &WriteOptions::default()).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let mut writer = StateWriter::open(
            &path,
            WriteOptions {
                compressed: true,
                ..WriteOptions::default()
            },
        )
        .expect("open");
        let mut state = sample();
        writer.write(&mut state).expect("write");
        writer.write(&mut state).expect("write");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!((mode(&path), mode(&backup_path(&path))), (0o640, 0o640));
        assert_eq!(&std::fs::read(&path).expect("bytes")[..2], &[0x1f, 0x8b]);
        assert_eq!(read_ok(&path).serial, 3);
        assert_eq!(read_ok(&backup_path(&path)).serial, 2);
    }

    #[test]
    fn a_failed_writer_write_leaves_the_state_alone() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        let mut state = sample();
        writer.write(&mut state).expect("write");
        let before = std::fs::read(&path).expect("bytes");
        // A folder where the backup goes makes the backup step fail.
        std::fs::create_dir(backup_path(&path)).expect("block the backup");
        std::fs::write(backup_path(&path).join("x"), "x").expect("fill");
        state.message = "lost".into();
        let error = writer.write(&mut state).unwrap_err();
        assert!(matches!(error, StateError::Write { .. }), "{error}");
        assert_eq!(state.serial, 1);
        assert_eq!(std::fs::read(&path).expect("bytes"), before);
        std::fs::remove_dir_all(backup_path(&path)).expect("unblock");
        writer.write(&mut state).expect("write");
        // The failed write's serial is not used again.
        assert_eq!((state.serial, read_ok(&path).serial), (3, 3));
        let leftovers = std::fs::read_dir(dir.path())
            .expect("list")
            .filter(|e| {
                e.as_ref()
                    .expect("entry")
                    .file_name()
                    .to_string_lossy()
                    .ends_with(".tmp")
            })
            .count();
        assert_eq!(leftovers, 0);
    }

    #[test]
    fn the_serial_never_goes_back() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        std::fs::write(&path, "version: 1\nkind: state\nserial: 41\n").expect("seed");
        let mut state = sample();
        write(&path, &mut state, &WriteOptions::default()).expect("write");
        assert_eq!(state.serial, 42);
    }

    #[test]
    fn new_files_are_private_and_modes_are_kept() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        write(&path, &mut sample(), &WriteOptions::default()).expect("write");
        let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        write(&path, &mut sample(), &WriteOptions::default()).expect("write");
        assert_eq!(mode(&path), 0o640);
    }

    #[test]
    fn compressed_states_are_gzip_and_read_back() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        write(
            &path,
            &mut sample(),
            &WriteOptions {
                compressed: true,
                ..WriteOptions::default()
            },
        )
        .expect("write");
        let bytes = std::fs::read(&path).expect("bytes");
        assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
        assert_eq!(read_ok(&path).status, "deployed");
    }

    #[test]
    fn a_symbolic_link_is_followed() {
        let dir = tempfile::tempdir().expect("dir");
        let real = dir.path().join("real.state");
        let link = dir.path().join("link.state");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        write(&link, &mut sample(), &WriteOptions::default()).expect("write");
        assert!(std::fs::symlink_metadata(&link)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert_eq!(read_ok(&real).status, "deployed");
    }

    #[test]
    fn no_temporary_files_are_left() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        write(&path, &mut sample(), &WriteOptions::default()).expect("write");
        write(&path, &mut sample(), &WriteOptions::default()).expect("write");
        assert_eq!(files_in(dir.path()), ["s", "s.backup"]);
    }

    #[test]
    fn a_failed_write_leaves_the_state_alone() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("missing-folder").join("s");
        let mut state = sample();
        let error = write(&path, &mut state, &WriteOptions::default()).unwrap_err();
        assert!(matches!(error, StateError::Write { .. }), "{error}");
        assert_eq!(state.serial, 0);
    }

    #[test]
    fn wrong_kind_and_version_are_located() {
        let path = Path::new("s");
        let error = parse(path, "version: 1\nkind: foo\n", &mut Warnings::default()).unwrap_err();
        assert!(
            matches!(&error, StateError::WrongKind { kind, .. } if kind == "foo"),
            "{error}"
        );
        assert_eq!(error.location().and_then(|l| l.line), Some(2));
        let error = parse(path, "version: 2\nkind: state\n", &mut Warnings::default()).unwrap_err();
        assert!(
            matches!(error, StateError::WrongVersion { version: 2, .. }),
            "{error}"
        );
        assert!(error.hint().is_some_and(|h| h.contains("newer")));
    }

    #[test]
    fn invalid_yaml_names_the_line_and_the_backup() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        std::fs::write(&path, "version: 1\nkind: state\ncomponents: [\n").expect("seed");
        std::fs::write(backup_path(&path), "version: 1\nkind: state\n").expect("backup");
        let error = read(&path, &mut Warnings::default()).unwrap_err();
        assert!(matches!(error, StateError::Yaml { .. }), "{error}");
        assert!(error.location().and_then(|l| l.line).is_some());
        assert!(
            error.hint().is_some_and(|h| h.contains("s.backup")),
            "{:?}",
            error.hint()
        );
    }

    #[test]
    fn empty_and_damaged_files_are_errors() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        std::fs::write(&path, "").expect("seed");
        let error = read(&path, &mut Warnings::default()).unwrap_err();
        assert!(matches!(error, StateError::Empty { .. }), "{error}");
        std::fs::write(&path, [0x1f, 0x8b, 0, 1, 2]).expect("seed");
        let error = read(&path, &mut Warnings::default()).unwrap_err();
        assert!(matches!(error, StateError::Damaged { .. }), "{error}");
        assert!(error.to_string().contains("gzip"), "{error}");
    }

    #[test]
    fn unknown_keys_are_warned_about_with_their_line() {
        let mut warnings = Warnings::default();
        let state = parse(
            Path::new("s"),
            "version: 1\nkind: state\nfuture: x\n",
            &mut warnings,
        )
        .expect("parse");
        assert_eq!(state.kind, "state");
        let warning = warnings.iter().next().expect("warning");
        assert!(warning.message.contains("future"), "{warning}");
        assert_eq!(warning.location.as_ref().and_then(|l| l.line), Some(3));
    }

    #[test]
    fn a_folder_is_not_a_state() {
        let dir = tempfile::tempdir().expect("dir");
        let error = read(dir.path(), &mut Warnings::default()).unwrap_err();
        assert!(matches!(error, StateError::Read { .. }), "{error}");
        assert!(
            error.hint().is_some_and(|h| h.contains("folder")),
            "{:?}",
            error.hint()
        );
    }

    #[test]
    fn remote_locations_go_to_the_remote_store() {
        // The file alone has no remote counterpart.
        let error = read_file(Path::new("s3://b/k"), &mut Warnings::default()).unwrap_err();
        assert!(matches!(error, StateError::Remote { .. }));
        let error = read(Path::new("s3://b"), &mut Warnings::default()).unwrap_err();
        assert!(
            matches!(error, StateError::RemoteLocation { .. }),
            "{error}"
        );
    }
}
