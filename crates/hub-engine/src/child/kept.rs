//! What hub keeps in memory of a component's stdout while it streams the
//! rest to the terminal and the log file: the `Outputs:` blocks (for
//! [`capture::parse_outputs`](super::capture::parse_outputs)) and the last
//! lines of stdout and stderr as shown (for the state's log when the
//! component fails, and for `lifecycle.retry` patterns: Terraform, the AWS
//! CLI and kubectl print their transient errors on stderr). Both are bounded,
//! so a component printing a 5 GB line or 50 GB in all leaves hub's memory
//! flat.
//!
//! The blocks are found line by line with the same reading as
//! `parse_outputs` (a marker line, blank lines skipped, the block up to the
//! first blank line) and kept as text that `parse_outputs` reads to the
//! same raw outputs.

use super::capture::{BlockLine, Blocks};
use hub_plan::outcome::lines::shorten;
use std::collections::VecDeque;

/// The most bytes of `Outputs:` blocks kept; lines past it are not
/// captured (with a note).
pub(crate) const MAX_KEPT_OUTPUTS: usize = 16 << 20;
/// The most bytes of the last lines kept for a failure's log.
pub(crate) const MAX_KEPT_TAIL: usize = 64 << 10;
/// The most bytes of one line of that tail.
pub(crate) const MAX_TAIL_LINE: usize = 4 << 10;

/// Fed every stdout line (or piece of a line longer than the line limit).
#[derive(Debug, Default)]
pub struct KeptStdout {
    blocks: String,
    blocks_seen: Blocks,
    /// The previous piece was cut from a longer line: this one continues it.
    continuing: bool,
    /// The same for stderr, whose lines are kept in the tail only.
    stderr_continuing: bool,
    tail: VecDeque<String>,
    tail_bytes: usize,
    tail_omitted: usize,
    cut_in_blocks: usize,
    dropped_from_blocks: usize,
}

/// What was kept when the stdout ended.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Kept {
    /// The `Outputs:` blocks, unmasked. Never print them as they are.
    pub blocks: String,
    /// The last lines as they were shown (masked when fed with
    /// [`KeptStdout::line_shown`]), with a first line saying how many were
    /// left out before them.
    pub tail: String,
    /// What the run should be told: lines cut or not captured.
    pub notes: Vec<String>,
}

impl KeptStdout {
    /// One line; `whole` is false for a piece cut from a longer line (the
    /// next piece continues it).
    pub fn line(&mut self, line: &str, whole: bool) {
        self.line_shown(line, line, whole);
    }

    /// [`KeptStdout::line`] for a line shown masked as `shown`: the
    /// blocks keep the raw line, the tail what was shown.
    pub fn line_shown(&mut self, line: &str, shown: &str, whole: bool) {
        self.keep_in_tail(shown, self.continuing);
        if !self.continuing {
            self.keep_in_blocks(line, whole);
        }
        self.continuing = !whole;
    }

    /// A stderr line (or piece of one) as it was shown: it goes to the
    /// tail, in the order the lines came, never to the blocks.
    pub fn stderr_shown(&mut self, shown: &str, whole: bool) {
        self.keep_in_tail(shown, self.stderr_continuing);
        self.stderr_continuing = !whole;
    }

    fn keep_in_blocks(&mut self, line: &str, whole: bool) {
        match self.blocks_seen.step(line) {
            BlockLine::Marker => self.push_block("Outputs:"),
            BlockLine::End => self.push_block(""),
            BlockLine::Entry | BlockLine::Continued => {
                self.push_block(line);
                if !whole {
                    self.cut_in_blocks += 1;
                }
            }
            BlockLine::Outside | BlockLine::Leading => {}
        }
    }

    fn push_block(&mut self, line: &str) {
        let ends_in_cr = usize::from(line.ends_with('\r'));
        if self.blocks.len() + line.len() + ends_in_cr + 1 > MAX_KEPT_OUTPUTS {
            self.dropped_from_blocks += 1;
            return;
        }
        self.blocks.push_str(line);
        // The stream dropped one `\r` at the line's end, and so does the
        // reading of these blocks: one more keeps a `\r` the line still
        // ends with.
        if ends_in_cr == 1 {
            self.blocks.push('\r');
        }
        self.blocks.push('\n');
    }

    fn keep_in_tail(&mut self, line: &str, continuing: bool) {
        if continuing {
            return; // the start of the line is shown; the rest is in the log
        }
        let shown = shorten(line, MAX_TAIL_LINE);
        self.tail_bytes += shown.len() + 1;
        self.tail.push_back(shown);
        while self.tail_bytes > MAX_KEPT_TAIL && self.tail.len() > 1 {
            if let Some(old) = self.tail.pop_front() {
                self.tail_bytes -= old.len() + 1;
                self.tail_omitted += 1;
            }
        }
    }

