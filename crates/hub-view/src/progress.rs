//! What a run shows while components run, besides their output lines.
//!
//! [`Recorder`] passes every line on and, in a parallel run, keeps the
//! last lines of each component so that a failed component's output can
//! be shown again at the end, where it is not mixed with the others'.
//! [`Progress`] hears when components start and end: plain lines (the
//! default) or a live status line per running component on a terminal
//! ([`TerminalProgress`]).

use super::summary::Outcome;
use crate::child::kept::shorten;
use crate::child::process::{LineSink, Stream};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// The most bytes of a component's last line shown in its status line.
const STATUS_LINE: usize = 512;

pub use crate::outcome::{finish_line, Progress, Recorder, KEPT_LINES};

/// A live status line per running component on a terminal (spinner,
/// name, elapsed time, last output line), under the output lines, which
/// are printed above it whole.
pub struct TerminalProgress {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl Default for TerminalProgress {
    fn default() -> Self {
        TerminalProgress {
            multi: MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
            bars: Mutex::new(HashMap::new()),
        }
    }
}

impl TerminalProgress {
    /// A line of hub's own, above the status lines.
    pub fn println(&self, line: &str) {
        self.multi.suspend(|| hub_manifest::console::err_line(line));
    }

    fn bar(&self, component: &str) -> Option<ProgressBar> {
        let bars = self
            .bars
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        bars.get(component).cloned()
    }
}

impl LineSink for TerminalProgress {
    fn line(&self, label: &str, stream: Stream, line: &str) {
        self.multi
            .suspend(|| crate::child::process::ConsoleSink.line(label, stream, line));
        if let Some(bar) = self.bar(label) {
            bar.set_message(shorten(line, STATUS_LINE));
        }
    }

    fn note(&self, label: &str, message: &str) {
        self.multi
            .suspend(|| crate::child::process::ConsoleSink.note(label, message));
    }
}

impl Progress for TerminalProgress {
    fn started(&self, component: &str) {
        let bar = self.multi.add(ProgressBar::new_spinner());
        let style =
            ProgressStyle::with_template("{spinner} {prefix:.bold} {elapsed:>4} {wide_msg:.dim}")
                .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_prefix(component.to_string());
        bar.enable_steady_tick(Duration::from_millis(120));
        let mut bars = self
            .bars
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        bars.insert(component.to_string(), bar);
    }

    fn ended(&self, component: &str, outcome: &Outcome, took: Duration) {
        let bar = {
            let mut bars = self
                .bars
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            bars.remove(component)
        };
        if let Some(bar) = bar {
            bar.finish_and_clear();
            self.multi.remove(&bar);
        }
        self.println(&finish_line(component, outcome, took));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::child::process::MemorySink;

    #[test]
    fn keeps_the_last_lines_of_each_component() {
        let memory = MemorySink::default();
        let recorder = Recorder::new(&memory, true);
        for i in 0..KEPT_LINES + 2 {
            recorder.line("a", Stream::Stdout, &format!("line {i}"));
        }
        recorder.line("b", Stream::Stderr, "only");
        let logs = recorder.failed_logs(&["a".into(), "c".into()]);
        assert_eq!(logs.len(), 1);
        assert_eq!(logs[0].omitted, 2);
        assert_eq!(
            logs[0].lines.first().map(String::as_str),
            Some("a | line 2")
        );
        assert_eq!(logs[0].lines.len(), KEPT_LINES);
        assert_eq!(memory.lines().len(), KEPT_LINES + 3, "every line passed on");
    }

    #[test]
    fn keeps_nothing_when_not_asked() {
        let memory = MemorySink::default();
        let recorder = Recorder::new(&memory, false);
        recorder.line("a", Stream::Stdout, "x");
        assert!(recorder.failed_logs(&["a".into()]).is_empty());
    }
}
