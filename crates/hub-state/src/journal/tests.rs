use super::*;
use crate::model::CapturedOutput;
use crate::test_support::text_output as output;

fn base_state() -> State {
    let mut state = State {
        version: 1,
        kind: "state".into(),
        serial: 4,
        ..State::default()
    };
    state.lifecycle.order = vec!["a".into(), "b".into(), "c".into()];
    state.operations.push(Operation {
        id: "op".into(),
        operation: "deploy".into(),
        // Written as Go's zero time when empty, as in the file.
        timestamp: "2026-01-01T00:00:00Z".into(),
        ..Operation::default()
    });
    state
}

fn deployed(state: &mut State, name: &str, outputs: Vec<CapturedOutput>) {
    let entry = state.component_mut(name);
    entry.status = "deployed".into();
    entry.captured_outputs = Snapshot::from_outputs(outputs);
    let op = state.operations.last_mut().expect("op");
    op.phases.push(Phase {
        phase: name.into(),
        status: "success".into(),
    });
}

fn recorder_from(start: &State) -> Recorder {
    let mut recorder = Recorder::default();
    recorder.reset(start);
    recorder
}

fn round_trip(record: &Record) -> Record {
    let line = encode(record).expect("encode");
    assert!(line.ends_with('\n') && !line[..line.len() - 1].contains('\n'));
    decode(line.trim_end_matches('\n')).expect("decode")
}

#[test]
fn records_encode_and_decode() {
    let mut state = base_state();
    deployed(&mut state, "a", vec![output("a", "x", "1")]);
    let mut recorder = Recorder::default();
    recorder.reset(&base_state());
    let record = recorder.checkpoint(&state, 5, &["a"]);
    let line = encode(&record).expect("encode");
    let (length, rest) = line.split_once(' ').expect("length");
    let (hash, json) = rest.split_once(' ').expect("hash");
    assert_eq!(length.parse::<usize>().expect("number"), json.len() - 1);
    assert_eq!(hash.len(), HASH_DIGITS);
    let decoded = round_trip(&record);
    assert_eq!(decoded.serial, 5);
    assert!(decoded.components["a"].is_some());
    // One changed byte breaks the checksum.
    let broken = line.trim_end().replacen("deployed", "deployeD", 1);
    assert!(decode(&broken).is_none());
}

#[test]
fn checkpoints_fold_into_the_state_they_were_taken_from() {
    let start = base_state();
    let mut recorder = recorder_from(&start);
    let mut live = start.clone();
    let mut folded = start.clone();
    let steps: [(&str, Vec<CapturedOutput>); 3] = [
        ("a", vec![output("a", "x", "1")]),
        ("b", vec![output("a", "x", "1"), output("b", "y", "2")]),
        ("c", vec![output("b", "y", "2"), output("c", "z", "3")]),
    ];
    for (serial, (name, outputs)) in (5u64..).zip(steps) {
        deployed(&mut live, name, outputs);
        live.status = "deploying".into();
        let record = round_trip(&recorder.checkpoint(&live, serial, &[name]));
        apply(&mut folded, record).expect("apply");
        live.serial = serial;
        assert_eq!(folded, live, "after {name}");
    }
    // A removed entry is recorded as null.
    live.components.shift_remove("b");
    let record = round_trip(&recorder.checkpoint(&live, 8, &[]));
    assert!(record.components["b"].is_none());
    apply(&mut folded, record).expect("apply");
    live.serial = 8;
    assert_eq!(folded.components.keys().collect::<Vec<_>>(), ["a", "c"]);
    assert_eq!(
        folded.components["c"].captured_outputs.to_vec(),
        live.components["c"].captured_outputs.to_vec()
    );
    // A whole record replaces everything.
    let mut other = State::default();
    apply(&mut other, round_trip(&whole(&live, 9))).expect("whole");
    live.serial = 9;
    assert_eq!(other, live);
    // Written without the copy, a whole record is the same line.
    assert_eq!(
        encode_whole(&live, 9).expect("encode"),
        encode(&whole(&live, 9)).expect("encode")
    );
    assert_eq!(
        encode_whole(&State::default(), 1).expect("encode"),
        encode(&whole(&State::default(), 1)).expect("encode")
    );
}

fn journal_with(lines: &[String]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s.journal");
    let mut text = header(4, "op");
    for line in lines {
        text.push_str(line);
    }
    std::fs::write(&path, text).expect("journal");
    (dir, path)
}

fn line(serial: u64) -> String {
    encode(&Record {
        serial,
        status: Some(format!("s{serial}")),
        ..Record::default()
    })
    .expect("encode")
}

#[test]
fn a_cut_last_record_is_dropped() {
    let cut = line(6);
    let (_dir, path) = journal_with(&[line(5), cut[..cut.len() / 2].to_string()]);
    let scanned = scan(&path).expect("scan").expect("journal");
    assert_eq!((scanned.base, scanned.records.len()), (4, 1));
    assert!(scanned.cut);
    let (_dir, path) = journal_with(&[line(5), line(6)]);
    let scanned = scan(&path).expect("scan").expect("journal");
    assert_eq!(scanned.records.len(), 2);
    assert!(!scanned.cut);
}

