//! The state journal (`STATE.journal`): checkpoints appended during a run,
//! folded into `STATE` at its end, by a later run, or in memory by every
//! reader; `hub state pull` shows the state as hub reads it.

use crate::crash::{hub, write_script, Rng};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant, SystemTime};

const STATE: &str = "hub.yaml.state";
const JOURNAL: &str = "hub.yaml.state.journal";
const DEPLOY: [&str; 4] = ["deploy", "hub.yaml.elaborate", "-s", STATE];

/// `c1 → c2 → c3`, each printing one output and leaving `NAME.started`
/// and `NAME.done` in the root; `c2` hangs while the file `hang` exists.
/// The marks are made by a redirection, which sets a new file's time once:
/// `touch` creates the file and then sets its time, and a test that saw
/// the file could see its time change after.
/// A long stack parameter makes the state larger than a run's few
/// records, so that no fold happens before the run's end.
pub(crate) fn fixture(root: &Path) {
    let names = ["c1", "c2", "c3"];
    let mut text = String::from("version: 1\nkind: stack\nmeta: {name: journal}\ncomponents:\n");
    for (i, name) in names.iter().enumerate() {
        let depends = match i {
            0 => String::new(),
            _ => format!(", depends: [{}]", names[i - 1]),
        };
        text += &format!("- {{name: {name}, source: {{dir: {name}}}{depends}}}\n");
    }
    text += "lifecycle: {verbs: [deploy, undeploy], order: [c1, c2, c3]}\n";
    text += &format!(
        "parameters:\n- {{name: padding, value: '{}'}}\n",
        "p".repeat(6000)
    );
    for name in names {
        text += &format!(
            "---\nversion: 1\nkind: component\nmeta: {{name: {name}, kind: {name}}}\noutputs:\n- {{name: {name}.o, fromTfVar: o}}\n"
        );
        let script = format!(
            "#!/bin/sh\n: > ../{name}.started\nwhile [ {name} = c2 ] && [ -e ../hang ]; do sleep 0.05; done\necho; echo Outputs:; echo \"o = {name}-out\"; echo\n: > ../{name}.done\n"
        );
        write_script(&root.join(name).join("deploy.sh"), &script);
        write_script(&root.join(name).join("undeploy.sh"), "#!/bin/sh\n");
    }
    std::fs::write(root.join("hub.yaml.elaborate"), text).expect("write the stack");
}

/// Exit code, standard output, standard error.
pub(crate) fn run(root: &Path, args: &[&str]) -> (i32, String, String) {
    let out = hub(root, args).output().expect("run hub");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

pub(crate) fn parse(text: &str) -> hub_state::State {
    hub_state::parse(
        Path::new("pulled"),
        text,
        &mut hub_manifest::diag::Warnings::default(),
    )
    .unwrap_or_else(|e| panic!("the pulled state does not parse: {e}\n{text}"))
}

/// `hub state pull STATE`, parsed.
pub(crate) fn pull(root: &Path) -> hub_state::State {
    let (code, stdout, stderr) = run(root, &["state", "pull", STATE]);
    assert_eq!(code, 0, "hub state pull failed:\n{stderr}");
    parse(&stdout)
}

fn file_alone(root: &Path) -> hub_state::State {
    hub_state::read_file(
        &root.join(STATE),
        &mut hub_manifest::diag::Warnings::default(),
    )
    .expect("the state file alone parses")
    .expect("a state file")
}

fn status<'s>(state: &'s hub_state::State, name: &str) -> Option<&'s str> {
    state.components.get(name).map(|c| c.status.as_str())
}

/// A deploy killed while `c2` runs: `c1` is deployed, `c2` deploying,
/// both only in the journal.
pub(crate) fn killed_in_c2() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    let mut child = deploy_held_in_c2(root);
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    std::fs::remove_file(root.join("hang")).expect("unhang");
    dir
}

/// The fixture in `root` and a deploy of it that is inside `c2`, which
/// waits while the file `hang` exists (the deploy holds the state's lock).
pub(crate) fn deploy_held_in_c2(root: &Path) -> Child {
    fixture(root);
    held_until_started(root, &DEPLOY, "c2")
}

