//! Crash safety of the state file: `hub deploy` is killed with SIGKILL at
//! many moments of a run, and after every kill the state must parse and
//! tell the truth about what completed; a new run must then finish the
//! stack.
//!
//! "Completed" means what hub has recorded: a component is completed when
//! the state says `deployed`. The state is written after a component exits,
//! so a component whose script finished may be missing from a state taken
//! by a kill between its exit and that write; the reverse must never
//! happen. After each kill:
//!
//! * `STATE` (when it exists) and `STATE.backup` (when it exists) parse
//!   with hub's own reader, without warnings;
//! * the `deployed` components are a prefix `c1..ck` of the order, each
//!   with its raw output and the captured outputs of `c1..ck` (values
//!   passed along the chain), at most the next one is `deploying`, and
//!   none is `deployed` unless its script wrote its "done" marker;
//! * `STATE` alone (without `STATE.journal`) holds the same property, and
//!   is never ahead of `STATE` read with its journal;
//! * the backup is the previous version of the file (serial one lower)
//!   or, after a kill in the middle of a fold, the same state as `STATE`
//!   with its journal, and holds the same prefix property;
//! * a state left mid-run keeps its lock; a new deploy is refused naming
//!   `hub unlock` and leaves the state alone; `hub unlock` removes the
//!   stale lock; a new deploy then deploys every component.
//!
//! Kill moments are spread over the duration of a run (measured by an
//! uninterrupted run first, then refined by every recovering run): `KILLS`
//! equal slots, one kill at a seeded random moment inside each, two
//! workers taking alternate slots, each run in its own folder.
//! `HUB_CRASH_SEED` picks another seed; `--nocapture` shows which phases
//! the kills hit.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const COMPONENTS: usize = 9;
const KILLS: usize = 36;
/// Seconds each component sleeps before and after printing its outputs.
const SLEEPS: [(&str, &str); COMPONENTS] = [
    ("0.01", "0.01"),
    ("0.02", "0"),
    ("0", "0.03"),
    ("0.01", "0.02"),
    ("0.03", "0"),
    ("0", "0.01"),
    ("0.02", "0.01"),
    ("0.01", "0"),
    ("0", "0.02"),
];
const DEPLOY: [&str; 4] = ["deploy", "hub.yaml.elaborate", "-s", "hub.yaml.state"];

fn name(i: usize) -> String {
    format!("c{}", i + 1)
}

/// The value component `i` prints: its name followed by its predecessor's
/// value, which it receives as a parameter.
fn value(i: usize) -> String {
    (0..=i).rev().map(name).collect::<Vec<_>>().join("+")
}

/// Writes the stack: `c1..c9` in a chain, each reading the previous one's
/// output, printing its own, then appending its name to `done.log`.
fn fixture(root: &Path) {
    let mut text = String::from("version: 1\nkind: stack\nmeta: {name: crash}\ncomponents:\n");
    for i in 0..COMPONENTS {
        let depends = match i {
            0 => String::new(),
            _ => format!(", depends: [{}]", name(i - 1)),
        };
        text += &format!(
            "- {{name: {n}, source: {{dir: {n}}}{depends}}}\n",
            n = name(i)
        );
    }
    let order: Vec<String> = (0..COMPONENTS).map(name).collect();
    text += &format!(
        "lifecycle: {{verbs: [deploy, undeploy], order: [{}]}}\n",
        order.join(", ")
    );
    for (i, &(before, after)) in SLEEPS.iter().enumerate().take(COMPONENTS) {
        let n = name(i);
        let (parameters, printed) = match i {
            0 => ("[]".to_string(), n.clone()),
            _ => (
                format!("\n- {{name: {}.o, env: PREV}}", name(i - 1)),
                format!("{n}+$PREV"),
            ),
        };
        text += &format!(
            "---\nversion: 1\nkind: component\nmeta: {{name: {n}, kind: {n}}}\nparameters: {parameters}\noutputs:\n- {{name: {n}.o, fromTfVar: o}}\n"
        );
        let script = format!(
            "#!/bin/sh\nsleep {before}\necho; echo Outputs:; echo \"o = {printed}\"; echo\nsleep {after}\necho {n} >> ../done.log\n"
        );
        write_script(&root.join(&n).join("deploy.sh"), &script);
        write_script(
            &root.join(&n).join("undeploy.sh"),
            "#!/bin/sh\necho undeployed\n",
        );
    }
    std::fs::write(root.join("hub.yaml.elaborate"), text).expect("write the stack");
}

