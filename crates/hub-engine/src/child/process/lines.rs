//! Splitting the child's output into lines, bounded by [`MAX_LINE`].

/// A line longer than this is passed on in pieces of this size, so a child
/// writing without newlines cannot fill hub's memory.
pub const MAX_LINE: usize = 1 << 20;

/// Splits a byte stream into lines: `\n` ends a line, a `\r` before it is
/// dropped, an unfinished last line is given by [`LineSplitter::finish`],
/// and an unfinished line reaching `max` bytes (a child writing without
/// newlines) is passed on in pieces that do not cut a UTF-8 character.
/// `emit` hears each line and whether it is whole (false for a piece that
/// the next one continues).
#[derive(Debug)]
pub struct LineSplitter {
    pending: Vec<u8>,
    max: usize,
}

impl LineSplitter {
    pub fn new(max: usize) -> Self {
        LineSplitter {
            pending: Vec::new(),
            max: max.max(4),
        }
    }

    pub fn feed(&mut self, mut bytes: &[u8], mut emit: impl FnMut(&[u8], bool)) {
        while let Some(end) = bytes.iter().position(|b| *b == b'\n') {
            if self.pending.is_empty() {
                emit(trim_cr(&bytes[..end]), true);
            } else {
                self.pending.extend_from_slice(&bytes[..end]);
                emit(trim_cr(&self.pending), true);
                self.pending.clear();
            }
            bytes = &bytes[end + 1..];
        }
        self.pending.extend_from_slice(bytes);
        while self.pending.len() >= self.max {
            let cut = char_boundary(&self.pending, self.max);
            emit(&self.pending[..cut], false);
            self.pending.drain(..cut);
        }
    }

    /// Passes on the unfinished last line, if any.
    pub fn finish(&mut self, mut emit: impl FnMut(&[u8], bool)) {
        if !self.pending.is_empty() {
            emit(trim_cr(&self.pending), true);
            self.pending.clear();
        }
    }
}

fn trim_cr(line: &[u8]) -> &[u8] {
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// `at`, moved back (at most 3 bytes) so as not to split a UTF-8 sequence.
fn char_boundary(bytes: &[u8], at: usize) -> usize {
    let mut cut = at.min(bytes.len());
    while cut > at.saturating_sub(3) && cut < bytes.len() && bytes[cut] & 0xC0 == 0x80 {
        cut -= 1;
    }
    if cut == 0 {
        at.min(bytes.len())
    } else {
        cut
    }
}
