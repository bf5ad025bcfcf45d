//! The top-level error: what `main` turns into a message and an exit code.

use crate::diag::Location;
use crate::elaborate::ElaborateError;
use crate::manifest::ManifestError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Elaborate(#[from] ElaborateError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("invalid `{flag}` value `{value}`: {reason}")]
    Usage {
        flag: &'static str,
        value: String,
        reason: String,
    },
    #[error("cannot write `{}`: {source}", path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot serialise the result: {0}")]
    Serialise(#[from] yaml_serde::Error),
    #[error("{} file(s) failed validation", errors.len())]
    Invalid { errors: Vec<ManifestError> },
}

impl Error {
    /// 1 for every failure the user can fix in their files; 2 for misuse of
    /// the command line.
    pub fn exit_code(&self) -> i32 {
        match self {
            Error::Usage { .. } => 2,
            _ => 1,
        }
    }

    pub fn location(&self) -> Option<Location> {
        match self {
            Error::Elaborate(e) => e.location(),
            Error::Manifest(e) => e.location(),
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            Error::Elaborate(e) => e.hint(),
            Error::Manifest(e) => e.hint(),
            Error::Usage { flag: "-e", .. } => Some("write overrides as `-e NAME=value,OTHER=value`".into()),
            Error::Write { .. } => Some("check that the folder exists and is writable".into()),
            _ => None,
        }
    }
}
