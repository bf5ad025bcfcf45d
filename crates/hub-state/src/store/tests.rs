use super::files::leftover_of;
use super::writer::with_serial;
use super::*;
use crate::journal;
use crate::model::State;
use crate::StateError;
use hub_manifest::diag::Warnings;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

#[test]
fn every_path_to_one_state_has_one_real_location() {
    let dir = tempfile::tempdir().expect("dir");
    let root = std::fs::canonicalize(dir.path()).expect("root");
    std::fs::create_dir(root.join("st")).expect("st");
    let real = root.join("st/s.state");
    // Not there yet: the folder is resolved, a link to it followed.
    std::os::unix::fs::symlink("st/s.state", root.join("link.state")).expect("link");
    std::os::unix::fs::symlink("st", root.join("folder")).expect("folder link");
    for path in [
        real.clone(),
        root.join("link.state"),
        root.join("st/../st/./s.state"),
        root.join("folder/s.state"),
    ] {
        assert_eq!(real_location(&path), real, "{}", path.display());
    }
    std::fs::write(&real, "version: 1\nkind: state\n").expect("state");
    assert_eq!(real_location(&root.join("link.state")), real);
    assert_eq!(
        lock_path(&root.join("link.state")),
        root.join("st/s.state.lock")
    );
    assert_eq!(
        backup_path(&root.join("folder/s.state")),
        root.join("st/s.state.backup")
    );
    assert_eq!(
        journal_of(&root.join("link.state")),
        root.join("st/s.state.journal")
    );
    // A folder that does not exist: made absolute only.
    let missing = root.join("gone/../x.state");
    assert_eq!(real_location(&missing), missing);
    let remote = Path::new("s3://bucket/key");
    assert_eq!(real_location(remote), remote);
}

#[test]
fn a_companion_planted_before_the_run_is_refused_by_name() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.state");
    std::fs::write(&path, "version: 1\nkind: state\nserial: 3\n").expect("state");
    let victim = dir.path().join("victim");
    std::fs::write(&victim, "keep").expect("victim");
    for companion in [backup_path(&path), journal::journal_path(&path)] {
        std::os::unix::fs::symlink(&victim, &companion).expect("plant");
        let error = StateWriter::open(&path, WriteOptions::default())
            .err()
            .expect("refused");
        assert!(
            matches!(&error, StateError::Beside { path, .. } if *path == companion),
            "{error}"
        );
        assert!(error.to_string().contains("symbolic link"), "{error}");
        std::fs::remove_file(&companion).expect("unplant");
    }
    assert_eq!(std::fs::read_to_string(&victim).expect("victim"), "keep");
}

/// The names of the files in `dir`, sorted.
fn files_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn sample() -> State {
    State {
        version: 1,
        kind: "state".into(),
        status: "deployed".into(),
        ..State::default()
    }
}

fn read_ok(path: &Path) -> State {
    read(path, &mut Warnings::default())
        .expect("read")
        .expect("exists")
}

#[test]
fn the_backup_text_differs_from_the_state_text_by_its_serial_only() {
    let mut state = State::default();
    state.component_mut("a").status = "deployed".into();
    state.serial = 7;
    let text = render(&state).expect("render");
    state.serial = 6;
    let mut backup = String::new();
    assert!(with_serial(&text, 7, 6, &mut backup));
    assert_eq!(backup, render(&state).expect("render"));
    assert!(!with_serial(&text, 8, 6, &mut String::new()));
}

#[test]
fn a_missing_file_reads_as_none() {
    let dir = tempfile::tempdir().expect("dir");
    assert!(read(&dir.path().join("nope"), &mut Warnings::default())
        .expect("read")
        .is_none());
}

