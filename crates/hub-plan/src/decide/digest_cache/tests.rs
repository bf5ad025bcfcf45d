use super::super::fingerprint::folder_digest_with;
use super::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, SystemTime};

fn tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fs::create_dir_all(root.join("c/sub")).unwrap();
    fs::create_dir_all(root.join("c/.terraform")).unwrap();
    fs::write(root.join("c/main.tf"), "resource {}\n").unwrap();
    fs::write(root.join("c/sub/vars.tf"), "variable x {}\n").unwrap();
    fs::write(root.join("c/.terraform/provider"), vec![7u8; 100_000]).unwrap();
    fs::write(root.join("c/deploy.sh"), "#!/bin/sh\n").unwrap();
    fs::set_permissions(root.join("c/deploy.sh"), fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("main.tf", root.join("c/link")).unwrap();
    for file in ["main.tf", "sub/vars.tf", ".terraform/provider", "deploy.sh"] {
        set_age(&root.join("c").join(file), 3600);
    }
    dir
}

fn set_age(path: &Path, seconds: u64) {
    let then = SystemTime::now() - Duration::from_secs(seconds);
    set_mtime(path, then);
}

fn set_mtime(path: &Path, time: SystemTime) {
    let file = fs::File::options().write(true).open(path).unwrap();
    file.set_modified(time).unwrap();
}

fn mtime(path: &Path) -> SystemTime {
    fs::metadata(path).unwrap().modified().unwrap()
}

/// Rewrites `path` in place (same inode, same size) and gives it back
/// its modification time: only its content tells.
fn rewrite_in_place(path: &Path) {
    let before = mtime(path);
    let mut bytes = fs::read(path).unwrap();
    bytes[0] ^= 0x20;
    fs::write(path, bytes).unwrap();
    set_mtime(path, before);
}

fn digest(root: &Path, cache: Option<&DigestCache>) -> String {
    folder_digest_with(&root.join("c"), cache).unwrap()
}

fn cache_file(root: &Path) -> PathBuf {
    root.join("s.state.fingerprints")
}

/// A cold run (cache written), then a warm one.
fn warm(root: &Path) -> DigestCache {
    let cold = DigestCache::open(&cache_file(root), true);
    digest(root, Some(&cold));
    cold.save().unwrap();
    DigestCache::open(&cache_file(root), true)
}

#[test]
fn cached_digests_are_the_uncached_ones() {
    let dir = tree();
    let root = dir.path();
    let uncached = digest(root, None);
    let cold = DigestCache::open(&cache_file(root), true);
    assert_eq!(digest(root, Some(&cold)), uncached);
    assert_eq!(cold.reads(), 4);
    cold.save().unwrap();
    let warm = DigestCache::open(&cache_file(root), true);
    assert_eq!(digest(root, Some(&warm)), uncached);
    assert_eq!(warm.reads(), 0, "every file came from the cache");
}

#[test]
fn the_cache_file_is_private_and_rewritten_only_when_it_changed() {
    let dir = tree();
    let root = dir.path();
    let warm = warm(root);
    let mode = fs::metadata(cache_file(root)).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    let written = mtime(&cache_file(root));
    digest(root, Some(&warm));
    std::thread::sleep(Duration::from_millis(20));
    warm.save().unwrap();
    assert_eq!(mtime(&cache_file(root)), written);
}

#[test]
fn a_file_changed_in_place_is_served_from_the_cache_only_when_its_stat_matches() {
    let dir = tree();
    let root = dir.path();
    let before = digest(root, None);
    let warm = warm(root);
    rewrite_in_place(&root.join("c/main.tf"));
    // Same inode, size and time: the cache answers (which proves the
    // file was not read), and the uncached digest differs.
    assert_eq!(digest(root, Some(&warm)), before);
    assert_ne!(digest(root, None), before);
    // A touch is enough to have it read again.
    set_age(&root.join("c/main.tf"), 60);
    let touched = DigestCache::open(&cache_file(root), true);
    assert_eq!(digest(root, Some(&touched)), digest(root, None));
    assert_eq!(touched.reads(), 1);
}

