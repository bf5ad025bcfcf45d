//! The two comment lines that frame every state hub writes, so that a cut
//! or changed copy is recognised before it is trusted.
//!
//! A state cut at a line break (a copy or download that stopped, a full
//! disk in another tool) is still valid YAML: read as it is, it silently
//! lacks the components and history that followed the cut, and the next
//! write would make that the state. So hub's states begin with [`BEGIN`]
//! and end with `# hub-state-end sha256=<hex>`, the SHA-256 of every byte
//! before that line. Both are YAML comments: other readers (the reference
//! tool among them) see the same document.
//!
//! A text that begins with the first line was written by hub and must end
//! with a matching last line. A text without it (written by the reference
//! tool, by an earlier hub, or edited by hand with both lines removed) is
//! read as before. The lines frame the plain YAML: a compressed state has
//! them inside its gzip stream, an encrypted one inside its ciphertext.

use sha2::{Digest, Sha256};

/// The first line of every state hub writes.
pub const BEGIN: &str = "# hub-state: the last line holds the SHA-256 of the lines before it\n";
/// What [`BEGIN`] is recognised by (a text cut inside it is not a state).
const BEGIN_MARK: &str = "# hub-state:";
/// The start of the last line; the digest in hexadecimal follows.
const END_MARK: &str = "# hub-state-end sha256=";
const DIGEST_HEX: usize = 64;
/// The length of the last line of a framed text.
pub(crate) const LAST_LINE_LEN: usize = END_MARK.len() + DIGEST_HEX + 1;

/// Whether `line` is the last line of a framed text (its digest not
/// checked).
pub(crate) fn is_last_line(line: &[u8]) -> bool {
    line.len() == LAST_LINE_LEN && line.starts_with(END_MARK.as_bytes()) && line.ends_with(b"\n")
}

/// Why a framed state cannot be trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Broken {
    #[error("it ends before the line hub writes last (`{}…`): the file was cut short (a copy or download that did not finish, a full disk)", END_MARK.trim_end_matches('='))]
    Cut,
    #[error("its content does not match the SHA-256 on its last line: it was changed or damaged after hub wrote it")]
    Digest,
    #[error("text follows the line hub writes last (line {line}): something was appended to it")]
    Trailing { line: usize },
}

/// `body` (a state's YAML) between the two lines, in `out` (cleared
/// first).
pub fn frame_into(body: &str, out: &mut String) {
    out.clear();
    out.reserve(BEGIN.len() + body.len() + END_MARK.len() + DIGEST_HEX + 2);
    out.push_str(BEGIN);
    out.push_str(body);
    if !body.is_empty() && !body.ends_with('\n') {
        out.push('\n');
    }
    let digest = hex(&Sha256::digest(out.as_bytes()));
    out.push_str(END_MARK);
    out.push_str(&digest);
    out.push('\n');
}

/// Writes a state's text between the two lines as it comes, to a file
/// being written: the same bytes as [`frame_into`], the digest computed on
/// the way, so that the text is never held whole. The first error of
/// `out` is kept and returned by [`FramedWriter::finish`].
pub(crate) struct FramedWriter<W: std::io::Write> {
    out: W,
    hash: Sha256,
    /// Bytes written, the last line included.
    written: u64,
    /// The body so far is empty, or ends with a line break.
    body_empty: bool,
    body_ends_line: bool,
    error: Option<std::io::Error>,
}

impl<W: std::io::Write> FramedWriter<W> {
    pub(crate) fn new(out: W) -> FramedWriter<W> {
        let mut framed = FramedWriter {
            out,
            hash: Sha256::new(),
            written: 0,
            body_empty: true,
            body_ends_line: false,
            error: None,
        };
        framed.write(BEGIN.as_bytes(), true);
        framed
    }

    fn write(&mut self, bytes: &[u8], hashed: bool) {
        if self.error.is_some() {
            return;
        }
        if hashed {
            self.hash.update(bytes);
        }
        match self.out.write_all(bytes) {
            Ok(()) => self.written += bytes.len() as u64,
            Err(error) => self.error = Some(error),
        }
    }

    /// Writes `bytes` of the body (a text's bytes, cut anywhere).
    pub(crate) fn push_bytes(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        self.body_empty = false;
        self.body_ends_line = bytes.ends_with(b"\n");
        self.write(bytes, true);
    }

    /// Writes the last line; returns how many bytes were written in all.
    pub(crate) fn finish(mut self) -> std::io::Result<u64> {
        if !self.body_empty && !self.body_ends_line {
            self.write(b"\n", true);
        }
        let digest = hex(&std::mem::take(&mut self.hash).finalize());
        self.write(END_MARK.as_bytes(), false);
        self.write(digest.as_bytes(), false);
        self.write(b"\n", false);
        match self.error.take() {
            Some(error) => Err(error),
            None => self.out.flush().map(|()| self.written),
        }
    }
}