#[test]
fn writes_back_up_and_count() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hub.yaml.state");
    let mut state = sample();
    write(&path, &mut state, &WriteOptions::default()).expect("first");
    assert_eq!(state.serial, 1);
    assert!(!backup_path(&path).exists());
    let first = std::fs::read(&path).expect("bytes");
    state.status = "incomplete".into();
    write(&path, &mut state, &WriteOptions::default()).expect("second");
    assert_eq!(state.serial, 2);
    assert_eq!(std::fs::read(backup_path(&path)).expect("backup"), first);
    assert_eq!(read_ok(&path).status, "incomplete");
    assert_eq!(read_ok(&path).serial, 2);
}

#[test]
fn a_writer_counts_and_backs_up_every_write() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    let mut state = sample();
    let mut previous: Option<Vec<u8>> = None;
    for round in 1..=5u64 {
        state.message = format!("round {round}");
        writer.write(&mut state).expect("write");
        assert_eq!((state.serial, writer.serial()), (round, round));
        let written = read_ok(&path);
        assert_eq!(
            (written.serial, written.message.as_str()),
            (round, state.message.as_str())
        );
        match &previous {
            Some(bytes) => {
                assert_eq!(&std::fs::read(backup_path(&path)).expect("backup"), bytes)
            }
            None => assert!(!backup_path(&path).exists()),
        }
        previous = Some(std::fs::read(&path).expect("bytes"));
    }
    // The backup is a file of its own, not the state under another name.
    let backup = std::fs::read(backup_path(&path)).expect("backup");
    state.message = "last".into();
    writer.write(&mut state).expect("write");
    assert_ne!(std::fs::read(backup_path(&path)).expect("backup"), backup);
    assert_eq!(read_ok(&backup_path(&path)).message, "round 5");
    assert_eq!(read_ok(&path).message, "last");
    // The spare file the writes go through is gone with the writer.
    drop(writer);
    assert_eq!(files_in(dir.path()), ["s", "s.backup"]);
}

fn deploy(state: &mut State, name: &str, status: &str) {
    state.component_mut(name).status = status.into();
}

/// A state larger than a few checkpoints' records, with a timestamp
/// (written as Go's zero time when empty).
fn padded() -> State {
    let mut state = sample();
    state.timestamp = "2026-01-01T00:00:00Z".into();
    state.stack_parameters = vec![crate::StateParameter::new(
        "padding",
        yaml_serde::Value::String("p".repeat(4000)),
    )];
    state
}

#[test]
fn checkpoints_go_to_the_journal_until_a_fold() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let journal = journal::journal_path(&path);
    let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    let mut state = padded();
    state.lifecycle.order = vec!["a".into(), "b".into()];
    writer.write(&mut state).expect("first write");
    let folded = std::fs::read(&path).expect("bytes");
    deploy(&mut state, "a", "deploying");
    writer.write_component(&mut state, "a").expect("checkpoint");
    deploy(&mut state, "a", "deployed");
    deploy(&mut state, "b", "deploying");
    writer
        .write_components(&mut state, &["a".into(), "b".into()])
        .expect("checkpoint");
    assert_eq!(state.serial, 3);
    assert_eq!(
        std::fs::read(&path).expect("bytes"),
        folded,
        "the file is left alone"
    );
    let mode = std::fs::metadata(&journal)
        .expect("journal")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let read_back = read_ok(&path);
    assert_eq!(read_back, state);
    assert_eq!(
        read_file(&path, &mut Warnings::default())
            .expect("read")
            .expect("file")
            .serial,
        1
    );

    // A fold: the backup is the state as folded, the file one serial on.
    state.status = "deployed".into();
    writer.write(&mut state).expect("fold");
    assert!(!journal.exists(), "the journal was removed");
    let backup = read_ok(&backup_path(&path));
    let file = read_ok(&path);
    assert_eq!((backup.serial, file.serial, state.serial), (4, 5, 5));
    assert_eq!(file, state);
    assert_eq!(
        backup,
        State {
            serial: 4,
            ..state.clone()
        }
    );
}

