//! The files hub keeps beside a state (`STATE.lock`, `STATE.journal`,
//! `STATE.backup`, `STATE.fingerprints`, `STATE.logs/` and the logs in it,
//! temporary files): never followed, never someone else's.
//!
//! Anyone who can write the state's folder (a shared CI workspace) could
//! otherwise plant a symbolic link there and have hub write, append to,
//! truncate or change the mode of the file it points to. So every such
//! file is opened with `O_NOFOLLOW`, created with `O_EXCL` where it is
//! new, and checked once open to be a regular file with one name, owned
//! by the user running hub; a folder is checked the same way (a real
//! folder, the user's). Anything else is [`Planted`]: an error naming the
//! file, and nothing is written through it.

use super::private;
use std::ffi::CString;
use std::fs::{DirBuilder, File, Metadata, OpenOptions};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What hub found at the path of a file it keeps beside a state, instead
/// of a file (or folder) of its own. Carried inside an [`io::Error`], so
/// that every error naming the path also says why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Planted {
    #[error("it is a symbolic link (to `{target}`); hub never follows a link beside a state, it would write where the link points")]
    Link { target: String },
    #[error("its folder is a symbolic link (to `{target}`); hub never follows a link beside a state, it would write where the link points")]
    FolderLink { target: String },
    #[error("it is {kind}, where hub keeps a {wanted} of its own")]
    Kind {
        kind: &'static str,
        wanted: &'static str,
    },
    #[error("it belongs to user {owner}, not to the user running hub ({me}); hub does not write into another user's file")]
    Foreign { owner: u32, me: u32 },
    #[error("it has {links} names (hard links); hub does not write into a file that is also somewhere else")]
    Linked { links: u64 },
}

impl Planted {
    /// The [`Planted`] an I/O error carries, if any.
    pub fn of(error: &io::Error) -> Option<&Planted> {
        error.get_ref()?.downcast_ref::<Planted>()
    }

    /// What to do about it.
    pub fn hint() -> &'static str {
        "remove it (after finding out who put it there: anyone who can write the state's folder could have) and run again; hub then creates the file itself"
    }
}

impl From<Planted> for io::Error {
    fn from(planted: Planted) -> io::Error {
        io::Error::other(planted)
    }
}

/// What a companion file must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wanted {
    File,
    Folder,
}

/// What is at `path`, without following a link: `Ok(None)` when nothing
/// is there, the metadata of a regular file of the user's otherwise. A
/// link, another kind of file, or another user's file is an error.
pub fn check_file(path: &Path) -> io::Result<Option<Metadata>> {
    check(path, Wanted::File)
}

/// [`check_file`] for a file hub reads but others may write too (a lock
/// another user's run holds): a link or another kind of file is an
/// error, any owner is fine.
pub fn check_shared_file(path: &Path) -> io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_file() => Ok(()),
        Ok(meta) => Err(verify(path, &meta, Wanted::File)
            .err()
            .map_or_else(|| io::Error::other("not a regular file"), io::Error::from)),
        Err(e) => Err(e),
    }
}

/// [`check_file`] for a folder: `Ok(false)` when nothing is there.
pub fn check_folder(path: &Path) -> io::Result<bool> {
    check(path, Wanted::Folder).map(|found| found.is_some())
}

fn check(path: &Path, wanted: Wanted) -> io::Result<Option<Metadata>> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            verify(path, &meta, wanted)?;
            Ok(Some(meta))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// `meta` (not followed) is a `wanted` of the user's.
fn verify(path: &Path, meta: &Metadata, wanted: Wanted) -> Result<(), Planted> {
    let kind = meta.file_type();
    if kind.is_symlink() {
        let target = std::fs::read_link(path)
            .map(|t| t.display().to_string())
            .unwrap_or_default();
        return Err(Planted::Link { target });
    }
    let (is_wanted, wanted_name) = match wanted {
        Wanted::File => (kind.is_file(), "file"),
        Wanted::Folder => (kind.is_dir(), "folder"),
    };
    if !is_wanted {
        return Err(Planted::Kind {
            kind: kind_name(meta),
            wanted: wanted_name,
        });
    }
    let me = effective_user();
    if meta.uid() != me {
        return Err(Planted::Foreign {
            owner: meta.uid(),
            me,
        });
    }
    Ok(())
}

fn kind_name(meta: &Metadata) -> &'static str {
    let kind = meta.file_type();
    match () {
        _ if kind.is_dir() => "a folder",
        _ if kind.is_file() => "a file",
        _ if kind.is_fifo() => "a named pipe",
        _ if kind.is_socket() => "a socket",
        _ if kind.is_block_device() || kind.is_char_device() => "a device",
        _ => "not a regular file",
    }
}

