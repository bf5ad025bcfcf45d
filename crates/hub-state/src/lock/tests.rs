use super::holder::process_start;
use super::*;
use std::time::{Duration, Instant};

fn clock() -> Clock {
    Clock::pinned("2024-05-01T10:00:00Z").expect("clock")
}

use crate::dead_pid;

fn write_lock(state: &Path, holder: &LockInfo) {
    std::fs::write(
        lock_path(state),
        yaml_serde::to_string(holder).expect("yaml"),
    )
    .expect("lock");
}

#[test]
fn a_second_acquire_fails_naming_the_holder() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let first = StateLock::acquire(&state, "deploy", &clock()).expect("first");
    let text = std::fs::read_to_string(lock_path(&state)).expect("lock text");
    assert!(text.contains("operation: deploy"), "{text}");
    let error = StateLock::acquire(&state, "undeploy", &clock()).unwrap_err();
    assert!(
        matches!(
            error,
            StateError::Locked {
                elsewhere: false,
                ..
            }
        ),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains(&format!("process {}", std::process::id())),
        "{message}"
    );
    assert!(message.contains("deploy"), "{message}");
    drop(first);
    assert!(!lock_path(&state).exists());
    let again = StateLock::acquire(&state, "deploy", &clock()).expect("again");
    again.release().expect("release");
    assert!(!lock_path(&state).exists());
}

#[test]
fn of_racing_acquirers_exactly_one_wins() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let results: Vec<bool> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| scope.spawn(|| StateLock::acquire(&state, "deploy", &clock()).ok()))
            .collect();
        let guards: Vec<_> = handles
            .into_iter()
            .map(|h| h.join().expect("thread"))
            .collect();
        guards.iter().map(Option::is_some).collect()
    });
    assert_eq!(results.iter().filter(|won| **won).count(), 1, "{results:?}");
    assert!(!lock_path(&state).exists(), "the winner released the lock");
}

#[test]
fn the_lock_file_itself_names_its_state() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    assert_eq!(state_of(&state), state);
    std::fs::write(lock_path(&state), "pid: 1").expect("lock");
    assert_eq!(state_of(&lock_path(&state)), state);
}

#[test]
fn a_dead_holders_lock_is_cleared_and_named() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let holder = LockInfo {
        pid: dead_pid(),
        host: hostname(),
        operation: "deploy".into(),
        id: "dead-run".into(),
        ..LockInfo::default()
    };
    write_lock(&state, &holder);
    let guard = StateLock::acquire(&state, "deploy", &clock()).expect("cleared");
    assert_eq!(guard.cleared(), Some(&holder));
    let text = std::fs::read_to_string(lock_path(&state)).expect("new lock");
    assert!(text.contains(&guard.info().id), "{text}");
    drop(guard);
    let left: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
    assert!(left.is_empty(), "nothing left aside: {left:?}");
}

#[test]
fn a_lock_replaced_while_clearing_is_put_back() {
    let dir = tempfile::tempdir().expect("dir");
    let lock = lock_path(&dir.path().join("s"));
    let dead = LockInfo {
        pid: dead_pid(),
        id: "dead-run".into(),
        ..LockInfo::default()
    };
    let fresh = LockInfo {
        id: "fresh-run".into(),
        ..dead.clone()
    };
    std::fs::write(&lock, yaml_serde::to_string(&fresh).expect("yaml")).expect("lock");
    assert!(!clear_stale(&lock, &dead).expect("clear"));
    let back = std::fs::read_to_string(&lock).expect("put back");
    assert!(back.contains("fresh-run"), "{back}");
}

#[test]
fn a_live_pid_that_started_later_is_not_the_holder() {
    let mut child = std::process::Command::new("sleep")
        .arg("10")
        .spawn()
        .expect("sleep");
    let started = process_start(child.id()).expect("/proc/PID/stat");
    let holder = LockInfo {
        pid: child.id(),
        host: hostname(),
        process_start: Some(started.saturating_sub(1)),
        ..LockInfo::default()
    };
    let earlier = liveness(&holder);
    let same = liveness(&LockInfo {
        process_start: Some(started),
        ..holder
    });
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!((earlier, same), (Liveness::Dead, Liveness::Alive));
}

