//! Sprig's string functions: case, trimming, padding, wrapping, random text.

use super::{
    arg, arg_text, float, indexed, int, list, s, simple_case, str_list, strings, Args, Out,
};
use crate::funcs::{quote_all, sha256_hex, text, want};
use crate::value::Value;

/// `hello`.
pub(crate) fn hello(_: &str, _: Args) -> Out {
    s("Hello!")
}

/// `upper`.
pub(crate) fn upper(_: &str, args: Args) -> Out {
    s(simple_case(&arg_text(args, 0), true))
}

/// `lower`.
pub(crate) fn lower(_: &str, args: Args) -> Out {
    s(simple_case(&arg_text(args, 0), false))
}

/// `title`.
pub(crate) fn title(_: &str, args: Args) -> Out {
    s(title_text(&arg_text(args, 0)))
}

/// `untitle`.
pub(crate) fn untitle(_: &str, args: Args) -> Out {
    s(untitle_text(&arg_text(args, 0)))
}

/// `swapcase`.
pub(crate) fn swapcase(_: &str, args: Args) -> Out {
    s(arg_text(args, 0)
        .chars()
        .map(|c| {
            if c.is_uppercase() {
                simple_case(&c.to_string(), false)
            } else {
                simple_case(&c.to_string(), true)
            }
        })
        .collect::<String>())
}

/// `substr`.
pub(crate) fn substr(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    s(substr_text(
        int(&args[0]),
        int(&args[1]),
        &arg_text(args, 2),
    ))
}

/// `repeat`.
pub(crate) fn repeat(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    s(arg_text(args, 1).repeat(int(&args[0]).max(0) as usize))
}

/// `trim`.
pub(crate) fn trim(_: &str, args: Args) -> Out {
    s(arg_text(args, 0).trim())
}

/// `trimAll`, `trimall`.
pub(crate) fn trim_all(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let cut: Vec<char> = arg_text(args, 0).chars().collect();
    s(arg_text(args, 1).trim_matches(|c| cut.contains(&c)))
}

/// `trimSuffix`.
pub(crate) fn trim_suffix(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let (suffix, whole) = (arg_text(args, 0), arg_text(args, 1));
    s(whole.strip_suffix(suffix.as_str()).unwrap_or(&whole))
}

/// `trimPrefix`.
pub(crate) fn trim_prefix(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let (prefix, whole) = (arg_text(args, 0), arg_text(args, 1));
    s(whole.strip_prefix(prefix.as_str()).unwrap_or(&whole))
}

/// `nospace`.
pub(crate) fn nospace(_: &str, args: Args) -> Out {
    s(arg_text(args, 0)
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect::<String>())
}

/// `initials`.
pub(crate) fn initials(_: &str, args: Args) -> Out {
    s(arg_text(args, 0)
        .split_whitespace()
        .filter_map(|w| w.chars().next())
        .collect::<String>())
}

/// `randAlphaNum`.
pub(crate) fn rand_alpha_num(_: &str, args: Args) -> Out {
    s(random(
        int(&arg(args, 0)),
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    ))
}

/// `randAlpha`.
pub(crate) fn rand_alpha(_: &str, args: Args) -> Out {
    s(random(
        int(&arg(args, 0)),
        b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    ))
}

/// `randNumeric`.
pub(crate) fn rand_numeric(_: &str, args: Args) -> Out {
    s(random(int(&arg(args, 0)), b"0123456789"))
}

/// `randAscii`.
pub(crate) fn rand_ascii(_: &str, args: Args) -> Out {
    let printable: Vec<u8> = (b' '..=b'~').collect();
    s(random(int(&arg(args, 0)), &printable))
}

/// `shuffle`.
pub(crate) fn shuffle(_: &str, args: Args) -> Out {
    s(shuffle_text(&arg_text(args, 0)))
}

/// `uuidv4`.
pub(crate) fn uuidv4(_: &str, _: Args) -> Out {
    s(uuid::Uuid::new_v4().to_string())
}

/// `snakecase`.
pub(crate) fn snakecase(_: &str, args: Args) -> Out {
    s(delimited(&arg_text(args, 0), '_'))
}

/// `kebabcase`.
pub(crate) fn kebabcase(_: &str, args: Args) -> Out {
    s(delimited(&arg_text(args, 0), '-'))
}

/// `camelcase`.
pub(crate) fn camelcase(_: &str, args: Args) -> Out {
    s(arg_text(args, 0)
        .split('_')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
                .unwrap_or_default()
        })
        .collect::<String>())
}

/// `wrap`.
pub(crate) fn wrap(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    s(wrap_text(&arg_text(args, 1), int(&args[0]), "\n"))
}

/// `wrapWith`.
pub(crate) fn wrap_with(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    s(wrap_text(
        &arg_text(args, 2),
        int(&args[0]),
        &arg_text(args, 1),
    ))
}

/// `contains`.
pub(crate) fn contains(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(Value::Bool(arg_text(args, 1).contains(&arg_text(args, 0))))
}

