//! `hub validate`: checks manifests by decoding them with the typed model.

use super::{read_manifest, read_params, ManifestError};
use crate::diag::Warnings;
use crate::error::Error;
use std::path::Path;

pub fn validate_files(files: &[std::path::PathBuf], warnings: &mut Warnings) -> Result<(), Error> {
    let mut failed = Vec::new();
    for file in files {
        if let Err(e) = validate_file(file, warnings) {
            failed.push(e);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(Error::Invalid { errors: failed })
    }
}

fn validate_file(file: &Path, warnings: &mut Warnings) -> Result<(), ManifestError> {
    let is_params = file
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("params"));
    if is_params {
        read_params(file, warnings).map(|_| ())
    } else {
        read_manifest(file, "", warnings).map(|_| ())
    }
}
