//! What can go wrong with a state, and the hint each error gives (what to
//! do next, as a command where there is one).

use crate::lock::LockInfo;
use crate::remote::is_remote;
use crate::{beside, crypto, history, integrity};
use hub_manifest::diag::Location;
use std::path::{Path, PathBuf};
use std::time::Duration;

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
        /// Its holder is a process alive on this host.
        alive_here: bool,
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
    /// A state larger than every command reads (see
    /// [`hub_manifest::limits::max_state_bytes`]): refused when read, and
    /// never written.
    #[error("{}", too_large_text(path, *bytes, *limit, *writing))]
    TooLarge {
        path: PathBuf,
        bytes: u64,
        limit: u64,
        /// A write that was refused (nothing written), not a read.
        writing: bool,
    },
    /// A state read past one of the other limits (nesting, aliases).
    #[error("the state file is too much to read: {message}")]
    Limit {
        location: Location,
        message: String,
        backup: Option<PathBuf>,
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
    #[error("cannot {action} the lock file `{}`: {}", lock.display(), lock_file_reason(lock, source))]
    LockFile {
        lock: PathBuf,
        action: &'static str,
        source: std::io::Error,
    },
    /// `--lock-timeout` ran out: the error without it, and how long the
    /// command waited.
    #[error("{source} (waited {})", duration_text(*waited))]
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
            | StateError::RemoteSaved { .. }
            | StateError::TooLarge { writing: true, .. } => 2,
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
            | StateError::Limit { location, .. }
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
            | StateError::Journal { path, .. }
            | StateError::TooLarge { path, .. } => Some(Location::file(path)),
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
            StateError::TooLarge { limit, .. } => Some(format!(
                "hub reads states of up to {} (set `{}` to a number of bytes to change it, the same for every command that reads this state); or split the stack's components over several states",
                hub_manifest::limits::size_text(*limit as usize),
                hub_manifest::limits::MAX_STATE_BYTES_VARIABLE
            )),
            StateError::Limit { backup, .. } => Some(restore_hint(backup.as_deref(), "")),
            StateError::WrongKind { .. } => Some("check the `-s`/`--state` path: it names another kind of file".into()),
            StateError::WrongVersion { version, .. } if *version > 1 => {
                Some("the file was written by a newer hub; use that version".into())
            }
            StateError::WrongVersion { .. } => Some("a state file starts with `version: 1` and `kind: state`".into()),
            StateError::Remote { .. } => Some("pull the state to a local file with `hub state pull -s LOCATION -o FILE` and pass its path".into()),
            StateError::RemoteLocation { .. } => Some("a remote state is `s3://BUCKET/KEY`, `gs://BUCKET/KEY` or `az://CONTAINER/KEY`".into()),
            StateError::RemoteAccess { hint, .. } => Some(hint.clone()),
            StateError::RemoteConflict { location, .. } => Some(format!("no new component was started; see what changed with `hub state pull -s {location}`, and check who else deploys this stack")),
            StateError::RemoteLocked { location, stale: true, id, .. } => Some(format!("its holder stopped without removing it: remove it with `hub unlock -s {location} --id {id}`")),
            StateError::RemoteLocked { alive_here: true, .. } => Some("that run still runs on this host: wait for it to finish (`--lock-timeout 5m` waits up to five minutes); its lock is not stale, whatever its lease says".into()),
            StateError::RemoteLocked { .. } => Some("wait for that run to finish; if it is gone, its lease expires within a minute (`hub unlock -s LOCATION --force` removes the lock at once)".into()),
            StateError::RemoteNotLocked { .. } => None,
            StateError::UnlockLive { state, holder } => Some(format!(
                "stop process {} first; to remove its lock anyway (that run then starts no new component and writes nothing more to the state), run `hub unlock -s {state} --force --yes`",
                holder.pid
            )),
            StateError::PushRefused { .. } => Some("check that FILE is the state of this stack (`hub state pull -s LOCATION` shows the current one); `--force` replaces it anyway".into()),
            StateError::RemoteSaved { location, file, taken: None, .. } => Some(format!(
                "once the store works again, upload it with `hub state push {} {location}`; then run the command again",
                shell_word(file)
            )),
            StateError::RemoteSaved { location, file, taken: Some(taken), .. } => Some(taken_hint(location, file, taken)),
            StateError::PushDiverged { location, file, .. } => Some(format!(
                "writing it would drop what the state's other run did: run the command again to go on from the state there (`hub state pull -s {0}` shows it), or merge the two by hand and push the result; `hub state push --force {1} {0}` replaces it anyway",
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
            StateError::StaleLock { state, .. } => Some(format!("remove the lock with `hub unlock -s {}`", shell_word(state))),
            StateError::UnreadableLock { state, .. } => Some(format!(
                "if no hub is working on this state, remove the lock with `hub unlock -s {} --force`",
                shell_word(state)
            )),
            StateError::NotLocked { .. } => {
                Some("check the state path; its lock file is beside the state's real file (links followed), its name followed by `.lock`".into())
            }
            StateError::LockFile { lock, source, .. } => Some(match missing_folder(lock, source) {
                Some(folder) => folder_hint(&folder),
                None => "check the permissions of the state's folder".into(),
            }),
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
        "another run (or a push) changed the state while this run went on, so this is not a store failure: pushing `{file}` would overwrite that run's work, and `hub state push` refuses it.{differs} Run the command again to go on from the state there (`hub state pull -s {location}` shows it); `hub state push --force {file} {location}` replaces it anyway",
        file = shell_word(file)
    )
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
            "the holder runs on host `{}` and cannot be checked from here; if no hub works on this state there, run `hub unlock -s {state} --force`",
            holder.host
        ),
        (false, false) => format!(
            "wait for process {} to finish (`--lock-timeout 5m` waits up to five minutes); if it hangs, stop it and run `hub unlock -s {state}`",
            holder.pid
        ),
        (false, true) => format!(
            "process {} is still running; stop it first, or remove the lock anyway with `hub unlock -s {state} --force`",
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

/// `2.5s`, `90s`, `5m`, `1h30m`: whole seconds where there are no
/// fractions, minutes and hours from a minute on.
pub fn duration_text(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis < 60_000 && millis % 1000 != 0 {
        return format!("{:.1}s", duration.as_secs_f64());
    }
    let seconds = duration.as_secs();
    let (hours, minutes, seconds) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    let mut text = String::new();
    if hours > 0 {
        text += &format!("{hours}h");
    }
    if minutes > 0 {
        text += &format!("{minutes}m");
    }
    if seconds > 0 || text.is_empty() {
        text += &format!("{seconds}s");
    }
    text
}

/// The folder of a lock file that could not be made because the folder
/// itself is missing.
fn missing_folder(lock: &Path, source: &std::io::Error) -> Option<PathBuf> {
    if source.kind() != std::io::ErrorKind::NotFound {
        return None;
    }
    let folder = match lock.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    (!folder.is_dir()).then(|| folder.to_path_buf())
}

/// Why a lock file could not be made: a missing folder is named as
/// missing, not as a permission problem.
fn lock_file_reason(lock: &Path, source: &std::io::Error) -> String {
    match missing_folder(lock, source) {
        Some(folder) => format!("the state's folder `{}` does not exist", folder.display()),
        None => source.to_string(),
    }
}

/// What to do about a state folder that is missing or not writable.
fn folder_hint(folder: &Path) -> String {
    match folder.exists() {
        false => format!(
            "create the folder first (`mkdir -p {}`), or give `-s` a path in a folder that exists",
            shell_word(folder)
        ),
        true => "check the permissions of the state's folder, or give `-s` a path in a folder you may write".into(),
    }
}

fn too_large_text(path: &Path, bytes: u64, limit: u64, writing: bool) -> String {
    let limit = hub_manifest::limits::size_text(limit as usize);
    match writing {
        true => format!(
            "the state `{}` would take {bytes} bytes, more than the {limit} every command reads back: it was not written",
            path.display()
        ),
        false => format!(
            "the state file `{}` is larger than the {limit} a state may take ({bytes} bytes or more)",
            path.display()
        ),
    }
}
