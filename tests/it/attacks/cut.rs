//! A state cut short or changed after hub wrote it (a truncated copy, a
//! partial download, a full disk in another tool, a stray edit): every
//! command that reads it refuses it, names the file, its backup and the
//! way back, and leaves the state and its backup byte for byte as they
//! were. States without hub's framing lines (the reference tool's) are
//! still read.

use crate::common::{hub_pinned, pinned_command, Output, Test};
use std::io::{Read, Write};

const STACK: &str = "
    version: 1
    kind: stack
    meta:
      name: cut
    components:
      - name: a
        source:
          dir: a
      - name: b
        source:
          dir: b
        depends: [a]
      - name: c
        source:
          dir: c
        depends: [b]
    parameters:
      - name: x.one
        value: one
";

/// Stack `cut`: `a`, `b`, `c` in a chain.
fn stack() -> Test {
    let mut test = Test::new().file("hub.yaml", STACK);
    for name in ["a", "b", "c"] {
        test = test
            .file(
                &format!("{name}/hub-component.yaml"),
                &format!("version: 1\nkind: component\nmeta:\n  name: {name}\nparameters:\n  - name: x.one\n    env: ONE\n"),
            )
            .script(
                &format!("{name}/deploy.sh"),
                &format!("#!/bin/sh\necho deploy {name} $ONE\n"),
            )
            .script(&format!("{name}/undeploy.sh"), "#!/bin/sh\n");
    }
    test
}

/// [`stack`] deployed twice to `s.state` (`extra`: more flags), so that
/// `s.state.backup` holds a whole earlier version.
fn deployed(extra: &[&str]) -> Test {
    let test = stack();
    let args: Vec<&str> = ["deploy", "hub.yaml", "-s", "s.state"]
        .iter()
        .chain(extra)
        .copied()
        .collect();
    for _ in 0..2 {
        hub_pinned(test.root(), &args).success();
    }
    test
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("gunzip");
    out
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).expect("gzip");
    encoder.finish().expect("gzip")
}

/// The text cut at the last line break before its middle: still valid
/// YAML, with the components and history after the cut missing.
fn half(bytes: &[u8]) -> Vec<u8> {
    let middle = bytes.len() / 2;
    let at = bytes[..middle]
        .iter()
        .rposition(|b| *b == b'\n')
        .expect("a line break");
    bytes[..=at].to_vec()
}

fn one_byte_short(bytes: &[u8]) -> Vec<u8> {
    bytes[..bytes.len() - 1].to_vec()
}

fn last_line_removed(bytes: &[u8]) -> Vec<u8> {
    let body = &bytes[..bytes.len() - 1];
    let at = body.iter().rposition(|b| *b == b'\n').expect("lines");
    bytes[..=at].to_vec()
}

/// One status changed, which YAML readers take as well as the original.
fn byte_changed(bytes: &[u8]) -> Vec<u8> {
    let text = String::from_utf8(bytes.to_vec()).expect("utf-8");
    let at = text.find("status: deployed").expect("a deployed status");
    let mut changed = text.into_bytes();
    changed[at + "status: deploye".len()] = b'r';
    changed
}

fn appended(bytes: &[u8]) -> Vec<u8> {
    let mut out = bytes.to_vec();
    out.extend_from_slice(b"extra: 1\n");
    out
}

/// A compressed state, decompressed, cut in half and compressed again.
fn compressed_half(bytes: &[u8]) -> Vec<u8> {
    gzip(&half(&gunzip(bytes)))
}

/// A damage done to `s.state`, and what the refusal says about it.
struct Damage {
    name: &'static str,
    compressed: bool,
    damage: fn(&[u8]) -> Vec<u8>,
    reason: &'static str,
}

const CUT: &str = "the file was cut short";
const CHANGED: &str = "does not match the SHA-256 on its last line";

const DAMAGES: &[Damage] = &[
    Damage {
        name: "cut in half at a line break",
        compressed: false,
        damage: half,
        reason: CUT,
    },
    Damage {
        name: "one byte short",
        compressed: false,
        damage: one_byte_short,
        reason: CUT,
    },
    Damage {
        name: "the digest line removed",
        compressed: false,
        damage: last_line_removed,
        reason: CUT,
    },
    Damage {
        name: "a byte changed",
        compressed: false,
        damage: byte_changed,
        reason: CHANGED,
    },
    Damage {
        name: "a line appended",
        compressed: false,
        damage: appended,
        reason: "text follows the line hub writes last",
    },
    Damage {
        name: "compressed, cut in half",
        compressed: true,
        damage: compressed_half,
        reason: CUT,
    },
];

