//! Log files created ahead of the components that write them.
//!
//! Every component appends its output to `STATE.logs/<component>.log`, and
//! a first run creates those files. Creating a file costs far more than
//! opening one that exists, and the cost varies: on this project's CI
//! machine (ext4 without a journal) it ranged from 15 µs to 0.8 ms per file
//! depending on what the file system went through just before. So a
//! thread of its own creates (empty, mode 0600) the files of the next
//! [`AHEAD`] components of the plan while the current ones run, and the
//! component's own open (which tries the existing file first, so as not
//! to wait for the folder's lock while the thread creates the next one)
//! finds its file there.
//!
//! The thread never gets further than [`AHEAD`] components past the last
//! one the engine started, so a run that stops early leaves at most that
//! many files it made for nothing; [`LogsAhead::finish`] removes the ones
//! it created that are still empty (a component that ran wrote at least
//! its `---` line). Existing files are left alone: a second run appends to
//! them, as before. A run killed before its end can leave a few empty log
//! files of components that never started.

use hub_state::{beside, private};
use std::io::ErrorKind;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

/// How many components past the last one started get their log file made.
pub(crate) const AHEAD: usize = 16;

/// A file the thread created: its path, and which file it is (device and
/// inode), so that only that file is removed.
type Made = (PathBuf, (u64, u64));

/// The thread making log files ahead of the run, and what it made.
pub(crate) struct LogsAhead {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Vec<Made>>>,
}

struct Shared {
    /// How many components of the plan the engine started (or decided).
    reached: Mutex<usize>,
    moved: Condvar,
    stop: AtomicBool,
}

impl LogsAhead {
    /// Starts making `folder/<name>.log` for `names`, in that order.
    pub fn start(folder: &Path, names: &[String]) -> LogsAhead {
        let shared = Arc::new(Shared {
            reached: Mutex::new(0),
            moved: Condvar::new(),
            stop: AtomicBool::new(false),
        });
        let paths: Vec<PathBuf> = names
            .iter()
            .map(|name| folder.join(format!("{name}.log")))
            .collect();
        let folder = folder.to_path_buf();
        let worker = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("hub-logs".into())
            .spawn(move || make_files(&folder, &paths, &worker))
            .ok();
        LogsAhead { shared, thread }
    }

    /// The engine started (or passed over) its `count`th component.
    pub fn reached(&self, count: usize) {
        if let Ok(mut reached) = self.shared.reached.lock() {
            *reached = count;
        }
        self.shared.moved.notify_one();
    }

    /// Stops the thread and removes the files it made that no component
    /// wrote to.
    pub fn finish(mut self) {
        self.stop_thread();
    }

    fn stop_thread(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.moved.notify_one();
        let Some(made) = self.thread.take().and_then(|t| t.join().ok()) else {
            return;
        };
        for (path, made) in made {
            // Still the (empty) file made, not one found there after the
            // folder was moved or replaced.
            let unused = std::fs::symlink_metadata(&path)
                .is_ok_and(|m| m.is_file() && m.len() == 0 && (m.dev(), m.ino()) == made);
            if unused {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
}

impl Drop for LogsAhead {
    fn drop(&mut self) {
        self.stop_thread();
    }
}

/// Creates the files one by one, never more than [`AHEAD`] past the
/// engine; returns the ones it created. Any error other than an existing
/// file ends the work quietly: the component's own open reports it.
fn make_files(folder: &Path, paths: &[PathBuf], shared: &Shared) -> Vec<Made> {
    let mut made = Vec::new();
    if beside::create_folder(folder).is_err() {
        return made;
    }
    for (index, path) in paths.iter().enumerate() {
        if !wait_for_turn(shared, index) {
            break;
        }
        match beside::create_new(path, private::FILE_MODE) {
            Ok(file) => {
                if let Ok(meta) = file.metadata() {
                    made.push((path.clone(), (meta.dev(), meta.ino())));
                }
            }
            Err(error) if error.kind() == ErrorKind::AlreadyExists => {}
            Err(_) => break,
        }
    }
    made
}

/// Waits until the file at `index` is at most [`AHEAD`] past the engine;
/// false when the run ended first.
fn wait_for_turn(shared: &Shared, index: usize) -> bool {
    let Ok(mut reached) = shared.reached.lock() else {
        return false;
    };
    loop {
        if shared.stop.load(Ordering::Relaxed) {
            return false;
        }
        if index < *reached + AHEAD {
            return true;
        }
        reached = match shared.moved.wait(reached) {
            Ok(reached) => reached,
            Err(_) => return false,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(count: usize) -> Vec<String> {
        (0..count).map(|i| format!("c{i}")).collect()
    }

    fn logs(folder: &Path) -> Vec<String> {
        let mut found: Vec<String> = std::fs::read_dir(folder)
            .map(|entries| {
                entries
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        found.sort();
        found
    }

    #[test]
    fn files_are_made_ahead_of_the_engine_and_unused_ones_removed() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("hub.yaml.state.logs");
        let ahead = LogsAhead::start(&folder, &names(AHEAD * 3));
        ahead.reached(1);
        let first = folder.join("c0.log");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !folder.join(format!("c{AHEAD}.log")).exists() {
            assert!(std::time::Instant::now() < deadline, "no file made ahead");
            std::thread::yield_now();
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(
            !folder.join(format!("c{}.log", AHEAD + 1)).exists(),
            "the thread ran further than {AHEAD} ahead"
        );
        std::fs::write(&first, "--- ran\n").unwrap();
        ahead.finish();
        assert_eq!(logs(&folder), vec!["c0.log".to_string()]);
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(&first).unwrap().permissions(),
        );
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn existing_logs_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("logs");
        std::fs::create_dir(&folder).unwrap();
        std::fs::write(folder.join("c0.log"), "").unwrap();
        std::fs::write(folder.join("c1.log"), "--- earlier run\n").unwrap();
        let ahead = LogsAhead::start(&folder, &names(2));
        ahead.reached(2);
        ahead.finish();
        assert_eq!(logs(&folder), vec!["c0.log", "c1.log"]);
        assert_eq!(
            std::fs::read_to_string(folder.join("c1.log")).unwrap(),
            "--- earlier run\n"
        );
    }
}
