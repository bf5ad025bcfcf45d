//! What `hub elaborate` knows about an elaborated file: the files it was
//! made from, the stack's folder, whether `lifecycle.order` was derived, and
//! the command that made it. Written as a header of YAML comments at the top
//! of document 1, so that every YAML reader (the Hub CLI included) sees the
//! same document as without it:
//!
//! ```text
//! ---
//! # hub: elaborated v1
//! # hub: stack-dir "/home/me/stack"
//! # hub: order derived
//! # hub: source "/home/me/stack/hub.yaml"
//! # hub: source "/home/me/stack/params.yaml"
//! # hub: command ["hub","elaborate","/home/me/stack/hub.yaml","/home/me/stack/params.yaml"]
//! kind: stack
//! ```
//!
//! Paths and arguments are JSON strings, so that spaces, quotes and any
//! other character survive the round trip. A reader takes the header only
//! when its first line is `# hub: elaborated v1`; unknown lines are skipped.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    /// The stack manifest and every file elaborate read (params files, fromStack parents, component manifests), as absolute paths.
    pub sources: Vec<PathBuf>,
    /// The stack's folder, against which relative component folders resolve (None for an elaborated file written by another tool).
    pub stack_dir: Option<PathBuf>,
    /// `lifecycle.order` was derived from `depends` by elaborate (no level of the stack — the root or a `fromStack` parent — wrote a `lifecycle.order`).
    pub order_derived: bool,
}

const PREFIX: &str = "# hub: ";
const VERSION_LINE: &str = "elaborated v1";

impl Provenance {
    /// The header lines (each ending in a newline) that describe `self`,
    /// and `command` when the elaborated file can be made again with it.
    pub fn header(&self, command: Option<&[String]>) -> String {
        let mut lines = vec![VERSION_LINE.to_string()];
        if let Some(dir) = &self.stack_dir {
            lines.push(format!("stack-dir {}", quote_path(dir)));
        }
        lines.push(format!(
            "order {}",
            if self.order_derived {
                "derived"
            } else {
                "written"
            }
        ));
        lines.extend(
            self.sources
                .iter()
                .map(|s| format!("source {}", quote_path(s))),
        );
        if let Some(command) = command {
            lines.push(format!("command {}", json(command)));
        }
        lines
            .into_iter()
            .map(|line| format!("{PREFIX}{line}\n"))
            .collect()
    }

    /// The provenance recorded in the header of `text` (an elaborated
    /// file); the default when there is none, e.g. in a file the Hub CLI
    /// wrote.
    pub fn parse(text: &str) -> Provenance {
        let mut provenance = Provenance::default();
        for (key, value) in header_entries(text) {
            match key {
                "stack-dir" => provenance.stack_dir = unquote(value).map(PathBuf::from),
                "order" => provenance.order_derived = value == "derived",
                "source" => provenance.sources.extend(unquote(value).map(PathBuf::from)),
                _ => {}
            }
        }
        provenance
    }

    /// The sources modified after `time`, newest first. A source that is
    /// gone, or whose time cannot be read, is not compared.
    pub fn changed_since(&self, time: SystemTime) -> Vec<PathBuf> {
        let mut changed: Vec<(SystemTime, &PathBuf)> = self
            .sources
            .iter()
            .filter_map(|path| {
                let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
                (modified > time).then_some((modified, path))
            })
            .collect();
        changed.sort_by_key(|&(modified, _)| std::cmp::Reverse(modified));
        changed.into_iter().map(|(_, path)| path.clone()).collect()
    }
}

/// The command recorded in the header of `text`, as its arguments.
pub fn recorded_command(text: &str) -> Option<Vec<String>> {
    header_entries(text)
        .find(|(key, _)| *key == "command")
        .and_then(|(_, value)| serde_json::from_str(value).ok())
}

