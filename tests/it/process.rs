//! The process runner through `hub util run`: labelled and masked lines,
//! log files, the child's environment, and real signals sent to the real
//! binary.

use crate::common::*;
use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

#[test]
fn prefixes_and_masks_stdout_stderr_and_the_log_file() {
    let (out, dir) = Test::new()
        .args(&[
            "util",
            "run",
            "--label",
            "app",
            "--mask",
            "hunter2",
            "--mask",
            "abc",
            "--log",
            "logs/app.log",
            "--",
            "sh",
            "-c",
            "echo pw=hunter2; echo warn hunter2 abc >&2; printf 'no newline'",
        ])
        .run_keep();
    out.success();
    assert_eq!(out.stdout, "app | pw=(masked)\napp | no newline\n");
    let warning = "warning: a --mask value is in hub's command line";
    assert!(
        out.stderr
            .starts_with(&format!("app | warn (masked) abc\n{warning}")),
        "{}",
        out.stderr
    );
    let log = std::fs::read_to_string(dir.path().join("logs/app.log")).expect("log file");
    let lines: Vec<&str> = log.lines().collect();
    let command = "sh -c echo pw=(masked); echo warn (masked) abc >&2; printf 'no newline'";
    assert_eq!(
        lines[0],
        format!("--- {command} ({})", dir.path().display())
    );
    // Standard output and error come through two pipes: the log keeps
    // each stream's order, not an order between them.
    let body = &lines[1..4];
    let stdout_lines: Vec<&str> = body
        .iter()
        .copied()
        .filter(|l| *l != "warn (masked) abc")
        .collect();
    assert_eq!(stdout_lines, ["pw=(masked)", "no newline"], "{body:?}");
    assert!(body.contains(&"warn (masked) abc"), "{body:?}");
    assert!(
        lines[4].starts_with("--- exited with code 0 after "),
        "{log}"
    );
    assert!(!log.contains("hunter2"));
}

#[test]
fn appends_to_an_existing_log_file() {
    let (out, dir) = Test::new()
        .file("app.log", "earlier run\n")
        .args(&["util", "run", "--log", "app.log", "--", "echo", "again"])
        .run_keep();
    out.success();
    let log = std::fs::read_to_string(dir.path().join("app.log")).expect("log file");
    assert!(log.starts_with("earlier run\n--- echo again ("), "{log}");
    assert!(log.contains("\nagain\n"), "{log}");
}

#[test]
fn the_child_gets_exactly_the_given_environment() {
    let out = Test::new()
        .args(&[
            "util",
            "run",
            "--clear-env",
            "-e",
            "A=1",
            "-e",
            "B=x=y",
            "--",
            "/usr/bin/env",
        ])
        .run();
    out.success();
    assert_eq!(out.stdout, "env | A=1\nenv | B=x=y\n");
}

#[test]
fn runs_in_the_given_folder_with_stdin_on_the_null_device() {
    let test = Test::new().file("component/marker", "");
    let folder = test
        .root()
        .join("component")
        .canonicalize()
        .expect("folder");
    let out = test
        .args(&[
            "util",
            "run",
            "--label",
            "c",
            "--cwd",
            "component",
            "--",
            "sh",
            "-c",
            "pwd -P; readlink /proc/self/fd/0; cat; echo read-done",
        ])
        .run();
    out.success();
    assert_eq!(
        out.stdout,
        format!("c | {}\nc | /dev/null\nc | read-done\n", folder.display())
    );
}

#[test]
fn a_failing_child_gives_its_exit_code() {
    let out = Test::new()
        .args(&[
            "util",
            "run",
            "--label",
            "app",
            "--",
            "sh",
            "-c",
            "echo failing >&2; exit 7",
        ])
        .run();
    assert_eq!(out.status, 7);
    assert_eq!(
        out.stderr,
        "app | failing\nerror: `app` exited with code 7\n"
    );
}

#[test]
fn a_file_without_the_execute_bit_is_a_clear_error() {
    let (out, _dir) = Test::new()
        .file("deploy.sh", "#!/bin/sh\necho deployed\n")
        .args(&["util", "run", "--log", "deploy.log", "--", "./deploy.sh"])
        .run_keep();
    assert_eq!(out.status, 126);
    let log = std::fs::read_to_string(out.root.join("deploy.log")).expect("log file");
    assert!(
        log.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("--- cannot run `")),
        "{log}"
    );
    out.stderr_has("cannot run `")
        .stderr_has("deploy.sh` for `deploy.sh` in `")
        .stderr_has("help: make it executable: `chmod +x ");
}

#[test]
fn a_missing_program_is_a_clear_error() {
    let out = Test::new()
        .args(&["util", "run", "--clear-env", "--", "no-such-program"])
        .run();
    assert_eq!(out.status, 127);
    out.stderr_has("cannot run `no-such-program`")
        .stderr_has("help: `no-such-program` is not on the `PATH`");
}

