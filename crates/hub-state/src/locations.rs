//! The state locations of a run (`-s a,b`: one or several local files).
//!
//! * **Lock:** every location is locked (`STATE.lock` each, see
//!   [`super::lock`]), in the order of their canonical paths, so that two
//!   runs given the same locations in another order contend on the same
//!   first lock. A location held by another run stops the run, as for one
//!   location (or is waited for, with [`Locations::lock_waiting`]). A location whose lock cannot be created (its folder is
//!   missing or read-only) and that holds no state file is left out of the
//!   run with a warning, as long as another location was locked; the run
//!   stops otherwise. Locations naming the same file are used once.
//! * **Read:** [`Locations::to_read`] picks one file ([`choose`]; a
//!   location's journal counts with its file: the newer of the two times,
//!   the sum of the sizes), which is then read as usual ([`super::read`],
//!   journal included).
//! * **Write:** one [`super::StateWriter`] writes the same bytes to every
//!   location: the same journal records beside each, the same folded file.
//!
//! Remote locations (`s3://`, `gs://`, `az://`, see [`super::remote`])
//! take part like files: their lock is the remote lock (with a lease),
//! their age and size those of the state object and its records.

use super::clock::Clock;
use super::lock::{LockWait, StateLock};
use super::remote::{Fence, HeldLocks, RemoteLocation, RemoteLock};
use super::{is_remote, StateError};
use hub_manifest::diag::{Location, Warnings};
use std::path::{Path, PathBuf};

mod choose;

pub use choose::{choose, Candidate, SAME_TIME};
use std::time::SystemTime;

/// The locked locations of a run; the locks are released when dropped.
#[derive(Debug)]
pub struct Locations {
    /// In the order given, without duplicates and left-out locations: each
    /// location's real path ([`super::real_location`]), resolved once,
    /// when it was locked; the run reads and writes these.
    paths: Vec<PathBuf>,
    /// The same locations as given.
    given: Vec<PathBuf>,
    _locks: Vec<StateLock>,
    /// Released (and their leases no longer renewed) when dropped.
    _remote_locks: Vec<RemoteLock>,
    /// The remote locks' ids and the run's fence, for its writers.
    held: HeldLocks,
}

/// The lock taken on one location.
enum Held {
    Local(Box<StateLock>),
    Remote(RemoteLock),
}

impl std::fmt::Debug for RemoteLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemoteLock({})", self.id())
    }
}

impl Locations {
    /// Locks every location of `paths` (at least one) for `operation`.
    pub fn lock(
        paths: &[PathBuf],
        operation: &str,
        clock: &Clock,
        warnings: &mut Warnings,
    ) -> Result<Locations, StateError> {
        Locations::lock_waiting(paths, operation, clock, &LockWait::default(), warnings)
    }

    /// [`Locations::lock`], waiting for each lock another run holds as
    /// `wait` allows.
    pub fn lock_waiting(
        paths: &[PathBuf],
        operation: &str,
        clock: &Clock,
        wait: &LockWait<'_>,
        warnings: &mut Warnings,
    ) -> Result<Locations, StateError> {
        for remote in paths.iter().filter(|p| is_remote(p)) {
            RemoteLocation::of_path(remote)?;
        }
        let unique = distinct(paths, warnings);
        let fence = Fence::default();
        let taking = Taking {
            operation,
            clock,
            wait,
            fence: &fence,
        };
        let (locks, left_out) = taking.take_all(&unique, warnings)?;
        if locks.iter().all(Option::is_none) {
            let first = left_out.into_iter().next().map(|(_, error)| error);
            return Err(first.unwrap_or_else(|| StateError::LockFile {
                lock: PathBuf::new(),
                action: "create",
                source: std::io::Error::other("no state location was given"),
            }));
        }
        for (i, error) in &left_out {
            warn_left_out(unique[*i].1, error, warnings);
        }
        Ok(Locations::of_held(unique, locks, fence))
    }

