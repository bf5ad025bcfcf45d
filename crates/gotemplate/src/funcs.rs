//! The functions a `go` template can call: Go's builtins, Sprig v2.22's
//! text functions (without the certificate and network ones, see
//! [`MISSING`]), `bcrypt`, and the successor's `split` (one argument),
//! `compact`, `join`, `first`, `formatSubdomain` and `unquote`.
//!
//! Where the successor and Sprig share a name the call's shape decides:
//! `split SEP TEXT` is Sprig's (a map `_0`, `_1`, …), `split TEXT` the
//! successor's (a list of the whitespace-separated words); `join SEP LIST`
//! is Sprig's, `join LIST… [SEP]` the successor's.

use super::printf::{sprint, sprintf, sprintln};
use super::value::Value;

mod shared;

pub use shared::{
    at_least, b64dec, b64enc, json, map_of, quote_all, sha256_hex, text, want, MISSING,
};

type Args<'a> = &'a [Value];
type Out = Result<Value, String>;

/// Go's builtins (the names of [`crate::table::BUILTINS`]); the table
/// sends every other name to Sprig's.
pub fn call(name: &str, args: Args) -> Out {
    match name {
        "not" => {
            want(name, args, 1)?;
            Ok(Value::Bool(!args[0].truthy()))
        }
        "eq" => {
            at_least(name, args, 2)?;
            for other in &args[1..] {
                if compare(&args[0], other)? == Some(std::cmp::Ordering::Equal) {
                    return Ok(Value::Bool(true));
                }
            }
            Ok(Value::Bool(false))
        }
        "ne" => {
            want(name, args, 2)?;
            Ok(Value::Bool(
                compare(&args[0], &args[1])? != Some(std::cmp::Ordering::Equal),
            ))
        }
        "lt" | "le" | "gt" | "ge" => {
            want(name, args, 2)?;
            let ordering = compare(&args[0], &args[1])?
                .ok_or_else(|| "invalid type for comparison".to_string())?;
            use std::cmp::Ordering::*;
            Ok(Value::Bool(match name {
                "lt" => ordering == Less,
                "le" => ordering != Greater,
                "gt" => ordering == Greater,
                _ => ordering != Less,
            }))
        }
        "len" => {
            want(name, args, 1)?;
            match &args[0] {
                Value::Str(s) => Ok(Value::Int(s.len() as i64)),
                Value::List(l) => Ok(Value::Int(l.len() as i64)),
                Value::Map(m) => Ok(Value::Int(m.len() as i64)),
                other => Err(format!("len of type {}", other.type_name())),
            }
        }
        "index" => {
            at_least(name, args, 1)?;
            let mut value = args[0].clone();
            for key in &args[1..] {
                value = index(value, key)?;
            }
            Ok(value)
        }
        "slice" => slice(args),
        "print" => Ok(Value::Str(sprint(args))),
        "println" => Ok(Value::Str(sprintln(args))),
        "printf" => {
            at_least(name, args, 1)?;
            Ok(Value::Str(sprintf(&text(&args[0]), &args[1..])))
        }
        "html" => Ok(Value::Str(html_escape(&sprint(args)))),
        "js" => Ok(Value::Str(js_escape(&sprint(args)))),
        "urlquery" => Ok(Value::Str(query_escape(&sprint(args)))),
        "call" => Err("`call` is not supported: template values hold no functions".into()),
        other => Err(format!("function {other:?} not defined")),
    }
}

/// Go's comparison of basic values: `None` when they are equal-comparable
/// only (bools); an error for incompatible or non-basic types.
fn compare(a: &Value, b: &Value) -> Result<Option<std::cmp::Ordering>, String> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => Ok(Some(x.cmp(y))),
        (Value::Float(x), Value::Float(y)) => Ok(x.partial_cmp(y)),
        (Value::Str(x), Value::Str(y)) => Ok(Some(x.as_bytes().cmp(y.as_bytes()))),
        (Value::Bool(x), Value::Bool(y)) => Ok((x == y).then_some(std::cmp::Ordering::Equal)),
        (Value::Nil, Value::Nil) => Ok(Some(std::cmp::Ordering::Equal)),
        (Value::List(_) | Value::Map(_), _) | (_, Value::List(_) | Value::Map(_)) => {
            Err("non-comparable type".into())
        }
        _ => Err(format!(
            "incompatible types for comparison: {} and {}",
            a.type_name(),
            b.type_name()
        )),
    }
}

