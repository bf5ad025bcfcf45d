//! The text and bytes of a state file: reading the bytes, unsealing,
//! parsing with the kind/version checks, the serial, and rendering.

use super::paths::backup_path;
use crate::crypto;
use crate::integrity;
use crate::layout::{resolve_snapshots, StateFormat};
use crate::model::State;
use crate::render::Renderer;
use crate::StateError;
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::{locate, ManifestError, Segment, SourceFile};
use std::path::{Path, PathBuf};

/// The state's own bytes: a sealed (encrypted) state is decrypted with the
/// password in `HUB_CRYPTO_PASSWORD` (see [`crate::crypto`]); anything else
/// is returned as it is.
pub(crate) fn unseal(path: &Path, bytes: Vec<u8>) -> Result<Vec<u8>, StateError> {
    if !crypto::is_sealed(&bytes) {
        return Ok(bytes);
    }
    crypto::password_from_environment()
        .and_then(|password| crypto::open(&password, &bytes))
        .map_err(|error| StateError::Sealed {
            path: path.to_path_buf(),
            error,
        })
}

/// The bytes of the file at `path`; `Ok(None)` when it does not exist.
/// `backup` is named in the error when it cannot be read.
pub(crate) fn read_bytes(
    path: &Path,
    backup: Option<PathBuf>,
) -> Result<Option<Vec<u8>>, StateError> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(StateError::Read {
            path: path.to_path_buf(),
            source,
            backup,
        }),
    }
}

/// The largest state read or written.
pub use hub_manifest::limits::max_state_bytes;

/// The text of a state file's bytes (after unsealing), refused past the
/// state limit.
pub(crate) fn state_source(path: &Path, bytes: Vec<u8>) -> Result<SourceFile, StateError> {
    let limit = max_state_bytes();
    if bytes.len() > limit {
        return Err(StateError::TooLarge {
            path: path.to_path_buf(),
            bytes: bytes.len() as u64,
            limit: limit as u64,
            writing: false,
        });
    }
    SourceFile::from_bytes_within(path, bytes, limit).map_err(|e| decode_error(path, e))
}

/// Refuses to write a state of `bytes` bytes (its text, framed, before any
/// compression) that every later command would refuse to read.
pub(crate) fn check_written_size(path: &Path, bytes: usize) -> Result<(), StateError> {
    let limit = max_state_bytes();
    match bytes > limit {
        true => Err(StateError::TooLarge {
            path: path.to_path_buf(),
            bytes: bytes as u64,
            limit: limit as u64,
            writing: true,
        }),
        false => Ok(()),
    }
}

/// Parses the text of a state file; `path` is used in messages only.
pub fn parse(path: &Path, text: &str, warnings: &mut Warnings) -> Result<State, StateError> {
    let source = SourceFile {
        path: path.to_path_buf(),
        text: text.to_string(),
    };
    parse_source(&source, warnings)
}

/// [`parse`] of a file's text as read, without copying it (a state's
/// text is as large as the state).
pub(super) fn parse_source(
    source: &SourceFile,
    warnings: &mut Warnings,
) -> Result<State, StateError> {
    let (path, text) = (source.path.as_path(), source.text.as_str());
    integrity::check(text).map_err(|reason| StateError::Broken {
        path: path.to_path_buf(),
        reason,
        backup: existing_backup(path),
    })?;
    let (state, documents) = match crate::pieces::first_state(source) {
        Some((state, documents)) => (Some(state), documents),
        None => source
            .first_document_sized::<State>(warnings, max_state_bytes())
            .map_err(|e| decode_error(path, e))?,
    };
    let mut state = state.ok_or_else(|| StateError::Empty {
        path: path.to_path_buf(),
        backup: existing_backup(path),
    })?;
    if documents > 1 {
        warnings.warn(
            Some(Location::file(path)),
            "the state file holds more than one YAML document; only the first is read",
        );
    }
    check_document(path, text, &state)?;
    resolve_snapshots(path, &mut state)?;
    Ok(state)
}

fn check_document(path: &Path, text: &str, state: &State) -> Result<(), StateError> {
    let at = |key: &str| {
        let (line, column) = locate(text, &[Segment::Key(key.to_string())]).unwrap_or((1, 1));
        Location::at(path, line, column)
    };
    if state.kind != "state" {
        return Err(StateError::WrongKind {
            location: at("kind"),
            kind: state.kind.clone(),
        });
    }
    if state.version != 1 {
        return Err(StateError::WrongVersion {
            location: at("version"),
            version: state.version,
        });
    }
    for name in state.components.keys() {
        if let Err(error) = hub_manifest::names::check_component_name(name) {
            let entry = [
                Segment::Key("components".to_string()),
                Segment::Key(name.clone()),
            ];
            let (line, column) = locate(text, &entry).unwrap_or((1, 1));
            let location = Location::at(path, line, column);
            return Err(StateError::BadComponentName { location, error });
        }
    }
    Ok(())
}

