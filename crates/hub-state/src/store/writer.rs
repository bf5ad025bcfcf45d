//! The writer of a run: one state written again and again, to one or
//! several locations, with checkpoints appended to the journal.

use super::files::{gzip, Content};
use super::flush::Flush;
use super::local::LocalStore;
use crate::backend::StateStore;
use crate::integrity;
use crate::journal::{self, Recorder};
use crate::layout::StateFormat;
use crate::model::State;
use crate::remote::HeldLocks;
use crate::render::{Changed, Renderer};
use crate::{is_remote, StateError};
use std::collections::HashSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Write gzip-compressed YAML instead of plain YAML.
    pub compressed: bool,
    /// How component snapshots are laid out.
    pub format: StateFormat,
    /// `--encrypted`: whether remote copies are sealed with
    /// `HUB_CRYPTO_PASSWORD` (see [`crate::crypto::password_for_remote`]);
    /// `None` seals them when the password is set.
    pub encrypted: Option<bool>,
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
/// [`crate::lock`]), so that nothing else changes the files between writes.
///
/// A checkpoint ([`StateWriter::write_component`],
/// [`StateWriter::write_components`]) appends one record of what changed
/// to each location's journal, flushed before it returns (see
/// [`crate::journal`]). Any other write, the writer's first one, and a
/// checkpoint after which the journal outgrew the file or the last fold is
/// older than [`journal::FOLD_AFTER`] (either no sooner than
/// [`journal::FOLD_SHARE`] times what the next fold should take, the last
/// one's time grown with the state), fold: the whole state is written
/// and the journal removed. A fold after records writes `STATE.backup` as
/// the state so folded and `STATE` with the next serial; a pending change
/// (one no record holds) is appended as a whole-state record first at a
/// remote location only, a local one renaming `STATE` before the backup
/// instead (see [`crate::journal`], "Folding").
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
    /// [`journal::FOLD_SHARE`], but for tests.
    fold_share: u32,
    /// How many folds this writer made (for the run's trace).
    folds: u64,
    /// The flushes of [`StateWriter::write_starts`] not yet known made.
    flushes: Vec<Flush>,
}

/// `text` with its top-level `serial: from` line (the first, in the head)
/// reading `serial: to`, into `out`; false when there is no such line.
pub(super) fn with_serial(text: &str, from: u64, to: u64, out: &mut String) -> bool {
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
    store: Store,
    written: bool,
}

/// A location's store: a local one is written in ways a remote one is not
/// (streamed, folded without a record).
enum Store {
    Local(Box<LocalStore>),
    Remote(Box<dyn StateStore>),
}

impl Store {
    fn local(&self) -> Option<&LocalStore> {
        match self {
            Store::Local(local) => Some(local.as_ref()),
            Store::Remote(_) => None,
        }
    }

    fn get_mut(&mut self) -> &mut dyn StateStore {
        match self {
            Store::Local(local) => local.as_mut(),
            Store::Remote(remote) => remote.as_mut(),
        }
    }
}

impl std::ops::Deref for Store {
    type Target = dyn StateStore;

