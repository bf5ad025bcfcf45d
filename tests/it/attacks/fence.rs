//! Fencing (issue "Nothing fools the state", items 3 and 4): a run whose
//! lock is broken while a component runs, and another run that deploys on
//! the same state meanwhile. Run A deploys `a` (whose script breaks A's
//! lock with `hub unlock --force` and lets run B deploy `c`), then
//! would deploy `b`. Each row is one kind of state location, played five
//! times: A must start nothing after `a`, write nothing of B's (`KEY`,
//! `KEY.backup`), keep its own state in an `.errored` file whose hint says
//! another run changed the state, and `hub state push` of that file must
//! refuse to drop B's operation. A second table: `hub unlock --force` of
//! a lock whose holder still runs on this host asks on a terminal and
//! needs `--yes` in a script, for local and remote locks.

use super::Outside;
use crate::common::{pinned_command, Output, Test};
use crate::remote::azurite::azurite;
use crate::remote::server::{server, Store};

const STACK: &str = "version: 1
kind: stack
meta: {name: fenced}
components:
- {name: a, source: {dir: a}}
- {name: b, source: {dir: b}, depends: [a]}
- {name: c, source: {dir: c}}
lifecycle: {verbs: [deploy, undeploy], order: [a, b, c]}
---
version: 1
kind: component
meta: {name: a, kind: a, origin: a}
---
version: 1
kind: component
meta: {name: b, kind: b, origin: b}
---
version: 1
kind: component
meta: {name: c, kind: c, origin: c}
";

/// Where a row keeps its state.
#[derive(Clone, Copy, Debug)]
enum Place {
    Local,
    S3,
    Azure,
}

/// One scenario: a kind of location, what run A must say, and what
/// `hub state push` of A's `.errored` file must say.
struct Row {
    name: &'static str,
    place: Place,
    /// Run A's exit code and a fragment of its message.
    code: i32,
    message: &'static str,
    /// A fragment of the refusal of `hub state push` without `--force`.
    push_refusal: &'static str,
}

const ROWS: &[Row] = &[
    Row {
        name: "a local state file",
        place: Place::Local,
        code: 2,
        message: "hub.state.lock` was removed while this run held it",
        push_refusal: "has diverged from `hub.state.errored`",
    },
    Row {
        name: "an s3:// key",
        place: Place::S3,
        code: 2,
        message: "hub.state.lock` was removed while this run held it",
        push_refusal: "has diverged from `hub.state.errored`",
    },
    Row {
        name: "an az:// blob",
        place: Place::Azure,
        code: 2,
        message: "hub.state.lock` was removed while this run held it",
        push_refusal: "has diverged from `hub.state.errored`",
    },
];

/// Reads one object of a location (`hub.state.backup`…) directly.
type ObjectReader = Box<dyn Fn(&str) -> Option<String>>;

/// Writes one object of a location directly.
type ObjectWriter = Box<dyn Fn(&str, &str)>;