    /// The locations whose lock was taken, in the order given.
    fn of_held(unique: Vec<Distinct<'_>>, locks: Vec<Option<Held>>, fence: Fence) -> Locations {
        let mut kept = Vec::with_capacity(unique.len());
        let mut given = Vec::with_capacity(unique.len());
        let mut held = Vec::with_capacity(unique.len());
        let mut remote = Vec::new();
        for ((_, path, real), lock) in unique.into_iter().zip(locks) {
            match lock {
                Some(Held::Local(lock)) => held.push(*lock),
                Some(Held::Remote(lock)) => remote.push(lock),
                None => continue,
            }
            kept.push(real);
            given.push(path.clone());
        }
        Locations {
            paths: kept,
            given,
            _locks: held,
            held: HeldLocks::of(&remote, fence),
            _remote_locks: remote,
        }
    }

    /// The locations' real paths, in the order given.
    pub fn paths(&self) -> &[PathBuf] {
        &self.paths
    }

    /// The remote locks held and the run's fence: what the writers of
    /// these locations prove ([`crate::StateWriter::open_locked`]).
    pub fn held(&self) -> &HeldLocks {
        &self.held
    }

    /// The locations as given, in the same order as [`Locations::paths`].
    pub fn given(&self) -> &[PathBuf] {
        &self.given
    }

    /// The first location's real path: the logs (`STATE.logs/`) go
    /// beside it.
    pub fn first(&self) -> &Path {
        &self.paths[0]
    }

    /// The location to read ([`choose`]); `None` when no state file exists.
    /// A location that cannot be examined is returned, so that reading it
    /// reports why.
    pub fn to_read(&self) -> Option<&Path> {
        to_read(&self.paths)
    }
}

/// The location to read among `paths` ([`choose`]); one whose file cannot
/// be looked at is chosen, so that reading it reports why. `None`: no file.
pub fn to_read(paths: &[PathBuf]) -> Option<&Path> {
    let mut candidates = Vec::with_capacity(paths.len());
    for path in paths {
        if is_remote(path) {
            match super::remote::store::candidate(path) {
                Ok(candidate) => candidates.push(candidate),
                Err(_) => return Some(path),
            }
            continue;
        }
        match std::fs::metadata(path) {
            Ok(meta) => {
                // A journal is part of its location's state: its last
                // record is the location's newest change.
                let journal = std::fs::metadata(super::store::journal_of(path)).ok();
                let modified =
                    |m: &std::fs::Metadata| m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                candidates.push(Some(Candidate {
                    modified: journal
                        .as_ref()
                        .map_or(modified(&meta), |j| modified(j).max(modified(&meta))),
                    size: meta.len() + journal.as_ref().map_or(0, |j| j.len()),
                }))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => candidates.push(None),
            Err(_) => return Some(path),
        }
    }
    choose(&candidates).map(|i| paths[i].as_path())
}

/// A location as (resolved, as given, real): every path is resolved once.
type Distinct<'p> = (PathBuf, &'p PathBuf, PathBuf);

/// The locations of `paths` naming different files, in the order given;
/// a repeat is warned about and used once.
fn distinct<'p>(paths: &'p [PathBuf], warnings: &mut Warnings) -> Vec<Distinct<'p>> {
    let mut unique: Vec<Distinct<'p>> = Vec::with_capacity(paths.len());
    for path in paths {
        let key = super::store::resolved_location(path);
        if unique.iter().any(|(seen, _, _)| *seen == key) {
            warnings.warn(
                Some(Location::file(path)),
                "this state location names the same file as an earlier one; it is used once",
            );
            continue;
        }
        let real = super::store::shown_location(path, key.clone());
        unique.push((key, path, real));
    }
    unique
}

/// What taking the locks of a run needs.
struct Taking<'a> {
    operation: &'a str,
    clock: &'a Clock,
    wait: &'a LockWait<'a>,
    fence: &'a Fence,
}

/// The locks taken (by the position given) and the local locations left
/// out of a run of several because their lock file cannot be made.
type Taken = (Vec<Option<Held>>, Vec<(usize, StateError)>);

