//! Limits on what one YAML file may ask of the reader, so that a hostile or
//! broken manifest, parameters file, state or elaborated file is refused
//! quickly with a clear message instead of using time that grows with the
//! square of its nesting or memory that grows with its aliases.
//!
//! The YAML parser itself is slow on deep flow nesting (`[[[[...`): every
//! token it reads looks at every open level. So the depth of flow
//! collections is measured here by a linear scan of the text before the
//! parser sees it. Block nesting needs an indentation as deep as the
//! nesting, so its cost stays linear in the file's size; the decoder's own
//! recursion limit (the same number) stops it. Aliases are counted by a
//! first pass that visits the document as the decoder expands it, without
//! keeping anything, and stops at the expansion limit.

use serde::de::{self, DeserializeSeed, Visitor};
use std::cell::Cell;
use std::fmt;

/// The largest file read, after decompression.
pub const MAX_FILE_BYTES: usize = 64 * 1024 * 1024;
/// The largest state file read or written, after decompression, unless
/// `HUB_MAX_STATE_BYTES` says otherwise: a state is not written by hand,
/// and one of 10,000 components with 40 parameters each takes about
/// 70 MB, so it has a limit of its own (see [`max_state_bytes`]).
pub const DEFAULT_MAX_STATE_BYTES: usize = 512 * 1024 * 1024;
/// The variable that sets the state limit, in bytes.
pub const MAX_STATE_BYTES_VARIABLE: &str = "HUB_MAX_STATE_BYTES";

/// The largest state read or written: `HUB_MAX_STATE_BYTES` when it is a
/// number of bytes (at least 1), [`DEFAULT_MAX_STATE_BYTES`] otherwise.
/// Every command reads it the same way, so a state hub wrote under a limit
/// is read under the same one.
pub fn max_state_bytes() -> usize {
    std::env::var(MAX_STATE_BYTES_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|&bytes| bytes > 0)
        .unwrap_or(DEFAULT_MAX_STATE_BYTES)
}
/// The deepest nesting of mappings and sequences (the YAML decoder's own
/// recursion limit is the same).
pub const MAX_NESTING_DEPTH: usize = 128;
/// The most nodes one document may have once its aliases are expanded.
pub const MAX_EXPANDED_NODES: usize = 1_000_000;

/// Which limit a file exceeded, and where when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exceeded {
    pub line: Option<usize>,
    pub column: Option<usize>,
    pub message: String,
}

impl Exceeded {
    pub fn size(bytes: usize) -> Self {
        Exceeded::size_within(bytes, MAX_FILE_BYTES)
    }

    /// The file is larger than `limit`.
    pub fn size_within(bytes: usize, limit: usize) -> Self {
        Exceeded {
            line: None,
            column: None,
            message: format!(
                "the file is larger than {} ({bytes} bytes or more)",
                size_text(limit)
            ),
        }
    }

    fn depth(line: usize, column: usize) -> Self {
        Exceeded {
            line: Some(line),
            column: Some(column),
            message: depth_message(),
        }
    }
}

/// A limit in bytes as people write it: `64 MiB`, or the bytes when the
/// limit is not a whole number of mebibytes.
pub fn size_text(bytes: usize) -> String {
    match bytes % (1 << 20) {
        0 => format!("{} MiB", bytes >> 20),
        _ => format!("{bytes} bytes"),
    }
}

pub fn depth_message() -> String {
    format!("mappings and sequences are nested deeper than {MAX_NESTING_DEPTH} levels")
}

pub fn expansion_message() -> String {
    format!("aliases expand the document to more than {MAX_EXPANDED_NODES} nodes")
}

/// Whether a decoder error is its recursion limit, reported as ours.
pub fn is_recursion_limit(message: &str) -> bool {
    message.contains("recursion limit exceeded")
}

/// Whether a decoder error is an alias limit (ours or the decoder's own).
pub fn is_alias_limit(message: &str) -> bool {
    message.contains(&expansion_message()) || message.contains("repetition limit exceeded")
}

/// What the scan of a text found: whether it holds aliases at all (only
/// then is the expansion worth counting).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Scan {
    pub has_aliases: bool,
}

/// Checks the size and the flow nesting of `text` in one pass.
pub fn scan(text: &str) -> Result<Scan, Exceeded> {
    scan_within(text, MAX_FILE_BYTES)
}

