//! The records of starts, written by the run's thread and flushed by the
//! threads that start the components (see [`super::flush`]).

use super::flush::{unflushable, Flush};
use super::*;
use crate::journal;
use crate::model::State;
use hub_manifest::diag::Warnings;
use std::path::{Path, PathBuf};

/// A state larger than a few records (so that they do not fold).
fn padded() -> State {
    State {
        version: 1,
        kind: "state".into(),
        status: "deploying".into(),
        timestamp: "2026-01-01T00:00:00Z".into(),
        stack_parameters: vec![crate::StateParameter::new(
            "padding",
            yaml_serde::Value::String("p".repeat(4000)),
        )],
        ..State::default()
    }
}

fn read_ok(path: &Path) -> State {
    read(path, &mut Warnings::default())
        .expect("read")
        .expect("exists")
}

fn starting(state: &mut State, names: &[&str]) -> Vec<String> {
    for name in names {
        state.component_mut(name).status = "deploying".into();
    }
    names.iter().map(|name| name.to_string()).collect()
}

/// A writer of a state at `s` in a new folder, not written yet.
fn opened() -> (tempfile::TempDir, PathBuf, StateWriter, State) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    (dir, path, writer, padded())
}

#[test]
fn a_start_is_in_the_journal_when_written_and_flushed_by_its_waiter() {
    let (_dir, path, mut writer, mut state) = opened();
    // The first write folds: its state is on disk already.
    let first = writer.write_starts(&mut state, &[]).expect("first write");
    assert!(first.made(), "a fold leaves nothing to flush");
    let folded = std::fs::read(&path).expect("bytes");

    let names = starting(&mut state, &["a", "b"]);
    let flush = writer.write_starts(&mut state, &names).expect("starts");
    assert!(!flush.made(), "the run's thread does not flush");
    // Written before any component could start: a reader sees both.
    assert_eq!(read_ok(&path), state);
    assert_eq!(std::fs::read(&path).expect("bytes"), folded);
    assert!(journal::journal_path(&path).exists());

    let waiters = [flush.clone(), flush.clone()];
    std::thread::scope(|threads| {
        for waiter in &waiters {
            threads.spawn(|| waiter.wait().expect("flushed"));
        }
    });
    assert!(flush.made());
    // The next write finds nothing failed: a record, not a fold.
    let folds = writer.folds();
    state.component_mut("a").status = "deployed".into();
    writer.write_component(&mut state, "a").expect("end");
    assert_eq!(writer.folds(), folds);
    assert_eq!(read_ok(&path), state);
}

#[test]
fn a_failed_flush_makes_the_next_write_a_fold_and_is_reported() {
    let (_dir, path, mut writer, mut state) = opened();
    writer.write(&mut state).expect("first write");
    let names = starting(&mut state, &["a"]);
    let started = writer.write_starts(&mut state, &names).expect("starts");
    started.wait().expect("flushed");

    // A flush not yet made is not a failure.
    let pending = Flush::of(vec![unflushable()]);
    writer.given_flush(pending.clone());
    let folds = writer.folds();
    state.component_mut("a").status = "deployed".into();
    writer.write_component(&mut state, "a").expect("end");
    assert_eq!(writer.folds(), folds, "nothing known failed yet");

    // One location failed, another was flushed: the write after it folds
    // (the journal that failed may have lost records) and says why.
    let folder = tempfile::tempdir().expect("dir");
    let other = folder.path().join("j");
    let flushed = (
        other.clone(),
        std::sync::Arc::new(std::fs::File::create(&other).expect("file")),
    );
    let partial = Flush::of(vec![unflushable(), flushed]);
    writer.given_flush(partial.clone());
    partial.wait().expect("one location was flushed");
    assert!(pending.wait().is_err(), "no location was flushed");
    let names = starting(&mut state, &["b"]);
    let started = writer.write_starts(&mut state, &names).expect("starts");
    assert_eq!(writer.folds(), folds + 1, "a failed flush folds");
    assert!(started.made(), "a fold leaves nothing to flush");
    assert!(!journal::journal_path(&path).exists());
    assert_eq!(read_ok(&path), state);
    let failures: Vec<String> = writer
        .take_failures()
        .iter()
        .map(|e| e.to_string())
        .collect();
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(failures[0].contains("/dev/null"), "{failures:?}");
    assert!(failures[0].contains("flush the journal"), "{failures:?}");
}
