//! Reading and writing state files: gzip and encryption detection,
//! kind/version checks,
//! atomic replacement with a backup of the previous content, the serial.
//! One file per job: [`paths`] (where the files are), [`codec`] (bytes
//! and text of a state), [`read`], [`writer`] (a run's writes), [`flush`]
//! (a start's record flushed off the run's thread), [`local`] (one local
//! location) and [`files`] (atomic file writes).

mod codec;
mod files;
mod flush;
pub(crate) use files::rename_with_flags;
pub use flush::Flush;
mod local;
mod paths;
mod read;
mod writer;

pub use codec::max_state_bytes;
pub(crate) use codec::{check_written_size, read_bytes, serial_of, state_source, unseal};
pub use codec::{parse, render, render_as};
pub(crate) use files::sync_folder;
pub use files::write_atomically;
pub use local::LocalStore;
pub use paths::{backup_path, journal_path, lock_path, real_location};
pub(crate) use paths::{journal_of, resolved_location, shown_location};
pub use read::{read, read_file};
pub use writer::{write, StateWriter, WriteOptions};

#[cfg(test)]
mod fold_tests;
#[cfg(test)]
mod serial_tests;
#[cfg(test)]
mod start_tests;
#[cfg(test)]
mod tests;