/// [`scan`] with a size limit of `max_bytes` (a state's, see
/// [`max_state_bytes`]).
pub fn scan_within(text: &str, max_bytes: usize) -> Result<Scan, Exceeded> {
    if text.len() > max_bytes {
        return Err(Exceeded::size_within(text.len(), max_bytes));
    }
    Scanner::default().run(text)
}

/// Visits one document the way the decoder expands it, counting nodes;
/// fails past [`MAX_EXPANDED_NODES`].
pub fn count_expanded<'de, D: de::Deserializer<'de>>(document: D) -> Result<(), D::Error> {
    let count = Cell::new(0);
    Budget(&count).deserialize(document)
}

#[derive(Clone, Copy)]
struct Budget<'a>(&'a Cell<usize>);

impl Budget<'_> {
    fn spend<E: de::Error>(self) -> Result<(), E> {
        let next = self.0.get() + 1;
        self.0.set(next);
        if next > MAX_EXPANDED_NODES {
            return Err(E::custom(expansion_message()));
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for Budget<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Budget<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<(), E> {
        self.spend()
    }
    fn visit_i64<E: de::Error>(self, _: i64) -> Result<(), E> {
        self.spend()
    }
    fn visit_i128<E: de::Error>(self, _: i128) -> Result<(), E> {
        self.spend()
    }
    fn visit_u64<E: de::Error>(self, _: u64) -> Result<(), E> {
        self.spend()
    }
    fn visit_u128<E: de::Error>(self, _: u128) -> Result<(), E> {
        self.spend()
    }
    fn visit_f64<E: de::Error>(self, _: f64) -> Result<(), E> {
        self.spend()
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        self.spend()
    }
    fn visit_bytes<E: de::Error>(self, _: &[u8]) -> Result<(), E> {
        self.spend()
    }
    fn visit_unit<E: de::Error>(self) -> Result<(), E> {
        self.spend()
    }
    fn visit_none<E: de::Error>(self) -> Result<(), E> {
        self.spend()
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }
    fn visit_newtype_struct<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        self.deserialize(d)
    }
    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.spend()?;
        while seq.next_element_seed(self)?.is_some() {}
        Ok(())
    }
    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        self.spend()?;
        while map.next_key_seed(self)?.is_some() {
            map.next_value_seed(self)?;
        }
        Ok(())
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<(), A::Error> {
        use de::VariantAccess;
        let ((), variant) = data.variant_seed(self)?;
        variant.newtype_variant_seed(self)
    }
}

/// A linear scan that follows just enough of YAML's syntax (quotes,
/// comments, block scalars, where a node may start) to count open flow
/// collections and to notice aliases. It errs on the side of counting less:
/// the decoder's own limit stays behind it.
#[derive(Default)]
struct Scanner {
    line: usize,
    column: usize,
    depth: usize,
    /// At a place where a node may start (after `: `, `- `, `,`, `[` ...).
    expect_node: bool,
    quote: Option<char>,
    escaped: bool,
    comment: bool,
    /// Inside an anchor or tag (`&a`, `!tag`) before the node it names.
    property: bool,
    /// A `|` or `>` was seen: the following more indented lines are text.
    block_scalar_after: bool,
    /// The indentation of the line that opened the block scalar being skipped.
    block_scalar_parent: Option<usize>,
    at_line_start: bool,
    indent: usize,
    has_aliases: bool,
    previous: char,
}