#[test]
fn a_lock_from_before_a_reboot_is_dead() {
    let holder = LockInfo {
        pid: 1,
        host: hostname(),
        boot_id: Some("another-boot".into()),
        ..LockInfo::default()
    };
    assert_eq!(liveness(&holder), Liveness::Dead);
}

#[test]
fn the_lock_text_keeps_the_keys_older_readers_know() {
    let info = LockInfo::current("deploy", &clock());
    let text = yaml_serde::to_string(&info).expect("yaml");
    for key in [
        "pid:",
        "host:",
        "user:",
        "operation:",
        "started:",
        "id:",
        "processStart:",
        "bootId:",
    ] {
        assert!(text.contains(key), "{key} in {text}");
    }
    let older: LockInfo = yaml_serde::from_str("pid: 7\nhost: h\n").expect("older lock");
    assert_eq!((older.process_start, older.boot_id), (None, None));
}

#[test]
fn an_earlier_process_with_this_pid_is_dead() {
    let holder = LockInfo {
        pid: std::process::id(),
        host: hostname(),
        id: "not-held".into(),
        ..LockInfo::default()
    };
    assert_eq!(liveness(&holder), Liveness::Dead);
}

#[test]
fn another_host_cannot_be_checked() {
    let holder = LockInfo {
        pid: 1,
        host: format!("{}-elsewhere", hostname()),
        ..LockInfo::default()
    };
    assert_eq!(liveness(&holder), Liveness::Elsewhere);
}

#[test]
fn a_hostile_lock_file_is_refused_at_once() {
    let deep = format!("pid: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let reason = parse_holder(&deep).unwrap_err();
    assert!(reason.contains("nested deeper"), "{reason}");
}

#[test]
fn an_empty_lock_file_is_reported() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    std::fs::write(lock_path(&state), "").expect("lock");
    let error = StateLock::acquire(&state, "deploy", &clock()).unwrap_err();
    assert!(
        matches!(error, StateError::UnreadableLock { .. }),
        "{error}"
    );
    assert!(error.hint().is_some_and(|h| h.contains("--force")));
}

#[test]
fn a_guard_does_not_remove_a_lock_it_no_longer_owns() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let guard = StateLock::acquire(&state, "deploy", &clock()).expect("lock");
    let other = LockInfo {
        id: "someone-else".into(),
        ..guard.info().clone()
    };
    write_lock(&state, &other);
    drop(guard);
    assert!(lock_path(&state).exists());
}

#[test]
fn a_wait_takes_the_lock_once_its_holder_lets_go() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let first = StateLock::acquire(&state, "deploy", &clock()).expect("first");
    let told = std::sync::Mutex::new(Vec::new());
    let notify = |line: &str| told.lock().expect("told").push(line.to_string());
    let wait = LockWait::new(Duration::from_secs(30), Some(&notify));
    let letting_go = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        drop(first);
    });
    let second = StateLock::acquire_waiting(&state, "plan", &clock(), &wait);
    letting_go.join().expect("thread");
    let second = second.expect("taken after the wait");
    assert_eq!(second.info().operation, "plan");
    let told = told.into_inner().expect("told");
    assert_eq!(told.len(), 1, "{told:?}");
    assert!(
        told[0].starts_with("hub: waiting up to 30s for the lock on"),
        "{told:?}"
    );
    assert!(told[0].contains("`deploy`"), "{told:?}");
}

