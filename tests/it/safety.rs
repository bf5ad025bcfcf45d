//! Hostile input and hostile components: bounded reading of YAML files,
//! bounded memory on component output, private files, dead locks.

use crate::common::{hub_isolated, Output, Test};
use std::time::{Duration, Instant};

const STACK: &str = "
    kind: stack
    meta:
      name: safe
    components:
      - name: a
        source:
          dir: a
";

/// A stack of one component `a` whose deploy script is `script`.
fn one_component(script: &str) -> Test {
    Test::new()
        .file("hub.yaml", STACK)
        .file(
            "a/hub-component.yaml",
            "kind: component\nmeta:\n  name: a\n",
        )
        .script("a/deploy.sh", script)
        .script("a/undeploy.sh", "#!/bin/sh\necho bye\n")
}

fn hub(test: &Test, args: &[&str]) -> Output {
    hub_isolated(test, args, &[("HUB_NOW", "2024-05-01T10:00:00Z")])
}

/// A stack whose parameter `a` (line 6) has `value` as its value.
fn stack_with_a(value: String) -> String {
    format!("kind: stack\nmeta:\n  name: deep\nparameters:\n  - name: a\n    value: {value}\n")
}

fn deep_flow(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// `x` anchored to a list of 2,000 items, then 2,000 aliases of it.
fn laughs() -> String {
    let items = vec!["x"; 2000].join(", ");
    let aliases = vec!["*x"; 2000].join(", ");
    format!(
        "parameters:\n  - name: a\n    value: &x [{items}]\n  - name: b\n    value: [{aliases}]\n"
    )
}

#[track_caller]
fn refused_quickly(out: &Output, started: Instant, location: &str, limit: &str) {
    out.failure().stderr_has(location).stderr_has(limit);
    assert_ne!(out.status, 101, "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
    // Not a speed check: an expansion that is not refused runs for many
    // minutes (or out of memory), far beyond this bound even on a loaded
    // machine.
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn limits_a_stack_nested_100000_deep_is_refused_at_once() {
    let stack = stack_with_a(deep_flow(100_000));
    let test = Test::new().file("hub.yaml", &stack);
    let started = Instant::now();
    let out = hub(&test, &["elaborate", "hub.yaml", "-o", "out.yaml"]);
    refused_quickly(
        &out,
        started,
        "hub.yaml:6:",
        "nested deeper than 128 levels",
    );
    out.stderr_has("Safety");
}

#[test]
fn limits_nesting_within_the_limit_is_read() {
    let stack = stack_with_a(deep_flow(100));
    let test = Test::new().file("hub.yaml", &stack);
    hub(&test, &["elaborate", "hub.yaml", "-o", "out.yaml"]).success();
}

#[test]
fn limits_block_nesting_past_the_limit_is_refused() {
    let mut text =
        String::from("kind: stack\nmeta:\n  name: deep\nparameters:\n  - name: a\n    value:\n");
    for level in 0..200 {
        text.push_str(&format!("{}k:\n", " ".repeat(6 + 2 * level)));
    }
    let test = Test::new().file("hub.yaml", &text);
    let started = Instant::now();
    let out = hub(&test, &["elaborate", "hub.yaml", "-o", "out.yaml"]);
    refused_quickly(&out, started, "hub.yaml:", "nested deeper than 128 levels");
}

#[test]
fn limits_billion_laughs_in_a_params_file_are_refused() {
    let test = one_component("#!/bin/sh\n").file("params.yaml", &laughs());
    let started = Instant::now();
    let out = hub(
        &test,
        &["elaborate", "hub.yaml", "params.yaml", "-o", "out.yaml"],
    );
    refused_quickly(&out, started, "params.yaml:", "more than 1000000 nodes");
}

#[test]
fn limits_a_few_aliases_are_still_read() {
    let params = "parameters:\n  - name: a\n    value: &x [1, 2]\n  - name: b\n    value: *x\n";
    let test = one_component("#!/bin/sh\n").file("params.yaml", params);
    hub(
        &test,
        &["elaborate", "hub.yaml", "params.yaml", "-o", "out.yaml"],
    )
    .success();
}

#[test]
fn limits_a_deep_state_is_refused_and_kept() {
    let state = format!("version: 1\nkind: state\nextra: {}\n", deep_flow(50_000));
    let test = one_component("#!/bin/sh\necho hi\n").file("s.state", &state);
    let started = Instant::now();
    let out = hub(&test, &["deploy", "hub.yaml", "-s", "s.state"]);
    refused_quickly(&out, started, "s.state:3:", "nested deeper than 128 levels");
    let kept = std::fs::read_to_string(test.root().join("s.state")).expect("state");
    assert_eq!(kept, state);
}

#[test]
fn limits_a_gzip_bomb_state_is_refused() {
    use std::io::Write;
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![b' '; 1 << 20];
    for _ in 0..65 {
        encoder.write_all(&zeros).expect("gzip");
    }
    let bomb = encoder.finish().expect("gzip");
    let test = one_component("#!/bin/sh\necho hi\n").bytes("s.state", &bomb);
    let started = Instant::now();
    // A state's limit is its own (512 MiB by default): set to 64 MiB here,
    // so that the bomb passes it without the test holding 512 MiB.
    let limit = [
        ("HUB_NOW", "2024-05-01T10:00:00Z"),
        ("HUB_MAX_STATE_BYTES", "67108864"),
    ];
    let out = hub_isolated(&test, &["deploy", "hub.yaml", "-s", "s.state"], &limit);
    refused_quickly(&out, started, "s.state", "larger than 64 MiB");
    assert_eq!(
        std::fs::read(test.root().join("s.state")).expect("state"),
        bomb
    );
}

/// Four components in a chain, each taking two 300-byte parameters and
/// printing a 400-byte output: a state of about 6 KB once all deployed,
/// under 1 KB before the first.
fn four_large_components() -> Test {
    let mut stack = String::from("kind: stack\nmeta:\n  name: big\ncomponents:\n");
    for i in 1..=4 {
        stack.push_str(&format!("  - name: c{i}\n    source: {{dir: c}}\n"));
        if i > 1 {
            stack.push_str(&format!("    depends: [c{}]\n", i - 1));
        }
    }
    let manifest = format!(
        "kind: component\nmeta:\n  name: c\nparameters:\n  - name: p1\n    value: {}\n  - name: p2\n    value: {}\n",
        "a".repeat(300),
        "b".repeat(300)
    );
    Test::new()
        .file("hub.yaml", &stack)
        .file("c/hub-component.yaml", &manifest)
        .script(
            "c/deploy.sh",
            &format!("#!/bin/sh\necho out = {}\n", "o".repeat(400)),
        )
        .script("c/undeploy.sh", "#!/bin/sh\n")
}

#[test]
fn limits_a_state_past_its_limit_is_not_written_and_what_was_written_reads() {
    let test = four_large_components();
    let small = [
        ("HUB_NOW", "2024-05-01T10:00:00Z"),
        ("HUB_MAX_STATE_BYTES", "5000"),
    ];
    let out = hub_isolated(&test, &["deploy", "hub.yaml", "-s", "s.state"], &small);
    // The parameters alone (2.4 KB) pass the estimate; the state written
    // at the end would not be read back: it is refused, with the limit
    // and how to raise it.
    assert_eq!(out.status, 2, "{}", out.stderr);
    out.stderr_has("the state `s.state` would take ")
        .stderr_has("more than the 5000 bytes every command reads back: it was not written")
        .stderr_has("set `HUB_MAX_STATE_BYTES` to a number of bytes");
    assert!(!out.stderr.contains("not valid YAML"), "{}", out.stderr);
    let written = std::fs::metadata(test.root().join("s.state")).expect("state");
    assert!(written.len() <= 5000, "{}", written.len());
    // Every later command reads what was written (the file and its
    // journal): the four components are deployed.
    let plan = hub_isolated(&test, &["plan", "hub.yaml", "-s", "s.state"], &small);
    plan.success();
    assert!(
        plan.stdout.contains("0 to create, 4 to update"),
        "{}",
        plan.stdout
    );
}

#[test]
fn limits_a_state_file_past_its_limit_is_refused_naming_the_limit() {
    let test = four_large_components();
    hub(&test, &["deploy", "hub.yaml", "-s", "s.state"]).success();
    let size = std::fs::metadata(test.root().join("s.state"))
        .expect("state")
        .len();
    assert!(size > 3000, "{size}");
    let small = [
        ("HUB_NOW", "2024-05-01T10:00:00Z"),
        ("HUB_MAX_STATE_BYTES", "3000"),
    ];
    let out = hub_isolated(&test, &["plan", "hub.yaml", "-s", "s.state"], &small);
    out.failure()
        .stderr_has(&format!(
            "the state file `s.state` is larger than the 3000 bytes a state may take ({size} bytes or more)"
        ))
        .stderr_has("set `HUB_MAX_STATE_BYTES`");
    assert!(!out.stderr.contains("not valid YAML"), "{}", out.stderr);
    // The default limit reads it.
    hub(&test, &["plan", "hub.yaml", "-s", "s.state"]).success();
}

#[test]
fn limits_validate_reports_the_limit() {
    let stack = stack_with_a(deep_flow(1000));
    let test = Test::new().file("hub.yaml", &stack);
    let out = hub(&test, &["validate", "hub.yaml"]);
    out.failure();
    assert!(
        out.stdout.contains("nested deeper than 128 levels")
            || out.stderr.contains("nested deeper than 128 levels"),
        "{}\n{}",
        out.stdout,
        out.stderr
    );
}

/// Runs hub with stdout thrown away and stderr in `stderr.txt`; returns
/// its exit code and the highest `VmHWM` (peak resident memory, KiB) seen
/// in `/proc/PID/status` while it ran. (`wait4`'s peak would also count the
/// moment between fork and exec, when the child still maps this test
/// process's memory.)
fn hub_peak_memory(test: &Test, args: &[&str]) -> (i32, u64) {
    let stderr = std::fs::File::create(test.root().join("stderr.txt")).expect("stderr file");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(test.root())
        .args(args)
        .env("HUB_NOW", "2024-05-01T10:00:00Z")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("spawn hub");
    let status_file = format!("/proc/{}/status", child.id());
    let mut peak = 0;
    loop {
        let status = std::fs::read_to_string(&status_file).unwrap_or_default();
        let hwm = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok());
        peak = peak.max(hwm.unwrap_or(0));
        if let Some(exit) = child.try_wait().expect("wait") {
            return (exit.code().unwrap_or(-1), peak);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

const BIG_OUTPUT: &str = r#"#!/bin/sh
echo Outputs:
printf 'big = '
head -c 3000000 /dev/zero | tr '\0' v
echo
echo 'small = 1'
echo
head -c 150000000 /dev/zero | tr '\0' x
echo
echo done
"#;

/// The same component as `BIG_OUTPUT` without its 150 MB line.
fn big_output_without_the_long_line() -> String {
    BIG_OUTPUT
        .lines()
        .filter(|line| !line.contains("150000000"))
        .map(|line| format!("{line}\n"))
        .collect()
}

fn with_big_outputs(script: &str) -> Test {
    one_component(script).file(
        "a/hub-component.yaml",
        "kind: component\nmeta:\n  name: a\noutputs:\n  - name: big\n    fromTfVar: big\n  - name: small\n    fromTfVar: small\n",
    )
}

/// Flat means: the 150 MB line adds nothing to what the same run without
/// it holds (the allocator's and the build's own memory differ, so the
/// bound is relative, with room for the 1 MiB kept and the read buffers).
#[test]
fn memory_a_component_printing_a_150_mb_line_leaves_hub_flat() {
    let without = with_big_outputs(&big_output_without_the_long_line());
    let (code, baseline_kib) = hub_peak_memory(&without, &["deploy", "hub.yaml", "-s", "s.state"]);
    assert_eq!(code, 0, "the run without the long line");
    let test = with_big_outputs(BIG_OUTPUT);
    let (code, peak_kib) = hub_peak_memory(&test, &["deploy", "hub.yaml", "-s", "s.state"]);
    let stderr = std::fs::read_to_string(test.root().join("stderr.txt")).expect("stderr");
    assert_eq!(code, 0, "{stderr}");
    assert!(peak_kib > 0 && baseline_kib > 0, "no memory reading");
    assert!(
        peak_kib < baseline_kib + 16 * 1024,
        "hub peaked at {peak_kib} KiB with the 150 MB line, {baseline_kib} KiB without it"
    );
    assert!(
        stderr.contains("longer than 1 MiB; only their first 1 MiB"),
        "{stderr}"
    );
    let state = std::fs::read_to_string(test.root().join("s.state")).expect("state");
    assert!(state.contains("small"), "outputs captured");
    let log = std::fs::metadata(test.root().join("s.state.logs/a.log")).expect("log");
    assert!(log.len() > 150_000_000, "the whole output is in the log");
}

#[test]
fn memory_a_failing_component_leaves_only_its_last_lines_in_the_state() {
    let test = one_component(
        "#!/bin/sh\ni=0\nwhile [ $i -lt 20000 ]; do echo \"line $i\"; i=$((i+1)); done\nexit 3\n",
    );
    let out = hub(&test, &["deploy", "hub.yaml", "-s", "s.state"]);
    out.failure();
    assert_ne!(out.status, 101);
    let state = std::fs::read_to_string(test.root().join("s.state")).expect("state");
    assert!(
        state.contains("line 19999"),
        "the last line is in the state's log"
    );
    assert!(
        state.contains("earlier line(s) left out"),
        "{}",
        &state[..2000.min(state.len())]
    );
    assert!(
        !state.contains("line 10\n"),
        "early lines are only in the log file"
    );
    assert!(state.len() < 200_000, "state of {} bytes", state.len());
    let log = std::fs::read_to_string(test.root().join("s.state.logs/a.log")).expect("log");
    assert!(log.contains("a | line 10\n") || log.contains("line 10\n"));
}

/// Runs hub under `umask` (through `sh`, which sets it and then becomes hub).
fn hub_with_umask(test: &Test, umask: &str, args: &[&str]) -> Output {
    let hub = assert_cmd::cargo::cargo_bin("hub");
    let mut command = std::process::Command::new("/bin/sh");
    command
        .current_dir(test.root())
        .arg("-c")
        .arg(format!("umask {umask}; exec \"$0\" \"$@\""))
        .arg(&hub)
        .args(args)
        .env("HUB_NOW", "2024-05-01T10:00:00Z")
        .stdin(std::process::Stdio::null());
    Output::of(command.output().expect("run hub"), test.root())
}

fn mode_of(path: &std::path::Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::symlink_metadata(path)
        .expect("metadata")
        .permissions()
        .mode()
        & 0o7777
}

/// Every file and folder below `root` that is not among `inputs`, with its mode.
fn created(root: &std::path::Path, inputs: &[&str]) -> Vec<(String, bool, u32)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read_dir") {
            let path = entry.expect("entry").path();
            let name = path
                .strip_prefix(root)
                .expect("below root")
                .display()
                .to_string();
            let is_dir = path.is_dir();
            if is_dir {
                stack.push(path.clone());
            }
            if !inputs
                .iter()
                .any(|i| name == *i || name.starts_with(&format!("{i}/")))
            {
                out.push((name, is_dir, mode_of(&path)));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn private_every_file_a_deploy_creates_is_private_whatever_the_umask() {
    for umask in ["000", "022", "277"] {
        let test = one_component(
            "#!/bin/sh\nstat -c %a \"$HUB_STATE.lock\" > \"$HUB_STATE.lock-mode\"\necho hello\n",
        );
        let args = ["deploy", "hub.yaml", "-s", "s.state", "--report", "r.json"];
        hub_with_umask(&test, umask, &args).success();
        hub_with_umask(&test, umask, &args).success();
        let lock_mode =
            std::fs::read_to_string(test.root().join("s.state.lock-mode")).expect("lock mode");
        assert_eq!(lock_mode.trim(), "600", "lock under umask {umask}");
        let files = created(test.root(), &["hub.yaml", "a", "s.state.lock-mode"]);
        let names: Vec<&str> = files.iter().map(|(n, _, _)| n.as_str()).collect();
        for expected in [
            "r.json",
            "s.state",
            "s.state.backup",
            "s.state.logs",
            "s.state.logs/a.log",
        ] {
            assert!(
                names.contains(&expected),
                "{expected} missing from {names:?}"
            );
        }
        for (name, is_dir, mode) in files {
            let wanted = if is_dir { 0o700 } else { 0o600 };
            assert_eq!(mode, wanted, "{name} is {mode:o} under umask {umask}");
        }
    }
}

/// Whether `pid` has ended (gone, or a zombie nobody reaped yet).
fn ended(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

#[track_caller]
fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn dead_lock_after_kill_9_the_child_ends_and_the_next_deploy_clears_the_lock() {
    let test = one_component("#!/bin/sh\necho $$ > \"$HUB_STATE.child\"\nexec sleep 60\n");
    let mut hub_process = std::process::Command::new(assert_cmd::cargo::cargo_bin("hub"))
        .current_dir(test.root())
        .args(["deploy", "hub.yaml", "-s", "s.state"])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn hub");
    let pid_file = test.root().join("s.state.child");
    wait_for("the component to start", || {
        std::fs::read_to_string(&pid_file).is_ok_and(|t| t.ends_with('\n'))
    });
    let child: u32 = std::fs::read_to_string(&pid_file)
        .expect("pid")
        .trim()
        .parse()
        .expect("pid number");
    hub_process.kill().expect("kill -9 hub");
    hub_process.wait().expect("reap hub");
    wait_for("the component to end with hub", || ended(child));
    assert!(
        test.root().join("s.state.lock").exists(),
        "the killed run left its lock"
    );

    let test = test.script("a/deploy.sh", "#!/bin/sh\necho fine\n");
    let out = hub(&test, &["deploy", "hub.yaml", "-s", "s.state"]);
    out.success()
        .stderr_has("removed the stale lock of `deploy`")
        .stderr_has(&format!("(process {}", hub_process.id()))
        .stderr_has("which is no longer running");
    assert!(!test.root().join("s.state.lock").exists());
}

#[test]
fn dead_lock_a_live_holder_or_another_host_still_refuses() {
    let host = hub_state::lock::hostname();
    let cases = [
        (
            crate::common::lock_text(std::process::id(), &host),
            "is locked",
        ),
        (
            crate::common::lock_text(crate::common::dead_pid(), &format!("{host}-elsewhere")),
            "on host",
        ),
    ];
    for (lock, message) in cases {
        let test = one_component("#!/bin/sh\necho fine\n").file("s.state.lock", &lock);
        let out = hub(&test, &["deploy", "hub.yaml", "-s", "s.state"]);
        out.failure().stderr_has(message);
        assert_eq!(out.status, 1, "{}", out.stderr);
        let kept = std::fs::read_to_string(test.root().join("s.state.lock")).expect("lock kept");
        assert_eq!(kept, lock);
        assert!(!test.root().join("s.state").exists(), "nothing ran");
    }
}
