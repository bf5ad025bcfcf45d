//! The state journal: checkpoints whose cost does not depend on the size of
//! the stack.
//!
//! Rewriting the whole state file after every component makes a run cost
//! the square of the stack's size. A run that holds the lock instead
//! appends what each checkpoint changed to a journal beside the state, and
//! now and then folds the journal into the state file.
//!
//! # Files
//!
//! * `STATE` — the folded state: complete, written as before (temporary
//!   file, `fsync`, atomic swap with a backup, `fsync` of the folder), in
//!   the layout asked for (`--state-format`). On its own it is always a
//!   complete, parseable state as of its last fold.
//! * `STATE.journal` — created (mode 0600) by the run holding the lock at
//!   its first checkpoint after a fold. Its first line is
//!   `hub-journal 1 base=<serial of STATE> op=<operation id>`; then one
//!   line per checkpoint: `<byte length> <sha256 prefix> <record>`, the
//!   prefix being the first 16 hexadecimal digits of the SHA-256 of the
//!   record's bytes.
//!
//! The file is longer than its records: the writer fills it with zeros
//! ahead of them, [`ZEROS_AHEAD`] bytes at a time, and writes each record
//! over the zeros. A record then changes the file's content but not its
//! size, so flushing it writes the data alone, not the file system's
//! metadata (about half the time of flushing an append on ext4). The
//! records end at the first zero byte: a record never holds one (JSON
//! escapes it).
//!
//! # Records
//!
//! A record is a state document on one line (JSON, which YAML readers read
//! as well), holding only what changed since the previous record:
//!
//! * `serial` (one more than the previous record's), and the stack's
//!   `timestamp`, `status` and `message`;
//! * `components`: the changed entries, written in the linear layout (a
//!   snapshot as its difference against the entry named in
//!   `capturedOutputsBase`, as that entry stands just before this one is
//!   applied), or `null` for an entry that was removed;
//! * `operations`: the run's operation, without its phases but the phases
//!   of the changed components, and without its `logs`: a run only appends
//!   to them, so `logsAppended` holds the text appended since the previous
//!   record (a record without `logsAppended` holds the operation's whole
//!   `logs`, as format 1 did);
//! * `provides` and `stackOutputs` when they changed.
//!
//! A record holding `kind: state` is a whole state (the last checkpoint of
//! a run, written just before a remote fold): it replaces everything
//! before it. Local journals do not get one any more but are read with it.
//!
//! # Durability
//!
//! The writer flushes the journal (`fdatasync`) after every record that
//! starts a component (an entry entering `deploying` or `undeploying`),
//! and the folder after creating the journal: a component starts only
//! once its `deploying` record is on disk, as it did when the whole file
//! was rewritten. A parallel run's starts are flushed by the threads that
//! start the components ([`crate::Flush`]), so that the run's
//! thread does not wait for the disk. A record of a component's end is
//! flushed with the next
//! start's (one flush covers every record before it) or by the next fold:
//! a power failure in between can lose it, and the component is then
//! recorded as `deploying` and deployed again; a killed process loses
//! nothing it wrote. Since every flush covers all the bytes before it, a
//! zero byte among the records (a power failure kept a later page of
//! unflushed records but not an earlier one) marks where the flushed
//! records end: what follows it was never flushed and is not read.
//!
//! # Folding
//!
//! Readers apply the records in order on top of `STATE`:
//!
//! * a cut or damaged last record (a run killed while appending it) never
//!   completed: it is dropped;
//! * a damaged record followed by good ones means the journal itself is
//!   damaged: an error naming the file and the record;
//! * a journal whose `base` is not `STATE`'s serial is stale (a fold
//!   finished but the journal's removal did not): it is ignored, and the
//!   next run holding the lock removes it.
//!
//! A run folds at its end, when more than [`FOLD_AFTER`] passed since the
//! last fold (or [`FOLD_SHARE`] times what the next fold should take, if
//! longer), when the journal grows larger than `STATE` (and than
//! [`FOLD_MIN_JOURNAL`]) once [`FOLD_SHARE`] times what the next fold
//! should take passed since the last, and at its first
//! write (right after it took the lock), which folds what a killed run
//! left. A fold that follows records writes `STATE.backup` as the state
//! so folded and `STATE` as the next serial with the same content, removes
//! the journal and flushes the folder. When the state holds a change no
//! record holds (the run's end, or its first write after a killed run):
//!
//! * a local location is not sent a record of it: both files are written
//!   and flushed under temporary names, then `STATE` (a serial above every
//!   record) is renamed into place, which makes the journal stale at that
//!   instant, the folder flushed, and only then `STATE.backup` renamed
//!   (the records were read into the state at the start: nothing in the
//!   journal is lost). A reader gets the file with its records until the
//!   first rename, the new state from then on; the backup is the one
//!   before until the second rename (as in a plain write), never newer
//!   than what a reader gets. A whole-state record would hold the state a
//!   second time, as large as the file (1.2 GB of peak at 10,000
//!   components, with the parse that used to find the file's serial);
//! * a remote location is first appended the change as a whole-state
//!   record, then `KEY.backup` and `KEY` are written.
//!
//! Either way, after the fold `STATE.backup` is the state just before it
//! (one serial behind `STATE`), and at every instant `STATE` with its
//! journal is a complete state, the one before the fold or the one after.
//! A fold without records is the plain atomic write, the old `STATE`
//! becoming the backup.
//!
//! # Several locations
//!
//! With `-s a,b` every location gets its own journal with the same
//! records, and every fold writes every location; the location read is the
//! one whose state or journal changed last (see [`super::locations`]).

