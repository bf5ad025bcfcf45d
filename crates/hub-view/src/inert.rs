//! Text that users wrote (the event's comment, the stack's names, policy
//! messages, reasons that quote them), made inert markdown for
//! pull-request comments: it renders as the text it is, with no HTML, no
//! live `@mention`, no link and nothing that ends its line, table cell or
//! code span.
//!
//! No maintained crate escapes markdown for GitHub and GitLab (mentions
//! and autolinks are their extensions), so this is one small function per
//! place text goes: [`code`] for a name, [`prose`] for a sentence, and
//! [`fence`] for a block.

/// Joins a character to the one before it without showing: after `@` it
/// ends a mention, inside `://` and `www.` a link.
const JOINER: char = '\u{200D}';

/// `text` as one inline code span: fenced with one backtick more than its
/// longest run of backticks, padded with a space when it starts or ends
/// with a backtick or a space, on one line (`\n`, `\r` and other control
/// characters shown escaped), `|` escaped for table cells. Nothing inside
/// a code span is HTML, a mention or a link.
pub fn code(text: &str) -> String {
    let line = one_line(text).replace('|', "\\|");
    if line.is_empty() {
        return "` `".to_string();
    }
    let fence = "`".repeat(longest_run(&line) + 1);
    let pad = line.starts_with(['`', ' ']) || line.ends_with(['`', ' ']);
    match pad {
        true => format!("{fence} {line} {fence}"),
        false => format!("{fence}{line}{fence}"),
    }
}

/// `text` as plain words on one line: the punctuation markdown reads as
/// code, emphasis, links, images and table cells backslash-escaped (a
/// backtick opens no code span, a `|` ends no cell), a first character
/// that would start a list, a quote or a heading escaped, `<`, `>` and
/// `&` as entities (no HTML), a joiner after each `@` and `#` and inside
/// `://` and `www.` (no mention, issue reference or link).
pub fn prose(text: &str) -> String {
    prose_after(text, true)
}

/// [`prose`]; `starts` when `text` starts its line (its first character
/// could start a list, a quote or a heading).
fn prose_after(text: &str, starts: bool) -> String {
    let line = one_line(text);
    let mut out = String::with_capacity(line.len() + 8);
    let mut chars = line.chars().peekable();
    let mut first = starts;
    while let Some(c) = chars.next() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '@' | '#' => {
                out.push(c);
                out.push(JOINER);
            }
            ':' if chars.peek() == Some(&'/') => {
                out.push(':');
                out.push(JOINER);
            }
            '.' if out.to_ascii_lowercase().ends_with("www") => {
                out.push(JOINER);
                out.push('.');
            }
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' | '!' => {
                out.push('\\');
                out.push(c);
            }
            '.' | ')' if starts && out.bytes().all(|b| b.is_ascii_digit()) => {
                out.push('\\');
                out.push(c);
            }
            c if first && c.is_ascii_punctuation() => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
        first = first && c == ' ';
    }
    out
}

/// A sentence of hub's that quotes names in backticks (`` provides
/// `database` ``): each quoted part as a [`code`] span, the rest as
/// [`prose`]. Whatever backticks a quoted name holds, every part goes
/// through one of the two: a name can shift the pairing, never escape
/// it. With an odd number of backticks, all of it is prose. For text
/// after something on its line (a table cell, `Label: …`).
pub fn rich(text: &str) -> String {
    rich_at(text, false)
}

/// [`rich`] for text that starts its own line.
pub fn rich_line(text: &str) -> String {
    rich_at(text, true)
}

fn rich_at(text: &str, starts: bool) -> String {
    if text.matches('`').count() % 2 == 1 {
        return prose_after(text, starts);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for (index, part) in text.split('`').enumerate() {
        match (index % 2, part.is_empty()) {
            (_, true) => {}
            (0, false) => out.push_str(&prose_after(part, starts && index == 0)),
            _ => out.push_str(&code(part)),
        }
    }
    out
}

/// A code fence longer than any run of backticks in `text` (at least
/// three): a fenced block of `text` ends only where hub ends it.
pub fn fence(text: &str) -> String {
    "`".repeat((longest_run(text) + 1).max(3))
}

/// `text` inside an HTML element: `&`, `<`, `>` and quotes as entities,
/// on one line, a joiner after `@` and inside `://` (GitHub finds
/// mentions and links in HTML text too).
pub fn html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let line = one_line(text);
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            ':' if chars.peek() == Some(&'/') => {
                out.push(':');
                out.push(JOINER);
            }
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '@' => {
                out.push('@');
                out.push(JOINER);
            }
            c => out.push(c),
        }
    }
    out
}

/// The longest run of backticks in `text`.
fn longest_run(text: &str) -> usize {
    text.split(|c| c != '`').map(str::len).max().unwrap_or(0)
}

/// `text` on one line: `\r` and `\n` shown as `\r` and `\n`, other
/// control characters and line or paragraph separators as `\u{…}`.
fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push(' '),
            c if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{85}') => {
                out.push_str(&format!("\\u{{{:x}}}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests;