#[test]
fn a_wait_that_runs_out_says_how_long_it_waited() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let _held = StateLock::acquire(&state, "deploy", &clock()).expect("held");
    let started = Instant::now();
    let wait = LockWait::new(Duration::from_millis(200), None);
    let error = StateLock::acquire_waiting(&state, "deploy", &clock(), &wait).unwrap_err();
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert!(matches!(error, StateError::LockTimeout { .. }), "{error}");
    let message = error.to_string();
    assert!(message.contains("is locked: `deploy`"), "{message}");
    // What it waited, not the limit: 0.2s, or a little more on a busy
    // machine.
    let waited = message
        .rsplit_once("(waited ")
        .and_then(|(_, rest)| rest.strip_suffix("s)"))
        .and_then(|seconds| seconds.parse::<f64>().ok());
    assert!(
        waited.is_some_and(|s| (0.2..30.0).contains(&s)),
        "{message}"
    );
    assert!(error.hint().is_some_and(|h| h.contains("hub unlock")));
    let at_once = StateLock::acquire(&state, "deploy", &clock()).unwrap_err();
    assert!(
        matches!(at_once, StateError::Locked { .. }),
        "no wait: {at_once}"
    );
}

#[test]
fn a_wait_does_not_retry_other_errors() {
    let mut attempts = 0;
    let wait = LockWait::new(Duration::from_secs(30), None);
    let result: Result<(), StateError> = wait.retry(|| {
        attempts += 1;
        Err(StateError::Remote {
            path: PathBuf::from("s3://b/k"),
        })
    });
    assert!(matches!(result, Err(StateError::Remote { .. })));
    assert_eq!(attempts, 1);
}

#[test]
fn readers_wait_for_live_holders_only() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let states = [state.clone()];
    await_unheld(&states, &LockWait::default()).expect("no lock");
    write_lock(
        &state,
        &LockInfo {
            pid: dead_pid(),
            host: hostname(),
            id: "dead".into(),
            ..LockInfo::default()
        },
    );
    await_unheld(&states, &LockWait::default()).expect("a dead holder does not count");
    assert!(lock_path(&state).exists(), "a reader removes nothing");
    std::fs::remove_file(lock_path(&state)).expect("remove");
    let held = StateLock::acquire(&state, "deploy", &clock()).expect("held");
    let error = await_unheld(&states, &LockWait::default()).unwrap_err();
    assert!(matches!(error, StateError::Locked { .. }), "{error}");
    drop(held);
    await_unheld(&states, &LockWait::default()).expect("released");
}

#[test]
fn durations_read_as_people_write_them() {
    let text = |millis| duration_text(Duration::from_millis(millis));
    assert_eq!(text(0), "0s");
    assert_eq!(text(300), "0.3s");
    assert_eq!(text(1_000), "1s");
    assert_eq!(text(2_500), "2.5s");
    assert_eq!(text(90_000), "1m30s");
    assert_eq!(text(300_000), "5m");
    assert_eq!(text(5_400_000), "1h30m");
}

#[test]
fn unlock_removes_stale_locks_only_unless_forced() {
    let dir = tempfile::tempdir().expect("dir");
    let state = dir.path().join("s");
    let error = unlock(&state, false).unwrap_err();
    assert!(matches!(error, StateError::NotLocked { .. }), "{error}");

    let stale = LockInfo {
        pid: dead_pid(),
        host: hostname(),
        ..LockInfo::default()
    };
    write_lock(&state, &stale);
    let removed = unlock(&state, false).expect("stale");
    assert!(removed.stale);
    assert!(
        removed.to_string().contains("no longer running"),
        "{removed}"
    );
    assert!(!lock_path(&state).exists());

    let live = LockInfo {
        pid: std::process::id(),
        host: hostname(),
        id: "live".into(),
        ..LockInfo::default()
    };
    HELD.lock().expect("held").push("live".into());
    write_lock(&state, &live);
    let error = unlock(&state, false).unwrap_err();
    assert!(
        matches!(
            error,
            StateError::Locked {
                unlocking: true,
                ..
            }
        ),
        "{error}"
    );
    assert!(error.hint().is_some_and(|h| h.contains("--force")));
    let removed = unlock(&state, true).expect("forced");
    assert!(!removed.stale);
    HELD.lock().expect("held").retain(|id| id != "live");
    assert!(!lock_path(&state).exists());
}
