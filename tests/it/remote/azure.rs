//! `hub` runs with `-s az://CONTAINER/KEY` on Azurite: the same remote
//! code as `s3://`, through Azure's conditional headers (`If-None-Match: *`
//! for the lock, `If-Match` on the ETag for every later write).

use super::azurite::{azurite, Azurite};
use super::runs::{
    broken_lock_run, chain, deploy_args, done, exactly_one_of_two_runs, hub, pulled, status_of,
};

/// The emulator, a new container for one test (named after `name`) and
/// the location `az://CONTAINER/hub.state`; `None` without the emulator.
fn remote_state(name: &str) -> Option<(&'static Azurite, String, String)> {
    let azurite = azurite()?;
    let container = azurite.container(name);
    let location = format!("az://{container}/hub.state");
    Some((azurite, container, location))
}

#[test]
fn azurite_refuses_a_create_over_an_existing_blob() {
    let Some(azurite) = azurite() else { return };
    let container = azurite.container("create");
    let blob = format!("{container}/state");
    let create = [("If-None-Match", "*")];
    let first = azurite.request("PUT", &blob, &[], &create, b"one");
    assert_eq!(first.status, 201, "{}", first.body);
    let second = azurite.request("PUT", &blob, &[], &create, b"two");
    assert!(
        [409, 412].contains(&second.status),
        "{} {}",
        second.status,
        second.body
    );
    assert_eq!(azurite.get(&container, "state").as_deref(), Some("one"));
}

#[test]
fn azurite_refuses_an_update_on_a_stale_etag() {
    let Some(azurite) = azurite() else { return };
    let container = azurite.container("update");
    let blob = format!("{container}/state");
    let first = azurite.request("PUT", &blob, &[], &[], b"one");
    assert_eq!(first.status, 201, "{}", first.body);
    let stale = first.header("etag").expect("an etag").to_string();
    let second = azurite.request("PUT", &blob, &[], &[("If-Match", &stale)], b"two");
    assert_eq!(
        second.status, 201,
        "the current etag is accepted: {}",
        second.body
    );
    let third = azurite.request("PUT", &blob, &[], &[("If-Match", &stale)], b"three");
    assert_eq!(third.status, 412, "{}", third.body);
    assert_eq!(azurite.get(&container, "state").as_deref(), Some("two"));
}

#[test]
fn deploy_plan_undeploy_and_unlock_with_the_state_in_a_container() {
    let Some((azurite, container, location)) = remote_state("runs") else {
        return;
    };
    let test = chain(3, "0", "");
    let deploy = hub(&test, azurite, &deploy_args(&location), &[]);
    deploy.success();
    assert!(done(&test, "c3"));
    let state = pulled(&test, azurite, &location);
    for c in ["c1", "c2", "c3"] {
        assert_eq!(status_of(&state, c), "deployed", "{c}");
    }
    assert!(azurite.get(&container, "hub.state.lock").is_none());
    assert!(azurite.get(&container, "hub.state").is_some());
    assert!(
        azurite.get(&container, "hub.state.backup").is_some(),
        "Azurite keeps no versions: the previous state is a backup blob"
    );
    let plan = ["plan", "hub.yaml.elaborate", "-s", &location, "--changed"];
    let plan = hub(&test, azurite, &plan, &[]);
    plan.success();
    assert!(plan.stdout.contains("3 unchanged"), "{}", plan.stdout);
    let undeploy = ["undeploy", "hub.yaml.elaborate", "-s", &location];
    hub(&test, azurite, &undeploy, &[]).success();
    assert!(!done(&test, "c1"));
    let state = pulled(&test, azurite, &location);
    assert_eq!(status_of(&state, "c1"), "undeployed");
    hub(&test, azurite, &["unlock", &location], &[])
        .failure()
        .stderr_has("is not locked");
}

#[test]
fn of_two_deploys_started_together_on_a_container_exactly_one_runs() {
    let Some(azurite) = azurite() else { return };
    let container = azurite.container("race");
    for round in 0..5 {
        exactly_one_of_two_runs(azurite, &format!("az://{container}/round{round}"), round);
    }
}

/// The run's writes are conditional on the ETag it last wrote: a broken
/// lock and a pushed state stop it (see [`broken_lock_run`]).
#[test]
fn a_broken_lock_on_a_container_stops_the_old_run_and_the_new_state_survives() {
    let Some((azurite, _, location)) = remote_state("broken") else {
        return;
    };
    broken_lock_run(azurite, &location);
}

#[test]
fn a_missing_container_stops_before_any_component() {
    let Some(azurite) = azurite() else { return };
    let test = chain(1, "0", "");
    let location = "az://no-such-container/hub.state";
    let out = hub(&test, azurite, &deploy_args(location), &[]);
    out.failure().stderr_has(location);
    assert!(!done(&test, "c1"));
}
