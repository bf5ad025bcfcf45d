//! The YAML writer of every file hub writes (elaborated stacks, state
//! files): block style, and strings quoted whenever a YAML 1.1 *or* 1.2
//! reader could take them for something else.
//!
//! A general YAML writer quotes by YAML 1.2 rules and so writes `yes`,
//! `on`, `n` or `1_000` bare; the reference tool reads YAML 1.1, where
//! those are booleans and numbers, and a parameter value `"yes"` would come
//! back as `true`. Here a string is written bare only when it is plainly
//! text under both rules; otherwise it is double-quoted, with escapes for
//! everything outside YAML's printable set.

use regex::Regex;
use std::sync::LazyLock;
use yaml_serde::Value;

/// The whole document, ending with a newline.
pub fn document(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Mapping(map) if !map.is_empty() => mapping(map, 0, &mut out),
        Value::Sequence(items) if !items.is_empty() => sequence(items, 0, &mut out),
        other => {
            out.push_str(&inline(other));
            out.push('\n');
        }
    }
    out
}

fn mapping(map: &yaml_serde::Mapping, indent: usize, out: &mut String) {
    for (key, value) in map {
        entry(key, value, indent, out);
    }
}

fn sequence(items: &[Value], indent: usize, out: &mut String) {
    for value in items {
        item(value, indent, out);
    }
}

/// One `key: value` entry of a block mapping whose keys are at `indent`,
/// exactly as [`document`] writes it inside a larger document.
pub fn entry(key: &Value, value: &Value, indent: usize, out: &mut String) {
    push_indent(indent, out);
    out.push_str(&inline(key));
    out.push(':');
    nested(value, indent, out, true);
}

/// One `- value` item of a block sequence whose dashes are at `indent`,
/// exactly as [`document`] writes it inside a larger document.
pub fn item(value: &Value, indent: usize, out: &mut String) {
    push_indent(indent, out);
    out.push('-');
    nested(value, indent, out, false);
}

/// What follows `key:` or `-`: a scalar on the same line, or a block.
/// Sequences under a key are not indented further (as the reference
/// writes them); items of a sequence start on the dash's line.
fn nested(value: &Value, indent: usize, out: &mut String, under_key: bool) {
    match value {
        Value::Mapping(map) if !map.is_empty() => {
            if under_key {
                out.push('\n');
                mapping(map, indent + 2, out);
            } else {
                same_line(out, |buffer| mapping(map, indent + 2, buffer), indent + 2);
            }
        }
        Value::Sequence(items) if !items.is_empty() => {
            if under_key {
                out.push('\n');
                sequence(items, indent, out);
            } else {
                same_line(
                    out,
                    |buffer| sequence(items, indent + 2, buffer),
                    indent + 2,
                );
            }
        }
        Value::Tagged(tagged) => {
            out.push(' ');
            out.push_str(&tagged.tag.to_string());
            match &tagged.value {
                Value::Mapping(map) if !map.is_empty() => {
                    out.push('\n');
                    mapping(map, indent + 2, out);
                }
                Value::Sequence(items) if !items.is_empty() => {
                    out.push('\n');
                    sequence(items, indent + 2, out);
                }
                scalar => {
                    out.push(' ');
                    out.push_str(&inline(scalar));
                    out.push('\n');
                }
            }
        }
        scalar => {
            out.push(' ');
            out.push_str(&inline(scalar));
            out.push('\n');
        }
    }
}

/// Writes a block whose first line continues the current one (after `-`).
fn same_line(out: &mut String, write: impl FnOnce(&mut String), indent: usize) {
    let mut buffer = String::new();
    write(&mut buffer);
    out.push(' ');
    out.push_str(&buffer[indent..]);
}

fn push_indent(indent: usize, out: &mut String) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A scalar, or an empty collection, on one line.
fn inline(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::String(s) => string(s),
        Value::Sequence(_) => "[]".into(),
        Value::Mapping(_) => "{}".into(),
        Value::Number(_) => yaml_serde::to_string(value)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_else(|_| "null".into()),
        Value::Tagged(tagged) => format!("{} {}", tagged.tag, inline(&tagged.value)),
    }
}

/// Bare when unambiguous, else double-quoted.
pub fn string(text: &str) -> String {
    if is_plain(text) {
        text.to_string()
    } else {
        double_quoted(text)
    }
}