/// `hub ARGS` in `root`, with the file `hang` written first, once the
/// component `name` has written `NAME.started`.
fn held_until_started(root: &Path, args: &[&str], name: &str) -> Child {
    std::fs::write(root.join("hang"), "").expect("hang");
    let mut child: Child = hub(root, args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hub");
    let started = Instant::now();
    while !root.join(format!("{name}.started")).exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{name} never started"
        );
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the deploy ended early"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

/// Every file of `root` (not folders) with its bytes and modification time.
fn snapshot_files(root: &Path) -> Vec<(PathBuf, Vec<u8>, SystemTime)> {
    let mut files: Vec<_> = std::fs::read_dir(root)
        .expect("list")
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| {
            let meta = e.metadata().expect("meta");
            (
                e.path(),
                std::fs::read(e.path()).expect("bytes"),
                meta.modified().expect("mtime"),
            )
        })
        .collect();
    files.sort_by(|a, b| a.0.cmp(&b.0));
    files
}

#[test]
fn a_finished_run_folds_its_journal() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    fixture(root);
    let (code, _, stderr) = run(root, &DEPLOY);
    assert_eq!(code, 0, "{stderr}");
    assert!(!root.join(JOURNAL).exists(), "the journal was not folded");
    let state = file_alone(root);
    assert_eq!(state.status, "deployed");
    for name in ["c1", "c2", "c3"] {
        assert_eq!(status(&state, name), Some("deployed"), "{name}");
    }
    let backup = hub_state::read_file(
        &root.join("hub.yaml.state.backup"),
        &mut hub_manifest::diag::Warnings::default(),
    )
    .expect("backup parses")
    .expect("a backup");
    assert_eq!(backup.serial + 1, state.serial, "the backup is one behind");
    // The checkpoints went to the journal: the folded file holds the
    // serials of every one of them.
    assert!(state.serial > 6, "serial {}", state.serial);
    assert_eq!(pull(root), state);
}

/// The journal's text up to its first zero byte, and how many bytes follow.
fn records_and_zeros(journal: &Path) -> (String, usize) {
    let bytes = std::fs::read(journal).expect("journal");
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    assert!(
        bytes[end..].iter().all(|&b| b == 0),
        "something other than zeros follows the records"
    );
    let text = String::from_utf8(bytes[..end].to_vec()).expect("text");
    (text, bytes.len() - end)
}

#[test]
fn a_killed_run_is_read_with_its_journal() {
    let dir = killed_in_c2();
    let root = dir.path();
    let journal = root.join(JOURNAL);
    assert!(journal.exists(), "no journal after the kill");
    let mode = std::fs::metadata(&journal)
        .expect("meta")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "the journal is private");
    let (records, zeros) = records_and_zeros(&journal);
    assert!(records.starts_with("hub-journal 2 base="), "{records}");
    // Zeros are written ahead of the records, so that a record's flush
    // does not change the file's size.
    assert!(zeros > 0, "no zeros after the records");

    // The file alone: the state as of the last fold, before any component.
    let alone = file_alone(root);
    assert_eq!(status(&alone, "c1"), None);
    // As hub reads it: c1 deployed, c2 deploying, c3 never started.
    let before = snapshot_files(root);
    let state = pull(root);
    assert_eq!(status(&state, "c1"), Some("deployed"));
    assert_eq!(status(&state, "c2"), Some("deploying"));
    assert_eq!(status(&state, "c3"), None);
    assert!(state.serial > alone.serial);
    let c1 = &state.components["c1"];
    assert_eq!(c1.raw_outputs[0].value, "c1-out");
    let phases: Vec<String> = state.operations[0]
        .phases
        .iter()
        .map(|p| format!("{}: {}", p.phase, p.status))
        .collect();
    assert_eq!(phases, ["c1: success", "c2: in-progress"]);

    // Written to a file: the same state, atomically, privately.
    let (code, stdout, stderr) = run(root, &["state", "pull", STATE, "pulled.state"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    let written = std::fs::read_to_string(root.join("pulled.state")).expect("pulled");
    assert_eq!(parse(&written), state);
    let mode = std::fs::metadata(root.join("pulled.state"))
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    std::fs::remove_file(root.join("pulled.state")).expect("rm");
    assert_eq!(snapshot_files(root), before, "pull changed a file");
}

#[test]
fn read_only_commands_see_the_journal_and_change_nothing() {
    let dir = killed_in_c2();
    let root = dir.path();
    let before = snapshot_files(root);
    let serial = pull(root).serial;

    let (code, stdout, stderr) = run(root, &["plan", "hub.yaml.elaborate", "-s", STATE]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("(serial {serial})")),
        "plan did not read the journal:\n{stdout}"
    );
    let (code, stdout, stderr) = run(root, &["graph", "hub.yaml.elaborate", "-s", STATE]);
    assert_eq!(code, 0, "{stderr}");
    let c2_line = stdout
        .lines()
        .find(|l| l.contains("c2") && l.contains("label"))
        .unwrap_or_default();
    assert!(
        c2_line.contains("deploying"),
        "graph did not read the journal:\n{stdout}"
    );
    let (code, _, stderr) = run(root, &["params", "hub.yaml.elaborate", "-s", STATE]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        snapshot_files(root),
        before,
        "a read-only command changed a file"
    );
}

