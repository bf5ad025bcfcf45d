//! The change registry beside a state: what each change (a pull request,
//! a merge request) planned and applied, and which change holds the
//! stack's apply lock.
//!
//! It lives beside the state, as the journal does: `STATE.changes/` for a
//! local state (a folder of the user's, files `0600`, never followed
//! through a link, see [`super::beside`]), `KEY.changes/` objects for a
//! remote one. Its documents are JSON:
//!
//! * `changes/FOLDER/000001.json`, `000002.json`, …: the records of one
//!   change, in order ([`Record`]: a plan, an apply, a merge, a close, an
//!   unlock, or a mark that its plans are stale); `FOLDER` is the change
//!   id, encoded ([`names`]). Each record is created only if absent
//!   (`O_EXCL`-like rename locally, `If-None-Match: *` remotely): two
//!   writers racing for one number cannot both win, the loser takes the
//!   next one. A registry written before change ids had their own
//!   namespace keeps `ID/000001.json` at its top: those records are still
//!   read (and numbered on from), never moved; new ones go under
//!   `changes/`.
//! * `apply-lock.json`: the [`ApplyLock`]. It is changed only by a
//!   conditional write: remotely `If-Match` on the revision read (ETag or
//!   generation, as the state's own writes); locally under the state's
//!   own lock ([`super::StateLock`]), with the content checked unchanged
//!   before the new one is renamed over it.
//! * `apply-waiting.json`: present while an apply of a change is about to
//!   run and runs; plans respect it as they respect the state's lock, so
//!   that an apply goes ahead of the plans waiting with it.

mod error;
mod field;
mod names;
mod rules;
mod store;
#[cfg(test)]
mod tests;

pub use error::ChangeError;
pub use field::Field;
pub use names::{check_author, check_id, check_id_from, check_sha, inert};
pub use rules::{approvals_in_effect, summarise, Summary};
pub use store::Revision;

use super::clock::Clock;
use super::lock::{liveness, Liveness, LockInfo};
use super::StateError;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use store::RecordStore;

/// How a plan or an apply ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    Succeeded,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Succeeded => "succeeded",
            Status::Failed => "failed",
        }
    }
}

/// Who and when, for every record.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    /// RFC 3339 (`HUB_NOW` pins it).
    pub time: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// The commit the change was at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
}

/// A plan made for a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanRecord {
    #[serde(flatten)]
    pub stamp: Stamp,
    pub status: Status,
    /// `deploy` or `undeploy`.
    pub verb: String,
    /// Why it failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The saved plan (the format of `hub plan --out`); `null` for a plan
    /// that failed, or an undeploy plan.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<serde_json::Value>,
    /// The state the plan read: lineage and serial.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lineage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serial: Option<u64>,
    /// The stack's files as `hub plan` was given them, for the commands
    /// hints print.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<String>,
    /// How the plan's author is associated with the repository, as the
    /// CI event said it (`hub ci`); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub association: Option<String>,
    /// The merge queue's or merge train's commit the plan was made at, for
    /// a plan `hub ci` made for the change's entry there (never the plan
    /// approved for the change, which the queue's plan is compared with).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
}

/// The stack's files as a shell command gives them: each quoted when it
/// holds anything but letters, digits and `-_./`, and shown inert.
pub fn shell_words(files: &[String]) -> String {
    let word = |text: &String| {
        let plain = !text.is_empty()
            && text
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c));
        match plain {
            true => text.clone(),
            false => format!("'{}'", inert(text).replace('\'', "'\\''")),
        }
    };
    files.iter().map(word).collect::<Vec<_>>().join(" ")
}

/// An apply of a change's plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyRecord {
    #[serde(flatten)]
    pub stamp: Stamp,
    pub status: Status,
    pub verb: String,
    /// The number of the plan record applied.
    pub plan: u64,
}

/// One record of a change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Record {
    Plan(PlanRecord),
    Apply(ApplyRecord),
    /// Its plans made before are stale: `reason` says why.
    Stale {
        #[serde(flatten)]
        stamp: Stamp,
        reason: String,
    },
    /// Merged into the default branch: its applies are there.
    Merged {
        #[serde(flatten)]
        stamp: Stamp,
    },
    /// Closed without merging.
    Closed {
        #[serde(flatten)]
        stamp: Stamp,
    },
    /// Its apply lock was released by `hub change unlock`.
    Unlocked {
        #[serde(flatten)]
        stamp: Stamp,
    },
    /// A review of the change: the stamp's author is the reviewer, its
    /// commit the one reviewed.
    Review(ReviewRecord),
}