fn is_plain(text: &str) -> bool {
    let Some(first) = text.chars().next() else {
        return false;
    };
    let safe_start = first.is_alphanumeric() || matches!(first, '/' | '.' | '_');
    let safe_chars = text
        .chars()
        .all(|c| c.is_alphanumeric() || c == ' ' || "._-/+@=%~,:()'!?*&$^;<>".contains(c));
    safe_start
        && safe_chars
        && !text.ends_with([' ', ':'])
        && !text.contains(": ")
        && !text.contains(" #")
        && !looks_typed(text)
}

/// Resolves to null, a boolean or a number under YAML 1.1 or 1.2.
fn looks_typed(text: &str) -> bool {
    const WORDS: [&str; 26] = [
        "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
    ];
    static NUMBER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(concat!(
            r"^[-+]?(?:",
            r"[0-9_]*\.?[0-9_]+(?:[eE][-+]?[0-9]+)?",
            r"|[0-9][0-9_]*\.(?:[eE][-+]?[0-9]+)?",
            r"|0[xX][0-9a-fA-F_]+|0[oO]?[0-7_]+|0[bB][01_]+",
            r"|[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?",
            r"|\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
            r")$"
        ))
        .expect("number pattern")
    });
    WORDS.contains(&text) || NUMBER.is_match(text) || text == "<<" || text == "="
}

/// `"…"` with YAML escapes for quotes, backslashes, line breaks and every
/// character outside YAML's printable set.
fn double_quoted(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if printable(c) => out.push(c),
            c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push_str(&format!("\\U{:08X}", c as u32)),
        }
    }
    out.push('"');
    out
}

/// YAML's printable characters, minus the ones some readers treat as line
/// breaks or byte-order marks.
fn printable(c: char) -> bool {
    matches!(c as u32,
        0x20..=0x7E | 0xA0..=0x2027 | 0x202A..=0xD7FF | 0xE000..=0xFEFE | 0xFF00..=0xFFFD | 0x10000..=0x10FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(value: &Value) -> Value {
        let text = document(value);
        yaml_serde::from_str(&text).unwrap_or_else(|e| panic!("{e}\n{text}"))
    }

    #[test]
    fn yaml_1_1_words_and_numbers_are_quoted() {
        for text in [
            "yes", "No", "on", "OFF", "y", "n", "~", "null", "1_000", "0b101", "0o17", "017",
            "1:20", ".5", "1e3", "+1", "-2.", ".inf", "<<", "=",
        ] {
            assert!(string(text).starts_with('"'), "{text}");
        }
        for text in [
            "a.example.com",
            "https://a.example.com",
            "hub.yaml.state",
            "2024-05-01T10:00:00Z",
            "demo",
            "-s",
            "x y",
            "v1.2.3",
        ] {
            assert_eq!(string(text), text.replace("-s", "\"-s\""), "{text}");
        }
    }

    #[test]
    fn blocks_are_written_as_the_reference_does() {
        let value: Value =
            yaml_serde::from_str("a: {b: [1, {c: d, e: [x]}], f: [], g: {}}\nh: [[1, 2]]\n")
                .expect("yaml");
        let text = document(&value);
        assert_eq!(
            text,
            "a:\n  b:\n  - 1\n  - c: d\n    e:\n    - x\n  f: []\n  g: {}\nh:\n- - 1\n  - 2\n"
        );
        assert_eq!(round_trip(&value), value);
    }

    #[test]
    fn awkward_strings_survive() {
        for text in [
            "",
            " lead",
            "trail ",
            "a: b",
            "a #b",
            "#x",
            "- x",
            "[x]",
            "{x}",
            "\"q\"",
            "'s'",
            "back\\slash",
            "l1\nl2\n",
            "\t",
            "\u{7f}",
            "\u{85}",
            "\u{2028}",
            "\u{feff}",
            "é",
            "😀",
            "!tag",
            "&a",
            "*a",
            "|",
            ">",
            "%x",
            "@x",
            "`x`",
            "?",
            ":",
        ] {
            let value = Value::String(text.to_string());
            assert_eq!(round_trip(&value), value, "{text:?}");
        }
    }

    proptest! {
        #[test]
        fn any_string_survives(text in any::<String>()) {
            let value = Value::String(text);
            prop_assert_eq!(round_trip(&value), value);
        }

        #[test]
        fn keys_and_listed_strings_survive(key in "[ -~]{0,12}", item in "\\PC{0,12}") {
            let mut map = yaml_serde::Mapping::new();
            map.insert(Value::String(key), Value::Sequence(vec![Value::String(item)]));
            let value = Value::Mapping(map);
            prop_assert_eq!(round_trip(&value), value);
        }
    }
}