#[test]
fn the_next_run_folds_the_journal_once_it_holds_the_lock() {
    let dir = killed_in_c2();
    let root = dir.path();
    let killed = pull(root);

    // c1 of the next run copies the state file as it stands when c1 starts:
    // the killed run's records are folded into it by then.
    write_script(
        &root.join("c1").join("deploy.sh"),
        "#!/bin/sh\ncp \"$HUB_STATE\" ../seen.state\necho; echo Outputs:; echo \"o = c1-out\"; echo\n",
    );
    // The killed run's lock is stale: the next run removes it, says so, and
    // folds what the killed run left before its first component starts.
    let (code, _, stderr) = run(root, &DEPLOY);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("removed the stale lock"), "{stderr}");
    let seen = parse(&std::fs::read_to_string(root.join("seen.state")).expect("seen"));
    assert!(seen.serial > killed.serial);
    assert_eq!(seen.operations[0], killed.operations[0]);
    assert_eq!(status(&seen, "c2"), Some("deploying"));

    assert!(!root.join(JOURNAL).exists());
    let state = file_alone(root);
    assert_eq!(state.status, "deployed");
    assert_eq!(state.operations.len(), 2);
    assert_eq!(state.operations[0].phases, killed.operations[0].phases);
}

#[test]
fn a_cut_last_record_is_dropped() {
    let dir = killed_in_c2();
    let root = dir.path();
    let whole = pull(root);
    let journal = root.join(JOURNAL);
    let (text, zeros) = records_and_zeros(&journal);
    let last = text
        .trim_end()
        .lines()
        .last()
        .expect("a record")
        .to_string();
    // A copy of the last record with a larger serial, cut in the middle
    // over the zeros: what a kill during a write leaves.
    let cut = last.replace(
        &format!("\"serial\":{}", whole.serial),
        &format!("\"serial\":{}", whole.serial + 1),
    );
    let half = &cut[..cut.len() / 2];
    let rest = "\0".repeat(zeros.saturating_sub(half.len()));
    std::fs::write(&journal, format!("{text}{half}{rest}")).expect("cut");
    assert_eq!(pull(root), whole);
    // The next run cuts it off and goes on.
    run(root, &["unlock", STATE]);
    let (code, _, stderr) = run(root, &DEPLOY);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(file_alone(root).status, "deployed");
}

#[test]
fn a_damaged_record_followed_by_good_ones_is_an_error() {
    let dir = killed_in_c2();
    let root = dir.path();
    let journal = root.join(JOURNAL);
    let (text, _) = records_and_zeros(&journal);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() >= 3, "too few records: {text}");
    // The first record's status changes by one letter: its checksum fails.
    let damaged = lines[1].replacen("deploying", "deployinG", 1);
    assert_ne!(damaged, lines[1]);
    let mut changed = lines.clone();
    changed[1] = &damaged;
    std::fs::write(&journal, changed.join("\n") + "\n").expect("damage");
    for args in [
        vec!["state", "pull", STATE],
        vec!["plan", "hub.yaml.elaborate", "-s", STATE],
    ] {
        let (code, _, stderr) = run(root, &args);
        assert_ne!(code, 0, "{args:?} read a damaged journal");
        assert!(
            stderr.contains(JOURNAL) && stderr.contains("record 1"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains("aside"), "{args:?}: no way out: {stderr}");
    }
}

