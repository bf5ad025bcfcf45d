//! The fingerprint cache (`STATE.fingerprints`): the content digest of
//! every file a folder fingerprint read, with what `lstat` said about the
//! file then, so that `--changed` and `plan` read again only the files
//! that changed, as git's index does.
//!
//! # When a digest is reused
//!
//! A file's digest is taken from the cache when its device, inode, size
//! and modification time (to the nanosecond) are those recorded; else the
//! file is read. The executable bit and symbolic links are always taken
//! from the file system; only the reading of contents is saved. The change
//! time (`ctime`) is not compared: it also moves on `chmod`, `chown` and
//! every new hard link, none of which changes a content digest, and a
//! content change moves the modification time anyway. A tool that
//! rewrites a file in place with the same size and then sets its
//! modification time back to the old value defeats this cache (as it
//! defeats git's with `core.trustctime=false`); delete the cache after
//! such a tool, or use `touch`.
//!
//! # Racily clean files
//!
//! File times have a granularity (a clock tick of a few milliseconds,
//! whole seconds on some file systems), so a file changed right after it
//! was read can keep the modification time it had when it was read. git
//! calls such an entry "racily clean". Here a run notes the file system's
//! own time before it reads any file (the modification time of a small
//! file it creates and removes beside the cache), and keeps an entry only
//! when the file's modification time is strictly older than that: a file
//! changed in the same tick as the run started, or after, is not cached
//! and is read again by the next run. Whatever changes a file after that
//! moment gives it a later modification time, so it cannot match. As a
//! second guard, an entry whose time is not older than the cache file's
//! own write time is ignored when the cache is read.
//!
//! # Where it lives, and who writes it
//!
//! Beside the state (`STATE.fingerprints`): the state's folder is the one
//! a deploy writes to (a stack folder may be a read-only checkout, and one
//! stack deploys to several states), and what is cached belongs to the
//! deployments of that state. Files are keyed by their absolute path. The
//! cache is written once, at the end of a deploy or undeploy, atomically
//! (a temporary file renamed over it), readable by its owner only; plans
//! and dry runs read it and never write it, so that they write nothing.
//! A run writes entries for the folders it read and keeps the others'.
//! Two runs at once may each write it; the last one wins, and the entries
//! the other would have added are read again next time. A cache that
//! cannot be read, is damaged or of another version is ignored and
//! rewritten; a cache that cannot be written is left as it is. Neither is
//! an error: the cache never changes a digest, only what it costs.
//!
//! The cache is the run's: the command opens it and passes it in
//! [`crate::options::RunOptions::digest_cache`]; every fingerprint the run
//! takes (the engine's and the plan's) goes through
//! [`super::fingerprint::folder_digest_with`] with it.

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs::Metadata;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the cache file of `STATE` is named: `STATE.fingerprints`.
pub const SUFFIX: &str = ".fingerprints";
const FORMAT: &str = "hub-fingerprints";
const VERSION: u32 = 1;

/// A content digest (SHA-256).
pub type Digest = [u8; 32];

/// The cache beside `state` (its real location, see
/// [`hub_state::real_location`]).
pub fn path_beside(state: &Path) -> PathBuf {
    let mut name = hub_state::real_location(state).into_os_string();
    name.push(SUFFIX);
    PathBuf::from(name)
}

/// A time as file systems give it: seconds and nanoseconds.
type Time = (i64, i64);

/// What `lstat` says of a file, as far as the cache compares it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
struct Stat {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: i64,
    mtime_ns: i64,
}

impl Stat {
    fn of(metadata: &Metadata) -> Stat {
        Stat {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.len(),
            mtime: metadata.mtime(),
            mtime_ns: metadata.mtime_nsec(),
        }
    }

    fn modified(&self) -> Time {
        (self.mtime, self.mtime_ns)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Entry {
    stat: Stat,
    digest: Digest,
}

/// An entry of the file, and whether this command confirmed it (a lookup
/// found the file unchanged). Noted in place rather than copied into
/// `seen` with a copy of its path: a no-op run confirms every file.
#[derive(Debug, Clone, Copy)]
struct Loaded {
    entry: Entry,
    confirmed: bool,
}

/// The file's layout.
#[derive(Serialize, Deserialize)]
struct Stored {
    format: String,
    version: u32,
    files: BTreeMap<String, StoredEntry>,
}

#[derive(Serialize, Deserialize)]
struct StoredEntry {
    #[serde(flatten)]
    stat: Stat,
    sha256: String,
}

/// The cache of one command: what it read from the file, and what its
/// fingerprints saw.
pub struct DigestCache {
    path: PathBuf,
    /// The file system's time before any file was read; `None` when the
    /// cache is not to be written.
    started: Option<Time>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    loaded: HashMap<PathBuf, Loaded>,
    /// Entries hashed by this command.
    seen: HashMap<PathBuf, Entry>,
    /// Folders walked whole: an entry below one that was not seen is gone.
    walked: HashSet<PathBuf>,
    reads: u64,
}

impl std::fmt::Debug for DigestCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DigestCache")
            .field("path", &self.path)
            .field("writable", &self.started.is_some())
            .finish_non_exhaustive()
    }
}

impl DigestCache {
    /// The cache at `path`, empty when it does not exist or cannot be
    /// used. `writable`: this command will [`save`](Self::save) it.
    pub fn open(path: &Path, writable: bool) -> DigestCache {
        let started = match writable {
            true => filesystem_now(path),
            false => None,
        };
        DigestCache {
            path: path.to_path_buf(),
            started,
            inner: Mutex::new(Inner {
                loaded: load(path),
                ..Inner::default()
            }),
        }
    }

