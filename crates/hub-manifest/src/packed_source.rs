//! A file's text kept deflated while nothing reads it.
//!
//! A run reads the elaborated file's text to point at a declaration when
//! it has something to report (a parameter that does not expand, an
//! output that does not match its declaration): rarely, once its
//! parameters are locked. The text (28 MB at 10,000 components) is kept
//! deflated at the fastest level, a tenth of its room or less, and
//! inflated once, the first time it is asked for (see
//! `hub_plan::source::stack::Stack::pack_source`).

use crate::SourceFile;
use flate2::read::DeflateDecoder;
use flate2::write::DeflateEncoder;
use flate2::Compression;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A UTF-8 text kept deflated at the fastest level (YAML whose keys and
/// names repeat takes a fifth to a tenth of its room).
#[derive(Debug, Clone)]
pub struct DeflatedText {
    bytes: Box<[u8]>,
    /// The text's length, to inflate it into a string of the right room.
    len: usize,
}

impl DeflatedText {
    /// `text`, deflated; `Err(text)` when deflating does not make it
    /// smaller.
    pub fn new(text: String) -> Result<DeflatedText, String> {
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::fast());
        let deflated = encoder
            .write_all(text.as_bytes())
            .and_then(|()| encoder.finish());
        match deflated {
            Ok(bytes) if bytes.len() < text.len() => Ok(DeflatedText {
                bytes: bytes.into_boxed_slice(),
                len: text.len(),
            }),
            _ => Err(text),
        }
    }

    /// The text, inflated.
    pub fn inflate(&self) -> String {
        let mut text = String::with_capacity(self.len);
        // The bytes are the UTF-8 text `new` deflated, held in memory
        // since: they inflate back to it.
        DeflateDecoder::new(&self.bytes[..])
            .read_to_string(&mut text)
            .expect("a text deflated in memory inflates again");
        text
    }

    /// The bytes it holds.
    pub fn packed_len(&self) -> usize {
        self.bytes.len()
    }
}

/// A [`SourceFile`] whose text is deflated until it is read.
#[derive(Debug, Clone)]
pub struct PackedSource {
    path: PathBuf,
    text: DeflatedText,
    /// The file, once inflated.
    inflated: OnceLock<SourceFile>,
}

impl PackedSource {
    /// `file`, deflated; `Err(file)` when deflating does not make it
    /// smaller.
    pub fn new(file: SourceFile) -> Result<PackedSource, SourceFile> {
        let SourceFile { path, text } = file;
        match DeflatedText::new(text) {
            Ok(text) => Ok(PackedSource {
                path,
                text,
                inflated: OnceLock::new(),
            }),
            Err(text) => Err(SourceFile { path, text }),
        }
    }

    /// The file, inflated the first time it is asked for and kept.
    pub fn file(&self) -> &SourceFile {
        self.inflated.get_or_init(|| SourceFile {
            path: self.path.clone(),
            text: self.text.inflate(),
        })
    }

    /// Whether the text was inflated since it was packed.
    pub fn is_inflated(&self) -> bool {
        self.inflated.get().is_some()
    }

    /// The bytes it holds while packed.
    pub fn packed_len(&self) -> usize {
        self.text.packed_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packed_text_is_smaller_and_reads_back_the_same() {
        let text: String = (0..2000)
            .map(|i| format!("- name: c{i}\n  value: v{}\n", i % 7))
            .collect();
        let file = SourceFile {
            path: PathBuf::from("/s/hub.yaml.elaborate"),
            text: text.clone(),
        };
        let packed = PackedSource::new(file).expect("repetitive text deflates");
        assert!(packed.packed_len() * 5 < text.len());
        assert!(!packed.is_inflated());
        assert_eq!(packed.file().text, text);
        assert_eq!(packed.file().path, PathBuf::from("/s/hub.yaml.elaborate"));
        assert!(packed.is_inflated());
    }

    #[test]
    fn a_text_that_does_not_deflate_is_given_back() {
        let file = SourceFile {
            path: PathBuf::from("x"),
            text: "a".into(),
        };
        let back = PackedSource::new(file).expect_err("one byte does not get smaller");
        assert_eq!(back.text, "a");
    }
}
