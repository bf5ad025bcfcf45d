//! Reading a large YAML document a piece at a time.
//!
//! The YAML decoder holds every event of a document before it decodes it:
//! about twenty times the text's size. A document whose bulk is a few long
//! top-level lists (the elaborated stack's `parameters`, a parameters
//! file's, a state's `components`) is read here as its head (the document
//! with those sections left empty, every line kept, so that positions are
//! the same) and then the sections' items, a chunk of items at a time,
//! each chunk under its own key again so that it nests as deep as in the
//! whole document.
//!
//! Only the positions of lines at the left margin decide where a section
//! and an item start, so anything that could make such a line part of
//! something else makes this reading give up: tabs, aliases, directives, a
//! quoted scalar or a flow collection left open at the end of its line, a
//! section key written twice. Any warning or error while decoding a piece
//! gives up too; the caller then reads the document whole, as before, and
//! gets the same value, warnings, errors and positions.

use super::diag::Warnings;
use super::load::{Document, SourceFile};
use indexmap::IndexMap;
use serde::de::DeserializeOwned;

/// Below this size, a document is read whole: the size the readers of
/// this crate pass as `smallest` (the unit tests read every document a
/// piece at a time).
pub const PIECEWISE_BYTES: usize = if cfg!(test) { 1 } else { 256 << 10 };

/// About how much text one chunk of items holds: the decoder's events for
/// it are some twenty times this.
const CHUNK_BYTES: usize = if cfg!(test) { 64 } else { 64 << 10 };

/// How the items of a section are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// A block sequence: `- item` lines at the margin or indented by two.
    List,
    /// A block mapping indented by two: `  name:` lines.
    Map,
}

/// One top-level section of the first document, split into items.
#[derive(Debug)]
pub struct Section<'t> {
    pub key: String,
    /// Whether the document holds the section as `key:` on its own line
    /// (when not, the head holds whatever the key has, and the section
    /// has no items).
    pub found: bool,
    /// Each item's text, from its first line to the next item's; the
    /// items are contiguous in the document.
    pub items: Vec<&'t str>,
}

/// A document split into its head and its long sections.
#[derive(Debug)]
pub struct Split<'t> {
    /// The whole text with each section written `key: []` (or `{}`)
    /// followed by as many empty lines as its items took.
    pub head: String,
    /// The sections found, in the order asked.
    pub sections: Vec<Section<'t>>,
}

/// Splits the first document of `text` at the top-level keys `keys`,
/// whose values are written in their shapes; `None` when the text is
/// shorter than `smallest`, or anything makes the split unsure. A key absent from the document
/// gives an empty section.
pub fn split<'t>(text: &'t str, keys: &[(&str, Shape)], smallest: usize) -> Option<Split<'t>> {
    if text.len() < smallest || text.contains('\t') || text.contains('\r') {
        return None;
    }
    // Within the limits and without aliases, so are the head and every
    // chunk (cut at lines outside any flow collection): they are decoded
    // without scanning them again. The size was checked where the file was
    // read, against its kind's limit (a state's is larger): here only the
    // largest of them bounds it.
    let largest = super::limits::MAX_FILE_BYTES.max(super::limits::max_state_bytes());
    let scan = super::limits::scan_within(text, largest).ok()?;
    if scan.has_aliases {
        return None;
    }
    let first_end = first_document_end(text);
    if !plain_lines(&text[..first_end]) {
        return None;
    }
    let mut found: Vec<(usize, usize, usize, Shape, Section<'t>)> = Vec::new();
    for &(key, shape) in keys {
        let line = format!("{key}:\n");
        let mut starts = top_level_lines(&text[..first_end], &line);
        let Some(start) = starts.next() else {
            found.push((0, 0, 0, shape, empty(key)));
            continue;
        };
        if starts.next().is_some() || top_level_key_count(&text[..first_end], key) != 1 {
            return None;
        }
        let body = start + line.len();
        let (end, items) = items(&text[body..first_end], shape)?;
        let section = Section {
            key: key.to_string(),
            found: true,
            items,
        };
        found.push((start, body, body + end, shape, section));
    }
    let mut order: Vec<usize> = (0..found.len()).filter(|&i| found[i].2 > 0).collect();
    order.sort_by_key(|&i| found[i].0);
    let mut head = String::with_capacity(text.len() / 4);
    let mut at = 0;
    for &i in &order {
        let (start, body, end, shape, ref section) = found[i];
        head.push_str(&text[at..start]);
        head.push_str(&section.key);
        head.push_str(match shape {
            Shape::List => ": []\n",
            Shape::Map => ": {}\n",
        });
        let lines = text[body..end].matches('\n').count();
        head.extend(std::iter::repeat_n('\n', lines));
        at = end;
    }
    head.push_str(&text[at..]);
    let sections = found.into_iter().map(|(_, _, _, _, s)| s).collect();
    Some(Split { head, sections })
}

