//! A fold of a change no journal record holds (local stores): no record
//! of the whole state, and at every kill point a reader gets the state
//! before the fold or the one after it, never a backup newer than that.

use super::local::{FoldStep, STOP_AFTER};
use super::*;
use crate::journal;
use crate::model::State;
use hub_manifest::diag::Warnings;
use std::path::Path;

fn read_ok(path: &Path) -> State {
    read(path, &mut Warnings::default())
        .expect("read")
        .expect("exists")
}

fn file_alone(path: &Path) -> State {
    read_file(path, &mut Warnings::default())
        .expect("read")
        .expect("exists")
}

/// A state written once, then two checkpoints in the journal.
fn journaled(path: &Path) -> (StateWriter, State) {
    let mut writer = StateWriter::open(path, WriteOptions::default()).expect("open");
    let mut state = State {
        version: 1,
        kind: "state".into(),
        timestamp: "2026-01-01T00:00:00Z".into(),
        ..State::default()
    };
    state.lifecycle.order = vec!["a".into(), "b".into()];
    writer.write(&mut state).expect("first write");
    writer.write(&mut state).expect("a backup of the first");
    state.component_mut("a").status = "deploying".into();
    writer.write_component(&mut state, "a").expect("checkpoint");
    state.component_mut("a").status = "deployed".into();
    writer.write_component(&mut state, "a").expect("checkpoint");
    assert_eq!(journal_records(path), 2);
    (writer, state)
}

/// The journal's complete records; panics when one is a whole state.
fn journal_records(path: &Path) -> usize {
    let journal = journal::journal_path(path);
    let text = std::fs::read_to_string(&journal).unwrap_or_default();
    assert!(
        !text.contains("\"kind\":\"state\""),
        "a whole-state record in {text}"
    );
    journal::scan(&journal)
        .expect("scan")
        .map_or(0, |scanned| scanned.records.len())
}

/// The change a run's end makes, which no record holds.
fn end(state: &mut State) {
    state.status = "deployed".into();
    state.message = "done".into();
}

#[test]
fn a_fold_after_records_writes_no_whole_state_record() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let (mut writer, mut state) = journaled(&path);
    STOP_AFTER.with(|stop| stop.set(Some(FoldStep::Written)));
    end(&mut state);
    let stopped = writer.write(&mut state);
    STOP_AFTER.with(|stop| stop.set(None));
    assert!(stopped.is_err());
    assert_eq!(journal_records(&path), 2, "no record was appended");

    // The same fold, to its end: the files a fold with a record wrote.
    let (mut writer, mut state) = journaled(&dir.path().join("t"));
    end(&mut state);
    writer.write(&mut state).expect("fold");
    let t = dir.path().join("t");
    assert!(!journal::journal_path(&t).exists());
    let (file, backup) = (read_ok(&t), read_ok(&backup_path(&t)));
    // The records held serials 3 and 4; the fold's change takes 5 (the
    // backup) and 6 (the file), as a whole-state record of serial 5 did.
    assert_eq!((backup.serial, file.serial, state.serial), (5, 6, 6));
    assert_eq!(file, state);
    assert_eq!(
        backup,
        State {
            serial: 5,
            ..state.clone()
        }
    );
    // The two texts differ by their serial (and digest) only.
    let text = std::fs::read_to_string(&t).expect("text");
    let backup_text = std::fs::read_to_string(backup_path(&t)).expect("backup");
    let body = |text: &str| text[..text.rfind("# hub-state-end").expect("framed")].to_string();
    let mut moved = String::new();
    assert!(writer::with_serial(&body(&backup_text), 5, 6, &mut moved));
    assert_eq!(moved, body(&text));
    assert!(crate::integrity::check(&text).is_ok());
}

#[test]
fn a_fold_killed_at_every_step_leaves_the_state_before_or_after() {
    for step in [
        FoldStep::Written,
        FoldStep::Renamed,
        FoldStep::Flushed,
        FoldStep::BackedUp,
    ] {
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("s");
        let (mut writer, mut state) = journaled(&path);
        let before = read_ok(&path);
        let backup_before = std::fs::read(backup_path(&path)).expect("backup");
        assert_eq!(before, state);
        end(&mut state);
        STOP_AFTER.with(|stop| stop.set(Some(step)));
        let stopped = writer.write(&mut state);
        STOP_AFTER.with(|stop| stop.set(None));
        assert!(stopped.is_err(), "{step:?}");
        drop(writer);
        // A kill leaves the journal: with its records before the rename of
        // `STATE`, stale (ignored) after it.
        assert!(journal::journal_path(&path).exists(), "{step:?}");
        let now = read_ok(&path);
        let backup = read_ok(&backup_path(&path));
        let file = file_alone(&path);
        match step {
            // Nothing renamed: the file with its journal, as before.
            FoldStep::Written => {
                assert_eq!(now, before, "{step:?}");
                assert_eq!(journal_records(&path), 2, "{step:?}");
            }
            // `STATE` renamed: the new state, the journal stale.
            _ => {
                let after = State {
                    serial: 6,
                    ..state.clone()
                };
                assert_eq!(now, after, "{step:?}");
                assert_eq!(file, after, "{step:?}");
            }
        }
        // The backup is never newer than what a reader gets: the one
        // before until it is renamed, then the new state a serial earlier.
        match step {
            FoldStep::BackedUp => assert_eq!(
                backup,
                State {
                    serial: 5,
                    ..state.clone()
                },
                "{step:?}"
            ),
            _ => assert_eq!(
                std::fs::read(backup_path(&path)).expect("backup"),
                backup_before,
                "{step:?}"
            ),
        }
        assert!(backup.serial < now.serial, "{step:?}");
        assert!(file.serial <= now.serial, "{step:?}");

        // The next run reads what the kill left and folds it.
        let mut read_back = read_ok(&path);
        let mut next =
            StateWriter::resume(&path, WriteOptions::default(), read_back.serial).expect("open");
        read_back.message = "next".into();
        next.write(&mut read_back).expect("next run's write");
        assert!(!journal::journal_path(&path).exists(), "{step:?}");
        assert_eq!(read_ok(&path), read_back, "{step:?}");
        assert_eq!(
            read_ok(&backup_path(&path)).serial + 1,
            read_back.serial,
            "{step:?}"
        );
    }
}

