//! Flushing the journal off the run's thread: a run appends the records
//! of the components about to start without waiting for the disk, and
//! starts them once a [`JournalFlush`] made the records durable.

use crate::error::StateError;
use std::fs::File;
use std::path::PathBuf;

/// The journals of a writer's local locations with records appended but
/// not yet flushed (see [`super::StateWriter::write_starts`]). It owns
/// handles of the files, so it may run on any thread while the writer goes
/// on appending: a flush makes durable every byte written before it, and
/// a journal a fold removed meanwhile holds records the fold made durable.
#[derive(Debug)]
pub struct JournalFlush {
    /// Each journal, with its location's index in the writer.
    pub(super) journals: Vec<(usize, PathBuf, File)>,
}

/// What a [`JournalFlush`] did: the locations whose journal could not
/// be flushed. Handed back to the writer ([`super::StateWriter::flushed`]).
#[derive(Debug)]
pub struct Flushed {
    pub(super) failed: Vec<(usize, StateError)>,
}

impl JournalFlush {
    /// Flushes each journal (`fdatasync`).
    pub fn run(self) -> Flushed {
        let failed = self
            .journals
            .into_iter()
            .filter_map(|(index, path, file)| {
                let source = file.sync_data().err()?;
                Some((
                    index,
                    StateError::Write {
                        path,
                        action: "flush the journal",
                        source,
                    },
                ))
            })
            .collect();
        Flushed { failed }
    }
}
