//! The state file (`hub.yaml.state`): what was deployed, with which
//! parameters, and what it produced.
//!
//! # Format
//!
//! The document is the Hub CLI state format (`kind: state`, `version: 1`),
//! so states written by this project and by the reference tool can be read
//! by either: see [`model`]. Reading accepts plain YAML or gzip-compressed
//! YAML (first bytes `1f 8b`); writing produces plain YAML unless
//! compression is asked for. Block or flow style are both read; block style
//! is written, with strings quoted whenever a YAML 1.1 reader (the
//! reference's) could take them for a boolean, null or number (`yes`, `on`,
//! `1_000`). Unknown keys are read with a warning and are not written back.
//!
//! Component snapshots (`components.NAME.capturedOutputs`) are written in
//! one of two layouts, both read (see [`layout`]): the reference's, every
//! snapshot whole, or the linear one (the default), each snapshot as its
//! difference against the previous entry's, with the keys
//! `capturedOutputsBase` and `capturedOutputsRemoved`. In memory, entries
//! share their snapshots ([`Snapshot`]) whichever layout was read.
//!
//! Every state this project writes begins with a `# hub-state:` comment
//! line and ends with `# hub-state-end sha256=<hex>`, the digest of what
//! precedes it: a copy cut short or changed afterwards is refused (see
//! [`integrity`]). A string value of 4 KiB or more that a component entry
//! shares with a stack parameter is written once, as a YAML anchor on the
//! stack parameter and an alias in the entry (see [`render`]).
//!
//! This project adds one top-level key, `serial`: a counter that grows on
//! every write (it continues from the larger of the in-memory and on-disk
//! values, so it never goes back). The reference tool ignores unknown keys
//! when it reads a state and drops them when it writes one, after which
//! this project continues counting from the in-memory value.
//!
//! # Files next to `STATE`
//!
//! They are named after the state's real location ([`real_location`]:
//! links and relative paths resolved), so that every path to one state
//! shares them, and are never followed nor someone else's ([`beside`]).
//!
//! * `STATE.backup` — the previous content of `STATE`, byte for byte
//!   (compressed or not, as it was; the same file, hard-linked), replaced
//!   on every write; after a fold of journal records, the state so folded
//!   (see [`journal`]).
//! * `STATE.journal` — the checkpoints a run appended since the last fold
//!   (see [`journal`]); [`read`] applies them, [`read_file`] does not.
//! * `STATE.lock` — present while a run holds the state (see [`lock`]).
//! * `STATE.fingerprints` — the digests of component files, so that
//!   fingerprints read only the files that changed (see
//!   the engine's `run::digest_cache`); safe to delete.
//! * `.STATE.PID-N.tmp`, `.STATE.backup.PID-N.tmp`, `.STATE.lock.ID.tmp` —
//!   written, then renamed (or linked) into place; one left behind by a
//!   killed process is an incomplete write and may be deleted.
//!
//! Every write is atomic: the new content goes to a temporary file in the
//! same folder, which is flushed to disk (`fsync`); the current `STATE` is
//! hard-linked under a temporary name that is renamed over `STATE.backup`
//! (a flushed copy where hard links are not supported); the temporary file
//! is renamed over `STATE`, and the folder is flushed — two `fsync`s per
//! write. A crash at any moment leaves `STATE` and `STATE.backup` each
//! holding one complete version: `STATE` the previous or the new one,
//! `STATE.backup` the one before or the previous one.
//!
//! A run records every component's start and end as a record appended to
//! `STATE.journal` (flushed before the run goes on), and folds the journal
//! into `STATE` with the write above at its first write, at its end, and
//! now and then in between (see [`journal`]): a checkpoint costs what its
//! component changed, not the size of the state. The run holds the lock
//! for its whole length and writes through one [`StateWriter`], which
//! keeps the serial and the text of every unchanged part of the state
//! between folds: a fold neither reads nor parses the file again, and
//! renders only the parts that changed. Every reader goes through [`read`],
//! which applies the journal in memory and writes nothing. A symbolic link
//! at `STATE` is followed: the file it points to is replaced. A new state
//! file is created readable by its owner only (mode 0600: it holds output
//! values in clear); an existing file keeps its mode.
//!
//! A state that cannot be read (damaged gzip, invalid YAML, wrong `kind` or
//! `version`, an empty file) is an error naming the file, the line where
//! known, and how to recover; it is never replaced silently.
//!
//! # Reproducible output
//!
//! * `HUB_NOW` — an RFC 3339 time used for every timestamp written.
//! * `HUB_OPERATION_ID` — the id given to the operation a run records.
//! * `HUB_LINEAGE` — the lineage given to a state written for the first
//!   time (a random UUID otherwise; later writes keep the state's own).
//!
//! # Several locations
//!
//! A run may be given several local state files (`-s a,b`): each is
//! locked, the newest is read, every one is written — see [`locations`].
//!
//! # Remote locations
//!
//! `s3://`, `gs://` and `az://` locations are kept on object storage by
//! [`remote`]: the same folded state and journal records, as objects, with
//! a lock that has a lease and writes fenced by ETag. Commands that work
//! on files only reject them with [`StateError::Remote`].

