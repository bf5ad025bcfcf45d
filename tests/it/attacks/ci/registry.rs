//! The change registry's names, `--sha`/`--author`, the apply lock and
//! live lock holders (issue 38, item 8 and the lock items of item 10).
//! Every row runs the real binary against a local state and against a
//! state in the S3 test server (moto), one after the other: the registry
//! and the locks must hold on both.

use crate::common::{hub_binary, Output, Test, PINNED};
use crate::remote::server::{server, Server};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// A stack of one component, `app`, whose deploy appends a line to
/// `applied.log` after sleeping `sleep` seconds (and writes `started`
/// first).
fn stack(sleep: &str) -> Test {
    let stack = "version: 1\nkind: stack\nmeta: {name: prs}\ncomponents:\n  - {name: app, source: {dir: app}}\n";
    let manifest = "version: 1\nkind: component\nmeta: {name: app}\n";
    Test::new()
        .file("hub.yaml", stack)
        .file("app/hub-component.yaml", manifest)
        .script(
            "app/deploy.sh",
            &format!(
                "#!/bin/sh\ntouch ../started\nsleep {sleep}\necho deployed >> ../applied.log\n"
            ),
        )
        .script(
            "app/undeploy.sh",
            "#!/bin/sh\necho undeployed >> ../applied.log\n",
        )
}

