use super::*;
use hub_plan::outcome::lines::{console_line, MemorySink};

fn split(chunks: &[&[u8]], max: usize) -> Vec<Vec<u8>> {
    let mut splitter = LineSplitter::new(max);
    let mut lines = Vec::new();
    for chunk in chunks {
        splitter.feed(chunk, |line, _| lines.push(line.to_vec()));
    }
    splitter.finish(|line, _| lines.push(line.to_vec()));
    lines
}

fn texts(lines: Vec<Vec<u8>>) -> Vec<String> {
    lines
        .into_iter()
        .map(|l| String::from_utf8_lossy(&l).into_owned())
        .collect()
}

#[test]
fn splits_lines_across_chunks_and_keeps_the_last_partial_line() {
    let lines = split(&[b"one\ntw", b"o\r\n\nthr", b"ee"], MAX_LINE);
    assert_eq!(texts(lines), ["one", "two", "", "three"]);
}

#[test]
fn cuts_long_lines_without_splitting_characters() {
    let lines = split(&["abcdé".as_bytes(), b"fgh\n"], 5);
    assert_eq!(texts(lines), ["abcd", "éfgh"]);
    let lines = split(&[b"abcdefghij", b"kl\nmn\n"], 4);
    assert_eq!(texts(lines), ["abcd", "efgh", "ijkl", "mn"]);
}

#[test]
fn keeps_invalid_utf8_bytes() {
    let lines = split(&[b"a\xffb\n"], MAX_LINE);
    assert_eq!(lines, [b"a\xffb".to_vec()]);
}

fn invocation(script: &str, dir: &Path) -> Invocation {
    Invocation {
        label: "app".into(),
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        cwd: dir.to_path_buf(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        log_file: Some(dir.join("logs/app.log")),
        timeout: None,
    }
}

#[test]
fn masks_lines_and_keeps_raw_stdout() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut masker = SecretMasker::new(false);
    masker.add("hunter2");
    let sink = MemorySink::default();
    let script = "echo pw=hunter2; echo oops >&2; printf 'a\\377b'";
    let finished = run(
        &invocation(script, dir.path()),
        &masker,
        &sink,
        &Interrupts::unwatched(),
    )
    .expect("run");
    assert!(finished.success());
    // The tail holds both streams as shown; the two pipes are read in
    // whichever order their lines come.
    let mut tail: Vec<&str> = finished.tail.lines().collect();
    tail.sort_unstable();
    assert_eq!(tail, ["a\u{fffd}b", "oops", "pw=(masked)"]);
    assert_eq!(finished.stdout, "");
    let mut lines = sink.lines();
    lines.sort_by_key(|(stream, _)| *stream == Stream::Stderr);
    assert_eq!(
        lines,
        [
            (Stream::Stdout, "pw=(masked)".to_string()),
            (Stream::Stdout, "a\u{fffd}b".to_string()),
            (Stream::Stderr, "oops".to_string()),
        ]
    );
    let log = std::fs::read_to_string(dir.path().join("logs/app.log")).expect("log");
    assert!(
        log.contains("pw=(masked)\n") && !log.contains("hunter2"),
        "{log}"
    );
    assert!(
        log.ends_with("s\n") && log.contains("--- exited with code 0 after"),
        "{log}"
    );
}

#[test]
fn a_simulated_interrupt_is_forwarded_and_reported() {
    let dir = tempfile::tempdir().expect("temporary folder");
    // The child must stop through its trap, not be killed when a grace
    // period runs out on a loaded machine: the grace outlasts the test.
    let interrupts = Interrupts::unwatched_with_grace(Duration::from_secs(600));
    let sink = std::sync::Arc::new(MemorySink::default());
    let script = "trap 'echo got-int; exit 3' INT; echo ready; while :; do sleep 0.05; done";
    // The signal goes once the trap is set: when `ready` was printed.
    let trigger = {
        let interrupts = std::sync::Arc::clone(&interrupts);
        let sink = std::sync::Arc::clone(&sink);
        std::thread::spawn(move || {
            let ready = || sink.lines().iter().any(|(_, line)| line == "ready");
            let deadline = Instant::now() + Duration::from_secs(120);
            while !ready() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
            }
            interrupts.trigger(libc::SIGINT);
        })
    };
    let finished = run(
        &invocation(script, dir.path()),
        &SecretMasker::new(false),
        sink.as_ref(),
        &interrupts,
    )
    .expect("run");
    trigger.join().expect("trigger thread");
    assert_eq!(
        finished.exit,
        Exit::Interrupted {
            signal: libc::SIGINT
        }
    );
    assert!(finished.tail.contains("got-int"), "{}", finished.tail);
    let notes = sink.notes();
    assert!(notes[0].starts_with("SIGINT: passed on"), "{notes:?}");
    // The trap ended it: nothing was killed.
    assert_eq!(notes.len(), 1, "{notes:?}");
}

#[test]
fn a_timeout_terminates_the_group() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let mut invocation = invocation("sleep 30", dir.path());
    invocation.timeout = Some(Duration::from_millis(200));
    let started = Instant::now();
    let finished = run(
        &invocation,
        &SecretMasker::new(false),
        &MemorySink::default(),
        &Interrupts::unwatched(),
    )
    .expect("run");
    assert_eq!(finished.exit, Exit::TimedOut);
    assert_eq!(finished.exit.shell_code(), 124);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn a_missing_working_directory_is_an_error() {
    let dir = tempfile::tempdir().expect("temporary folder");
    let invocation = invocation("true", &dir.path().join("absent"));
    let error = run(
        &invocation,
        &SecretMasker::new(false),
        &MemorySink::default(),
        &Interrupts::unwatched(),
    )
    .expect_err("an error");
    assert!(matches!(error, ProcessError::MissingCwd { .. }), "{error}");
}

#[test]
fn exits_read_like_a_shell() {
    assert_eq!(Exit::Code(3).shell_code(), 3);
    assert_eq!(Exit::Signal(libc::SIGKILL).shell_code(), 137);
    assert_eq!(
        Exit::Interrupted {
            signal: libc::SIGTERM
        }
        .shell_code(),
        143
    );
    assert_eq!(
        Exit::Interrupted {
            signal: libc::SIGINT
        }
        .to_string(),
        "was interrupted by SIGINT"
    );
    assert_eq!(console_line("app", "hi"), "app | hi\n");
}
