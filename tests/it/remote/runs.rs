//! `hub` runs with `-s s3://BUCKET/KEY` on the local S3 test server.

use super::server::{server, signing_server, Server, Store, SECRET_KEY, SIGNED_BUCKET};
use crate::common::{Output, Test};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A chain of `n` components `c1..cn`; each sleeps `sleep` seconds, then
/// writes `cN.done` in the test folder. `before_c1` runs first in c1's
/// script (to act on the store in the middle of a run).
pub(super) fn chain(n: usize, sleep: &str, before_c1: &str) -> Test {
    let mut stack = String::from("version: 1\nkind: stack\nmeta: {name: chain}\ncomponents:\n");
    for i in 1..=n {
        let depends = match i {
            1 => String::new(),
            _ => format!(", depends: [c{}]", i - 1),
        };
        stack.push_str(&format!(
            "- {{name: c{i}, source: {{dir: c{i}}}{depends}}}\n"
        ));
    }
    let order: Vec<String> = (1..=n).map(|i| format!("c{i}")).collect();
    stack.push_str(&format!(
        "lifecycle: {{verbs: [deploy, undeploy], order: [{}]}}\n",
        order.join(", ")
    ));
    for i in 1..=n {
        stack.push_str(&format!(
            "---\nversion: 1\nkind: component\nmeta: {{name: c{i}, kind: c, origin: c}}\n"
        ));
    }
    let mut test = Test::new().file("hub.yaml.elaborate", &stack);
    for i in 1..=n {
        let extra = if i == 1 { before_c1 } else { "" };
        test = test
            .script(
                &format!("c{i}/deploy.sh"),
                &format!("#!/bin/sh\n{extra}\nsleep {sleep}\necho ok > ../c{i}.done\n"),
            )
            .script(
                &format!("c{i}/undeploy.sh"),
                &format!("#!/bin/sh\nrm -f ../c{i}.done\n"),
            );
    }
    test
}

/// The test server, a new bucket for one test (named after `name`) and
/// the location `s3://BUCKET/hub.state`; `None` without a server.
fn remote_state(name: &str) -> Option<(&'static Server, String, String)> {
    let server = server()?;
    let bucket = server.bucket(name);
    let location = format!("s3://{bucket}/hub.state");
    Some((server, bucket, location))
}

pub(super) fn hub_command(
    test: &Test,
    server: &dyn Store,
    args: &[&str],
    env: &[(&str, &str)],
) -> Command {
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("hub"));
    command
        .current_dir(test.root())
        .args(args)
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN")
        .env("HOME", test.root())
        .env("HUB_BIN", assert_cmd::cargo::cargo_bin("hub"))
        .stdin(Stdio::null());
    for (k, v) in server.env() {
        command.env(k, v);
    }
    for (k, v) in env {
        command.env(k, v);
    }
    command
}

pub(super) fn hub(test: &Test, server: &dyn Store, args: &[&str], env: &[(&str, &str)]) -> Output {
    let out = hub_command(test, server, args, env)
        .output()
        .expect("run hub");
    Output::of(out, test.root())
}

/// The state as `hub state pull` reads it.
pub(super) fn pulled(test: &Test, server: &dyn Store, location: &str) -> yaml_serde::Value {
    let out = hub(test, server, &["state", "pull", location], &[]);
    out.success();
    yaml_serde::from_str(&out.stdout).expect("the pulled state parses")
}

