//! Paths: one lock per state whatever the path it is given by, files
//! beside a state never followed, component names that are names.
//!
//! The stack lives in the test's folder, its state in `st/`: a row checks
//! that nothing outside `st/` changed (the files an attacker points at,
//! outside the test's folder, and the test's own folder but `st/`), and
//! that the state still holds every component and output it held.

use super::{tree, Outside, Seen};
use crate::common::{pinned_command, unframed, Output};
use crate::crash::write_script;
use std::collections::BTreeMap;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

const STATE: &str = "st/s.state";
const DEPLOY: &[&str] = &["deploy", "hub.yaml", "-s", STATE];

/// `a` then `b` (depends on `a`), each printing one output; `a` runs
/// `a.extra` (in the test's folder) first when it exists.
const STACK: &str = "version: 1
kind: stack
meta: {name: paths}
components:
  - name: a
    source: {dir: a}
  - name: b
    source: {dir: b}
    depends: [a]
";

/// A folder with the stack, its state deployed once in `st/`, and a
/// victim file outside.
struct Scene {
    dir: tempfile::TempDir,
    outside: Outside,
    victim: PathBuf,
}

impl Scene {
    fn new() -> Scene {
        let scene = Scene::undeployed();
        scene.hub(DEPLOY).success();
        scene
    }

    fn undeployed() -> Scene {
        let dir = tempfile::tempdir().expect("temporary folder");
        let root = dir.path();
        std::fs::write(root.join("hub.yaml"), STACK).expect("stack");
        for name in ["a", "b"] {
            component(root, name, name);
        }
        std::fs::create_dir(root.join("st")).expect("st");
        let outside = Outside::new();
        let victim = outside.victim("victim");
        Scene {
            dir,
            outside,
            victim,
        }
    }

    fn root(&self) -> &Path {
        self.dir.path()
    }

    fn path(&self, relative: &str) -> PathBuf {
        self.root().join(relative)
    }

    fn hub(&self, args: &[&str]) -> Output {
        let out = pinned_command(self.root(), args)
            .env("HUB_OPERATION_ID", "op-attack")
            .output()
            .expect("run hub");
        Output::of(out, self.root())
    }

    /// A symbolic link at `relative` to the victim.
    fn link_to_victim(&self, relative: &str) {
        let at = self.path(relative);
        std::fs::create_dir_all(at.parent().expect("parent")).expect("folder");
        let _ = std::fs::remove_file(&at);
        symlink(&self.victim, at).expect("plant a link");
    }

    /// Every file of the test's folder outside `st/`.
    fn beside_the_state_folder(&self) -> BTreeMap<PathBuf, Seen> {
        let mut files = tree(self.root());
        files.retain(|path, _| !path.starts_with(self.path("st")));
        files
    }
}

/// Component `name` (its folder `folder`): prints `o = NAME-out`; runs
/// `../NAME.extra` first when it exists.
fn component(root: &Path, folder: &str, name: &str) {
    std::fs::create_dir_all(root.join(folder)).expect("component folder");
    std::fs::write(
        root.join(folder).join("hub-component.yaml"),
        format!("version: 1\nkind: component\nmeta: {{name: {folder}}}\noutputs:\n- {{name: {name}.o, fromTfVar: o}}\n"),
    )
    .expect("component");
    write_script(
        &root.join(folder).join("deploy.sh"),
        &format!("#!/bin/sh\n[ -e ../{folder}.extra ] && . ../{folder}.extra\necho; echo Outputs:; echo 'o = {name}-out'; echo\n"),
    );
    write_script(&root.join(folder).join("undeploy.sh"), "#!/bin/sh\n");
}

/// What the state holds: each component entry, its status and its own
/// outputs.
fn held(state: &Path) -> BTreeMap<String, (String, Vec<String>)> {
    let state = hub_state::read(state, &mut hub_manifest::diag::Warnings::default())
        .unwrap_or_else(|e| panic!("the state cannot be read: {e}"))
        .expect("a state");
    state
        .components
        .iter()
        .map(|(name, entry)| {
            // Its own outputs (a snapshot also holds what it could read).
            let outputs = entry
                .captured_outputs
                .iter()
                .filter(|o| o.component == *name)
                .map(|o| format!("{}={:?}", o.qualified_name(), o.value))
                .collect();
            (name.clone(), (entry.status.to_string(), outputs))
        })
        .collect()
}