impl<W: std::io::Write> crate::sink::Sink for FramedWriter<W> {
    /// Nothing is taken back from a file: a render starts with an empty
    /// body.
    fn clear(&mut self) {
        debug_assert!(self.body_empty, "a framed file is rendered once");
    }

    fn push_str(&mut self, text: &str) {
        self.push_bytes(text.as_bytes());
    }
}

/// `body` between the two lines, framed where it is: the same text as
/// [`frame_into`] writes, without a second copy of a large state.
pub fn frame_in_place(body: &mut String) {
    let newline = !body.is_empty() && !body.ends_with('\n');
    body.reserve(BEGIN.len() + END_MARK.len() + DIGEST_HEX + 2);
    body.insert_str(0, BEGIN);
    if newline {
        body.push('\n');
    }
    let digest = hex(&Sha256::digest(body.as_bytes()));
    body.push_str(END_MARK);
    body.push_str(&digest);
    body.push('\n');
}

/// `body` between the two lines.
pub fn framed(body: &str) -> String {
    let mut out = String::new();
    frame_into(body, &mut out);
    out
}

/// Whether a state's text begins with hub's first line.
pub fn is_framed(text: &str) -> bool {
    text.starts_with(BEGIN_MARK)
}

/// Checks a state's text: a framed one must end with its last line, whose
/// digest must match; an unframed one passes.
pub fn check(text: &str) -> Result<(), Broken> {
    let end = text.rfind(&format!("\n{END_MARK}")).map(|at| at + 1);
    let Some(end) = end else {
        return match is_framed(text) {
            true => Err(Broken::Cut),
            false => Ok(()),
        };
    };
    let last = &text[end..];
    let digest = &last[END_MARK.len()..];
    match digest.find('\n') {
        Some(newline) if newline + 1 < digest.len() => {
            let line = text[..end].matches('\n').count() + 2;
            return Err(Broken::Trailing { line });
        }
        Some(DIGEST_HEX) => {}
        _ => return Err(Broken::Cut),
    }
    match hex(&Sha256::digest(&text.as_bytes()[..end])) == digest[..DIGEST_HEX] {
        true => Ok(()),
        false => Err(Broken::Digest),
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(64), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BODY: &str =
        "version: 1\nkind: state\nserial: 3\ncomponents:\n  a:\n    status: deployed\n";

    #[test]
    fn a_framed_writer_writes_the_same_bytes() {
        use crate::sink::Sink;
        for parts in [
            &[][..],
            &[""][..],
            &["a: 1\n"][..],
            &["a: 1\n", "b:", " 2"][..],
            &["a: 1", "", "\n"][..],
        ] {
            let mut out = Vec::new();
            let mut writer = FramedWriter::new(&mut out);
            for part in parts {
                writer.push_str(part);
            }
            let written = writer.finish().expect("written");
            let expected = framed(&parts.concat());
            assert_eq!(String::from_utf8(out).expect("text"), expected);
            assert_eq!(written, expected.len() as u64);
        }
    }

    #[test]
    fn framing_in_place_writes_the_same_text() {
        for body in [BODY, "a: 1", ""] {
            let mut text = body.to_string();
            frame_in_place(&mut text);
            assert_eq!(text, framed(body));
        }
    }

    #[test]
    fn a_framed_state_passes_and_is_the_same_yaml() {
        let text = framed(BODY);
        assert!(text.starts_with(BEGIN) && text.ends_with('\n'), "{text}");
        assert_eq!(check(&text), Ok(()));
        let read: yaml_serde::Value = yaml_serde::from_str(&text).expect("yaml");
        let plain: yaml_serde::Value = yaml_serde::from_str(BODY).expect("yaml");
        assert_eq!(read, plain);
    }

    #[test]
    fn an_unframed_state_passes() {
        assert_eq!(check(BODY), Ok(()));
        assert_eq!(check(""), Ok(()));
    }

    #[test]
    fn every_cut_of_a_framed_state_is_refused() {
        let text = framed(BODY);
        for length in BEGIN_MARK.len()..text.len() {
            let cut = &text[..length];
            assert!(check(cut).is_err(), "a cut at {length} passed: {cut:?}");
        }
    }

    #[test]
    fn a_changed_byte_is_refused() {
        let text = framed(BODY).replace("deployed", "deploying");
        assert_eq!(check(&text), Err(Broken::Digest));
        let without_first_line = framed(BODY)[BEGIN.len()..].to_string();
        assert_eq!(check(&without_first_line), Err(Broken::Digest));
    }

    #[test]
    fn text_after_the_last_line_is_refused() {
        let text = format!("{}extra: 1\n", framed(BODY));
        assert_eq!(check(&text), Err(Broken::Trailing { line: 9 }));
    }

    #[test]
    fn the_marks_inside_values_do_not_count() {
        let body = "version: 1\nkind: state\nmessage: |-\n  # hub-state-end sha256=00\n";
        assert_eq!(check(&framed(body)), Ok(()));
    }
}
