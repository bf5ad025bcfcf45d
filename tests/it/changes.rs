//! Changes (pull requests) planned and applied through the registry
//! beside the state: the rules of Terrateam one by one, on a local state
//! and on a state in the S3 test server.

use crate::common::{pinned_command, Output, Test};
use crate::remote::azurite::azurite;
use crate::remote::server::{server, Store};
use std::path::Path;

/// A checkout of the stack as change `dir` has it: one component, `app`,
/// whose deploy appends its message to `applied.log` at the root after
/// running `before` (`exit 3` makes it fail).
fn checkout(test: Test, dir: &str, message: &str, before: &str) -> Test {
    let stack = format!(
        "version: 1\nkind: stack\nmeta: {{name: prs}}\ncomponents:\n  - {{name: app, source: {{dir: app}}}}\nparameters:\n  - {{name: app.message, value: {message}}}\n"
    );
    let manifest = "version: 1\nkind: component\nmeta: {name: app}\nparameters:\n  - {name: app.message, env: MESSAGE}\n";
    test.file(&format!("{dir}/hub.yaml"), &stack)
        .file(&format!("{dir}/app/hub-component.yaml"), manifest)
        .script(
            &format!("{dir}/app/deploy.sh"),
            &format!("#!/bin/sh\n{before}\necho \"$MESSAGE\" >> ../../applied.log\n"),
        )
        .script(&format!("{dir}/app/undeploy.sh"), "#!/bin/sh\n")
}

/// Where the state is: as the checkouts name it and as the root does,
/// and the variables that reach it.
struct Place {
    from_checkout: String,
    from_root: String,
    env: Vec<(&'static str, String)>,
}

impl Place {
    fn local() -> Place {
        Place {
            from_checkout: "../hub.state".into(),
            from_root: "hub.state".into(),
            env: Vec::new(),
        }
    }

    /// A new bucket of the S3 test server; `None` without the server.
    fn s3(name: &str) -> Option<Place> {
        let server = server()?;
        let location = format!("s3://{}/hub.state", server.bucket(name));
        Some(Place {
            from_checkout: location.clone(),
            from_root: location,
            env: Store::env(server),
        })
    }

    /// A new container of the Azurite emulator; `None` without it.
    fn azure(name: &str) -> Option<Place> {
        let azurite = azurite()?;
        let location = format!("az://{}/hub.state", azurite.container(name));
        Some(Place {
            from_checkout: location.clone(),
            from_root: location,
            env: Store::env(azurite),
        })
    }

    /// hub in `dir` (a checkout, or "" for the root), pinned.
    fn hub(&self, test: &Test, dir: &str, args: &[&str]) -> Output {
        let folder = test.root().join(dir);
        let out = pinned_command(&folder, args)
            .envs(self.env.iter().map(|(k, v)| (k, v.as_str())))
            .env_remove("AWS_PROFILE")
            .env_remove("GITHUB_ACTOR")
            .env_remove("GITLAB_USER_LOGIN")
            .output()
            .expect("run hub");
        Output::of(out, &folder)
    }

    fn plan(&self, test: &Test, change: &str) -> Output {
        let dir = format!("pr{change}");
        let args = [
            "plan",
            "hub.yaml",
            "-s",
            &self.from_checkout,
            "--change",
            change,
            "--sha",
            "abc1234",
        ];
        self.hub(test, &dir, &args)
    }

    fn deploy(&self, test: &Test, change: &str) -> Output {
        let dir = format!("pr{change}");
        let args = ["deploy", "--change", change, "-s", &self.from_checkout];
        self.hub(test, &dir, &args)
    }