/// Every entry of `before` is still in `after`; a component still
/// `deployed` has all its outputs. (One that the refused run started and
/// that is now recorded as failed has none, as after any failure.)
fn assert_kept(
    scenario: &str,
    before: &BTreeMap<String, (String, Vec<String>)>,
    after: &BTreeMap<String, (String, Vec<String>)>,
) {
    for (name, (_, outputs)) in before {
        let Some((status, kept)) = after.get(name) else {
            panic!("{scenario}: the state lost its entry of `{name}`: {after:?}");
        };
        if status == "deployed" {
            assert_eq!(
                kept, outputs,
                "{scenario}: the state lost outputs of `{name}`"
            );
        }
    }
}

// ---------------------------------------------------------------- the table

/// One attack: what is planted, the command, what must come of it.
struct Row {
    name: &'static str,
    /// Plants the attack; returns files inside `st/` that must stay as
    /// they are (a planted file of another user).
    plant: fn(&Scene) -> Vec<PathBuf>,
    args: &'static [&'static str],
    code: i32,
    /// Fragments the standard error must hold.
    says: &'static [&'static str],
}

/// A file at `relative` owned by another user (`nobody`); `None` where
/// the tests cannot give a file away (not run as root).
fn foreign_file(scene: &Scene, relative: &str) -> Option<PathBuf> {
    let path = scene.path(relative);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("folder");
    let _ = std::fs::remove_file(&path);
    std::fs::write(&path, "another user's file\n").expect("write");
    std::os::unix::fs::chown(&path, Some(65534), Some(65534))
        .ok()
        .map(|()| path)
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            name: "a component's log is a link",
            plant: |s| {
                s.link_to_victim("st/s.state.logs/a.log");
                vec![]
            },
            args: DEPLOY,
            code: 1,
            says: &["s.state.logs/a.log", "symbolic link", "help: remove it"],
        },
        Row {
            name: "a component's log has another name outside",
            plant: |s| {
                let _ = std::fs::remove_file(s.path("st/s.state.logs/b.log"));
                std::fs::hard_link(&s.victim, s.path("st/s.state.logs/b.log")).expect("hard link");
                vec![]
            },
            args: DEPLOY,
            code: 1,
            says: &["s.state.logs/b.log", "2 names (hard links)"],
        },
        Row {
            name: "a component's log belongs to another user",
            plant: |s| {
                foreign_file(s, "st/s.state.logs/a.log")
                    .into_iter()
                    .collect()
            },
            args: DEPLOY,
            code: 1,
            says: &["s.state.logs/a.log", "belongs to user 65534"],
        },
        Row {
            name: "the log folder is a link",
            plant: |s| {
                std::fs::write(s.outside.root().join("a.log"), "victim log\n").expect("log");
                std::fs::remove_dir_all(s.path("st/s.state.logs")).expect("logs");
                symlink(s.outside.root(), s.path("st/s.state.logs")).expect("link");
                vec![]
            },
            args: DEPLOY,
            code: 2,
            says: &[
                "s.state.logs`, beside the state, cannot be used",
                "symbolic link",
            ],
        },
        Row {
            name: "the log folder becomes a link during the run",
            plant: |s| {
                // `a` moves the folder aside and plants a link to a folder
                // holding a `b.log`, before `b` opens its log.
                s.outside.victim("b.log");
                let outside = s.outside.root().display();
                let extra = format!(
                    "mv ../st/s.state.logs ../st/moved && ln -s '{outside}' ../st/s.state.logs\n"
                );
                std::fs::write(s.path("a.extra"), extra).expect("extra");
                vec![]
            },
            args: DEPLOY,
            code: 1,
            says: &["s.state.logs/b.log", "its folder is a symbolic link"],
        },
        Row {
            name: "the journal is a link before the run",
            plant: |s| {
                s.link_to_victim("st/s.state.journal");
                vec![]
            },
            args: DEPLOY,
            code: 2,
            says: &["s.state.journal`, beside the state", "symbolic link"],
        },
        Row {
            name: "the journal is planted between two folds",
            plant: |s| {
                // `b` ends after 5.5 s: the record of its end folds (the
                // last fold is older than 5 s), which removes the journal.
                // Then `a`, running alongside, plants a link where the
                // record of its own end creates the journal again.
                let stack = STACK.replace("    depends: [a]\n", "");
                std::fs::write(s.path("hub.yaml"), stack).expect("stack");
                std::fs::write(s.path("b.extra"), "sleep 5.5; touch ../st/b.done\n").expect("b");
                let victim = s.victim.display();
                let extra = format!(
                    "while [ ! -e ../st/b.done ]; do sleep 0.05; done; sleep 1\n\
                     rm -f ../st/s.state.journal; ln -s '{victim}' ../st/s.state.journal\n"
                );
                std::fs::write(s.path("a.extra"), extra).expect("a");
                vec![]
            },
            args: &["deploy", "hub.yaml", "-s", STATE, "-j", "2"],
            code: 2,
            says: &["s.state.journal", "symbolic link"],
        },
        Row {
            name: "the backup is a link",
            plant: |s| {
                std::fs::remove_file(s.path("st/s.state.backup")).expect("no backup");
                s.link_to_victim("st/s.state.backup");
                vec![]
            },
            args: DEPLOY,
            code: 2,
            says: &["s.state.backup`, beside the state", "symbolic link"],
        },
        Row {
            name: "the lock is a link",
            plant: |s| {
                s.link_to_victim("st/s.state.lock");
                vec![]
            },
            args: DEPLOY,
            code: 1,
            says: &["s.state.lock", "symbolic link", "hub unlock -s"],
        },
        Row {
            name: "the fingerprint cache is a link",
            plant: |s| {
                s.link_to_victim("st/s.state.fingerprints");
                vec![]
            },
            args: DEPLOY,
            code: 0,
            says: &[
                "s.state.fingerprints",
                "fingerprint cache was not written",
                "symbolic link",
            ],
        },
        Row {
            name: "a stack names a component with a path",
            plant: |s| {
                let stack = STACK.replace("name: b\n", "name: ../../escaped\n");
                std::fs::write(s.path("hub.yaml"), stack).expect("stack");
                component(s.root(), "b", "../../escaped");
                vec![]
            },
            args: DEPLOY,
            code: 1,
            says: &[
                "hub.yaml:7",
                "`../../escaped` cannot be a component name",
                "help: rename",
            ],
        },
        Row {
            name: "a state names a component with a path",
            plant: |s| {
                // Edited by hand: without the lines that frame hub's states.
                let state = unframed(&std::fs::read_to_string(s.path(STATE)).expect("state"));
                let planted = state.replacen("\n  b:\n", "\n  ../../evil:\n", 1);
                assert_ne!(state, planted, "no entry of b in:\n{state}");
                std::fs::write(s.path(STATE), planted).expect("state");
                vec![]
            },
            args: DEPLOY,
            code: 1,
            says: &[
                "s.state:61",
                "`../../evil` cannot be a component name",
                "help: rename or remove",
            ],
        },
        Row {
            name: "state mv to a path",
            plant: |_| vec![],
            args: &["state", "mv", "a", "../../evil", "-s", STATE],
            code: 2,
            says: &["'../../evil'", "cannot be a component name", "holds `/`"],
        },
        Row {
            // A `-c` entry with a `/` selects components by folder: it
            // is resolved to the names of the stack's components, never
            // used as a name itself.
            name: "-c names a path",
            plant: |_| vec![],
            args: &["deploy", "hub.yaml", "-s", STATE, "-c", "a,../x+"],
            code: 1,
            says: &["`-c ../x+`: no component of the stack has its folder at or under"],
        },
        Row {
            name: "-c names a control character",
            plant: |_| vec![],
            args: &["deploy", "hub.yaml", "-s", STATE, "-c", "a\u{1b}[2J"],
            code: 2,
            says: &["cannot be a component name", "control character"],
        },
    ]
}

