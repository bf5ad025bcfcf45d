//! State files: `hub unlock`, and what a crash in the middle of writing a
//! state leaves behind.

use crate::common::{dead_pid, lock_text, Test};
use hub_manifest::diag::Warnings;
use hub_state::lock::hostname;
use hub_state::{
    backup_path, lock_path, read, write, ComponentState, StackMeta, State, StateParameter,
    WriteOptions,
};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

const STATE: &str = "hub.yaml.state";
const LOCK: &str = "hub.yaml.state.lock";

#[test]
fn unlock_removes_a_stale_lock() {
    let (out, dir) = Test::new()
        .file(LOCK, &lock_text(dead_pid(), &hostname()))
        .args(&["unlock", STATE])
        .run_keep();
    out.success()
        .stderr_has("removed the stale lock")
        .stderr_has("`deploy` started by alice at 2024-05-01T10:00:00Z")
        .stderr_has("no longer running");
    assert!(!dir.path().join(LOCK).exists());
}

#[test]
fn unlock_accepts_the_lock_file_itself() {
    let (out, dir) = Test::new()
        .file(LOCK, &lock_text(dead_pid(), &hostname()))
        .args(&["unlock", LOCK])
        .run_keep();
    out.success().stderr_has("removed the stale lock");
    assert!(!dir.path().join(LOCK).exists());
}

#[test]
fn unlock_refuses_a_live_lock_and_names_the_holder() {
    let me = std::process::id();
    let (out, dir) = Test::new()
        .file(LOCK, &lock_text(me, &hostname()))
        .args(&["unlock", STATE])
        .run_keep();
    out.failure()
        .stderr_has("is locked: `deploy` started by alice")
        .stderr_has(&format!("process {me}"))
        .stderr_has("still running")
        .stderr_has(&format!("hub unlock -s {STATE} --force"));
    assert_eq!(out.status, 1);
    assert!(dir.path().join(LOCK).exists());
}

#[test]
fn unlock_force_refuses_a_live_lock_in_a_script_without_yes() {
    let me = std::process::id();
    let (out, dir) = Test::new()
        .file(LOCK, &lock_text(me, &hostname()))
        .args(&["unlock", "--force", STATE])
        .run_keep();
    out.failure()
        .stderr_has("which is still running on this host; it was left alone")
        .stderr_has(&format!("process {me}"))
        .stderr_has(&format!("hub unlock -s {STATE} --force --yes"));
    assert_eq!(out.status, 1);
    assert!(dir.path().join(LOCK).exists());
}

#[test]
fn unlock_force_yes_removes_a_live_lock() {
    let (out, dir) = Test::new()
        .file(LOCK, &lock_text(std::process::id(), &hostname()))
        .args(&["unlock", "--force", "--yes", STATE])
        .run_keep();
    out.success()
        .stderr_has("removed the lock")
        .stderr_has("`deploy` started by alice at 2024-05-01T10:00:00Z");
    assert!(!dir.path().join(LOCK).exists());
}

#[test]
fn unlock_cannot_check_another_host() {
    let (out, dir) = Test::new()
        .file(LOCK, &lock_text(dead_pid(), "some-other-host.example"))
        .args(&["unlock", STATE])
        .run_keep();
    out.failure()
        .stderr_has("on host some-other-host.example")
        .stderr_has("cannot be checked from here")
        .stderr_has("--force");
    assert!(dir.path().join(LOCK).exists());
}

#[test]
fn unlock_reports_a_missing_lock() {
    Test::new()
        .args(&["unlock", STATE])
        .run()
        .failure()
        .stderr_has("is not locked")
        .stderr_has(LOCK)
        .stderr_has("followed by `.lock`");
}

#[test]
fn an_empty_lock_file_needs_force() {
    let test = Test::new().file(LOCK, "").args(&["unlock", STATE]);
    test.run()
        .failure()
        .stderr_has("cannot be read")
        .stderr_has("it is empty")
        .stderr_has("--force");
    let (out, dir) = test.args(&["--force"]).run_keep();
    out.success().stderr_has("removed the lock");
    assert!(!dir.path().join(LOCK).exists());
}

#[test]
fn unlock_quotes_awkward_paths_in_its_advice() {
    Test::new()
        .file("my state.lock", &lock_text(dead_pid(), "elsewhere.example"))
        .args(&["unlock", "my state"])
        .run()
        .failure()
        .stderr_has("hub unlock -s 'my state' --force");
}

// ---------------------------------------------------------------- crash safety

