//! The manifest model: typed documents and how they are read and written.

pub mod console;
pub mod declared;
pub mod diag;
pub mod masked;
pub mod private;
pub mod redact;
pub mod secrets;

pub mod emit;
mod error;
mod flatten;
pub mod keys;
pub mod limits;
mod load;
mod locate;
mod model;
pub mod names;
mod packed_source;
pub mod parallel;
pub mod pieces;
pub mod provenance;
pub mod schema;
mod streamed;
pub mod typos;
pub mod validate;
mod write;

pub use error::ManifestError;
pub use flatten::{leaf_paths, leaf_position, leaf_segments, leaves, top_parameters};
pub use load::{Document, SourceFile};
pub use locate::{locate, locate_entry, Segment};
pub use model::*;
pub use packed_source::{DeflatedText, PackedSource};
pub use provenance::Provenance;
pub use write::{
    render_elaborated, render_elaborated_with, write_output, write_output_as, write_private_output,
};

use crate::diag::Warnings;
use std::path::Path;

/// Reads the first document of a stack, application or component manifest,
/// warning when the file holds more than one.
pub fn read_manifest(
    path: &Path,
    what: &str,
    warnings: &mut Warnings,
) -> Result<(Manifest, SourceFile), ManifestError> {
    let file = SourceFile::read(path)?;
    let (doc, count) = match manifest_in_pieces(&file) {
        Some((doc, count)) => (Some(doc), count),
        None => file.first_document::<Manifest>(warnings)?,
    };
    let doc = doc.ok_or_else(|| ManifestError::NoDocuments {
        path: path.to_path_buf(),
    })?;
    if count > 1 {
        warnings.warn(
            Some(file.second_document()),
            format!("{what} manifest holds {count} YAML documents; only the first is used"),
        );
    }
    Ok((doc, file))
}

/// Reads a parameters file; an empty file is an empty set of parameters.
pub fn read_params(path: &Path, warnings: &mut Warnings) -> Result<ParamsFile, ManifestError> {
    let file = SourceFile::read(path)?;
    let (doc, count) = match params_in_pieces(&file) {
        Some((doc, count)) => (Some(doc), count),
        None => file.first_document::<ParamsFile>(warnings)?,
    };
    if count > 1 {
        warnings.warn(
            Some(file.second_document()),
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
    let mut docs = match elaborated_in_pieces(file) {
        Some(docs) => docs,
        None => file.documents::<Manifest>(warnings)?,
    };
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

/// The long lists of a stack document, read a piece at a time.
const MANIFEST_LISTS: [(&str, pieces::Shape); 2] = [
    ("components", pieces::Shape::List),
    ("parameters", pieces::Shape::List),
];

/// The documents of an elaborated file, its stack document read a piece
/// at a time ([`pieces`]); `None` when it must be read whole.
fn elaborated_in_pieces(file: &SourceFile) -> Option<Vec<Manifest>> {
    pieces::documents::<Manifest>(
        file,
        &MANIFEST_LISTS,
        pieces::PIECEWISE_BYTES,
        |stack, lists| fill_manifest(&file.path, stack, &lists),
    )
}

/// A large stack manifest read a piece at a time.
fn manifest_in_pieces(file: &SourceFile) -> Option<(Manifest, usize)> {
    pieces::first_document::<Manifest>(
        file,
        &MANIFEST_LISTS,
        pieces::PIECEWISE_BYTES,
        |stack, lists| fill_manifest(&file.path, stack, &lists),
    )
}

fn fill_manifest(path: &Path, stack: &mut Manifest, lists: &[pieces::Section<'_>]) -> Option<()> {
    let [components, parameters] = lists else {
        return None;
    };
    pieces::fill_list(path, components, &mut stack.components)?;
    pieces::fill_list(path, parameters, &mut stack.parameters)?;
    Some(())
}

/// A large parameters file read a piece at a time.
fn params_in_pieces(file: &SourceFile) -> Option<(ParamsFile, usize)> {
    let keys = [
        ("parameters", pieces::Shape::List),
        ("outputs", pieces::Shape::List),
    ];
    let smallest = pieces::PIECEWISE_BYTES;
    pieces::first_document::<ParamsFile>(file, &keys, smallest, |params, lists| {
        let [parameters, outputs] = lists.as_slice() else {
            return None;
        };
        pieces::fill_list(&file.path, parameters, &mut params.parameters)?;
        pieces::fill_list(&file.path, outputs, &mut params.outputs)?;
        Some(())
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