#[test]
fn a_stale_journal_is_ignored_and_removed_by_the_next_run() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    fixture(root);
    let (code, _, stderr) = run(root, &DEPLOY);
    assert_eq!(code, 0, "{stderr}");
    let state = file_alone(root);
    // A journal of the state before the last fold, left by a fold killed
    // before it removed it.
    let record = r#"{"serial":999,"status":"stale"}"#;
    let digest = {
        use sha2::Digest;
        let hash = sha2::Sha256::digest(record.as_bytes());
        hash.iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    std::fs::write(
        root.join(JOURNAL),
        format!(
            "hub-journal 1 base={} op=x\n{} {digest} {record}\n",
            state.serial - 1,
            record.len()
        ),
    )
    .expect("stale journal");
    assert_eq!(pull(root), state, "a stale journal was applied");
    let (code, _, stderr) = run(
        root,
        &["deploy", "hub.yaml.elaborate", "-s", STATE, "-c", "c3"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        !root.join(JOURNAL).exists(),
        "the stale journal is still there"
    );
    assert_eq!(file_alone(root).status, "deployed");
}

#[test]
fn the_reference_layout_is_written_by_the_fold() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    fixture(root);
    let mut args = DEPLOY.to_vec();
    args.extend(["--state-format", "reference"]);
    let (code, _, stderr) = run(root, &args);
    assert_eq!(code, 0, "{stderr}");
    let text = std::fs::read_to_string(root.join(STATE)).expect("state");
    assert!(!text.contains("capturedOutputsBase"), "{text}");
    let state = parse(&text);
    let c3: Vec<String> = state.components["c3"]
        .captured_outputs
        .iter()
        .map(|o| o.name.clone())
        .collect();
    assert_eq!(c3, ["c1.o", "c2.o", "c3.o"]);
}

const MANY: usize = 1000;

/// Layers of ten, each component depending on two of the layer before;
/// each script leaves `started/NAME`, then `done/NAME`.
fn many_components(root: &Path) -> Vec<Vec<String>> {
    std::fs::create_dir_all(root.join("started")).expect("mkdir");
    std::fs::create_dir_all(root.join("done")).expect("mkdir");
    let mut stack = String::from("version: 1\nkind: stack\nmeta: {name: kills}\ncomponents:\n");
    let mut components = String::new();
    let mut depends = Vec::with_capacity(MANY);
    for i in 0..MANY {
        let layer = i / 10;
        let upstream: Vec<String> = match layer {
            0 => Vec::new(),
            _ => {
                let base = (layer - 1) * 10;
                vec![
                    format!("c{}", base + i % 10),
                    format!("c{}", base + (i + 1) % 10),
                ]
            }
        };
        let listed = match upstream.is_empty() {
            true => String::new(),
            false => format!(", depends: [{}]", upstream.join(", ")),
        };
        stack += &format!("- {{name: c{i}, source: {{dir: c/c{i}}}{listed}}}\n");
        components +=
            &format!("---\nversion: 1\nkind: component\nmeta: {{name: c{i}, kind: c{i}}}\n");
        let dir = root.join("c").join(format!("c{i}"));
        write_script(
            &dir.join("deploy.sh"),
            &format!("#!/bin/sh\ntouch ../../started/c{i}\nsleep 0.02\ntouch ../../done/c{i}\n"),
        );
        write_script(&dir.join("undeploy.sh"), "#!/bin/sh\n");
        depends.push(upstream);
    }
    let order: Vec<String> = (0..MANY).map(|i| format!("c{i}")).collect();
    stack += &format!(
        "lifecycle: {{verbs: [deploy, undeploy], order: [{}]}}\n",
        order.join(", ")
    );
    std::fs::write(root.join("hub.yaml.elaborate"), stack + &components).expect("stack");
    depends
}

fn count(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |entries| entries.count())
}

