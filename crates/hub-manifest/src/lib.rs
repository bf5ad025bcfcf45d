//! The manifest model: typed documents and how they are read and written.

pub mod console;
pub mod diag;
pub mod private;
pub mod redact;
pub mod secrets;

pub mod emit;
mod flatten;
pub mod keys;
pub mod limits;
mod load;
mod locate;
mod model;
pub mod names;
pub mod provenance;
pub mod schema;
pub mod validate;
mod write;

pub use flatten::leaves;
pub use load::{Document, SourceFile};
pub use locate::{locate, locate_entry, Segment};
pub use model::*;
pub use provenance::Provenance;
pub use write::{
    render_elaborated, render_elaborated_with, write_output, write_output_as, write_private_output,
};

use crate::diag::{Location, Warning, Warnings};
use std::path::{Path, PathBuf};

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
    let typo = |text: String| text.replacen(" is ignored", " looks like a typo", 1);
    match typos {
        [one] => typo(one.message.clone()),
        _ => {
            let lines: Vec<String> = typos.iter().map(|w| typo(format!("  {w}"))).collect();
            format!(
                "{} unknown keys look like typos:\n{}",
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
            ManifestError::NearTypos { .. } => Some(
                "correct the key; `--lenient` turns this error into a warning (the key is then ignored)".into(),
            ),
            ManifestError::NoDocuments { .. } => {
                Some("the file is empty or holds only comments; a stack needs at least `kind` and `meta.name`".into())
            }
            _ => None,
        }
    }
}

/// Reads the first document of a stack, application or component manifest,
/// warning when the file holds more than one.
pub fn read_manifest(
    path: &Path,
    what: &str,
    warnings: &mut Warnings,
) -> Result<(Manifest, SourceFile), ManifestError> {
    let file = SourceFile::read(path)?;
    let (doc, count) = file.first_document::<Manifest>(warnings)?;
    let doc = doc.ok_or_else(|| ManifestError::NoDocuments {
        path: path.to_path_buf(),
    })?;
    if count > 1 {
        warnings.warn(
            Some(Location::file(path)),
            format!("{what} manifest holds {count} YAML documents; only the first is used"),
        );
    }
    Ok((doc, file))
}

/// Reads a parameters file; an empty file is an empty set of parameters.
pub fn read_params(path: &Path, warnings: &mut Warnings) -> Result<ParamsFile, ManifestError> {
    let file = SourceFile::read(path)?;
    let (doc, count) = file.first_document::<ParamsFile>(warnings)?;
    if count > 1 {
        warnings.warn(
            Some(Location::file(path)),
            format!("parameters file holds {count} YAML documents; only the first is used"),
        );
    }
    Ok(doc.unwrap_or_default())
}

/// Decodes an elaborated file written by `hub elaborate` (plain or gzip),
/// already read.
pub fn parse_elaborated(
    file: &SourceFile,
    warnings: &mut Warnings,
) -> Result<Elaborated, ManifestError> {
    let mut docs = file.documents::<Manifest>(warnings)?;
    // Decoding grows each list by doubling: a run keeps these for its
    // whole length, a third of their room unused (tens of MB at 10,000
    // components) unless given back.
    docs.iter_mut().for_each(Manifest::shrink_to_fit);
    docs.shrink_to_fit();
    let mut docs = docs.into_iter();
    let stack = docs.next().ok_or_else(|| ManifestError::NoDocuments {
        path: file.path.clone(),
    })?;
    if stack.kind == "component" {
        return Err(ManifestError::NotElaborated {
            path: file.path.clone(),
            kind: stack.kind,
        });
    }
    Ok(Elaborated {
        stack,
        components: docs.collect(),
        provenance: Provenance::parse(&file.text),
        ..Elaborated::default()
    })
}

impl Document for Manifest {
    fn schema() -> Option<&'static serde_json::Value> {
        Some(schema::cached_schema(schema::DocumentType::Stack))
    }
}

impl Document for ParamsFile {
    fn schema() -> Option<&'static serde_json::Value> {
        Some(schema::cached_schema(schema::DocumentType::Params))
    }
}