/// A writer of a state written once at `path`, its folds said to take
/// `took` (`share` times that must pass before the next one).
fn written_once(path: &Path, took: std::time::Duration, share: u32) -> (StateWriter, State) {
    let mut writer = StateWriter::open(path, WriteOptions::default()).expect("open");
    let mut state = sample();
    state.timestamp = "2026-01-01T00:00:00Z".into();
    writer.write(&mut state).expect("first write");
    writer.pretend_last_fold_took(took, share);
    (writer, state)
}

/// Component `c{round}` deployed with one parameter holding `bulk`, and
/// checkpointed.
fn checkpoint_bulk(state: &mut State, writer: &mut StateWriter, round: usize, bulk: &str) {
    let name = format!("c{round}");
    deploy(state, &name, "deployed");
    state.component_mut(&name).parameters = vec![crate::StateParameter::new(
        "bulk",
        yaml_serde::Value::String(bulk.to_string()),
    )];
    writer.write_component(state, &name).expect("checkpoint");
}

#[test]
fn a_journal_outgrowing_the_file_and_the_minimum_is_folded() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    // Folds take no time here: only the journal's size decides.
    let (mut writer, mut state) = written_once(&path, std::time::Duration::ZERO, 0);
    let bulk = "b".repeat(journal::FOLD_MIN_JOURNAL as usize / 10);
    let mut folded_at = Vec::new();
    for round in 0..20 {
        checkpoint_bulk(&mut state, &mut writer, round, &bulk);
        if !journal::journal_path(&path).exists() {
            folded_at.push(round);
        }
        assert_eq!(read_ok(&path), state);
    }
    // Records of a tenth of the minimum each, plus their framing: the
    // tenth passes it, then ten more pass the state folded from them.
    assert_eq!(folded_at, [9, 19]);
}

/// A fold stops the run while it writes the whole state: a journal that
/// outgrew the file waits until the last fold took a twentieth of the time
/// since it, then folds at the next checkpoint.
#[test]
fn a_journal_that_outgrew_the_file_waits_for_its_share_of_the_time() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let an_hour = std::time::Duration::from_secs(3600);
    let (mut writer, mut state) = written_once(&path, an_hour, journal::FOLD_SHARE);
    let bulk = "b".repeat(journal::FOLD_MIN_JOURNAL as usize / 5);
    for round in 0..20 {
        checkpoint_bulk(&mut state, &mut writer, round, &bulk);
        assert!(journal::journal_path(&path).exists(), "folded at {round}");
        assert!(
            read_ok(&path) == state,
            "the file with its journal holds the state"
        );
    }
    let journal_len = std::fs::metadata(journal::journal_path(&path)).map_or(0, |m| m.len());
    let file_len = std::fs::metadata(&path).map_or(0, |m| m.len());
    assert!(
        journal_len > 2 * file_len,
        "{journal_len} against {file_len}"
    );
    writer.pretend_last_fold_took(std::time::Duration::ZERO, journal::FOLD_SHARE);
    checkpoint_bulk(&mut state, &mut writer, 20, &bulk);
    assert!(
        !journal::journal_path(&path).exists(),
        "folded once its time came"
    );
    assert!(read_ok(&path) == state, "the folded file holds the state");
}

/// A fold's time grows with what it writes: a run whose first write was a
/// small state must not take that write's time as the next fold's once
/// the journal holds several times the file.
#[test]
fn the_next_fold_waits_for_its_share_of_what_it_will_write() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let a_second = std::time::Duration::from_secs(1);
    let (mut writer, mut state) = written_once(&path, a_second, journal::FOLD_SHARE);
    let bulk = "b".repeat(journal::FOLD_MIN_JOURNAL as usize / 5);
    (0..20).for_each(|round| checkpoint_bulk(&mut state, &mut writer, round, &bulk));
    let file_len = std::fs::metadata(&path).map_or(0, |m| m.len());
    let journal_len = std::fs::metadata(journal::journal_path(&path)).map_or(0, |m| m.len());
    let growth = (file_len + journal_len) as f64 / file_len as f64;
    assert!(growth > 4.0, "{journal_len} against {file_len}");
    let last_fold_share = a_second * journal::FOLD_SHARE;
    assert!(
        !writer.fold_due_after(last_fold_share + a_second),
        "a fold as long as the last one was expected"
    );
    let grown_share = last_fold_share.mul_f64(growth);
    assert!(writer.fold_due_after(grown_share + a_second));
    assert!(
        read_ok(&path) == state,
        "the file with its journal holds the state"
    );
}

