//! The second file of a fold made from the first: the same state one
//! serial apart, so the same bytes but for the top-level `serial:` line
//! and the frame's last line. Reading the first file back (just written,
//! in the page cache) and digesting it again costs a fraction of a second
//! render, which inflates every component's cached text and digests the
//! stack's parameters again.
//!
//! The bytes are those [`super::with_serial`] makes of the text in
//! memory, framed by [`crate::integrity::frame_into`]: the first
//! `\nserial: FROM\n` of the body (the lines between the frame's first and
//! last) reads `\nserial: TO\n`, and the digest is that of the new body.

use crate::integrity::{self, FramedWriter, BEGIN, LAST_LINE_LEN};
use std::io::{Read, Seek, SeekFrom, Write};

/// How much of the file is read at a time.
const CHUNK: usize = 256 * 1024;

#[cfg(test)]
thread_local! {
    /// [`CHUNK`] for this thread's folds (tests of a serial line that
    /// lies across reads).
    pub(in crate::store) static TEST_CHUNK: std::cell::Cell<Option<usize>> =
        const { std::cell::Cell::new(None) };
}

fn chunk() -> usize {
    #[cfg(test)]
    if let Some(chunk) = TEST_CHUNK.with(|chunk| chunk.get()) {
        return chunk;
    }
    CHUNK
}

/// Writes to `out` the framed state `source` holds (as
/// [`FramedWriter`] wrote it) with its top-level `serial: from` line
/// reading `serial: to`, framed again; returns how many bytes it wrote.
/// `None`, with nothing written, when `source` is not a framed text or
/// has no such line: the caller renders the state instead.
pub(super) fn with_serial(
    source: &mut (impl Read + Seek),
    from: u64,
    to: u64,
    out: &mut dyn Write,
) -> std::io::Result<Option<u64>> {
    let chunk = chunk().max(1);
    let Some((begin, end)) = body_of(source)? else {
        return Ok(None);
    };
    let line = format!("\nserial: {from}\n");
    let Some(at) = find(source, begin, end, line.as_bytes(), chunk)? else {
        return Ok(None);
    };
    let mut framed = FramedWriter::new(out);
    copy(source, begin, at, &mut framed, chunk)?;
    framed.push_bytes(format!("\nserial: {to}\n").as_bytes());
    copy(source, at + line.len() as u64, end, &mut framed, chunk)?;
    framed.finish().map(Some)
}

/// Where the body of the framed text in `source` begins and ends (its
/// last line break included); `None` when the text is not framed.
fn body_of(source: &mut (impl Read + Seek)) -> std::io::Result<Option<(u64, u64)>> {
    let len = source.seek(SeekFrom::End(0))?;
    let begin = BEGIN.len() as u64;
    let Some(end) = len
        .checked_sub(LAST_LINE_LEN as u64)
        .filter(|end| *end >= begin)
    else {
        return Ok(None);
    };
    let mut first = vec![0; BEGIN.len()];
    source.seek(SeekFrom::Start(0))?;
    source.read_exact(&mut first)?;
    // A body that is not empty ends with a line break (the frame adds one).
    let before = usize::from(end > begin);
    let mut last = vec![0; LAST_LINE_LEN + before];
    source.seek(SeekFrom::Start(end - before as u64))?;
    source.read_exact(&mut last)?;
    let framed = first == BEGIN.as_bytes()
        && integrity::is_last_line(&last[before..])
        && (before == 0 || last[0] == b'\n');
    Ok(framed.then_some((begin, end)))
}

/// Where `needle` first lies whole between `begin` and `end` of `source`,
/// read `chunk` bytes at a time.
fn find(
    source: &mut (impl Read + Seek),
    begin: u64,
    end: u64,
    needle: &[u8],
    chunk: usize,
) -> std::io::Result<Option<u64>> {
    source.seek(SeekFrom::Start(begin))?;
    // The bytes read and not yet ruled out, from `window_at` on: a needle
    // may begin in one read and end in the next.
    let mut window: Vec<u8> = Vec::with_capacity(chunk + needle.len());
    let mut window_at = begin;
    let mut left = end - begin;
    while left > 0 {
        let start = window.len();
        let want = chunk.min(usize::try_from(left).unwrap_or(chunk));
        window.resize(start + want, 0);
        source.read_exact(&mut window[start..])?;
        left -= want as u64;
        if let Some(at) = window.windows(needle.len()).position(|w| w == needle) {
            return Ok(Some(window_at + at as u64));
        }
        let kept = window.len().min(needle.len() - 1);
        let ruled_out = window.len() - kept;
        window.drain(..ruled_out);
        window_at += ruled_out as u64;
    }
    Ok(None)
}

