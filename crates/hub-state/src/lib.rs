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
//! [`integrity`]). A string value of 4 KiB or more held by several places
//! (a raw output, the snapshots, the captured and stack outputs, the
//! parameters reading it) is written once, as a YAML anchor where it first
//! appears and an alias everywhere after (see [`render`]).
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
//! * `STATE.changes/` — the registry of changes (pull requests): their
//!   plans and applies, and the stack's apply lock (see [`changes`]).
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

mod captured;
mod clock;
mod error;

pub mod backend;
pub mod beside;
pub mod changes;
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
pub mod runs;
mod sink;
pub mod snapshot;
pub(crate) mod store;
mod vocabulary;

pub use backend::StateStore;
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
pub use model::Health;
pub use model::{
    scalar_text, CapturedOutput, ComponentMeta, ComponentState, Operation, Phase, RawOutput,
    StackMeta, StackOutput, State, StateLifecycle, StateParameter, Timestamps, ZERO_TIME,
};
pub use render::SHARED_VALUE_BYTES;
pub use snapshot::{outputs_of_each, qualified_cmp, Index as SnapshotIndex};
pub use snapshot::{Delta, Shared as SharedOutput, Snapshot};
pub use store::{
    backup_path, lock_path, max_state_bytes, parse, read, read_file, real_location, render,
    render_as, write, write_atomically, Flush, LocalStore, StateWriter, WriteOptions,
};
pub use vocabulary::{
    ComponentStatus, HealthStatus, OperationStatus, Recorded, StackStatus, Vocabulary,
};

pub use error::{shell_word, StateError, Taken};
pub use remote::is_remote;

use std::path::Path;

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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

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
        assert_eq!(state.stack_parameters[1].env(), "DEPLOYMENT_ID");
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