#[test]
fn a_small_journal_is_not_folded_for_its_size() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    let mut state = sample();
    writer.write(&mut state).expect("first write");
    for round in 0..50 {
        let name = format!("c{round}");
        deploy(&mut state, &name, "deployed");
        writer
            .write_component(&mut state, &name)
            .expect("checkpoint");
        assert!(journal::journal_path(&path).exists(), "folded at {round}");
    }
    assert_eq!(read_ok(&path), state);
}

#[test]
fn every_location_gets_the_same_records() {
    let dir = tempfile::tempdir().expect("dir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let paths = [a.clone(), b.clone()];
    let mut writer = StateWriter::open_all(&paths, WriteOptions::default(), None).expect("open");
    let mut state = padded();
    writer.write(&mut state).expect("write");
    deploy(&mut state, "x", "deploying");
    writer.write_component(&mut state, "x").expect("checkpoint");
    let journal = |p: &Path| std::fs::read(journal::journal_path(p)).expect("journal");
    assert_eq!(journal(&a), journal(&b));
    assert_eq!(read_ok(&a), state);
    assert_eq!(read_ok(&b), state);
}

#[test]
fn a_new_writer_folds_the_journal_a_killed_one_left() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let mut state = padded();
    {
        let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
        writer.write(&mut state).expect("write");
        deploy(&mut state, "x", "deploying");
        writer.write_component(&mut state, "x").expect("checkpoint");
    }
    // A cut record after the last complete one.
    let journal = journal::journal_path(&path);
    let mut bytes = std::fs::read(&journal).expect("journal");
    bytes.extend_from_slice(b"12 0123");
    std::fs::write(&journal, bytes).expect("cut");
    let read_back = read_ok(&path);
    assert_eq!(read_back, state);
    let mut writer =
        StateWriter::resume(&path, WriteOptions::default(), read_back.serial).expect("open");
    deploy(&mut state, "x", "deployed");
    writer
        .write_component(&mut state, "x")
        .expect("first write folds");
    assert!(!journal.exists());
    assert_eq!(read_ok(&path), state);
    assert_eq!(read_ok(&backup_path(&path)).serial + 1, state.serial);
}

#[test]
fn leftovers_of_dead_writers_are_removed() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let dead = crate::dead_pid();
    let own = std::process::id();
    for leftover in [
        format!(".s.{dead}-3.tmp"),
        format!(".s.backup.{dead}-4.tmp"),
        format!(".s.{own}-999.tmp"),
        format!(".s.x.{dead}-1.tmp"),
        format!(".t.{dead}-1.tmp"),
    ] {
        std::fs::write(dir.path().join(leftover), "partial").expect("leftover");
    }
    let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    writer.write(&mut sample()).expect("write");
    drop(writer);
    let mut left = files_in(dir.path());
    left.sort();
    let mut expected = vec![
        format!(".s.{own}-999.tmp"),
        format!(".s.x.{dead}-1.tmp"),
        format!(".t.{dead}-1.tmp"),
        "s".to_string(),
    ];
    expected.sort();
    assert_eq!(left, expected, "only the dead writer's files of `s` go");
    assert_eq!(leftover_of(".s.12-3.tmp", "s"), Some(12));
    assert_eq!(leftover_of(".s.12-3.tmp", "s.backup"), None);
    assert_eq!(leftover_of(".s.backup.12-3.tmp", "s.backup"), Some(12));
    assert_eq!(leftover_of(".s.x.12-3.tmp", "s"), None);
}