    /// The recorded digest of the file whose `lstat` is `metadata`, when
    /// nothing about it changed.
    pub fn lookup(&self, path: &Path, metadata: &Metadata) -> Option<Digest> {
        let mut inner = self.lock();
        let loaded = inner.loaded.get_mut(path)?;
        if loaded.entry.stat != Stat::of(metadata) {
            return None;
        }
        loaded.confirmed = true;
        Some(loaded.entry.digest)
    }

    /// Records the digest of a file just read; `metadata` is its `fstat`
    /// after the reading, so that a change during it is not cached.
    pub fn insert(&self, path: &Path, metadata: &Metadata, digest: Digest) {
        let mut inner = self.lock();
        inner.reads += 1;
        let stat = Stat::of(metadata);
        inner
            .seen
            .insert(path.to_path_buf(), Entry { stat, digest });
    }

    /// Notes that the folder at `root` (an absolute path) was walked whole.
    pub fn walked(&self, root: &Path) {
        self.lock().walked.insert(root.to_path_buf());
    }

    /// How many files this command read (the others came from the cache).
    pub fn reads(&self) -> u64 {
        self.lock().reads
    }

    /// Writes the cache when it was opened writable and what it holds
    /// changed: the entries seen, those of folders not walked, and nothing
    /// racily clean (see the module documentation).
    pub fn save(&self) -> std::io::Result<()> {
        let Some(started) = self.started else {
            return Ok(());
        };
        let inner = self.lock();
        let mut kept: HashMap<&PathBuf, Entry> = inner
            .loaded
            .iter()
            // An entry's folders are looked up, not every folder walked:
            // the cost follows the entries, not entries × folders.
            .filter(|(path, loaded)| {
                loaded.confirmed || !path.ancestors().skip(1).any(|a| inner.walked.contains(a))
            })
            .map(|(path, loaded)| (path, loaded.entry))
            .collect();
        kept.extend(inner.seen.iter().map(|(path, entry)| (path, *entry)));
        kept.retain(|_, entry| entry.stat.modified() < started);
        let unchanged = kept.len() == inner.loaded.len()
            && kept
                .iter()
                .all(|(path, entry)| inner.loaded.get(*path).map(|l| &l.entry) == Some(entry));
        if unchanged {
            return Ok(());
        }
        let stored = Stored {
            format: FORMAT.into(),
            version: VERSION,
            files: kept
                .into_iter()
                .filter_map(|(path, entry)| {
                    let path = path.to_str()?.to_string();
                    Some((path, StoredEntry::from(entry)))
                })
                .collect(),
        };
        let bytes = serde_json::to_vec(&stored).map_err(std::io::Error::other)?;
        // A link or someone else's file at its path is not replaced.
        hub_state::beside::check_file(&self.path)?;
        hub_state::write_atomically(&self.path, &bytes)
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves plain data behind: the
        // cache stays usable.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl From<Entry> for StoredEntry {
    fn from(entry: Entry) -> Self {
        StoredEntry {
            stat: entry.stat,
            sha256: entry.digest.iter().map(|b| format!("{b:02x}")).collect(),
        }
    }
}

/// The entries of the cache file at `path`; none when it is missing,
/// damaged or of another version. Entries not older than the file itself
/// are left out (racily clean).
fn load(path: &Path) -> HashMap<PathBuf, Loaded> {
    // Never read through a link, nor someone else's cache.
    if hub_state::beside::check_file(path).is_err() {
        return HashMap::new();
    }
    let Ok(bytes) = std::fs::read(path) else {
        return HashMap::new();
    };
    let Ok(written) = std::fs::metadata(path).map(|m| (m.mtime(), m.mtime_nsec())) else {
        return HashMap::new();
    };
    let Ok(stored) = serde_json::from_slice::<Stored>(&bytes) else {
        return HashMap::new();
    };
    if stored.format != FORMAT || stored.version != VERSION {
        return HashMap::new();
    }
    let mut entries = HashMap::with_capacity(stored.files.len());
    for (path, entry) in stored.files {
        let Some(digest) = parse_digest(&entry.sha256) else {
            return HashMap::new();
        };
        if entry.stat.modified() < written {
            let stat = entry.stat;
            let entry = Entry { stat, digest };
            let loaded = Loaded {
                entry,
                confirmed: false,
            };
            entries.insert(PathBuf::from(path), loaded);
        }
    }
    entries
}

fn parse_digest(hex: &str) -> Option<Digest> {
    if hex.len() != 64 || !hex.is_ascii() {
        return None;
    }
    let mut digest = [0u8; 32];
    for (i, byte) in digest.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(digest)
}

/// The file system's current time in the folder of `path`: the
/// modification time of a file created there (and removed at once).
/// `None` when the folder cannot be written.
fn filesystem_now(path: &Path) -> Option<Time> {
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name()?.to_string_lossy();
    let stamp = folder.join(format!(".{name}.{}.stamp", std::process::id()));
    let create = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&stamp)
    };
    // One left by a killed process whose pid this one got: replaced.
    let file = create()
        .or_else(|_| std::fs::remove_file(&stamp).and_then(|()| create()))
        .ok()?;
    let time = file.metadata().ok().map(|m| (m.mtime(), m.mtime_nsec()));
    drop(file);
    let _ = std::fs::remove_file(&stamp);
    time
}

#[cfg(test)]
mod tests;