    fn change(&self, test: &Test, args: &[&str]) -> Output {
        let mut all = vec!["change"];
        all.extend_from_slice(args);
        all.extend_from_slice(&["-s", &self.from_root]);
        self.hub(test, "", &all)
    }
}

fn applied(test: &Test) -> String {
    std::fs::read_to_string(test.root().join("applied.log")).unwrap_or_default()
}

/// The refusal of an apply while `holder` holds the lock, exactly.
fn held_by(place: &Place, id: &str, holder: &str, why: &str) -> String {
    let state = &place.from_checkout;
    format!(
        "error: change `{id}` cannot apply: change `{holder}` holds the apply lock since 2026-01-01T00:00:00Z ({why})\n  help: once change `{holder}` is merged, run `hub change merged {holder} -s {state}`; to release its lock anyway (the stack keeps its work): `hub change unlock {holder} -s {state} --yes`\n"
    )
}

const APPLIED: &str = "it applied, and its work is not merged yet";
const FAILED: &str = "its apply failed, and only it may apply until it succeeds";

/// The scenario of the issue, step by step.
fn terrateam(place: &Place) {
    let mut test = Test::new();
    for (change, message, before) in [
        ("1", "one", ""),
        ("2", "two", ""),
        ("3", "three", "exit 3"),
        ("4", "four", ""),
        ("5", "five", ""),
        ("6", "six", ""),
    ] {
        test = checkout(test, &format!("pr{change}"), message, before);
    }
    // Change 6's plan fails: its component has nothing to deploy with.
    std::fs::remove_file(test.root().join("pr6/app/deploy.sh")).expect("rm");

    // Two changes plan at once: plans take no lock.
    let (one, two) = std::thread::scope(|scope| {
        let one = scope.spawn(|| place.plan(&test, "1"));
        let two = scope.spawn(|| place.plan(&test, "2"));
        (one.join().expect("plan 1"), two.join().expect("plan 2"))
    });
    one.success()
        .stderr_has("change 1: plan 1 recorded as succeeded in `");
    two.success()
        .stderr_has("change 2: plan 1 recorded as succeeded in `");

    // Change 1 applies, and keeps the apply lock.
    place.deploy(&test, "1").success().stderr_has(
        "change 1: apply 2 recorded as succeeded; change 1 holds the apply lock (applied)",
    );
    assert_eq!(applied(&test), "one\n");

    // Change 2 is refused, naming change 1, before anything runs.
    let refused = place.deploy(&test, "2");
    refused.failure();
    assert!(
        refused.stderr.ends_with(&held_by(place, "2", "1", APPLIED)),
        "{}",
        refused.stderr
    );
    assert_eq!(applied(&test), "one\n");

    // `merged 1` releases the lock and makes change 2's plan stale.
    let merged = place.change(&test, &["merged", "1"]);
    merged.success();
    assert_eq!(
        merged.stderr,
        "change 1: the apply lock is released\nchange 2: its plans are stale now (plan it again)\n"
    );
    place.deploy(&test, "2").failure().stderr_has(
        "error: change `2` cannot apply: its latest plan (made at 2026-01-01T00:00:00Z) is stale: change `1` was merged at 2026-01-01T00:00:00Z after it was made\n  help: plan again on top of what is deployed now: `hub plan hub.yaml -s ",
    );

    // Change 2 plans again and applies.
    place
        .plan(&test, "2")
        .success()
        .stderr_has("change 2: plan 3 recorded as succeeded");
    place.deploy(&test, "2").success();
    assert_eq!(applied(&test), "one\ntwo\n");
    place.change(&test, &["merged", "2"]).success();

    // Change 3's apply fails; it keeps the lock, so change 4 is refused.
    place.plan(&test, "3").success();
    place.plan(&test, "4").success();
    place
        .deploy(&test, "3")
        .failure()
        .stderr_has("change 3: apply 2 recorded as failed; change 3 holds the apply lock (failed)");
    let refused = place.deploy(&test, "4");
    refused.failure();
    assert!(
        refused.stderr.ends_with(&held_by(place, "4", "3", FAILED)),
        "{}",
        refused.stderr
    );

    // Change 3 is fixed, planned again and applied.
    test = checkout(test, "pr3", "three", "");
    place.plan(&test, "3").success();
    place.deploy(&test, "3").success();
    assert_eq!(applied(&test), "one\ntwo\nthree\n");
    let list = place.change(&test, &["list"]);
    list.success();
    assert_eq!(
        list.stdout,
        "\
CHANGE  STATE   LATEST PLAN                       APPLIES                                  LOCK
1       merged  1 succeeded 2026-01-01T00:00:00Z  1 (last succeeded 2026-01-01T00:00:00Z)  -
2       merged  3 succeeded 2026-01-01T00:00:00Z  1 (last succeeded 2026-01-01T00:00:00Z)  -
3       open    3 succeeded 2026-01-01T00:00:00Z  2 (last succeeded 2026-01-01T00:00:00Z)  held (applied)
4       open    1 succeeded 2026-01-01T00:00:00Z  0                                        -
apply lock: held by change 3 since 2026-01-01T00:00:00Z (applied: it applied, and its work is not merged yet)
"
    );
    // Closing change 3 unmerged is refused: the stack holds its work.
    place
        .change(&test, &["closed", "3"])
        .failure()
        .stderr_has("error: change `3` cannot be closed while it holds the apply lock: it applied at 2026-01-01T00:00:00Z, so the stack holds its unmerged work");
    place.change(&test, &["merged", "3"]).success();

    // An apply without a plan.
    let refused = place.deploy(&test, "5");
    refused.failure().stderr_has(
        "error: change `5` has no plan to apply: `hub deploy --change` applies the latest plan recorded for it\n  help: plan it first: `hub plan hub.yaml -s ",
    );
    // An apply after a failed plan.
    place
        .plan(&test, "6")
        .failure()
        .stderr_has("change 6: plan 1 recorded as failed");
    place.deploy(&test, "6").failure().stderr_has(
        "error: change `6` cannot apply: its latest plan (made at 2026-01-01T00:00:00Z) failed: the plan is not saved: `app` would fail: no implementation of `deploy`",
    );
    assert_eq!(applied(&test), "one\ntwo\nthree\n");

    let show = place.change(&test, &["show", "3"]);
    show.success();
    assert_eq!(
        show.stdout,
        "\
change 3 (merged)
   1  plan succeeded (deploy), 2026-01-01T00:00:00Z by tester at abc1234
   2  apply of plan 1 failed (deploy), 2026-01-01T00:00:00Z by tester
   3  plan succeeded (deploy), 2026-01-01T00:00:00Z by tester at abc1234
   4  apply of plan 3 succeeded (deploy), 2026-01-01T00:00:00Z by tester
   5  merged, 2026-01-01T00:00:00Z by tester
apply lock: free
"
    );
}

#[test]
fn the_rules_of_terrateam_on_a_local_state() {
    terrateam(&Place::local());
}

#[test]
fn the_rules_of_terrateam_on_a_state_in_a_bucket() {
    let Some(place) = Place::s3("changes") else {
        return;
    };
    terrateam(&place);
}

#[test]
fn the_rules_of_terrateam_on_a_state_in_a_container() {
    let Some(place) = Place::azure("changes") else {
        return;
    };
    terrateam(&place);
}

#[test]
fn unlock_asks_and_a_script_must_say_yes() {
    let place = Place::local();
    let test = checkout(
        checkout(Test::new(), "pr1", "one", "exit 1"),
        "pr2",
        "two",
        "",
    );
    place.plan(&test, "1").success();
    place.deploy(&test, "1").failure();
    place
        .change(&test, &["unlock", "1"])
        .failure()
        .stderr_has("error: the apply lock of change `1` was not released: there is no terminal to confirm on\n  help: pass --yes to release it without asking: `hub change unlock 1 -s hub.state --yes`");
    place
        .change(&test, &["unlock", "1", "--yes"])
        .success()
        .stderr_has("change 1: the apply lock is released");
    place.plan(&test, "2").success();
    place.deploy(&test, "2").success();
    assert_eq!(applied(&test), "two\n");
    // A change that applied nothing closes and releases its lock.
    place.plan(&test, "1").success();
    place
        .change(&test, &["closed", "2"])
        .failure()
        .stderr_has("cannot be closed while it holds the apply lock");
    place
        .change(&test, &["closed", "1"])
        .success()
        .stderr_has("change 1: it did not hold the apply lock");
}

#[test]
fn a_plan_waits_while_an_apply_is_about_to_run() {
    let place = Place::local();
    let test = checkout(Test::new(), "pr1", "one", "");
    let folder = test.root().join("hub.state.changes");
    std::fs::create_dir(&folder).expect("folder");
    std::fs::set_permissions(&folder, std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .expect("mode");
    // An apply of change 9, by a process that still runs (this one).
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").expect("hostname");
    let marker = format!(
        "{{\"change\": \"9\", \"holder\": {{\"pid\": {}, \"host\": \"{}\", \"user\": \"tester\", \"operation\": \"apply\", \"started\": \"2026-01-01T00:00:00Z\", \"id\": \"x\"}}}}",
        std::process::id(),
        host.trim()
    );
    let path = folder.join("apply-waiting.json");
    write_private(&path, &marker);
    place
        .plan(&test, "1")
        .failure()
        .stderr_has("`apply of change 9` started by tester at 2026-01-01T00:00:00Z");
    assert!(!folder.join("1").exists(), "nothing was recorded");
    // With --lock-timeout, the plan waits for the apply to go.
    let remover = std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_millis(600));
        std::fs::remove_file(&path).expect("remove the marker");
    });
    let args = [
        "plan",
        "hub.yaml",
        "-s",
        "../hub.state",
        "--change",
        "1",
        "--lock-timeout",
        "20s",
    ];
    place
        .hub(&test, "pr1", &args)
        .success()
        .stderr_has("change 1: plan 1 recorded as succeeded");
    remover.join().expect("remover");
}