/// `hasPrefix`.
pub(crate) fn has_prefix(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(Value::Bool(
        arg_text(args, 1).starts_with(&arg_text(args, 0)),
    ))
}

/// `hasSuffix`.
pub(crate) fn has_suffix(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(Value::Bool(arg_text(args, 1).ends_with(&arg_text(args, 0))))
}

/// `quote`.
pub(crate) fn quote(_: &str, args: Args) -> Out {
    s(quote_all(args))
}

/// `squote`.
pub(crate) fn squote(_: &str, args: Args) -> Out {
    s(args
        .iter()
        .filter(|a| !matches!(a, Value::Nil))
        .map(|a| format!("'{}'", text(a)))
        .collect::<Vec<_>>()
        .join(" "))
}

/// `cat`.
pub(crate) fn cat(_: &str, args: Args) -> Out {
    s(args
        .iter()
        .filter(|a| !matches!(a, Value::Nil))
        .map(text)
        .collect::<Vec<_>>()
        .join(" "))
}

/// `indent`.
pub(crate) fn indent(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    s(indent_text(int(&args[0]), &arg_text(args, 1)))
}

/// `nindent`.
pub(crate) fn nindent(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    s(format!(
        "\n{}",
        indent_text(int(&args[0]), &arg_text(args, 1))
    ))
}

/// `replace`.
pub(crate) fn replace(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    s(arg_text(args, 2).replace(&arg_text(args, 0), &arg_text(args, 1)))
}

/// `plural`.
pub(crate) fn plural(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    s(if int(&args[2]) == 1 {
        arg_text(args, 0)
    } else {
        arg_text(args, 1)
    })
}

/// `sha256sum`.
pub(crate) fn sha256sum(_: &str, args: Args) -> Out {
    s(sha256_hex(&arg_text(args, 0)))
}

/// `sha1sum`.
pub(crate) fn sha1sum(_: &str, args: Args) -> Out {
    s(crate::crypto::sha1_hex(arg_text(args, 0).as_bytes()))
}

/// `adler32sum`.
pub(crate) fn adler32sum(_: &str, args: Args) -> Out {
    s(crate::crypto::adler32(arg_text(args, 0).as_bytes()))
}

/// `randBytes`.
pub(crate) fn rand_bytes(_: &str, args: Args) -> Out {
    let mut bytes = vec![0u8; int(&arg(args, 0)).max(0) as usize];
    getrandom::fill(&mut bytes).map_err(|e| e.to_string())?;
    s(base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        bytes,
    ))
}

/// `toString`.
pub(crate) fn to_string(_: &str, args: Args) -> Out {
    s(arg_text(args, 0))
}

/// `toStrings`.
pub(crate) fn to_strings(_: &str, args: Args) -> Out {
    Ok(str_list(strings(&list(&arg(args, 0))?)))
}

/// `atoi`.
pub(crate) fn atoi(_: &str, args: Args) -> Out {
    Ok(Value::Int(arg_text(args, 0).trim().parse().unwrap_or(0)))
}

/// `int`, `int64`.
pub(crate) fn to_int(_: &str, args: Args) -> Out {
    Ok(Value::Int(int(&arg(args, 0))))
}

/// `float64`.
pub(crate) fn float64(_: &str, args: Args) -> Out {
    Ok(Value::Float(float(&arg(args, 0))))
}

/// `toDecimal`.
pub(crate) fn to_decimal(_: &str, args: Args) -> Out {
    Ok(Value::Int(
        i64::from_str_radix(&arg_text(args, 0), 8).unwrap_or(0),
    ))
}

/// `splitList`.
pub(crate) fn split_list(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(str_list(
        arg_text(args, 1)
            .split(arg_text(args, 0).as_str())
            .map(String::from),
    ))
}

/// `splitn`.
pub(crate) fn splitn(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    let n = int(&args[1]);
    let whole = arg_text(args, 2);
    let parts: Vec<String> = if n < 0 {
        whole
            .split(arg_text(args, 0).as_str())
            .map(String::from)
            .collect()
    } else {
        whole
            .splitn(n as usize, arg_text(args, 0).as_str())
            .map(String::from)
            .collect()
    };
    Ok(indexed(parts))
}

/// `sortAlpha`.
pub(crate) fn sort_alpha(_: &str, args: Args) -> Out {
    let mut items = match arg(args, 0) {
        Value::List(items) => strings(&items),
        other => vec![text(&other)],
    };
    items.sort();
    Ok(str_list(items))
}

/// `abbrev`.
pub(crate) fn abbrev(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    s(abbrev_text(&arg_text(args, 1), int(&args[0])))
}

/// `abbrevboth`.
pub(crate) fn abbrevboth(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    s(abbrev_both(
        &arg_text(args, 2),
        int(&args[0]),
        int(&args[1]),
    ))
}

/// `trunc`.
pub(crate) fn trunc(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let (c, whole) = (int(&args[0]), arg_text(args, 1));
    let len = whole.len() as i64;
    s(if c < 0 && len + c > 0 {
        whole
            .get((len + c) as usize..)
            .unwrap_or(&whole)
            .to_string()
    } else if c >= 0 && len > c {
        whole.get(..c as usize).unwrap_or(&whole).to_string()
    } else {
        whole
    })
}