fn empty(key: &str) -> Section<'static> {
    Section {
        key: key.to_string(),
        found: false,
        items: Vec::new(),
    }
}

/// Decodes a section's items, a chunk at a time, each chunk read as
/// `key:` followed by its items and decoded as `C` (a `Vec` of items for a
/// list, a map of entries for a map); `add` takes each chunk's value and
/// says whether it fits (false: a name twice). `None` on any warning,
/// error or refusal.
pub fn decode<C: DeserializeOwned + Send>(
    path: &std::path::Path,
    section: &Section<'_>,
    mut add: impl FnMut(C) -> bool,
) -> Option<()> {
    let bounds = chunk_bounds(section);
    let (first, second) = bounds.split_at(parallel_split(bounds.len()));
    let decode_all = |bounds: &[(usize, usize)]| {
        bounds
            .iter()
            .map(|&(from, to)| decode_chunk::<C>(path, section, from, to))
            .collect::<Option<Vec<C>>>()
    };
    let (first, second) = match second.is_empty() {
        true => (decode_all(first), Some(Vec::new())),
        false => at_once(|| decode_all(first), || decode_all(second)),
    };
    first?
        .into_iter()
        .chain(second?)
        .all(&mut add)
        .then_some(())
}

/// `first()` here and `second()` on another thread at once, or after
/// `first` here when no thread can be started (a process limit); `None`
/// for `second` if its thread panicked.
fn at_once<A, B: Send>(
    first: impl FnOnce() -> A,
    second: impl FnOnce() -> Option<B> + Send,
) -> (A, Option<B>) {
    let second = std::sync::Mutex::new(Some(second));
    let run_second = || {
        let second = second.lock().ok()?.take()?;
        second()
    };
    std::thread::scope(|scope| {
        let spawned = std::thread::Builder::new()
            .name("hub-decode".into())
            .spawn_scoped(scope, run_second);
        match spawned {
            Ok(handle) => {
                let a = first();
                (a, handle.join().ok().flatten())
            }
            Err(_) => (first(), run_second()),
        }
    })
}

/// The items of each chunk of `section`: about [`CHUNK_BYTES`] of text,
/// at least one item.
fn chunk_bounds(section: &Section<'_>) -> Vec<(usize, usize)> {
    let mut bounds = Vec::new();
    let mut from = 0;
    while from < section.items.len() {
        let mut to = from;
        let mut bytes = 0;
        while to < section.items.len() && (to == from || bytes < CHUNK_BYTES) {
            bytes += section.items[to].len();
            to += 1;
        }
        bounds.push((from, to));
        from = to;
    }
    bounds
}

/// Where to cut `count` independent pieces of work in two, the second
/// half for another thread: `count` (nothing for it) on a single CPU or
/// when there are too few to be worth a thread.
fn parallel_split(count: usize) -> usize {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    match cpus > 1 && count >= 4 {
        true => count / 2,
        false => count,
    }
}