pub(super) fn status_of(state: &yaml_serde::Value, component: &str) -> String {
    state["components"][component]["status"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

pub(super) fn done(test: &Test, component: &str) -> bool {
    test.root().join(format!("{component}.done")).exists()
}

pub(super) fn deploy_args(location: &str) -> Vec<&str> {
    vec!["deploy", "hub.yaml.elaborate", "-s", location]
}

#[test]
fn deploy_plan_undeploy_and_unlock_with_the_state_in_a_bucket() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("runs");
    let location = format!("s3://{bucket}/envs/dev/hub.state");
    let test = chain(3, "0", "");
    let deploy = hub(&test, server, &deploy_args(&location), &[]);
    deploy.success();
    let kept = format!("state: {location}: the previous version is kept as `{location}.backup`");
    assert!(deploy.stderr.contains(&kept), "{}", deploy.stderr);
    assert!(done(&test, "c3"));
    let state = pulled(&test, server, &location);
    for c in ["c1", "c2", "c3"] {
        assert_eq!(status_of(&state, c), "deployed", "{c}");
    }
    assert_eq!(state["status"].as_str(), Some("deployed"));
    assert!(
        server.get(&bucket, "envs/dev/hub.state.lock").is_none(),
        "the lock is removed at the end"
    );
    assert!(server.get(&bucket, "envs/dev/hub.state.backup").is_some());
    assert!(test.root().join("hub.state.logs").is_dir());
    let plan = hub(
        &test,
        server,
        &["plan", "hub.yaml.elaborate", "-s", &location, "--changed"],
        &[],
    );
    plan.success();
    assert!(plan.stdout.contains(&location), "{}", plan.stdout);
    assert!(plan.stdout.contains("3 unchanged"), "{}", plan.stdout);
    let undeploy = ["undeploy", "hub.yaml.elaborate", "-s", &location];
    hub(&test, server, &undeploy, &[]).success();
    assert!(!done(&test, "c1"));
    assert_eq!(
        status_of(&pulled(&test, server, &location), "c1"),
        "undeployed"
    );
    hub(&test, server, &["unlock", &location], &[])
        .failure()
        .stderr_has("is not locked");
}

#[test]
fn a_versioned_bucket_keeps_the_previous_state_without_a_backup_object() {
    let Some((server, bucket, location)) = remote_state("versioned") else {
        return;
    };
    let enabled = server.request(
        "PUT",
        &format!("/{bucket}?versioning"),
        &[],
        b"<VersioningConfiguration><Status>Enabled</Status></VersioningConfiguration>",
    );
    assert_eq!(enabled.status, 200, "{}", enabled.body);
    let test = chain(2, "0", "");
    for _ in 0..2 {
        let deploy = hub(&test, server, &deploy_args(&location), &[]);
        deploy.success();
        let kept =
            format!("state: {location}: the previous version is kept by the bucket's versioning");
        assert!(deploy.stderr.contains(&kept), "{}", deploy.stderr);
    }
    assert!(server.get(&bucket, "hub.state.backup").is_none());
    let versions = server.request(
        "GET",
        &format!("/{bucket}?versions&prefix=hub.state"),
        &[],
        b"",
    );
    let kept = versions.body.matches("<Key>hub.state</Key>").count();
    assert!(
        kept >= 3,
        "every fold is a version of the bucket: {}",
        versions.body
    );
}

/// A lock object as another run would have left it.
fn foreign_lock(server: &Server, bucket: &str, key: &str, expires_in_ms: i64) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("time")
        .as_millis() as i64;
    let body = format!(
        "{{\"pid\": 4242, \"host\": \"ci-7\", \"user\": \"alice\", \"operation\": \"deploy\", \"started\": \"2026-01-01T00:00:00Z\", \"id\": \"lock-1\", \"command\": \"hub deploy\", \"expiresMs\": {}, \"startedMs\": {}}}",
        now + expires_in_ms,
        now - 90_000
    );
    let put = server.request(
        "PUT",
        &format!("/{bucket}/{key}.lock"),
        &[],
        body.as_bytes(),
    );
    assert_eq!(put.status, 200, "{}", put.body);
}

#[test]
fn a_held_lock_refuses_a_run_at_once_and_a_stale_one_names_its_removal() {
    let Some((server, bucket, location)) = remote_state("locks") else {
        return;
    };
    let test = chain(1, "0", "");
    foreign_lock(server, &bucket, "hub.state", 60_000);
    let refused = hub(&test, server, &deploy_args(&location), &[]);
    refused
        .failure()
        .stderr_has("is locked")
        .stderr_has("alice")
        .stderr_has("ci-7")
        .stderr_has("90s ago");
    assert!(!done(&test, "c1"));
    hub(&test, server, &["unlock", &location], &[])
        .failure()
        .stderr_has("is locked");
    hub(&test, server, &["unlock", &location, "--id", "other"], &[])
        .failure()
        .stderr_has("not `other`");
    assert!(server.get(&bucket, "hub.state.lock").is_some());

    foreign_lock(server, &bucket, "hub.state", -1_000);
    let stale = hub(&test, server, &deploy_args(&location), &[]);
    stale
        .failure()
        .stderr_has("expired lease")
        .stderr_has(&format!("hub unlock -s {location} --id lock-1"));
    hub(&test, server, &["unlock", &location], &[])
        .success()
        .stderr_has("removed the expired lock");
    hub(&test, server, &deploy_args(&location), &[]).success();
    assert!(done(&test, "c1"));

    foreign_lock(server, &bucket, "hub.state", 60_000);
    hub(&test, server, &["unlock", &location, "--id", "lock-1"], &[]).success();
    foreign_lock(server, &bucket, "hub.state", 60_000);
    hub(&test, server, &["unlock", &location, "--force"], &[]).success();
    assert!(server.get(&bucket, "hub.state.lock").is_none());
}

