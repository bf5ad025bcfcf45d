//! The fingerprint cache (`STATE.fingerprints`): `--changed` and `plan`
//! read only the files whose size, time or inode changed since a deploy
//! recorded their digests; a missing or damaged cache is rebuilt.
//!
//! That a file was not read is shown without timing it: the file is
//! rewritten in place (same inode, same size) and given back its
//! modification time, a change only its content tells. A run that uses
//! the cache does not see it; once the cache is gone, the change is seen.

use crate::common::{demo_copy, files_below, hub_pinned, Output};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

const CACHE: &str = "demo.state.fingerprints";
/// A plain file of a component (not executable, so that `chmod 000` keeps
/// the bit the digest covers): changing it changes only the folder's
/// content.
const QUIET_FILE: &str = "components/network/NOTES.txt";

fn deploy(dir: &Path, extra: &[&str]) -> Output {
    let args = [
        &["deploy", "hub.yaml", "params.yaml", "-s", "demo.state"],
        extra,
    ]
    .concat();
    hub_pinned(dir, &args)
}

fn plan(dir: &Path) -> Output {
    hub_pinned(
        dir,
        &["plan", "hub.yaml", "params.yaml", "-s", "demo.state"],
    )
}

/// The demo, its files an hour old (as a checkout's are, long before a
/// deploy), deployed once: the cache is written.
fn deployed_demo() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = demo_copy();
    std::fs::write(dir.join(QUIET_FILE), "Network notes.\n").expect("write");
    for file in files_below(&dir.join("components")) {
        set_mtime(&file, SystemTime::now() - Duration::from_secs(3600));
    }
    deploy(&dir, &[]).success();
    assert!(dir.join(CACHE).is_file(), "a deploy writes the cache");
    (tmp, dir)
}

fn set_mtime(path: &Path, time: SystemTime) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open");
    file.set_modified(time).expect("set mtime");
}

/// Changes a byte of `path` in place and gives it back its time.
fn rewrite_in_place(path: &Path) {
    let before = std::fs::metadata(path)
        .expect("stat")
        .modified()
        .expect("mtime");
    let mut bytes = std::fs::read(path).expect("read");
    bytes[0] ^= 0x20;
    std::fs::write(path, bytes).expect("write");
    set_mtime(path, before);
}

fn line_of<'a>(out: &'a Output, component: &str) -> &'a str {
    out.stderr
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("{component} ")))
        .unwrap_or_else(|| panic!("no summary line for {component}:\n{}", out.stderr))
}

fn assert_unchanged(out: &Output, names: &[&str]) {
    out.success();
    for name in names {
        assert!(line_of(out, name).contains("unchanged"), "{}", out.stderr);
    }
}

fn is_current_cache(path: &Path) -> bool {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    serde_json::from_str::<serde_json::Value>(&text)
        .is_ok_and(|v| v["format"] == "hub-fingerprints" && v["version"] == 1)
}

#[test]
fn a_no_op_changed_deploy_does_not_read_unchanged_files() {
    let (_tmp, dir) = deployed_demo();
    let cache = std::fs::read(dir.join(CACHE)).expect("cache");
    let mode = std::fs::metadata(dir.join(CACHE))
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the cache is private");
    rewrite_in_place(&dir.join(QUIET_FILE));
    // Unreadable too, for a user that permissions stop (not root).
    let quiet = dir.join(QUIET_FILE);
    std::fs::set_permissions(&quiet, std::fs::Permissions::from_mode(0o000)).expect("chmod");
    let out = deploy(&dir, &["--changed"]);
    std::fs::set_permissions(&quiet, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    assert_unchanged(&out, &["network", "database", "app"]);
    assert!(!out.stdout.contains("creating network"), "{}", out.stdout);
    assert!(std::fs::read(dir.join(CACHE)).expect("cache").len() >= cache.len());

    // Without the cache the same change is seen: the run above did not
    // read the file.
    std::fs::remove_file(dir.join(CACHE)).expect("rm");
    let out = deploy(&dir, &["--changed", "--why"]);
    out.success()
        .stderr_has("hub: network runs: folder content changed");
}

#[test]
fn a_touched_file_is_read_again() {
    let (_tmp, dir) = deployed_demo();
    // Content and time changed: seen.
    let script = dir.join("components/database/undeploy.sh");
    let mut text = std::fs::read_to_string(&script).expect("read");
    text.push_str("# changed\n");
    std::fs::write(&script, text).expect("write");
    // Time changed alone: read again, found the same.
    set_mtime(
        &dir.join(QUIET_FILE),
        SystemTime::now() - Duration::from_secs(60),
    );
    let out = deploy(&dir, &["--changed", "--why"]);
    out.success()
        .stderr_has("hub: database runs: folder content changed")
        .stderr_has("hub: network unchanged");
}

#[test]
fn a_deleted_or_damaged_cache_is_rebuilt() {
    let (_tmp, dir) = deployed_demo();
    std::fs::remove_file(dir.join(CACHE)).expect("rm");
    assert_unchanged(
        &deploy(&dir, &["--changed"]),
        &["network", "database", "app"],
    );
    assert!(is_current_cache(&dir.join(CACHE)), "rebuilt");
    for damaged in [
        "{\"format\":\"hub-fing",
        "\0\0\0\0",
        "{\"format\":\"hub-fingerprints\",\"version\":7,\"files\":{}}",
    ] {
        std::fs::write(dir.join(CACHE), damaged).expect("write");
        assert_unchanged(
            &deploy(&dir, &["--changed"]),
            &["network", "database", "app"],
        );
        assert!(
            is_current_cache(&dir.join(CACHE)),
            "rebuilt after {damaged:?}"
        );
    }
}

#[test]
fn plan_uses_the_cache_and_writes_nothing() {
    let (_tmp, dir) = deployed_demo();
    // A --changed deploy caches what the first deploy rendered.
    deploy(&dir, &["--changed"]).success();
    rewrite_in_place(&dir.join(QUIET_FILE));
    let cache = std::fs::read(dir.join(CACHE)).expect("cache");
    let cached = plan(&dir);
    cached.success();
    assert!(
        !cached.stdout.contains("folder content changed"),
        "{}",
        cached.stdout
    );
    assert_eq!(
        std::fs::read(dir.join(CACHE)).expect("cache"),
        cache,
        "plan leaves the cache as it was"
    );

    std::fs::remove_file(dir.join(CACHE)).expect("rm");
    let uncached = plan(&dir);
    uncached.success();
    assert!(
        uncached.stdout.contains("folder content changed"),
        "{}",
        uncached.stdout
    );
    assert!(!dir.join(CACHE).exists(), "plan writes no cache");
}
