//! Start records flushed off the writer's thread ([`StateWriter::write_starts`],
//! [`StateWriter::take_flush`], [`StateWriter::flushed`]).

use super::fold_tests::state_of_a_and_b;
use super::*;
use crate::journal;
use crate::model::State;
use crate::StateError;
use hub_manifest::diag::Warnings;
use std::path::{Path, PathBuf};

/// A writer past its first fold, whose next records go to the journal;
/// the last fold pretended slow, so that no fold comes during a test.
fn opened(paths: &[PathBuf]) -> (StateWriter, State) {
    let mut writer = StateWriter::open_all(paths, WriteOptions::default(), None).expect("open");
    let mut state = state_of_a_and_b();
    writer.write(&mut state).expect("first write");
    writer.pretend_last_fold_took(std::time::Duration::from_secs(3600), 1);
    (writer, state)
}

/// [`opened`], then `a` and `b` start: the journal's first record
/// (flushed, as it creates the file), then one waiting for a flush.
fn both_started(paths: &[PathBuf]) -> (StateWriter, State) {
    let (mut writer, mut state) = opened(paths);
    start(&mut writer, &mut state, "a");
    start(&mut writer, &mut state, "b");
    (writer, state)
}

/// `name` starts: its checkpoint written without waiting for the disk.
fn start(writer: &mut StateWriter, state: &mut State, name: &str) {
    state.component_mut(name).status = "deploying".into();
    writer
        .write_starts(state, &[name.to_string()])
        .expect("start record");
}

fn status(path: &Path, name: &str) -> String {
    read(path, &mut Warnings::default())
        .expect("read")
        .expect("exists")
        .components[name]
        .status
        .as_str()
        .to_string()
}

fn failed_at(index: usize) -> Flushed {
    let source = std::io::Error::other("the disk is gone");
    let path = PathBuf::from("journal");
    let action = "flush the journal";
    Flushed {
        failed: vec![(
            index,
            StateError::Write {
                path,
                action,
                source,
            },
        )],
    }
}

#[test]
fn a_start_is_written_at_once_and_flushed_by_the_handle() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let (mut writer, mut state) = opened(std::slice::from_ref(&path));
    // The journal's first record creates it, and is flushed at once with
    // the folder that names it.
    start(&mut writer, &mut state, "a");
    assert!(writer.take_flush().expect("take").is_none());
    // The next one waits for the handle; readers see it already.
    start(&mut writer, &mut state, "b");
    assert_eq!(status(&path, "b"), "deploying");
    let flush = writer.take_flush().expect("take").expect("a flush");
    assert_eq!(flush.journals.len(), 1);
    assert_eq!(flush.journals[0].1, journal::journal_path(&path));
    // Taken once: what follows needs a handle of its own.
    assert!(writer.take_flush().expect("take").is_none());
    writer.flushed(flush.run()).expect("flushed");
    assert!(writer.take_failures().is_empty());
    // An end record is not a start: it waits for the next flush too.
    state.component_mut("b").status = "deployed".into();
    writer.write_component(&mut state, "b").expect("end");
    assert!(writer.take_flush().expect("take").is_some());
}

#[test]
fn a_fold_makes_the_starts_before_it_durable() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let (mut writer, mut state) = both_started(std::slice::from_ref(&path));
    let folds = writer.folds();
    writer.write(&mut state).expect("fold");
    assert_eq!(writer.folds(), folds + 1);
    assert!(!journal::journal_path(&path).exists());
    assert!(writer.take_flush().expect("take").is_none());
    assert_eq!(status(&path, "b"), "deploying");
}

#[test]
fn a_failed_flush_fails_the_records_and_the_next_write_folds() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let (mut writer, mut state) = both_started(std::slice::from_ref(&path));
    let _ = writer.take_flush().expect("take").expect("a flush");
    let error = writer
        .flushed(failed_at(0))
        .expect_err("no location holds them");
    assert!(error.to_string().contains("flush the journal"), "{error}");
    // The disk may have dropped the records: the whole state is written.
    let folds = writer.folds();
    state.component_mut("b").status = "error".into();
    writer.write_component(&mut state, "b").expect("write");
    assert_eq!(writer.folds(), folds + 1);
    assert!(!journal::journal_path(&path).exists());
    assert_eq!(status(&path, "b"), "error");
}

#[test]
fn a_location_that_could_not_flush_is_a_failure_beside_one_that_did() {
    let dir = tempfile::tempdir().expect("dir");
    let paths = [dir.path().join("s"), dir.path().join("t")];
    let (mut writer, mut state) = both_started(&paths);
    let flush = writer.take_flush().expect("take").expect("a flush");
    assert_eq!(flush.journals.len(), 2);
    writer
        .flushed(failed_at(1))
        .expect("the first location holds them");
    let failures = writer.take_failures();
    assert_eq!(failures.len(), 1, "{failures:?}");
    // The next write folds both locations, which agree again.
    let folds = writer.folds();
    state.component_mut("b").status = "deployed".into();
    writer.write_component(&mut state, "b").expect("write");
    assert_eq!(writer.folds(), folds + 1);
    for path in &paths {
        assert_eq!(status(path, "b"), "deployed");
    }
}
