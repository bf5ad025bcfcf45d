//! What a run shows while components run, besides their output lines.
//!
//! [`Progress`] hears when components start and end: plain lines (the
//! default) or a live status line per running component on a terminal
//! ([`TerminalProgress`]).

use hub_plan::outcome::lines::{shorten, ConsoleSink, LineSink, Stream};
use hub_plan::outcome::{finish_line, Outcome, Progress};
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

/// The most bytes of a component's last line shown in its status line.
const STATUS_LINE: usize = 512;

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
        self.multi.suspend(|| ConsoleSink.line(label, stream, line));
        if let Some(bar) = self.bar(label) {
            bar.set_message(shorten(line, STATUS_LINE));
        }
    }

    fn note(&self, label: &str, message: &str) {
        self.multi.suspend(|| ConsoleSink.note(label, message));
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