/// Items `from..to` of `section` read as `key:` followed by them, and
/// decoded as `C`; `None` on any warning or error.
fn decode_chunk<C: DeserializeOwned>(
    path: &std::path::Path,
    section: &Section<'_>,
    from: usize,
    to: usize,
) -> Option<C> {
    let items = &section.items[from..to];
    let mut piece =
        String::with_capacity(section.key.len() + 2 + items.iter().map(|i| i.len()).sum::<usize>());
    piece.push_str(&section.key);
    piece.push_str(":\n");
    items.iter().for_each(|item| piece.push_str(item));
    let source = SourceFile {
        path: path.to_path_buf(),
        text: piece,
    };
    let mut warnings = Warnings::new();
    let (decoded, count) = source
        .first_document_within_limits::<Chunk<C>>(&mut warnings)
        .ok()?;
    let Chunk(decoded) = decoded?;
    if count != 1 || decoded.len() != 1 || !warnings.is_empty() {
        return None;
    }
    let (key, value) = decoded.into_iter().next()?;
    (key == section.key).then_some(value)
}

/// A chunk: a map of one key to its items.
#[derive(serde::Deserialize)]
#[serde(transparent)]
struct Chunk<C>(IndexMap<String, C>);

/// Read without a schema: any key the items do not know is a warning,
/// and gives up.
impl<C: DeserializeOwned> Document for Chunk<C> {}

/// Where the first document ends: at the start of the line of the second
/// `---`, or of a `...`, or at the end of the text.
pub fn first_document_end(text: &str) -> usize {
    let mut content = false;
    let mut at = 0;
    while at < text.len() {
        let line = &text[at..];
        let is_marker = |m: &str| {
            line.starts_with(m) && matches!(line.as_bytes().get(3), None | Some(b' ' | b'\n'))
        };
        if is_marker("...") || (is_marker("---") && content) {
            return at;
        }
        let first = line.as_bytes()[0];
        if !is_marker("---") && first != b'#' && first != b'\n' {
            content = true;
        }
        at += line.find('\n').map_or(line.len(), |n| n + 1);
    }
    text.len()
}

/// The offsets of the lines of `text` equal to `line` (which ends with
/// a newline).
fn top_level_lines<'a>(text: &'a str, line: &'a str) -> impl Iterator<Item = usize> + 'a {
    let head = text.starts_with(line).then_some(0);
    let rest = text
        .match_indices(&format!("\n{line}"))
        .map(|(at, _)| at + 1)
        .collect::<Vec<_>>();
    head.into_iter().chain(rest)
}

/// How many lines at the margin start with `key:` (written any way).
fn top_level_key_count(text: &str, key: &str) -> usize {
    let prefix = format!("{key}:");
    text.split('\n')
        .filter(|line| line.starts_with(&prefix))
        .count()
}

/// The end of a section's body (relative to `body`) and its items.
fn items(body: &str, shape: Shape) -> Option<(usize, Vec<&str>)> {
    let mut starts = Vec::new();
    let mut indent_of_items = None;
    let mut at = 0;
    let mut end = body.len();
    while at < body.len() {
        let line = &body[at..];
        let line_len = line.find('\n').map_or(line.len(), |n| n + 1);
        let text = &line[..line_len];
        let indent = text.len() - text.trim_start_matches(' ').len();
        let rest = &text[indent..];
        if rest.is_empty() || rest == "\n" || rest.starts_with('#') {
            // Blank lines and comments belong to the item before them.
            if starts.is_empty() {
                return None;
            }
        } else if indent == 0 && !starts_item(rest, shape, indent) {
            // The next top-level key ends the section; a marker or
            // anything else is not sure.
            if !rest.as_bytes()[0].is_ascii_alphabetic() || starts.is_empty() {
                return None;
            }
            end = at;
            break;
        } else {
            let expected = *indent_of_items.get_or_insert(indent);
            if indent == expected {
                if !starts_item(rest, shape, indent) {
                    return None;
                }
                starts.push(at);
            } else if indent < expected || starts.is_empty() {
                return None;
            }
        }
        at += line_len;
    }
    let mut items = Vec::with_capacity(starts.len());
    for (i, &from) in starts.iter().enumerate() {
        let to = starts.get(i + 1).copied().unwrap_or(end);
        items.push(&body[from..to]);
    }
    if items.is_empty() {
        return None;
    }
    Some((end, items))
}

