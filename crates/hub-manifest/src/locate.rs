//! Finds the line of a key path (`components.2.source.dir`) in YAML text.
//!
//! Used only to point warnings at a line, so it reads block-style YAML by
//! indentation and falls back to the nearest enclosing key it could find.

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    Index(usize),
}

impl Segment {
    pub fn path(path: &serde_ignored::Path<'_>) -> Vec<Segment> {
        use serde_ignored::Path;
        let mut segments = Vec::new();
        let mut cursor = path;
        loop {
            match cursor {
                Path::Root => break,
                Path::Seq { parent, index } => {
                    segments.push(Segment::Index(*index));
                    cursor = parent;
                }
                Path::Map { parent, key } => {
                    segments.push(Segment::Key(key.clone()));
                    cursor = parent;
                }
                Path::Some { parent }
                | Path::NewtypeStruct { parent }
                | Path::NewtypeVariant { parent } => cursor = parent,
            }
        }
        segments.reverse();
        segments
    }

    pub fn display(path: &[Segment]) -> String {
        let mut out = String::new();
        for segment in path {
            match segment {
                Segment::Key(key) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(key);
                }
                Segment::Index(index) => out.push_str(&format!("[{index}]")),
            }
        }
        out
    }
}

struct Line<'a> {
    indent: usize,
    content: &'a str,
}

fn significant(line: &str) -> Option<Line<'_>> {
    let content = line.trim_start_matches(' ');
    if content.is_empty() || content.starts_with('#') || content.starts_with("---") {
        return None;
    }
    Some(Line {
        indent: line.len() - content.len(),
        content,
    })
}

/// Strips leading `- ` item markers, returning the column of what follows.
fn after_dashes<'a>(line: &Line<'a>) -> (usize, &'a str) {
    let mut column = line.indent;
    let mut rest = line.content;
    while let Some(stripped) = rest.strip_prefix('-') {
        let trimmed = stripped.trim_start_matches(' ');
        if trimmed.len() == stripped.len() && !stripped.is_empty() {
            break;
        }
        column += rest.len() - trimmed.len();
        rest = trimmed;
    }
    (column, rest)
}

fn is_key(content: &str, key: &str) -> bool {
    let unquoted = content
        .strip_prefix(key)
        .or_else(|| content.strip_prefix(&format!("\"{key}\"")))
        .or_else(|| content.strip_prefix(&format!("'{key}'")));
    unquoted.is_some_and(|rest| rest.trim_start().starts_with(':'))
}

/// Returns the 1-based (line, column) of the last segment found.
pub fn locate(text: &str, path: &[Segment]) -> Option<(usize, usize)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut start = 0usize;
    let mut floor: Option<usize> = None;
    let mut found = None;
    let mut inclusive = false;
    for segment in path {
        let from = if inclusive { start } else { start + 1 };
        let from = if found.is_none() { 0 } else { from };
        let hit = match segment {
            Segment::Key(key) => find_key(&lines, from, floor, key),
            Segment::Index(index) => find_item(&lines, from, floor, *index),
        };
        let Some((line, column)) = hit else { break };
        found = Some((line + 1, column + 1));
        start = line;
        floor = Some(column);
        inclusive = matches!(segment, Segment::Index(_));
    }
    found
}

fn find_key(
    lines: &[&str],
    from: usize,
    floor: Option<usize>,
    key: &str,
) -> Option<(usize, usize)> {
    for (number, raw) in lines.iter().enumerate().skip(from) {
        let Some(line) = significant(raw) else {
            continue;
        };
        let (column, content) = after_dashes(&line);
        if number != from && floor.is_some_and(|f| line.indent <= f) {
            return None;
        }
        if floor.is_none_or(|f| column > f) && is_key(content, key) {
            return Some((number, column));
        }
    }
    None
}

fn find_item(
    lines: &[&str],
    from: usize,
    floor: Option<usize>,
    index: usize,
) -> Option<(usize, usize)> {
    let mut dash_column = None;
    let mut seen = 0;
    for (number, raw) in lines.iter().enumerate().skip(from) {
        let Some(line) = significant(raw) else {
            continue;
        };
        let is_item = line.content.starts_with("- ") || line.content == "-";
        match dash_column {
            None if is_item && floor.is_none_or(|f| line.indent >= f) => {
                dash_column = Some(line.indent)
            }
            None => {
                if floor.is_some_and(|f| line.indent <= f) && number != from {
                    return None;
                }
                continue;
            }
            Some(column) if line.indent < column => return None,
            Some(_) => {}
        }
        if is_item && Some(line.indent) == dash_column {
            if seen == index {
                return Some((number, line.indent));
            }
            seen += 1;
        }
    }
    None
}