mod clock;

pub mod backend;
pub mod beside;
pub mod crypto;
pub mod edit;
pub mod fence;
pub mod history;
pub mod integrity;
pub mod journal;
pub mod layout;
pub mod locations;
pub mod lock;
mod merge;
pub mod model;
mod pieces;
#[cfg(any(test, feature = "test-support"))]
pub mod test_support;
pub use hub_manifest::private;
pub mod remote;
mod render;
pub mod snapshot;
pub(crate) mod store;

pub use backend::{LocalStore, StateStore};
pub use clock::{
    civil_from_days, days_from_civil, format_rfc3339, is_rfc3339, new_lineage, operation_id,
    random_uuid, rfc3339_to_unix, Clock, LINEAGE_VARIABLE, NOW_VARIABLE, OPERATION_ID_VARIABLE,
};
pub use journal::journal_path;
pub use layout::StateFormat;
pub use locations::Locations;
pub use lock::{LockInfo, LockWait, StateLock, Unlocked};
pub use merge::*;
pub use model::Fingerprint;
pub use model::{
    scalar_text, CapturedOutput, ComponentMeta, ComponentState, Operation, Phase, RawOutput,
    StackMeta, StackOutput, State, StateLifecycle, StateParameter, Timestamps, ZERO_TIME,
};
pub use render::SHARED_VALUE_BYTES;
pub use snapshot::{outputs_of_each, qualified_cmp, Index as SnapshotIndex};
pub use snapshot::{Delta, Snapshot};
pub use store::{
    backup_path, lock_path, parse, read, read_file, real_location, render, render_as, write,
    write_atomically, StateWriter, WriteOptions,
};