pub(crate) fn write_script(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// `hub` in `root` with the reduced environment of deploy.md §14.1.
pub(crate) fn hub(root: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_hub"));
    command
        .current_dir(root)
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", root)
        .env("USER", "tester")
        .stdin(Stdio::null());
    command
}

fn run(root: &Path, args: &[&str]) -> (i32, String) {
    let out = hub(root, args).output().expect("run hub");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn spawn_deploy(root: &Path) -> Child {
    hub(root, &DEPLOY)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hub")
}

/// A small deterministic generator (xorshift64*).
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// Reads a state file with hub's reader: it must parse, without warnings.
fn read_state(path: &Path) -> hub_state::State {
    let mut warnings = hub_manifest::diag::Warnings::default();
    let state = hub_state::read(path, &mut warnings)
        .unwrap_or_else(|e| panic!("{} does not parse: {e}", path.display()))
        .unwrap_or_else(|| panic!("{} vanished", path.display()));
    let warnings: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        warnings.is_empty(),
        "{}: warnings {warnings:?}",
        path.display()
    );
    assert_eq!(state.version, 1, "{}", path.display());
    assert_eq!(state.kind, "state", "{}", path.display());
    state
}

/// Reads a state file alone, without its journal: it must parse too.
fn read_file_alone(path: &Path) -> hub_state::State {
    hub_state::read_file(path, &mut hub_manifest::diag::Warnings::default())
        .unwrap_or_else(|e| panic!("{} alone does not parse: {e}", path.display()))
        .unwrap_or_else(|| panic!("{} vanished", path.display()))
}

/// Checks the prefix property of one state; returns how many components
/// it records as deployed and whether one is recorded as deploying.
fn check_state(state: &hub_state::State, done: &[String], what: &str) -> (usize, bool) {
    let order: Vec<String> = (0..COMPONENTS).map(name).collect();
    assert_eq!(state.lifecycle.order, order, "{what}: order");
    assert_eq!(state.meta.name, "crash", "{what}: meta");
    let status = |n: &str| state.components.get(n).map(|c| c.status.as_str());
    let deployed = order
        .iter()
        .take_while(|n| status(n) == Some("deployed"))
        .count();
    let deploying = deployed < COMPONENTS && status(&order[deployed]) == Some("deploying");
    let expected = deployed + usize::from(deploying);
    assert_eq!(
        state.components.len(),
        expected,
        "{what}: components {:?} beyond the deployed prefix {deployed} and the one running",
        state
            .components
            .iter()
            .map(|(n, c)| format!("{n}: {}", c.status))
            .collect::<Vec<_>>()
    );
    for i in 0..deployed {
        let n = name(i);
        assert!(
            done.contains(&n),
            "{what}: `{n}` is recorded deployed but its script never finished (done: {done:?})"
        );
        let entry = &state.components[&n];
        let raw: Vec<(String, String)> = entry
            .raw_outputs
            .iter()
            .map(|r| (r.name.clone(), r.value.clone()))
            .collect();
        assert_eq!(
            raw,
            [("o".to_string(), value(i))],
            "{what}: raw outputs of {n}"
        );
        let captured: Vec<(String, String)> = entry
            .captured_outputs
            .iter()
            .map(|o| {
                (
                    format!("{}:{}", o.component, o.name),
                    hub_state::scalar_text(&o.value),
                )
            })
            .collect();
        let expected: Vec<(String, String)> = (0..=i)
            .map(|j| (format!("{0}:{0}.o", name(j)), value(j)))
            .collect();
        assert_eq!(captured, expected, "{what}: captured outputs of {n}");
    }
    let operation = state.operations.last().expect("an operation");
    assert_eq!(operation.operation, "deploy", "{what}");
    let phases: Vec<String> = operation
        .phases
        .iter()
        .map(|p| format!("{}: {}", p.phase, p.status))
        .collect();
    let mut expected: Vec<String> = (0..deployed)
        .map(|i| format!("{}: success", name(i)))
        .collect();
    if deploying {
        expected.push(format!("{}: in-progress", name(deployed)));
    }
    assert_eq!(phases, expected, "{what}: phases");
    if state.status == "deployed" {
        assert_eq!(deployed, COMPONENTS, "{what}: stack deployed early");
        assert_eq!(operation.status, "success", "{what}");
    } else {
        // The first write, before any component, records no stack status.
        let first_write = state.components.is_empty() && state.status.is_empty();
        assert!(
            first_write || state.status == "deploying",
            "{what}: stack status {:?}",
            state.status
        );
        assert_eq!(operation.status, "in-progress", "{what}");
    }
    (deployed, deploying)
}

/// What one killed run left, checked; returns the phase the kill hit.
fn check_after_kill(root: &Path, finished: bool) -> String {
    let state_path = root.join("hub.yaml.state");
    let backup_path = root.join("hub.yaml.state.backup");
    let lock_path = root.join("hub.yaml.state.lock");
    let done: Vec<String> = std::fs::read_to_string(root.join("done.log"))
        .unwrap_or_default()
        .lines()
        .map(String::from)
        .collect();
    if !state_path.exists() {
        assert!(!finished, "a finished run left no state");
        assert!(!backup_path.exists(), "a backup without a state");
        return "before the first write".into();
    }
    let state = read_state(&state_path);
    let (deployed, deploying) = check_state(&state, &done, "state");
    // The file alone is a complete state too, as of its last fold, never
    // ahead of the file with its journal.
    let file = read_file_alone(&state_path);
    let (file_deployed, _) = check_state(&file, &done, "state file alone");
    assert!(
        file.serial <= state.serial && file_deployed <= deployed,
        "the state file alone (serial {}) is ahead of the state with its journal (serial {})",
        file.serial,
        state.serial
    );
    if backup_path.exists() {
        let backup = read_state(&backup_path);
        assert!(
            backup.serial + 1 == file.serial || backup.serial == state.serial,
            "backup serial {} next to state file serial {} (with its journal {})",
            backup.serial,
            file.serial,
            state.serial
        );
        let (b_deployed, _) = check_state(&backup, &done, "backup");
        assert!(b_deployed <= deployed, "the backup is ahead of the state");
    } else {
        // A fold writes the new state, renames it over `STATE`, then
        // renames the backup; a kill between the two renames of the first
        // fold leaves no backup yet, and the journal of the fold (stale:
        // its base is older than the file) still beside the state.
        let fold_cut = root.join("hub.yaml.state.journal").exists();
        assert!(
            file.serial == 1 || fold_cut,
            "only the first write, or a first fold killed before its backup, leaves no backup (serial {})",
            file.serial
        );
    }
    if finished {
        assert_eq!(state.status, "deployed");
    }
    if state.status != "deployed" {
        assert!(lock_path.exists(), "a state left mid-run lost its lock");
    }
    match (deployed, deploying) {
        (COMPONENTS, _) if state.status == "deployed" => "after the final write".into(),
        (COMPONENTS, _) => "after the last component".into(),
        (0, false) => "after the first write".into(),
        (k, true) => format!("{} running", name(k)),
        (k, false) => format!("after {}", name(k - 1)),
    }
}

/// After a kill: a new deploy removes the killed run's stale lock with a
/// warning and deploys the whole stack. Returns how long that deploy took.
fn recover(root: &Path) -> Duration {
    let state_path = root.join("hub.yaml.state");
    let before = std::fs::read(&state_path).ok();
    let operations_before = before
        .as_ref()
        .map_or(0, |_| read_state(&state_path).operations.len());
    let stale = root.join("hub.yaml.state.lock").exists();
    let t0 = Instant::now();
    let (code, text) = run(root, &DEPLOY);
    let took = t0.elapsed();
    assert_eq!(code, 0, "the deploy after the kill failed:\n{text}");
    if stale {
        assert!(
            text.contains("removed the stale lock"),
            "no warning about the killed run's lock:\n{text}"
        );
    }
    let state = read_state(&state_path);
    assert_eq!(state.status, "deployed");
    let done: Vec<String> = (0..COMPONENTS).map(name).collect();
    assert_eq!(
        check_state(&state, &done, "recovered state"),
        (COMPONENTS, false)
    );
    assert_eq!(state.operations.len(), operations_before + 1);
    let top: Vec<(String, String)> = state
        .captured_outputs
        .iter()
        .map(|o| (o.name.clone(), hub_state::scalar_text(&o.value)))
        .collect();
    let expected: Vec<(String, String)> = (0..COMPONENTS)
        .map(|i| (format!("{}.o", name(i)), value(i)))
        .collect();
    assert_eq!(top, expected, "stack outputs after recovery");
    read_state(&root.join("hub.yaml.state.backup"));
    assert!(
        !root.join("hub.yaml.state.lock").exists(),
        "lock left behind"
    );
    took
}

/// One kill: a fresh stack, `hub deploy` killed after `delay`, the
/// leftovers checked, the stack recovered. Returns the phase the kill hit
/// and how long the recovering deploy took.
fn one_kill(delay: Duration, what: &str) -> (String, Duration) {
    let dir = tempfile::tempdir().expect("tmp");
    let root = dir.path();
    fixture(root);
    let mut child = spawn_deploy(root);
    std::thread::sleep(delay);
    let finished = match child.try_wait().expect("try_wait") {
        Some(status) => {
            assert!(status.success(), "{what}: deploy failed on its own");
            true
        }
        None => {
            child.kill().expect("SIGKILL");
            // It may have exited between `try_wait` and the kill.
            child.wait().expect("wait").success()
        }
    };
    let phase =
        std::panic::catch_unwind(|| check_after_kill(root, finished)).unwrap_or_else(|panic| {
            eprintln!("{what}: kill after {delay:?}");
            std::panic::resume_unwind(panic)
        });
    // A temporary file left behind: the kill cut a write of the state, its
    // backup or the lock.
    let cut = std::fs::read_dir(root)
        .expect("read dir")
        .flatten()
        .any(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(".hub.yaml.state") && name.ends_with(".tmp")
        });
    let phase = match (finished, cut) {
        (true, _) => "exited before the kill".to_string(),
        (false, true) => format!("{phase}, a write cut"),
        (false, false) => phase,
    };
    (phase, recover(root))
}