/// What a review says of the commit it was made at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReviewState {
    /// Approved (GitHub `approved`, GitLab `approved`).
    Approved,
    /// Changes requested: the reviewer's approval no longer counts.
    ChangesRequested,
    /// The review was dismissed (GitHub), or the approval withdrawn
    /// (GitLab `unapproved`): the reviewer's approval no longer counts.
    Dismissed,
}

impl ReviewState {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewState::Approved => "approved",
            ReviewState::ChangesRequested => "changes requested",
            ReviewState::Dismissed => "dismissed",
        }
    }
}

/// A review recorded by `hub ci` from the CI event that reported it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRecord {
    /// The reviewer (`author`), the commit reviewed (`sha`), when hub
    /// recorded it.
    #[serde(flatten)]
    pub stamp: Stamp,
    pub state: ReviewState,
    /// The reviewer's association with the repository, as the event said
    /// it (`OWNER`, `MEMBER`, …); absent when it did not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub association: Option<String>,
    /// Who opened the change, as the event said it: their own approval
    /// never counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change_author: Option<String>,
    /// The CI event that reported it (`pull_request_review.submitted`, …).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event: Option<String>,
}

/// Why a change holds the apply lock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Held {
    /// An apply is running (or was killed while running).
    Applying,
    /// It applied: the stack holds its unmerged work.
    Applied,
    /// Its apply failed: only it may apply until it succeeds.
    Failed,
}

impl Held {
    /// Why, in a sentence's words.
    pub fn why(self) -> &'static str {
        match self {
            Held::Applying => "an apply of it is running, or was stopped while it ran",
            Held::Applied => "it applied, and its work is not merged yet",
            Held::Failed => "its apply failed, and only it may apply until it succeeds",
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Held::Applying => "applying",
            Held::Applied => "applied",
            Held::Failed => "failed",
        }
    }
}

/// The stack's apply lock: `apply-lock.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApplyLock {
    /// The change that holds it; `null` once released.
    pub change: Option<String>,
    /// Since when (RFC 3339).
    pub since: String,
    pub reason: Held,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<String>,
    /// While `applying`: the process that applies (pid, host, start
    /// time), so that a second apply of the same change is refused while
    /// it runs on this host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<LockInfo>,
}

/// The marker of an apply about to run (`apply-waiting.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Waiting {
    pub change: String,
    pub holder: LockInfo,
    /// Seconds since the epoch (the system's clock) after which a marker
    /// of a process on another host, which cannot be checked, no longer
    /// counts: the apply it marks has the state's lock by then, or gave up.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires: Option<u64>,
}

fn epoch_seconds() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How long past its wait for the state's lock an apply's marker counts.
const WAITING_GRACE: u64 = 60;

const APPLY_LOCK: &str = "apply-lock.json";
const WAITING: &str = "apply-waiting.json";
/// The folder of the changes' records.
const CHANGES: &str = "changes";

/// The registry of the state at a location.
pub struct Registry {
    store: Box<dyn RecordStore>,
    state: PathBuf,
    /// The stack's files the command was given, shell-quoted; empty
    /// when it was given none.
    stack: String,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// The registry beside `state` (local or remote); nothing is read or
    /// written yet.
    pub fn open(state: &Path) -> Result<Registry, ChangeError> {
        Ok(Registry {
            store: store::open(state)?,
            state: state.to_path_buf(),
            stack: String::new(),
        })
    }

    /// The stack's files the command was given, for the commands hints
    /// print.
    pub fn with_stack(mut self, files: &[String]) -> Registry {
        self.stack = shell_words(files);
        self
    }

    /// The stack's files, as the hints' commands give them: those the
    /// command was given, else those of `latest` (the change's latest
    /// plan), else `hub.yaml`.
    pub fn stack_for(&self, latest: Option<&PlanRecord>) -> String {
        if !self.stack.is_empty() {
            return self.stack.clone();
        }
        match latest.map(|plan| plan.stack.as_slice()) {
            Some(files) if !files.is_empty() => shell_words(files),
            _ => "hub.yaml".into(),
        }
    }

    /// The state it is beside, as given.
    pub fn state(&self) -> &Path {
        &self.state
    }

    /// Where it is, for messages: `STATE.changes`.
    pub fn location(&self) -> String {
        self.store.location()
    }

    /// Appends `record` to the records of `id`; returns its number.
    pub fn append(&self, id: &str, record: &Record) -> Result<u64, ChangeError> {
        check_id(id)?;
        let bytes = masked_json(serde_json::to_vec_pretty(record).map_err(ChangeError::encode)?);
        let mut number = self.names(id)?.iter().map(|(n, _)| *n).max().unwrap_or(0) + 1;
        loop {
            let name = record_name(id, number);
            if self.store.create(&name, &bytes)? {
                return Ok(number);
            }
            // Another writer took this number: the next one.
            number += 1;
        }
    }