use hub_manifest::diag::Location;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    #[error("cannot read the state file `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
        backup: Option<PathBuf>,
    },
    #[error("the state file `{}` is damaged: {reason}", path.display())]
    Damaged {
        path: PathBuf,
        reason: String,
        backup: Option<PathBuf>,
    },
    /// A state hub wrote that was cut short or changed since (see
    /// [`integrity`]).
    #[error("the state `{}` cannot be trusted: {reason}", path.display())]
    Broken {
        path: PathBuf,
        reason: integrity::Broken,
        backup: Option<PathBuf>,
    },
    #[error("cannot decrypt `{}`: {error}", path.display())]
    Sealed {
        path: PathBuf,
        error: crypto::CryptoError,
    },
    #[error("the state file is not valid YAML: {message}")]
    Yaml {
        location: Location,
        message: String,
        backup: Option<PathBuf>,
    },
    #[error("the state file `{}` is empty", path.display())]
    Empty {
        path: PathBuf,
        backup: Option<PathBuf>,
    },
    #[error("`{}` is not a state file: its kind is `{kind}`, expected `state`", location.file.display())]
    WrongKind { location: Location, kind: String },
    #[error("the state file `{}` has version {version}; this hub reads version 1", location.file.display())]
    WrongVersion { location: Location, version: i64 },
    #[error("`{}` is a remote state location; this command takes only local state files", path.display())]
    Remote { path: PathBuf },
    #[error("`{given}` is not a remote state location: {reason}")]
    RemoteLocation { given: String, reason: String },
    #[error("cannot {action} at `{location}`: {reason}")]
    RemoteAccess {
        location: String,
        action: String,
        reason: String,
        hint: String,
    },
    #[error("the state `{location}` was not written: {reason}")]
    RemoteConflict { location: String, reason: String },
    #[error("the state `{location}` is locked{}: {holder}", if *stale { " by an expired lease" } else { "" })]
    RemoteLocked {
        location: String,
        holder: String,
        id: String,
        stale: bool,
    },
    #[error("{error}; the run's state was saved to `{}`", file.display())]
    RemoteSaved {
        error: Box<StateError>,
        location: String,
        file: PathBuf,
        /// Another run changed the state (not the store failing): how the
        /// saved state differs from the one there now, when it could be
        /// read.
        taken: Option<Taken>,
    },
    #[error("the state at `{}` {reason}; it was not replaced", location.display())]
    PushRefused { location: PathBuf, reason: String },
    #[error("the state at `{}` has diverged from `{}`: {divergence}; it was not replaced", location.display(), file.display())]
    PushDiverged {
        location: PathBuf,
        file: PathBuf,
        divergence: Box<history::Divergence>,
    },
    #[error("the lock of `{state}` belongs to {holder}, which is still running on this host; it was left alone")]
    UnlockLive {
        state: String,
        holder: Box<LockInfo>,
    },
    #[error("the state `{location}` is not locked")]
    RemoteNotLocked { location: String },
    #[error("the lock of `{location}` has the id `{found}`, not `{wanted}`: it was left alone")]
    RemoteLockId {
        location: String,
        wanted: String,
        found: String,
    },
    #[error("the state file `{}` holds a component entry hub refuses: {error}", location.file.display())]
    BadComponentName {
        location: Location,
        error: hub_manifest::names::BadComponentName,
    },
    #[error("`{}`, beside the state, cannot be used: {source}", path.display())]
    Beside {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot write the state file `{}`: {action}: {source}", path.display())]
    Write {
        path: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    #[error("the state journal `{}` is damaged at record {record}: {reason}", path.display())]
    Journal {
        path: PathBuf,
        /// 1 for the first record after the header; 0 for the header.
        record: usize,
        reason: String,
    },
    #[error("cannot serialise the state: {0}")]
    Serialise(#[from] yaml_serde::Error),
    #[error("`{variable}` must be an RFC 3339 time such as 2024-05-01T10:00:00Z, not `{value}`")]
    BadTime {
        variable: &'static str,
        value: String,
    },
    #[error("the state `{}` is locked: {holder}", state.display())]
    Locked {
        state: PathBuf,
        lock: PathBuf,
        holder: Box<LockInfo>,
        /// The holder runs on another host: its process cannot be checked.
        elsewhere: bool,
        /// Raised by `hub unlock` (refusing), not by a run taking the lock.
        unlocking: bool,
    },
    #[error("the state `{}` has a stale lock: {holder}, which is no longer running", state.display())]
    StaleLock {
        state: PathBuf,
        lock: PathBuf,
        holder: Box<LockInfo>,
    },
    #[error("the state `{}` is locked, but its lock file `{}` cannot be read: {reason}", state.display(), lock.display())]
    UnreadableLock {
        state: PathBuf,
        lock: PathBuf,
        reason: String,
    },
    #[error("the state `{}` is not locked: `{}` does not exist", state.display(), lock.display())]
    NotLocked { state: PathBuf, lock: PathBuf },
    #[error("cannot {action} the lock file `{}`: {source}", lock.display())]
    LockFile {
        lock: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    /// `--lock-timeout` ran out: the error without it, and how long the
    /// command waited.
    #[error("{source} (waited {})", lock::duration_text(*waited))]
    LockTimeout {
        waited: std::time::Duration,
        source: Box<StateError>,
    },
}

impl StateError {
    /// 2 when the state could not be written (the format's exit code for
    /// that), 1 for everything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            StateError::Write { .. }
            | StateError::Beside { .. }
            | StateError::RemoteAccess { .. }
            | StateError::RemoteConflict { .. }
            | StateError::RemoteSaved { .. } => 2,
            StateError::LockTimeout { source, .. } => source.exit_code(),
            _ => 1,
        }
    }

    /// A live run holds the lock: waiting may help (see [`LockWait`]).
    pub fn is_held(&self) -> bool {
        matches!(
            self,
            StateError::Locked {
                unlocking: false,
                ..
            } | StateError::RemoteLocked { stale: false, .. }
        )
    }

    pub fn location(&self) -> Option<Location> {
        match self {
            StateError::LockTimeout { source, .. } => source.location(),
            StateError::Yaml { location, .. }
            | StateError::WrongKind { location, .. }
            | StateError::WrongVersion { location, .. }
            | StateError::BadComponentName { location, .. } => Some(location.clone()),
            StateError::Read { path, .. }
            | StateError::Damaged { path, .. }
            | StateError::Broken { path, .. }
            | StateError::Empty { path, .. }
            | StateError::Sealed { path, .. }
            | StateError::Write { path, .. }
            | StateError::Beside { path, .. }
            | StateError::Journal { path, .. } => Some(Location::file(path)),
            StateError::Locked { lock, .. }
            | StateError::StaleLock { lock, .. }
            | StateError::UnreadableLock { lock, .. }
            | StateError::LockFile { lock, .. } => Some(Location::file(lock)),
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            StateError::Read { source, .. } if source.kind() == std::io::ErrorKind::PermissionDenied => {
                Some("check the file's permissions".into())
            }
            StateError::Read { source, .. } if source.kind() == std::io::ErrorKind::IsADirectory => {
                Some("the path names a folder; pass the state file inside it".into())
            }
            StateError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Some("check the path: no state file is there".into())
            }
            StateError::Read { backup, .. } => Some(restore_hint(backup.as_deref(), "")),
            StateError::Damaged { backup, .. } | StateError::Empty { backup, .. } => {
                Some(restore_hint(backup.as_deref(), ""))
            }
            StateError::Broken { path, backup, .. } => Some(broken_hint(path, backup.as_deref())),
            StateError::Sealed { error, .. } => error.hint(),
            StateError::Yaml { backup, .. } => {
                Some(restore_hint(backup.as_deref(), "fix the YAML at the line shown, or "))
            }
            StateError::WrongKind { .. } => Some("check the `-s`/`--state` path: it names another kind of file".into()),
            StateError::WrongVersion { version, .. } if *version > 1 => {
                Some("the file was written by a newer hub; use that version".into())
            }
            StateError::WrongVersion { .. } => Some("a state file starts with `version: 1` and `kind: state`".into()),
            StateError::Remote { .. } => Some("pull the state to a local file with `hub state pull LOCATION FILE` and pass its path".into()),
            StateError::RemoteLocation { .. } => Some("a remote state is `s3://BUCKET/KEY`, `gs://BUCKET/KEY` or `az://CONTAINER/KEY`".into()),
            StateError::RemoteAccess { hint, .. } => Some(hint.clone()),
            StateError::RemoteConflict { location, .. } => Some(format!("no new component was started; see what changed with `hub state pull {location}`, and check who else deploys this stack")),
            StateError::RemoteLocked { location, stale: true, id, .. } => Some(format!("its holder stopped without removing it: remove it with `hub unlock {location} --id {id}`")),
            StateError::RemoteLocked { .. } => Some("wait for that run to finish; if it is gone, its lease expires within a minute (`hub unlock LOCATION --force` removes the lock at once)".into()),
            StateError::RemoteNotLocked { .. } => None,
            StateError::UnlockLive { state, holder } => Some(format!(
                "stop process {} first; to remove its lock anyway (that run then starts no new component and writes nothing more to the state), run `hub unlock --force --yes {state}`",
                holder.pid
            )),
            StateError::PushRefused { .. } => Some("check that FILE is the state of this stack (`hub state pull LOCATION` shows the current one); `--force` replaces it anyway".into()),
            StateError::RemoteSaved { location, file, taken: None, .. } => Some(format!(
                "once the store works again, upload it with `hub state push {} {location}`; then run the command again",
                shell_word(file)
            )),
            StateError::RemoteSaved { location, file, taken: Some(taken), .. } => Some(taken_hint(location, file, taken)),
            StateError::PushDiverged { location, file, .. } => Some(format!(
                "writing it would drop what the state's other run did: run the command again to go on from the state there (`hub state pull {0}` shows it), or merge the two by hand and push the result; `hub state push --force {1} {0}` replaces it anyway",
                shell_word(location),
                shell_word(file)
            )),
            StateError::RemoteLockId { .. } => Some("pass the id shown in the lock's message, or `--force`".into()),
            StateError::Write { source, .. }
            | StateError::LockFile { source, .. }
            | StateError::Beside { source, .. }
                if beside::Planted::of(source).is_some() =>
            {
                Some(beside::Planted::hint().into())
            }
            StateError::BadComponentName { .. } => Some("rename or remove that entry (at the line shown) with an editor: hub makes file names of component names, so one with `/` or `..` could reach outside the state's folder".into()),
            StateError::Beside { .. } => Some("check the permissions of the state's folder".into()),
            StateError::Write { path, action, source } => Some(write_hint(path, action, source)),
            StateError::BadTime { variable, .. } => Some(format!("unset `{variable}` to use the system clock")),
            StateError::Locked { .. } => Some(locked_hint(self)),
            StateError::StaleLock { state, .. } => Some(format!("remove the lock with `hub unlock {}`", shell_word(state))),
            StateError::UnreadableLock { state, .. } => Some(format!(
                "if no hub is working on this state, remove the lock with `hub unlock --force {}`",
                shell_word(state)
            )),
            StateError::NotLocked { .. } => {
                Some("check the state path; its lock file is beside the state's real file (links followed), its name followed by `.lock`".into())
            }
            StateError::LockFile { .. } => Some("check the permissions of the state's folder".into()),
            StateError::Journal { path, .. } => Some(format!(
                "the state file without it is the state as of its last fold: move `{}` aside to use that state (the checkpoints recorded after that fold are lost), or restore the journal from a copy",
                path.display()
            )),
            StateError::LockTimeout { source, .. } => source.hint(),
            StateError::Serialise(_) => None,
        }
    }
}