#[test]
fn the_lease_is_renewed_while_the_run_goes_on() {
    let Some((server, bucket, location)) = remote_state("lease") else {
        return;
    };
    let test = chain(1, "2", "");
    let lease = [("HUB_LOCK_LEASE", "0.6")];
    let mut first = hub_command(&test, server, &deploy_args(&location), &lease)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    wait_for(|| server.get(&bucket, "hub.state.lock").is_some());
    // Well past the first lease: only renewals keep the lock valid.
    std::thread::sleep(Duration::from_millis(1_300));
    let second = hub(&test, server, &deploy_args(&location), &lease);
    second.failure().stderr_has("is locked");
    assert!(!second.stderr.contains("expired"), "{}", second.stderr);
    assert!(first.wait().expect("wait").success());
}

pub(super) fn wait_for(mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(30), "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn of_two_deploys_started_together_exactly_one_runs() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("race");
    for round in 0..10 {
        exactly_one_of_two_runs(server, &format!("s3://{bucket}/round{round}"), round);
    }
}

/// Starts two deploys of one component on `location` at once: exactly one
/// runs it, the other is refused by the lock.
pub(super) fn exactly_one_of_two_runs(store: &dyn Store, location: &str, round: usize) {
    let test = chain(1, "0.3", "echo ran >> ../ran.log");
    let children: Vec<Child> = (0..2)
        .map(|_| {
            hub_command(&test, store, &deploy_args(location), &[])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("spawn")
        })
        .collect();
    let outputs: Vec<std::process::Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait"))
        .collect();
    let succeeded = outputs.iter().filter(|o| o.status.success()).count();
    let stderr: Vec<String> = outputs
        .iter()
        .map(|o| String::from_utf8_lossy(&o.stderr).into_owned())
        .collect();
    assert_eq!(succeeded, 1, "round {round}: {stderr:?}");
    assert!(stderr.iter().any(|e| e.contains("is locked")), "{stderr:?}");
    let ran = std::fs::read_to_string(test.root().join("ran.log")).unwrap_or_default();
    assert_eq!(
        ran.lines().count(),
        1,
        "round {round}: the component ran once"
    );
}

#[test]
fn a_missing_bucket_or_endpoint_stops_before_any_component() {
    let Some(server) = server() else { return };
    let test = chain(1, "0", "");
    let missing = hub(
        &test,
        server,
        &deploy_args("s3://no-such-bucket/hub.state"),
        &[("RUST_LOG", "debug")],
    );
    missing
        .failure()
        .stderr_has("s3://no-such-bucket/hub.state")
        .stderr_has("the bucket `no-such-bucket` does not exist");
    assert!(!done(&test, "c1"));
    let unreachable = hub(
        &test,
        server,
        &deploy_args("s3://team/hub.state"),
        &[
            ("AWS_ENDPOINT_URL", "http://127.0.0.1:9"),
            ("HUB_REMOTE_RETRY_TIMEOUT", "0.5"),
        ],
    );
    unreachable
        .failure()
        .stderr_has("`http://127.0.0.1:9` (AWS_ENDPOINT_URL) is reachable");
    assert!(!done(&test, "c1"));
    for out in [&missing, &unreachable] {
        assert!(!out.stderr.contains(SECRET_KEY), "{}", out.stderr);
    }
}

#[test]
fn the_signing_server_refuses_a_request_it_cannot_verify() {
    let Some(server) = signing_server() else {
        return;
    };
    let unsigned = server.request("GET", &format!("/{SIGNED_BUCKET}"), &[], b"");
    assert_eq!(unsigned.status, 403, "{}", unsigned.body);
    assert!(
        unsigned.body.contains("SignatureDoesNotMatch"),
        "{}",
        unsigned.body
    );
}

