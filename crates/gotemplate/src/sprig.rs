//! The Sprig and hub template functions, one small function each; the
//! names that call them are listed once, in [`crate::table::SPRIG`].
//!
//! Sprig v2.22's text functions and the hub's own (`bcrypt`, the
//! successor's `split`/`compact`/`join`/`first`, `formatSubdomain`,
//! `unquote`), as `go` templates see them. Sprig converts its arguments
//! loosely (a number where text is wanted is printed), so these do too.

pub(crate) mod dates;
pub(crate) mod dicts;
pub(crate) mod encodings;
pub(crate) mod hub;
pub(crate) mod lists;
pub(crate) mod numbers;
pub(crate) mod patterns;
pub(crate) mod strings;

use super::funcs::{map_of, text};
use super::value::Value;
use std::collections::BTreeMap;

type Args<'a> = &'a [Value];
type Out = Result<Value, String>;

fn s(v: impl Into<String>) -> Out {
    Ok(Value::Str(v.into()))
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Float(f) => *f as i64,
        Value::Bool(b) => *b as i64,
        Value::Str(t) => parse_go_int(t.trim()).unwrap_or(0),
        _ => 0,
    }
}

/// `strconv.ParseInt(s, 0, 64)` as `cast` uses it: `0x`, `0o`, `0b` and a
/// leading `0` (octal) prefixes.
fn parse_go_int(t: &str) -> Option<i64> {
    let (negative, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let lower = digits.to_ascii_lowercase();
    let n = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()?
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()?
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()?
    } else {
        lower.parse().ok()?
    };
    Some(if negative { -n } else { n })
}

fn float(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => *b as i64 as f64,
        Value::Str(t) => t.trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn list(v: &Value) -> Result<Vec<Value>, String> {
    match v {
        Value::List(items) => Ok(items.clone()),
        Value::Nil => Ok(Vec::new()),
        other => Err(format!("cannot use type {} as a list", other.type_name())),
    }
}

fn dict(v: &Value) -> Result<BTreeMap<String, Value>, String> {
    match v {
        Value::Map(map) => Ok(map.clone()),
        other => Err(format!("cannot use type {} as a dict", other.type_name())),
    }
}

/// Sprig's `empty`.
fn empty(v: &Value) -> bool {
    !v.truthy()
}

fn strings(items: &[Value]) -> Vec<String> {
    items.iter().map(text).collect()
}

fn str_list(items: impl IntoIterator<Item = String>) -> Value {
    Value::List(items.into_iter().map(Value::Str).collect())
}

/// Go's `unicode.ToUpper`/`ToLower`: one character stays one character.
fn simple_case(t: &str, upper: bool) -> String {
    t.chars()
        .map(|c| {
            let mut mapped: Vec<char> = if upper {
                c.to_uppercase().collect()
            } else {
                c.to_lowercase().collect()
            };
            if mapped.len() == 1 {
                mapped.remove(0)
            } else {
                c
            }
        })
        .collect()
}

/// Argument `i` of a call, nil when the call gave fewer.
fn arg(args: Args, i: usize) -> Value {
    args.get(i).cloned().unwrap_or(Value::Nil)
}

/// Argument `i` of a call as text (nil as `<no value>`, as Sprig prints it).
fn arg_text(args: Args, i: usize) -> String {
    text(&arg(args, i))
}

/// A list as Sprig's `split` map: `_0`, `_1`, …
fn indexed(parts: Vec<String>) -> Value {
    map_of(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| (format!("_{i}"), Value::Str(p))),
    )
}

#[cfg(test)]
mod tests;