/// A command run on the damaged `s.state`, and its exit code.
struct Command {
    name: &'static str,
    args: &'static [&'static str],
    code: i32,
}

const COMMANDS: &[Command] = &[
    Command {
        name: "deploy -c",
        args: &["deploy", "hub.yaml", "-s", "s.state", "-c", "c"],
        code: 1,
    },
    Command {
        name: "full deploy",
        args: &["deploy", "hub.yaml", "-s", "s.state"],
        code: 1,
    },
    Command {
        name: "plan",
        args: &["plan", "hub.yaml", "-s", "s.state"],
        code: 1,
    },
    Command {
        name: "state pull",
        args: &["state", "pull", "s.state", "pulled.state"],
        code: 1,
    },
    Command {
        name: "state push onto a good state",
        args: &["state", "push", "s.state", "good.state"],
        code: 1,
    },
    Command {
        name: "state push onto it",
        args: &["state", "push", "good.state", "s.state"],
        code: 1,
    },
];

/// The files of the scenario that must not change.
const KEPT: &[&str] = &["s.state", "s.state.backup", "good.state"];

fn contents(test: &Test) -> Vec<Option<Vec<u8>>> {
    KEPT.iter()
        .map(|name| std::fs::read(test.root().join(name)).ok())
        .collect()
}