#[test]
fn a_timeout_stops_the_child() {
    let started = Instant::now();
    let out = Test::new()
        .args(&[
            "util",
            "run",
            "--label",
            "slow",
            "--timeout",
            "0.3",
            "--grace",
            "1",
            "--",
            "sleep",
            "30",
        ])
        .run();
    assert_eq!(out.status, 124);
    out.stderr_has("hub: slow: timed out")
        .stderr_has("error: `slow` timed out");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// `hub util run` started in the background, its stdout read line by line.
struct Running {
    child: Child,
    lines: Receiver<String>,
    stderr: std::thread::JoinHandle<String>,
    _dir: tempfile::TempDir,
}

impl Running {
    fn start(args: &[&str]) -> Running {
        let dir = tempfile::tempdir().expect("temporary folder");
        let mut child = Command::new(env!("CARGO_BIN_EXE_hub"))
            .arg("util")
            .arg("run")
            .args(args)
            .current_dir(dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start hub");
        let stdout = child.stdout.take().expect("stdout");
        let mut stderr = child.stderr.take().expect("stderr");
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr.read_to_string(&mut text);
            text
        });
        Running {
            child,
            lines,
            stderr,
            _dir: dir,
        }
    }

    /// Waits for the child's `pgid=N` line and returns N.
    fn pgid(&self) -> i32 {
        let line = self.line_with("pgid=");
        let (_, number) = line.split_once("pgid=").expect("pgid line");
        number.trim().parse().expect("a process group id")
    }

    fn line_with(&self, fragment: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        while let Some(left) = deadline.checked_duration_since(Instant::now()) {
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(fragment) => return line,
                Ok(_) => continue,
                Err(_) => break,
            }
        }
        panic!("hub printed no line with {fragment:?}");
    }

    fn signal(&self, signal: i32) {
        let pid = i32::try_from(self.child.id()).expect("pid");
        // SAFETY: sends a signal to the hub process this test started.
        let sent = unsafe { libc::kill(pid, signal) };
        assert_eq!(sent, 0, "kill hub");
    }

    /// Waits (at most 10 s) for hub to exit: its exit code, the rest of its
    /// stdout, its stderr.
    fn finish(mut self) -> (i32, Vec<String>, String) {
        let deadline = Instant::now() + Duration::from_secs(10);
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("wait for hub") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("hub did not exit");
            }
            std::thread::sleep(Duration::from_millis(10));
        };
        let rest: Vec<String> = self.lines.iter().collect();
        let stderr = self.stderr.join().expect("stderr reader");
        (status.code().unwrap_or(-1), rest, stderr)
    }
}

/// Whether any process of the group is left (zombies included).
fn group_exists(pgid: i32) -> bool {
    // SAFETY: signal 0 only checks that the group exists.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

const TRAPPING: &str = "trap 'echo got-INT; exit 3' INT; trap 'echo got-TERM; exit 3' TERM; \
                        echo pgid=$$; while :; do sleep 0.05; done";

fn forwards(signal: i32, name: &str) {
    let running = Running::start(&["--label", "app", "--", "sh", "-c", TRAPPING]);
    let pgid = running.pgid();
    running.signal(signal);
    let (status, rest, stderr) = running.finish();
    assert_eq!(status, 128 + signal, "stderr: {stderr}");
    assert_eq!(rest, [format!("app | got-{name}")], "stderr: {stderr}");
    assert!(
        stderr.contains(": passed on; it has 30s to stop"),
        "{stderr}"
    );
    assert!(!group_exists(pgid), "process group {pgid} is still there");
}

#[test]
fn sigint_is_forwarded_to_the_child() {
    forwards(libc::SIGINT, "INT");
}

#[test]
fn sigterm_is_forwarded_to_the_child() {
    forwards(libc::SIGTERM, "TERM");
}

const IGNORING: &str = "trap '' INT TERM; echo pgid=$$; while :; do sleep 0.05; done";

#[test]
fn a_child_ignoring_the_signal_is_killed_after_the_grace_period() {
    let running = Running::start(&[
        "--label", "stubborn", "--grace", "1", "--", "sh", "-c", IGNORING,
    ]);
    let pgid = running.pgid();
    let sent = Instant::now();
    running.signal(libc::SIGTERM);
    let (status, _, stderr) = running.finish();
    let waited = sent.elapsed();
    assert_eq!(status, 143, "{stderr}");
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(5),
        "{waited:?}"
    );
    assert!(
        stderr.contains("hub: stubborn: still running 1s after the signal: killed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("error: `stubborn` was interrupted by SIGTERM"),
        "{stderr}"
    );
    assert!(!group_exists(pgid), "process group {pgid} is still there");
}

#[test]
fn a_second_signal_kills_at_once() {
    let running = Running::start(&[
        "--label", "stubborn", "--grace", "30", "--", "sh", "-c", IGNORING,
    ]);
    let pgid = running.pgid();
    running.signal(libc::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    let sent = Instant::now();
    running.signal(libc::SIGINT);
    let (status, _, stderr) = running.finish();
    assert_eq!(status, 130, "{stderr}");
    assert!(
        sent.elapsed() < Duration::from_secs(5),
        "{:?}",
        sent.elapsed()
    );
    assert!(
        stderr.contains("hub: stubborn: SIGINT again: killed"),
        "{stderr}"
    );
    assert!(!group_exists(pgid), "process group {pgid} is still there");
}

#[test]
fn background_processes_of_an_interrupted_child_are_killed() {
    let script = "(trap '' INT TERM; while :; do sleep 0.05; done) & \
                  trap 'echo leaving; exit 0' TERM; echo pgid=$$; while :; do sleep 0.05; done";
    let running = Running::start(&["--label", "app", "--", "sh", "-c", script]);
    let pgid = running.pgid();
    running.signal(libc::SIGTERM);
    let (status, rest, stderr) = running.finish();
    assert_eq!(status, 143, "{stderr}");
    assert_eq!(rest, ["app | leaving"]);
    assert!(!group_exists(pgid), "process group {pgid} is still there");
}