/// Another run changed a state while a run that lost it kept going: the
/// state there now compared with the run's own (see [`history`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Taken {
    /// How the run's state diverged from the one there.
    Diverged(Box<history::Divergence>),
    /// The state there could not be read, or descends from the run's.
    Unknown,
}

fn taken_hint(location: &str, file: &Path, taken: &Taken) -> String {
    let differs = match taken {
        Taken::Diverged(divergence) => format!(" What differs: {divergence}."),
        Taken::Unknown => String::new(),
    };
    format!(
        "another run (or a push) changed the state while this run went on, so this is not a store failure: pushing `{file}` would overwrite that run's work, and `hub state push` refuses it.{differs} Run the command again to go on from the state there (`hub state pull {location}` shows it); `hub state push --force {file} {location}` replaces it anyway",
        file = shell_word(file)
    )
}

/// `hub state push` replaces `current` with `pushed` only when both have
/// the same lineage (or one has none) and `pushed` is not older.
pub fn push_allowed(
    pushed: &State,
    current: &State,
    file: &Path,
    location: &Path,
) -> Result<(), StateError> {
    let refused = |reason: String| StateError::PushRefused {
        location: location.to_path_buf(),
        reason,
    };
    let (mine, theirs) = (&pushed.lineage, &current.lineage);
    if !mine.is_empty() && !theirs.is_empty() && mine != theirs {
        return Err(refused(format!(
            "has the lineage {theirs}, the file {mine}: they are different states"
        )));
    }
    let divergence = history::diverged(pushed, current);
    if let Some(divergence) = divergence.filter(|_| !history::is_ancestor(pushed, current)) {
        return Err(StateError::PushDiverged {
            location: location.to_path_buf(),
            file: file.to_path_buf(),
            divergence: Box::new(divergence),
        });
    }
    if pushed.serial < current.serial || history::diverged(pushed, current).is_some() {
        return Err(refused(format!(
            "is newer (serial {}) than the file (serial {})",
            current.serial, pushed.serial
        )));
    }
    Ok(())
}

