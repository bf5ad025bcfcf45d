//! Where a state is kept, behind one interface.
//!
//! A [`StateStore`] holds a folded state and the records appended since
//! its last fold (see [`super::journal`]). [`LocalStore`] keeps them in
//! local files: `STATE`, `STATE.backup` and `STATE.journal`;
//! [`super::remote::RemoteStore`] keeps them on object storage, one object
//! per record (created only if absent), folded by a put of the state's
//! object conditional on its ETag.

use super::clock::Clock;
use super::layout::StateFormat;
use super::model::State;
use super::StateError;
use hub_manifest::diag::Warnings;
use std::path::Path;

pub use super::store::LocalStore;

pub trait StateStore {
    /// Where the state is, as given (for messages).
    fn location(&self) -> &Path;

    /// The state as hub reads it: the folded state with every record
    /// applied; `None` when there is no state. Changes nothing.
    fn load(&self, warnings: &mut Warnings) -> Result<Option<State>, StateError>;

    /// Appends one encoded record of the run `operation`; on durable
    /// storage when it returns.
    fn append(&mut self, operation: &str, record: &str) -> Result<(), StateError>;

    /// [`StateStore::append`] that may return before the record is
    /// durable: the next durable append or fold makes it so, in order.
    fn append_unsynced(&mut self, operation: &str, record: &str) -> Result<(), StateError> {
        self.append(operation, record)
    }

    /// Replaces the folded state with `state` (whose serial is `serial`)
    /// and drops the records. `backup`: the state as folded just before
    /// (kept as the backup); `None`: the current folded state is.
    fn fold(&mut self, serial: u64, backup: Option<&[u8]>, state: &[u8]) -> Result<(), StateError>;

    /// Takes the state's lock for `operation` (see [`super::lock`]).
    fn lock(&mut self, operation: &str, clock: &Clock) -> Result<(), StateError>;

    /// [`StateStore::lock`], waiting for a live holder as `wait` allows
    /// (`--lock-timeout`).
    fn lock_waiting(
        &mut self,
        operation: &str,
        clock: &Clock,
        wait: &super::LockWait<'_>,
    ) -> Result<(), StateError> {
        wait.retry(|| self.lock(operation, clock))
    }

    /// Releases the lock taken by [`StateStore::lock`].
    fn unlock(&mut self) -> Result<(), StateError>;

    /// Proves that this run still owns the state before a component
    /// starts (see [`super::fence`]): its lock is still its own and the
    /// state the version it last wrote. Fails with
    /// [`StateError::RemoteConflict`] when it does not.
    fn prove_owner(&mut self) -> Result<(), StateError> {
        Ok(())
    }

    /// Records appended since the last fold, and their size in bytes: a
    /// writer folds once they outgrow the folded state.
    fn journal_records(&self) -> usize;
    fn journal_size(&self) -> u64;

    /// The size of the folded state, in bytes.
    fn folded_size(&self) -> u64;

    /// The records have outgrown the folded state: folding now keeps the
    /// reading of the state (state and records) in proportion to its size.
    fn journal_outgrown(&self) -> bool {
        self.journal_records() > 0 && self.journal_size() > self.folded_size()
    }

    /// An append failed and may have left a partial record: the next write
    /// must fold.
    fn journal_broken(&self) -> bool {
        false
    }

    /// Where the version of the state this run replaced is kept, for the
    /// run's summary; `None` when the place needs no saying (a local
    /// file's backup is always `STATE.backup`) or nothing was replaced.
    fn previous_version(&self) -> Option<String> {
        None
    }

    /// The state [`StateStore::load`] reads, as YAML text in `format`;
    /// takes no lock and changes nothing.
    fn pull(
        &self,
        format: StateFormat,
        warnings: &mut Warnings,
    ) -> Result<Option<String>, StateError> {
        self.load(warnings)?
            .map(|state| super::render_as(&state, format))
            .transpose()
    }
}

impl StateStore for LocalStore {
    fn location(&self) -> &Path {
        self.given_path()
    }

    fn load(&self, warnings: &mut Warnings) -> Result<Option<State>, StateError> {
        super::read(self.given_path(), warnings)
    }

    fn append(&mut self, operation: &str, record: &str) -> Result<(), StateError> {
        self.append_record(operation, record, true)
    }

    fn append_unsynced(&mut self, operation: &str, record: &str) -> Result<(), StateError> {
        self.append_record(operation, record, false)
    }

    fn fold(&mut self, serial: u64, backup: Option<&[u8]>, state: &[u8]) -> Result<(), StateError> {
        self.fold_files(serial, backup, state)
    }

    fn lock(&mut self, operation: &str, clock: &Clock) -> Result<(), StateError> {
        self.take_lock(operation, clock)
    }

    fn unlock(&mut self) -> Result<(), StateError> {
        self.release_lock()
    }

    fn prove_owner(&mut self) -> Result<(), StateError> {
        LocalStore::prove_owner(self)
    }

    fn journal_records(&self) -> usize {
        self.journal_counts().0
    }

    fn journal_size(&self) -> u64 {
        self.journal_counts().1
    }

    fn folded_size(&self) -> u64 {
        self.file_size()
    }

    /// A journal file smaller than [`super::journal::FOLD_MIN_JOURNAL`] is
    /// read at once whatever the state's size: folding a small state after
    /// every few records would cost more than the records themselves.
    fn journal_outgrown(&self) -> bool {
        let (records, size, _) = self.journal_counts();
        records > 0 && size > self.file_size().max(super::journal::FOLD_MIN_JOURNAL)
    }

    fn journal_broken(&self) -> bool {
        self.journal_counts().2
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{journal, StackMeta};

    #[test]
    fn a_local_store_appends_folds_and_locks() {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let clock = Clock::system();
        let mut first = State::new(StackMeta::default(), Vec::new());
        first.serial = 1;
        first.timestamp = "2026-01-01T00:00:00Z".into();
        let text = crate::render(&first).expect("render");
        let mut store = LocalStore::locked(&path, "deploy", &clock).expect("lock");
        assert!(crate::lock_path(&path).exists());
        assert!(store
            .load(&mut Warnings::default())
            .expect("load")
            .is_none());
        store.fold(1, None, text.as_bytes()).expect("fold");
        assert_eq!(store.location(), path);

        let mut second = first.clone();
        second.serial = 2;
        second.status = "deploying".into();
        let record = journal::encode(&journal::whole(&second, 2)).expect("encode");
        store.append("op", &record).expect("append");
        let loaded = store.load(&mut Warnings::default()).expect("load");
        assert_eq!(loaded.as_ref(), Some(&second));
        let pulled = store
            .pull(StateFormat::Linear, &mut Warnings::default())
            .expect("pull")
            .expect("a state");
        assert!(pulled.contains("status: deploying"), "{pulled}");

        // A second store cannot take the lock while the first holds it.
        assert!(LocalStore::locked(&path, "deploy", &clock).is_err());
        store.unlock().expect("unlock");
        assert!(!crate::lock_path(&path).exists());
        store.lock("deploy", &clock).expect("lock again");
        let folded = crate::render(&second).expect("render");
        store
            .fold(2, Some(text.as_bytes()), folded.as_bytes())
            .expect("fold");
        assert!(!journal::journal_path(&path).exists());
        assert_eq!(
            store.load(&mut Warnings::default()).expect("load"),
            Some(second)
        );
    }
}