#[test]
fn a_file_modified_in_the_tick_the_run_started_is_not_cached() {
    let dir = tree();
    let root = dir.path();
    let cold = DigestCache::open(&cache_file(root), true);
    // Modified at the very time the run started (same tick): racily
    // clean.
    let started = cold.started.unwrap();
    let same_tick = SystemTime::UNIX_EPOCH + Duration::new(started.0 as u64, started.1 as u32);
    set_mtime(&root.join("c/main.tf"), same_tick);
    digest(root, Some(&cold));
    cold.save().unwrap();
    // Changed again within that tick: its time stays the same.
    rewrite_in_place(&root.join("c/main.tf"));
    let next = DigestCache::open(&cache_file(root), true);
    assert_eq!(digest(root, Some(&next)), digest(root, None));
    assert_eq!(next.reads(), 1, "only the racily clean file is read");
}

#[test]
fn entries_not_older_than_the_cache_file_are_not_trusted() {
    let dir = tree();
    let root = dir.path();
    warm(root);
    // A cache file written before its entries' times (moved back, or
    // written by something else) cannot vouch for them.
    set_age(&cache_file(root), 7200);
    let next = DigestCache::open(&cache_file(root), true);
    assert_eq!(digest(root, Some(&next)), digest(root, None));
    assert_eq!(next.reads(), 4);
}

#[test]
fn entries_of_folders_not_walked_are_kept_and_deleted_files_dropped() {
    let dir = tree();
    let root = dir.path();
    fs::create_dir_all(root.join("d")).unwrap();
    fs::write(root.join("d/x"), "x").unwrap();
    set_age(&root.join("d/x"), 3600);
    let cold = DigestCache::open(&cache_file(root), true);
    digest(root, Some(&cold));
    folder_digest_with(&root.join("d"), Some(&cold)).unwrap();
    cold.save().unwrap();
    fs::remove_file(root.join("c/sub/vars.tf")).unwrap();
    let only_c = DigestCache::open(&cache_file(root), true);
    digest(root, Some(&only_c));
    only_c.save().unwrap();
    let text = fs::read_to_string(cache_file(root)).unwrap();
    assert!(text.contains("d/x"), "{text}");
    assert!(!text.contains("vars.tf"), "{text}");
    let again = DigestCache::open(&cache_file(root), true);
    folder_digest_with(&root.join("d"), Some(&again)).unwrap();
    assert_eq!(again.reads(), 0);
}

#[test]
fn a_damaged_or_foreign_cache_is_ignored_and_rewritten() {
    let dir = tree();
    let root = dir.path();
    let expected = digest(root, None);
    warm(root);
    let good = fs::read(cache_file(root)).unwrap();
    let foreign = String::from_utf8(good.clone())
        .unwrap()
        .replace("\"version\":1", "\"version\":9");
    let cut = good[..good.len() / 2].to_vec();
    for bad in [b"\0\0\0".to_vec(), cut, foreign.into_bytes()] {
        fs::write(cache_file(root), &bad).unwrap();
        let cache = DigestCache::open(&cache_file(root), true);
        assert_eq!(digest(root, Some(&cache)), expected);
        assert_eq!(cache.reads(), 4);
        cache.save().unwrap();
        let rebuilt = DigestCache::open(&cache_file(root), true);
        assert_eq!(digest(root, Some(&rebuilt)), expected);
        assert_eq!(rebuilt.reads(), 0);
    }
}

#[test]
fn a_read_only_cache_is_never_written() {
    let dir = tree();
    let root = dir.path();
    let cache = DigestCache::open(&cache_file(root), false);
    digest(root, Some(&cache));
    cache.save().unwrap();
    assert!(!cache_file(root).exists());
    let leftovers: Vec<_> = fs::read_dir(root).unwrap().flatten().collect();
    assert_eq!(leftovers.len(), 1, "only the tree: {leftovers:?}");
}