use super::layout::resolve_snapshots;
use super::model::{ComponentState, Operation, Phase, StackOutput, State};
use super::snapshot::{Delta, Snapshot};
pub use super::store::journal_path;
use super::StateError;
use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The longest a run goes without folding its journal, while folds are
/// quick.
pub const FOLD_AFTER: Duration = Duration::from_secs(5);

/// A fold rewrites the whole state, so its cost grows with the stack: the
/// next one waits at least this many times as long as it should take (the
/// last one's time, grown in proportion to the folded file and its
/// journal), for its age or for the journal's size, which keeps folding
/// under a twentieth of a long run whatever the size.
pub const FOLD_SHARE: u32 = 20;

/// A local journal is not folded for its size before it reaches this
/// many bytes (a reader replays it in a few milliseconds): a small
/// state's run would otherwise fold every few components.
pub const FOLD_MIN_JOURNAL: u64 = 256 * 1024;

/// The writer fills the journal with this many zero bytes beyond its
/// records whenever a record reaches the end of the zeros written before.
pub const ZEROS_AHEAD: u64 = 64 * 1024;

/// How many entries back in `lifecycle.order` a record looks for the base
/// of a snapshot; past that the snapshot is written whole.
const BASE_SEARCH: usize = 64;

const MAGIC: &str = "hub-journal";
/// The format written; format 1 (every record with the operation's whole
/// `logs`, no zeros after the records) is read as well.
const FORMAT: &str = "2";
const FORMATS_READ: [&str; 2] = ["1", "2"];
/// Hexadecimal digits of the SHA-256 kept in a record's line.
const HASH_DIGITS: usize = 16;

/// One checkpoint: a partial state, or a whole one (`kind` set).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct Record {
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kind: Option<String>,
    serial: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    lineage: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    /// The stack's head, which records of the whole state set.
    #[serde(flatten)]
    stack: StackHead,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack_outputs: Option<Vec<StackOutput>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    provides: Option<IndexMap<String, Vec<String>>>,
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    components: IndexMap<String, Option<ComponentState>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    operations: Vec<Operation>,
    /// Appended to the `logs` of the operation in `operations`, whose own
    /// `logs` is then empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    logs_appended: Option<String>,
}

/// The stack-level parts of a whole-state record, written among the
/// record's own fields (flattened: the same JSON, key for key).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub(super) struct StackHead {
    #[serde(skip_serializing_if = "Option::is_none")]
    meta: Option<super::StackMeta>,
    #[serde(skip_serializing_if = "Option::is_none")]
    lifecycle: Option<super::StateLifecycle>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stack_parameters: Option<Vec<super::StateParameter>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    captured_outputs: Option<Vec<super::CapturedOutput>>,
}

impl Record {
    pub fn serial(&self) -> u64 {
        self.serial
    }

    /// The record starts a component's run (an entry enters `deploying` or
    /// `undeploying`): it must be on disk before the component starts.
    pub fn starts_a_component(&self) -> bool {
        self.components
            .values()
            .flatten()
            .any(|entry| matches!(entry.status.as_str(), "deploying" | "undeploying"))
    }
}

/// The journal's first line.
pub(super) fn header(base: u64, operation: &str) -> String {
    let operation: String = operation
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    format!("{MAGIC} {FORMAT} base={base} op={operation}\n")
}

