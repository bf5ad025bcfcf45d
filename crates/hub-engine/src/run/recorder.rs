//! The [`Recorder`]: passes every line on and, in a parallel run, keeps
//! the last lines of each component, so that a failed component's output
//! can be shown again at the end, where it is not mixed with the others'.

use crate::child::kept::MAX_TAIL_LINE;
use hub_plan::outcome::lines::{console_line, shorten, LineSink, Stream};
use hub_plan::outcome::FailedLog;
use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

/// How many lines of a failed component are shown again.
pub(crate) const KEPT_LINES: usize = 40;

/// Passes lines on to `inner`; keeps the last [`KEPT_LINES`] of each
/// component when `keep` is set.
pub struct Recorder<'s> {
    inner: &'s dyn LineSink,
    keep: bool,
    kept: Mutex<HashMap<String, Kept>>,
}

#[derive(Default)]
struct Kept {
    lines: VecDeque<String>,
    omitted: usize,
}

impl<'s> Recorder<'s> {
    pub fn new(inner: &'s dyn LineSink, keep: bool) -> Self {
        Recorder {
            inner,
            keep,
            kept: Mutex::new(HashMap::new()),
        }
    }

    /// The kept lines of `failed`, in that order.
    pub fn failed_logs(&self, failed: &[String]) -> Vec<FailedLog> {
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        failed
            .iter()
            .filter_map(|name| {
                let lines = kept.remove(name)?;
                Some(FailedLog {
                    component: name.clone(),
                    lines: lines.lines.into_iter().collect(),
                    omitted: lines.omitted,
                })
            })
            .collect()
    }
}

impl LineSink for Recorder<'_> {
    fn line(&self, label: &str, stream: Stream, line: &str) {
        self.inner.line(label, stream, line);
        if !self.keep {
            return;
        }
        let mut kept = self
            .kept
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let entry = kept.entry(label.to_string()).or_default();
        if entry.lines.len() == KEPT_LINES {
            entry.lines.pop_front();
            entry.omitted += 1;
        }
        let line = shorten(line, MAX_TAIL_LINE);
        entry.lines.push_back(
            console_line(label, &line)
                .trim_end_matches('\n')
                .to_string(),
        );
    }

    fn note(&self, label: &str, message: &str) {
        self.inner.note(label, message);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_plan::outcome::lines::MemorySink;

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
