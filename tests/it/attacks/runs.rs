//! Runs that do not end the way they should: a component that never ends
//! (`--timeout`, `lifecycle.timeouts`), hub's stdout and stderr closed under
//! it (`hub deploy 2>&1 | head -1`), SIGTERM and SIGINT.
//!
//! Every row starts from the same deployed stack: `base` (with an output),
//! `slow` (depends on `base`) and `after` (depends on `slow`). The row makes
//! `slow` hang or fail, runs hub, and asserts the exit code, the message,
//! what the state says of `slow`, that `base` and `after` kept their
//! entries, that `after` was not started again, and that nothing `slow`
//! started is left running.

use crate::common::{read_documents, Test, PINNED};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use yaml_serde::Value;

const STACK: &str = "\
version: 1
kind: stack
meta: {name: runs}
components:
- {name: base, source: {dir: base}}
- {name: slow, source: {dir: slow}, depends: [base]HOOKS}
- {name: after, source: {dir: after}, depends: [slow]}
lifecycle:
  verbs: [deploy, undeploy]
  order: [base, slow, after]
TIMEOUTS---
version: 1
kind: component
meta: {name: base}
outputs:
- {name: host, fromTfVar: host}
---
version: 1
kind: component
meta: {name: slow}
---
version: 1
kind: component
meta: {name: after}
";

/// Records its run; then, as the file `mode` says: ends at once (no
/// file), prints 200 lines on each stream and fails (`fail`), or never
/// ends (`hang`), with a grandchild in its process group. The pids are
/// written before it waits, the group leader's last.
const SLOW: &str = "#!/bin/sh
echo run >> ../slow.ran
mode=$(cat ../mode 2>/dev/null)
if [ \"$mode\" = fail ]; then
  i=0
  while [ $i -lt 200 ]; do echo \"out line $i\"; echo \"err line $i\" >&2; i=$((i+1)); done
  exit 3
fi
[ \"$mode\" = hang ] || exit 0
echo hanging
sleep 600 &
echo $! > ../grandchild.pid
echo $$ > ../leader.tmp && mv ../leader.tmp ../leader.pid
wait
";

/// A pre-deploy hook that never ends, the same way.
const HANGING_HOOK: &str = "#!/bin/sh
sleep 600 &
echo $! > ../grandchild.pid
echo $$ > ../leader.tmp && mv ../leader.tmp ../leader.pid
wait
";

const DEPLOY: &[&str] = &["deploy", "hub.yaml.elaborate"];

/// How hub's stdout and stderr are given to it.
#[derive(Clone, Copy, PartialEq)]
enum Pipes {
    /// Files the test reads afterwards.
    Kept,
    /// Pipes whose reading ends are closed before hub writes anything.
    Closed,
}

/// What `slow` does in the row, and what the stack says.
#[derive(Clone, Copy)]
enum Slow {
    Hangs,
    Fails,
    /// A pre-deploy hook never ends; the implementation would end at once.
    HookHangs,
}

struct Row {
    name: &'static str,
    slow: Slow,
    /// The stack's `lifecycle.timeouts` lines (indented), or "".
    timeouts: &'static str,
    args: &'static [&'static str],
    env: &'static [(&'static str, &'static str)],
    pipes: Pipes,
    /// Sent to hub once `slow` hangs.
    signal: Option<i32>,
    code: i32,
    /// Fragments of hub's stderr (nothing to read with closed pipes).
    says: &'static [&'static str],
    /// `slow`'s entry afterwards: its status and a fragment of its message.
    slow_status: &'static str,
    slow_message: &'static str,
    /// A fragment of `slow`'s log file.
    logged: &'static str,
}