fn index(value: Value, key: &Value) -> Out {
    match (value, key) {
        (Value::List(items), Value::Int(i)) => {
            let len = items.len();
            usize::try_from(*i)
                .ok()
                .and_then(|i| items.into_iter().nth(i))
                .ok_or_else(|| format!("index out of range: {i} (length {len})"))
        }
        (Value::Str(s), Value::Int(i)) => usize::try_from(*i)
            .ok()
            .and_then(|i| s.as_bytes().get(i).copied())
            .map(|b| Value::Int(b as i64))
            .ok_or_else(|| format!("index out of range: {i}")),
        (Value::Map(mut map), Value::Str(k)) => map
            .remove(k)
            .ok_or_else(|| format!("map has no entry for key {k:?}")),
        (Value::Nil, _) => Err("index of untyped nil".into()),
        (value, key) => Err(format!(
            "can't index item of type {} with {}",
            value.type_name(),
            key.type_name()
        )),
    }
}

/// Sprig's `slice LIST [START [END]]` (it replaces Go's builtin).
fn slice(args: Args) -> Out {
    at_least("slice", args, 1)?;
    let bound = |v: &Value| match v {
        Value::Int(i) if *i >= 0 => Ok(*i as usize),
        other => Err(format!(
            "slice index must be a non-negative int, not {}",
            other.to_go_string()
        )),
    };
    let (start, end) = match args.len() {
        1 => (0, None),
        2 => (bound(&args[1])?, None),
        _ => (bound(&args[1])?, Some(bound(&args[2])?)),
    };
    match &args[0] {
        Value::List(items) => {
            let end = end.unwrap_or(items.len());
            if start > end || end > items.len() {
                return Err(format!(
                    "slice bounds out of range [{start}:{end}] with length {}",
                    items.len()
                ));
            }
            Ok(Value::List(items[start..end].to_vec()))
        }
        Value::Str(s) => {
            let end = end.unwrap_or(s.len());
            s.get(start..end)
                .map(|t| Value::Str(t.to_string()))
                .ok_or_else(|| format!("slice bounds out of range [{start}:{end}]"))
        }
        other => Err(format!("cannot slice {}", other.type_name())),
    }
}

/// `text` with the characters `replace` names replaced.
pub fn escape(text: &str, replace: impl Fn(char) -> Option<String>) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match replace(c) {
            Some(replacement) => out.push_str(&replacement),
            None => out.push(c),
        }
    }
    out
}

/// `template.HTMLEscapeString`.
pub fn html_escape(s: &str) -> String {
    escape(s, |c| {
        Some(
            match c {
                '"' => "&#34;",
                '\'' => "&#39;",
                '&' => "&amp;",
                '<' => "&lt;",
                '>' => "&gt;",
                '\0' => "\u{FFFD}",
                _ => return None,
            }
            .to_string(),
        )
    })
}

/// `template.JSEscapeString`.
fn js_escape(s: &str) -> String {
    escape(s, |c| {
        Some(match c {
            '\\' => "\\\\".into(),
            '\'' => "\\'".into(),
            '"' => "\\\"".into(),
            '<' | '>' | '&' | '=' => format!("\\u{:04X}", c as u32),
            c if (c as u32) < 0x20 || c.is_control() => format!("\\u{:04X}", c as u32),
            _ => return None,
        })
    })
}

/// `url.QueryEscape`.
pub fn query_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                out.push(b as char)
            }
            b' ' => out.push('+'),
            b => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}