#[test]
fn writes_reuse_the_same_three_files() {
    use std::os::unix::fs::MetadataExt;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    let mut state = sample();
    let inodes = |dir: &Path| -> std::collections::BTreeSet<u64> {
        std::fs::read_dir(dir)
            .expect("list")
            .flatten()
            .map(|e| e.metadata().expect("meta").ino())
            .collect()
    };
    for _ in 0..3 {
        writer.write(&mut state).expect("write");
    }
    let settled = inodes(dir.path());
    for round in 0..5 {
        state.message = format!("round {round}");
        writer.write(&mut state).expect("write");
        assert_eq!(inodes(dir.path()), settled, "no file created or deleted");
        assert_eq!(read_ok(&path).message, format!("round {round}"));
    }
    assert_eq!(read_ok(&backup_path(&path)).message, "round 3");
}

#[test]
fn a_writer_writes_the_same_bytes_to_every_location() {
    let dir = tempfile::tempdir().expect("dir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&b, "version: 1\nkind: state\nserial: 7\n").expect("seed b");
    let paths = [a.clone(), b.clone()];
    let mut writer = StateWriter::open_all(&paths, WriteOptions::default(), None).expect("open");
    assert_eq!(writer.serial(), 7, "the largest serial on disk");
    let mut state = sample();
    writer.write(&mut state).expect("write");
    writer.write(&mut state).expect("write");
    assert_eq!(state.serial, 9);
    assert_eq!(std::fs::read(&a).expect("a"), std::fs::read(&b).expect("b"));
    assert_eq!(read_ok(&backup_path(&a)).serial, 8);
    assert_eq!(read_ok(&backup_path(&b)).serial, 8);
    assert_eq!(
        writer.written().collect::<Vec<_>>(),
        [a.as_path(), b.as_path()]
    );
    assert!(writer.take_failures().is_empty());

    // One location fails: the other is written, the failure is kept.
    std::fs::remove_file(&b).expect("remove b");
    std::fs::create_dir(&b).expect("block b");
    std::fs::write(b.join("x"), "x").expect("fill");
    state.message = "one".into();
    writer.write(&mut state).expect("written to a");
    assert_eq!((state.serial, read_ok(&a).message.as_str()), (10, "one"));
    assert_eq!(writer.written().collect::<Vec<_>>(), [a.as_path()]);
    let failures = writer.take_failures();
    assert_eq!(failures.len(), 1);
    let failure = failures[0].to_string();
    assert!(failure.contains(&*b.to_string_lossy()), "{failure}");

    // Every location fails: the first error, the others kept.
    std::fs::remove_file(&a).expect("remove a");
    std::fs::create_dir(&a).expect("block a");
    std::fs::write(a.join("x"), "x").expect("fill");
    let error = writer.write(&mut state).unwrap_err();
    assert!(error.to_string().contains(&*a.to_string_lossy()), "{error}");
    assert_eq!(error.exit_code(), 2);
    assert_eq!(state.serial, 10);
    assert_eq!(writer.take_failures().len(), 1);
    assert_eq!(writer.written().count(), 0);
}

#[test]
fn a_resumed_writer_reads_only_the_other_locations() {
    let dir = tempfile::tempdir().expect("dir");
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    std::fs::write(&a, "version: 1\nkind: state\nserial: 3\n").expect("seed a");
    std::fs::write(&b, "version: 1\nkind: state\nserial: 5\n").expect("seed b");
    let paths = [a.clone(), b.clone()];
    let writer =
        StateWriter::open_all(&paths, WriteOptions::default(), Some((&a, 4))).expect("open");
    assert_eq!(writer.serial(), 5);
    let writer =
        StateWriter::open_all(&paths, WriteOptions::default(), Some((&b, 2))).expect("open");
    assert_eq!(writer.serial(), 3);
}

#[test]
fn a_writer_continues_from_the_serial_on_disk() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    std::fs::write(&path, "version: 1\nkind: state\nserial: 41\n").expect("seed");
    let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    assert_eq!(writer.serial(), 41);
    let mut state = sample();
    writer.write(&mut state).expect("write");
    assert_eq!(state.serial, 42);
    let mut resumed = StateWriter::resume(&path, WriteOptions::default(), 42).expect("resume");
    let mut stale = sample();
    resumed.write(&mut stale).expect("write");
    assert_eq!(stale.serial, 43);
    state.serial = 100;
    resumed.write(&mut state).expect("write");
    assert_eq!((state.serial, read_ok(&path).serial), (101, 101));
    assert_eq!(read_ok(&backup_path(&path)).serial, 43);
}