fn write_private(path: &Path, text: &str) {
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::os::unix::fs::PermissionsExt::from_mode(0o600))
        .expect("mode");
}

#[test]
fn a_change_id_is_a_name_and_a_change_needs_a_state() {
    let place = Place::local();
    let test = checkout(Test::new(), "pr1", "one", "");
    place
        .hub(
            &test,
            "pr1",
            &["plan", "hub.yaml", "-s", "../hub.state", "--change", "a/b"],
        )
        .failure()
        .stderr_has(
            "error: `a/b` is not a change id: it may hold only letters, digits, `.`, `_` and `-`",
        );
    place
        .hub(&test, "pr1", &["plan", "hub.yaml", "-n", "--change", "1"])
        .failure()
        .stderr_has("`--change` needs a state");
}

/// Two changes apply at the same time: the apply lock, changed only by a
/// conditional write, goes to exactly one; the other is refused.
fn racing_applies(place: &Place) {
    let test = checkout(checkout(Test::new(), "pr1", "one", ""), "pr2", "two", "");
    place.plan(&test, "1").success();
    place.plan(&test, "2").success();
    let (one, two) = std::thread::scope(|scope| {
        let one = scope.spawn(|| place.deploy(&test, "1"));
        let two = scope.spawn(|| place.deploy(&test, "2"));
        (one.join().expect("1"), two.join().expect("2"))
    });
    let outcomes = [
        (one.status, "one\n", "2", "1"),
        (two.status, "two\n", "1", "2"),
    ];
    let winners: Vec<_> = outcomes.iter().filter(|o| o.0 == 0).collect();
    assert_eq!(winners.len(), 1, "{}\n{}", one.stderr, two.stderr);
    let (_, log, loser, winner) = winners[0];
    assert_eq!(applied(&test), *log);
    let lost = if *loser == "1" { &one } else { &two };
    lost.failure().stderr_has(&format!(
        "error: change `{loser}` cannot apply: change `{winner}` holds the apply lock"
    ));
}

