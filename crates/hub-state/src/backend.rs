//! Where a state is kept, behind one interface.
//!
//! A [`StateStore`] holds a folded state and the records appended since
//! its last fold (see [`super::journal`]). [`LocalStore`](super::store::LocalStore) keeps them in
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
