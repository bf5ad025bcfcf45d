use super::*;
use crate::model::{CapturedOutput, ComponentState, State};
use crate::Clock;

fn clock() -> Clock {
    Clock::from_env(&|name| match name {
        "HUB_NOW" => Some("2026-01-02T03:04:05Z".into()),
        _ => None,
    })
    .expect("clock")
}

fn run(plan: &str) -> RunRecord {
    RunRecord {
        plan: plan.into(),
        plan_file: "plan.json".into(),
        stack: "demo".into(),
        started: "2026-01-02T03:04:05Z".into(),
        by: "alice on ci".into(),
        closing: false,
    }
}

#[test]
fn the_first_job_opens_the_run_the_next_join_and_another_plan_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let place = RunPlace::of(&dir.path().join("s.state")).expect("place");
    assert_eq!(place.read_run().expect("read"), None);
    place.refuse_open().expect("nothing open");
    assert_eq!(place.open(&run("p1")).expect("open"), Opened::Created);
    assert_eq!(
        place.open(&run("p1")).expect("join"),
        Opened::Joined(run("p1"))
    );
    let other = place.open(&run("p2")).expect_err("another plan");
    assert!(matches!(other, RunError::OtherRun { .. }), "{other}");
    let hint = other.hint().expect("hint");
    assert!(
        hint.contains("hub run finish --plan plan.json -s "),
        "{hint}"
    );
    assert!(matches!(place.refuse_open(), Err(RunError::Open { .. })));
    place.still_open("p1").expect("open for p1");
    assert!(place.still_open("p2").is_err());
    place.set_closing(&run("p1"), true).expect("closing");
    let closing = place.still_open("p1").expect_err("closing");
    assert!(matches!(closing, RunError::Closing { .. }), "{closing}");
    assert!(matches!(
        place.open(&run("p1")),
        Err(RunError::Closing { .. })
    ));
    place.set_closing(&run("p1"), false).expect("open again");
    place.still_open("p1").expect("open again");
    place.close().expect("close");
    assert!(matches!(
        place.still_open("p1"),
        Err(RunError::NotOpen { .. })
    ));
    assert!(!dir.path().join("s.state.run").exists());
}

#[test]
fn a_lease_is_one_jobs_and_a_stolen_lease_is_lost() {
    let dir = tempfile::tempdir().expect("dir");
    let place = RunPlace::of(&dir.path().join("s.state")).expect("place");
    let lease = Lease::take(&place, "db", &clock()).expect("lease");
    lease.prove().expect("held");
    let second = Lease::take(&place, "db", &clock())
        .map(|_| ())
        .expect_err("held");
    assert!(matches!(second, RunError::LeaseHeld { .. }), "{second}");
    // Another component's lease is independent.
    let web = Lease::take(&place, "web", &clock()).expect("other component");
    assert_eq!(busy(&place).expect("busy"), ["db", "web"]);
    web.release().expect("release");
    assert_eq!(busy(&place).expect("busy"), ["db"]);
    // Stolen: removed and taken by another holder.
    let lock = dir.path().join("s.state.run").join("db.lock");
    std::fs::remove_file(&lock).expect("steal");
    std::fs::write(
        &lock,
        "pid: 1\nhost: elsewhere\nuser: bob\noperation: deploy db\nstarted: x\nid: theirs\n",
    )
    .expect("plant");
    let lost = lease.prove().expect_err("stolen");
    assert!(matches!(lost, RunError::LeaseLost { .. }), "{lost}");
    assert!(lost.to_string().contains("now belongs to"), "{lost}");
}

#[test]
fn job_records_round_trip_and_apply_to_a_state() {
    let dir = tempfile::tempdir().expect("dir");
    let place = RunPlace::of(&dir.path().join("s.state")).expect("place");
    let mut after = State::default();
    after.components.insert(
        "db".into(),
        ComponentState {
            status: "deployed".into(),
            ..ComponentState::default()
        },
    );
    after.captured_outputs.push(CapturedOutput {
        component: "db".into(),
        name: "host".into(),
        value: yaml_serde::Value::String("db.local".into()),
        ..CapturedOutput::default()
    });
    after.provides.insert("postgres".into(), vec!["db".into()]);
    let mut record = JobRecord::from_state(&after, "db");
    record.plan = "p1".into();
    record.status = DEPLOYED.into();
    place.write_job(&record).expect("write");
    assert_eq!(place.read_job("db").expect("read"), Some(record.clone()));
    assert_eq!(place.jobs().expect("jobs"), [record.clone()]);
    assert_eq!(place.read_job("web").expect("read"), None);
    let mut state = State::default();
    record.apply(&mut state);
    record.apply(&mut state);
    assert_eq!(state.components["db"].status, "deployed");
    assert_eq!(state.captured_outputs.len(), 1);
    assert_eq!(state.provides["postgres"], ["db"]);
}

#[test]
fn plan_ids_are_the_start_of_the_files_digest() {
    assert_eq!(plan_id(b"x").len(), 16);
    assert_ne!(plan_id(b"x"), plan_id(b"y"));
}

#[test]
fn a_link_planted_as_the_run_record_is_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let place = RunPlace::of(&dir.path().join("s.state")).expect("place");
    let folder = dir.path().join("s.state.run");
    std::fs::create_dir(&folder).expect("mkdir");
    std::fs::write(dir.path().join("elsewhere"), "{}").expect("write");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), folder.join("run.json"))
        .expect("link");
    let refused = place.read_run().expect_err("link");
    assert!(refused.to_string().contains("symbolic link"), "{refused}");
}
