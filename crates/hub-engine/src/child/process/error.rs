//! Failures to start or watch a child, with their hints.

use hub_state::beside;
use std::io;
use std::path::{Path, PathBuf};

#[derive(thiserror::Error, Debug)]
pub enum ProcessError {
    #[error("cannot run `{label}`: its working directory `{}` does not exist or is not a folder", cwd.display())]
    MissingCwd { label: String, cwd: PathBuf },
    #[error("cannot run `{}` for `{label}` in `{}`: {source}", program.display(), cwd.display())]
    Spawn {
        label: String,
        program: PathBuf,
        cwd: PathBuf,
        source: io::Error,
    },
    #[error("cannot open the log file `{}` of `{label}`: {source}", path.display())]
    LogFile {
        label: String,
        path: PathBuf,
        source: io::Error,
    },
    #[error("lost track of `{}` run for `{label}`: {source}", program.display())]
    Supervise {
        label: String,
        program: PathBuf,
        source: io::Error,
    },
}

impl ProcessError {
    /// A file planted where hub keeps a log refused the run (see
    /// `state::beside`).
    pub fn planted(&self) -> bool {
        matches!(self, ProcessError::LogFile { source, .. } if beside::Planted::of(source).is_some())
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            ProcessError::MissingCwd { .. } => {
                Some("check the component's source or `--base-dir`".into())
            }
            ProcessError::Spawn {
                program, source, ..
            } => spawn_hint(program, source),
            ProcessError::LogFile { source, .. } if beside::Planted::of(source).is_some() => {
                Some(beside::Planted::hint().into())
            }
            ProcessError::LogFile { .. } => {
                Some("check that the folder beside the state is writable".into())
            }
            ProcessError::Supervise { .. } => None,
        }
    }

    /// What a shell would exit with: 126 for a file that cannot be
    /// executed, 127 for one that is not found, 1 otherwise.
    pub fn exit_code(&self) -> i32 {
        match self {
            ProcessError::Spawn { source, .. } if source.kind() == io::ErrorKind::NotFound => 127,
            ProcessError::Spawn { .. } => 126,
            _ => 1,
        }
    }
}

fn spawn_hint(program: &Path, source: &io::Error) -> Option<String> {
    let shown = program.display();
    if source.raw_os_error() == Some(libc::ENOEXEC) {
        return Some(format!(
            "`{shown}` is not a program the system can start: begin it with a `#!` line such as `#!/bin/sh`"
        ));
    }
    match source.kind() {
        io::ErrorKind::PermissionDenied => Some(format!("make it executable: `chmod +x {shown}`")),
        io::ErrorKind::NotFound if program.components().count() == 1 => Some(format!(
            "`{shown}` is not on the `PATH` of the component's environment"
        )),
        io::ErrorKind::NotFound => Some(format!(
            "check that `{shown}` exists and that the interpreter on its `#!` line is installed"
        )),
        _ => None,
    }
}
