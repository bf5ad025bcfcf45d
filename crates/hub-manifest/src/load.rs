//! Reading YAML files: transparent gunzip, multiple documents, typed
//! decoding with positions in errors, and warnings for keys the model does
//! not know.

use super::keys::{judge, unknown_key_message, Verdict};
use super::limits::{self, Exceeded, MAX_FILE_BYTES};
use super::locate::{locate, repeated_key, Segment};
use super::ManifestError;
use crate::diag::{Location, Warnings};
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value as Json;
use std::io::Read;
use std::path::{Path, PathBuf};

/// A document type the loader decodes: its schema, when it has one, gives
/// the known keys of each place, for "did you mean" and typo checks.
pub trait Document: DeserializeOwned {
    fn schema() -> Option<&'static Json> {
        None
    }
}

/// The text of one input file.
#[derive(Debug, Clone)]
pub struct SourceFile {
    pub path: PathBuf,
    pub text: String,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

impl SourceFile {
    pub fn read(path: &Path) -> Result<Self, ManifestError> {
        let bytes = std::fs::read(path).map_err(|source| ManifestError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::from_bytes(path, bytes)
    }

    pub fn from_bytes(path: &Path, bytes: Vec<u8>) -> Result<Self, ManifestError> {
        Self::from_bytes_within(path, bytes, MAX_FILE_BYTES)
    }

    /// [`SourceFile::from_bytes`] with a size limit of `max_bytes` (a
    /// state's, see [`limits::max_state_bytes`]).
    pub fn from_bytes_within(
        path: &Path,
        bytes: Vec<u8>,
        max_bytes: usize,
    ) -> Result<Self, ManifestError> {
        if bytes.len() > max_bytes {
            return Err(limit_error(
                path,
                Exceeded::size_within(bytes.len(), max_bytes),
            ));
        }
        let bytes = if bytes.starts_with(&GZIP_MAGIC) {
            gunzip(path, &bytes, max_bytes)?
        } else {
            bytes
        };
        let text = String::from_utf8(bytes).map_err(|e| ManifestError::NotUtf8 {
            path: path.to_path_buf(),
            offset: e.utf8_error().valid_up_to(),
        })?;
        Ok(SourceFile {
            path: path.to_path_buf(),
            text,
        })
    }

    /// Decodes every non-empty document of the file as `T`.
    pub fn documents<T: Document>(&self, warnings: &mut Warnings) -> Result<Vec<T>, ManifestError> {
        self.check_limits()?;
        self.documents_within_limits(warnings)
    }

    /// [`SourceFile::documents`] of a text already known to be within the
    /// limits (see [`SourceFile::first_document_within_limits`]).
    pub(crate) fn documents_within_limits<T: Document>(
        &self,
        warnings: &mut Warnings,
    ) -> Result<Vec<T>, ManifestError> {
        let mut out = Vec::new();
        for (index, document) in yaml_serde::Deserializer::from_str(&self.text).enumerate() {
            if let Some(doc) = self.decode_document(document, index, warnings)? {
                out.push(doc);
            }
        }
        Ok(out)
    }

    /// Decodes the first non-empty document as `T` and says how many
    /// non-empty documents the file holds.
    pub fn first_document<T: Document>(
        &self,
        warnings: &mut Warnings,
    ) -> Result<(Option<T>, usize), ManifestError> {
        self.check_limits()?;
        self.first_document_within_limits(warnings)
    }

    /// [`SourceFile::first_document`] with a size limit of `max_bytes` (a
    /// state's, see [`limits::max_state_bytes`]).
    pub fn first_document_sized<T: Document>(
        &self,
        warnings: &mut Warnings,
        max_bytes: usize,
    ) -> Result<(Option<T>, usize), ManifestError> {
        self.check_limits_within(max_bytes)?;
        self.first_document_within_limits(warnings)
    }

    /// [`SourceFile::first_document`] of a text already known to be
    /// within the limits: a piece of a text that passed them, cut at
    /// lines outside any flow collection, without aliases
    /// ([`crate::pieces`]).
    pub(crate) fn first_document_within_limits<T: Document>(
        &self,
        warnings: &mut Warnings,
    ) -> Result<(Option<T>, usize), ManifestError> {
        let mut first = None;
        let mut count = 0;
        for (index, document) in yaml_serde::Deserializer::from_str(&self.text).enumerate() {
            if first.is_none() {
                first = self.decode_document(document, index, warnings)?;
                count += usize::from(first.is_some());
            } else {
                let rest: Option<yaml_serde::Value> =
                    Option::deserialize(document).map_err(|e| self.yaml_error(e, index))?;
                count += usize::from(rest.is_some_and(|v| !v.is_null()));
            }
        }
        Ok((first, count))
    }

    /// Where the second YAML document starts: the line of its `---`
    /// after some content (the file alone when there is none).
    pub fn second_document(&self) -> Location {
        let mut content = false;
        for (number, line) in self.text.lines().enumerate() {
            if line.starts_with("---") && content {
                return Location::at(&self.path, number + 1, 1);
            }
            let trimmed = line.trim();
            if !trimmed.is_empty() && !trimmed.starts_with('#') && !line.starts_with("---") {
                content = true;
            }
        }
        Location::file(&self.path)
    }

    /// Refuses a file past the limits of [`limits`] before it is decoded.
    pub fn check_limits(&self) -> Result<(), ManifestError> {
        self.check_limits_within(MAX_FILE_BYTES)
    }

    /// [`SourceFile::check_limits`] with a size limit of `max_bytes`.
    pub fn check_limits_within(&self, max_bytes: usize) -> Result<(), ManifestError> {
        let scan =
            limits::scan_within(&self.text, max_bytes).map_err(|e| limit_error(&self.path, e))?;
        if scan.has_aliases {
            for (index, document) in yaml_serde::Deserializer::from_str(&self.text).enumerate() {
                limits::count_expanded(document).map_err(|e| self.yaml_error(e, index))?;
            }
        }
        Ok(())
    }

    fn decode_document<T: Document>(
        &self,
        document: yaml_serde::Deserializer<'_>,
        index: usize,
        warnings: &mut Warnings,
    ) -> Result<Option<T>, ManifestError> {
        let mut unknown: Vec<Vec<Segment>> = Vec::new();
        let decoded: Option<T> =
            serde_ignored::deserialize(document, |path| unknown.push(Segment::path(&path)))
                .map_err(|e| self.yaml_error(e, index))?;
        for path in unknown {
            self.report_unknown(&path, T::schema(), warnings);
        }
        Ok(decoded)
    }

    /// Warns about an unknown key with the known key it may stand for; a
    /// near typo of a known key is marked so that commands can refuse it.
    fn report_unknown(&self, path: &[Segment], schema: Option<&Json>, warnings: &mut Warnings) {
        let Verdict::Unknown {
            suggestion,
            near_typo,
        } = judge(schema, path)
        else {
            return;
        };
        let (line, column) = locate(&self.text, path).unwrap_or((1, 1));
        let location = Some(Location::at(&self.path, line, column));
        let message = unknown_key_message(path, suggestion.as_deref());
        if near_typo {
            warnings.warn_near_typo(location, message);
        } else {
            warnings.warn(location, message);
        }
    }

    fn yaml_error(&self, error: yaml_serde::Error, index: usize) -> ManifestError {
        let message = error.to_string();
        if let Some(limit) = limit_of(&message) {
            let location = match error.location() {
                Some(at) => Location::at(&self.path, at.line(), at.column()),
                None => Location::file(&self.path),
            };
            return ManifestError::Limit {
                location,
                message: limit,
            };
        }
        let repeated = duplicate_key(&message).and_then(|key| repeated_key(&self.text, key));
        let location = match (repeated, error.location()) {
            (Some((line, column)), _) => Location::at(&self.path, line, column),
            (None, Some(at)) => Location::at(&self.path, at.line(), at.column()),
            (None, None) => Location::file(&self.path),
        };
        ManifestError::Yaml {
            location,
            document: index + 1,
            message,
        }
    }
}

/// Our words for a decoder error that is one of the limits.
pub(crate) fn limit_of(message: &str) -> Option<String> {
    if limits::is_recursion_limit(message) {
        Some(limits::depth_message())
    } else if limits::is_alias_limit(message) {
        Some(limits::expansion_message())
    } else {
        None
    }
}

fn limit_error(path: &Path, exceeded: Exceeded) -> ManifestError {
    let location = match (exceeded.line, exceeded.column) {
        (Some(line), Some(column)) => Location::at(path, line, column),
        _ => Location::file(path),
    };
    ManifestError::Limit {
        location,
        message: exceeded.message,
    }
}

/// The key named by a "duplicate field `key`" error.
fn duplicate_key(message: &str) -> Option<&str> {
    let rest = message.split("duplicate field `").nth(1)?;
    rest.split('`').next()
}

fn gunzip(path: &Path, bytes: &[u8], max_bytes: usize) -> Result<Vec<u8>, ManifestError> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .take(max_bytes as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|source| ManifestError::Gzip {
            path: path.to_path_buf(),
            source,
        })?;
    if out.len() > max_bytes {
        return Err(limit_error(
            path,
            Exceeded::size_within(out.len(), max_bytes),
        ));
    }
    Ok(out)
}
