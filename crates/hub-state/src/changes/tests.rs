use super::*;
use crate::beside::Planted;
use std::os::unix::fs::PermissionsExt;

fn registry() -> (tempfile::TempDir, Registry) {
    let dir = tempfile::tempdir().expect("dir");
    let registry = Registry::open(&dir.path().join("hub.state")).expect("registry");
    (dir, registry)
}

fn clock() -> Clock {
    Clock::pinned("2026-01-01T00:00:00Z").expect("clock")
}

fn stamp() -> Stamp {
    Stamp {
        time: "2026-01-01T00:00:00Z".into(),
        author: Some("alice".into()),
        sha: Some("abc123".into()),
    }
}

fn plan(status: Status) -> Record {
    Record::Plan(PlanRecord {
        stamp: stamp(),
        status,
        verb: "deploy".into(),
        reason: (status == Status::Failed).then(|| "`db` would fail".into()),
        plan: Some(serde_json::json!({"version": 1})),
        lineage: None,
        serial: Some(3),
        stack: Vec::new(),
        association: None,
        queue: None,
    })
}

fn review(by: &str, sha: &str, state: ReviewState) -> Record {
    Record::Review(ReviewRecord {
        stamp: Stamp {
            time: "2026-01-01T00:00:00Z".into(),
            author: Some(by.into()),
            sha: Some(sha.into()),
        },
        state,
        association: Some("MEMBER".into()),
        change_author: Some("alice".into()),
        event: None,
    })
}

#[test]
fn a_later_dismissal_or_request_for_changes_removes_an_approval() {
    let records: Vec<(u64, Record)> = [
        review("bob", "aaa1111", ReviewState::Approved),
        review("carol", "aaa1111", ReviewState::Approved),
        review("Bob", "aaa1111", ReviewState::Dismissed),
        review("dave", "aaa1111", ReviewState::Approved),
        review("dave", "bbb2222", ReviewState::ChangesRequested),
        review("erin", "aaa1111", ReviewState::ChangesRequested),
        review("erin", "bbb2222", ReviewState::Approved),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, r)| (i as u64 + 1, r))
    .collect();
    let approvals = approvals_in_effect(&records);
    let who: Vec<(&str, &str)> = approvals
        .iter()
        .map(|r| {
            (
                r.stamp.author.as_deref().unwrap_or_default(),
                r.stamp.sha.as_deref().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(who, [("carol", "aaa1111"), ("erin", "bbb2222")]);
    // A review is not a plan: the summary does not change.
    assert!(summarise(&records).latest_plan.is_none());
}

fn lock(change: &str, reason: Held) -> ApplyLock {
    ApplyLock {
        change: Some(change.into()),
        since: "2026-01-01T00:00:00Z".into(),
        reason,
        sha: None,
        author: None,
        run: None,
    }
}

#[test]
fn records_are_numbered_in_order_and_read_back() {
    let (dir, registry) = registry();
    assert_eq!(registry.append("7", &plan(Status::Failed)).expect("1"), 1);
    assert_eq!(
        registry.append("7", &plan(Status::Succeeded)).expect("2"),
        2
    );
    registry.append("12", &plan(Status::Succeeded)).expect("12");
    let records = registry.records("7").expect("records");
    assert_eq!(records.len(), 2);
    assert_eq!(records[1], (2, plan(Status::Succeeded)));
    assert_eq!(registry.changes().expect("changes"), ["7", "12"]);
    let file = dir.path().join("hub.state.changes/changes/7/000001.json");
    let mode = std::fs::metadata(&file).expect("file").permissions().mode();
    assert_eq!(mode & 0o777, 0o600);
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path().join("hub.state.changes/changes/7"))
        .expect("folder")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn writers_racing_for_a_number_each_get_their_own() {
    let (_dir, registry) = registry();
    let state = registry.state().to_path_buf();
    let numbers: Vec<u64> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let state = state.clone();
                scope.spawn(move || {
                    let registry = Registry::open(&state).expect("registry");
                    registry
                        .append("1", &plan(Status::Succeeded))
                        .expect("append")
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("join"))
            .collect()
    });
    let mut sorted = numbers.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (1..=8).collect::<Vec<u64>>(), "{numbers:?}");
    assert_eq!(registry.records("1").expect("records").len(), 8);
}