pub(crate) fn decode_error(path: &Path, error: ManifestError) -> StateError {
    let backup = existing_backup(path);
    match error {
        ManifestError::Yaml {
            location, message, ..
        } => StateError::Yaml {
            location,
            message,
            backup,
        },
        ManifestError::Limit { location, message } => StateError::Limit {
            location,
            message,
            backup,
        },
        ManifestError::Read { source, .. } => StateError::Read {
            path: path.to_path_buf(),
            source,
            backup,
        },
        ManifestError::Gzip { source, .. } => StateError::Damaged {
            path: path.to_path_buf(),
            reason: format!("it looks gzip-compressed but cannot be decompressed ({source})"),
            backup,
        },
        other => StateError::Damaged {
            path: path.to_path_buf(),
            reason: other.to_string(),
            backup,
        },
    }
}

pub(super) fn existing_backup(path: &Path) -> Option<PathBuf> {
    let backup = backup_path(path);
    backup.is_file().then_some(backup)
}

/// The YAML text a state is written as in the reference's layout
/// (canonical order, block style).
pub fn render(state: &State) -> Result<String, StateError> {
    Ok(hub_manifest::emit::document(&yaml_serde::to_value(
        state.canonical(),
    )?))
}

/// The YAML text of `state` in `format`, as a run writes it (long values
/// a component shares with a stack parameter written once, see
/// [`crate::render`]).
pub fn render_as(state: &State, format: StateFormat) -> Result<String, StateError> {
    Renderer::new(format).render(state)
}

/// How much of a state file [`serial_in_head`] looks at: hub writes the
/// serial on its fifth line.
pub(crate) const HEAD_BYTES: usize = 4096;

/// The `serial` of a state file's content that was just read and decoded
/// as a state (so a valid document), from its first lines alone; `None`
/// when they are not hub's head (`version`, `kind`, `timestamp`, then
/// `serial`, each a one-line plain scalar at column 0, comments before),
/// in which case the whole document must be parsed ([`serial_of`]).
///
/// For such a document it is [`serial_of`]'s answer: a line at column 0
/// of a block mapping starts one of its keys (a value spread over lines
/// indents the lines after its first, and none of the values before
/// `serial` can be spread: they hold no quote, bracket or indicator), a
/// valid document has each key once, and the digits are a decimal number
/// (no sign, no leading zero that a reader could take for octal) that
/// fits `u64`, as `serial_of` reads it. Parsing a 50 MB state to find that
/// line took 1.2 GB at 10,000 components.
pub(crate) fn serial_in_head(bytes: &[u8]) -> Option<u64> {
    let head = &bytes[..bytes.len().min(HEAD_BYTES)];
    let mut lines = head.split(|&b| b == b'\n');
    let mut keys = ["version", "kind", "timestamp"].into_iter().peekable();
    loop {
        let line = std::str::from_utf8(lines.next()?).ok()?;
        if line.starts_with('#') {
            continue;
        }
        let (key, value) = line.split_once(": ")?;
        if key == "serial" {
            // The line must be complete: the head may end inside it.
            lines.next()?;
            let plain = value.bytes().all(|b| b.is_ascii_digit())
                && !value.is_empty()
                && (value == "0" || !value.starts_with('0'));
            return plain.then(|| value.parse().ok()).flatten();
        }
        // The keys before `serial` come in this order, each at most once.
        while keys.next_if(|&expected| expected != key).is_some() {}
        keys.next()?;
        let plain = value
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'.' | b'+' | b'_' | b'-'));
        if value.is_empty() || !plain || value.starts_with(['-', ':']) {
            return None;
        }
    }
}

/// The `serial` of a state file's content; 0 when it has none or cannot
/// be read.
pub(crate) fn serial_of(bytes: &[u8]) -> u64 {
    let limit = max_state_bytes();
    let Ok(source) = SourceFile::from_bytes_within(Path::new("state"), bytes.to_vec(), limit)
    else {
        return 0;
    };
    if source.check_limits_within(limit).is_err() {
        return 0;
    }
    let value: yaml_serde::Value = yaml_serde::Deserializer::from_str(&source.text)
        .next()
        .and_then(|document| serde::Deserialize::deserialize(document).ok())
        .unwrap_or(yaml_serde::Value::Null);
    match value.get("serial") {
        Some(yaml_serde::Value::Number(n)) => n.as_u64().unwrap_or(0),
        Some(yaml_serde::Value::String(s)) => s.trim().parse().unwrap_or(0),
        _ => 0,
    }
}
