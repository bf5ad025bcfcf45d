//! A small builder for integration tests: write files into a temporary
//! folder, run the real `hub` binary there, and look at what it did.

#![allow(dead_code)]

use assert_cmd::Command;
use std::path::{Path, PathBuf};

pub struct Test {
    dir: tempfile::TempDir,
    cwd: PathBuf,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

pub struct Output {
    pub status: i32,
    pub stdout: String,
    pub stderr: String,
    pub root: PathBuf,
}

impl Test {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("temporary folder");
        let cwd = dir.path().to_path_buf();
        Test {
            dir,
            cwd,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }

    /// Writes `text` (indentation of the first line removed from every line)
    /// to `path` below the test folder, creating folders as needed.
    pub fn file(self, path: &str, text: &str) -> Self {
        let target = self.dir.path().join(path);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        std::fs::write(&target, unindent(text)).expect("write");
        self
    }

    /// [`Test::file`], made executable (a component's script).
    pub fn script(self, path: &str, text: &str) -> Self {
        use std::os::unix::fs::PermissionsExt;
        let test = self.file(path, text);
        let target = test.dir.path().join(path);
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        test
    }

    /// A component at `components/NAME` with `parameters` (the lines of its
    /// `parameters:` list), a deploy script that does nothing, and
    /// `undeploy` as its undeploy script.
    pub fn component_with_undeploy(self, name: &str, parameters: &str, undeploy: &str) -> Self {
        let manifest = format!(
            "version: 1\nkind: component\nmeta: {{name: {name}}}\nparameters:\n{parameters}"
        );
        self.file(&format!("components/{name}/hub-component.yaml"), &manifest)
            .script(&format!("components/{name}/deploy.sh"), "#!/bin/sh\n")
            .script(&format!("components/{name}/undeploy.sh"), undeploy)
    }

    pub fn bytes(self, path: &str, bytes: &[u8]) -> Self {
        let target = self.dir.path().join(path);
        std::fs::create_dir_all(target.parent().expect("parent")).expect("mkdir");
        std::fs::write(&target, bytes).expect("write");
        self
    }

    /// Runs from `path` below the test folder instead of its root.
    pub fn cwd(mut self, path: &str) -> Self {
        self.cwd = self.dir.path().join(path);
        self
    }

    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| a.to_string()));
        self
    }

    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn run(&self) -> Output {
        let mut command = Command::new(hub_binary());
        command
            .current_dir(&self.cwd)
            .args(&self.args)
            .env_remove("ENV");
        for (k, v) in &self.env {
            command.env(k, v);
        }
        Output::of(command.output().expect("run hub"), self.dir.path())
    }

    /// Keeps the folder alive for files written by the run.
    pub fn run_keep(self) -> (Output, tempfile::TempDir) {
        let out = self.run();
        (out, self.dir)
    }
}

impl Output {
    /// What a finished `hub` process left, run in `root`.
    pub fn of(out: std::process::Output, root: &Path) -> Self {
        Output {
            status: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            root: root.to_path_buf(),
        }
    }

    #[track_caller]
    pub fn success(&self) -> &Self {
        assert_eq!(
            self.status, 0,
            "expected success\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn failure(&self) -> &Self {
        assert_ne!(
            self.status, 0,
            "expected failure\nstdout:\n{}\nstderr:\n{}",
            self.stdout, self.stderr
        );
        self
    }

    #[track_caller]
    pub fn stderr_has(&self, fragment: &str) -> &Self {
        assert!(
            self.stderr.contains(fragment),
            "stderr lacks {fragment:?}:\n{}",
            self.stderr
        );
        self
    }

    /// The documents of a YAML file the run wrote (plain or gzip).
    pub fn documents(&self, path: &str) -> Vec<yaml_serde::Value> {
        read_documents(&self.root.join(path))
    }

    /// The documents printed on stdout.
    pub fn stdout_documents(&self) -> Vec<yaml_serde::Value> {
        parse_documents(&self.stdout)
    }
}

/// Runs hub in the test folder with a reduced environment (`PATH`, `HOME`
/// = the folder, `USER=tester`), no standard input, and `env` on top.
pub fn hub_isolated(test: &Test, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(hub_binary());
    command
        .current_dir(test.root())
        .args(args)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", test.root())
        .env("USER", "tester")
        .write_stdin(Vec::new());
    for (k, v) in env {
        command.env(k, v);
    }
    Output::of(command.output().expect("run hub"), test.root())
}

/// The content of a lock file held by `pid` on `host`.
pub fn lock_text(pid: u32, host: &str) -> String {
    let info = hub_state::LockInfo {
        pid,
        host: host.to_string(),
        user: "alice".into(),
        operation: "deploy".into(),
        started: "2024-05-01T10:00:00Z".into(),
        id: "0c1d2e3f-4a5b-4c6d-8e7f-901a2b3c4d5e".into(),
        ..Default::default()
    };
    yaml_serde::to_string(&info).expect("lock yaml")
}

/// The pid of a process that has exited.
pub fn dead_pid() -> u32 {
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait");
    pid
}

pub fn read_documents(path: &Path) -> Vec<yaml_serde::Value> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        use std::io::Read;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .expect("gunzip");
        out
    } else {
        bytes
    };
    parse_documents(&String::from_utf8(bytes).expect("utf-8"))
}