#[test]
fn a_lock_changed_since_it_was_read_is_not_replaced() {
    let (_dir, registry) = registry();
    let clock = clock();
    assert!(registry
        .set_lock(&lock("1", Held::Applying), None, &clock)
        .expect("take"));
    // A second taker that saw no lock loses.
    assert!(!registry
        .set_lock(&lock("2", Held::Applying), None, &clock)
        .expect("lost"));
    let (_, seen) = registry.apply_lock().expect("read");
    let seen = seen.expect("revision");
    assert!(registry
        .set_lock(&lock("1", Held::Applied), Some(&seen), &clock)
        .expect("update"));
    // The revision read before that update is out of date now.
    assert!(!registry
        .set_lock(&lock("2", Held::Applying), Some(&seen), &clock)
        .expect("stale"));
    assert_eq!(
        registry.holder().expect("holder"),
        Some(lock("1", Held::Applied))
    );
}

#[test]
fn update_lock_retries_until_its_write_goes_through() {
    let (_dir, registry) = registry();
    let clock = clock();
    let mut attempts = 0;
    registry
        .update_lock(&clock, |current| {
            attempts += 1;
            if attempts == 1 {
                // Another writer gets in between this read and the write.
                let other = Registry::open(registry.state()).expect("other");
                assert!(other
                    .set_lock(&lock("9", Held::Failed), None, &clock)
                    .expect("other"));
            }
            let holder = current.and_then(|l| l.change.clone());
            Ok((Some(lock("1", Held::Applying)), holder))
        })
        .expect("update");
    assert_eq!(attempts, 2);
}

#[test]
fn links_and_foreign_files_in_the_registry_are_refused() {
    let (dir, registry) = registry();
    let victim = dir.path().join("victim");
    std::fs::create_dir(&victim).expect("victim");
    std::os::unix::fs::symlink(&victim, dir.path().join("hub.state.changes")).expect("link");
    let error = registry
        .append("1", &plan(Status::Succeeded))
        .expect_err("refused");
    let ChangeError::Io { source, .. } = &error else {
        panic!("{error:?}");
    };
    assert!(Planted::of(source).is_some(), "{error}");
    assert!(error.hint().is_some_and(|h| h.contains("remove it")));
    assert_eq!(std::fs::read_dir(&victim).expect("victim").count(), 0);

    let (dir, registry) = super::tests::registry();
    registry
        .append("1", &plan(Status::Succeeded))
        .expect("append");
    let lock_file = dir.path().join("hub.state.changes/apply-lock.json");
    let elsewhere = dir.path().join("elsewhere.json");
    std::fs::write(&elsewhere, "{}").expect("elsewhere");
    std::os::unix::fs::symlink(&elsewhere, &lock_file).expect("link");
    let error = registry.apply_lock().expect_err("refused");
    assert!(error.to_string().contains("symbolic link"), "{error}");
    let record = dir.path().join("hub.state.changes/changes/1/000001.json");
    std::fs::hard_link(&record, dir.path().join("copy.json")).expect("hard link");
    let error = registry.records("1").expect_err("refused");
    assert!(error.to_string().contains("hard links"), "{error}");
}

#[test]
fn ids_are_names_never_paths() {
    for bad in ["", "../x", "a/b", ".hidden", "-f", "a b"] {
        assert!(check_id(bad).is_err(), "{bad}");
    }
    for good in ["1", "42", "feature-x", "v1.2_3"] {
        check_id(good).expect(good);
    }
}

#[test]
fn an_apply_passes_the_rules_or_says_which_it_breaks() {
    let (_dir, registry) = registry();
    let clock = clock();
    let refused = |id: &str| {
        registry
            .plan_to_apply(id, "deploy")
            .expect_err(id)
            .to_string()
    };
    assert!(refused("1").contains("has no plan"), "{}", refused("1"));
    registry.append("1", &plan(Status::Failed)).expect("plan");
    assert!(
        refused("1").contains("failed: `db` would fail"),
        "{}",
        refused("1")
    );
    registry
        .append("1", &plan(Status::Succeeded))
        .expect("plan");
    assert_eq!(registry.plan_to_apply("1", "deploy").expect("ok").0, 2);
    registry
        .append(
            "1",
            &Record::Stale {
                stamp: stamp(),
                reason: "change `2` was merged".into(),
            },
        )
        .expect("stale");
    assert!(
        refused("1").contains("is stale: change `2` was merged"),
        "{}",
        refused("1")
    );
    registry
        .set_lock(&lock("3", Held::Failed), None, &clock)
        .expect("lock");
    assert_eq!(
        refused("1"),
        "change `1` cannot apply: change `3` holds the apply lock since 2026-01-01T00:00:00Z (its apply failed, and only it may apply until it succeeds)"
    );
}

