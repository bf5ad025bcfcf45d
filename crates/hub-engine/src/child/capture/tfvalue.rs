//! Terraform's value syntax, as `terraform apply` and `terraform output`
//! print an `Outputs:` block (Terraform 0.12 and later): quoted strings
//! with Go's escapes, heredocs (`<<EOT`, `<<-EOT`) for strings of several
//! lines, lists and tuples (`[`), maps and objects (`{`), and the
//! conversions Terraform ≥ 0.14 writes around typed collections
//! (`tolist([`, `toset([`, `tomap({`). [`parse`] turns such a value into
//! the JSON value `terraform output -json` gives for it; [`Scan`] follows
//! a multi-line value line by line, so that a block's reader knows where it
//! ends (a heredoc may hold blank lines, which otherwise end a block).

use serde_json::{Map, Number, Value};

/// Terraform's placeholder for a sensitive output's value.
pub(crate) const SENSITIVE: &str = "<sensitive>";

/// Whether the value text of an entry (after `=`, trimmed) opens a value
/// that continues on the next lines: the opener alone on its line, as
/// Terraform prints a non-empty collection or a heredoc.
pub(crate) fn opens_multiline(value: &str) -> bool {
    matches!(value, "[" | "{" | "tolist([" | "toset([" | "tomap({")
        || heredoc_start(value).is_some()
}

/// Whether a one-line value is a Terraform form that [`parse`] turns into
/// a structure: the empty collections (`[]`, `{}`, `tolist([])`, …). Other
/// one-line values keep today's reading (a quoted string loses its quotes,
/// anything else is text), so a component printing `x = [a, b]` records
/// the text it printed.
pub(crate) fn is_empty_collection(value: &str) -> bool {
    let compact: String = value.chars().filter(|c| !c.is_whitespace()).collect();
    matches!(
        compact.as_str(),
        "[]" | "{}" | "tolist([])" | "toset([])" | "tomap({})"
    )
}

/// `<<EOT` or `<<-EOT` (with an identifier) at the end of `text`: the
/// delimiter, and whether it is the indented form.
fn heredoc_start(text: &str) -> Option<(&str, bool)> {
    let at = text.rfind("<<")?;
    // The opener is a value: alone, or after a map key's `=`.
    let before = text[..at].trim_end();
    if !(before.is_empty() || before.ends_with('=')) {
        return None;
    }
    let rest = &text[at + 2..];
    let (indented, name) = match rest.strip_prefix('-') {
        Some(name) => (true, name),
        None => (false, rest),
    };
    let mut chars = name.chars();
    let first = chars.next()?;
    let valid = (first.is_ascii_alphabetic() || first == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    valid.then_some((name, indented))
}

/// Follows a multi-line value through its lines: brackets outside quoted
/// strings, and heredocs, whose lines are text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    depth: usize,
    heredoc: Option<String>,
}

impl Scan {
    /// A scan that has read `first` (the value text of the entry's line).
    pub fn start(first: &str) -> Scan {
        let mut scan = Scan::default();
        scan.line(first);
        scan
    }

    /// Whether the value is complete.
    pub fn done(&self) -> bool {
        self.depth == 0 && self.heredoc.is_none()
    }

    /// Reads one more line of the value.
    pub fn line(&mut self, line: &str) {
        if let Some(delimiter) = &self.heredoc {
            if closes_heredoc(line, delimiter) {
                self.heredoc = None;
            }
            return;
        }
        let mut in_string = false;
        let mut escaped = false;
        for c in line.chars() {
            match (in_string, c) {
                (true, _) if escaped => escaped = false,
                (true, '\\') => escaped = true,
                (true, '"') => in_string = false,
                (true, _) => {}
                (false, '"') => in_string = true,
                (false, '[' | '{' | '(') => self.depth += 1,
                (false, ']' | '}' | ')') => self.depth = self.depth.saturating_sub(1),
                (false, _) => {}
            }
        }
        if !in_string {
            if let Some((delimiter, _)) = heredoc_start(line.trim_end_matches([' ', '\r'])) {
                self.heredoc = Some(delimiter.to_string());
            }
        }
    }
}