#[test]
fn of_two_applies_at_once_one_takes_the_lock_locally() {
    racing_applies(&Place::local());
}

#[test]
fn of_two_applies_at_once_one_takes_the_lock_in_a_bucket() {
    let Some(place) = Place::s3("race") else {
        return;
    };
    racing_applies(&place);
}

#[test]
fn of_two_applies_at_once_one_takes_the_lock_in_a_container() {
    let Some(place) = Place::azure("race") else {
        return;
    };
    racing_applies(&place);
}

#[test]
fn an_undeploy_applies_the_undeploy_planned_for_its_change() {
    let place = Place::local();
    let test = checkout(checkout(Test::new(), "pr1", "one", ""), "pr2", "two", "");
    place.plan(&test, "1").success();
    place.deploy(&test, "1").success();
    place.change(&test, &["merged", "1"]).success();
    let undeploy = [
        "undeploy",
        "hub.yaml",
        "-s",
        "../hub.state",
        "--change",
        "2",
    ];
    // Its latest plan is a deploy's.
    place.plan(&test, "2").success();
    place.hub(&test, "pr2", &undeploy).failure().stderr_has(
        "error: change `2` cannot apply: its latest plan is a plan to deploy, not to undeploy\n  help: plan it as it is to run: `hub plan hub.yaml -s ../hub.state --change 2 --undeploy`",
    );
    let plan = [
        "plan",
        "hub.yaml",
        "-s",
        "../hub.state",
        "--undeploy",
        "--change",
        "2",
    ];
    place
        .hub(&test, "pr2", &plan)
        .success()
        .stderr_has("change 2: plan 2 recorded as succeeded");
    place.hub(&test, "pr2", &undeploy).success().stderr_has(
        "change 2: apply 3 recorded as succeeded; change 2 holds the apply lock (applied)",
    );
    let state = std::fs::read_to_string(test.root().join("hub.state")).expect("state");
    assert!(state.contains("status: undeployed"), "{state}");
}

/// A plan that a policy denies is recorded as failed, so its change cannot
/// apply; the rule sees the change it is evaluated for.
#[test]
fn a_plan_a_policy_denies_is_recorded_failed_and_cannot_apply() {
    let test = checkout(Test::new(), "pr7", "seven", "");
    let stack = std::fs::read_to_string(test.root().join("pr7/hub.yaml")).expect("stack");
    let rule = "policies:\n  - name: no-change-seven\n    deny: change.id == '7' && change.sha == 'abc1234'\n    message: change 7 may not deploy\n";
    std::fs::write(test.root().join("pr7/hub.yaml"), format!("{stack}{rule}")).expect("write");
    let place = Place::local();
    let planned = place.plan(&test, "7");
    planned
        .failure()
        .stderr_has("change 7: plan 1 recorded as failed");
    assert!(
        planned.stdout.contains("no-change-seven"),
        "{}",
        planned.stdout
    );
    let refused = place.deploy(&test, "7");
    refused
        .failure()
        .stderr_has("error: change `7` cannot apply: its latest plan");
    assert_eq!(applied(&test), "");
    let shown = place.change(&test, &["show", "7"]);
    shown.success();
    assert!(
        shown.stdout.contains("change 7 may not deploy"),
        "{}",
        shown.stdout
    );
}