#[test]
fn a_bad_record_followed_by_good_ones_is_an_error() {
    let mut bad = line(6);
    bad.replace_range(bad.len() - 4..bad.len() - 3, "#");
    let (_dir, path) = journal_with(&[line(5), bad, line(7)]);
    let error = scan(&path).unwrap_err();
    assert!(
        matches!(&error, StateError::Journal { record: 2, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("s.journal"), "{error}");
    assert!(error.hint().is_some_and(|h| h.contains("aside")));
}

#[test]
fn serials_must_grow() {
    let (_dir, path) = journal_with(&[line(5), line(5), line(6)]);
    assert!(matches!(
        scan(&path),
        Err(StateError::Journal { record: 2, .. })
    ));
}

#[test]
fn a_stale_journal_is_ignored() {
    let dir = tempfile::tempdir().expect("dir");
    let state_path = dir.path().join("s");
    std::fs::write(journal_path(&state_path), header(3, "op") + &line(4)).expect("journal");
    let mut state = base_state();
    fold_into(&state_path, &mut state).expect("fold");
    assert_eq!((state.serial, state.status.as_str()), (4, ""));
    std::fs::write(journal_path(&state_path), header(4, "op") + &line(5)).expect("journal");
    fold_into(&state_path, &mut state).expect("fold");
    assert_eq!((state.serial, state.status.as_str()), (5, "s5"));
}

#[test]
fn the_records_end_at_the_first_zero_byte() {
    let zeros = "\0".repeat(100);
    // Zeros written ahead of the records.
    let (_dir, path) = journal_with(&[line(5), line(6), zeros.clone()]);
    let scanned = scan(&path).expect("scan").expect("journal");
    assert_eq!(scanned.last_serial(), 6);
    assert!(scanned.cut, "the zeros are cut off by the next run");
    // A cut record over the zeros, as a kill during a write leaves it.
    let cut = line(7);
    let over = format!("{}{zeros}", &cut[..cut.len() / 2]);
    let (_dir, path) = journal_with(&[line(5), line(6), over]);
    assert_eq!(
        scan(&path).expect("scan").expect("journal").last_serial(),
        6
    );
    // A hole that a power failure left before a later, unflushed
    // record: what follows the hole is not read.
    let (_dir, path) = journal_with(&[line(5), zeros, line(6)]);
    let scanned = scan(&path).expect("scan").expect("journal");
    assert_eq!((scanned.last_serial(), scanned.cut), (5, true));
}

#[test]
fn a_journal_of_format_1_is_read() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("j");
    let old = header(4, "op").replacen(" 2 ", " 1 ", 1);
    assert!(old.starts_with("hub-journal 1 base=4"), "{old}");
    std::fs::write(&path, old + &line(5)).expect("journal");
    assert_eq!(
        scan(&path).expect("scan").expect("journal").last_serial(),
        5
    );
}

#[test]
fn a_record_holds_only_what_was_appended_to_the_logs() {
    let start = base_state();
    let mut recorder = recorder_from(&start);
    let mut live = start.clone();
    let mut folded = start.clone();
    let failures = ["a: exit code 1\n", "b: exit code 2\n", "c: exit code 3\n"];
    for (serial, (name, failure)) in (5u64..).zip(["a", "b", "c"].into_iter().zip(failures)) {
        deployed(&mut live, name, Vec::new());
        live.operations[0].logs.push_str(failure);
        let record = round_trip(&recorder.checkpoint(&live, serial, &[name]));
        assert_eq!(record.logs_appended.as_deref(), Some(failure));
        assert_eq!(record.operations[0].logs, "", "the record repeats the logs");
        apply(&mut folded, record).expect("apply");
        live.serial = serial;
        assert_eq!(folded, live, "after {name}");
    }
    assert_eq!(folded.operations[0].logs, failures.concat());
    // A recorder that wrote nothing of this operation yet writes its
    // whole logs.
    let record = round_trip(&Recorder::default().checkpoint(&live, 8, &[]));
    assert_eq!(record.logs_appended, None);
    assert_eq!(record.operations[0].logs, failures.concat());
    let mut from_start = start.clone();
    apply(&mut from_start, record).expect("apply");
    assert_eq!(from_start.operations[0].logs, failures.concat());
}

#[test]
fn a_bad_header_is_an_error_and_a_cut_one_is_no_journal() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("j");
    std::fs::write(&path, "hub-jour").expect("cut");
    assert!(scan(&path).expect("scan").is_none());
    std::fs::write(&path, "something else\n").expect("bad");
    assert!(matches!(
        scan(&path),
        Err(StateError::Journal { record: 0, .. })
    ));
}