/// Whether a line (from its first non-space character) starts an item.
fn starts_item(rest: &str, shape: Shape, indent: usize) -> bool {
    match shape {
        Shape::List => (indent == 0 || indent == 2) && (rest.starts_with("- ") || rest == "-\n"),
        Shape::Map => {
            indent == 2 && rest.as_bytes()[0].is_ascii_alphanumeric() && !rest.starts_with("- ")
        }
    }
}

/// Whether no line of `text` leaves a quoted scalar or a flow collection
/// open at its end (so that the next line cannot be part of it), no line
/// is a directive or an explicit key at the margin, and so every line at
/// the margin is what it looks like. The content of block scalars (`|`,
/// `>`) is not looked at: it is more indented than the key it belongs to.
pub fn plain_lines(text: &str) -> bool {
    let mut block_over: Option<usize> = None;
    for line in text.split('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if let Some(over) = block_over {
            if rest.is_empty() || indent > over {
                continue;
            }
            block_over = None;
        }
        if indent == 0 && matches!(rest.as_bytes().first(), Some(b'%' | b'?' | b':')) {
            return false;
        }
        let Some(code) = closed(rest) else {
            return false;
        };
        if opens_block_scalar(code) {
            let key_column = indent + (rest.len() - rest.trim_start_matches(['-', ' ']).len());
            block_over = Some(key_column);
        }
    }
    true
}

/// The line without its comment, when every quoted scalar that starts on
/// it ends on it and its flow brackets balance; `None` otherwise.
fn closed(line: &str) -> Option<&str> {
    let bytes = line.as_bytes();
    let mut depth = 0i32;
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'"' | b'\'' if starts_token(bytes, i, depth) => {
                i = closing_quote(bytes, i)?;
            }
            b'#' if i == 0 || bytes[i - 1] == b' ' => return Some(&line[..i]),
            b'[' | b'{' => depth += 1,
            b']' | b'}' => {
                depth -= 1;
                if depth < 0 {
                    return None;
                }
            }
            _ => {}
        }
        i += 1;
    }
    (depth == 0).then_some(line)
}

/// Whether the character at `i` starts a token (where a quote opens a
/// quoted scalar), rather than sitting inside a plain scalar: the first
/// of its line, right after a flow indicator or `:`, or after spaces
/// that follow an indicator (`,` inside a flow collection, `-` and `?`
/// standing alone), a tag or an anchor.
fn starts_token(bytes: &[u8], i: usize, depth: i32) -> bool {
    let before = &bytes[..i];
    let Some(last) = before.iter().rposition(|&b| b != b' ') else {
        return true;
    };
    let alone = last == 0 || bytes[last - 1] == b' ';
    let in_flow = depth > 0;
    match bytes[last] {
        b'[' | b'{' | b':' => return true,
        b',' if in_flow => return true,
        b'-' | b'?' if alone => return true,
        _ => {}
    }
    if last + 1 == i {
        return false;
    }
    let word = before[..=last]
        .iter()
        .rposition(|&b| b == b' ')
        .map_or(0, |space| space + 1);
    matches!(bytes[word], b'!' | b'&')
}

/// The index of the quote closing the one at `open`, on the same line.
fn closing_quote(bytes: &[u8], open: usize) -> Option<usize> {
    let quote = bytes[open];
    let mut i = open + 1;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if quote == b'"' => i += 1,
            b'\'' if quote == b'\'' && bytes.get(i + 1) == Some(&b'\'') => i += 1,
            c if c == quote => return Some(i),
            _ => {}
        }
        i += 1;
    }
    None
}

/// Whether a line (without its comment) ends with a block scalar's
/// header: `|` or `>` and its indicators.
fn opens_block_scalar(code: &str) -> bool {
    let code = code.trim_end();
    let header = code.trim_end_matches(|c: char| c == '-' || c == '+' || c.is_ascii_digit());
    header.ends_with('|') || header.ends_with('>')
}