#[test]
fn wrong_credentials_stop_before_any_component_and_are_never_printed() {
    let Some(server) = signing_server() else {
        return;
    };
    let location = format!("s3://{SIGNED_BUCKET}/credentials/hub.state");
    let test = chain(1, "0", "");
    let wrong_secret = "not-the-secret-Q7wz";
    let refused = [
        (
            "AWS_SECRET_ACCESS_KEY",
            wrong_secret,
            "SignatureDoesNotMatch",
        ),
        (
            "AWS_ACCESS_KEY_ID",
            "AKIANOSUCHKEY0000000",
            "InvalidAccessKeyId",
        ),
    ];
    for (variable, value, code) in refused {
        let mut args = deploy_args(&location);
        args.push("--debug");
        let out = hub(&test, server, &args, &[(variable, value)]);
        out.failure()
            .stderr_has(&format!("debug: {location}: LIST `credentials`: "))
            .stderr_has(code)
            .stderr_has("check the credentials (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY");
        for secret in [wrong_secret, server.secret_key.as_str()] {
            assert!(!out.stderr.contains(secret), "{}", out.stderr);
            assert!(!out.stdout.contains(secret), "{}", out.stdout);
        }
        assert!(!out.stderr.contains("X-Amz-Signature"), "{}", out.stderr);
    }
    assert!(
        !done(&test, "c1"),
        "a component ran with refused credentials"
    );
    // The same run with the server's keys goes through: the refusals came
    // from the keys alone.
    hub(&test, server, &deploy_args(&location), &[]).success();
    assert!(done(&test, "c1"));
}

#[test]
fn a_profile_in_the_aws_files_gives_the_keys() {
    let Some(server) = signing_server() else {
        return;
    };
    let location = format!("s3://{SIGNED_BUCKET}/profile/hub.state");
    let credentials = format!(
        "[ci]\naws_access_key_id = {}\naws_secret_access_key = {}\n[stale]\naws_access_key_id = {}\naws_secret_access_key = an-old-secret\n",
        server.access_key, server.secret_key, server.access_key
    );
    let test = chain(1, "0", "").file(".aws/credentials", &credentials);
    let with_profile = |profile: &str| {
        let mut command = hub_command(
            &test,
            server,
            &deploy_args(&location),
            &[("AWS_PROFILE", profile)],
        );
        command
            .env_remove("AWS_ACCESS_KEY_ID")
            .env_remove("AWS_SECRET_ACCESS_KEY");
        Output::of(command.output().expect("run"), test.root())
    };
    with_profile("stale")
        .failure()
        .stderr_has("check the credentials");
    assert!(!done(&test, "c1"));
    with_profile("ci").success();
    assert!(done(&test, "c1"));
    with_profile("nope").failure().stderr_has("profile `nope`");
}

#[test]
fn a_store_failing_mid_deploy_leaves_an_errored_file_that_push_restores() {
    let Some((server, bucket, location)) = remote_state("down") else {
        return;
    };
    // c1 turns the store off while it runs: its own end cannot be written.
    let once = format!(
        "[ -e ../down.once ] || {{ touch ../down.once; touch \"$S3_SWITCHES/fail.{bucket}\"; }}"
    );
    let test = chain(3, "0", &once);
    let env = [("HUB_REMOTE_RETRY_TIMEOUT", "0.5"), ("HUB_LOCK_LEASE", "1")];
    let failed = hub(&test, server, &deploy_args(&location), &env);
    assert_eq!(failed.status, 2, "{}", failed.stderr);
    failed
        .stderr_has("hub.state.errored")
        .stderr_has(&format!("hub state push hub.state.errored {location}"));
    assert!(done(&test, "c1"));
    assert!(
        !done(&test, "c2"),
        "no component starts once a write failed"
    );
    let errored = std::fs::read_to_string(test.root().join("hub.state.errored")).expect("errored");
    let errored: yaml_serde::Value = yaml_serde::from_str(&errored).expect("parses");
    assert_eq!(status_of(&errored, "c1"), "deployed");
    server.set_down(&bucket, false);
    // The failed run could not remove its lock; its lease has expired.
    std::thread::sleep(Duration::from_millis(1_100));
    hub(&test, server, &["unlock", &location], &env).success();
    hub(
        &test,
        server,
        &["state", "push", "hub.state.errored", &location],
        &env,
    )
    .success();
    assert_eq!(
        status_of(&pulled(&test, server, &location), "c1"),
        "deployed"
    );
    let again = hub(&test, server, &deploy_args(&location), &env);
    again.success();
    let state = pulled(&test, server, &location);
    for c in ["c1", "c2", "c3"] {
        assert_eq!(status_of(&state, c), "deployed", "{c}");
    }
    // A second failure never overwrites the first file.
    assert!(!test.root().join("hub.state-2.errored").exists());
}