/// What a killed run left: the state as hub reads it parses, and so does
/// the file alone; every entry is `deployed` (its script finished) or
/// `deploying`, and no entry exists for a component whose upstream was not
/// deployed (it could not have started); every component whose script
/// started has one (its start was written before it ran). Returns how
/// many are deployed.
fn check_killed(root: &Path, depends: &[Vec<String>], what: &str) -> usize {
    let state = pull(root);
    file_alone(root);
    let index = |name: &str| -> usize {
        name.strip_prefix('c')
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("{what}: an entry for an unknown component `{name}`"))
    };
    let mut deployed = 0;
    for (name, entry) in &state.components {
        match entry.status.as_str() {
            "deployed" => {
                assert!(
                    root.join("done").join(name).exists(),
                    "{what}: `{name}` is deployed but its script never finished"
                );
                deployed += 1;
            }
            "deploying" => {}
            other => panic!("{what}: `{name}` is `{other}`"),
        }
        for upstream in &depends[index(name)] {
            assert_eq!(
                status(&state, upstream),
                Some("deployed"),
                "{what}: `{name}` has an entry while `{upstream}`, which it waits for, is not deployed"
            );
        }
    }
    let started = std::fs::read_dir(root.join("started")).expect("started");
    for entry in started {
        let name = entry.expect("entry").file_name();
        let name = name.to_string_lossy();
        assert!(
            state.components.contains_key(name.as_ref()),
            "{what}: `{name}` started, yet the state has no entry for it"
        );
    }
    deployed
}

