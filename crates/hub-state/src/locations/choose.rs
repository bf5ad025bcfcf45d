//! Choosing the state file to read among a run's locations: the newest,
//! or the largest of those written at about the same time.

use std::time::{Duration, SystemTime};

/// Files modified within this of the newest count as written together.
pub const SAME_TIME: Duration = Duration::from_secs(10);

/// What is known of an existing state file when choosing the one to read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub modified: SystemTime,
    pub size: u64,
}

/// The index of the file to read among the locations of a run, given what
/// is known of each (`None`: no file there). One file → it. Several → those
/// modified within [`SAME_TIME`] of the newest; one → it; else the largest
/// (the first given among equals). No file → `None`.
pub fn choose(candidates: &[Option<Candidate>]) -> Option<usize> {
    let existing = || {
        candidates
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.map(|c| (i, c)))
    };
    let newest = existing().map(|(_, c)| c.modified).max()?;
    let recent: Vec<(usize, Candidate)> = existing()
        .filter(|(_, c)| {
            newest
                .duration_since(c.modified)
                .is_ok_and(|age| age <= SAME_TIME)
        })
        .collect();
    recent
        .iter()
        .min_by_key(|(i, c)| (std::cmp::Reverse(c.size), *i))
        .map(|(i, _)| *i)
}