#[test]
fn push_refuses_an_older_or_foreign_state_without_force() {
    let Some((server, _, location)) = remote_state("push") else {
        return;
    };
    let test = chain(1, "0", "");
    let env = [("HUB_LINEAGE", "11111111-1111-4111-8111-111111111111")];
    hub(&test, server, &deploy_args(&location), &env).success();
    hub(
        &test,
        server,
        &["state", "pull", &location, "old.state"],
        &[],
    )
    .success();
    hub(&test, server, &deploy_args(&location), &env).success();
    hub(
        &test,
        server,
        &["state", "push", "old.state", &location],
        &[],
    )
    .failure()
    .stderr_has("is newer");
    let other = Test::new();
    let foreign = [("HUB_LINEAGE", "22222222-2222-4222-8222-222222222222")];
    let local = chain(1, "0", "");
    hub(
        &local,
        server,
        &["deploy", "hub.yaml.elaborate", "-s", "local.state"],
        &foreign,
    )
    .success();
    let foreign_file = local.root().join("local.state");
    let foreign_file = foreign_file.to_str().expect("utf8");
    hub(
        &other,
        server,
        &["state", "push", foreign_file, &location],
        &[],
    )
    .failure()
    .stderr_has("lineage");
    hub(
        &other,
        server,
        &["state", "push", foreign_file, &location, "--force"],
        &[],
    )
    .success();
    let state = pulled(&test, server, &location);
    assert_eq!(
        state["lineage"].as_str(),
        Some("22222222-2222-4222-8222-222222222222")
    );
}

#[test]
fn a_broken_lock_stops_the_old_run_and_the_new_state_survives() {
    let Some((server, _, location)) = remote_state("broken") else {
        return;
    };
    let test = broken_lock_run(server, &location);
    assert!(test.root().join("hub.state.errored").exists());
}

/// A deploy of two components on `location` during which (while c1 runs)
/// someone breaks the lock and pushes another state: the run's next write,
/// conditional on the revision it last wrote, fails; it starts nothing
/// more, and the pushed state survives. Returns the run's folder.
pub(super) fn broken_lock_run(store: &dyn Store, location: &str) -> Test {
    let other = chain(2, "0", "");
    let local = ["deploy", "hub.yaml.elaborate", "-s", "other.state"];
    hub(&other, store, &local, &[]).success();
    let breaker = format!(
        "\"$HUB_BIN\" unlock --force --yes {location} && \"$HUB_BIN\" state push --force ../other.state {location} && sleep 1"
    );
    let other_state = std::fs::read_to_string(other.root().join("other.state")).expect("other");
    let test = chain(2, "0", &breaker).file("other.state", &other_state);
    let env = [("HUB_LOCK_LEASE", "0.6")];
    let old = hub(&test, store, &deploy_args(location), &env);
    assert_eq!(old.status, 2, "{}", old.stderr);
    old.stderr_has("was removed or taken by another run");
    assert!(
        !done(&test, "c2"),
        "the old run starts nothing after the break"
    );
    let state = pulled(&test, store, location);
    assert_eq!(
        state["status"].as_str(),
        Some("deployed"),
        "the pushed state survives"
    );
    test
}

#[test]
fn a_local_file_and_a_remote_key_are_written_together() {
    let Some((server, bucket, location)) = remote_state("mixed") else {
        return;
    };
    let test = chain(2, "0", "");
    let both = format!("local.state,{location}");
    hub(&test, server, &deploy_args(&both), &[]).success();
    let remote = pulled(&test, server, &location);
    let local = pulled(&test, server, "local.state");
    assert_eq!(remote["serial"], local["serial"]);
    assert_eq!(status_of(&remote, "c2"), "deployed");
    assert_eq!(status_of(&local, "c2"), "deployed");
    assert!(!Path::new(&test.root().join("local.state.lock")).exists());
    assert!(server.get(&bucket, "hub.state.lock").is_none());
}