pub(super) fn substr_text(start: i64, end: i64, t: &str) -> String {
    let len = t.len() as i64;
    let get = |a: i64, b: i64| {
        t.get(a as usize..b as usize)
            .unwrap_or_default()
            .to_string()
    };
    if start < 0 {
        return get(0, end.clamp(0, len));
    }
    if end < 0 || end > len {
        return get(start.min(len), len);
    }
    get(start.min(end), end)
}

pub(super) fn title_text(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut previous: Option<char> = None;
    for c in t.chars() {
        let at_word_start =
            previous.is_none_or(|p| !(p.is_alphanumeric() || p == '_' || p == '\''));
        if at_word_start {
            out.push_str(&simple_case(&c.to_string(), true));
        } else {
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

pub(super) fn untitle_text(t: &str) -> String {
    let mut out = String::with_capacity(t.len());
    let mut previous: Option<char> = None;
    for c in t.chars() {
        if previous.is_none_or(char::is_whitespace) {
            out.push_str(&simple_case(&c.to_string(), false));
        } else {
            out.push(c);
        }
        previous = Some(c);
    }
    out
}

/// `snakecase`/`kebabcase`: words split before an upper-case letter that
/// follows a lower-case letter or digit, or starts a new word after an
/// acronym; spaces, `-` and `_` separate too.
pub(super) fn delimited(t: &str, delimiter: char) -> String {
    let chars: Vec<char> = t.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c == ' ' || c == '-' || c == '_' {
            if !out.is_empty() && !out.ends_with(delimiter) {
                out.push(delimiter);
            }
            continue;
        }
        if c.is_uppercase() && i > 0 {
            let before = chars[i - 1];
            let after = chars.get(i + 1).copied();
            let boundary = before.is_lowercase()
                || before.is_ascii_digit()
                || (before.is_uppercase() && after.is_some_and(char::is_lowercase));
            if boundary && !out.ends_with(delimiter) {
                out.push(delimiter);
            }
        }
        out.push_str(&simple_case(&c.to_string(), false));
    }
    out
}

/// Word wrap at `width` (commons-lang `WordUtils.wrap`, long words kept).
pub(super) fn wrap_text(t: &str, width: i64, newline: &str) -> String {
    let width = width.max(1) as usize;
    let chars: Vec<char> = t.chars().collect();
    let mut out = String::new();
    let mut offset = 0;
    while chars.len() - offset > width {
        if chars[offset] == ' ' {
            offset += 1;
            continue;
        }
        let window_end = (offset + width + 1).min(chars.len());
        match chars[offset..window_end].iter().rposition(|&c| c == ' ') {
            Some(space) => {
                out.extend(&chars[offset..offset + space]);
                out.push_str(newline);
                offset += space + 1;
            }
            None => match chars[offset + width..].iter().position(|&c| c == ' ') {
                Some(space) => {
                    out.extend(&chars[offset..offset + width + space]);
                    out.push_str(newline);
                    offset += width + space + 1;
                }
                None => break,
            },
        }
    }
    out.extend(&chars[offset..]);
    out
}

pub(super) fn abbrev_text(t: &str, width: i64) -> String {
    if width < 4 || t.len() as i64 <= width {
        return t.to_string();
    }
    format!("{}...", t.get(..(width - 3) as usize).unwrap_or(t))
}

pub(super) fn abbrev_both(t: &str, offset: i64, width: i64) -> String {
    let len = t.len() as i64;
    if width < 4 || len <= width {
        return t.to_string();
    }
    let mut offset = offset.min(len);
    if len - offset < width - 3 {
        offset = len - (width - 3);
    }
    if offset <= 4 {
        return format!("{}...", t.get(..(width - 3) as usize).unwrap_or(t));
    }
    if width < 7 {
        return t.to_string();
    }
    if offset + width - 3 < len {
        return format!(
            "...{}",
            abbrev_text(t.get(offset as usize..).unwrap_or(t), width - 3)
        );
    }
    format!("...{}", t.get((len - (width - 3)) as usize..).unwrap_or(t))
}

pub(super) fn indent_text(n: i64, t: &str) -> String {
    let pad = " ".repeat(n.max(0) as usize);
    format!("{pad}{}", t.replace('\n', &format!("\n{pad}")))
}

pub(super) fn random_index(bound: usize) -> usize {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0;
    }
    (u64::from_le_bytes(bytes) % bound as u64) as usize
}

pub(super) fn random(count: i64, alphabet: &[u8]) -> String {
    (0..count.max(0))
        .map(|_| alphabet[random_index(alphabet.len())] as char)
        .collect()
}

pub(super) fn shuffle_text(t: &str) -> String {
    let mut chars: Vec<char> = t.chars().collect();
    for i in (1..chars.len()).rev() {
        chars.swap(i, random_index(i + 1));
    }
    chars.into_iter().collect()
}
