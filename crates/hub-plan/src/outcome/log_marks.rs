//! Where each run's part of a component's log begins.
//!
//! A component's log (`STATE.logs/NAME.log`) grows across runs: every run
//! appends. Before a run first writes to a component's log, it appends one
//! line of its own, `--- hub run ID (VERB, TIME)`, ID being the id of the
//! operation the run records in the state (`HUB_OPERATION_ID` when set).
//! The HTML report shows a component's log from the last such line of the
//! run it reports ([`part_of_run`]) to the end: that run's part only,
//! whatever earlier runs wrote before it.
//!
//! Reading is bounded: at most the last [`SCAN_LIMIT`] bytes of a file are
//! scanned, a line at a time, and at most `keep` lines of
//! [`LINE_LIMIT`] bytes each are kept.

use hub_state::{beside, private};
use std::collections::{HashSet, VecDeque};
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::sync::Mutex;

/// The start of every run mark.
const PREFIX: &str = "--- hub run ";

/// How many bytes at the end of a log are scanned for this run's part.
pub(crate) const SCAN_LIMIT: u64 = 64 * 1024 * 1024;

/// How many bytes of one log line are kept.
pub(crate) const LINE_LIMIT: usize = 4096;

/// The id as a mark holds it: one line, no control character (an id from
/// `HUB_OPERATION_ID` could hold anything).
fn id_text(id: &str) -> String {
    id.chars()
        .map(|c| if c.is_control() || c == ' ' { '?' } else { c })
        .collect()
}

/// The mark of run `id` of `verb` at `at`: `--- hub run ID (VERB, AT)`.
pub(crate) fn mark_line(id: &str, verb: &str, at: &str) -> String {
    format!("{PREFIX}{} ({verb}, {at})", id_text(id))
}

/// Whether `line` is a mark of run `id` (of any run with `None`).
fn is_mark(line: &str, id: Option<&str>) -> bool {
    match (line.strip_prefix(PREFIX), id) {
        (None, _) => false,
        (Some(_), None) => true,
        (Some(rest), Some(id)) => rest
            .strip_prefix(&id_text(id))
            .is_some_and(|r| r.starts_with(" (")),
    }
}

/// The marks one run writes: once per component, before its first line.
#[derive(Debug)]
pub struct RunMarks {
    id: String,
    verb: String,
    at: String,
    marked: Mutex<HashSet<String>>,
}

impl RunMarks {
    pub fn new(id: &str, verb: &str, at: &str) -> RunMarks {
        RunMarks {
            id: id.to_string(),
            verb: verb.to_string(),
            at: at.to_string(),
            marked: Mutex::new(HashSet::new()),
        }
    }

    /// Appends this run's mark to `log` (component `name`'s) unless it
    /// did already. A mark that cannot be written is left out: the
    /// component's own open of the file says what is wrong.
    pub fn mark(&self, name: &str, log: &Path) {
        let mut marked = match self.marked.lock() {
            Ok(marked) => marked,
            Err(poisoned) => poisoned.into_inner(),
        };
        if !marked.insert(name.to_string()) {
            return;
        }
        let open = || match beside::open_append(log, private::FILE_MODE) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if let Some(parent) = log.parent() {
                    private::create_folder(parent)?;
                }
                beside::open_append(log, private::FILE_MODE)
            }
            opened => opened,
        };
        if let Ok(mut file) = open() {
            let line = mark_line(&self.id, &self.verb, &self.at);
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }
}

/// The lines of run `id`'s part of a log, the last `keep` of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Part {
    pub lines: Vec<String>,
    /// Lines of the part before them, left out.
    pub omitted: usize,
}

/// Run `id`'s part of the log at `path` (the last run's with `None`):
/// the lines after its last mark up to the next run's mark, the last
/// `keep` of them. `None` when the
/// file cannot be read or holds no mark of the run (in its last
/// [`SCAN_LIMIT`] bytes).
pub fn part_of_run(path: &Path, id: Option<&str>, keep: usize) -> Option<Part> {
    let mut file = std::fs::File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    if length > SCAN_LIMIT {
        file.seek(SeekFrom::Start(length - SCAN_LIMIT)).ok()?;
    }
    let mut reader = BufReader::new(file.take(SCAN_LIMIT));
    let mut part: Option<(VecDeque<String>, usize)> = None;
    // A later run's mark ends the part.
    let mut collecting = false;
    let mut buffer = Vec::new();
    loop {
        buffer.clear();
        match reader.read_until(b'\n', &mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        let end = buffer.len().min(LINE_LIMIT);
        let text = String::from_utf8_lossy(&buffer[..end]);
        let mut line = text.trim_end_matches(['\n', '\r']).to_string();
        if buffer.len() > LINE_LIMIT {
            line.push('…');
        }
        if is_mark(&line, None) {
            collecting = is_mark(&line, id);
            if collecting {
                part = Some((VecDeque::new(), 0));
            }
            continue;
        }
        if let Some((lines, omitted)) = part.as_mut().filter(|_| collecting) {
            lines.push_back(line);
            if lines.len() > keep {
                lines.pop_front();
                *omitted += 1;
            }
        }
    }
    part.map(|(lines, omitted)| Part {
        lines: lines.into(),
        omitted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_shows_the_part_of_its_run_only() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("logs/a.log");
        let first = RunMarks::new("op-1", "deploy", "2026-01-01T00:00:00Z");
        first.mark("a", &log);
        first.mark("a", &log); // once per run
        let append = |text: &str| {
            let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
            file.write_all(text.as_bytes()).unwrap();
        };
        append("first run\n");
        let second = RunMarks::new("op 2\n", "undeploy", "2026-01-02T00:00:00Z");
        second.mark("a", &log);
        append("second run, line 1\nsecond run, line 2\nsecond run, line 3\n");
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(
            text.lines().filter(|l| l.starts_with(PREFIX)).count(),
            2,
            "{text}"
        );
        assert!(text.contains("--- hub run op?2? (undeploy, 2026-01-02T00:00:00Z)\n"));

        let part = part_of_run(&log, Some("op 2\n"), 2).unwrap();
        assert_eq!(part.lines, ["second run, line 2", "second run, line 3"]);
        assert_eq!(part.omitted, 1);
        let part = part_of_run(&log, Some("op-1"), 40).unwrap();
        assert!(part.lines[0] == "first run" && part.lines.len() == 1);
        assert_eq!(part_of_run(&log, None, 40).unwrap().lines.len(), 3);
        // `op-1x` is another run, `op` too.
        assert_eq!(part_of_run(&log, Some("op"), 40), None);
        assert_eq!(part_of_run(&dir.path().join("none.log"), None, 40), None);
    }

    #[test]
    fn long_lines_are_cut() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("a.log");
        let long = "x".repeat(LINE_LIMIT * 3);
        std::fs::write(&log, format!("{}\n{long}\n", mark_line("r", "deploy", "t"))).unwrap();
        let part = part_of_run(&log, Some("r"), 40).unwrap();
        assert_eq!(part.lines[0].chars().count(), LINE_LIMIT + 1);
    }
}
