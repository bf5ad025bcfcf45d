//! Writing files safely: atomic replacement through flushed temporary
//! files, name swaps, folder flushes, leftovers of killed runs.

use crate::StateError;
use crate::{beside, private};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Turns an I/O error of `action` on `path` into a write error.
pub(super) fn write_error(
    path: &Path,
    action: &'static str,
) -> impl FnOnce(std::io::Error) -> StateError {
    let path = path.to_path_buf();
    move |source| StateError::Write {
        path,
        action,
        source,
    }
}

/// `.NAME.PID-N.tmp` beside `path`.
pub(super) fn temp_path(path: &Path) -> PathBuf {
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
pub(super) fn remove_leftovers(target: &Path) {
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
pub(super) fn leftover_of(file: &str, owner: &str) -> Option<i32> {
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

pub(super) fn folder_of(path: &Path) -> PathBuf {
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

pub(super) fn write_synced(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write_synced_content(path, &mut Content::Bytes(bytes), mode).map(|_| ())
}

/// What a write puts in a file: bytes held, or a function that writes
/// them as they are made (a state rendered into the file) and returns how
/// many it wrote. The function may be called again when a write is
/// retried another way.
pub(super) enum Content<'a> {
    Bytes(&'a [u8]),
    Written(&'a mut dyn FnMut(&mut dyn Write) -> std::io::Result<u64>),
    /// Made from the file written before it by the same fold (the second
    /// of a state and its backup), given open for reading: see
    /// [`Content::after`].
    Derived(&'a mut dyn FnMut(&mut File, &mut dyn Write) -> std::io::Result<u64>),
}

#[cfg(test)]
thread_local! {
    /// Run on the first file's path just before a [`Content::Derived`]
    /// reads it (tests of a file planted there meanwhile).
    pub(super) static BEFORE_DERIVE: std::cell::Cell<Option<fn(&Path)>> =
        const { std::cell::Cell::new(None) };
}

impl Content<'_> {
    /// Runs `write` with `content`, a [`Content::Derived`] one made from
    /// the file at `first` (opened when it is written).
    pub(super) fn after<R>(
        content: &mut Content<'_>,
        first: &Path,
        write: impl FnOnce(&mut Content<'_>) -> R,
    ) -> R {
        let Content::Derived(derive) = content else {
            return write(content);
        };
        let mut from_first = |out: &mut dyn Write| {
            #[cfg(test)]
            if let Some(plant) = BEFORE_DERIVE.with(|hook| hook.get()) {
                plant(first);
            }
            // Opened as every file beside a state is: a link or another's
            // file planted at its name since it was written is refused,
            // never read into the state.
            let mut first = beside::open(first, OpenOptions::new().read(true), private::FILE_MODE)?;
            derive(&mut first, out)
        };
        write(&mut Content::Written(&mut from_first))
    }
}

impl Content<'_> {
    /// Writes the content to `file` (buffered when made on the way);
    /// returns its length.
    fn write_to(&mut self, file: &mut File) -> std::io::Result<u64> {
        match self {
            Content::Bytes(bytes) => file.write_all(bytes).map(|()| bytes.len() as u64),
            Content::Written(write) => {
                let mut buffered = std::io::BufWriter::with_capacity(256 * 1024, &mut *file);
                let written = write(&mut buffered)?;
                buffered.flush()?;
                Ok(written)
            }
            // A caller's mistake: only a fold's second file has a first.
            Content::Derived(_) => Err(std::io::Error::other(
                "no file was written before this one to make it from",
            )),
        }
    }
}

/// [`write_synced`] of a [`Content`]; returns its length.
pub(super) fn write_synced_content(
    path: &Path,
    content: &mut Content<'_>,
    mode: u32,
) -> std::io::Result<u64> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut file = beside::open(path, OpenOptions::new().write(true).create_new(true), mode)?;
    let written = content.write_to(&mut file)?;
    file.sync_all()?;
    Ok(written)
}

/// How a write by swapping names went.
pub(super) enum Swapped {
    /// How many bytes were written, or the error.
    Done(Result<u64, StateError>),
    /// The file system cannot swap names: nothing was changed.
    Unsupported,
    /// `STATE` or `STATE.backup` is not a regular file: nothing was changed.
    NotFiles,
}

/// Writes `bytes` to `path`, created with `mode` or truncated, and flushes.
/// Anything but a file of hub's own at `path` (a link, a file with another
/// name) is not written through: its name is removed and a new file made.
pub(super) fn write_reused(
    path: &Path,
    content: &mut Content<'_>,
    mode: u32,
) -> std::io::Result<u64> {
    let options = &mut OpenOptions::new();
    let mut file = match beside::open(path, options.write(true).truncate(true), mode) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound || beside::Planted::of(&e).is_some() => {
            return write_synced_content(path, content, mode);
        }
        Err(e) => return Err(e),
    };
    let written = content.write_to(&mut file)?;
    file.sync_all()?;
    Ok(written)
}

/// Swaps the names `a` and `b` atomically (both must exist).
pub(super) fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    rename_with_flags(a, b, libc::RENAME_EXCHANGE)
}

/// Linux's `renameat2(from, to, flags)`, both paths taken from the
/// working folder: `RENAME_EXCHANGE` swaps, `RENAME_NOREPLACE` refuses an
/// existing `to` (`AlreadyExists`).
pub(crate) fn rename_with_flags(
    from: &Path,
    to: &Path,
    flags: libc::c_uint,
) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let from = std::ffi::CString::new(from.as_os_str().as_bytes())?;
    let to = std::ffi::CString::new(to.as_os_str().as_bytes())?;
    // SAFETY: both paths are NUL-terminated strings that outlive the call.
    let result = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            flags,
        )
    };
    match result {
        0 => Ok(()),
        _ => Err(std::io::Error::last_os_error()),
    }
}

/// The error of a file system (or kernel) that cannot swap names.
pub(super) fn unsupported(error: &std::io::Error) -> bool {
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

pub(super) fn sync_opened_folder(folder: &File) -> std::io::Result<()> {
    match folder.sync_all() {
        Err(e) if matches!(e.raw_os_error(), Some(libc::EINVAL) | Some(libc::ENOTSUP)) => Ok(()),
        other => other,
    }
}

pub(super) fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes)?;
    encoder.finish()
}
