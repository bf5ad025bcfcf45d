//! Files only their owner may read or write: the state, its backup and
//! lock, the log folder and every log file, run reports. They hold outputs
//! and secrets in clear, so they are created with exactly these modes,
//! whatever the umask (a umask can only take permissions away, and one that
//! takes the owner's away would make the file unreadable to hub itself).

use std::fs::{DirBuilder, File, OpenOptions, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// A private file: read and write for the owner only.
pub const FILE_MODE: u32 = 0o600;
/// A private folder: the owner only.
pub const FOLDER_MODE: u32 = 0o700;

/// Opens `path` with `options`; a file it creates gets exactly `mode`
/// (usually [`FILE_MODE`]). An existing file is set to `mode` as well, so
/// pass its own mode to keep it.
pub fn open(path: &Path, options: &mut OpenOptions, mode: u32) -> io::Result<File> {
    let file = options.mode(mode).open(path)?;
    set_mode(&file, mode)?;
    Ok(file)
}

/// Sets `file` to exactly `mode` unless it has it already.
pub fn set_mode(file: &File, mode: u32) -> io::Result<()> {
    if file.metadata()?.permissions().mode() & 0o7777 != mode {
        file.set_permissions(Permissions::from_mode(mode))?;
    }
    Ok(())
}

/// Creates `folder` and its missing parents; each folder it creates gets
/// exactly [`FOLDER_MODE`]. Existing folders are left as they are.
pub fn create_folder(folder: &Path) -> io::Result<()> {
    let mut missing = Vec::new();
    let mut current = Some(folder);
    while let Some(path) = current.filter(|p| !p.as_os_str().is_empty() && !p.exists()) {
        missing.push(path);
        current = path.parent();
    }
    for path in missing.into_iter().rev() {
        match DirBuilder::new().mode(FOLDER_MODE).create(path) {
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => continue,
            other => other?,
        }
        std::fs::set_permissions(path, Permissions::from_mode(FOLDER_MODE))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path)
            .expect("metadata")
            .permissions()
            .mode()
            & 0o7777
    }

    #[test]
    fn created_files_and_folders_get_exactly_their_mode() {
        // The umask cases run hub itself (tests/it/safety.rs): changing the
        // umask here would affect the other tests of this process.
        let dir = tempfile::tempdir().expect("temporary folder");
        let folder = dir.path().join("a/b");
        create_folder(&folder).expect("folders");
        let options = &mut OpenOptions::new();
        open(
            &folder.join("f"),
            options.write(true).create_new(true),
            FILE_MODE,
        )
        .expect("file");
        assert_eq!(mode(&dir.path().join("a")), FOLDER_MODE);
        assert_eq!(mode(&folder), FOLDER_MODE);
        assert_eq!(mode(&folder.join("f")), FILE_MODE);
        let options = &mut OpenOptions::new();
        std::fs::set_permissions(folder.join("f"), Permissions::from_mode(0o644)).expect("chmod");
        open(&folder.join("f"), options.append(true), FILE_MODE).expect("reopen");
        assert_eq!(mode(&folder.join("f")), FILE_MODE);
    }

    #[test]
    fn an_existing_folder_is_left_alone() {
        let dir = tempfile::tempdir().expect("temporary folder");
        std::fs::set_permissions(dir.path(), Permissions::from_mode(0o755)).expect("chmod");
        create_folder(dir.path()).expect("exists");
        assert_eq!(mode(dir.path()), 0o755);
    }
}
