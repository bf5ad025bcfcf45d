//! Reading a large state a piece at a time.
//!
//! The YAML decoder holds every event of a document before it decodes it:
//! about twenty times the text's size, a gigabyte for the 52 MB state of
//! 10,000 components. A state hub wrote (framed, without anchors) in its
//! own block layout is read here as its head (the document with its
//! `components` section left blank, lines kept, so that every position is
//! the same) and then one component entry at a time. Anything this reading
//! is unsure of (another layout, a warning, an error, a name twice) gives
//! `None`, and the state is read whole, as before: the same state, the
//! same warnings, the same errors.

use super::integrity;
use super::model::{ComponentState, State};
use hub_manifest::diag::Warnings;
use hub_manifest::SourceFile;
use indexmap::IndexMap;

/// Below this size, the whole document is read at once (the tests read
/// every state a piece at a time).
const PIECEWISE_BYTES: usize = if cfg!(test) { 1 } else { 1 << 20 };

/// The first document of `source` as a state, read a piece at a time, and
/// how many non-empty documents the file holds; `None` when it must be
/// read whole.
pub(super) fn first_state(source: &SourceFile) -> Option<(State, usize)> {
    let text = source.text.as_str();
    if text.len() < PIECEWISE_BYTES || !integrity::is_framed(text) || text.contains('\t') {
        return None;
    }
    let scan = hub_manifest::limits::scan(text).ok()?;
    if scan.has_aliases || text.contains("&hub-") {
        return None;
    }
    let (start, end) = section(text)?;
    let entries = entries(&text[start..end])?;
    let mut head = String::with_capacity(text.len() - (end - start) + 64);
    head.push_str(&text[..start]);
    head.push_str("components: {}\n");
    let lines = text[start..end].matches('\n').count();
    head.extend(std::iter::repeat_n('\n', lines.saturating_sub(1)));
    head.push_str(&text[end..]);
    let head = SourceFile {
        path: source.path.clone(),
        text: head,
    };
    let mut warnings = Warnings::default();
    let (state, documents) = head.first_document::<State>(&mut warnings).ok()?;
    let mut state = state?;
    if !warnings.is_empty() || !state.components.is_empty() {
        return None;
    }
    let mut components = IndexMap::with_capacity(entries.len());
    for entry in entries {
        let piece = SourceFile {
            path: source.path.clone(),
            text: entry.to_string(),
        };
        let (decoded, count) = piece.first_document::<Entries>(&mut warnings).ok()?;
        let Entries(decoded) = decoded?;
        if count != 1 || decoded.len() != 1 || !warnings.is_empty() {
            return None;
        }
        for (name, component) in decoded {
            if components.insert(name, component).is_some() {
                return None;
            }
        }
    }
    state.components = components;
    Some((state, documents))
}

/// One piece: a map of one entry.
#[derive(serde::Deserialize)]
#[serde(transparent)]
struct Entries(IndexMap<String, ComponentState>);

/// Read without a schema, as [`State`] is.
impl hub_manifest::Document for Entries {}

/// Where the top-level `components:` section is: from its key's line to
/// the next top-level line (or the end); `None` when there is none, or it
/// is not a block of entries.
fn section(text: &str) -> Option<(usize, usize)> {
    let start = match text.starts_with("components:\n") {
        true => 0,
        false => text.find("\ncomponents:\n")? + 1,
    };
    let body = start + "components:\n".len();
    let mut end = text.len();
    let mut at = body;
    while at < text.len() {
        let line_end = text[at..].find('\n').map_or(text.len(), |n| at + n + 1);
        let first = text[at..].chars().next();
        if first != Some(' ') {
            // The next top-level key, or the last line: nothing else ends
            // the section here.
            match first {
                Some(c) if c.is_ascii_alphabetic() => {}
                Some('#') if text[at..].starts_with("# hub-state-end") => {}
                _ => return None,
            }
            end = at;
            break;
        }
        at = line_end;
    }
    // Only one `components` key.
    if text[end..].contains("\ncomponents:") || text[end..].starts_with("components:") {
        return None;
    }
    Some((start, end))
}

/// The texts of the entries of a `components:` section (its key's line
/// first): each from a line indented by two to the next such line.
fn entries(section: &str) -> Option<Vec<&str>> {
    let body = &section["components:\n".len()..];
    let mut starts = Vec::new();
    let mut at = 0;
    while at < body.len() {
        let line = &body[at..];
        let indent = line.len() - line.trim_start_matches(' ').len();
        let first = line[indent..].chars().next();
        if indent == 2 {
            match first {
                Some(
                    '#' | '-' | '?' | '\n' | '"' | '\'' | '{' | '[' | '!' | '&' | '*' | '|' | '>',
                )
                | None => return None,
                Some(_) => starts.push(at),
            }
        } else if indent < 2 || starts.is_empty() {
            return None;
        }
        at += line.find('\n').map_or(line.len(), |n| n + 1);
    }
    let mut pieces = Vec::with_capacity(starts.len());
    for (i, &from) in starts.iter().enumerate() {
        let to = starts.get(i + 1).copied().unwrap_or(body.len());
        pieces.push(&body[from..to]);
    }
    Some(pieces)
}

#[cfg(test)]
mod tests;
