//! Where a component's output lines go: the console (each line whole,
//! labelled) or memory; and [`shorten`], which cuts a long line for
//! display.

use std::io::{self, Write};
use std::sync::Mutex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Where a component's output lines go. Every line is already masked.
pub trait LineSink: Send + Sync {
    /// One line of the child's output, without its line break.
    fn line(&self, label: &str, stream: Stream, line: &str);

    /// A message of hub's own about the run (signal forwarded, killed,
    /// log file failing). Dropped unless the sink shows it.
    fn note(&self, label: &str, message: &str) {
        let _ = (label, message);
    }
}

/// Prints `label | line` to hub's stdout or stderr (the stream the child
/// used), and notes as `hub: label: message` to stderr. Each line is
/// written whole under one lock shared by both streams, so lines of
/// concurrent runs never mix.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConsoleSink;

static CONSOLE: Mutex<()> = Mutex::new(());

impl ConsoleSink {
    fn write(stream: Stream, text: &str) {
        let _guard = CONSOLE
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // A closed stdout (`hub ... | head`) must not stop the run.
        let _ = match stream {
            Stream::Stdout => {
                let mut out = io::stdout().lock();
                out.write_all(text.as_bytes()).and_then(|_| out.flush())
            }
            Stream::Stderr => io::stderr().lock().write_all(text.as_bytes()),
        };
    }
}

impl LineSink for ConsoleSink {
    fn line(&self, label: &str, stream: Stream, line: &str) {
        ConsoleSink::write(stream, &console_line(label, line));
    }

    fn note(&self, label: &str, message: &str) {
        ConsoleSink::write(Stream::Stderr, &format!("hub: {label}: {message}\n"));
    }
}

/// `label | line` plus the line break; the bare line when there is no
/// label.
pub fn console_line(label: &str, line: &str) -> String {
    match (label.is_empty(), line.is_empty()) {
        (true, _) => format!("{line}\n"),
        (false, true) => format!("{label} |\n"),
        (false, false) => format!("{label} | {line}\n"),
    }
}

/// Keeps lines and notes in memory, for tests and for callers that show
/// output their own way.
#[derive(Debug, Default)]
pub struct MemorySink {
    lines: Mutex<Vec<(Stream, String)>>,
    notes: Mutex<Vec<String>>,
}

impl MemorySink {
    pub fn lines(&self) -> Vec<(Stream, String)> {
        self.lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    pub fn notes(&self) -> Vec<String> {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

impl LineSink for MemorySink {
    fn line(&self, _label: &str, stream: Stream, line: &str) {
        let mut lines = self
            .lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        lines.push((stream, line.to_string()));
    }

    fn note(&self, _label: &str, message: &str) {
        let mut notes = self
            .notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        notes.push(message.to_string());
    }
}

/// `line`, cut to at most `max` bytes (at a character boundary) with a
/// mark of how much was left out.
pub fn shorten(line: &str, max: usize) -> String {
    if line.len() <= max {
        return line.to_string();
    }
    let mut cut = max;
    while !line.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{} … ({} more bytes)", &line[..cut], line.len() - cut)
}