/// The line that closes a heredoc: its delimiter, with spaces around and,
/// inside a list, the `,` after it.
fn closes_heredoc(line: &str, delimiter: &str) -> bool {
    let trimmed = line.trim_matches([' ', '\t', '\r']);
    trimmed.strip_suffix(',').unwrap_or(trimmed) == delimiter
}

/// The JSON value of a Terraform value's text (all its lines, joined with
/// `\n`); the reason when it is not one.
pub fn parse(text: &str) -> Result<Value, String> {
    let mut parser = Parser { text, at: 0 };
    parser.space();
    let value = parser.value()?;
    parser.space();
    match parser.rest().chars().next() {
        None => Ok(value),
        Some(c) => Err(format!("unexpected `{c}` after the value")),
    }
}

/// A quoted string's content with Go's escapes resolved (Terraform quotes
/// with Go's `strconv.Quote`); `None` when `text` is not one quoted string
/// with valid escapes.
pub(crate) fn unquote_go(text: &str) -> Option<String> {
    let mut parser = Parser { text, at: 0 };
    let value = parser.quoted().ok()?;
    parser.rest().is_empty().then_some(value)
}

struct Parser<'t> {
    text: &'t str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += c.len_utf8();
        Some(c)
    }

    /// Spaces, tabs, CR and line breaks.
    fn space(&mut self) {
        while self.peek().is_some_and(|c| c.is_whitespace()) {
            self.bump();
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.rest().starts_with(word) {
            self.at += word.len();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: char) -> Result<(), String> {
        self.space();
        match self.bump() {
            Some(found) if found == c => Ok(()),
            Some(found) => Err(format!("expected `{c}`, found `{found}`")),
            None => Err(format!("expected `{c}`, found the end of the value")),
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.space();
        if self.eat("tolist(") || self.eat("toset(") || self.eat("tomap(") {
            let inner = self.value()?;
            self.expect(')')?;
            return Ok(inner);
        }
        match self.peek() {
            None => Err("expected a value, found the end of the value".into()),
            Some('"') => self.quoted().map(Value::String),
            Some('[') => self.list(),
            Some('{') => self.map(),
            Some('<') if self.rest().starts_with("<<") => self.heredoc().map(Value::String),
            Some(_) => Ok(self.bare()),
        }
    }

    fn list(&mut self) -> Result<Value, String> {
        self.bump();
        let mut items = Vec::new();
        loop {
            self.space();
            if self.eat("]") {
                return Ok(Value::Array(items));
            }
            items.push(self.value()?);
            self.space();
            if !self.eat(",") && self.peek() != Some(']') {
                return Err(self.unexpected("`,` or `]`"));
            }
        }
    }

    fn map(&mut self) -> Result<Value, String> {
        self.bump();
        let mut map = Map::new();
        loop {
            self.space();
            if self.eat("}") {
                return Ok(Value::Object(map));
            }
            let key = match self.peek() {
                Some('"') => self.quoted()?,
                _ => self.word(),
            };
            if key.is_empty() {
                return Err(self.unexpected("a key"));
            }
            self.space();
            if !self.eat("=") && !self.eat(":") {
                return Err(self.unexpected("`=`"));
            }
            let value = self.value()?;
            map.insert(key, value);
            self.space();
            self.eat(",");
        }
    }

    fn unexpected(&self, wanted: &str) -> String {
        match self.peek() {
            Some(c) => format!("expected {wanted}, found `{c}`"),
            None => format!("expected {wanted}, found the end of the value"),
        }
    }

    /// A word: an unquoted key, or a bare value.
    fn word(&mut self) -> String {
        let start = self.at;
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && !matches!(c, ',' | ']' | '}' | ')' | '=' | ':'))
        {
            self.bump();
        }
        self.text[start..self.at].to_string()
    }

    /// `true`, `false`, `null`, a number, or (as older Terraform printed
    /// collections) an unquoted string.
    fn bare(&mut self) -> Value {
        let word = self.word();
        match word.as_str() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            "null" => Value::Null,
            _ => number(&word).unwrap_or(Value::String(word)),
        }
    }

    /// A string in double quotes with Go's escapes.
    fn quoted(&mut self) -> Result<String, String> {
        if self.bump() != Some('"') {
            return Err("expected `\"`".into());
        }
        let mut bytes: Vec<u8> = Vec::new();
        loop {
            let c = self
                .bump()
                .ok_or_else(|| "a quoted string is not closed".to_string())?;
            match c {
                '"' => break,
                '\n' => return Err("a quoted string is not closed on its line".into()),
                '\\' => self.escape(&mut bytes)?,
                c => bytes.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes()),
            }
        }
        String::from_utf8(bytes).map_err(|_| "a quoted string is not UTF-8 text".to_string())
    }

    fn escape(&mut self, bytes: &mut Vec<u8>) -> Result<(), String> {
        let c = self
            .bump()
            .ok_or_else(|| "a quoted string ends with `\\`".to_string())?;
        let simple = match c {
            'a' => Some(0x07),
            'b' => Some(0x08),
            'f' => Some(0x0c),
            'n' => Some(b'\n'),
            'r' => Some(b'\r'),
            't' => Some(b'\t'),
            'v' => Some(0x0b),
            '\\' => Some(b'\\'),
            '"' => Some(b'"'),
            '\'' => Some(b'\''),
            _ => None,
        };
        if let Some(byte) = simple {
            bytes.push(byte);
            return Ok(());
        }
        let digits = match c {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            other => return Err(format!("unknown escape `\\{other}` in a quoted string")),
        };
        let hex: String = (0..digits).filter_map(|_| self.bump()).collect();
        let code = u32::from_str_radix(&hex, 16)
            .ok()
            .filter(|_| hex.len() == digits)
            .ok_or_else(|| format!("`\\{c}{hex}` is not a valid escape"))?;
        if c == 'x' {
            bytes.push(code as u8);
            return Ok(());
        }
        let ch = char::from_u32(code).ok_or_else(|| format!("`\\{c}{hex}` is not a character"))?;
        bytes.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes());
        Ok(())
    }

    /// `<<EOT` … `EOT`: the lines between, joined with `\n`. Terraform
    /// indents the lines of `<<-EOT` (and its closing line) by the depth
    /// of the value; that indentation is removed.
    fn heredoc(&mut self) -> Result<String, String> {
        let line_end = self
            .rest()
            .find('\n')
            .map_or(self.text.len(), |i| self.at + i);
        let opener = self.text[self.at..line_end].trim_end_matches([' ', '\r']);
        let Some((delimiter, indented)) = heredoc_start(opener) else {
            return Err(format!("`{opener}` is not a heredoc opener"));
        };
        let delimiter = delimiter.to_string();
        if line_end == self.text.len() {
            return Err(format!("the heredoc `{opener}` has no lines"));
        }
        self.at = line_end + 1;
        let mut lines = Vec::new();
        loop {
            let start = self.at;
            let end = self
                .rest()
                .find('\n')
                .map_or(self.text.len(), |i| self.at + i);
            let line = &self.text[self.at..end];
            if closes_heredoc(line, &delimiter) {
                let closing = line.trim_end_matches([' ', '\r']);
                let indent = closing.len() - closing.trim_start_matches([' ', '\t']).len();
                // The `,` after a heredoc in a list is the list's.
                self.at = match closing.strip_suffix(',') {
                    Some(before) => start + before.len(),
                    None => end,
                };
                let strip = if indented { indent } else { 0 };
                return Ok(lines
                    .iter()
                    .map(|l: &&str| {
                        let l = l.strip_suffix('\r').unwrap_or(l);
                        let spaces = l.len() - l.trim_start_matches(' ').len();
                        &l[spaces.min(strip)..]
                    })
                    .collect::<Vec<_>>()
                    .join("\n"));
            }
            if end == self.text.len() {
                return Err(format!(
                    "the heredoc `{opener}` is not closed by a line `{delimiter}`"
                ));
            }
            lines.push(line);
            self.at = end + 1;
        }
    }
}

/// A JSON number for a Terraform number's text.
fn number(word: &str) -> Option<Value> {
    let first = word.chars().next()?;
    if !(first.is_ascii_digit() || first == '-') {
        return None;
    }
    if let Ok(i) = word.parse::<i64>() {
        return Some(Value::Number(i.into()));
    }
    let f: f64 = word.parse().ok()?;
    Number::from_f64(f).map(Value::Number)
}

#[cfg(test)]
mod tests;