/// The location of one round, the variables its store needs, and how to
/// read one of its objects (`hub.state.backup`…) directly.
struct Spot {
    /// As run A (in the test's folder) names it.
    location: String,
    /// As run B (in component `a`'s folder) names it.
    from_a: String,
    env: Vec<(&'static str, String)>,
    object: ObjectReader,
    put: ObjectWriter,
}

fn spot(place: Place, test: &Test) -> Option<Spot> {
    match place {
        Place::Local => {
            let (root, at) = (test.root().to_path_buf(), test.root().to_path_buf());
            Some(Spot {
                location: "hub.state".into(),
                from_a: "../hub.state".into(),
                env: Vec::new(),
                object: Box::new(move |name| std::fs::read_to_string(root.join(name)).ok()),
                put: Box::new(move |name, text| std::fs::write(at.join(name), text).expect("put")),
            })
        }
        Place::S3 => {
            let server = server()?;
            let bucket = server.bucket("fence");
            let location = format!("s3://{bucket}/hub.state");
            let at = bucket.clone();
            Some(Spot {
                from_a: location.clone(),
                location,
                env: Store::env(server),
                object: Box::new(move |name| server.get(&bucket, name)),
                put: Box::new(move |name, text| {
                    let put = server.request("PUT", &format!("/{at}/{name}"), &[], text.as_bytes());
                    assert_eq!(put.status, 200, "{}", put.body);
                }),
            })
        }
        Place::Azure => {
            let azurite = azurite()?;
            let container = azurite.container("fence");
            let location = format!("az://{container}/hub.state");
            let at = container.clone();
            Some(Spot {
                from_a: location.clone(),
                location,
                env: Store::env(azurite),
                object: Box::new(move |name| azurite.get(&container, name)),
                put: Box::new(move |name, text| {
                    let blob = format!("{at}/{name}");
                    let put = azurite.request("PUT", &blob, &[], &[], text.as_bytes());
                    assert_eq!(put.status, 201, "{}", put.body);
                }),
            })
        }
    }
}

/// The stack, with `a`'s script breaking A's lock and running B once the
/// file `break` exists.
fn scenario(from_a: &str) -> Test {
    let breaker = format!(
        "#!/bin/sh\n[ -e ../break ] && \"$HUB_BIN\" unlock --force --yes {from_a} >> ../other-run.log 2>&1 && \
         HUB_OPERATION_ID=op-b \"$HUB_BIN\" deploy ../hub.yaml.elaborate -s {from_a} -c c >> ../other-run.log 2>&1\n\
         echo ok > ../a.done\n"
    );
    let mut test = Test::new()
        .file("hub.yaml.elaborate", STACK)
        .script("a/deploy.sh", &breaker);
    for name in ["b", "c"] {
        test = test.script(
            &format!("{name}/deploy.sh"),
            &format!("#!/bin/sh\necho ok > ../{name}.done\n"),
        );
    }
    for name in ["a", "b", "c"] {
        test = test.script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

fn hub(test: &Test, spot: &Spot, args: &[&str], operation: &str) -> Output {
    let mut command = pinned_command(test.root(), args);
    command
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN")
        .env("HOME", test.root())
        .env("HUB_BIN", assert_cmd::cargo::cargo_bin("hub"))
        .env("HUB_OPERATION_ID", operation);
    for (name, value) in &spot.env {
        command.env(name, value);
    }
    Output::of(command.output().expect("run hub"), test.root())
}

fn pulled(test: &Test, spot: &Spot) -> yaml_serde::Value {
    let out = hub(test, spot, &["state", "pull", &spot.location], "op-pull");
    out.success();
    yaml_serde::from_str(&out.stdout).expect("the pulled state parses")
}

fn status_of(state: &yaml_serde::Value, component: &str) -> String {
    state["components"][component]["status"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn last_operation(state: &yaml_serde::Value) -> String {
    state["operations"]
        .as_sequence()
        .and_then(|ops| ops.last())
        .and_then(|op| op["id"].as_str())
        .unwrap_or("")
        .to_string()
}

fn play(row: &Row, round: usize) {
    let scenario_name = format!("{} (round {round})", row.name);
    let outside = Outside::new();
    outside.victim("victim.txt");
    let before = outside.snapshot();
    let probe = Test::new();
    let Some(place) = spot(row.place, &probe) else {
        return;
    };
    let test = scenario(&place.from_a);
    let place = match row.place {
        Place::Local => spot(Place::Local, &test).expect("a local spot"),
        _ => place,
    };
    let done = |name: &str| test.root().join(format!("{name}.done")).exists();
    // A first deploy of everything (`op-0`), then the scenario.
    let everything = ["deploy", "hub.yaml.elaborate", "-s", &place.location];
    hub(&test, &place, &everything, "op-0").success();
    for name in ["a", "b", "c"] {
        std::fs::remove_file(test.root().join(format!("{name}.done"))).expect("done");
    }
    std::fs::write(test.root().join("break"), "").expect("break");
    let deploy = [
        "deploy",
        "hub.yaml.elaborate",
        "-s",
        &place.location,
        "-c",
        "a,b",
    ];
    let run_a = hub(&test, &place, &deploy, "op-a");
    let other = std::fs::read_to_string(test.root().join("other-run.log")).unwrap_or_default();
    assert_eq!(
        run_a.status, row.code,
        "{scenario_name}: run A: {}\nrun B: {other}",
        run_a.stderr
    );
    run_a
        .stderr_has(row.message)
        .stderr_has("another run (or a push) changed the state")
        .stderr_has("`op-b`");
    assert!(
        !run_a.stderr.contains("once the store works again"),
        "{scenario_name}: a lost state is not a store failure: {}",
        run_a.stderr
    );
    assert!(done("a") && done("c"), "{scenario_name}: {other}");
    assert!(
        !done("b"),
        "{scenario_name}: run A started `b` after losing the state"
    );

    // B's state survives whole: A wrote neither `KEY` nor `KEY.backup`.
    let state = pulled(&test, &place);
    assert_eq!(status_of(&state, "c"), "deployed", "{scenario_name}");
    assert_eq!(status_of(&state, "a"), "deploying", "{scenario_name}");
    assert_eq!(last_operation(&state), "op-b", "{scenario_name}");
    let backup = (place.object)("hub.state.backup").expect("a backup");
    assert!(
        backup.contains("op-b"),
        "{scenario_name}: the backup is B's state, not A's: {backup}"
    );

    // A's own state is kept, and cannot be pushed over B's by accident.
    let errored = test.root().join("hub.state.errored");
    let kept: yaml_serde::Value =
        yaml_serde::from_str(&std::fs::read_to_string(&errored).expect("errored file"))
            .expect("parses");
    assert_eq!(status_of(&kept, "a"), "deployed", "{scenario_name}");
    assert_eq!(
        status_of(&kept, "b"),
        "deployed",
        "{scenario_name}: `b` did not start; it is as op-0 left it"
    );
    let push = ["state", "push", "hub.state.errored", &place.location];
    let refused = hub(&test, &place, &push, "op-push");
    assert_eq!(refused.status, 1, "{scenario_name}: {}", refused.stderr);
    refused
        .stderr_has(row.push_refusal)
        .stderr_has("`op-b` (deploy")
        .stderr_has("`op-a` (deploy")
        .stderr_has("a: deploying there, deployed in the file")
        .stderr_has(&format!(
            "hub state push --force hub.state.errored {}",
            place.location
        ));
    assert_eq!(
        pulled(&test, &place),
        state,
        "{scenario_name}: push changed the state"
    );
    outside.assert_unchanged(&scenario_name, &before);
}

#[test]
fn a_run_that_lost_its_lock_starts_nothing_more_and_its_state_is_not_pushed_over_the_new_one() {
    for row in ROWS {
        for round in 0..5 {
            play(row, round);
        }
    }
}

/// `hub unlock --force` of a lock whose holder still runs on this host.
struct UnlockRow {
    name: &'static str,
    place: Place,
    args: &'static [&'static str],
    /// `Some(answer)`: run on a terminal, answering the question.
    terminal: Option<&'static str>,
    code: i32,
    message: &'static str,
    lock_stays: bool,
}

const LIVE: &str = "which is still running on this host; it was left alone";

const UNLOCK_ROWS: &[UnlockRow] = &[
    UnlockRow {
        name: "a local lock, in a script",
        place: Place::Local,
        args: &["unlock", "--force"],
        terminal: None,
        code: 1,
        message: LIVE,
        lock_stays: true,
    },
    UnlockRow {
        name: "an s3:// lock, in a script",
        place: Place::S3,
        args: &["unlock", "--force"],
        terminal: None,
        code: 1,
        message: LIVE,
        lock_stays: true,
    },
    UnlockRow {
        name: "an az:// lock, in a script",
        place: Place::Azure,
        args: &["unlock", "--force"],
        terminal: None,
        code: 1,
        message: LIVE,
        lock_stays: true,
    },
    UnlockRow {
        name: "a local lock, on a terminal, answered no",
        place: Place::Local,
        args: &["unlock", "--force"],
        terminal: Some("n"),
        code: 1,
        message: "which is still running; remove it? [y/N]",
        lock_stays: true,
    },
    UnlockRow {
        name: "an s3:// lock, on a terminal, answered yes",
        place: Place::S3,
        args: &["unlock", "--force"],
        terminal: Some("y"),
        code: 0,
        message: "removed the lock",
        lock_stays: false,
    },
    UnlockRow {
        name: "an az:// lock, in a script with --yes",
        place: Place::Azure,
        args: &["unlock", "--force", "--yes"],
        terminal: None,
        code: 0,
        message: "removed the lock",
        lock_stays: false,
    },
];

/// A lock held by this test's own process (alive, on this host), in the
/// format of `place`.
fn live_lock(place: Place) -> String {
    let me = std::process::id();
    let host = hub_state::lock::hostname();
    match place {
        Place::Local => crate::common::lock_text(me, &host),
        Place::S3 | Place::Azure => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .expect("time")
                .as_millis();
            format!(
                "{{\"pid\": {me}, \"host\": \"{host}\", \"user\": \"alice\", \"operation\": \"deploy\", \"started\": \"2026-01-01T00:00:00Z\", \"id\": \"lock-live\", \"command\": \"hub deploy\", \"expiresMs\": {}, \"startedMs\": {now}}}",
                now + 600_000
            )
        }
    }
}

/// `hub ARGS` on a terminal (`script` gives it one), typing `answer`.
fn on_a_terminal(test: &Test, spot: &Spot, args: &[&str], answer: &str) -> Output {
    let hub = assert_cmd::cargo::cargo_bin("hub");
    let line = std::iter::once(hub.display().to_string())
        .chain(args.iter().map(|a| a.to_string()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut command = std::process::Command::new("script");
    command
        .args(["-qec", &line, "/dev/null"])
        .current_dir(test.root())
        .env("HOME", test.root())
        .env_remove("AWS_PROFILE")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    for (name, value) in &spot.env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("script");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        // The question comes first: the answer waits in the terminal.
        stdin
            .write_all(format!("{answer}\n").as_bytes())
            .expect("answer");
    }
    let out = child.wait_with_output().expect("wait");
    let mut output = Output::of(out, test.root());
    // A terminal has one stream: what hub printed on stderr is in stdout.
    output.stderr = format!("{}{}", output.stderr, output.stdout);
    output
}

#[test]
fn unlock_force_of_a_live_holder_asks_on_a_terminal_and_needs_yes_in_a_script() {
    for row in UNLOCK_ROWS {
        let outside = Outside::new();
        outside.victim("victim.txt");
        let before = outside.snapshot();
        let test = scenario("unused");
        let Some(place) = spot(row.place, &test) else {
            continue;
        };
        let everything = ["deploy", "hub.yaml.elaborate", "-s", &place.location];
        hub(&test, &place, &everything, "op-0").success();
        let state = pulled(&test, &place);
        let lock = live_lock(row.place);
        (place.put)("hub.state.lock", &lock);
        let mut args = row.args.to_vec();
        args.push(&place.location);
        let out = match row.terminal {
            Some(answer) => on_a_terminal(&test, &place, &args, answer),
            None => hub(&test, &place, &args, "op-unlock"),
        };
        assert_eq!(out.status, row.code, "{}: {}", row.name, out.stderr);
        out.stderr_has(row.message)
            .stderr_has(&format!("process {}", std::process::id()));
        if row.code != 0 {
            out.stderr_has(&format!("hub unlock -s {} --force --yes", place.location));
        }
        let left = (place.object)("hub.state.lock");
        match row.lock_stays {
            true => assert_eq!(left.as_deref(), Some(lock.as_str()), "{}", row.name),
            false => assert_eq!(left, None, "{}", row.name),
        }
        assert_eq!(
            pulled(&test, &place),
            state,
            "{}: the state changed",
            row.name
        );
        outside.assert_unchanged(row.name, &before);
    }
}