/// The names of the components the state file at `path` has entries for.
pub fn state_entries(path: &Path) -> Vec<String> {
    let state = read_documents(path).remove(0);
    let components = state["components"]
        .as_mapping()
        .cloned()
        .unwrap_or_default();
    components
        .keys()
        .filter_map(|k| k.as_str().map(String::from))
        .collect()
}

pub fn parse_documents(text: &str) -> Vec<yaml_serde::Value> {
    use serde::Deserialize;
    yaml_serde::Deserializer::from_str(text)
        .map(|d| yaml_serde::Value::deserialize(d).expect("yaml"))
        .filter(|v| !v.is_null())
        .collect()
}

/// Parses a YAML literal for comparisons.
pub fn yaml(text: &str) -> yaml_serde::Value {
    yaml_serde::from_str(&unindent(text)).expect("yaml literal")
}

pub fn unindent(text: &str) -> String {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let indent = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    text.lines()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
        + "\n"
}

/// A copy of `fixtures/demo` in a temporary folder, without what an
/// earlier run rendered there.
pub fn demo_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tmp");
    let target = dir.path().join("demo");
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/demo"),
        &target,
    );
    let _ = std::fs::remove_file(target.join("components/app/app.conf"));
    (dir, target)
}

/// Every file below `dir`, folders walked.
pub fn files_below(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("read").flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(files_below(&path));
        } else {
            files.push(path);
        }
    }
    files
}

pub fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read").flatten() {
        let path = entry.path();
        let target = to.join(entry.file_name());
        if path.is_dir() {
            copy_tree(&path, &target);
        } else {
            std::fs::copy(&path, &target).expect("copy");
        }
    }
}

/// Pinned time, operation id, one-time pads and user: reproducible runs.
pub const PINNED: [(&str, &str); 5] = [
    ("HUB_NOW", "2026-01-01T00:00:00Z"),
    ("HUB_LINEAGE", "lineage-1"),
    ("HUB_OPERATION_ID", "op-1"),
    ("HUB_RANDOM_SEED", "1"),
    ("USER", "tester"),
];

/// Runs hub in `dir` with [`PINNED`] values, no standard input, and none
/// of the variables that change how it runs (`HUB_FORCE`, `HUB_JOBS`,
/// `ENV`, `NO_COLOR`).
pub fn hub_pinned(dir: &Path, args: &[&str]) -> Output {
    let out = pinned_command(dir, args).output().expect("run hub");
    Output::of(out, dir)
}

/// The command [`hub_pinned`] runs, for a test to add variables to.
/// The `hub` binary the tests run: cargo's build, or the one
/// `HUB_TEST_BINARY` names (to show that a test fails on an older build).
pub fn hub_binary() -> PathBuf {
    match std::env::var_os("HUB_TEST_BINARY") {
        Some(path) => PathBuf::from(path),
        None => assert_cmd::cargo::cargo_bin("hub"),
    }
}

pub fn pinned_command(dir: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(hub_binary());
    command
        .current_dir(dir)
        .args(args)
        .envs(PINNED)
        .env_remove("HUB_FORCE")
        .env_remove("HUB_JOBS")
        .env_remove("ENV")
        .env_remove("NO_COLOR")
        .write_stdin(Vec::new());
    command
}

/// Makes the file at `path` an hour older, for tests that choose the
/// newest of several state files.
pub fn age_by_an_hour(path: &Path) {
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::File::options()
        .write(true)
        .open(path)
        .and_then(|f| f.set_modified(an_hour_ago))
        .expect("age the file");
}

/// A state's text without the lines hub frames it with (`# hub-state…`
/// first and last): what a hand edit or another tool leaves, read without
/// the digest check.
pub fn unframed(text: &str) -> String {
    let mut lines: Vec<&str> = text.split_inclusive('\n').collect();
    if lines.first().is_some_and(|l| l.starts_with("# hub-state:")) {
        lines.remove(0);
    }
    if lines
        .last()
        .is_some_and(|l| l.starts_with("# hub-state-end "))
    {
        lines.pop();
    }
    lines.concat()
}

/// Where skipped tests are listed for `scripts/test.sh`, which prints them
/// after `cargo test` (which counts a skipped test as `ok`).
pub fn skip_ledger() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("skipped-tests")
}

/// A test that cannot run here (no corpus, no test server, no root)
/// returns after this: it says why on stderr and adds a line to the
/// [`skip_ledger`], named after the running test.
pub fn skipped(why: &str) {
    use std::io::Write;
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    // One line per skipped test in the ledger, whatever the reason holds
    // (a server's traceback, say): scripts/test.sh counts lines.
    let why = why.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = format!("SKIPPED {test}: {why}");
    let _ = writeln!(std::io::stderr(), "\n{line}");
    let ledger = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(skip_ledger());
    if let Ok(mut ledger) = ledger {
        let _ = writeln!(ledger, "{line}");
    }
}
