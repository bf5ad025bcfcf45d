//! Writing the elaborated multi-document file.

use super::{Elaborated, Manifest};
use std::io::Write;
use std::path::Path;

/// `---` + stack document, then `---` + each component document.
pub fn render_elaborated(elaborated: &Elaborated) -> Result<String, yaml_serde::Error> {
    render_elaborated_with(elaborated, None)
}

/// [`render_elaborated`] with the command that elaborated the stack
/// recorded in the provenance header (at the top of the stack document,
/// as YAML comments).
pub fn render_elaborated_with(
    elaborated: &Elaborated,
    command: Option<&[String]>,
) -> Result<String, yaml_serde::Error> {
    let mut out = String::new();
    for (number, doc) in std::iter::once(&elaborated.stack)
        .chain(&elaborated.components)
        .enumerate()
    {
        out.push_str("---\n");
        if number == 0 {
            out.push_str(&elaborated.provenance.header(command));
        }
        push_document(&mut out, doc)?;
    }
    Ok(out)
}

/// One document, without its `---`, written with [`super::emit`], so that
/// strings a YAML 1.1 reader (the reference tool) would take for booleans or
/// numbers stay strings. Its long lists are written an item at a time
/// ([`streamed`]), the rest as one value, in the same text as
/// `emit::document` of the whole document's value.
fn push_document(out: &mut String, doc: &Manifest) -> Result<(), yaml_serde::Error> {
    super::streamed::document(doc, &["components", "parameters"], out)
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder,
/// flushed to disk, then renamed over the target.
pub fn write_output(path: &Path, bytes: &[u8], compressed: bool) -> std::io::Result<()> {
    write_file(path, bytes, compressed, None)
}

/// [`write_output`], created with mode 0600 whatever the umask when
/// `private` (an elaborated file holding secrets).
pub fn write_output_as(
    path: &Path,
    bytes: &[u8],
    compressed: bool,
    private: bool,
) -> std::io::Result<()> {
    let mode = private.then_some(crate::private::FILE_MODE);
    write_file(path, bytes, compressed, mode)
}

/// [`write_output`] for a file only its owner may read (a run report):
/// created with mode 0600 whatever the umask. Written for people
/// (comments, reports, saved plans): masked ([`crate::masked`]).
pub fn write_private_output(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let bytes = crate::masked::bytes(bytes);
    write_file(path, &bytes, false, Some(crate::private::FILE_MODE))
}

fn write_file(
    path: &Path,
    bytes: &[u8],
    compressed: bool,
    mode: Option<u32>,
) -> std::io::Result<()> {
    let data = if compressed {
        gzip(bytes)?
    } else {
        bytes.to_vec()
    };
    // A device or a pipe (`-o /dev/null`) is written to, never replaced.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        return std::fs::OpenOptions::new()
            .write(true)
            .open(path)?
            .write_all(&data);
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let temp = dir.join(format!(".{file_name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = match mode {
            Some(mode) => {
                let options = &mut std::fs::File::options();
                crate::private::open(&temp, options.write(true).create_new(true), mode)?
            }
            None => std::fs::File::create(&temp)?,
        };
        file.write_all(&data)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}

fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes)?;
    encoder.finish()
}