impl Scanner {
    fn run(mut self, text: &str) -> Result<Scan, Exceeded> {
        self.line = 1;
        self.start_line();
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            let next = chars.peek().copied();
            if c == '\n' {
                self.end_line();
            } else {
                self.column += 1;
                self.step(c, next)?;
                self.previous = c;
            }
        }
        Ok(Scan {
            has_aliases: self.has_aliases,
        })
    }

    fn start_line(&mut self) {
        self.column = 0;
        self.indent = 0;
        self.at_line_start = true;
        self.expect_node = true;
        self.comment = false;
        self.property = false;
        self.previous = '\n';
    }

    fn end_line(&mut self) {
        if self.block_scalar_after && self.block_scalar_parent.is_none() {
            self.block_scalar_parent = Some(self.indent);
        }
        self.block_scalar_after = false;
        self.line += 1;
        self.start_line();
    }

    fn step(&mut self, c: char, next: Option<char>) -> Result<(), Exceeded> {
        if self.at_line_start {
            if c == ' ' {
                self.indent += 1;
                return Ok(());
            }
            if let Some(parent) = self.block_scalar_parent {
                if c == '\t' || c == '\r' || self.indent > parent {
                    self.comment = true; // the rest of the line is text
                    self.at_line_start = false;
                    return Ok(());
                }
                self.block_scalar_parent = None;
            }
            self.at_line_start = false;
        }
        if self.comment || self.block_scalar_after {
            return Ok(());
        }
        if let Some(quote) = self.quote {
            self.in_quotes(quote, c, next);
            return Ok(());
        }
        if c == '#' && matches!(self.previous, ' ' | '\t' | '\n') {
            self.comment = true;
            return Ok(());
        }
        if self.property {
            if c == ' ' || c == '\t' {
                self.property = false;
            }
            return Ok(());
        }
        let in_flow = self.depth > 0;
        let separated = |n: Option<char>| matches!(n, None | Some(' ' | '\t' | '\r'));
        match c {
            ']' | '}' if in_flow => {
                self.depth -= 1;
                self.expect_node = false;
            }
            ',' if in_flow => self.expect_node = true,
            ':' if separated(next) || (in_flow && matches!(next, Some(',' | ']' | '}'))) => {
                self.expect_node = true
            }
            _ if !self.expect_node => {}
            ' ' | '\t' | '\r' => {}
            '[' | '{' => {
                self.depth += 1;
                if self.depth > MAX_NESTING_DEPTH {
                    return Err(Exceeded::depth(self.line, self.column));
                }
            }
            '\'' | '"' => {
                self.quote = Some(c);
                self.expect_node = false;
            }
            '*' => {
                self.has_aliases = true;
                self.expect_node = false;
            }
            '&' | '!' => self.property = true,
            '|' | '>' if !in_flow => self.block_scalar_after = true,
            '-' | '?' if separated(next) => {}
            _ => self.expect_node = false,
        }
        Ok(())
    }

    fn in_quotes(&mut self, quote: char, c: char, next: Option<char>) {
        if self.escaped {
            self.escaped = false;
        } else if quote == '"' && c == '\\' {
            self.escaped = true;
        } else if c == quote {
            if quote == '\'' && next == Some('\'') {
                self.escaped = true; // '' is a quote inside single quotes
            } else {
                self.quote = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(n: usize) -> String {
        format!("a: {}{}\n", "[".repeat(n), "]".repeat(n))
    }

    #[test]
    fn flow_nesting_up_to_the_limit_is_accepted() {
        assert_eq!(scan(&nested(MAX_NESTING_DEPTH)), Ok(Scan::default()));
    }

    #[test]
    fn flow_nesting_past_the_limit_is_refused_where_it_happens() {
        let error = scan(&format!("x: 1\n{}", nested(MAX_NESTING_DEPTH + 1))).unwrap_err();
        assert_eq!(error.line, Some(2));
        assert_eq!(error.column, Some(4 + MAX_NESTING_DEPTH));
        assert!(error.message.contains("128 levels"), "{}", error.message);
    }

    #[test]
    fn brackets_in_quotes_comments_block_scalars_and_plain_text_are_not_nesting() {
        let open = "[".repeat(MAX_NESTING_DEPTH + 1);
        let text = format!(
            "a: '{open}'\nb: \"{open}\\\"\"\nc: x{open}\n# {open}\nd: |\n  {open}\n\n  {open}\ne: [1, 2]\nf: 'it''s {open}'\n"
        );
        assert_eq!(scan(&text), Ok(Scan::default()));
    }

    #[test]
    fn aliases_are_noticed_only_where_a_node_starts() {
        assert!(!scan("a: 2*3\nb: '*x'\n").unwrap().has_aliases);
        assert!(scan("a: &x 1\nb: *x\n").unwrap().has_aliases);
        assert!(scan("a: [&x 1, *x]\n").unwrap().has_aliases);
    }

    #[test]
    fn a_file_over_the_size_limit_is_refused() {
        let text = " ".repeat(MAX_FILE_BYTES + 1);
        assert!(scan(&text).unwrap_err().message.contains("64 MiB"));
    }

    #[test]
    fn expansion_is_counted_through_aliases() {
        let laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n\
            b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n\
            c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n\
            d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n\
            e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n\
            f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n\
            g: [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";
        let document = yaml_serde::Deserializer::from_str(laughs).next().unwrap();
        let error = count_expanded(document).unwrap_err();
        assert!(is_alias_limit(&error.to_string()), "{error}");
        let small = yaml_serde::Deserializer::from_str("a: &a [x, x]\nb: [*a, *a]\n")
            .next()
            .unwrap();
        assert!(count_expanded(small).is_ok());
    }
}
