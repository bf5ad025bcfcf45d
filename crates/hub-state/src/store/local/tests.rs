use super::*;
use crate::backend::StateStore;
use crate::clock::Clock;
use crate::layout::StateFormat;
use crate::model::State;
use crate::{journal, StackMeta};

#[test]
fn a_local_store_appends_folds_and_locks() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("s");
    let clock = Clock::system();
    let mut first = State::new(StackMeta::default(), Vec::new());
    first.serial = 1;
    first.timestamp = "2026-01-01T00:00:00Z".into();
    let text = crate::render(&first).expect("render");
    let mut store = LocalStore::locked(&path, "deploy", &clock).expect("lock");
    assert!(crate::lock_path(&path).exists());
    assert!(store
        .load(&mut Warnings::default())
        .expect("load")
        .is_none());
    store.fold(1, None, text.as_bytes()).expect("fold");
    assert_eq!(store.location(), path);

    let mut second = first.clone();
    second.serial = 2;
    second.status = "deploying".into();
    let record = journal::encode(&journal::whole(&second, 2)).expect("encode");
    store.append("op", &record).expect("append");
    let loaded = store.load(&mut Warnings::default()).expect("load");
    assert_eq!(loaded.as_ref(), Some(&second));
    let pulled = store
        .pull(StateFormat::Linear, &mut Warnings::default())
        .expect("pull")
        .expect("a state");
    assert!(pulled.contains("status: deploying"), "{pulled}");

    // A second store cannot take the lock while the first holds it.
    assert!(LocalStore::locked(&path, "deploy", &clock).is_err());
    store.unlock().expect("unlock");
    assert!(!crate::lock_path(&path).exists());
    store.lock("deploy", &clock).expect("lock again");
    let folded = crate::render(&second).expect("render");
    store
        .fold(2, Some(text.as_bytes()), folded.as_bytes())
        .expect("fold");
    assert!(!journal::journal_path(&path).exists());
    assert_eq!(
        store.load(&mut Warnings::default()).expect("load"),
        Some(second)
    );
}