#[test]
fn deploy_killed_at_random_moments_leaves_a_truthful_state() {
    const WORKERS: usize = 2;
    let seed = std::env::var("HUB_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed_c0ff_ee15_2026u64);
    let started = Instant::now();

    // An uninterrupted run: the fixture works, and a first estimate of how
    // long a run takes (refined by every recovering run, which deploys the
    // whole stack too).
    let baseline = tempfile::tempdir().expect("tmp");
    fixture(baseline.path());
    let t0 = Instant::now();
    let status = spawn_deploy(baseline.path()).wait().expect("wait");
    let estimate = std::sync::Mutex::new(t0.elapsed());
    assert!(status.success(), "the uninterrupted deploy failed");
    let done: Vec<String> = (0..COMPONENTS).map(name).collect();
    let state = read_state(&baseline.path().join("hub.yaml.state"));
    assert_eq!(check_state(&state, &done, "baseline"), (COMPONENTS, false));

    // Slot `k` of `KILLS` kills at a random moment inside the `k`-th
    // equal part of a run; two workers take alternate slots.
    let phases = std::sync::Mutex::new(BTreeMap::<String, usize>::new());
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|worker| {
                let (estimate, phases) = (&estimate, &phases);
                scope.spawn(move || {
                    let mut rng = Rng((seed ^ worker as u64) | 1);
                    for slot in (worker..KILLS).step_by(WORKERS) {
                        let span = estimate.lock().expect("estimate").mul_f64(1.05);
                        let delay = span.mul_f64((slot as f64 + rng.unit()) / KILLS as f64);
                        let what = format!("seed {seed:#x}, slot {slot}");
                        let (phase, took) = one_kill(delay, &what);
                        *phases.lock().expect("phases").entry(phase).or_default() += 1;
                        let mut estimate = estimate.lock().expect("estimate");
                        *estimate = (*estimate * 3 + took) / 4;
                    }
                })
            })
            .collect();
        for worker in workers {
            if let Err(panic) = worker.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    let phases = phases.into_inner().expect("phases");
    eprintln!(
        "crash test: seed {seed:#x}, {KILLS} kills in {:?}, a full run takes about {:?}",
        started.elapsed(),
        estimate.into_inner().expect("estimate"),
    );
    for (phase, count) in &phases {
        eprintln!("  {count:3}  {phase}");
    }
    let killed_mid_run: usize = phases
        .iter()
        .filter(|(p, _)| p.contains("running") || p.starts_with("after c"))
        .map(|(_, n)| n)
        .sum();
    assert!(
        killed_mid_run >= KILLS / 2,
        "too few kills landed while components ran: {phases:?}"
    );
}