/// `(key, value)` of each `# hub: key value` line of a v1 header: the
/// comment lines at the very top of the file, after an optional `---`.
fn header_entries(text: &str) -> impl Iterator<Item = (&str, &str)> {
    let mut lines = text.lines().skip_while(|l| l.trim().is_empty()).peekable();
    if lines.peek().is_some_and(|l| l.trim_end() == "---") {
        lines.next();
    }
    let mut comments = lines
        .take_while(|l| l.starts_with('#'))
        .filter_map(|l| l.strip_prefix(PREFIX))
        .map(str::trim_end)
        .peekable();
    let versioned = comments.next_if_eq(&VERSION_LINE).is_some();
    comments
        .filter(move |_| versioned)
        .map(|line| line.split_once(' ').unwrap_or((line, "")))
}

fn quote_path(path: &Path) -> String {
    json(&path.to_string_lossy())
}

fn json<T: serde::Serialize + ?Sized>(value: &T) -> String {
    // Serializing strings and lists of strings cannot fail.
    serde_json::to_string(value).unwrap_or_default()
}

fn unquote(value: &str) -> Option<String> {
    serde_json::from_str(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Provenance {
        Provenance {
            sources: vec![
                PathBuf::from("/s p/hub.yaml"),
                PathBuf::from("/s p/params \"x\".yaml"),
            ],
            stack_dir: Some(PathBuf::from("/s p")),
            order_derived: true,
        }
    }

    #[test]
    fn header_round_trips_paths_with_spaces_and_quotes() {
        let command = vec![
            "hub".to_string(),
            "elaborate".into(),
            "/s p/hub.yaml".into(),
        ];
        let text = format!("---\n{}kind: stack\n", sample().header(Some(&command)));
        assert_eq!(Provenance::parse(&text), sample());
        assert_eq!(recorded_command(&text), Some(command));
        let written = Provenance {
            order_derived: false,
            ..sample()
        };
        assert_eq!(Provenance::parse(&written.header(None)), written);
        assert_eq!(recorded_command(&written.header(None)), None);
    }

    #[test]
    fn header_lines_are_yaml_comments() {
        let text = format!("---\n{}kind: stack\n", sample().header(None));
        let value: yaml_serde::Value = yaml_serde::from_str(&text).unwrap();
        let plain: yaml_serde::Value = yaml_serde::from_str("kind: stack").unwrap();
        assert_eq!(value, plain);
    }

    #[test]
    fn files_without_a_header_give_the_default() {
        for text in [
            "",
            "---\nkind: stack\n",
            "# a comment\nkind: stack\n",
            "---\n# hub: elaborated v2\n# hub: order derived\n",
            "kind: stack\n# hub: elaborated v1\n# hub: order derived\n",
        ] {
            assert_eq!(Provenance::parse(text), Provenance::default(), "{text:?}");
        }
    }

    #[test]
    fn unknown_lines_are_skipped() {
        let text = "---\n# hub: elaborated v1\n# hub: future \"x\"\n# a note\n# hub: order derived\nkind: stack\n";
        assert!(Provenance::parse(text).order_derived);
    }

    #[test]
    fn changed_sources_newest_first_and_missing_ones_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.yaml");
        let new = dir.path().join("new.yaml");
        let newest = dir.path().join("newest.yaml");
        let epoch = SystemTime::UNIX_EPOCH;
        let at = |secs| epoch + std::time::Duration::from_secs(secs);
        for (path, time) in [(&old, at(100)), (&new, at(300)), (&newest, at(400))] {
            let file = std::fs::File::create(path).unwrap();
            file.set_modified(time).unwrap();
        }
        let provenance = Provenance {
            sources: vec![
                old,
                new.clone(),
                dir.path().join("gone.yaml"),
                newest.clone(),
            ],
            ..Provenance::default()
        };
        assert_eq!(provenance.changed_since(at(200)), vec![newest, new]);
        assert!(provenance.changed_since(at(400)).is_empty());
    }
}