fn effective_user() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Opens the companion file `path` with `options` (a file it creates gets
/// exactly `mode`, see [`private::open`]), never through a symbolic link:
/// what is opened must be a regular file of the user's with no other name.
/// Use `create_new` where the file is new.
pub fn open(path: &Path, options: &mut OpenOptions, mode: u32) -> io::Result<File> {
    // A named pipe would block the open: refused before opening.
    check_file(path)?;
    let file = match options.mode(mode).custom_flags(libc::O_NOFOLLOW).open(path) {
        Ok(file) => file,
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            // Planted between the check and the open.
            check_file(path)?;
            return Err(e);
        }
        Err(e) => return Err(e),
    };
    verify_open(path, &file)?;
    private::set_mode(&file, mode)?;
    Ok(file)
}

/// Opens the companion file `path` for appending, creating it (with
/// `O_EXCL`, exactly `mode`) when it does not exist. Its folder is opened
/// first without following a link (`O_DIRECTORY | O_NOFOLLOW`), and the
/// file relative to that folder (`openat`): a folder swapped for a link
/// while hub runs cannot redirect the file. A missing folder is
/// `NotFound`.
pub fn open_append(path: &Path, mode: u32) -> io::Result<File> {
    let flags = libc::O_WRONLY | libc::O_APPEND;
    open_in_folder(path, mode, |folder, name| loop {
        refuse_special(folder, name, path)?;
        match open_at(folder, name, flags, mode) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            opened => return opened,
        }
        match open_at(folder, name, flags | libc::O_CREAT | libc::O_EXCL, mode) {
            // Another process created it just now: open that one.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            created => return created,
        }
    })
}

/// Creates the companion file `path` (`O_EXCL`, exactly `mode`) for
/// writing, relative to its folder as [`open_append`] does; an existing
/// file is `AlreadyExists`.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL;
    open_in_folder(path, mode, |folder, name| {
        open_at(folder, name, flags, mode)
    })
}