    fn deref(&self) -> &(dyn StateStore + 'static) {
        match self {
            Store::Local(local) => local.as_ref(),
            Store::Remote(remote) => remote.as_ref(),
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
        StateWriter::open_held(paths, options, read, &HeldLocks::default())
    }

    /// [`StateWriter::open_all`] for the locations a run locked: a remote
    /// store proves the run's lock on it before writing.
    pub fn open_locked(
        locations: &crate::Locations,
        options: WriteOptions,
        read: Option<(&Path, u64)>,
    ) -> Result<StateWriter, StateError> {
        StateWriter::open_held(locations.paths(), options, read, locations.held())
    }

    fn open_held(
        paths: &[PathBuf],
        options: WriteOptions,
        read: Option<(&Path, u64)>,
        held: &HeldLocks,
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
            flushes: Vec::new(),
            recorder: Recorder::default(),
            last_fold: None,
            fold_started: Instant::now(),
            last_fold_took: std::time::Duration::ZERO,
            fold_share: journal::FOLD_SHARE,
            folds: 0,
        };
        for path in paths {
            let known = read
                .filter(|(read, _)| *read == path.as_path())
                .map(|(_, serial)| serial);
            let opened = match is_remote(path) {
                true => crate::remote::RemoteStore::open(path, known, options.encrypted, held)
                    .map(|(store, serial)| (Store::Remote(Box::new(store)), serial)),
                false => LocalStore::open(path, known)
                    .map(|(store, serial)| (Store::Local(Box::new(store)), serial)),
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

    /// [`StateWriter::write`] as the last write through this writer (a
    /// run's end): the parts of the state that changed are written as they
    /// are rendered, not kept for a write that will not come, and the texts
    /// kept are let go of as they are written. A write after it is right,
    /// but renders the whole state.
    pub fn write_last(&mut self, state: &mut State) -> Result<(), StateError> {
        self.renderer.keep_no_texts();
        self.write(state)
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

    /// [`StateWriter::write_components`] of the checkpoints of components
    /// about to start, whose record is not flushed when this returns: each
    /// component starts once the [`Flush`] returned is made. When the
    /// write folds instead, the state is on disk already and the flush has
    /// nothing to do.
    pub fn write_starts(
        &mut self,
        state: &mut State,
        components: &[String],
    ) -> Result<Flush, StateError> {
        let mut journals = Vec::new();
        self.write_deferring(state, Changed::Several(components), Some(&mut journals))?;
        let flush = Flush::of(journals);
        self.flushes.push(flush.clone());
        Ok(flush)
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
        self.write_deferring(state, changed, None)
    }

    /// [`StateWriter::write_changed`]; `deferred`: the record of a start
    /// is not flushed, the local journals it went to are pushed there.
    fn write_deferring(
        &mut self,
        state: &mut State,
        changed: Changed<'_>,
        deferred: Option<&mut Vec<(PathBuf, Arc<File>)>>,
    ) -> Result<(), StateError> {
        let flush_failed = self.flush_failed();
        let names: Vec<&str> = match changed {
            Changed::Any => return self.fold(state, true),
            Changed::Only(name) => vec![name],
            Changed::Several(names) => names.iter().map(String::as_str).collect(),
            Changed::Set(names) => names.iter().map(String::as_str).collect(),
        };
        if self.last_fold.is_none()
            || flush_failed
            || self.targets.iter().any(|t| t.store.journal_broken())
        {
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
        match deferred {
            Some(journals) if starts => self.append_deferred(state, serial, &line, journals)?,
            _ => self.append(state, serial, &line, starts)?,
        }
        if self.fold_due() {
            self.fold(state, false)?;
        }
        Ok(())
    }

    /// Fails when this run lost one of its locations to another run or a
    /// push (see [`crate::fence`]): it must start nothing more. A location
    /// that cannot be reached is left to the write that follows.
    fn prove_owners(&mut self) -> Result<(), StateError> {
        for target in &mut self.targets {
            if let Err(lost @ StateError::RemoteConflict { .. }) =
                target.store.get_mut().prove_owner()
            {
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

    /// [`StateWriter::append`] of a start, not flushed at the local
    /// locations: their journals are pushed onto `journals`.
    fn append_deferred(
        &mut self,
        state: &mut State,
        serial: u64,
        line: &str,
        journals: &mut Vec<(PathBuf, Arc<File>)>,
    ) -> Result<(), StateError> {
        let operation = state.operations.last().map_or("", |o| o.id.as_str());
        let errors = self.at_each_store(|store| match store {
            Store::Local(local) => local
                .append_deferred(operation, line)
                .map(|journal| journals.extend(journal)),
            Store::Remote(remote) => remote.append(operation, line),
        });
        self.settle(state, serial, errors)
    }

    /// As if `flush` came from [`StateWriter::write_starts`].
    #[cfg(test)]
    pub(super) fn given_flush(&mut self, flush: Flush) {
        self.flushes.push(flush);
    }

    /// Whether a flush of [`StateWriter::write_starts`] failed at a
    /// location since the last write (a journal that could not be flushed
    /// may have lost records: the next write folds). The locations that
    /// failed while another was flushed are kept for
    /// [`StateWriter::take_failures`].
    fn flush_failed(&mut self) -> bool {
        let mut failed = false;
        self.flushes.retain(|flush| {
            if !flush.made() {
                return true;
            }
            failed |= flush.failed();
            self.failures.extend(flush.take_failures());
            false
        });
        failed
    }

    /// The last fold is old, or the journals grew larger than the files;
    /// either way no sooner than [`journal::FOLD_SHARE`] times what the
    /// last fold took after it, so that folds (which stop the run while
    /// they write the whole state) take a bounded share of a long run's
    /// time: from nothing, a large stack's journal outgrows the file every
    /// few seconds while a fold takes a second.
    fn fold_due(&self) -> bool {
        let Some(last_fold) = self.last_fold else {
            return true;
        };
        self.fold_due_after(last_fold.elapsed())
    }

    /// Whether a fold is due `since` the last one.
    pub(super) fn fold_due_after(&self, since: std::time::Duration) -> bool {
        let share = self.next_fold_estimate() * self.fold_share;
        since > journal::FOLD_AFTER.max(share)
            || (since > share && self.targets.iter().any(|t| t.store.journal_outgrown()))
    }

    /// What the next fold should take: the last one's time, grown as the
    /// state grew since, for a fold's work is in proportion to what it
    /// writes. The state has grown by at most what its journal holds, so
    /// the folded file with its journal bounds the next file. Taking the
    /// last fold's time alone let a run whose first write was a small state
    /// (every component still to come) stop for a fold five times as long
    /// a few seconds later.
    fn next_fold_estimate(&self) -> std::time::Duration {
        let growth = self
            .targets
            .iter()
            .map(|t| {
                let folded = t.store.folded_size().max(1);
                (folded + t.store.journal_size()) as f64 / folded as f64
            })
            .fold(1.0, f64::max);
        self.last_fold_took.mul_f64(growth)
    }

    /// What the last fold took, as if it took `took` (for tests of when
    /// the next one is due, which cannot wait on a real clock).
    #[cfg(test)]
    pub(super) fn pretend_last_fold_took(&mut self, took: std::time::Duration, share: u32) {
        self.last_fold_took = took;
        self.fold_share = share;
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
        // Local stores fold a pending change without recording it first
        // (see `LocalStore::fold_without_record`): the state is rendered
        // once more instead of being held a second time as a record.
        let unrecorded = pending && self.targets.iter().all(|t| t.store.local().is_some());
        if pending {
            serial += 1;
            self.changed_since_render = None;
        }
        if pending && !unrecorded {
            let line = journal::encode_whole(state, serial);
            match line {
                Ok(line) => self.append(state, serial, &line, true)?,
                // Not recordable: the plain write, the old file as backup.
                Err(_) => return self.write_whole(state),
            }
        }
        if self.streams() {
            let how = match unrecorded {
                true => Fold::Unrecorded,
                false => Fold::Backup,
            };
            return self.write_streamed(state, serial + 1, how);
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
        if unrecorded {
            let errors = self.at_every_local(|store| {
                store.fold_without_record(
                    serial + 1,
                    &mut Content::Bytes(&backup),
                    &mut Content::Bytes(&text),
                )
            });
            self.settle(state, serial + 1, errors)?;
            self.folded(state);
            return Ok(());
        }
        self.fold_every(state, serial + 1, Some(&backup), &text)
    }

    /// The plain atomic write: the current file becomes the backup.
    fn write_whole(&mut self, state: &mut State) -> Result<(), StateError> {
        let serial = state.serial.max(self.serial) + 1;
        self.changed_since_render = None;
        if self.streams() {
            return self.write_streamed(state, serial, Fold::Plain);
        }
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

    /// Runs `step` at every location's store, noting which took it;
    /// returns the errors.
    fn at_each_store(
        &mut self,
        mut step: impl FnMut(&mut Store) -> Result<(), StateError>,
    ) -> Vec<StateError> {
        let mut errors = Vec::new();
        for target in &mut self.targets {
            let result = step(&mut target.store);
            target.written = result.is_ok();
            errors.extend(result.err());
        }
        errors
    }

    /// Runs `step` at every location; returns the errors.
    fn at_every(
        &mut self,
        mut step: impl FnMut(&mut dyn StateStore) -> Result<(), StateError>,
    ) -> Vec<StateError> {
        self.at_each_store(|store| step(store.get_mut()))
    }

    /// [`StateWriter::at_every`] when every location is local.
    fn at_every_local(
        &mut self,
        mut step: impl FnMut(&mut LocalStore) -> Result<(), StateError>,
    ) -> Vec<StateError> {
        self.at_each_store(|store| match store {
            Store::Local(local) => step(local),
            // Not called with one (see `fold`).
            Store::Remote(_) => Err(no_location()),
        })
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
        super::check_written_size(&self.first_location(), text.len())?;
        if !self.options.compressed {
            return Ok(text.into_bytes());
        }
        gzip(text.as_bytes()).map_err(|source| StateError::Write {
            path: self.first_location(),
            action: "compress",
            source,
        })
    }

    /// The first location written, for messages.
    fn first_location(&self) -> PathBuf {
        self.targets
            .first()
            .map(|t| t.store.location().to_path_buf())
            .unwrap_or_default()
    }

    fn folded(&mut self, state: &State) {
        let now = Instant::now();
        self.last_fold_took = now.duration_since(self.fold_started);
        self.last_fold = Some(now);
        self.folds += 1;
        self.recorder.reset(state);
    }

    /// How many times this writer wrote the whole state (a fold, or the
    /// first write) rather than a journal record.
    pub fn folds(&self) -> u64 {
        self.folds
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

pub(super) mod reframed;
mod streamed;

/// Which write a streamed write is (see `streamed.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// The plain write: the current file becomes the backup.
    Plain,
    /// A fold after records: the backup first (one serial earlier), then
    /// the state.
    Backup,
    /// A fold of a change no record holds (see
    /// `LocalStore::fold_without_record`).
    Unrecorded,
}

/// The error of a writer given no location (a caller's mistake).
fn no_location() -> StateError {
    StateError::Write {
        path: PathBuf::new(),
        action: "choose a location",
        source: std::io::Error::other("no state location was given"),
    }
}