#[test]
fn the_waiting_marker_holds_plans_back_until_removed() {
    let (_dir, registry) = registry();
    registry.check_no_apply_waiting().expect("nothing waits");
    // The marker of an apply run by another process, still alive.
    let mut other = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    let mut holder = LockInfo::current("apply", &clock());
    (holder.pid, holder.process_start) = (other.id(), None);
    let waiting = Waiting {
        change: "4".into(),
        holder,
        expires: None,
    };
    let bytes = serde_json::to_vec(&waiting).expect("json");
    registry.store.overwrite(WAITING, &bytes).expect("mark");
    let error = registry.check_no_apply_waiting().expect_err("held");
    let ChangeError::State(error) = error else {
        panic!("{error}");
    };
    assert!(error.is_held(), "{error}");
    assert!(error.to_string().contains("apply of change 4"), "{error}");
    other.kill().expect("kill");
    other.wait().expect("wait");
    // Its process gone, the marker no longer holds anyone back.
    registry.check_no_apply_waiting().expect("dead holder");
    // On another host: it counts until it expires.
    let mut elsewhere = LockInfo::current("apply", &clock());
    elsewhere.host = "build-7.example".into();
    for (expires, counts) in [(epoch_seconds() + 600, true), (epoch_seconds() - 1, false)] {
        let waiting = Waiting {
            change: "6".into(),
            holder: elsewhere.clone(),
            expires: Some(expires),
        };
        let bytes = serde_json::to_vec(&waiting).expect("json");
        registry.store.overwrite(WAITING, &bytes).expect("mark");
        assert_eq!(registry.waiting().expect("read").is_some(), counts);
    }
    let me = LockInfo::current("apply", &clock());
    registry
        .mark_waiting("5", &me, std::time::Duration::from_secs(5))
        .expect("mark");
    // Another apply's end leaves this one's marker alone.
    let other = LockInfo::current("apply", &clock());
    registry.done_waiting(&other).expect("not ours");
    let (kept, _) = registry.store.read(WAITING).expect("read").expect("kept");
    let kept: Waiting = serde_json::from_slice(&kept).expect("json");
    assert_eq!(kept.holder.id, me.id);
    registry.done_waiting(&me).expect("done");
    registry.check_no_apply_waiting().expect("free again");
}

#[test]
fn another_users_record_is_refused() {
    let (dir, registry) = registry();
    registry
        .append("1", &plan(Status::Succeeded))
        .expect("append");
    let record = dir.path().join("hub.state.changes/changes/1/000001.json");
    // SAFETY: geteuid has no preconditions and cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        // Only root can give a file away; the check itself is beside.rs's,
        // tested there for every file beside a state.
        eprintln!("not root: another user's record cannot be made here");
        return;
    }
    std::os::unix::fs::chown(&record, Some(4242), None).expect("chown");
    let error = registry.records("1").expect_err("refused");
    assert!(
        error.to_string().contains("belongs to user 4242"),
        "{error}"
    );
    let error = registry.append("1", &plan(Status::Failed));
    // A new record beside it is fine; reading them all is not.
    assert_eq!(error.expect("a new record"), 2);
    assert!(registry.plan_to_apply("1", "deploy").is_err());
}

#[test]
fn ids_never_name_the_registrys_own_documents() {
    let (dir, registry) = registry();
    let clock = clock();
    for id in [
        "apply-lock.json",
        "apply-waiting.json",
        "changes",
        "PR-1",
        "pr-1",
    ] {
        registry.append(id, &plan(Status::Succeeded)).expect(id);
    }
    registry
        .set_lock(&lock("1", Held::Applied), None, &clock)
        .expect("lock");
    assert_eq!(
        registry
            .holder()
            .expect("lock")
            .expect("held")
            .change
            .as_deref(),
        Some("1")
    );
    registry.check_no_apply_waiting().expect("no marker");
    assert_eq!(
        registry.changes().expect("changes"),
        [
            "PR-1",
            "apply-lock.json",
            "apply-waiting.json",
            "changes",
            "pr-1"
        ]
    );
    assert_eq!(registry.records("PR-1").expect("records").len(), 1);
    let top = dir.path().join("hub.state.changes");
    assert!(top.join("apply-lock.json").is_file());
    assert!(top.join("changes/apply-lock.json/000001.json").is_file());
    assert!(top.join("changes/_p_r-1/000001.json").is_file());
}