/// Writes the bytes from `from` to `to` of `source` into the body of
/// `framed`, `chunk` bytes at a time.
fn copy<W: Write>(
    source: &mut (impl Read + Seek),
    from: u64,
    to: u64,
    framed: &mut FramedWriter<W>,
    chunk: usize,
) -> std::io::Result<()> {
    source.seek(SeekFrom::Start(from))?;
    let mut buffer = vec![0; chunk.min(usize::try_from(to - from).unwrap_or(chunk))];
    let mut left = to - from;
    while left > 0 {
        let want = buffer
            .len()
            .min(usize::try_from(left).unwrap_or(buffer.len()));
        source.read_exact(&mut buffer[..want])?;
        framed.push_bytes(&buffer[..want]);
        left -= want as u64;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::integrity::framed;
    use std::io::Cursor;

    /// What [`with_serial`] writes for `text`, read `chunk` bytes at a
    /// time.
    fn reframed(text: &str, from: u64, to: u64, chunk: usize) -> Option<String> {
        TEST_CHUNK.with(|c| c.set(Some(chunk)));
        let mut out = Vec::new();
        let written = with_serial(&mut Cursor::new(text.as_bytes()), from, to, &mut out);
        TEST_CHUNK.with(|c| c.set(None));
        let written = written.expect("read");
        match written {
            Some(len) => assert_eq!(len, out.len() as u64),
            None => assert!(out.is_empty(), "written before falling back"),
        }
        written.map(|_| String::from_utf8(out).expect("text"))
    }

    /// The framed text `body` with its serial line changed in memory.
    fn expected(body: &str, from: u64, to: u64) -> String {
        let mut moved = String::new();
        assert!(super::super::with_serial(body, from, to, &mut moved));
        framed(&moved)
    }

    #[test]
    fn the_second_file_is_the_first_with_its_serial_and_digest_changed() {
        let far = format!("version: 1\nnote: {}\nserial: 9\na: é\n", "x".repeat(3000));
        let bodies = [
            "version: 1\nkind: state\nserial: 9\ncomponents:\n  a: {}\n".to_string(),
            // A serial line that lies past the first reads, and one at
            // the very end.
            far,
            "version: 1\nserial: 9\n".to_string(),
            // A body without a last line break: the frame added one.
            "version: 1\nserial: 9\nserial: 9".to_string(),
        ];
        for body in &bodies {
            for (from, to) in [(9, 10), (10, 9)] {
                let body = &body.replace("serial: 9", &format!("serial: {from}"));
                let want = expected(body, from, to);
                for chunk in [1, 2, 5, 13, 64, 1000, CHUNK] {
                    let got = reframed(&framed(body), from, to, chunk);
                    assert_eq!(got.as_deref(), Some(want.as_str()), "chunk {chunk}");
                    assert_eq!(integrity::check(&want), Ok(()));
                }
            }
        }
    }

    #[test]
    fn a_text_without_the_serial_line_or_the_frame_is_left_to_a_render() {
        let body = "version: 1\nkind: state\nserial: 9\n";
        for chunk in [1, 7, CHUNK] {
            // No such serial, or the line not whole.
            assert_eq!(reframed(&framed(body), 8, 9, chunk), None);
            assert_eq!(reframed(&framed("serial: 9\n"), 9, 10, chunk), None);
            // The line break the frame added ends the line: the text
            // a render at the other serial is framed as.
            let got = reframed(&framed("a: 1\nserial: 9"), 9, 10, chunk);
            assert_eq!(got, Some(framed("a: 1\nserial: 10")));
            // Not framed, or cut.
            assert_eq!(reframed(body, 9, 10, chunk), None);
            let whole = framed(body);
            for cut in [0, 10, whole.len() - 1] {
                assert_eq!(reframed(&whole[..cut], 9, 10, chunk), None, "cut {cut}");
            }
            assert_eq!(reframed(&format!("{whole}x\n"), 9, 10, chunk), None);
        }
    }
}
