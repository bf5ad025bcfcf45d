//! Reading and writing state files: gzip detection, kind/version checks,
//! atomic replacement with a backup of the previous content, the serial.

use super::layout::{resolve_snapshots, StateFormat};
use super::model::State;
use super::private;
use super::render::{Changed, Renderer};
use super::{is_remote, StateError};
use crate::diag::{Location, Warnings};
use crate::manifest::{locate, ManifestError, Segment, SourceFile};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Mode of a state file created from scratch: it holds outputs in clear.
const NEW_FILE_MODE: u32 = 0o600;

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Write gzip-compressed YAML instead of plain YAML.
    pub compressed: bool,
    /// How component snapshots are laid out.
    pub format: StateFormat,
}

/// `STATE.backup`: the previous content of `STATE`.
pub fn backup_path(state: &Path) -> PathBuf {
    with_suffix(state, ".backup")
}

/// `STATE.lock`: present while a run holds the state.
pub fn lock_path(state: &Path) -> PathBuf {
    with_suffix(state, ".lock")
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(suffix);
    PathBuf::from(name)
}

/// Reads a state file; `Ok(None)` when it does not exist.
pub fn read(path: &Path, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
    if is_remote(path) {
        return Err(StateError::Remote {
            path: path.to_path_buf(),
        });
    }
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(StateError::Read {
                path: path.to_path_buf(),
                source,
                backup: existing_backup(path),
            })
        }
    };
    let source = SourceFile::from_bytes(path, bytes).map_err(|e| decode_error(path, e))?;
    parse(path, &source.text, warnings).map(Some)
}

/// Parses the text of a state file; `path` is used in messages only.
pub fn parse(path: &Path, text: &str, warnings: &mut Warnings) -> Result<State, StateError> {
    let source = SourceFile {
        path: path.to_path_buf(),
        text: text.to_string(),
    };
    let (state, documents) = source
        .first_document::<State>(warnings)
        .map_err(|e| decode_error(path, e))?;
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
    Ok(())
}

fn decode_error(path: &Path, error: ManifestError) -> StateError {
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
    Ok(crate::manifest::emit::document(&yaml_serde::to_value(
        state.canonical(),
    )?))
}

/// The YAML text of `state` in `format`.
pub fn render_as(state: &State, format: StateFormat) -> Result<String, StateError> {
    match format {
        StateFormat::Reference => render(state),
        StateFormat::Linear => Renderer::new(format).render(state),
    }
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
/// Created once per run, it knows the serial on disk and whether a file
/// exists at each location, and keeps the text of every part of the state
/// that did not change since the previous write (a `Renderer`): a write
/// neither reads nor parses the files, and renders only what changed, once
/// for all locations. At each location, a write:
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
    /// The text of the last write, kept to reuse its memory.
    text: String,
    /// Errors of locations that could not be written while another was.
    failures: Vec<StateError>,
}

/// One location a [`StateWriter`] writes.
struct Target {
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
    /// The last write reached this location.
    written: bool,
    /// The folder, opened at the first write to flush it after each.
    folder_handle: Option<File>,
    /// The file each write goes to before it is swapped into place; after
    /// the swaps it holds an old version, and the next write reuses it.
    spare: Option<PathBuf>,
    /// The file system swaps two names atomically (`RENAME_EXCHANGE`).
    swaps: bool,
}

impl Drop for Target {
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
            failures: Vec::new(),
        };
        for path in paths {
            let known = read
                .filter(|(read, _)| *read == path.as_path())
                .map(|(_, serial)| serial);
            match Target::open(path, known) {
                Ok((target, serial)) => {
                    writer.serial = writer.serial.max(serial);
                    writer.targets.push(target);
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
            .map(|t| t.path.as_path())
    }

    /// The errors of the locations that could not be written (or opened)
    /// since the previous call, while another location was.
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

    fn write_changed(&mut self, state: &mut State, changed: Changed<'_>) -> Result<(), StateError> {
        let serial = state.serial.max(self.serial) + 1;
        let previous = std::mem::replace(&mut state.serial, serial);
        let rendered = self.renderer.render_into(state, changed, &mut self.text);
        state.serial = previous;
        rendered?;
        let compressed;
        let bytes = if self.options.compressed {
            compressed = gzip(self.text.as_bytes()).map_err(|source| StateError::Write {
                path: self
                    .targets
                    .first()
                    .map(|t| t.target.clone())
                    .unwrap_or_default(),
                action: "compress",
                source,
            })?;
            &compressed[..]
        } else {
            self.text.as_bytes()
        };
        let mut errors = Vec::new();
        for target in &mut self.targets {
            target.written = false;
            match target.replace(bytes) {
                Ok(()) => {
                    target.exists = true;
                    target.written = true;
                }
                Err(error) => {
                    target.exists = target.exists || target.target.exists();
                    errors.push(error);
                }
            }
        }
        // A location that failed may hold the new version (only the
        // folder's flush failed): a later write must not reuse its serial.
        self.serial = serial;
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

impl Target {
    /// The location `path` and its serial on disk (`known` when given).
    fn open(path: &Path, known: Option<u64>) -> Result<(Target, u64), StateError> {
        if is_remote(path) {
            return Err(StateError::Remote {
                path: path.to_path_buf(),
            });
        }
        let target = resolve_link(path);
        let (exists, mode) = match std::fs::metadata(&target) {
            Ok(meta) => (true, meta.permissions().mode() & 0o7777),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (false, NEW_FILE_MODE),
            Err(source) => {
                return Err(StateError::Write {
                    path: target,
                    action: "read the current content to back it up",
                    source,
                })
            }
        };
        let serial = match known {
            Some(serial) => serial,
            None if exists => {
                let bytes = std::fs::read(&target).map_err(|source| StateError::Write {
                    path: target.clone(),
                    action: "read the current content to back it up",
                    source,
                })?;
                serial_of(&bytes)
            }
            None => 0,
        };
        remove_leftovers(&target);
        let location = Target {
            path: path.to_path_buf(),
            backup: backup_path(&target),
            folder: folder_of(&target),
            target,
            mode,
            exists,
            written: false,
            folder_handle: None,
            spare: None,
            swaps: true,
        };
        Ok((location, serial))
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

/// The error of a writer given no location (a caller's mistake).
fn no_location() -> StateError {
    StateError::Write {
        path: PathBuf::new(),
        action: "choose a location",
        source: std::io::Error::other("no state location was given"),
    }
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
fn serial_of(bytes: &[u8]) -> u64 {
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

fn write_synced(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = private::open(path, OpenOptions::new().write(true).create_new(true), mode)?;
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
fn write_reused(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    let options = &mut OpenOptions::new();
    let options = options.write(true).create(true).truncate(true);
    let mut file = private::open(path, options, mode)?;
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

    #[test]
    fn leftovers_of_dead_writers_are_removed() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let dead = crate::state::dead_pid();
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
    fn remote_locations_are_rejected() {
        let error = read(Path::new("s3://b/k"), &mut Warnings::default()).unwrap_err();
        assert!(matches!(error, StateError::Remote { .. }));
    }
}