#[test]
fn a_writer_keeps_modes_and_compresses() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    write(&path, &mut sample(), &WriteOptions::default()).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    let mut writer = StateWriter::open(
        &path,
        WriteOptions {
            compressed: true,
            ..WriteOptions::default()
        },
    )
    .expect("open");
    let mut state = sample();
    writer.write(&mut state).expect("write");
    writer.write(&mut state).expect("write");
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!((mode(&path), mode(&backup_path(&path))), (0o640, 0o640));
    assert_eq!(&std::fs::read(&path).expect("bytes")[..2], &[0x1f, 0x8b]);
    assert_eq!(read_ok(&path).serial, 3);
    assert_eq!(read_ok(&backup_path(&path)).serial, 2);
}

#[test]
fn a_failed_writer_write_leaves_the_state_alone() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let mut writer = StateWriter::open(&path, WriteOptions::default()).expect("open");
    let mut state = sample();
    writer.write(&mut state).expect("write");
    let before = std::fs::read(&path).expect("bytes");
    // A folder where the backup goes makes the backup step fail.
    std::fs::create_dir(backup_path(&path)).expect("block the backup");
    std::fs::write(backup_path(&path).join("x"), "x").expect("fill");
    state.message = "lost".into();
    let error = writer.write(&mut state).unwrap_err();
    assert!(matches!(error, StateError::Write { .. }), "{error}");
    assert_eq!(state.serial, 1);
    assert_eq!(std::fs::read(&path).expect("bytes"), before);
    std::fs::remove_dir_all(backup_path(&path)).expect("unblock");
    writer.write(&mut state).expect("write");
    // The failed write's serial is not used again.
    assert_eq!((state.serial, read_ok(&path).serial), (3, 3));
    let leftovers = std::fs::read_dir(dir.path())
        .expect("list")
        .filter(|e| {
            e.as_ref()
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .ends_with(".tmp")
        })
        .count();
    assert_eq!(leftovers, 0);
}

#[test]
fn the_serial_never_goes_back() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    std::fs::write(&path, "version: 1\nkind: state\nserial: 41\n").expect("seed");
    let mut state = sample();
    write(&path, &mut state, &WriteOptions::default()).expect("write");
    assert_eq!(state.serial, 42);
}

#[test]
fn new_files_are_private_and_modes_are_kept() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    write(&path, &mut sample(), &WriteOptions::default()).expect("write");
    let mode = |p: &Path| std::fs::metadata(p).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).expect("chmod");
    write(&path, &mut sample(), &WriteOptions::default()).expect("write");
    assert_eq!(mode(&path), 0o640);
}

#[test]
fn compressed_states_are_gzip_and_read_back() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    write(
        &path,
        &mut sample(),
        &WriteOptions {
            compressed: true,
            ..WriteOptions::default()
        },
    )
    .expect("write");
    let bytes = std::fs::read(&path).expect("bytes");
    assert_eq!(&bytes[..2], &[0x1f, 0x8b]);
    assert_eq!(read_ok(&path).status, "deployed");
}

#[test]
fn a_symbolic_link_is_followed() {
    let dir = tempfile::tempdir().expect("dir");
    let real = dir.path().join("real.state");
    let link = dir.path().join("link.state");
    std::os::unix::fs::symlink(&real, &link).expect("symlink");
    write(&link, &mut sample(), &WriteOptions::default()).expect("write");
    assert!(std::fs::symlink_metadata(&link)
        .expect("meta")
        .file_type()
        .is_symlink());
    assert_eq!(read_ok(&real).status, "deployed");
}