#[test]
fn a_registry_of_the_earlier_layout_is_still_read_and_numbered_on() {
    let (dir, registry) = registry();
    let top = dir.path().join("hub.state.changes");
    for folder in ["", "7", "changes"] {
        let path = top.join(folder);
        std::fs::create_dir_all(&path).expect("folder");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o700)).expect("mode");
    }
    let bytes = serde_json::to_vec(&plan(Status::Failed)).expect("json");
    for file in ["7/000001.json", "changes/000001.json"] {
        let path = top.join(file);
        std::fs::write(&path, &bytes).expect("write");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("mode");
    }
    assert_eq!(registry.changes().expect("changes"), ["7", "changes"]);
    assert_eq!(
        registry.append("7", &plan(Status::Succeeded)).expect("2"),
        2
    );
    let records = registry.records("7").expect("records");
    assert_eq!(records.iter().map(|r| r.0).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(registry.plan_to_apply("7", "deploy").expect("applies").0, 2);
    assert!(top.join("changes/7/000002.json").is_file());
    assert_eq!(registry.records("changes").expect("records").len(), 1);
}

#[test]
fn a_second_apply_of_a_change_is_refused_while_the_first_runs_here() {
    let (_dir, registry) = registry();
    let clock = clock();
    let first = LockInfo::current("apply", &clock);
    let mut alive = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("spawn sleep");
    let mut running = first.clone();
    (running.pid, running.process_start) = (alive.id(), None);
    let who = (None, Some("alice".to_string()));
    let taken = registry
        .take_lock("1", &running, who.clone(), &clock)
        .expect("first");
    let refused = registry
        .take_lock("1", &first, who.clone(), &clock)
        .expect_err("second");
    assert!(matches!(refused, ChangeError::Applying { .. }), "{refused}");
    assert!(
        refused
            .to_string()
            .contains("another apply of it is running"),
        "{refused}"
    );
    // Another change is refused for the lock itself.
    let other = registry
        .take_lock("2", &first, who.clone(), &clock)
        .expect_err("2");
    assert!(matches!(other, ChangeError::Held { .. }), "{other}");
    // An apply that ran nothing gives the lock back as it was.
    registry.give_back(&taken, &clock).expect("back");
    assert_eq!(registry.holder().expect("read"), None);
    alive.kill().expect("kill");
    alive.wait().expect("wait");
    // The first apply gone, the change may apply again.
    registry
        .take_lock("1", &running, who.clone(), &clock)
        .expect("again");
    registry
        .take_lock("1", &first, who, &clock)
        .expect("dead run");
}

#[test]
fn hints_name_the_stack_files_given_else_those_of_the_latest_plan() {
    let words = |files: &[&str]| {
        super::shell_words(&files.iter().map(|f| f.to_string()).collect::<Vec<_>>())
    };
    assert_eq!(
        words(&["hub.yaml", "params/prod.yaml"]),
        "hub.yaml params/prod.yaml"
    );
    assert_eq!(words(&["my stack.yaml"]), "'my stack.yaml'");
    assert_eq!(words(&["it's.yaml"]), "'it'\\''s.yaml'");
    let dir = tempfile::tempdir().expect("tmp");
    let registry = Registry::open(&dir.path().join("hub.state")).expect("open");
    let Record::Plan(mut latest) = plan(Status::Failed) else {
        unreachable!("a plan record")
    };
    assert_eq!(registry.stack_for(None), "hub.yaml");
    latest.stack = vec!["stack.yaml".into(), "env/prod.yaml".into()];
    assert_eq!(
        registry.stack_for(Some(&latest)),
        "stack.yaml env/prod.yaml"
    );
    let given = registry.with_stack(&["hub.yaml".into(), "p.yaml".into()]);
    assert_eq!(given.stack_for(Some(&latest)), "hub.yaml p.yaml");
}