const CRASH_DIR: &str = "HUB_TEST_STATE_CRASH_DIR";
const COMPONENTS: usize = 150;

/// The `k`-th version the writer produces: big enough that a write takes a
/// while, and different in every component.
fn version(k: u64) -> State {
    let order: Vec<String> = (0..COMPONENTS).map(|i| format!("c{i:03}")).collect();
    let meta = StackMeta {
        kind: "stack".into(),
        name: "crash".into(),
    };
    let mut state = State::new(meta, order.clone());
    state.message = format!("write {k}");
    state.timestamp = "2024-05-01T10:00:00Z".into();
    for name in &order {
        let entry = ComponentState {
            status: "deployed".into(),
            parameters: vec![StateParameter::new(
                "value",
                yaml_serde::Value::String(format!("{name} at write {k} {}", "x".repeat(200))),
            )],
            ..ComponentState::default()
        };
        state.components.insert(name.clone(), entry);
    }
    state
}

/// Which version a state is, checked against what that version holds.
fn identify(path: &Path) -> Option<State> {
    let state = read(path, &mut Warnings::default())
        .unwrap_or_else(|e| panic!("`{}` does not read after a crash: {e}", path.display()))?;
    let k: u64 = state
        .message
        .strip_prefix("write ")
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("`{}` has no version: {:?}", path.display(), state.message));
    let expected = State {
        serial: state.serial,
        ..version(k)
    };
    assert!(
        state == expected,
        "`{}` is not a complete version {k}",
        path.display()
    );
    Some(state)
}

/// Writes a few versions and checks the last one and its backup. With
/// `CRASH_DIR` set it is the writer process of
/// `a_killed_writer_leaves_complete_states`: it writes versions until killed.
#[test]
fn successive_writes_keep_whole_versions() {
    match std::env::var_os(CRASH_DIR) {
        Some(dir) => write_versions(&Path::new(&dir).join(STATE), u64::MAX),
        None => {
            let dir = tempfile::tempdir().expect("dir");
            let path = dir.path().join(STATE);
            write_versions(&path, 4);
            let state = identify(&path).expect("state written");
            assert_eq!((state.serial, state.message.as_str()), (4, "write 4"));
            assert_eq!(identify(&backup_path(&path)).map(|s| s.serial), Some(3));
        }
    }
}

/// Writes `count` versions after the one on disk, every third compressed.
fn write_versions(path: &Path, count: u64) {
    let start = read(path, &mut Warnings::default())
        .expect("readable state")
        .map_or(0, |state| state.serial);
    for k in (start + 1)..=start.saturating_add(count) {
        let mut state = State {
            serial: k - 1,
            ..version(k)
        };
        let options = WriteOptions {
            compressed: k % 3 == 0,
            ..WriteOptions::default()
        };
        write(path, &mut state, &options).expect("write");
    }
}

fn random_delay(round: u64) -> Duration {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mixed = (u64::from(nanos) ^ round.wrapping_mul(0x9E37_79B9_7F4A_7C15)) % 60;
    Duration::from_millis(5 + mixed)
}

/// Waits (at most 20 s, for a loaded machine) until the writer just started
/// has written past `serial`, so that every kill lands among writes rather
/// than during the process start.
fn wait_for_a_write(path: &Path, serial: Option<u64>) {
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while std::time::Instant::now() < deadline {
        let written = identify(path).map(|state| state.serial);
        if written.is_some_and(|now| serial.is_none_or(|before| now > before)) {
            return;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    panic!("the writer wrote nothing within 20 s");
}

#[test]
fn a_killed_writer_leaves_complete_states() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join(STATE);
    let exe = std::env::current_exe().expect("test binary");
    let mut serials = Vec::new();
    for round in 0..40u64 {
        let mut child = Command::new(&exe)
            .args([
                "state::successive_writes_keep_whole_versions",
                "--exact",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CRASH_DIR, dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the writer");
        wait_for_a_write(&path, serials.last().copied());
        std::thread::sleep(random_delay(round));
        child.kill().expect("SIGKILL the writer");
        child.wait().expect("reap the writer");
        if let Some(state) = identify(&path) {
            assert!(
                serials.last().is_none_or(|&last| state.serial >= last),
                "serial went back"
            );
            serials.push(state.serial);
        }
        identify(&backup_path(&path));
    }
    serials.dedup();
    assert!(
        serials.len() >= 5,
        "the writer hardly wrote: serials {serials:?}"
    );
    assert!(!lock_path(&path).exists());
}