impl Taking<'_> {
    /// Takes the locks in the order of the resolved paths (two runs never
    /// wait on each other's); dropping the locks on an error releases
    /// those taken.
    fn take_all(
        &self,
        unique: &[Distinct<'_>],
        warnings: &mut Warnings,
    ) -> Result<Taken, StateError> {
        let mut order: Vec<usize> = (0..unique.len()).collect();
        order.sort_by(|a, b| unique[*a].0.cmp(&unique[*b].0));
        let mut locks: Vec<Option<Held>> = unique.iter().map(|_| None).collect();
        let mut left_out: Vec<(usize, StateError)> = Vec::new();
        for i in order {
            let path = &unique[i].2;
            match self.take(path, warnings) {
                Ok(held) => locks[i] = Some(held),
                // No state file there (a link to a missing one counts).
                Err(error @ StateError::LockFile { .. })
                    if !is_remote(path) && unique.len() > 1 && std::fs::metadata(path).is_err() =>
                {
                    left_out.push((i, error));
                }
                Err(error) => return Err(error),
            }
        }
        left_out.sort_by_key(|(i, _)| *i);
        Ok((locks, left_out))
    }

    /// The lock of one location, remote or local.
    fn take(&self, path: &Path, warnings: &mut Warnings) -> Result<Held, StateError> {
        if is_remote(path) {
            let lock = self.wait.retry(|| {
                RemoteLock::acquire_fenced(path, self.operation, self.clock, self.fence)
            })?;
            return Ok(Held::Remote(lock));
        }
        let lock = StateLock::acquire_waiting(path, self.operation, self.clock, self.wait)?;
        if let Some(dead) = lock.cleared() {
            warnings.warn(
                Some(Location::file(lock.path())),
                format!("removed the stale lock of {dead}, which is no longer running"),
            );
        }
        Ok(Held::Local(Box::new(lock)))
    }
}