#[test]
fn a_cut_or_changed_state_is_refused_by_every_command_and_nothing_is_lost() {
    let mut failures = Vec::new();
    let mut rows = 0;
    for damage in DAMAGES {
        let flags: &[&str] = match damage.compressed {
            true => &["--compressed"],
            false => &[],
        };
        let test = deployed(flags);
        let state = test.root().join("s.state");
        let good = std::fs::read(&state).expect("state");
        std::fs::write(test.root().join("good.state"), &good).expect("copy");
        std::fs::write(&state, (damage.damage)(&good)).expect("damage");
        let damaged = contents(&test);
        for command in COMMANDS {
            rows += 1;
            let row = format!("{} / {}", damage.name, command.name);
            // Each row starts from the damaged files, whatever the one
            // before did.
            restore(&test, &damaged);
            let out = hub_pinned(test.root(), command.args);
            if let Some(failure) = row_failure(damage, command, &out, &test, &damaged) {
                failures.push(format!("{row}: {failure}\n--- stderr:\n{}", out.stderr));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {rows} rows failed:\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}

/// What is wrong with a row's outcome, if anything.
fn row_failure(
    damage: &Damage,
    command: &Command,
    out: &Output,
    test: &Test,
    damaged: &[Option<Vec<u8>>],
) -> Option<String> {
    if out.status != command.code {
        return Some(format!(
            "exit code {}, expected {}",
            out.status, command.code
        ));
    }
    let missing: Vec<&str> = [
        "the state `s.state` cannot be trusted",
        damage.reason,
        "`s.state.backup` holds the previous version",
        "hub state push s.state.backup s.state --force",
        "the file was left as it is",
    ]
    .into_iter()
    .filter(|fragment| !out.stderr.contains(fragment))
    .collect();
    if !missing.is_empty() {
        return Some(format!("the message lacks {missing:?}"));
    }
    if out.stderr.contains("panicked") {
        return Some("hub panicked".into());
    }
    if contents(test) != damaged {
        return Some("the state, its backup or the other file changed".into());
    }
    if test.root().join("pulled.state").exists() {
        return Some("the state was pulled".into());
    }
    None
}

/// Puts back the files of [`KEPT`] as they were; removes what a row wrote.
fn restore(test: &Test, seen: &[Option<Vec<u8>>]) {
    for (name, bytes) in KEPT.iter().zip(seen) {
        let path = test.root().join(name);
        match bytes {
            Some(bytes) => std::fs::write(&path, bytes).expect("restore"),
            None => {
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    for leftover in ["pulled.state", "s.state.journal", "s.state.lock"] {
        let _ = std::fs::remove_file(test.root().join(leftover));
    }
}

/// The way out the message names puts the backup back, under the lock,
/// with a serial above both; the cut file becomes the backup.
#[test]
fn the_backup_is_pushed_back_over_a_cut_state() {
    let test = deployed(&[]);
    let state = test.root().join("s.state");
    let good = std::fs::read(&state).expect("state");
    let backup = std::fs::read(test.root().join("s.state.backup")).expect("backup");
    let cut = half(&good);
    std::fs::write(&state, &cut).expect("cut");
    hub_pinned(test.root(), &["state", "push", "s.state.backup", "s.state"])
        .failure()
        .stderr_has("cannot be trusted");
    hub_pinned(
        test.root(),
        &["state", "push", "s.state.backup", "s.state", "--force"],
    )
    .success()
    .stderr_has("replacing it (--force)");
    assert_eq!(
        std::fs::read(test.root().join("s.state.backup")).expect("backup"),
        cut
    );
    let listed = hub_pinned(test.root(), &["state", "list", "-s", "s.state"]);
    listed.success();
    for name in ["a ", "b ", "c "] {
        assert!(listed.stdout.contains(name), "{}", listed.stdout);
    }
    let restored = std::fs::read_to_string(&state).expect("state");
    let backup = String::from_utf8(backup).expect("utf-8");
    assert_eq!(
        restored.lines().filter(|l| l.contains("status:")).count(),
        backup.lines().filter(|l| l.contains("status:")).count(),
    );
}

/// `--force` on a full deploy starts a new state: the cut file is kept
/// aside, as for any unreadable state, and so is its backup, which the
/// run's first write replaces.
#[test]
fn a_forced_full_deploy_keeps_the_cut_state_and_its_backup_aside() {
    let test = deployed(&[]);
    let state = test.root().join("s.state");
    let cut = half(&std::fs::read(&state).expect("state"));
    let backup = std::fs::read(test.root().join("s.state.backup")).expect("backup");
    std::fs::write(&state, &cut).expect("cut");
    hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", "s.state", "-f"])
        .success()
        .stderr_has("cannot be trusted")
        .stderr_has("its backup as `s.state.unreadable.backup`");
    assert_eq!(
        std::fs::read(test.root().join("s.state.unreadable")).expect("kept"),
        cut
    );
    assert_eq!(
        std::fs::read(test.root().join("s.state.unreadable.backup")).expect("kept backup"),
        backup
    );
}

/// What hub writes begins and ends with its framing lines; a state the
/// reference tool wrote (without them) is read and deployed over.
#[test]
fn a_state_without_the_framing_lines_is_read() {
    let test = deployed(&[]);
    let state = test.root().join("s.state");
    let text = std::fs::read_to_string(&state).expect("state");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("# hub-state:"), "{text}");
    assert!(
        lines[lines.len() - 1].starts_with("# hub-state-end sha256="),
        "{text}"
    );
    let reference = lines[1..lines.len() - 1].join("\n") + "\n";
    std::fs::write(&state, &reference).expect("write");
    hub_pinned(test.root(), &["plan", "hub.yaml", "-s", "s.state"]).success();
    hub_pinned(
        test.root(),
        &["deploy", "hub.yaml", "-s", "s.state", "-c", "c"],
    )
    .success();
    let written = std::fs::read_to_string(&state).expect("state");
    assert!(written.starts_with("# hub-state:"), "{written}");
}

/// `hub state pull` writes what hub reads: the pulled file is framed and
/// pushed back as it is.
#[test]
fn a_pulled_state_is_framed_and_pushed_back() {
    let test = deployed(&[]);
    hub_pinned(test.root(), &["state", "pull", "s.state", "copy.state"]).success();
    let copy = std::fs::read_to_string(test.root().join("copy.state")).expect("copy");
    assert!(copy.starts_with("# hub-state:"), "{copy}");
    let out = pinned_command(test.root(), &["state", "push", "copy.state", "s.state"])
        .output()
        .expect("run hub");
    Output::of(out, test.root()).success();
}

/// On object storage: a cut `KEY` is refused by a deploy, a pull and a
/// push from it, and the object stays as it was; pushing `KEY.backup`
/// back with `--force` restores it.
#[test]
fn a_cut_remote_state_is_refused() {
    let Some(server) = crate::remote::server::server() else {
        return;
    };
    let bucket = server.bucket("cut");
    let location = format!("s3://{bucket}/hub.state");
    let test = stack();
    let run = |args: &[&str]| {
        let mut command = pinned_command(test.root(), args);
        command.env_remove("AWS_PROFILE").env("HOME", test.root());
        for (k, v) in server.env() {
            command.env(k, v);
        }
        Output::of(command.output().expect("run hub"), test.root())
    };
    run(&["deploy", "hub.yaml", "-s", &location]).success();
    let good = server.get(&bucket, "hub.state").expect("the state object");
    let cut = half(good.as_bytes());
    let put = server.request("PUT", &format!("/{bucket}/hub.state"), &[], &cut);
    assert_eq!(put.status, 200, "{}", put.body);
    for args in [
        vec!["deploy", "hub.yaml", "-s", &location, "-c", "c"],
        vec!["state", "pull", &location],
        vec!["state", "push", &location, "pushed.state"],
    ] {
        let out = run(&args);
        assert_eq!(out.status, 1, "{args:?}\n{}", out.stderr);
        for fragment in [
            "cannot be trusted",
            CUT,
            &format!("hub state push {location}.backup {location} --force"),
        ] {
            assert!(
                out.stderr.contains(fragment),
                "{args:?}: no `{fragment}` in\n{}",
                out.stderr
            );
        }
        assert_eq!(
            server.get(&bucket, "hub.state").map(String::into_bytes),
            Some(cut.clone()),
            "{args:?}"
        );
    }
    // The way back the message names.
    let backup = format!("{location}.backup");
    run(&["state", "push", &backup, &location, "--force"]).success();
    run(&["state", "pull", &location, "restored.state"]).success();
    run(&["deploy", "hub.yaml", "-s", &location, "-c", "c"]).success();
}

/// A tmpfs of `size` mounted on a folder of its own, unmounted when
/// dropped; `None` (with a message) where mounting is not possible, which
/// fails the test under `CI=true` (CI runs as root, where it is).
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().expect("mount point");
        let mounted = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .output();
        match mounted {
            Ok(out) if out.status.success() => Some(SmallDisk { dir }),
            other => {
                let why = match other {
                    Ok(out) => String::from_utf8_lossy(&out.stderr).into_owned(),
                    Err(e) => e.to_string(),
                };
                let message = format!("cannot mount a small tmpfs (root needed): {why}");
                if std::env::var("CI").is_ok_and(|v| v == "true") {
                    panic!("{message}");
                }
                crate::common::skipped(&message);
                None
            }
        }
    }

    fn path(&self) -> &std::path::Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(self.dir.path())
            .status();
    }
}

/// A disk that fills up before the run's first journal record: the error
/// says the disk is full, the run starts nothing, and the state it leaves
/// says nothing ran (no entry for the first component, the operation
/// ended as `error`).
#[test]
fn a_disk_full_before_the_first_record_is_reported_and_nothing_is_said_to_run() {
    let Some(disk) = SmallDisk::mount("32k") else {
        return;
    };
    let test = stack();
    let state = disk.path().join("s.state");
    let state = state.to_str().expect("utf-8 path");
    let out = hub_pinned(test.root(), &["deploy", "hub.yaml", "-s", state]);
    assert_eq!(out.status, 2, "{}", out.stderr);
    for fragment in [
        "No space left on device",
        "is full",
        "hub started no component after the record that failed",
    ] {
        assert!(
            out.stderr.contains(fragment),
            "no `{fragment}` in\n{}",
            out.stderr
        );
    }
    assert!(
        !out.stderr.contains("the previous state is unchanged"),
        "{}",
        out.stderr
    );
    assert!(!test.root().join("a.out").exists());
    let written = crate::common::read_documents(std::path::Path::new(state));
    let written = &written[0];
    assert!(
        written["components"].get("a").is_none(),
        "the state says `a` ran: {written:?}"
    );
    assert_ne!(written["status"].as_str(), Some("deploying"), "{written:?}");
    let operation = &written["operations"][0];
    assert_eq!(operation["status"].as_str(), Some("error"), "{written:?}");
    assert!(operation["phases"]
        .as_sequence()
        .is_none_or(|p| p.is_empty()));
    hub_pinned(test.root(), &["state", "list", "-s", state]).success();
}

/// Seven components `a`…`g`, each declaring the parameters `names(c)`
/// (no `env:`: a 10 MiB environment variable cannot be passed), and a
/// parameters file per entry of `files`, each setting one parameter to
/// 10 MiB of text.
fn large_stack(names: fn(&str) -> Vec<String>, files: &[&str]) -> Test {
    let components = ["a", "b", "c", "d", "e", "f", "g"];
    let mut stack = String::from("version: 1\nkind: stack\nmeta:\n  name: big\ncomponents:\n");
    for name in components {
        stack.push_str(&format!(
            "  - name: {name}\n    source:\n      dir: {name}\n"
        ));
    }
    let mut test = Test::new().file("hub.yaml", &stack);
    for parameter in files {
        test = test.bytes(
            &format!("{parameter}.yaml"),
            format!(
                "parameters:\n  - name: {parameter}\n    value: {}\n",
                "x".repeat(10 << 20)
            )
            .as_bytes(),
        );
    }
    for name in components {
        let declared: String = names(name)
            .iter()
            .map(|p| format!("  - name: {p}\n"))
            .collect();
        test = test
            .file(
                &format!("{name}/hub-component.yaml"),
                &format!(
                    "version: 1\nkind: component\nmeta:\n  name: {name}\nparameters:\n{declared}"
                ),
            )
            .script(&format!("{name}/deploy.sh"), "#!/bin/sh\ntouch ../ran\n");
    }
    test
}

/// Seven components reading one 10 MiB stack parameter: the state holds
/// the value once (the entries alias it), about 10 MiB instead of 80, and
/// the deploy runs twice.
#[test]
fn seven_components_reading_one_large_parameter_deploy_twice() {
    let test = large_stack(|_| vec!["big".into()], &["big"]);
    for _ in 0..2 {
        hub_pinned(
            test.root(),
            &["deploy", "hub.yaml", "big.yaml", "-s", "s.state"],
        )
        .success();
    }
    let size = std::fs::metadata(test.root().join("s.state"))
        .expect("state")
        .len();
    assert!(size < 11 << 20, "the state has {size} bytes");
    let listed = hub_pinned(test.root(), &["state", "list", "-s", "s.state"]);
    listed.success();
    assert_eq!(
        listed.stdout.matches("deployed").count(),
        7,
        "{}",
        listed.stdout
    );
    let shown = hub_pinned(
        test.root(),
        &["state", "show", "g", "-s", "s.state", "--json"],
    );
    shown.success();
    assert!(
        shown.stdout.contains(&"x".repeat(10 << 20)),
        "g's value is whole"
    );
}

/// Seven 10 MiB stack parameters, one per component, would write a state
/// of about 70 MiB, which no later command could read under a 64 MiB
/// state limit (`HUB_MAX_STATE_BYTES`; the default, 512 MiB, holds it):
/// the deploy is refused before anything runs, naming the parameters.
#[test]
fn a_deploy_whose_state_would_be_too_large_to_read_is_refused_up_front() {
    let files = [
        "big.a", "big.b", "big.c", "big.d", "big.e", "big.f", "big.g",
    ];
    let test = large_stack(|name| vec![format!("big.{name}")], &files);
    let mut args = vec!["deploy", "hub.yaml"];
    let files: Vec<String> = files.iter().map(|f| format!("{f}.yaml")).collect();
    args.extend(files.iter().map(String::as_str));
    args.extend(["-s", "s.state"]);
    let mut command = pinned_command(test.root(), &args);
    command.env("HUB_MAX_STATE_BYTES", "67108864");
    let out = Output::of(command.output().expect("run hub"), test.root());
    assert_eq!(out.status, 1, "{}", out.stderr);
    for fragment in [
        "the state this deploy would write is about 70.",
        "more than the 64.0 MiB a state is read with",
        "`big.a` (10.0 MiB) in the stack parameters, read by 1 component",
        "nothing ran",
    ] {
        assert!(
            out.stderr.contains(fragment),
            "no `{fragment}` in\n{}",
            out.stderr
        );
    }
    assert!(!test.root().join("ran").exists(), "a component ran");
    assert!(!test.root().join("s.state").exists(), "a state was written");
}