/// Where a row keeps its state: a local file, or a key of a new bucket.
struct Place {
    state: String,
    env: Vec<(&'static str, String)>,
    /// The server and bucket of a remote state.
    remote: Option<(&'static Server, String)>,
}

impl Place {
    /// Both places; without the S3 server (moto missing, outside CI) the
    /// local one only, as the remote tests of the suite do.
    fn both(name: &str) -> Vec<Place> {
        let mut places = vec![Place {
            state: "hub.state".into(),
            env: Vec::new(),
            remote: None,
        }];
        if let Some(server) = server() {
            let bucket = server.bucket(name);
            places.push(Place {
                state: format!("s3://{bucket}/hub.state"),
                env: crate::remote::server::Store::env(server),
                remote: Some((server, bucket)),
            });
        }
        places
    }

    fn command(&self, test: &Test, args: &[&str], env: &[(&str, &str)]) -> std::process::Command {
        // `pinned_command`'s binary and variables, as a process to spawn.
        let mut command = std::process::Command::new(hub_binary());
        command
            .current_dir(test.root())
            .args(args)
            .envs(PINNED)
            .env_remove("HUB_FORCE")
            .env_remove("HUB_JOBS")
            .env_remove("ENV")
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .env_remove("AWS_PROFILE")
            .env_remove("GITHUB_ACTOR")
            .env_remove("GITLAB_USER_LOGIN")
            .env("USER", "tester")
            .envs(self.env.iter().map(|(k, v)| (*k, v.as_str())))
            .envs(env.iter().copied());
        command
    }

    fn hub_env(&self, test: &Test, args: &[&str], env: &[(&str, &str)]) -> Output {
        let out = self.command(test, args, env).output().expect("run hub");
        Output::of(out, test.root())
    }

    fn hub(&self, test: &Test, args: &[&str]) -> Output {
        self.hub_env(test, args, &[])
    }

    fn plan(&self, test: &Test, change: &str, more: &[&str]) -> Output {
        let mut args = vec!["plan", "hub.yaml", "-s", &self.state, "--change", change];
        args.extend_from_slice(more);
        self.hub(test, &args)
    }

    fn deploy(&self, test: &Test, change: &str) -> Output {
        self.hub(test, &["deploy", "--change", change, "-s", &self.state])
    }

    fn show(&self, test: &Test, change: &str) -> Output {
        self.hub(test, &["change", "show", change, "-s", &self.state])
    }

    /// Writes a registry document by hand (as an older version, or
    /// someone with write access, left it).
    fn write_document(&self, test: &Test, name: &str, text: &str) {
        match &self.remote {
            Some((server, bucket)) => {
                let path = format!("/{bucket}/hub.state.changes/{name}");
                let put = server.request("PUT", &path, &[], text.as_bytes());
                assert_eq!(put.status, 200, "{}", put.body);
            }
            None => {
                use std::os::unix::fs::PermissionsExt;
                let path = test.root().join("hub.state.changes").join(name);
                let mut folder = path.parent().expect("folder").to_path_buf();
                std::fs::create_dir_all(&folder).expect("folders");
                while folder != test.root() {
                    let mode = std::fs::Permissions::from_mode(0o700);
                    std::fs::set_permissions(&folder, mode).expect("mode");
                    folder.pop();
                }
                std::fs::write(&path, text).expect("write");
                let mode = std::fs::Permissions::from_mode(0o600);
                std::fs::set_permissions(&path, mode).expect("mode");
            }
        }
    }
}

fn applied(test: &Test) -> String {
    std::fs::read_to_string(test.root().join("applied.log")).unwrap_or_default()
}

/// Fails the row naming the place.
#[track_caller]
fn check(place: &Place, ok: bool, what: &str, out: &Output) {
    assert!(
        ok,
        "{} ({}): {what}\nstatus {}\nstdout:\n{}\nstderr:\n{}",
        place.state,
        if place.remote.is_some() {
            "S3"
        } else {
            "local"
        },
        out.status,
        out.stdout,
        out.stderr
    );
}

#[test]
fn a_change_named_after_the_registrys_own_files_breaks_no_other_change() {
    for place in Place::both("own-names") {
        let test = stack("0");
        for id in ["apply-lock.json", "apply-waiting.json"] {
            let out = place.plan(&test, id, &[]);
            check(&place, out.status == 0, "the plan of an odd id", &out);
        }
        let out = place.plan(&test, "1", &[]);
        check(&place, out.status == 0, "change 1 plans", &out);
        check(
            &place,
            !out.stderr.contains("hub unlock"),
            "no hint to a command that answers `not locked`",
            &out,
        );
        let out = place.deploy(&test, "1");
        check(&place, out.status == 0, "change 1 applies", &out);
        assert_eq!(applied(&test), "deployed\n");
        let out = place.hub(&test, &["change", "list", "-s", &place.state]);
        let listed = ["1 ", "apply-lock.json ", "apply-waiting.json "]
            .iter()
            .all(|id| out.stdout.lines().any(|l| l.starts_with(id)));
        check(&place, out.status == 0 && listed, "all three listed", &out);
        check(
            &place,
            out.stdout.contains("apply lock: held by change 1 since"),
            "the lock is change 1's",
            &out,
        );
    }
}

#[test]
fn a_change_id_that_is_a_path_or_holds_a_newline_is_refused_naming_the_flag() {
    for place in Place::both("bad-ids") {
        let test = stack("0");
        for id in ["../x", "1\n   2  merged", "a/../../b", ".hidden"] {
            let out = place.plan(&test, id, &[]);
            let named = out.stderr.contains("(from `--change`)")
                && out
                    .stderr
                    .contains("help: give the pull or merge request's number");
            check(
                &place,
                out.status != 0 && named,
                "refused, naming the flag",
                &out,
            );
            check(
                &place,
                !out.stderr.lines().any(|l| l.starts_with("   2")),
                "the id is shown on one line",
                &out,
            );
        }
        assert!(!test.root().join("hub.state.changes").exists());
        assert!(!test.root().join("x").exists() && !test.root().join("b").exists());
        let out = place.hub(&test, &["change", "show", "../x", "-s", &place.state]);
        check(
            &place,
            out.status != 0 && out.stderr.contains("(from `ID`)"),
            "show names its argument",
            &out,
        );
    }
}

#[test]
fn a_sha_that_is_not_a_commit_id_is_refused_and_nothing_recorded() {
    for place in Place::both("bad-sha") {
        let test = stack("0");
        for sha in ["abc1234\n   2  merged, 2026-01-01", "zzzzzzz", "abc"] {
            let out = place.plan(&test, "1", &["--sha", sha]);
            let named =
                out.stderr.contains("is not a commit id") && out.stderr.contains("(from `--sha`)");
            check(
                &place,
                out.status != 0 && named,
                "refused, naming --sha",
                &out,
            );
        }
        let out = place.show(&test, "1");
        check(
            &place,
            out.status != 0 && out.stderr.contains("has no records"),
            "nothing was recorded",
            &out,
        );
        let out = place.plan(&test, "1", &["--sha", "0123abcDEF4567"]);
        check(&place, out.status == 0, "a commit id passes", &out);
    }
}

/// A line `hub change show 1` must never print: a forged merge.
const FORGED: &str = "   2  merged, 2026-01-01T00:00:00Z by admin";

#[test]
fn an_author_cannot_forge_a_line_of_change_show() {
    for place in Place::both("bad-author") {
        let test = stack("0");
        let author = format!("mallory\n{FORGED}");
        let out = place.plan(&test, "1", &["--author", &author]);
        check(
            &place,
            out.status != 0 && out.stderr.contains("(from `--author`)"),
            "refused, naming --author",
            &out,
        );
        // The same from the variable it defaults to.
        let args = ["plan", "hub.yaml", "-s", &place.state, "--change", "1"];
        let out = place.hub_env(&test, &args, &[("GITHUB_ACTOR", &author)]);
        check(
            &place,
            out.status != 0 && out.stderr.contains("(from `$GITHUB_ACTOR`)"),
            "refused, naming the variable",
            &out,
        );
        let out = place.show(&test, "1");
        check(&place, !out.stdout.contains(FORGED), "nothing forged", &out);
        // A registry written by hand (or by an older version, in its
        // layout): shown inertly.
        let record = format!(
            "{{\"kind\": \"plan\", \"time\": \"2026-01-01T00:00:00Z\", \"author\": {}, \"status\": \"failed\", \"verb\": \"deploy\", \"reason\": \"x\\r{FORGED}\"}}",
            serde_json::to_string(&author).expect("json")
        );
        place.write_document(&test, "1/000001.json", &record);
        let out = place.show(&test, "1");
        let lines: Vec<&str> = out.stdout.lines().collect();
        check(
            &place,
            out.status == 0 && lines.len() == 3 && !out.stdout.contains(&format!("\n{FORGED}")),
            "one line per record",
            &out,
        );
        check(
            &place,
            !out.stdout.contains('\r') && out.stdout.contains("by mallory\\n   2  merged"),
            "the author shown escaped",
            &out,
        );
    }
}

/// Waits until `ready`, at most 30 s.
fn wait_for(mut ready: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ready() {
        assert!(start.elapsed() < Duration::from_secs(30), "timed out");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn signal(child: &Child, signal: &str) {
    let status = std::process::Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill {signal}");
}

#[test]
fn a_live_holder_whose_lease_expired_is_not_called_stopped() {
    for place in Place::both("live-holder") {
        let test = stack("1");
        let lease = [("HUB_LOCK_LEASE", "0.6")];
        let args = ["deploy", "hub.yaml", "-s", &place.state];
        let mut holder = place
            .command(&test, &args, &lease)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn the holder");
        wait_for(|| test.root().join("started").exists());
        // The holder pauses (as a swapped-out or stopped process does):
        // no renewal, its lease expires, and it is still alive here.
        signal(&holder, "-STOP");
        std::thread::sleep(Duration::from_millis(1_500));
        let second = place.hub_env(&test, &args, &lease);
        let unlocked = place.hub_env(&test, &["unlock", &place.state], &lease);
        signal(&holder, "-CONT");
        let finished = holder.wait().expect("wait for the holder");
        check(
            &place,
            second.status != 0,
            "the second run is refused",
            &second,
        );
        check(
            &place,
            second.stderr.contains("is locked")
                && !second.stderr.contains("stopped without")
                && !second.stderr.contains("expired lease"),
            "the holder is not called stopped",
            &second,
        );
        check(
            &place,
            !second.stderr.contains("remove it with `hub unlock"),
            "the hint does not invite unlocking",
            &second,
        );
        check(
            &place,
            unlocked.status != 0,
            "`hub unlock` leaves it",
            &unlocked,
        );
        assert!(finished.success(), "the holder finishes");
        assert_eq!(applied(&test), "deployed\n", "the component ran once");
    }
}

#[test]
fn of_two_applies_of_one_change_at_once_the_loser_records_nothing() {
    for place in Place::both("same-change") {
        let test = stack("2");
        let out = place.plan(&test, "1", &[]);
        check(&place, out.status == 0, "planned", &out);
        let args = ["deploy", "--change", "1", "-s", &place.state];
        let children: Vec<Child> = (0..2)
            .map(|_| {
                place
                    .command(&test, &args, &[])
                    .stdout(Stdio::null())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("spawn")
            })
            .collect();
        let outs: Vec<Output> = children
            .into_iter()
            .map(|c| Output::of(c.wait_with_output().expect("wait"), test.root()))
            .collect();
        let winners = outs.iter().filter(|o| o.status == 0).count();
        assert_eq!(winners, 1, "{}\n---\n{}", outs[0].stderr, outs[1].stderr);
        assert_eq!(applied(&test), "deployed\n");
        let out = place.show(&test, "1");
        let applies = out
            .stdout
            .lines()
            .filter(|l| l.contains("apply of plan"))
            .count();
        check(
            &place,
            applies == 1 && !out.stdout.contains(" failed ("),
            "one apply, succeeded",
            &out,
        );
        check(
            &place,
            out.stdout.contains("(applied: it applied"),
            "the lock says applied",
            &out,
        );
        let loser = outs.iter().find(|o| o.status != 0).expect("a loser");
        check(
            &place,
            loser.stderr.contains("nothing was recorded")
                || loser.stderr.contains("another apply of it is running")
                // On a loaded machine the loser may start after the
                // winner wrote the state: its plan is then stale.
                || loser.stderr.contains("is stale: the state `"),
            "the loser says it recorded nothing",
            loser,
        );
    }
}

#[test]
fn a_plain_deploy_or_undeploy_refuses_while_a_change_holds_the_apply_lock() {
    for place in Place::both("plain") {
        let test = stack("0");
        place.plan(&test, "7", &[]);
        let out = place.deploy(&test, "7");
        check(&place, out.status == 0, "change 7 applies", &out);
        for verb in ["deploy", "undeploy"] {
            let out = place.hub(&test, &[verb, "hub.yaml", "-s", &place.state]);
            let named = out.stderr.contains(&format!(
                "`hub {verb}` refused: change `7` holds the apply lock"
            )) && out.stderr.contains("--ignore-change-lock");
            check(
                &place,
                out.status != 0 && named,
                "refused, naming change 7",
                &out,
            );
        }
        assert_eq!(applied(&test), "deployed\n", "nothing ran");
        for verb in ["deploy", "undeploy"] {
            let args = [verb, "hub.yaml", "-s", &place.state, "--ignore-change-lock"];
            let out = place.hub(&test, &args);
            check(&place, out.status == 0, "runs when told to", &out);
        }
        assert_eq!(applied(&test), "deployed\ndeployed\nundeployed\n");
    }
}

#[test]
fn a_damaged_apply_marker_is_named_not_sent_to_hub_unlock() {
    for place in Place::both("marker") {
        let test = stack("0");
        place.write_document(&test, "apply-waiting.json", "{not json");
        let out = place.plan(&test, "1", &[]);
        check(
            &place,
            out.status != 0 && !out.stderr.contains("hub unlock"),
            "no hint to `hub unlock`",
            &out,
        );
        check(
            &place,
            out.stderr.contains("apply-waiting.json") && out.stderr.contains("remove"),
            "the hint names the marker",
            &out,
        );
        assert!(!Path::new(&test.root().join("applied.log")).exists());
    }
}