#[test]
fn planted_files_and_hostile_names_change_nothing_outside_the_state() {
    // Every row runs; the failures are reported together.
    let failed: Vec<&str> = rows()
        .iter()
        .filter(|row| std::panic::catch_unwind(|| attack(row)).is_err())
        .map(|row| row.name)
        .collect();
    assert!(failed.is_empty(), "failed scenarios: {failed:?}");
}

/// Runs one row and checks what came of it.
fn attack(row: &Row) {
    let scene = Scene::new();
    let state_before = held(&scene.path(STATE));
    let kept = (row.plant)(&scene);
    let bytes_before = std::fs::read(scene.path(STATE)).expect("state");
    let kept_before: Vec<_> = kept.iter().map(|p| std::fs::read(p).ok()).collect();
    let outside_before = scene.outside.snapshot();
    let beside_before = scene.beside_the_state_folder();
    let out = scene.hub(row.args);
    // What an attack is after first: files outside the state's folder.
    scene.outside.assert_unchanged(row.name, &outside_before);
    assert_eq!(
        scene.beside_the_state_folder().keys().collect::<Vec<_>>(),
        beside_before.keys().collect::<Vec<_>>(),
        "{}: files were added or removed beside the state's folder",
        row.name
    );
    let kept_after: Vec<_> = kept.iter().map(|p| std::fs::read(p).ok()).collect();
    assert_eq!(
        kept_before, kept_after,
        "{}: a planted file changed",
        row.name
    );
    assert_eq!(
        out.status, row.code,
        "{}: exit code\n{}",
        row.name, out.stderr
    );
    for fragment in row.says {
        assert!(
            out.stderr.contains(fragment),
            "{}: the message lacks {fragment:?}:\n{}",
            row.name,
            out.stderr
        );
    }
    // As the message says: the planted journal is removed, and then
    // the state reads as before.
    let journal = scene.path("st/s.state.journal");
    if journal.is_symlink() {
        std::fs::remove_file(journal).expect("remove the planted journal");
    }
    if std::fs::read(scene.path(STATE)).ok() != Some(bytes_before) {
        assert_kept(row.name, &state_before, &held(&scene.path(STATE)));
    }
}