fn restore_hint(backup: Option<&Path>, prefix: &str) -> String {
    match backup {
        Some(backup) => format!(
            "{prefix}restore the previous version kept in `{}` (compare the two first); the file was left as it is",
            backup.display()
        ),
        None => format!("{prefix}restore the file from a copy; it was left as it is"),
    }
}

/// What to do after a failed write, and what the state holds now.
fn write_hint(path: &Path, action: &str, source: &std::io::Error) -> String {
    let full = matches!(
        source.raw_os_error(),
        Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG)
    );
    let fix = match full {
        true => format!(
            "the file system holding `{}` is full (or the file reached its size limit): free space there",
            path.display()
        ),
        false => "check that the folder exists, is writable and has free space".to_string(),
    };
    let held = match action {
        "append to the journal" | "create the journal" => {
            "hub started no component after the record that failed; `hub state list` shows what the state records"
        }
        _ => "the previous state is unchanged",
    };
    format!("{fix}; {held}")
}

/// How to get past a state that was cut or changed: its backup (locally
/// `STATE.backup`, remotely `KEY.backup` or the bucket's versions), put
/// back under the lock with `hub state push`; a deliberate hand edit; a
/// new state.
fn broken_hint(path: &Path, backup: Option<&Path>) -> String {
    let state = shell_word(path);
    let restore = match (is_remote(path), backup) {
        (true, _) => format!(
            "restore the previous version with `hub state push {state}.backup {state} --force` (or, if the bucket keeps versions, from the object's previous version)"
        ),
        (false, Some(backup)) => format!(
            "`{}` holds the previous version: compare the two, then restore it with `hub state push {} {state} --force`",
            backup.display(),
            shell_word(backup)
        ),
        (false, None) => "restore the file from a copy".to_string(),
    };
    format!(
        "{restore}; if you edited the file by hand on purpose, delete its first and last lines (`# hub-state…`); `hub deploy --force` (a full deploy) starts a new state instead, keeping this one aside; the file was left as it is"
    )
}

