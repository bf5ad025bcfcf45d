//! The flush of a start's record, done by whoever starts the component.
//!
//! A component may start only once the record saying it started is on
//! disk. Flushing a journal (`fdatasync`) takes a fraction of a
//! millisecond (milliseconds on a busy or network disk); done on the
//! run's thread before each batch of starts, a large run spends seconds
//! there, handing out nothing and recording no end meanwhile.
//! So [`StateWriter::write_starts`](super::StateWriter::write_starts)
//! appends the record without flushing it and hands back a [`Flush`]:
//! each component's thread waits on it before its process starts. The
//! first to wait flushes every local journal the record went to; the
//! others wait for that flush and share its result. A flush covers every
//! record written to the file before it, so one flush often serves the
//! records of several batches.
//!
//! With several locations the rule of every write holds: the flush fails
//! when no location was flushed; a location that failed while another was
//! flushed is kept for the writer
//! ([`take_failures`](super::StateWriter::take_failures)), which folds at
//! its next write.

use crate::StateError;
use std::fs::File;
use std::io;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};

/// The journals a record went to without being flushed. Clone it to give
/// it to each component that starts with that record; a clone waits on
/// the same flush.
#[derive(Clone, Default)]
#[must_use = "a component may start only once its record is flushed"]
pub struct Flush {
    shared: Arc<Shared>,
}

#[derive(Default)]
struct Shared {
    journals: Vec<(PathBuf, Arc<File>)>,
    /// `Ok`, or the error of the first location (none was flushed).
    done: OnceLock<Result<(), (io::ErrorKind, String)>>,
    /// The errors of locations that failed while another was flushed.
    failures: Mutex<Vec<StateError>>,
}

const ACTION: &str = "flush the journal";

impl Flush {
    /// A flush of `journals` (none: nothing to wait for).
    pub(super) fn of(journals: Vec<(PathBuf, Arc<File>)>) -> Flush {
        Flush {
            shared: Arc::new(Shared {
                journals,
                ..Shared::default()
            }),
        }
    }

    /// Flushes the journals, or waits for the flush another thread is
    /// making; `Err` when no location could be flushed (the component
    /// must not start).
    pub fn wait(&self) -> Result<(), StateError> {
        let shared = &*self.shared;
        let done = shared.done.get_or_init(|| shared.flush_all());
        done.clone().map_err(|(kind, message)| StateError::Write {
            path: shared.first_path(),
            action: ACTION,
            source: io::Error::new(kind, message),
        })
    }

    /// Whether the flush was made and failed somewhere.
    pub(super) fn failed(&self) -> bool {
        match self.shared.done.get() {
            Some(Ok(())) => !self.lock_failures().is_empty(),
            Some(Err(_)) => true,
            None => false,
        }
    }

    /// The errors of the locations that could not be flushed while another
    /// was, once the flush was made (taken: each is reported once).
    pub(super) fn take_failures(&self) -> Vec<StateError> {
        match self.shared.done.get() {
            Some(_) => std::mem::take(&mut *self.lock_failures()),
            None => Vec::new(),
        }
    }

    /// Whether the flush was made (or had nothing to do).
    pub(super) fn made(&self) -> bool {
        self.shared.journals.is_empty() || self.shared.done.get().is_some()
    }

    fn lock_failures(&self) -> std::sync::MutexGuard<'_, Vec<StateError>> {
        // A panic while the list was held leaves it as it was: still valid.
        self.shared
            .failures
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Shared {
    fn flush_all(&self) -> Result<(), (io::ErrorKind, String)> {
        let mut first_error = None;
        let mut flushed = self.journals.is_empty();
        let mut failures = Vec::new();
        for (path, file) in &self.journals {
            match file.sync_data() {
                Ok(()) => flushed = true,
                Err(source) => {
                    first_error.get_or_insert((source.kind(), source.to_string()));
                    failures.push(StateError::Write {
                        path: path.clone(),
                        action: ACTION,
                        source,
                    });
                }
            }
        }
        if flushed {
            // Poisoning is handled where the list is read.
            if let Ok(mut kept) = self.failures.lock() {
                kept.extend(failures);
            }
            return Ok(());
        }
        Err(first_error.unwrap_or((io::ErrorKind::Other, "no journal".to_string())))
    }

    fn first_path(&self) -> PathBuf {
        self.journals
            .first()
            .map(|(path, _)| path.clone())
            .unwrap_or_default()
    }
}

/// A journal that takes writes but refuses to be flushed: `/dev/null`
/// (`EINVAL`).
#[cfg(test)]
pub(super) fn unflushable() -> (PathBuf, Arc<File>) {
    let file = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/null")
        .expect("/dev/null");
    (PathBuf::from("/dev/null"), Arc::new(file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_flush_is_made_once_and_shared_by_every_waiter() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("st.journal");
        let mut file = File::create(&path).unwrap();
        file.write_all(b"record\n").unwrap();
        let flush = Flush::of(vec![(path, Arc::new(file))]);
        assert!(!flush.made());
        let waiters: Vec<Flush> = (0..4).map(|_| flush.clone()).collect();
        std::thread::scope(|threads| {
            for waiter in &waiters {
                threads.spawn(|| waiter.wait().unwrap());
            }
        });
        assert!(flush.made());
        assert!(!flush.failed());
        assert!(flush.take_failures().is_empty());
    }

    #[test]
    fn a_flush_fails_when_no_location_was_flushed() {
        let flush = Flush::of(vec![unflushable()]);
        let error = flush.wait().unwrap_err().to_string();
        assert!(error.contains("/dev/null"), "{error}");
        assert!(error.contains("flush the journal"), "{error}");
        // A second waiter gets the same answer, without flushing again.
        assert!(flush.clone().wait().is_err());
        assert!(flush.failed());
    }

    #[test]
    fn a_location_that_fails_while_another_is_flushed_is_kept_for_the_writer() {
        let folder = tempfile::tempdir().unwrap();
        let path = folder.path().join("st.journal");
        let file = File::create(&path).unwrap();
        let flush = Flush::of(vec![unflushable(), (path, Arc::new(file))]);
        assert!(flush.take_failures().is_empty(), "nothing before the flush");
        flush.wait().unwrap();
        assert!(flush.failed());
        let failures = flush.take_failures();
        assert_eq!(failures.len(), 1);
        assert!(failures[0].to_string().contains("/dev/null"));
        assert!(flush.take_failures().is_empty(), "each is reported once");
    }

    #[test]
    fn nothing_to_flush_is_made_already() {
        let flush = Flush::default();
        assert!(flush.made());
        flush.wait().unwrap();
    }
}
