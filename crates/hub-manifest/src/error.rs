//! What can go wrong reading a manifest, and the hint each error gives.

use crate::diag::{Location, Warning};
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}` looks gzip-compressed but cannot be decompressed: {source}", path.display())]
    Gzip {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("`{}` is not UTF-8 text (invalid byte at offset {offset})", path.display())]
    NotUtf8 { path: PathBuf, offset: usize },
    #[error("invalid YAML in document {document}: {message}")]
    Yaml {
        location: Location,
        document: usize,
        message: String,
    },
    #[error("too much to read: {message}")]
    Limit { location: Location, message: String },
    #[error("`{}` holds no YAML document", path.display())]
    NoDocuments { path: PathBuf },
    #[error("`{}` is not an elaborated stack: its first document has kind `{kind}`", path.display())]
    NotElaborated { path: PathBuf, kind: String },
    #[error("{}", near_typos_text(typos))]
    NearTypos { typos: Vec<Warning> },
}

/// One near typo in the words of its warning; several each on a line with
/// its place (the first is also shown as the error's location).
fn near_typos_text(typos: &[Warning]) -> String {
    let typo = |text: String| crate::keys::refused_message(&text);
    match typos {
        [one] => typo(one.message.clone()),
        _ => {
            let lines: Vec<String> = typos.iter().map(|w| typo(format!("  {w}"))).collect();
            let what = if typos.iter().all(|w| w.topic == crate::diag::Topic::General) {
                "unknown keys"
            } else {
                "names"
            };
            format!(
                "{} {what} look like typos:\n{}",
                typos.len(),
                lines.join("\n")
            )
        }
    }
}

impl ManifestError {
    pub fn location(&self) -> Option<Location> {
        match self {
            ManifestError::Yaml { location, .. } | ManifestError::Limit { location, .. } => {
                Some(location.clone())
            }
            ManifestError::Read { path, .. }
            | ManifestError::Gzip { path, .. }
            | ManifestError::NotUtf8 { path, .. }
            | ManifestError::NoDocuments { path }
            | ManifestError::NotElaborated { path, .. } => Some(Location::file(path)),
            ManifestError::NearTypos { typos } => typos.first().and_then(|w| w.location.clone()),
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            ManifestError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound => {
                Some("check the path; relative paths are resolved from the current directory".into())
            }
            ManifestError::Yaml { message, .. } if message.contains("invalid type") => {
                Some("the field has the wrong type; see the JSON Schemas in `schemas/` or run `hub validate`".into())
            }
            ManifestError::Yaml { message, .. } if message.contains("duplicate field") => {
                Some("the key appears twice in the same mapping; keep one of them".into())
            }
            ManifestError::Limit { .. } => Some(
                "hub bounds what one file may ask of it (see \"Safety\" in the README); flatten the nesting, expand fewer aliases or split the file".into(),
            ),
            ManifestError::Yaml { .. } => Some("fix the YAML syntax at the line shown".into()),
            ManifestError::NearTypos { typos } => Some(match typos.first() {
                Some(first) => crate::keys::refused_hint_about(first.origin, first.topic),
                None => crate::keys::refused_hint(Default::default()),
            }),
            ManifestError::NoDocuments { .. } => {
                Some("the file is empty or holds only comments; a stack needs at least `kind` and `meta.name`".into())
            }
            _ => None,
        }
    }
}