    /// The numbers and document names of the records of (checked) `id`,
    /// in order: under `changes/`, and at the top where a registry of the
    /// earlier layout keeps them.
    fn names(&self, id: &str) -> Result<Vec<(u64, String)>, ChangeError> {
        let folder = changes_folder(id);
        let mut names: Vec<(u64, String)> = Vec::new();
        for name in self.store.list(&folder)? {
            if let Some(number) = record_number(&name) {
                names.push((number, format!("{folder}/{name}")));
            }
        }
        if let Some(legacy) = legacy_folder(id) {
            for name in self.store.list(legacy)? {
                if let Some(number) = record_number(&name) {
                    names.push((number, format!("{legacy}/{name}")));
                }
            }
        }
        names.sort_unstable();
        Ok(names)
    }

    /// The records of `id`, in order, with their numbers.
    pub fn records(&self, id: &str) -> Result<Vec<(u64, Record)>, ChangeError> {
        check_id(id)?;
        let names = self.names(id)?;
        let mut records = Vec::with_capacity(names.len());
        for (number, name) in names {
            let Some((bytes, _)) = self.store.read(&name)? else {
                continue;
            };
            let record = serde_json::from_slice(&bytes)
                .map_err(|e| ChangeError::corrupt(self.store.shown(&name), e))?;
            records.push((number, record));
        }
        Ok(records)
    }

    /// Where the records of `id` go, for messages.
    pub fn shown_record(&self, id: &str, number: u64) -> String {
        self.store.shown(&record_name(id, number))
    }

    /// Every change with records, sorted (numbers by value).
    pub fn changes(&self) -> Result<Vec<String>, ChangeError> {
        let mut ids: Vec<String> = self
            .store
            .folders(CHANGES)?
            .iter()
            .filter_map(|name| names::id_of_folder(name))
            .collect();
        for folder in self.store.folders("")? {
            let legacy = legacy_folder(&folder) == Some(folder.as_str());
            // `changes/` of an earlier registry is change `changes` when
            // it holds records itself.
            let records = folder != CHANGES
                || self
                    .store
                    .list(CHANGES)?
                    .iter()
                    .any(|n| record_number(n).is_some());
            if legacy && records {
                ids.push(folder);
            }
        }
        ids.sort_by(|a, b| match (a.parse::<u64>(), b.parse::<u64>()) {
            (Ok(x), Ok(y)) => x.cmp(&y),
            _ => a.cmp(b),
        });
        ids.dedup();
        Ok(ids)
    }

    /// The apply lock as it is, with its revision for [`Registry::set_lock`].
    pub fn apply_lock(&self) -> Result<(Option<ApplyLock>, Option<Revision>), ChangeError> {
        match self.store.read(APPLY_LOCK)? {
            None => Ok((None, None)),
            Some((bytes, revision)) => {
                let lock = serde_json::from_slice(&bytes)
                    .map_err(|e| ChangeError::corrupt(self.store.shown(APPLY_LOCK), e))?;
                Ok((Some(lock), Some(revision)))
            }
        }
    }

    /// The change holding the apply lock, if one does.
    pub fn holder(&self) -> Result<Option<ApplyLock>, ChangeError> {
        Ok(self.apply_lock()?.0.filter(|lock| lock.change.is_some()))
    }

    /// Replaces the apply lock with `lock` only if it is still the
    /// revision `seen` (`None`: only if there is none); `false` when
    /// another writer changed it since it was read.
    pub fn set_lock(
        &self,
        lock: &ApplyLock,
        seen: Option<&Revision>,
        clock: &Clock,
    ) -> Result<bool, ChangeError> {
        let bytes = masked_json(serde_json::to_vec_pretty(lock).map_err(ChangeError::encode)?);
        match seen {
            None => self.store.create(APPLY_LOCK, &bytes),
            Some(revision) => self.store.update(APPLY_LOCK, &bytes, revision, clock),
        }
    }

    /// Changes the apply lock with `change` (given the lock as read, or
    /// `None`), retrying when another writer got in between; `change`
    /// returns the new lock, or `Ok(None)` to leave it as it is.
    pub fn update_lock<T>(
        &self,
        clock: &Clock,
        mut change: impl FnMut(Option<&ApplyLock>) -> Result<(Option<ApplyLock>, T), ChangeError>,
    ) -> Result<T, ChangeError> {
        loop {
            let (lock, revision) = self.apply_lock()?;
            let (new, result) = change(lock.as_ref().filter(|l| l.change.is_some()))?;
            let Some(new) = new else {
                return Ok(result);
            };
            if self.set_lock(&new, revision.as_ref(), clock)? {
                return Ok(result);
            }
        }
    }