/// Reads the first document of `source` as `T` a piece at a time: the
/// head decoded with `keys` left empty, then each section's items put
/// back with `fill`; `None` when it must be read whole (see [`split`]).
/// Gives the document and how many non-empty documents the file holds.
pub fn first_document<T: Document>(
    source: &SourceFile,
    keys: &[(&str, Shape)],
    smallest: usize,
    fill: impl FnOnce(&mut T, Vec<Section<'_>>) -> Option<()>,
) -> Option<(T, usize)> {
    let split = split(&source.text, keys, smallest)?;
    let head = SourceFile {
        path: source.path.clone(),
        text: split.head,
    };
    let mut warnings = Warnings::new();
    let (document, count) = head.first_document_within_limits::<T>(&mut warnings).ok()?;
    let mut document = document?;
    if !warnings.is_empty() {
        return None;
    }
    drop(head);
    fill(&mut document, split.sections)?;
    Some((document, count))
}

/// [`first_document`] for every document of the file: the first read a
/// piece at a time, the others whole (each is small).
pub fn documents<T: Document + Send>(
    source: &SourceFile,
    keys: &[(&str, Shape)],
    smallest: usize,
    fill: impl FnOnce(&mut T, Vec<Section<'_>>) -> Option<()>,
) -> Option<Vec<T>> {
    let split = split(&source.text, keys, smallest)?;
    let head = SourceFile {
        path: source.path.clone(),
        text: split.head,
    };
    let mut documents = all_documents::<T>(head)?;
    if documents.is_empty() {
        return None;
    }
    fill(&mut documents[0], split.sections)?;
    Some(documents)
}

/// Every document of `head`, `None` on any warning or error. A long head
/// of many documents (an elaborated stack's component manifests) is cut
/// at a document's `---` near its middle and its halves decoded at once.
fn all_documents<T: Document + Send>(mut head: SourceFile) -> Option<Vec<T>> {
    let decode = |file: &SourceFile| {
        let mut warnings = Warnings::new();
        let documents = file.documents_within_limits::<T>(&mut warnings).ok()?;
        warnings.is_empty().then_some(documents)
    };
    let Some(middle) = middle_document_start(&head.text) else {
        return decode(&head);
    };
    let second = SourceFile {
        path: head.path.clone(),
        text: head.text[middle..].to_string(),
    };
    head.text.truncate(middle);
    let (first, second) = at_once(|| decode(&head), || decode(&second));
    let mut documents = first?;
    documents.extend(second?);
    Some(documents)
}

/// Below this size, a head's documents are decoded on one thread.
const PARALLEL_HEAD_BYTES: usize = if cfg!(test) { 1 } else { 1 << 20 };

/// The start of a `---` line at the margin, after the first document and
/// near the middle of `text`, where the text can be cut in two lists of
/// whole documents; `None` when it is short, when only one CPU would do
/// the work, or when a directive (`%YAML`, `%TAG`, which apply to the
/// document after them) could be cut from its document.
fn middle_document_start(text: &str) -> Option<usize> {
    if text.len() < PARALLEL_HEAD_BYTES || parallel_split(4) == 4 {
        return None;
    }
    if text.starts_with('%') || text.contains("\n%") {
        return None;
    }
    let first_end = first_document_end(text);
    let from = (text.len() / 2).max(first_end);
    let at = text
        .get(from..)?
        .match_indices("\n---")
        .find_map(|(at, _)| {
            let start = from + at + 1;
            matches!(text.as_bytes().get(start + 3), None | Some(b' ' | b'\n')).then_some(start)
        })?;
    (at > first_end).then_some(at)
}

/// Puts the decoded items of a list section in `field`, which the head
/// left empty; a section the document does not hold leaves `field` as
/// the head has it.
pub fn fill_list<T: DeserializeOwned + Send>(
    path: &std::path::Path,
    section: &Section<'_>,
    field: &mut Vec<T>,
) -> Option<()> {
    if section.found {
        if !field.is_empty() {
            return None;
        }
        *field = list(path, section)?;
    }
    Some(())
}

/// The items of a list section, decoded.
pub fn list<T: DeserializeOwned + Send>(
    path: &std::path::Path,
    section: &Section<'_>,
) -> Option<Vec<T>> {
    let mut all = Vec::with_capacity(section.items.len());
    decode::<Vec<T>>(path, section, |mut chunk| {
        all.append(&mut chunk);
        true
    })?;
    (all.len() == section.items.len()).then_some(all)
}

#[cfg(test)]
pub(crate) mod tests;
