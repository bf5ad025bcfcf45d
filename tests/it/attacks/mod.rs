//! Issue "Nothing fools the state": `hub` tried as an attacker and as an
//! unlucky team would. Each area has a table of scenarios; every row
//! asserts the exit code, the message, that nothing outside the state's
//! folder changed (see [`Outside`]) and that no data was lost.

#![allow(dead_code)]

mod ci;
mod cut;
mod paths;
mod runs;
mod secrets;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Files that an attacker points `hub` at, outside the test's folder: a
/// planted symlink's target, a file a hostile name would reach. Their bytes
/// and modes are taken before a scenario and compared after it.
pub struct Outside {
    dir: tempfile::TempDir,
}

/// One file as it was: content, mode, and whether it was there at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Seen {
    pub bytes: Vec<u8>,
    pub mode: u32,
}

impl Outside {
    pub fn new() -> Self {
        Outside {
            dir: tempfile::tempdir().expect("temporary folder"),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// A victim file `name` with known content (mode 0644), its path.
    pub fn victim(&self, name: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join(name);
        std::fs::write(&path, format!("victim {name}: must stay as it is\n"))
            .expect("write victim");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        path
    }

    /// Every file below the outside folder as it is now.
    pub fn snapshot(&self) -> BTreeMap<PathBuf, Seen> {
        tree(self.dir.path())
    }

    /// Panics, naming the scenario and the files, when anything below the
    /// outside folder differs from `before` (added, removed, changed bytes
    /// or mode).
    pub fn assert_unchanged(&self, scenario: &str, before: &BTreeMap<PathBuf, Seen>) {
        let after = self.snapshot();
        let changed: Vec<_> = before
            .keys()
            .chain(after.keys())
            .filter(|path| before.get(*path) != after.get(*path))
            .collect();
        assert!(
            changed.is_empty(),
            "{scenario}: files outside the state's folder changed: {changed:?}"
        );
    }
}

/// Every regular file below `dir` (symlinks not followed), with its bytes
/// and permission bits.
pub fn tree(dir: &Path) -> BTreeMap<PathBuf, Seen> {
    let mut files = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return files;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if meta.is_dir() {
            files.extend(tree(&path));
        } else if meta.is_file() {
            let bytes = std::fs::read(&path).unwrap_or_default();
            files.insert(
                path,
                Seen {
                    bytes,
                    mode: meta.mode() & 0o7777,
                },
            );
        }
    }
    files
}

/// Every byte `hub` wrote below `dir` and printed, as one text, for tests
/// that look for a secret anywhere.
pub fn everything_written(dir: &Path, printed: &[&str]) -> String {
    let mut all = String::new();
    for seen in tree(dir).values() {
        all.push_str(&String::from_utf8_lossy(&seen.bytes));
        all.push('\n');
    }
    for text in printed {
        all.push_str(text);
        all.push('\n');
    }
    all
}
mod fence;