/// A deploy of 1,000 components (`-j 8`) killed at 20 seeded moments
/// (each within 100 ms after the run started a component):
/// each kill hits the run that recovers from the previous one (`hub
/// unlock`, then `hub deploy --changed`, which goes on from where the
/// killed run stopped), and a last run finishes the stack. After every
/// kill the state is checked ([`check_killed`]); at the end every
/// component is deployed and the journal folded.
#[test]
fn a_deploy_of_1000_components_killed_20_times_recovers() {
    const KILLS: usize = 20;
    let seed = std::env::var("HUB_KILLS_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x6b11_1500_2026u64);
    let mut rng = Rng(seed | 1);
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    let depends = many_components(root);
    let started = Instant::now();
    let mut with_journal = 0;
    let mut progress = Vec::new();
    for kill in 0..KILLS {
        let what = format!("seed {seed:#x}, kill {kill}");
        let mut args = vec!["deploy", "hub.yaml.elaborate", "-s", STATE, "-j", "8"];
        if kill > 0 {
            args.push("--changed");
        }
        let mut child = hub(root, &args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn hub");
        // The kill lands while components run: after this run started
        // one, at a random moment of the next 100 ms. Each component takes
        // 20 ms, so the stack (at least 2.5 s of work for eight workers)
        // outlasts the 20 kills whatever the machine's speed.
        let before = count(&root.join("started"));
        let waiting = Instant::now();
        while count(&root.join("started")) == before {
            assert!(
                waiting.elapsed() < Duration::from_secs(60),
                "{what}: no component started"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        let delay = Duration::from_secs_f64(0.1 * rng.unit());
        std::thread::sleep(delay);
        if child.try_wait().expect("try_wait").is_some() {
            panic!("{what}: the deploy ended before the kill after {delay:?}");
        }
        child.kill().expect("SIGKILL");
        child.wait().expect("wait");
        if !root.join(STATE).exists() {
            progress.push(0);
            continue;
        }
        with_journal += usize::from(root.join(JOURNAL).exists());
        progress.push(check_killed(root, &depends, &what));
        let (code, _, stderr) = run(root, &["unlock", STATE]);
        assert_eq!(code, 0, "{what}: hub unlock failed:\n{stderr}");
    }
    let (code, _, stderr) = run(
        root,
        &[
            "deploy",
            "hub.yaml.elaborate",
            "-s",
            STATE,
            "-j",
            "8",
            "--changed",
        ],
    );
    assert_eq!(code, 0, "the last deploy failed:\n{stderr}");
    eprintln!(
        "20 kills and a last deploy in {:?}; deployed after each kill: {progress:?}",
        started.elapsed()
    );
    let state = pull(root);
    assert_eq!(state.status, "deployed");
    assert_eq!(state.components.len(), MANY);
    for (name, entry) in &state.components {
        assert_eq!(entry.status, "deployed", "{name}");
        assert!(root.join("done").join(name).exists(), "{name}");
    }
    assert!(
        !root.join(JOURNAL).exists(),
        "the last run left its journal"
    );
    assert_eq!(file_alone(root), state);
    assert!(
        with_journal >= KILLS / 2,
        "only {with_journal} of {KILLS} kills found a journal"
    );
}

#[test]
fn pulling_a_missing_state_is_an_error() {
    let dir = tempfile::tempdir().expect("tmp");
    let (code, stdout, stderr) = run(dir.path(), &["state", "pull", "nope.state"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stdout.is_empty());
    assert!(
        stderr.contains("nope.state") && stderr.contains("no state file is there"),
        "{stderr}"
    );
}

#[test]
fn a_state_keeps_the_lineage_it_was_first_written_with() {
    let dir = killed_in_c2();
    let root = dir.path();
    let first = pull(root).lineage;
    assert!(
        uuid_like(&first),
        "a new state gets a random UUID lineage: {first:?}"
    );
    assert_eq!(
        file_alone(root).lineage,
        first,
        "the folded file has it too"
    );
    let (code, _, stderr) = run(root, &["unlock", STATE]);
    assert_eq!(code, 0, "{stderr}");
    let (code, _, stderr) = run(root, &DEPLOY);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(file_alone(root).lineage, first, "kept by the next run");
    let (code, _, stderr) = run(root, &["undeploy", "hub.yaml.elaborate", "-s", STATE]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(file_alone(root).lineage, first, "kept by an undeploy");

    let other = tempfile::tempdir().expect("tmp");
    fixture(other.path());
    let (code, _, stderr) = run(other.path(), &DEPLOY);
    assert_eq!(code, 0, "{stderr}");
    assert_ne!(file_alone(other.path()).lineage, first, "another state's");
}

fn uuid_like(text: &str) -> bool {
    let groups: Vec<usize> = text.split('-').map(str::len).collect();
    groups == [8, 4, 4, 4, 12] && text.chars().all(|c| c == '-' || c.is_ascii_hexdigit())
}

/// A deploy going on past failures (`-f`), killed while its last
/// component runs: every failure's output is in the operation's log once,
/// in the run's order, though each record held only what it appended.
#[test]
fn a_killed_run_keeps_every_failure_in_its_log_once() {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    let failing: Vec<String> = (1..=4).map(|i| format!("f{i}")).collect();
    let mut names = failing.clone();
    names.push("last".into());
    let mut text = String::from("version: 1\nkind: stack\nmeta: {name: failures}\ncomponents:\n");
    for name in &names {
        text += &format!("- {{name: {name}, source: {{dir: {name}}}}}\n");
    }
    text += &format!(
        "lifecycle: {{verbs: [deploy, undeploy], order: [{}]}}\n",
        names.join(", ")
    );
    text += &format!(
        "parameters:\n- {{name: padding, value: '{}'}}\n",
        "p".repeat(6000)
    );
    for name in &names {
        text +=
            &format!("---\nversion: 1\nkind: component\nmeta: {{name: {name}, kind: {name}}}\n");
        let script = match name.as_str() {
            "last" => {
                "#!/bin/sh\ntouch ../last.started\nwhile [ -e ../hang ]; do sleep 0.05; done\n"
                    .to_string()
            }
            _ => format!("#!/bin/sh\necho 'output of {name}'\nexit 3\n"),
        };
        write_script(&root.join(name).join("deploy.sh"), &script);
        write_script(&root.join(name).join("undeploy.sh"), "#!/bin/sh\n");
    }
    std::fs::write(root.join("hub.yaml.elaborate"), text).expect("write the stack");
    let mut args = DEPLOY.to_vec();
    args.push("-f");
    let mut child = held_until_started(root, &args, "last");
    child.kill().expect("SIGKILL");
    child.wait().expect("wait");
    std::fs::remove_file(root.join("hang")).expect("unhang");
    assert!(
        root.join(JOURNAL).exists(),
        "the failures were not journaled"
    );

    let logs = pull(root).operations[0].logs.clone();
    let mut at = 0;
    for name in &failing {
        let output = format!("output of {name}\n");
        assert_eq!(logs.matches(&output).count(), 1, "{name}:\n{logs}");
        let found = logs.find(&output).expect("found");
        assert!(found > at, "{name} out of order:\n{logs}");
        at = found;
    }
    assert!(!logs.contains("last"), "{logs}");
}