/// The 1-based (line, column) of entry `index`, whose text is `value`, of
/// the list at `list`: a block item (`- value`) or an entry of a flow list
/// (`key: [a, value]`); the list's key when the entry cannot be found.
pub fn locate_entry(
    text: &str,
    list: &[Segment],
    index: usize,
    value: &str,
) -> Option<(usize, usize)> {
    let key = locate(text, list)?;
    let mut item_path = list.to_vec();
    item_path.push(Segment::Index(index));
    if let Some(item) = locate(text, &item_path).filter(|item| *item != key) {
        let line = text.lines().nth(item.0 - 1).unwrap_or_default();
        let value_column = line
            .get(item.1 - 1..)
            .and_then(|rest| rest.find(value))
            .map_or(item.1, |offset| item.1 + offset);
        return Some((item.0, value_column));
    }
    Some(flow_entry(text, key, value).unwrap_or(key))
}

/// `value` as a whole entry of the flow list that starts after the key at
/// `key` (possibly over several lines).
fn flow_entry(text: &str, key: (usize, usize), value: &str) -> Option<(usize, usize)> {
    let is_delimiter = |c: char| matches!(c, '[' | ']' | ',' | ' ' | '\'' | '"' | '\t');
    for (number, line) in text.lines().enumerate().skip(key.0 - 1) {
        let start = if number == key.0 - 1 {
            line.find(':').map_or(0, |colon| colon + 1)
        } else {
            0
        };
        let mut from = start;
        while let Some(offset) = line.get(from..).and_then(|rest| rest.find(value)) {
            let at = from + offset;
            let before = line[..at].chars().next_back();
            let after = line[at + value.len()..].chars().next();
            if before.is_none_or(is_delimiter) && after.is_none_or(is_delimiter) {
                return Some((number + 1, at + 1));
            }
            from = at + value.len();
        }
        if line.contains(']') {
            return None;
        }
    }
    None
}

/// Where `key` appears a second time in the same mapping (1-based line and
/// column), for "duplicate field" errors that carry no position.
pub fn repeated_key(text: &str, key: &str) -> Option<(usize, usize)> {
    // Columns of the keys named `key` seen in the mappings still open.
    let mut open: Vec<usize> = Vec::new();
    for (number, raw) in text.lines().enumerate() {
        let Some(line) = significant(raw) else {
            continue;
        };
        let (column, content) = after_dashes(&line);
        let starts_item = column > line.indent;
        // A new item closes the previous item's mapping; a shallower key
        // closes the deeper mappings.
        let closed_after = if starts_item { line.indent } else { column };
        open.retain(|&c| c <= closed_after && !(starts_item && c > line.indent));
        if is_key(content, key) {
            if open.contains(&column) {
                return Some((number + 1, column + 1));
            }
            open.push(column);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Segment {
        Segment::Key(k.to_string())
    }

    const TEXT: &str = "version: 1\nmeta:\n  name: x\n  category: y\ncomponents:\n  - name: a\n    source:\n      dir: a\n  - name: b\n    breif: typo\n";

    #[test]
    fn finds_nested_key() {
        assert_eq!(locate(TEXT, &[key("meta"), key("category")]), Some((4, 3)));
    }

    #[test]
    fn finds_key_in_list_item() {
        let path = [key("components"), Segment::Index(1), key("breif")];
        assert_eq!(locate(TEXT, &path), Some((10, 5)));
    }

    #[test]
    fn falls_back_to_parent() {
        let path = [key("components"), Segment::Index(0), key("nothere")];
        assert_eq!(locate(TEXT, &path), Some((6, 3)));
    }

    #[test]
    fn repeated_keys_in_one_mapping() {
        let text = "version: 1\ncomponents: []\nmeta:\n  name: a\ncomponents: []\n";
        assert_eq!(repeated_key(text, "components"), Some((5, 1)));
        let items = "components:\n- name: a\n  source: {dir: a}\n- name: b\n  name: c\n";
        assert_eq!(repeated_key(items, "name"), Some((5, 3)));
        assert_eq!(repeated_key("a:\n  name: x\nb:\n  name: y\n", "name"), None);
    }

    #[test]
    fn entries_of_block_and_flow_lists() {
        let text = "components:\n  - name: a\n    depends: [b, slwo]\n  - name: c\n    depends:\n      - a\n      - slwo\n";
        let first = [key("components"), Segment::Index(0), key("depends")];
        assert_eq!(locate_entry(text, &first, 1, "slwo"), Some((3, 18)));
        let second = [key("components"), Segment::Index(1), key("depends")];
        assert_eq!(locate_entry(text, &second, 1, "slwo"), Some((7, 9)));
        let order = "lifecycle:\n  order:\n  - a\n  - b\n";
        assert_eq!(
            locate_entry(order, &[key("lifecycle"), key("order")], 1, "b"),
            Some((4, 5))
        );
        let spread = "order: [\n  aa,\n  a ]\n";
        assert_eq!(locate_entry(spread, &[key("order")], 1, "a"), Some((3, 3)));
    }

    #[test]
    fn top_level_key() {
        assert_eq!(
            locate("a: 1\nextensions:\n  x: 1\n", &[key("extensions")]),
            Some((2, 1))
        );
    }
}