/// `kill -9` at seeded random moments: the state always parses, holds
/// every component recorded as deployed only if its script completed,
/// and a new deploy after `hub unlock` completes.
#[test]
fn a_killed_deploy_leaves_a_readable_state_and_unlock_lets_the_next_finish() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("kill");
    let mut seed: u64 = std::env::var("HUB_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_1234);
    for round in 0..5 {
        let location = format!("s3://{bucket}/round{round}");
        let test = chain(4, "0.1", "");
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let delay = Duration::from_millis(200 + (seed >> 33) % 1_200);
        let mut child = hub_command(&test, server, &deploy_args(&location), &[])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        std::thread::sleep(delay);
        let _ = child.kill();
        let _ = child.wait();
        let pulled_out = hub(&test, server, &["state", "pull", &location], &[]);
        if pulled_out.status == 0 && !pulled_out.stdout.is_empty() {
            let state: yaml_serde::Value =
                yaml_serde::from_str(&pulled_out.stdout).expect("the state parses after a kill");
            for c in ["c1", "c2", "c3", "c4"] {
                if status_of(&state, c) == "deployed" {
                    assert!(done(&test, c), "round {round}: {c} recorded but never ran");
                }
            }
        }
        let _ = hub(&test, server, &["unlock", "--force", &location], &[]);
        hub(&test, server, &deploy_args(&location), &[]).success();
        let state = pulled(&test, server, &location);
        for c in ["c1", "c2", "c3", "c4"] {
            assert_eq!(status_of(&state, c), "deployed", "round {round}: {c}");
        }
    }
}

/// The PUTs of a deploy grow with its components, not their square.
#[test]
fn a_runs_puts_grow_linearly_with_its_components() {
    let Some(server) = server() else { return };
    let puts_of = |n: usize| {
        let bucket = server.bucket("puts");
        let location = format!("s3://{bucket}/hub.state");
        let test = chain(n, "0", "");
        hub(&test, server, &deploy_args(&location), &[]).success();
        server.puts(&bucket)
    };
    let (small, large) = (puts_of(4), puts_of(16));
    assert!(small >= 4, "at least a record per component: {small}");
    assert!(
        large <= 4 * small + 8,
        "4 components: {small} PUTs, 16: {large}"
    );
}

#[test]
fn with_a_crypto_password_the_objects_are_sealed_and_read_back() {
    let Some(server) = server() else { return };
    let bucket = server.bucket("sealed");
    let location = format!("s3://{bucket}/hub.state");
    let test = chain(2, "0", "");
    let password = [("HUB_CRYPTO_PASSWORD", "correct horse")];
    hub(&test, server, &deploy_args(&location), &password).success();
    for key in ["hub.state", "hub.state.backup"] {
        let object = server.get(&bucket, key).expect("the object");
        assert!(object.starts_with("&\u{1}"), "`{key}` is not sealed");
        assert!(!object.contains("deployed"), "`{key}` holds clear text");
    }
    let pulled = hub(&test, server, &["state", "pull", &location], &password);
    pulled.success();
    assert!(
        pulled.stdout.contains("status: deployed"),
        "{}",
        pulled.stdout
    );
    hub(&test, server, &["state", "pull", &location], &[])
        .failure()
        .stderr_has("HUB_CRYPTO_PASSWORD");
    let plain = [deploy_args(&location), vec!["--encrypted=false"]].concat();
    hub(&test, server, &plain, &password).success();
    let object = server.get(&bucket, "hub.state").expect("the object");
    assert!(object.starts_with("# hub-state:"), "{object}");
    assert!(
        crate::common::unframed(&object).starts_with("version: 1"),
        "{object}"
    );
}

#[test]
fn a_plan_on_a_bucket_takes_turns_with_the_lock_holder() {
    let Some((server, bucket, location)) = remote_state("turns") else {
        return;
    };
    let test = chain(1, "0", "");
    hub(&test, server, &deploy_args(&location), &[]).success();
    let plan = ["plan", "hub.yaml.elaborate", "-s", location.as_str()];
    foreign_lock(server, &bucket, "hub.state", 60_000);
    hub(&test, server, &plan, &[])
        .failure()
        .stderr_has("is locked")
        .stderr_has("alice");
    let waiting = [&plan[..], &["--lock-timeout", "1s"]].concat();
    let started = std::time::Instant::now();
    hub(&test, server, &waiting, &[])
        .failure()
        .stderr_has("waited");
    assert!(started.elapsed() >= std::time::Duration::from_secs(1));
    foreign_lock(server, &bucket, "hub.state", -1_000);
    hub(&test, server, &plan, &[]).success();
}