/// Says that a location is left out of the run, and why.
fn warn_left_out(path: &Path, error: &StateError, warnings: &mut Warnings) {
    let reason = match error {
        StateError::LockFile { action, source, .. } => {
            format!("cannot {action} its lock file: {source}")
        }
        other => other.to_string(),
    };
    warnings.warn(
        Some(Location::file(path)),
        format!("{reason}; this state location is left out of the run (neither read nor written)"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(seconds: u64, size: u64) -> Option<Candidate> {
        Some(Candidate {
            modified: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + seconds),
            size,
        })
    }

    #[test]
    fn no_file_one_file() {
        assert_eq!(choose(&[]), None);
        assert_eq!(choose(&[None, None]), None);
        assert_eq!(choose(&[None, at(0, 5)]), Some(1));
        assert_eq!(choose(&[at(0, 5), None]), Some(0));
    }

    #[test]
    fn the_newest_wins_when_the_others_are_older_than_ten_seconds() {
        assert_eq!(choose(&[at(0, 900), at(11, 10)]), Some(1));
        assert_eq!(
            choose(&[at(30, 10), None, at(0, 900), at(19, 900)]),
            Some(0)
        );
    }

    #[test]
    fn among_files_written_together_the_largest_wins() {
        assert_eq!(choose(&[at(0, 10), at(10, 20)]), Some(1));
        assert_eq!(choose(&[at(10, 10), at(0, 20)]), Some(1));
        // Only the recent ones compete on size.
        assert_eq!(choose(&[at(0, 99), at(15, 10), at(20, 20)]), Some(2));
    }

    #[test]
    fn equal_files_written_together_give_the_first() {
        assert_eq!(choose(&[at(3, 10), at(5, 10)]), Some(0));
        assert_eq!(choose(&[None, at(5, 10), at(5, 10)]), Some(1));
    }

    fn clock() -> Clock {
        Clock::from_env(&|_| None).expect("clock")
    }

    #[test]
    fn every_location_is_locked_and_released() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a.state"), dir.path().join("b.state"));
        std::fs::create_dir(dir.path().join("x")).expect("x");
        let mut warnings = Warnings::default();
        let locations = Locations::lock(
            &[b.clone(), a.clone(), dir.path().join("x/../b.state")],
            "deploy",
            &clock(),
            &mut warnings,
        )
        .expect("lock");
        assert_eq!(locations.paths(), [b.clone(), a.clone()]);
        assert_eq!(warnings.len(), 1, "the duplicate is reported");
        assert!(super::super::lock_path(&a).exists() && super::super::lock_path(&b).exists());
        let again = Locations::lock(std::slice::from_ref(&a), "deploy", &clock(), &mut warnings);
        assert!(matches!(again, Err(StateError::Locked { .. })));
        drop(locations);
        assert!(!super::super::lock_path(&a).exists() && !super::super::lock_path(&b).exists());
    }

    #[test]
    fn a_held_location_stops_the_run_and_releases_the_others() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a.state"), dir.path().join("b.state"));
        let held = StateLock::acquire(&b, "deploy", &clock()).expect("lock b");
        let error = Locations::lock(
            &[a.clone(), b],
            "deploy",
            &clock(),
            &mut Warnings::default(),
        )
        .unwrap_err();
        assert!(matches!(error, StateError::Locked { .. }), "{error}");
        assert!(!super::super::lock_path(&a).exists());
        drop(held);
    }

    #[test]
    fn a_location_without_a_folder_is_left_out() {
        let dir = tempfile::tempdir().expect("dir");
        let a = dir.path().join("a.state");
        let missing = dir.path().join("missing").join("b.state");
        let mut warnings = Warnings::default();
        let locations = Locations::lock(
            &[missing.clone(), a.clone()],
            "deploy",
            &clock(),
            &mut warnings,
        )
        .expect("lock");
        assert_eq!(locations.paths(), std::slice::from_ref(&a));
        assert_eq!(locations.first(), a);
        let warning = warnings.iter().next().expect("warning");
        assert!(warning.message.contains("left out"), "{warning}");
        drop(locations);
        let error = Locations::lock(
            &[missing.clone(), dir.path().join("gone").join("c.state")],
            "deploy",
            &clock(),
            &mut Warnings::default(),
        )
        .unwrap_err();
        assert!(
            matches!(&error, StateError::LockFile { lock, .. } if lock.starts_with(dir.path().join("missing"))),
            "{error}"
        );
    }

    #[test]
    fn malformed_remote_locations_are_refused() {
        let error = Locations::lock(
            &[PathBuf::from("a.state"), PathBuf::from("s3://bucket-only")],
            "deploy",
            &clock(),
            &mut Warnings::default(),
        )
        .unwrap_err();
        assert!(
            matches!(error, StateError::RemoteLocation { .. }),
            "{error}"
        );
    }

    #[test]
    fn the_newest_file_is_read() {
        let dir = tempfile::tempdir().expect("dir");
        let (a, b) = (dir.path().join("a.state"), dir.path().join("b.state"));
        let locations = Locations::lock(
            &[a.clone(), b.clone()],
            "deploy",
            &clock(),
            &mut Warnings::default(),
        )
        .expect("lock");
        assert_eq!(locations.to_read(), None);
        std::fs::write(&b, "version: 1\nkind: state\n").expect("b");
        assert_eq!(locations.to_read(), Some(b.as_path()));
        std::fs::write(&a, "version: 1\nkind: state\nstatus: deployed\n").expect("a");
        let old = SystemTime::now() - Duration::from_secs(60);
        std::fs::File::options()
            .write(true)
            .open(&a)
            .and_then(|f| f.set_modified(old))
            .expect("age a");
        assert_eq!(locations.to_read(), Some(b.as_path()));
        std::fs::File::options()
            .write(true)
            .open(&a)
            .and_then(|f| f.set_modified(SystemTime::now()))
            .expect("touch a");
        assert_eq!(locations.to_read(), Some(a.as_path()), "larger, same time");
    }
}
