//! Plans and deploys take turns: plans run side by side, a plan on a state
//! a run holds is refused naming the holder, `--lock-timeout` waits for
//! the holder instead (plan, deploy, the state commands), a dead holder's
//! lock blocks no plan.

use crate::crash::hub;
use crate::journal::{deploy_held_in_c2, fixture, killed_in_c2, pull, run};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const STATE: &str = "hub.yaml.state";
const DEPLOY: [&str; 4] = ["deploy", "hub.yaml.elaborate", "-s", STATE];
const PLAN: [&str; 4] = ["plan", "hub.yaml.elaborate", "-s", STATE];
const HELD: &str = "is locked: `deploy` started by tester";

/// What a command run while a deploy held the state gave.
struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
    took: Duration,
}

/// Runs each of `commands` in turn while a deploy holds the state of a
/// fresh fixture in `root`; the deploy lets go `release` after the last
/// command started (`None`: once they all ended). The deploy must end
/// well.
fn while_held(root: &Path, commands: &[&[&str]], release: Option<Duration>) -> Vec<Outcome> {
    let deploy = deploy_held_in_c2(root);
    let mut outcomes = Vec::new();
    for (i, args) in commands.iter().enumerate() {
        let last = i + 1 == commands.len();
        let letting_go = release.filter(|_| last).map(|delay| let_go(root, delay));
        let started = Instant::now();
        let (code, stdout, stderr) = run(root, args);
        outcomes.push(Outcome {
            code,
            stdout,
            stderr,
            took: started.elapsed(),
        });
        if let Some(thread) = letting_go {
            thread.join().expect("let go");
        }
    }
    if release.is_none() {
        let_go(root, Duration::ZERO).join().expect("let go");
    }
    finished(deploy);
    outcomes
}

/// Lets the held deploy go on after `delay` (in a thread).
fn let_go(root: &Path, delay: Duration) -> std::thread::JoinHandle<()> {
    let hang = root.join("hang");
    std::thread::spawn(move || {
        std::thread::sleep(delay);
        std::fs::remove_file(hang).expect("unhang");
    })
}

fn finished(mut deploy: Child) {
    let status = deploy.wait().expect("wait for the deploy");
    assert!(status.success(), "the held deploy failed: {status}");
}

#[track_caller]
fn refused(outcome: &Outcome, waited: Option<&str>) {
    let stderr = &outcome.stderr;
    assert_eq!(outcome.code, 1, "{stderr}");
    assert!(stderr.contains(HELD), "{stderr}");
    if let Some(waited) = waited {
        assert!(stderr.contains(&format!("(waited {waited}")), "{stderr}");
    }
}

#[test]
fn plans_run_side_by_side() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    fixture(root);
    assert_eq!(run(root, &DEPLOY).0, 0);
    let plans: Vec<Child> = (0..2)
        .map(|_| {
            hub(root, &PLAN)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn a plan")
        })
        .collect();
    for plan in plans {
        let out = plan.wait_with_output().expect("plan");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{stderr}");
        assert!(String::from_utf8_lossy(&out.stdout).contains("c2"));
    }
    assert!(
        !root.join("hub.yaml.state.lock").exists(),
        "plans take no lock"
    );
}

#[test]
fn a_plan_while_a_deploy_holds_the_state_is_refused_naming_the_holder() {
    let dir = tempfile::tempdir().expect("tmp");
    let [plan] = &while_held(dir.path(), &[&PLAN], None)[..] else {
        panic!("one plan");
    };
    refused(plan, None);
    assert!(
        plan.stdout.is_empty(),
        "no plan is printed: {}",
        plan.stdout
    );
    assert!(plan.stderr.contains("(process "), "{}", plan.stderr);
    assert!(plan.stderr.contains("--lock-timeout"), "{}", plan.stderr);
}

#[test]
fn a_plan_with_a_lock_timeout_waits_for_the_deploy_or_gives_up() {
    let dir = tempfile::tempdir().expect("tmp");
    let short = [&PLAN[..], &["--lock-timeout", "1s"]].concat();
    let long = [&PLAN[..], &["--lock-timeout", "30s"]].concat();
    let outcomes = while_held(
        dir.path(),
        &[&short, &long],
        Some(Duration::from_millis(800)),
    );
    refused(&outcomes[0], Some("1"));
    assert!(outcomes[0].took >= Duration::from_secs(1));

    let waited = &outcomes[1];
    assert_eq!(waited.code, 0, "{}", waited.stderr);
    assert!(waited.took >= Duration::from_millis(700));
    let told = "hub: waiting up to 30s for the lock on `hub.yaml.state`: `deploy`";
    assert_eq!(
        waited.stderr.matches(told).count(),
        1,
        "said once whom it waits for:\n{}",
        waited.stderr
    );
    assert!(waited.stdout.contains("c3"), "{}", waited.stdout);
}

#[test]
fn a_deploy_with_a_lock_timeout_waits_for_the_other_or_gives_up() {
    let dir = tempfile::tempdir().expect("tmp");
    let short = [&DEPLOY[..], &["--lock-timeout", "300ms"]].concat();
    let long = [&DEPLOY[..], &["--lock-timeout", "1m"]].concat();
    let outcomes = while_held(
        dir.path(),
        &[&short, &long],
        Some(Duration::from_millis(800)),
    );
    refused(&outcomes[0], Some("0.3s)"));
    assert_eq!(outcomes[1].code, 0, "{}", outcomes[1].stderr);
    assert!(outcomes[1]
        .stderr
        .contains("hub: waiting up to 1m for the lock"));
    let state = pull(dir.path());
    assert_eq!(
        state.operations.len(),
        2,
        "both deploys ran, one after the other"
    );
}

#[test]
fn a_dead_holders_lock_does_not_block_a_plan() {
    let dir = killed_in_c2();
    let root = dir.path();
    assert!(
        root.join("hub.yaml.state.lock").exists(),
        "the killed run's lock"
    );
    let (code, stdout, stderr) = run(root, &PLAN);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("c2"), "{stdout}");
}

#[test]
fn state_commands_respect_the_lock() {
    let dir = tempfile::tempdir().expect("tmp");
    let rm: &[&str] = &["state", "rm", "c1", "--yes", "-s", STATE];
    let mv = ["state", "mv", "c1", "first", "-s", STATE, "--lock-timeout"];
    let (short, long) = ([&mv[..], &["0.2s"]].concat(), [&mv[..], &["1m"]].concat());
    let list: &[&str] = &["state", "list", "-s", STATE];
    let outcomes = while_held(
        dir.path(),
        &[list, rm, &short, &long],
        Some(Duration::from_millis(500)),
    );
    let progress = &outcomes[0];
    assert_eq!(progress.code, 0, "list takes no lock: {}", progress.stderr);
    assert!(
        progress
            .stdout
            .lines()
            .any(|l| l.starts_with("c2 ") && l.contains(" deploying ")),
        "the running deploy's progress shows:\n{}",
        progress.stdout
    );
    refused(&outcomes[1], None);
    refused(&outcomes[2], Some("0.2s)"));
    assert_eq!(outcomes[3].code, 0, "{}", outcomes[3].stderr);
    let state = pull(dir.path());
    assert!(
        state.components.contains_key("first"),
        "renamed after the deploy"
    );
    assert_eq!(
        state.components["c3"].status, "deployed",
        "the deploy ran to its end"
    );
}
