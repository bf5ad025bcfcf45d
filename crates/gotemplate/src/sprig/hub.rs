//! The hub's own functions (`bcrypt`, `unquote`, `formatSubdomain`) and the
//! successor's `split`, `compact`, `join` and `first`, which decide by the
//! call's shape between the successor's meaning and Sprig's.

use super::{arg_text, empty, indexed, list, s, str_list, strings, Args, Out};
use crate::funcs::{at_least, text, want};
use crate::value::Value;
use regex::Regex;

/// `bcrypt`.
pub(crate) fn bcrypt(name: &str, args: Args) -> Out {
    want(name, args, 1)?;
    bcrypt::hash(arg_text(args, 0), 10)
        .map(Value::Str)
        .map_err(|e| e.to_string())
}

/// `unquote`, `uquote`.
pub(crate) fn unquote(name: &str, args: Args) -> Out {
    want(name, args, 1)?;
    s(unquote_text(&arg_text(args, 0)))
}

/// `split SEP TEXT` (Sprig: a map) or `split TEXT` (successor: the words).
pub(crate) fn split(_: &str, args: Args) -> Out {
    match args {
        [whole] => Ok(str_list(text(whole).split_whitespace().map(String::from))),
        [sep, whole] => Ok(indexed(
            text(whole)
                .split(text(sep).as_str())
                .map(String::from)
                .collect(),
        )),
        _ => Err(format!(
            "wrong number of args for split: want 1 or 2 got {}",
            args.len()
        )),
    }
}

/// Sprig's `compact LIST` (drops empty values), or the successor's
/// `compact TEXT…` (drops blank texts, trims the others).
pub(crate) fn compact(_: &str, args: Args) -> Out {
    if let [Value::List(items)] = args {
        return Ok(Value::List(
            items.iter().filter(|v| !empty(v)).cloned().collect(),
        ));
    }
    let mut out = Vec::new();
    for arg in args {
        match arg {
            Value::List(items) => out.extend(items.iter().map(text).map(|t| t.trim().to_string())),
            Value::Str(t) => out.push(t.trim().to_string()),
            other => {
                return Err(format!(
                    "argument type {} not yet supported",
                    other.type_name()
                ))
            }
        }
    }
    Ok(str_list(out.into_iter().filter(|t| !t.is_empty())))
}

/// Sprig's `join SEP LIST`, or the successor's `join LIST… [SEP]` (a space
/// by default).
pub(crate) fn join(_: &str, args: Args) -> Out {
    if let [Value::Str(sep), Value::List(items)] = args {
        return s(strings(items).join(sep));
    }
    if let [sep, Value::Str(single)] = args {
        if !matches!(sep, Value::List(_)) {
            // Sprig joins a single value's text.
            return s(single.clone());
        }
    }
    at_least("join", args, 1)?;
    let (items, sep) = match args {
        [only] => (std::slice::from_ref(only), " ".to_string()),
        [items @ .., sep] => (
            items,
            Some(text(sep))
                .filter(|s| !s.is_empty())
                .unwrap_or(" ".into()),
        ),
        [] => unreachable!("checked above"),
    };
    let mut out = Vec::new();
    for item in items {
        match item {
            Value::List(list) => out.extend(strings(list)),
            other => out.push(text(other)),
        }
    }
    s(out.join(&sep))
}

pub(crate) fn first(_: &str, args: Args) -> Out {
    want("first", args, 1)?;
    Ok(list(&args[0])?.into_iter().next().unwrap_or(Value::Nil))
}

/// A text made a Kubernetes name: lower-case, dashes between words, no
/// leading non-letters, at most `size` (63) long, then `-` replaced by the
/// delimiter.
pub(crate) fn format_subdomain(_: &str, args: Args) -> Out {
    at_least("formatSubdomain", args, 1)?;
    let Value::Str(raw) = &args[0] else {
        return Err("formatSubdomain expects a string as first argument".into());
    };
    let mut name = raw.trim().to_string();
    if name.is_empty() {
        return s("");
    }
    let size = match args.get(1) {
        None => 63,
        Some(Value::Int(n)) => *n,
        Some(Value::Str(t)) => t.trim().parse().unwrap_or(0),
        Some(other) => {
            return Err(format!(
                "argument type {} not yet supported",
                other.type_name()
            ))
        }
    };
    let delimiter = args.get(2).map(text).unwrap_or_else(|| "-".into());
    static RULES: std::sync::LazyLock<[Regex; 5]> = std::sync::LazyLock::new(|| {
        [
            "^[^a-zA-Z]+",
            "([a-z0-9])([A-Z])",
            "[^a-zA-Z0-9-]+",
            "-{2,}",
            "[^a-zA-Z0-9]+$",
        ]
        .map(|p| Regex::new(p).expect("valid pattern"))
    });
    name = RULES[0].replace_all(&name, "").into_owned();
    name = RULES[1].replace_all(&name, "${1}-${2}").into_owned();
    name = RULES[2].replace_all(&name, "-").into_owned();
    name = RULES[3].replace_all(&name, "-").into_owned();
    name = name.to_lowercase();
    if size >= 0 && name.len() > size as usize {
        let mut cut = size as usize;
        while !name.is_char_boundary(cut) {
            cut -= 1;
        }
        name.truncate(cut);
    }
    name = RULES[4].replace_all(&name, "").into_owned();
    if delimiter != "-" {
        name = name.replace('-', &delimiter);
    }
    s(name)
}

/// Removes one level of `"…"`, `'…'` or `` `…` `` quoting; text that is
/// not quoted stays as it is.
pub(super) fn unquote_text(t: &str) -> String {
    let bytes = t.as_bytes();
    if bytes.len() >= 2
        && bytes[0] == bytes[bytes.len() - 1]
        && matches!(bytes[0], b'"' | b'\'' | b'`')
    {
        let inner = &t[1..t.len() - 1];
        if bytes[0] == b'`' {
            return inner.to_string();
        }
        let literal = format!("{{{{{t}}}}}");
        if let Ok(parsed) = crate::parse::parse(&literal) {
            if let [crate::parse::Node::Action(pipe)] = parsed.body.as_slice() {
                if let [command] = pipe.commands.as_slice() {
                    if let [operand] = command.operands.as_slice() {
                        if let crate::parse::Term::Literal(Value::Str(s)) = &operand.term {
                            return s.clone();
                        }
                        if let crate::parse::Term::Literal(Value::Int(c)) = &operand.term {
                            return char::from_u32(*c as u32)
                                .map(String::from)
                                .unwrap_or_default();
                        }
                    }
                }
            }
        }
        return inner.to_string();
    }
    t.to_string()
}