/// A record's line: `<byte length> <sha256 prefix> <record>\n`.
pub(super) fn encode(record: &Record) -> Result<String, StateError> {
    encode_value(record)
}

/// The line of anything that serializes as a record. The JSON is written
/// once, after room for the line's start, which is then filled in: a
/// record of the whole state is as large as the state, and is not copied.
fn encode_value(record: &impl Serialize) -> Result<String, StateError> {
    // The length (at most 20 digits), a space, the digest, a space.
    const ROOM: usize = 20 + 1 + HASH_DIGITS + 1;
    let mut line = vec![b' '; ROOM];
    serde_json::to_writer(&mut line, record).map_err(|e| StateError::Write {
        path: PathBuf::new(),
        action: "encode a journal record",
        source: std::io::Error::other(e),
    })?;
    let json = &line[ROOM..];
    let head = format!("{} {} ", json.len(), digest(json));
    let start = ROOM - head.len();
    line[start..ROOM].copy_from_slice(head.as_bytes());
    line.drain(..start);
    line.push(b'\n');
    String::from_utf8(line).map_err(|e| StateError::Write {
        path: PathBuf::new(),
        action: "encode a journal record",
        source: std::io::Error::other(e),
    })
}

fn digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut text = String::with_capacity(HASH_DIGITS);
    for byte in hash.iter().take(HASH_DIGITS / 2) {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

/// A record's line decoded; `None` when it is cut or damaged.
pub(super) fn decode(line: &str) -> Option<Record> {
    let (length, rest) = line.split_once(' ')?;
    let (hash, json) = rest.split_once(' ')?;
    if length.parse::<usize>().ok()? != json.len() || digest(json.as_bytes()) != hash {
        return None;
    }
    serde_json::from_str(json).ok()
}

/// A journal as found on disk.
#[derive(Debug, Default)]
pub(super) struct Scanned {
    /// The serial of the state the records apply to.
    pub base: u64,
    /// The complete records, in order.
    pub records: Vec<Record>,
    /// Bytes of the header and the complete records: what follows is a cut
    /// record, zeros written ahead, or nothing.
    pub valid_length: u64,
    /// The file holds more than `valid_length` bytes.
    pub cut: bool,
}

impl Scanned {
    /// The serial of the last complete record (the base without one).
    pub fn last_serial(&self) -> u64 {
        self.records.last().map_or(self.base, |r| r.serial)
    }
}

/// Reads the journal at `path`: `Ok(None)` when there is none (or only a
/// cut header, which a killed run left before its first record).
pub(super) fn scan(path: &Path) -> Result<Option<Scanned>, StateError> {
    // A journal planted beside the state would be applied to it.
    super::beside::check_file(path).map_err(|source| StateError::Beside {
        path: path.to_path_buf(),
        source,
    })?;
    let Some(bytes) = super::store::read_bytes(path, None)? else {
        return Ok(None);
    };
    let damaged = |record: usize, reason: &str| StateError::Journal {
        path: path.to_path_buf(),
        record,
        reason: reason.to_string(),
    };
    let records_end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    let text = String::from_utf8_lossy(&bytes[..records_end]);
    let mut lines = text.split_inclusive('\n');
    let Some(first) = lines.next().filter(|line| line.ends_with('\n')) else {
        return Ok(None);
    };
    let base = parse_header(first.trim_end()).ok_or_else(|| {
        damaged(
            0,
            "its first line is not `hub-journal 1 base=<serial> op=<id>`",
        )
    })?;
    let mut scanned = Scanned {
        base,
        valid_length: first.len() as u64,
        ..Scanned::default()
    };
    let mut previous = base;
    let mut bad: Option<(usize, &'static str)> = None;
    for (index, line) in lines.enumerate() {
        let number = index + 1;
        let record = line
            .strip_suffix('\n')
            .and_then(decode)
            .ok_or("it is cut or its checksum does not match")
            .and_then(|record| match record.serial > previous {
                true => Ok(record),
                false => Err("its serial does not follow the previous record's"),
            });
        match (record, bad) {
            (Ok(_), Some((first_bad, reason))) => {
                return Err(damaged(
                    first_bad,
                    &format!("{reason}, and complete records follow it"),
                ))
            }
            (Ok(record), None) => {
                previous = record.serial;
                scanned.valid_length += line.len() as u64;
                scanned.records.push(record);
            }
            (Err(reason), None) => bad = Some((number, reason)),
            (Err(_), Some(_)) => {}
        }
    }
    scanned.cut = scanned.valid_length < bytes.len() as u64;
    Ok(Some(scanned))
}

fn parse_header(line: &str) -> Option<u64> {
    let mut words = line.split(' ');
    if words.next()? != MAGIC || !FORMATS_READ.contains(&words.next()?) {
        return None;
    }
    words.next()?.strip_prefix("base=")?.parse().ok()
}

/// `state` (as read from `path`) with the records of its journal applied;
/// a missing or stale journal changes nothing.
pub(super) fn fold_into(path: &Path, state: &mut State) -> Result<(), StateError> {
    let journal = journal_path(path);
    let Some(scanned) = scan(&journal)? else {
        return Ok(());
    };
    if scanned.base != state.serial {
        return Ok(());
    }
    for (index, record) in scanned.records.into_iter().enumerate() {
        apply(state, record).map_err(|reason| StateError::Journal {
            path: journal.clone(),
            record: index + 1,
            reason,
        })?;
    }
    Ok(())
}

/// Applies one record on top of `state`.
pub(super) fn apply(state: &mut State, record: Record) -> Result<(), String> {
    if record.kind.is_some() {
        return replace_whole(state, record);
    }
    state.serial = record.serial;
    if let Some(lineage) = record.lineage {
        state.lineage = lineage;
    }
    if let Some(timestamp) = record.timestamp {
        state.timestamp = timestamp;
    }
    if let Some(status) = record.status {
        state.status = status.into();
    }
    if let Some(message) = record.message {
        state.message = message;
    }
    if let Some(provides) = record.provides {
        state.provides = provides;
    }
    if let Some(outputs) = record.stack_outputs {
        state.stack_outputs = outputs;
    }
    if let Some(outputs) = record.stack.captured_outputs {
        state.captured_outputs = outputs;
    }
    for (name, entry) in record.components {
        match entry {
            None => {
                state.components.shift_remove(&name);
            }
            Some(mut entry) => {
                entry.captured_outputs = resolved_snapshot(state, &name, &mut entry)?;
                state.components.insert(name, entry);
            }
        }
    }
    for operation in record.operations {
        apply_operation(state, operation, record.logs_appended.as_deref());
    }
    Ok(())
}

fn replace_whole(state: &mut State, record: Record) -> Result<(), String> {
    let mut whole = State {
        version: record.version.unwrap_or(1),
        kind: record.kind.unwrap_or_default(),
        serial: record.serial,
        lineage: record.lineage.unwrap_or_default(),
        timestamp: record.timestamp.unwrap_or_default(),
        status: record.status.unwrap_or_default().into(),
        message: record.message.unwrap_or_default(),
        meta: record.stack.meta.unwrap_or_default(),
        lifecycle: record.stack.lifecycle.unwrap_or_default(),
        stack_parameters: record.stack.stack_parameters.unwrap_or_default(),
        captured_outputs: record.stack.captured_outputs.unwrap_or_default(),
        stack_outputs: record.stack_outputs.unwrap_or_default(),
        provides: record.provides.unwrap_or_default(),
        components: record
            .components
            .into_iter()
            .filter_map(|(name, entry)| entry.map(|entry| (name, entry)))
            .collect(),
        operations: record.operations,
    };
    if whole.kind != "state" || whole.version != 1 {
        return Err("a whole-state record is not `kind: state`, `version: 1`".into());
    }
    resolve_snapshots(Path::new("journal"), &mut whole).map_err(|e| e.to_string())?;
    *state = whole;
    Ok(())
}

/// The snapshot of an entry read from a record: whole, or its base's as it
/// stands now changed by the record's lists.
fn resolved_snapshot(
    state: &State,
    name: &str,
    entry: &mut ComponentState,
) -> Result<Snapshot, String> {
    let base = std::mem::take(&mut entry.captured_outputs_base);
    let removed = std::mem::take(&mut entry.captured_outputs_removed);
    let read = std::mem::take(&mut entry.captured_outputs).to_vec();
    if base.is_empty() {
        return Ok(Snapshot::from_outputs(read));
    }
    let Some(base_entry) = state.components.get(&base) else {
        return Err(format!(
            "the snapshot of `{name}` is written against `{base}`, which has no entry"
        ));
    };
    Ok(Snapshot::apply(
        &base_entry.captured_outputs,
        Delta { set: read, removed },
    ))
}

/// The operation with the same id (the last one) takes the record's head
/// and phases, and keeps its logs followed by `appended` when there is
/// that; an operation not found is appended.
fn apply_operation(state: &mut State, mut operation: Operation, appended: Option<&str>) {
    let Some(existing) = state
        .operations
        .iter_mut()
        .rev()
        .find(|o| o.id == operation.id)
    else {
        if let Some(appended) = appended {
            operation.logs.push_str(appended);
        }
        state.operations.push(operation);
        return;
    };
    let phases = std::mem::take(&mut operation.phases);
    let kept = std::mem::take(&mut existing.phases);
    if let Some(appended) = appended {
        let mut logs = std::mem::take(&mut existing.logs);
        logs.push_str(appended);
        operation.logs = logs;
    }
    *existing = operation;
    existing.phases = kept;
    for phase in phases {
        match existing
            .phases
            .iter_mut()
            .rev()
            .find(|p| p.phase == phase.phase)
        {
            Some(found) => *found = phase,
            None => existing.phases.push(phase),
        }
    }
}

/// Builds the records of a writer: what changed since the previous record
/// or fold, found without looking at the entries that did not change.
#[derive(Default)]
pub(super) struct Recorder {
    /// Positions in `lifecycle.order`.
    positions: HashMap<String, usize>,
    /// The names of the entries as of the last record.
    names: HashSet<String>,
    provides: IndexMap<String, Vec<String>>,
    stack_outputs: Vec<StackOutput>,
    /// Positions of the last operation's phases, by component (checked
    /// before use: phases may be reordered).
    phases: HashMap<String, usize>,
    /// The last operation recorded and the length of its logs then.
    logs: Option<(String, usize)>,
    /// Debug builds: those logs, to check that they were only appended to.
    #[cfg(debug_assertions)]
    logs_written: String,
    /// Debug builds: what a checkpoint promises not to change.
    #[cfg(debug_assertions)]
    fixed: Option<Box<State>>,
}

impl Recorder {
    /// Starts from `state`, as folded or recorded whole.
    pub fn reset(&mut self, state: &State) {
        self.positions = state
            .lifecycle
            .order
            .iter()
            .enumerate()
            .map(|(i, name)| (name.clone(), i))
            .collect();
        self.names = state.components.keys().cloned().collect();
        self.provides = state.provides.clone();
        self.stack_outputs = state.stack_outputs.clone();
        self.phases.clear();
        self.logs = state
            .operations
            .last()
            .map(|operation| (operation.id.clone(), operation.logs.len()));
        #[cfg(debug_assertions)]
        {
            self.logs_written = state
                .operations
                .last()
                .map(|operation| operation.logs.clone())
                .unwrap_or_default();
        }
        #[cfg(debug_assertions)]
        {
            // Without the entries, which are not copied (a debug run's
            // memory stays close to a release run's).
            self.fixed = Some(Box::new(State {
                meta: state.meta.clone(),
                lifecycle: state.lifecycle.clone(),
                stack_parameters: state.stack_parameters.clone(),
                captured_outputs: state.captured_outputs.clone(),
                operations: state.operations[..state.operations.len().saturating_sub(1)].to_vec(),
                ..State::default()
            }));
        }
    }

    /// The record of a checkpoint that changed the entries of `changed`
    /// only (besides the stack's head, provides, stack outputs and the last
    /// operation); removed entries are found as well.
    pub fn checkpoint(&mut self, state: &State, serial: u64, changed: &[&str]) -> Record {
        #[cfg(debug_assertions)]
        self.check_promise(state);
        let mut record = Record {
            serial,
            timestamp: Some(state.timestamp.clone()),
            status: Some(state.status.to_string()),
            message: Some(state.message.clone()),
            ..Record::default()
        };
        if state.provides != self.provides {
            self.provides = state.provides.clone();
            record.provides = Some(self.provides.clone());
        }
        if state.stack_outputs != self.stack_outputs {
            self.stack_outputs = state.stack_outputs.clone();
            record.stack_outputs = Some(self.stack_outputs.clone());
        }
        let mut names: Vec<&str> = changed.to_vec();
        names.sort_by_key(|name| self.positions.get(*name).copied().unwrap_or(usize::MAX));
        names.dedup();
        for name in names {
            match state.components.get(name) {
                Some(entry) => {
                    self.names.insert(name.to_string());
                    let written = self.as_written(state, name, entry);
                    record.components.insert(name.to_string(), Some(written));
                }
                None => {
                    if self.names.remove(name) {
                        record.components.insert(name.to_string(), None);
                    }
                }
            }
        }
        if self.names.len() != state.components.len() {
            let gone: Vec<String> = self
                .names
                .iter()
                .filter(|name| !state.components.contains_key(*name))
                .cloned()
                .collect();
            for name in gone {
                self.names.remove(&name);
                record.components.insert(name, None);
            }
        }
        if let Some(operation) = state.operations.last() {
            let (head, appended) = self.operation(operation, changed);
            record.operations.push(head);
            record.logs_appended = appended;
        }
        record
    }

    /// The entry as a record holds it: its snapshot as the difference
    /// against the nearest earlier non-empty one in the order.
    fn as_written(&self, state: &State, name: &str, entry: &ComponentState) -> ComponentState {
        let mut written = entry.clone();
        if entry.captured_outputs.is_empty() {
            return written;
        }
        let Some(base) = self.base_of(state, name) else {
            return written;
        };
        let delta = entry
            .captured_outputs
            .delta_from(&state.components[base].captured_outputs);
        written.captured_outputs = Snapshot::from_outputs(delta.set);
        written.captured_outputs_base = base.to_string();
        written.captured_outputs_removed = delta.removed;
        written
    }

    fn base_of<'s>(&self, state: &'s State, name: &str) -> Option<&'s str> {
        let at = *self.positions.get(name)?;
        state.lifecycle.order[..at]
            .iter()
            .rev()
            .take(BASE_SEARCH)
            .find(|earlier| {
                state
                    .components
                    .get(*earlier)
                    .is_some_and(|e| !e.captured_outputs.is_empty())
            })
            .map(String::as_str)
    }

    /// The operation's head and the phases of `changed`; with the text
    /// appended to its logs since the previous record when it is the same
    /// operation (the head's logs are then left out).
    fn operation(
        &mut self,
        operation: &Operation,
        changed: &[&str],
    ) -> (Operation, Option<String>) {
        let mut head = operation.clone_head();
        for name in changed {
            if let Some(phase) = self.phase(operation, name) {
                head.phases.push(phase.clone());
            }
        }
        let appended = self.logs_appended(operation);
        if appended.is_none() {
            head.logs = operation.logs.clone();
        }
        (head, appended)
    }

    /// What `operation` appended to its logs since the previous record, or
    /// `None` when that record was of another operation. A run only ever
    /// appends to its operation's logs (debug builds check it).
    fn logs_appended(&mut self, operation: &Operation) -> Option<String> {
        let previous = self
            .logs
            .replace((operation.id.clone(), operation.logs.len()));
        #[cfg(debug_assertions)]
        let before = std::mem::replace(&mut self.logs_written, operation.logs.clone());
        let (id, length) = previous?;
        if id != operation.id || !operation.logs.is_char_boundary(length) {
            return None;
        }
        #[cfg(debug_assertions)]
        assert!(
            operation.logs.starts_with(&before),
            "a checkpoint changed the operation's logs other than by appending to them"
        );
        Some(operation.logs[length..].to_string())
    }

    /// The phase of `name`: where it was last found, else searched for
    /// (phases move when a parallel run puts them in the plan's order).
    fn phase<'o>(&mut self, operation: &'o Operation, name: &str) -> Option<&'o Phase> {
        let cached = self.phases.get(name).copied();
        if let Some(phase) = cached.and_then(|at| operation.phases.get(at)) {
            if phase.phase == name {
                return Some(phase);
            }
        }
        let at = operation.phases.iter().rposition(|p| p.phase == name)?;
        self.phases.insert(name.to_string(), at);
        operation.phases.get(at)
    }

    #[cfg(debug_assertions)]
    fn check_promise(&self, state: &State) {
        let Some(fixed) = &self.fixed else {
            return;
        };
        let before = state.operations.len().saturating_sub(1);
        assert!(
            fixed.meta == state.meta
                && fixed.lifecycle == state.lifecycle
                && fixed.stack_parameters == state.stack_parameters
                && fixed.captured_outputs == state.captured_outputs
                && fixed.operations[..] == state.operations[..before],
            "a checkpoint changed more than its components, the head, provides, stack outputs and the last operation"
        );
    }
}

impl Operation {
    /// The operation without its phases and logs.
    fn clone_head(&self) -> Operation {
        Operation {
            id: self.id.clone(),
            operation: self.operation.clone(),
            timestamp: self.timestamp.clone(),
            status: self.status.clone(),
            options: self.options.clone(),
            description: self.description.clone(),
            initiator: self.initiator.clone(),
            logs: String::new(),
            phases: Vec::new(),
        }
    }
}

mod whole;
pub(crate) use whole::encode_whole;
#[cfg(test)]
pub(crate) use whole::whole;

#[cfg(test)]
mod tests;