#[test]
fn no_temporary_files_are_left() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    write(&path, &mut sample(), &WriteOptions::default()).expect("write");
    write(&path, &mut sample(), &WriteOptions::default()).expect("write");
    assert_eq!(files_in(dir.path()), ["s", "s.backup"]);
}

#[test]
fn a_failed_write_leaves_the_state_alone() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("missing-folder").join("s");
    let mut state = sample();
    let error = write(&path, &mut state, &WriteOptions::default()).unwrap_err();
    assert!(matches!(error, StateError::Write { .. }), "{error}");
    assert_eq!(state.serial, 0);
}

#[test]
fn wrong_kind_and_version_are_located() {
    let path = Path::new("s");
    let error = parse(path, "version: 1\nkind: foo\n", &mut Warnings::default()).unwrap_err();
    assert!(
        matches!(&error, StateError::WrongKind { kind, .. } if kind == "foo"),
        "{error}"
    );
    assert_eq!(error.location().and_then(|l| l.line), Some(2));
    let error = parse(path, "version: 2\nkind: state\n", &mut Warnings::default()).unwrap_err();
    assert!(
        matches!(error, StateError::WrongVersion { version: 2, .. }),
        "{error}"
    );
    assert!(error.hint().is_some_and(|h| h.contains("newer")));
}

#[test]
fn invalid_yaml_names_the_line_and_the_backup() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    std::fs::write(&path, "version: 1\nkind: state\ncomponents: [\n").expect("seed");
    std::fs::write(backup_path(&path), "version: 1\nkind: state\n").expect("backup");
    let error = read(&path, &mut Warnings::default()).unwrap_err();
    assert!(matches!(error, StateError::Yaml { .. }), "{error}");
    assert!(error.location().and_then(|l| l.line).is_some());
    assert!(
        error.hint().is_some_and(|h| h.contains("s.backup")),
        "{:?}",
        error.hint()
    );
}

#[test]
fn empty_and_damaged_files_are_errors() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    std::fs::write(&path, "").expect("seed");
    let error = read(&path, &mut Warnings::default()).unwrap_err();
    assert!(matches!(error, StateError::Empty { .. }), "{error}");
    std::fs::write(&path, [0x1f, 0x8b, 0, 1, 2]).expect("seed");
    let error = read(&path, &mut Warnings::default()).unwrap_err();
    assert!(matches!(error, StateError::Damaged { .. }), "{error}");
    assert!(error.to_string().contains("gzip"), "{error}");
}

#[test]
fn unknown_keys_are_warned_about_with_their_line() {
    let mut warnings = Warnings::default();
    let state = parse(
        Path::new("s"),
        "version: 1\nkind: state\nfuture: x\n",
        &mut warnings,
    )
    .expect("parse");
    assert_eq!(state.kind, "state");
    let warning = warnings.iter().next().expect("warning");
    assert!(warning.message.contains("future"), "{warning}");
    assert_eq!(warning.location.as_ref().and_then(|l| l.line), Some(3));
}

#[test]
fn a_folder_is_not_a_state() {
    let dir = tempfile::tempdir().expect("dir");
    let error = read(dir.path(), &mut Warnings::default()).unwrap_err();
    assert!(matches!(error, StateError::Read { .. }), "{error}");
    assert!(
        error.hint().is_some_and(|h| h.contains("folder")),
        "{:?}",
        error.hint()
    );
}

#[test]
fn remote_locations_go_to_the_remote_store() {
    // The file alone has no remote counterpart.
    let error = read_file(Path::new("s3://b/k"), &mut Warnings::default()).unwrap_err();
    assert!(matches!(error, StateError::Remote { .. }));
    let error = read(Path::new("s3://b"), &mut Warnings::default()).unwrap_err();
    assert!(
        matches!(error, StateError::RemoteLocation { .. }),
        "{error}"
    );
}