    pub fn finish(self) -> Kept {
        let mut notes = Vec::new();
        if self.cut_in_blocks > 0 {
            notes.push(format!(
                "{} line(s) of its `Outputs:` blocks were longer than {} MiB; only their first {} MiB were captured",
                self.cut_in_blocks,
                super::process::MAX_LINE >> 20,
                super::process::MAX_LINE >> 20,
            ));
        }
        if self.dropped_from_blocks > 0 {
            notes.push(format!(
                "its `Outputs:` blocks exceed {} MiB; {} line(s) past that were not captured",
                MAX_KEPT_OUTPUTS >> 20,
                self.dropped_from_blocks
            ));
        }
        let mut tail = String::new();
        if self.tail_omitted > 0 {
            tail.push_str(&format!(
                "({} earlier line(s) left out; the component's log file has them all)\n",
                self.tail_omitted
            ));
        }
        for line in self.tail {
            tail.push_str(&line);
            tail.push('\n');
        }
        Kept {
            blocks: self.blocks,
            tail,
            notes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::capture::parse_outputs;
    use super::*;

    fn kept(text: &str) -> Kept {
        let mut keeper = KeptStdout::default();
        for line in text.split('\n') {
            keeper.line(line, true);
        }
        keeper.finish()
    }

    #[test]
    fn the_kept_blocks_read_to_the_same_outputs_as_the_whole_stdout() {
        let stdout = "noise\nOutputs:\n\n\na = 1\nb=\"two\"\n\nmore noise\nOutputs:  \r\nc = 3\n  \nd = 4\nOutputs:\ne = 5";
        let kept = kept(stdout);
        assert_eq!(parse_outputs(&kept.blocks), parse_outputs(stdout));
        assert!(!kept.blocks.contains("noise"));
        assert!(kept.notes.is_empty());
    }

    /// Found by the `capture` fuzz target: a heredoc value whose lines end
    /// in CRLF read one `\r` longer from the whole text than from the
    /// stream, which drops the `\r` of a line's end.
    #[test]
    fn crlf_lines_in_a_multi_line_value_read_the_same_whole_and_streamed() {
        let stdout = "Outputs:\r\ncert = <<EOT\r\na\r\n\r\r\r\n\x0c\r\r\nEOT\r\nk = v\r\n\r\nnoise";
        let mut keeper = KeptStdout::default();
        let mut lines = super::super::process::LineSplitter::new(1 << 20);
        for chunk in stdout.as_bytes().chunks(7) {
            lines.feed(chunk, |line, whole| {
                keeper.line(&String::from_utf8_lossy(line), whole)
            });
        }
        lines.finish(|line, whole| keeper.line(&String::from_utf8_lossy(line), whole));
        let streamed = parse_outputs(&keeper.finish().blocks);
        assert_eq!(streamed, parse_outputs(stdout));
        assert_eq!(streamed["cert"], "a\n\r\n\x0c");
        assert_eq!(streamed["k"], "v");
    }

    #[test]
    fn terraform_values_with_blank_lines_are_kept_whole() {
        let stdout =
            "Outputs:\n\ncert = <<EOT\na\n\nOutputs:\nb\nEOT\nlist = [\n  \"x\",\n]\n\nnoise\n";
        let kept = kept(stdout);
        assert_eq!(parse_outputs(&kept.blocks), parse_outputs(stdout));
        assert_eq!(parse_outputs(stdout)["cert"], "a\n\nOutputs:\nb");
        assert_eq!(parse_outputs(stdout)["list"], r#"["x"]"#);
        assert!(!kept.blocks.contains("noise"));
    }

    #[test]
    fn a_cut_line_in_a_block_keeps_its_first_piece_with_a_note() {
        let mut keeper = KeptStdout::default();
        keeper.line("Outputs:", true);
        keeper.line("big = aaaa", false);
        keeper.line("aaaa", false);
        keeper.line("aa", true);
        keeper.line("small = 1", true);
        let kept = keeper.finish();
        let raw = parse_outputs(&kept.blocks);
        assert_eq!(raw["big"], "aaaa");
        assert_eq!(raw["small"], "1");
        assert_eq!(kept.notes.len(), 1, "{:?}", kept.notes);
        assert!(kept.notes[0].contains("only their first 1 MiB"));
    }

    #[test]
    fn blocks_stop_growing_at_their_limit() {
        let mut keeper = KeptStdout::default();
        keeper.line("Outputs:", true);
        let line = format!("k = {}", "v".repeat(1 << 20));
        for _ in 0..20 {
            keeper.line(&line, true);
        }
        let kept = keeper.finish();
        assert!(kept.blocks.len() <= MAX_KEPT_OUTPUTS);
        assert!(kept.notes[0].contains("exceed 16 MiB"), "{:?}", kept.notes);
    }

    #[test]
    fn the_tail_keeps_the_last_lines_within_its_limit() {
        let mut keeper = KeptStdout::default();
        for i in 0..100_000 {
            keeper.line(&format!("line {i}"), true);
        }
        keeper.line(&"x".repeat(100_000), true);
        let kept = keeper.finish();
        assert!(
            kept.tail.len() <= MAX_KEPT_TAIL + 200,
            "{}",
            kept.tail.len()
        );
        assert!(kept.tail.starts_with('('));
        assert!(kept.tail.contains("line 99999\n"));
        assert!(kept
            .tail
            .ends_with(&format!("… ({} more bytes)\n", 100_000 - MAX_TAIL_LINE)));
    }
}