// ------------------------------------------------------- one lock per state

/// `hub ARGS` in the scene, held inside `a` (which waits while the file
/// `hang` exists) once `a.started` appears.
fn held_in_a(scene: &Scene, args: &[&str]) -> Child {
    std::fs::write(scene.path("hang"), "").expect("hang");
    std::fs::write(
        scene.path("a.extra"),
        "printf %s \"$HUB_STATE\" > ../st/hub-state\ntouch ../a.started\nwhile [ -e ../hang ]; do sleep 0.05; done\n",
    )
    .expect("extra");
    let mut child = crate::crash::hub(scene.root(), args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn hub");
    let started = Instant::now();
    while !scene.path("a.started").exists() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "a never started"
        );
        assert!(
            child.try_wait().expect("try_wait").is_none(),
            "the deploy ended early"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    child
}

#[test]
fn a_link_and_a_relative_path_to_one_state_share_its_lock() {
    let scene = Scene::undeployed();
    // No state file yet: the link points to where it will be.
    symlink("st/s.state", scene.path("link.state")).expect("link");
    let mut first = held_in_a(&scene, &["deploy", "hub.yaml", "-s", "link.state"]);
    let second = pinned_command(
        scene.root(),
        &["deploy", "hub.yaml", "-s", "./st/../st/s.state"],
    )
    .env("HUB_OPERATION_ID", "op-second")
    .timeout(Duration::from_secs(20))
    .output()
    .expect("run the second deploy");
    std::fs::remove_file(scene.path("hang")).expect("let the first go on");
    let first_status = first.wait().expect("wait");
    let second = Output::of(second, scene.root());
    assert_eq!(
        second.status, 1,
        "the second deploy ran:\n{}",
        second.stderr
    );
    assert!(
        second.stderr.contains("is locked") && second.stderr.contains("st/s.state.lock"),
        "{}",
        second.stderr
    );
    assert!(first_status.success(), "the first deploy failed");
    assert!(!scene.path("link.state.lock").exists());
    let state = hub_state::read(
        &scene.path(STATE),
        &mut hub_manifest::diag::Warnings::default(),
    )
    .expect("read")
    .expect("a state");
    let operations: Vec<(&str, &str)> = state
        .operations
        .iter()
        .map(|o| (o.id.as_str(), o.status.as_str()))
        .collect();
    // Only the first run's, and complete.
    assert_eq!(operations.len(), 1, "{operations:?}");
    assert_ne!(operations[0].1, "in-progress", "{operations:?}");
    assert_eq!(state.components["a"].status, "deployed");
    assert_eq!(state.components["b"].status, "deployed");
    // Components see the location as given (made absolute).
    assert_eq!(
        std::fs::read_to_string(scene.path("st/hub-state")).expect("HUB_STATE"),
        scene.path("link.state").display().to_string()
    );
    // The logs are beside the real file, whatever path a run was given.
    assert!(scene.path("st/s.state.logs/a.log").is_file());
    assert!(!scene.path("link.state.logs").exists());
}