/// Opens `path` with `open` (given its folder, opened without following
/// a link, and its name), never through a link, and checks what it got.
fn open_in_folder(
    path: &Path,
    mode: u32,
    open: impl Fn(&OwnedFd, &CString) -> io::Result<File>,
) -> io::Result<File> {
    let (Some(name), parent) = (path.file_name(), path.parent()) else {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    };
    let folder = match parent {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let folder = open_folder(folder)?;
    let file = match open(&folder, &c_path(Path::new(name))?) {
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => {
            check_file(path)?;
            return Err(e);
        }
        other => other?,
    };
    verify_open(path, &file)?;
    private::set_mode(&file, mode)?;
    Ok(file)
}

/// `folder`, opened as a folder without following a link.
fn open_folder(folder: &Path) -> io::Result<OwnedFd> {
    let c_folder = c_path(folder)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    // SAFETY: `c_folder` is a NUL-terminated string that outlives the call.
    let fd = unsafe { libc::open(c_folder.as_ptr(), flags) };
    if fd < 0 {
        let error = io::Error::last_os_error();
        return match error.raw_os_error() {
            Some(libc::ELOOP) | Some(libc::ENOTDIR) => match check_folder(folder) {
                Err(e) => match Planted::of(&e) {
                    Some(Planted::Link { target }) => Err(Planted::FolderLink {
                        target: target.clone(),
                    }
                    .into()),
                    _ => Err(e),
                },
                Ok(_) => Err(error),
            },
            _ => Err(error),
        };
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// `name` in `folder`, opened with `flags` (created with `mode`), never
/// through a link.
fn open_at(folder: &OwnedFd, name: &CString, flags: i32, mode: u32) -> io::Result<File> {
    // SAFETY: the folder's descriptor is open and `name` is a
    // NUL-terminated string; both outlive the call.
    let fd = unsafe {
        libc::openat(
            folder.as_raw_fd(),
            name.as_ptr(),
            flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
            mode as libc::c_uint,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// A named pipe, a socket or a device at `name` would block or misbehave
/// when opened: refused before, by what `lstat` says of it.
fn refuse_special(folder: &OwnedFd, name: &CString, path: &Path) -> io::Result<()> {
    // SAFETY: an all-zero `stat` is a valid value for fstatat to fill.
    let mut stat: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open, `name` is NUL-terminated and `stat`
    // is a valid place to write; all outlive the call.
    let result = unsafe {
        libc::fstatat(
            folder.as_raw_fd(),
            name.as_ptr(),
            &mut stat,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    };
    if result != 0 {
        return Ok(());
    }
    match stat.st_mode & libc::S_IFMT {
        libc::S_IFREG | libc::S_IFLNK => Ok(()),
        _ => check_file(path).map(|_| ()),
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)
}

/// An opened companion file is a regular file of the user's with one name.
fn verify_open(path: &Path, file: &File) -> io::Result<()> {
    let meta = file.metadata()?;
    verify(path, &meta, Wanted::File)?;
    if meta.nlink() > 1 {
        return Err(Planted::Linked {
            links: meta.nlink(),
        }
        .into());
    }
    Ok(())
}

/// Makes sure the companion folder `folder` is a folder of the user's:
/// created (exactly [`private::FOLDER_MODE`], missing parents too) when
/// missing; a link or anything else there is an error.
pub fn create_folder(folder: &Path) -> io::Result<()> {
    if check_folder(folder)? {
        return Ok(());
    }
    if let Some(parent) = folder.parent().filter(|p| !p.as_os_str().is_empty()) {
        private::create_folder(parent)?;
    }
    match DirBuilder::new().mode(private::FOLDER_MODE).create(folder) {
        Ok(()) => {
            // Exactly its mode, whatever the umask.
            let mode = std::os::unix::fs::PermissionsExt::from_mode(private::FOLDER_MODE);
            std::fs::set_permissions(folder, mode)
        }
        // Made by another process just then: it must pass the same check.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => check_folder(folder).map(|_| ()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn planted(result: io::Result<impl std::fmt::Debug>) -> Planted {
        let error = result.expect_err("refused");
        Planted::of(&error)
            .cloned()
            .unwrap_or_else(|| panic!("not a planted file: {error}"))
    }

    #[test]
    fn a_link_is_never_opened_and_its_target_is_untouched() {
        let dir = tempfile::tempdir().expect("dir");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "keep").expect("victim");
        let link = dir.path().join("s.journal");
        std::os::unix::fs::symlink(&victim, &link).expect("link");
        let refused = planted(open(
            &link,
            OpenOptions::new().write(true).create(true),
            0o600,
        ));
        assert!(matches!(refused, Planted::Link { .. }), "{refused}");
        assert!(matches!(
            planted(open_append(&link, 0o600)),
            Planted::Link { .. }
        ));
        let dangling = dir.path().join("s.log");
        std::os::unix::fs::symlink(dir.path().join("new"), &dangling).expect("link");
        assert!(matches!(
            planted(open_append(&dangling, 0o600)),
            Planted::Link { .. }
        ));
        assert!(!dir.path().join("new").exists());
        assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep");
    }

    #[test]
    fn other_kinds_and_hard_links_are_refused() {
        let dir = tempfile::tempdir().expect("dir");
        let folder = dir.path().join("x.log");
        std::fs::create_dir(&folder).expect("folder");
        assert!(matches!(
            planted(open_append(&folder, 0o600)),
            Planted::Kind { .. }
        ));
        let file = dir.path().join("file");
        std::fs::write(&file, "").expect("file");
        assert!(matches!(
            planted(create_folder(&file)),
            Planted::Kind { .. }
        ));
        let other = dir.path().join("other");
        std::fs::hard_link(&file, &other).expect("hard link");
        assert!(matches!(
            planted(open_append(&other, 0o600)),
            Planted::Linked { links: 2 }
        ));
    }

    #[test]
    fn a_new_file_is_created_and_an_existing_one_appended_to() {
        let dir = tempfile::tempdir().expect("dir");
        let folder = dir.path().join("s.logs");
        create_folder(&folder).expect("folder");
        create_folder(&folder).expect("again");
        let path = folder.join("c.log");
        use std::io::Write;
        open_append(&path, 0o600)
            .and_then(|mut f| f.write_all(b"a"))
            .expect("new");
        open_append(&path, 0o600)
            .and_then(|mut f| f.write_all(b"b"))
            .expect("existing");
        assert_eq!(std::fs::read_to_string(&path).expect("log"), "ab");
        let link = dir.path().join("l.logs");
        std::os::unix::fs::symlink(&folder, &link).expect("link");
        assert!(matches!(
            planted(create_folder(&link)),
            Planted::Link { .. }
        ));
        // A log opened through a folder that is a link: refused too.
        assert!(matches!(
            planted(open_append(&link.join("c.log"), 0o600)),
            Planted::FolderLink { .. }
        ));
        assert!(matches!(
            planted(create_new(&link.join("d.log"), 0o600)),
            Planted::FolderLink { .. }
        ));
        assert!(!folder.join("d.log").exists());
        assert_eq!(std::fs::read_to_string(&path).expect("log"), "ab");
    }
}