#[test]
fn the_next_run_folds_a_killed_run_s_journal_without_a_record() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let (writer, state) = journaled(&path);
    drop(writer);
    let mut read_back = read_ok(&path);
    assert_eq!(read_back, state);
    let mut next =
        StateWriter::resume(&path, WriteOptions::default(), read_back.serial).expect("open");
    read_back.component_mut("b").status = "deploying".into();
    STOP_AFTER.with(|stop| stop.set(Some(FoldStep::Written)));
    let stopped = next.write_component(&mut read_back, "b");
    STOP_AFTER.with(|stop| stop.set(None));
    assert!(stopped.is_err());
    assert_eq!(journal_records(&path), 2, "the killed run's records only");
    assert_eq!(read_ok(&path), state);
    next.write_component(&mut read_back, "b")
        .expect("first write folds");
    assert!(!journal::journal_path(&path).exists());
    assert_eq!(read_ok(&path), read_back);
    let backup = read_ok(&backup_path(&path));
    assert_eq!(backup.serial + 1, read_back.serial);
}

/// The text a run writes for `state` with `serial`, rendered alone.
fn rendered_at(state: &State, serial: u64) -> Vec<u8> {
    let state = State {
        serial,
        ..state.clone()
    };
    let mut text = crate::render::Renderer::new(crate::StateFormat::default())
        .render(&state)
        .expect("render");
    crate::integrity::frame_in_place(&mut text);
    text.into_bytes()
}

/// After a fold that wrote `state` with its serial: `STATE` and
/// `STATE.backup` hold what two renders of it write, at its serial and
/// one earlier, both framed.
fn assert_two_renders(path: &Path, state: &State) {
    let text = std::fs::read(path).expect("state");
    let backup = std::fs::read(backup_path(path)).expect("backup");
    assert_eq!(
        String::from_utf8_lossy(&text),
        String::from_utf8_lossy(&rendered_at(state, state.serial))
    );
    assert_eq!(
        String::from_utf8_lossy(&backup),
        String::from_utf8_lossy(&rendered_at(state, state.serial - 1))
    );
    for written in [&text, &backup] {
        let written = std::str::from_utf8(written).expect("text");
        assert_eq!(crate::integrity::check(written), Ok(()));
    }
}

/// Each fold renders the state once, into its first file, and makes the
/// second from it: the bytes are those of two renders, when the serial
/// line lies in the first read of the file and when it lies past it.
#[test]
fn a_fold_writes_what_two_renders_write() {
    use super::writer::reframed::TEST_CHUNK;
    for chunk in [None, Some(1), Some(7), Some(64)] {
        TEST_CHUNK.with(|c| c.set(chunk));
        let dir = tempfile::tempdir().expect("dir");

        // Without a record of the change: the state, then the backup.
        let path = dir.path().join("s");
        let (mut writer, mut state) = journaled(&path);
        end(&mut state);
        writer.write(&mut state).expect("fold");
        assert!(!journal::journal_path(&path).exists(), "{chunk:?}");
        assert_two_renders(&path, &state);

        // After records (a journal that outgrew the file): the backup,
        // then the state.
        let path = dir.path().join("t");
        let (mut writer, mut state) = journaled(&path);
        writer.pretend_last_fold_took(std::time::Duration::ZERO, 0);
        let bulk = "b".repeat(journal::FOLD_MIN_JOURNAL as usize / 4);
        let mut round = 0;
        while journal::journal_path(&path).exists() {
            let name = format!("c{round}");
            state.component_mut(&name).status = "deployed".into();
            state.component_mut(&name).parameters = vec![crate::StateParameter::new(
                "bulk",
                yaml_serde::Value::String(bulk.clone()),
            )];
            writer
                .write_component(&mut state, &name)
                .expect("checkpoint");
            round += 1;
            assert!(round < 10, "no fold ({chunk:?})");
        }
        assert_two_renders(&path, &state);
    }
    TEST_CHUNK.with(|c| c.set(None));
}

/// The first file of a fold replaced by a link (to the same bytes)
/// between its write and its reading: the fold is refused, nothing read
/// through the link reaches `STATE`, and the state is as before the fold.
#[test]
fn a_link_planted_at_the_first_file_of_a_fold_is_not_read() {
    use super::files::BEFORE_DERIVE;
    fn plant(first: &Path) {
        let aside = first.with_extension("aside");
        std::fs::rename(first, &aside).expect("move the file aside");
        std::os::unix::fs::symlink(&aside, first).expect("plant a link");
    }
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let (mut writer, mut state) = journaled(&path);
    let before = std::fs::read(&path).expect("state");
    end(&mut state);
    BEFORE_DERIVE.with(|hook| hook.set(Some(plant)));
    let refused = writer.write(&mut state);
    BEFORE_DERIVE.with(|hook| hook.set(None));
    let error = refused.expect_err("a link is never read into the state");
    assert!(format!("{error:?}").contains("Link"), "{error:?}");
    assert_eq!(std::fs::read(&path).expect("state"), before);
    assert_eq!(journal_records(&path), 2, "the journal is kept");
    assert_eq!(read_ok(&path).components["a"].status.as_str(), "deployed");
}