    /// Marks that an apply of `change` by `holder` (this process) is
    /// about to run, waiting at most `wait` for the state's lock (plans
    /// wait for it); removed by [`Registry::done_waiting`].
    pub fn mark_waiting(
        &self,
        change: &str,
        holder: &LockInfo,
        wait: std::time::Duration,
    ) -> Result<(), ChangeError> {
        let waiting = Waiting {
            change: change.to_string(),
            holder: holder.clone(),
            expires: Some(epoch_seconds() + wait.as_secs() + WAITING_GRACE),
        };
        let bytes = masked_json(serde_json::to_vec_pretty(&waiting).map_err(ChangeError::encode)?);
        self.store.overwrite(WAITING, &bytes)
    }

    /// Removes the marker of `holder`'s apply; a marker another apply
    /// wrote since is left to it.
    pub fn done_waiting(&self, holder: &LockInfo) -> Result<(), ChangeError> {
        let Some((bytes, _)) = self.store.read(WAITING)? else {
            return Ok(());
        };
        let ours = serde_json::from_slice::<Waiting>(&bytes)
            .map_or(true, |waiting| waiting.holder.id == holder.id);
        match ours {
            true => self.store.remove(WAITING),
            false => Ok(()),
        }
    }

    /// The apply about to run, when one is: its process, on this host, is
    /// alive; on another host, its marker has not expired.
    pub fn waiting(&self) -> Result<Option<Waiting>, ChangeError> {
        let Some((bytes, _)) = self.store.read(WAITING)? else {
            return Ok(None);
        };
        let waiting: Waiting =
            serde_json::from_slice(&bytes).map_err(|e| ChangeError::UnreadableWaiting {
                path: self.store.shown(WAITING),
                reason: e.to_string(),
            })?;
        let counts = match liveness(&waiting.holder) {
            Liveness::Alive => true,
            Liveness::Dead => false,
            Liveness::Elsewhere => waiting.expires.is_none_or(|t| t > epoch_seconds()),
        };
        Ok(counts.then_some(waiting))
    }

    /// For a plan: fails as a held state lock does (so that
    /// `--lock-timeout` waits for it) while an apply is about to run;
    /// [`Registry::waiting_refusal`] makes the error the plan reports.
    pub fn check_no_apply_waiting(&self) -> Result<(), ChangeError> {
        let Some(waiting) = self.waiting()? else {
            return Ok(());
        };
        let elsewhere = liveness(&waiting.holder) == Liveness::Elsewhere;
        let mut holder = waiting.holder;
        holder.operation = format!("apply of change {}", inert(&waiting.change));
        Err(ChangeError::State(StateError::Locked {
            state: self.state.clone(),
            lock: PathBuf::from(self.store.shown(WAITING)),
            holder: Box::new(holder),
            elsewhere,
            unlocking: false,
        }))
    }

    /// The refusal of a plan while an apply runs (`error`: what
    /// [`Registry::check_no_apply_waiting`] returned, maybe after a wait),
    /// with a hint that names the apply, not `hub unlock`.
    pub fn waiting_refusal(&self, error: StateError) -> ChangeError {
        let change = self.waiting().ok().flatten().map(|w| inert(&w.change));
        let held = match &error {
            StateError::LockTimeout { source, .. } => source.as_ref(),
            other => other,
        };
        let StateError::Locked { elsewhere, .. } = held else {
            return ChangeError::State(error);
        };
        ChangeError::ApplyWaiting {
            elsewhere: *elsewhere,
            error: Box::new(error),
            change: change.unwrap_or_else(|| "?".into()),
            path: self.store.shown(WAITING),
            state: self.state.display().to_string(),
        }
    }
}

/// `changes/FOLDER`: the folder of the records of (checked) `id`.
fn changes_folder(id: &str) -> String {
    format!("{CHANGES}/{}", names::folder_name(id))
}

/// The folder at the top where a registry of the earlier layout kept the
/// records of `id`; none for the names of the registry's own documents.
fn legacy_folder(id: &str) -> Option<&str> {
    (check_id(id).is_ok() && id != APPLY_LOCK && id != WAITING).then_some(id)
}

fn record_name(id: &str, number: u64) -> String {
    format!("{}/{number:06}.json", changes_folder(id))
}

fn record_number(name: &str) -> Option<u64> {
    let stem = name.strip_suffix(".json")?;
    (stem.len() >= 6 && stem.bytes().all(|b| b.is_ascii_digit()))
        .then(|| stem.parse().ok())
        .flatten()
}

/// A record as written: the runner's secrets masked
/// ([`hub_manifest::masked`]), as in everything hub writes.
fn masked_json(bytes: Vec<u8>) -> Vec<u8> {
    match hub_manifest::masked::bytes(&bytes) {
        std::borrow::Cow::Borrowed(_) => bytes,
        std::borrow::Cow::Owned(masked) => masked,
    }
}