const fn row(name: &'static str, slow: Slow, args: &'static [&'static str]) -> Row {
    Row {
        name,
        slow,
        timeouts: "",
        args,
        env: &[],
        pipes: Pipes::Kept,
        signal: None,
        code: 1,
        says: &[],
        slow_status: "error",
        slow_message: "",
        logged: "",
    }
}

fn rows() -> Vec<Row> {
    const TIMEOUT_1S: &[&str] = &["deploy", "hub.yaml.elaborate", "--timeout", "1s"];
    vec![
        Row {
            says: &[
                "error: component `slow` failed: ",
                "timed out after 1s (--timeout)",
                "help: if `slow` needs longer, raise `--timeout`",
            ],
            slow_message: "timed out after 1s (--timeout)",
            logged: "--- timed out after",
            ..row(
                "timeout: --timeout 1s ends a component that never ends",
                Slow::Hangs,
                TIMEOUT_1S,
            )
        },
        Row {
            env: &[("HUB_TIMEOUT", "1s")],
            says: &["timed out after 1s (--timeout)"],
            slow_message: "timed out after 1s (--timeout)",
            logged: "hanging",
            ..row("timeout: HUB_TIMEOUT=1s does the same", Slow::Hangs, DEPLOY)
        },
        Row {
            says: &["timed out after 1s (--timeout)"],
            slow_message: "timed out after 1s (--timeout)",
            ..row(
                "timeout: --timeout 1s in a parallel run (-j 3)",
                Slow::Hangs,
                &["deploy", "hub.yaml.elaborate", "-j", "3", "--timeout", "1s"],
            )
        },
        Row {
            timeouts: "    slow: 1s\n    after: 1h30m\n",
            says: &[
                "timed out after 1s (lifecycle.timeouts)",
                "help: if `slow` needs longer, raise its entry in the stack's `lifecycle.timeouts`",
            ],
            slow_message: "timed out after 1s (lifecycle.timeouts)",
            ..row(
                "timeout: lifecycle.timeouts gives slow 1s over --timeout 1h",
                Slow::Hangs,
                &["deploy", "hub.yaml.elaborate", "--timeout", "1h"],
            )
        },
        Row {
            timeouts: "    slow: 1s\n",
            says: &["hook `hang.sh` (pre-deploy) timed out after 1s (lifecycle.timeouts)"],
            slow_message: "hook `hang.sh` (pre-deploy) timed out after 1s",
            ..row(
                "timeout: a pre-deploy hook that never ends",
                Slow::HookHangs,
                DEPLOY,
            )
        },
        Row {
            code: 124,
            says: &["error: `slow deploy` timed out after 1s (--timeout)"],
            // `invoke` writes no state.
            slow_status: "deployed",
            ..row(
                "timeout: hub invoke --timeout 1s",
                Slow::Hangs,
                &[
                    "invoke",
                    "slow",
                    "deploy",
                    "-m",
                    "hub.yaml.elaborate",
                    "-s",
                    "hub.yaml.state",
                    "--timeout",
                    "1s",
                ],
            )
        },
        Row {
            pipes: Pipes::Closed,
            slow_message: "exited with code 3",
            logged: "err line 199",
            ..row(
                "pipes: stdout and stderr closed at once, a component fails",
                Slow::Fails,
                DEPLOY,
            )
        },
        Row {
            pipes: Pipes::Closed,
            slow_message: "timed out after 1s (--timeout)",
            logged: "--- timed out after",
            ..row(
                "pipes: stdout and stderr closed, a component times out",
                Slow::Hangs,
                TIMEOUT_1S,
            )
        },
        Row {
            signal: Some(libc::SIGTERM),
            code: 143,
            says: &["error: `slow` was interrupted by SIGTERM; the state records the run as interrupted"],
            slow_message: "interrupted by SIGTERM",
            logged: "--- was interrupted by SIGTERM",
            ..row(
                "signal: SIGTERM while a component runs exits 143",
                Slow::Hangs,
                DEPLOY,
            )
        },
        Row {
            signal: Some(libc::SIGINT),
            pipes: Pipes::Closed,
            code: 130,
            slow_message: "interrupted by SIGINT",
            logged: "--- was interrupted by SIGINT",
            ..row(
                "signal: SIGINT with stdout and stderr closed exits 130",
                Slow::Hangs,
                DEPLOY,
            )
        },
    ]
}

/// The stack of `row`, deployed once with `slow` ending at once.
fn deployed(row: &Row) -> Test {
    let hooks = match row.slow {
        Slow::HookHangs => ", hooks: [{file: hang.sh, triggers: [pre-deploy]}]",
        _ => "",
    };
    let timeouts = match row.timeouts {
        "" => String::new(),
        lines => format!("  timeouts:\n{lines}"),
    };
    let stack = STACK.replace("HOOKS", hooks).replace("TIMEOUTS", &timeouts);
    let echo_outputs = "echo; echo Outputs:; echo 'host = db.internal'; echo\n";
    let mut test = Test::new()
        .file("hub.yaml.elaborate", &stack)
        .script(
            "base/deploy.sh",
            &format!("#!/bin/sh\necho run >> ../base.ran\n{echo_outputs}"),
        )
        .script("slow/deploy.sh", SLOW)
        .script("after/deploy.sh", "#!/bin/sh\necho run >> ../after.ran\n");
    for name in ["base", "slow", "after"] {
        test = test.script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    if matches!(row.slow, Slow::HookHangs) {
        // A hook that ends at once for the first deploy (a missing one
        // would stop it); the hanging one replaces it below.
        test = test
            .script("slow/hang.sh", "#!/bin/sh\n")
            .script("slow/hang.sh.off", HANGING_HOOK);
    }
    let first = hub(&test, DEPLOY, &[], Pipes::Kept, None);
    assert_eq!(
        first.code, 0,
        "{}: the first deploy: {}",
        row.name, first.stderr
    );
    test
}

/// What a run of hub left.
struct Ended {
    code: i32,
    stderr: String,
}

/// Runs hub in `test`'s folder with pinned ids, `signal` sent once `slow`
/// hangs; kills it and fails when it has not ended after a minute.
fn hub(
    test: &Test,
    args: &[&str],
    env: &[(&str, &str)],
    pipes: Pipes,
    signal: Option<i32>,
) -> Ended {
    let root = test.root();
    let stderr_file = root.join("hub.stderr");
    let mut command = Command::new(assert_cmd::cargo::cargo_bin("hub"));
    command
        .current_dir(root)
        .args(args)
        .envs(PINNED)
        .envs(env.iter().copied())
        .env_remove("HUB_FORCE")
        .env_remove("HUB_JOBS")
        .env_remove("ENV")
        .stdin(Stdio::null());
    if !env.iter().any(|(name, _)| *name == "HUB_TIMEOUT") {
        command.env_remove("HUB_TIMEOUT");
    }
    match pipes {
        Pipes::Kept => {
            let file = |name: &str| std::fs::File::create(root.join(name)).expect("output file");
            command
                .stdout(file("hub.stdout"))
                .stderr(file("hub.stderr"));
        }
        Pipes::Closed => {
            command.stdout(Stdio::piped()).stderr(Stdio::piped());
        }
    }
    let mut child = command.spawn().expect("spawn hub");
    // Nobody reads them: hub's first write fails with EPIPE.
    drop(child.stdout.take());
    drop(child.stderr.take());
    if let Some(signal) = signal {
        wait_for(&root.join("leader.pid"), "the component to hang");
        // SAFETY: kill only sends a signal to the child this test spawned.
        unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for hub") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            if let Some(leader) = pid_in(&root.join("leader.pid")) {
                // SAFETY: ends the group the scenario's component leads.
                unsafe { libc::kill(-leader, libc::SIGKILL) };
            }
            panic!("hub {args:?} still ran after a minute: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ended {
        code: status.code().unwrap_or(-1),
        stderr: match pipes {
            Pipes::Kept => std::fs::read_to_string(&stderr_file).expect("hub's stderr"),
            Pipes::Closed => String::new(),
        },
    }
}

/// Waits (at most 30 s) for `path` to exist.
fn wait_for(path: &Path, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether a process (`pid` > 0) or a process group (`pid` < 0) exists.
fn alive(pid: i32) -> bool {
    // SAFETY: signal 0 only checks that the process or group exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// The pid in `path`, when the file is there.
fn pid_in(path: &Path) -> Option<i32> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// Panics when the process or group `pid` is still there 5 s after hub
/// ended (an orphan may take a moment to be reaped by init).
fn assert_gone(scenario: &str, what: &str, pid: i32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        if Instant::now() > deadline {
            // SAFETY: ends what the scenario left, after the failure is known.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            panic!("{scenario}: {what} {pid} is still running after hub ended");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn lines(test: &Test, file: &str) -> usize {
    std::fs::read_to_string(test.root().join(file))
        .unwrap_or_default()
        .lines()
        .count()
}

fn text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => yaml_serde::to_string(other)
            .expect("yaml")
            .trim()
            .to_string(),
    }
}

#[test]
fn runs_that_do_not_end_as_they_should() {
    for row in rows() {
        let name = row.name;
        let test = deployed(&row);
        let before = read_documents(&test.root().join("hub.yaml.state")).remove(0);
        match row.slow {
            Slow::Hangs => std::fs::write(test.root().join("mode"), "hang").expect("mode"),
            Slow::Fails => std::fs::write(test.root().join("mode"), "fail").expect("mode"),
            Slow::HookHangs => std::fs::rename(
                test.root().join("slow/hang.sh.off"),
                test.root().join("slow/hang.sh"),
            )
            .expect("hook"),
        }
        let ended = hub(&test, row.args, row.env, row.pipes, row.signal);
        assert_ne!(ended.code, 101, "{name}: hub panicked: {}", ended.stderr);
        assert_eq!(ended.code, row.code, "{name}: {}", ended.stderr);
        for fragment in row.says {
            assert!(
                ended.stderr.contains(fragment),
                "{name}: stderr lacks {fragment:?}:\n{}",
                ended.stderr
            );
        }

        // Nothing `slow` started is left.
        if let Some(leader) = pid_in(&test.root().join("leader.pid")) {
            assert_gone(name, "the process group", -leader);
        }
        if let Some(grandchild) = pid_in(&test.root().join("grandchild.pid")) {
            assert_gone(name, "the grandchild", grandchild);
        }

        // The state is whole and says what happened; nothing was lost.
        assert!(
            !test.root().join("hub.yaml.state.lock").exists(),
            "{name}: the lock is released"
        );
        let state = read_documents(&test.root().join("hub.yaml.state")).remove(0);
        let slow = &state["components"]["slow"];
        assert_eq!(text(&slow["status"]), row.slow_status, "{name}: {slow:?}");
        assert!(
            text(&slow["message"]).contains(row.slow_message),
            "{name}: {slow:?}"
        );
        for kept in ["base", "after"] {
            assert_eq!(
                text(&state["components"][kept]["status"]),
                "deployed",
                "{name}: {kept}"
            );
        }
        let outputs = |state: &Value| state["components"]["base"]["rawOutputs"].clone();
        assert_eq!(outputs(&state), outputs(&before), "{name}: base's outputs");
        assert!(text(&outputs(&state)).contains("db.internal"), "{name}");
        assert_eq!(lines(&test, "after.ran"), 1, "{name}: `after` ran again");
        if row.slow_status == "error" {
            assert_eq!(text(&state["status"]), "incomplete", "{name}");
            let operations = state["operations"].as_sequence().expect("operations");
            let last = operations.last().expect("an operation");
            assert_ne!(text(&last["status"]), "success", "{name}");
            assert_eq!(
                operations.len(),
                2,
                "{name}: the first deploy's operation is kept"
            );
        } else {
            assert_eq!(state, before, "{name}: the state is as it was");
        }
        if !row.logged.is_empty() {
            let log = std::fs::read_to_string(test.root().join("hub.yaml.state.logs/slow.log"))
                .unwrap_or_default();
            assert!(log.contains(row.logged), "{name}: slow.log:\n{log}");
        }
    }
}

/// A `lifecycle.timeouts` entry or `--timeout` that cannot be right: the
/// command, the file to write, the exit code and what stderr must say.
struct BadLimit {
    name: &'static str,
    /// The stack's `lifecycle.timeouts` lines (indented).
    timeouts: &'static str,
    args: &'static [&'static str],
    code: i32,
    says: &'static [&'static str],
}

fn bad_limits() -> Vec<BadLimit> {
    vec![
        BadLimit {
            name: "an entry for a component the stack does not have",
            timeouts: "    slow: 1s\n    slw: 5m\n",
            args: DEPLOY,
            code: 1,
            says: &[
                "error: `lifecycle.timeouts` names `slw`, which is not a component of the stack",
                "--> hub.yaml.elaborate:13:5",
                "help: did you mean `slow`?",
            ],
        },
        BadLimit {
            name: "an entry that is not a duration",
            timeouts: "    slow: soon\n",
            args: DEPLOY,
            code: 1,
            says: &[
                "error: the `lifecycle.timeouts` entry of `slow`: `soon` is not a duration",
                "--> hub.yaml.elaborate:12:5",
                "help: for example `slow: 15m` or `slow: 1h30m`; `0` means no limit",
            ],
        },
        BadLimit {
            name: "an entry with an unknown unit, seen by hub plan",
            timeouts: "    after: 1d\n",
            args: &["plan", "hub.yaml.elaborate"],
            code: 1,
            says: &["`1d` is not a duration", "--> hub.yaml.elaborate:12:5"],
        },
        BadLimit {
            name: "--timeout that is not a duration",
            timeouts: "",
            args: &["undeploy", "hub.yaml.elaborate", "--timeout", "1h30"],
            code: 2,
            says: &["invalid value '1h30' for '--timeout <DURATION>': `1h30` is not a duration"],
        },
    ]
}

#[test]
fn a_limit_that_cannot_be_right_is_refused_before_anything_runs() {
    for row in bad_limits() {
        let name = row.name;
        let test = deployed(&row_with(Slow::Hangs, ""));
        let state_file = test.root().join("hub.yaml.state");
        let before = std::fs::read(&state_file).expect("state");
        let timeouts = match row.timeouts {
            "" => String::new(),
            lines => format!("  timeouts:\n{lines}"),
        };
        let stack = STACK.replace("HOOKS", "").replace("TIMEOUTS", &timeouts);
        std::fs::write(test.root().join("hub.yaml.elaborate"), stack).expect("stack");
        std::fs::write(test.root().join("mode"), "hang").expect("mode");
        let ended = hub(&test, row.args, &[], Pipes::Kept, None);
        assert_eq!(ended.code, row.code, "{name}: {}", ended.stderr);
        for fragment in row.says {
            assert!(
                ended.stderr.contains(fragment),
                "{name}: stderr lacks {fragment:?}:\n{}",
                ended.stderr
            );
        }
        assert_eq!(std::fs::read(&state_file).expect("state"), before, "{name}");
        assert_eq!(lines(&test, "base.ran"), 1, "{name}: nothing ran");
        assert_eq!(lines(&test, "slow.ran"), 1, "{name}: nothing ran");
    }
}

/// A row of the first table that only shapes the stack.
fn row_with(slow: Slow, timeouts: &'static str) -> Row {
    Row {
        timeouts,
        ..row("setup", slow, DEPLOY)
    }
}

/// `hub plan` shows the limit of each component that has one.
#[test]
fn plan_shows_each_components_limit() {
    let test = deployed(&row_with(Slow::Hangs, "    slow: 90s\n    after: 0\n"));
    let stdout = |format: &str| {
        // `--verbose`: the components only run again, so a plan of the
        // changes shows each on one line.
        let args = [
            "plan",
            "hub.yaml.elaborate",
            "--format",
            format,
            "--verbose",
        ];
        let ended = hub(&test, &args, &[], Pipes::Kept, None);
        assert_eq!(ended.code, 0, "{}", ended.stderr);
        std::fs::read_to_string(test.root().join("hub.stdout")).expect("stdout")
    };
    let text = stdout("text");
    assert!(
        text.contains("\n  timeout: 1m30s (lifecycle.timeouts)\n"),
        "{text}"
    );
    assert_eq!(
        text.matches("timeout:").count(),
        1,
        "`after: 0` is no limit: {text}"
    );
    let json: serde_json::Value = serde_json::from_str(&stdout("json")).expect("json");
    let components = json["components"].as_array().expect("components");
    let timeouts: Vec<&serde_json::Value> = components.iter().map(|c| &c["timeout"]).collect();
    assert_eq!(
        timeouts,
        [
            &serde_json::Value::Null,
            &serde_json::json!("1m30s"),
            &serde_json::Value::Null
        ]
    );
    assert!(stdout("markdown").contains("Timeout: 1m30s (`lifecycle.timeouts`)"));
}