fn locked_hint(error: &StateError) -> String {
    let StateError::Locked {
        state,
        holder,
        elsewhere,
        unlocking,
        ..
    } = error
    else {
        return String::new();
    };
    let state = shell_word(state);
    match (elsewhere, unlocking) {
        (true, _) => format!(
            "the holder runs on host `{}` and cannot be checked from here; if no hub works on this state there, run `hub unlock --force {state}`",
            holder.host
        ),
        (false, false) => format!(
            "wait for process {} to finish (`--lock-timeout 5m` waits up to five minutes); if it hangs, stop it and run `hub unlock {state}`",
            holder.pid
        ),
        (false, true) => format!(
            "process {} is still running; stop it first, or remove the lock anyway with `hub unlock --force {state}`",
            holder.pid
        ),
    }
}

/// The path as one shell word: quoted when it holds anything but plain
/// characters.
pub fn shell_word(path: &Path) -> String {
    let text = path.display().to_string();
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c));
    if plain {
        text
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// `s3://`, `gs://`, `az://` and any other `scheme://`.
pub fn is_remote(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.contains("://"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_when_needed() {
        assert_eq!(
            shell_word(Path::new("a/hub.yaml.state")),
            "a/hub.yaml.state"
        );
        assert_eq!(shell_word(Path::new("my state")), "'my state'");
        assert_eq!(shell_word(Path::new("it's")), r"'it'\''s'");
    }

    #[test]
    fn remote_locations_are_recognised() {
        assert!(is_remote(Path::new("s3://bucket/key")));
        assert!(!is_remote(Path::new("hub.yaml.state")));
    }

    #[test]
    fn write_failures_exit_with_2() {
        let error = StateError::Write {
            path: PathBuf::from("s"),
            action: "rename",
            source: std::io::Error::other("x"),
        };
        assert_eq!(error.exit_code(), 2);
        assert!(error.hint().is_some_and(|h| h.contains("unchanged")));
    }
}

/// The example state of the format description (after a full deploy of a
/// two-component stack), read, written and read again.
#[cfg(test)]
mod example_tests {
    use super::*;
    use hub_manifest::diag::Warnings;

    const EXAMPLE: &str = include_str!("testdata/example.yaml");

    fn parse_example() -> State {
        let mut warnings = Warnings::default();
        let state =
            parse(Path::new("example.yaml"), EXAMPLE, &mut warnings).expect("example parses");
        assert!(
            warnings.is_empty(),
            "{:?}",
            warnings.iter().collect::<Vec<_>>()
        );
        state
    }

    #[test]
    fn the_example_is_read_completely() {
        let state = parse_example();
        assert_eq!(state.meta.name, "demo");
        assert_eq!(state.lifecycle.order, ["a", "b"]);
        assert_eq!(state.stack_parameters[1].env, "DEPLOYMENT_ID");
        assert_eq!(
            state.components["b"].captured_outputs.to_vec()[1].qualified_name(),
            "b:url"
        );
        assert_eq!(state.components["a"].raw_outputs[0].value, "a.example.com");
        assert_eq!(
            state.operations[0].args(),
            [
                "hub",
                "deploy",
                "hub.yaml.elaborate",
                "-s",
                "hub.yaml.state"
            ]
        );
        assert_eq!(state.operations[0].phases[1].status, "success");
    }

    #[test]
    fn the_example_survives_write_and_read() {
        let state = parse_example();
        let text = render(&state).expect("render");
        let again =
            parse(Path::new("written.yaml"), &text, &mut Warnings::default()).expect("reparse");
        assert_eq!(again, state);
        let original: yaml_serde::Value = yaml_serde::from_str(EXAMPLE).expect("yaml");
        let written: yaml_serde::Value = yaml_serde::from_str(&text).expect("yaml");
        assert_eq!(written, original, "{text}");
    }

    #[test]
    fn the_example_is_written_in_the_format_order_and_block_style() {
        let text = render(&parse_example()).expect("render");
        let top: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with([' ', '-']))
            .filter_map(|l| l.split(':').next())
            .collect();
        assert_eq!(
            top,
            [
                "version",
                "kind",
                "timestamp",
                "status",
                "meta",
                "lifecycle",
                "stackParameters",
                "capturedOutputs",
                "components",
                "operations"
            ]
        );
        assert!(
            text.contains("timestamp: 2024-05-01T10:00:12.345678901+02:00\n"),
            "{text}"
        );
        assert!(!text.contains('{'), "{text}");
    }
}

/// The pid of a process that has just exited (tests of stale files).
#[cfg(test)]
pub(crate) fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}
