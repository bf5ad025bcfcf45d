//! The Sprig and hub template functions, one small function each; the
//! names that call them are listed once, in [`crate::table::SPRIG`].
//!
//! Sprig v2.22's text functions and the hub's own (`bcrypt`, the
//! successor's `split`/`compact`/`join`/`first`, `formatSubdomain`,
//! `unquote`), as `go` templates see them. Sprig converts its arguments
//! loosely (a number where text is wanted is printed), so these do too.

use super::funcs::{self, at_least, json, map_of, quote_all, sha256_hex, text, want};
use super::time;
use super::value::Value;
use regex::Regex;
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

// ---- hub

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

// ---- strings

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
    s(super::crypto::sha1_hex(arg_text(args, 0).as_bytes()))
}

/// `adler32sum`.
pub(crate) fn adler32sum(_: &str, args: Args) -> Out {
    s(super::crypto::adler32(arg_text(args, 0).as_bytes()))
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

// ---- defaults and encodings

/// `default`.
pub(crate) fn default(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    Ok(match args.get(1) {
        Some(given) if !empty(given) => given.clone(),
        _ => args[0].clone(),
    })
}

/// `empty`.
pub(crate) fn is_empty(_: &str, args: Args) -> Out {
    Ok(Value::Bool(empty(&arg(args, 0))))
}

/// `coalesce`.
pub(crate) fn coalesce(_: &str, args: Args) -> Out {
    Ok(args
        .iter()
        .find(|a| !empty(a))
        .cloned()
        .unwrap_or(Value::Nil))
}

/// `toJson`, `mustToJson`.
pub(crate) fn to_json(_: &str, args: Args) -> Out {
    s(json(&arg(args, 0), false))
}

/// `toPrettyJson`, `mustToPrettyJson`.
pub(crate) fn to_pretty_json(_: &str, args: Args) -> Out {
    s(json(&arg(args, 0), true))
}

/// `toRawJson`, `mustToRawJson`.
pub(crate) fn to_raw_json(_: &str, args: Args) -> Out {
    s(json(&arg(args, 0), false)
        .replace("\\u003c", "<")
        .replace("\\u003e", ">")
        .replace("\\u0026", "&"))
}

/// `fromJson`.
pub(crate) fn from_json(_: &str, args: Args) -> Out {
    let parsed: yaml_serde::Value =
        serde_json::from_str(&arg_text(args, 0)).map_err(|e| e.to_string())?;
    Ok(Value::from_yaml(&parsed, false))
}

/// `ternary`.
pub(crate) fn ternary(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    Ok(if args[2].truthy() {
        args[0].clone()
    } else {
        args[1].clone()
    })
}

/// `b64enc`.
pub(crate) fn b64enc(_: &str, args: Args) -> Out {
    s(funcs::b64enc(&arg_text(args, 0)))
}

/// `b64dec`.
pub(crate) fn b64dec(_: &str, args: Args) -> Out {
    s(funcs::b64dec(&arg_text(args, 0)))
}

/// `b32enc`.
pub(crate) fn b32enc(_: &str, args: Args) -> Out {
    s(base32_encode(arg_text(args, 0).as_bytes()))
}

/// `b32dec`.
pub(crate) fn b32dec(_: &str, args: Args) -> Out {
    s(base32_decode(&arg_text(args, 0))
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|| "illegal base32 data".into()))
}

/// `typeOf`.
pub(crate) fn type_of(_: &str, args: Args) -> Out {
    s(arg(args, 0).type_name())
}

/// `kindOf`.
pub(crate) fn kind_of(_: &str, args: Args) -> Out {
    s(arg(args, 0).kind_name())
}

/// `typeIs`.
pub(crate) fn type_is(_: &str, args: Args) -> Out {
    Ok(Value::Bool(arg_text(args, 0) == arg(args, 1).type_name()))
}

/// `typeIsLike`.
pub(crate) fn type_is_like(_: &str, args: Args) -> Out {
    let target = arg_text(args, 0);
    let actual = arg(args, 1).type_name();
    Ok(Value::Bool(
        target == actual || target == format!("*{actual}"),
    ))
}

/// `kindIs`.
pub(crate) fn kind_is(_: &str, args: Args) -> Out {
    Ok(Value::Bool(arg_text(args, 0) == arg(args, 1).kind_name()))
}

/// `deepEqual`.
pub(crate) fn deep_equal(_: &str, args: Args) -> Out {
    Ok(Value::Bool(arg(args, 0) == arg(args, 1)))
}

/// `env`.
pub(crate) fn env(_: &str, args: Args) -> Out {
    s(std::env::var(arg_text(args, 0)).unwrap_or_default())
}

/// `expandenv`.
pub(crate) fn expandenv(_: &str, args: Args) -> Out {
    s(expand_env(&arg_text(args, 0)))
}

/// `base`.
pub(crate) fn base(_: &str, args: Args) -> Out {
    s(path_base(&arg_text(args, 0)))
}

/// `dir`.
pub(crate) fn dir(_: &str, args: Args) -> Out {
    s(path_dir(&arg_text(args, 0)))
}

/// `clean`.
pub(crate) fn clean(_: &str, args: Args) -> Out {
    s(path_clean(&arg_text(args, 0)))
}

/// `ext`.
pub(crate) fn ext(_: &str, args: Args) -> Out {
    let p = arg_text(args, 0);
    let last = p.rfind('/').map(|i| i + 1).unwrap_or(0);
    s(p[last..]
        .rfind('.')
        .map(|i| p[last + i..].to_string())
        .unwrap_or_default())
}

/// `isAbs`.
pub(crate) fn is_abs(_: &str, args: Args) -> Out {
    Ok(Value::Bool(arg_text(args, 0).starts_with('/')))
}

/// `fail`.
pub(crate) fn fail(_: &str, args: Args) -> Out {
    Err(arg_text(args, 0))
}

// ---- crypto

/// `derivePassword`.
pub(crate) fn derive_password(name: &str, args: Args) -> Out {
    want(name, args, 5)?;
    super::crypto::derive_password(
        int(&args[0]) as u32,
        &arg_text(args, 1),
        &arg_text(args, 2),
        &arg_text(args, 3),
        &arg_text(args, 4),
    )
    .map(Value::Str)
}

/// `encryptAES`.
pub(crate) fn encrypt_a_e_s(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    super::crypto::encrypt_aes(&arg_text(args, 0), &arg_text(args, 1)).map(Value::Str)
}

/// `decryptAES`.
pub(crate) fn decrypt_a_e_s(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    super::crypto::decrypt_aes(&arg_text(args, 0), &arg_text(args, 1)).map(Value::Str)
}

// ---- dates

/// `toDate`, `mustToDate`.
pub(crate) fn to_date(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    time::parse(&arg_text(args, 0), &arg_text(args, 1)).map(|v| Value::Time(Box::new(v)))
}

/// `now`.
pub(crate) fn now(_: &str, _: Args) -> Out {
    Ok(Value::Time(Box::new(time::now())))
}

/// `date`, `htmlDate`.
pub(crate) fn date(name: &str, args: Args) -> Out {
    let (layout, at) = if name == "date" {
        (arg_text(args, 0), arg(args, 1))
    } else {
        ("2006-01-02".into(), arg(args, 0))
    };
    let when = super::value::time_of(&at)?.in_zone("Local")?;
    s(time::format(&layout, &when))
}

/// `dateInZone`, `date_in_zone`, `htmlDateInZone`.
pub(crate) fn date_in_zone(name: &str, args: Args) -> Out {
    let (layout, at, zone) = if name == "htmlDateInZone" {
        ("2006-01-02".into(), arg(args, 0), arg_text(args, 1))
    } else {
        (arg_text(args, 0), arg(args, 1), arg_text(args, 2))
    };
    let when = super::value::time_of(&at)?.in_zone(&zone)?;
    s(time::format(&layout, &when))
}

/// `unixEpoch`.
pub(crate) fn unix_epoch(_: &str, args: Args) -> Out {
    s(super::value::time_of(&arg(args, 0))?.seconds.to_string())
}

/// `dateModify`, `date_modify`, `mustDateModify`.
pub(crate) fn date_modify(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let when = super::value::time_of(&args[1])?;
    match time::parse_duration(&arg_text(args, 0)) {
        Ok(nanos) => Ok(Value::Time(Box::new(time::add(&when, nanos)))),
        Err(e) if name == "mustDateModify" => Err(e),
        Err(_) => Ok(Value::Time(Box::new(when))),
    }
}

/// `ago`.
pub(crate) fn ago(_: &str, args: Args) -> Out {
    let when = super::value::time_of(&arg(args, 0))?;
    let seconds = time::now().seconds - when.seconds;
    s(go_duration(seconds as i128 * 1_000_000_000))
}

/// `duration`.
pub(crate) fn duration(_: &str, args: Args) -> Out {
    s(go_duration(int(&arg(args, 0)) as i128 * 1_000_000_000))
}

/// `durationRound`.
pub(crate) fn duration_round(_: &str, args: Args) -> Out {
    let nanos = match arg(args, 0) {
        Value::Str(text) => time::parse_duration(&text).unwrap_or(0),
        Value::Int(n) => n as i128,
        Value::Time(at) => {
            let now = time::now();
            (now.seconds - at.seconds) as i128 * 1_000_000_000
        }
        _ => 0,
    };
    s(round_duration(nanos.unsigned_abs()))
}

// ---- numbers

/// `add`.
pub(crate) fn add(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).sum()))
}

/// `add1`.
pub(crate) fn add1(_: &str, args: Args) -> Out {
    Ok(Value::Int(int(&arg(args, 0)) + 1))
}

/// `sub`.
pub(crate) fn sub(_: &str, args: Args) -> Out {
    Ok(Value::Int(int(&arg(args, 0)) - int(&arg(args, 1))))
}

/// `mul`.
pub(crate) fn mul(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).product()))
}

/// `div`, `mod`.
pub(crate) fn div(name: &str, args: Args) -> Out {
    let divisor = int(&arg(args, 1));
    if divisor == 0 {
        return Err("integer divide by zero".into());
    }
    Ok(Value::Int(if name == "div" {
        int(&arg(args, 0)) / divisor
    } else {
        int(&arg(args, 0)) % divisor
    }))
}

/// `max`, `biggest`.
pub(crate) fn max(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).max().unwrap_or(0)))
}

/// `min`.
pub(crate) fn min(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).min().unwrap_or(0)))
}

/// `ceil`.
pub(crate) fn ceil(_: &str, args: Args) -> Out {
    Ok(Value::Float(float(&arg(args, 0)).ceil()))
}

/// `floor`.
pub(crate) fn floor(_: &str, args: Args) -> Out {
    Ok(Value::Float(float(&arg(args, 0)).floor()))
}

/// `round`.
pub(crate) fn round(_: &str, args: Args) -> Out {
    let places = int(&arg(args, 1)) as i32;
    let factor = 10f64.powi(places);
    Ok(Value::Float(
        (float(&arg(args, 0)) * factor).round() / factor,
    ))
}

/// `until`.
pub(crate) fn until(_: &str, args: Args) -> Out {
    Ok(Value::List(range_step(
        0,
        int(&arg(args, 0)),
        if int(&arg(args, 0)) < 0 { -1 } else { 1 },
    )))
}

/// `untilStep`.
pub(crate) fn until_step(_: &str, args: Args) -> Out {
    Ok(Value::List(range_step(
        int(&arg(args, 0)),
        int(&arg(args, 1)),
        int(&arg(args, 2)),
    )))
}

// ---- lists

/// `list`, `tuple`.
pub(crate) fn list_of(_: &str, args: Args) -> Out {
    Ok(Value::List(args.to_vec()))
}

/// `push`, `append`.
pub(crate) fn push(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let mut items = list(&args[0])?;
    items.push(args[1].clone());
    Ok(Value::List(items))
}

/// `prepend`.
pub(crate) fn prepend(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let mut items = list(&args[0])?;
    items.insert(0, args[1].clone());
    Ok(Value::List(items))
}

/// `rest`.
pub(crate) fn rest(_: &str, args: Args) -> Out {
    Ok(Value::List(
        list(&arg(args, 0))?.into_iter().skip(1).collect(),
    ))
}

/// `last`.
pub(crate) fn last(_: &str, args: Args) -> Out {
    Ok(list(&arg(args, 0))?.pop().unwrap_or(Value::Nil))
}

/// `initial`.
pub(crate) fn initial(_: &str, args: Args) -> Out {
    let mut items = list(&arg(args, 0))?;
    items.pop();
    Ok(Value::List(items))
}

/// `reverse`.
pub(crate) fn reverse(_: &str, args: Args) -> Out {
    Ok(Value::List(
        list(&arg(args, 0))?.into_iter().rev().collect(),
    ))
}

/// `uniq`.
pub(crate) fn uniq(_: &str, args: Args) -> Out {
    let mut out: Vec<Value> = Vec::new();
    for item in list(&arg(args, 0))? {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(Value::List(out))
}

/// `without`.
pub(crate) fn without(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    Ok(Value::List(
        list(&args[0])?
            .into_iter()
            .filter(|i| !args[1..].contains(i))
            .collect(),
    ))
}

/// `has`.
pub(crate) fn has(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(Value::Bool(list(&args[1])?.contains(&args[0])))
}

/// `concat`.
pub(crate) fn concat(_: &str, args: Args) -> Out {
    let mut out = Vec::new();
    for a in args {
        out.extend(list(a)?);
    }
    Ok(Value::List(out))
}

// ---- dicts

/// `dict`.
pub(crate) fn dict_of(_: &str, args: Args) -> Out {
    Ok(map_of(args.chunks(2).map(|pair| {
        (text(&pair[0]), pair.get(1).cloned().unwrap_or(Value::Nil))
    })))
}

/// `get`.
pub(crate) fn get(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(dict(&args[0])?
        .remove(&arg_text(args, 1))
        .unwrap_or(Value::Str(String::new())))
}

/// `set`.
pub(crate) fn set(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    let mut map = dict(&args[0])?;
    map.insert(arg_text(args, 1), args[2].clone());
    Ok(Value::Map(map))
}

/// `unset`.
pub(crate) fn unset(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let mut map = dict(&args[0])?;
    map.remove(&arg_text(args, 1));
    Ok(Value::Map(map))
}

/// `hasKey`.
pub(crate) fn has_key(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(Value::Bool(
        dict(&args[0])?.contains_key(&arg_text(args, 1)),
    ))
}

/// `pluck`.
pub(crate) fn pluck(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    let key = arg_text(args, 0);
    let mut out = Vec::new();
    for d in &args[1..] {
        if let Some(v) = dict(d)?.remove(&key) {
            out.push(v);
        }
    }
    Ok(Value::List(out))
}

/// `keys`.
pub(crate) fn keys(_: &str, args: Args) -> Out {
    let mut out = Vec::new();
    for d in args {
        out.extend(dict(d)?.into_keys().map(Value::Str));
    }
    Ok(Value::List(out))
}

/// `values`.
pub(crate) fn values(_: &str, args: Args) -> Out {
    Ok(Value::List(dict(&arg(args, 0))?.into_values().collect()))
}

/// `pick`, `omit`.
pub(crate) fn pick(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    let wanted = strings(&args[1..]);
    let keep = name == "pick";
    Ok(Value::Map(
        dict(&args[0])?
            .into_iter()
            .filter(|(k, _)| wanted.contains(k) == keep)
            .collect(),
    ))
}

/// `merge`, `mergeOverwrite`.
pub(crate) fn merge(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    let mut out = dict(&args[0])?;
    for source in &args[1..] {
        merge_into(&mut out, &dict(source)?, name == "mergeOverwrite");
    }
    Ok(Value::Map(out))
}

/// `deepCopy`.
pub(crate) fn deep_copy(_: &str, args: Args) -> Out {
    Ok(arg(args, 0))
}

// ---- regex, semver, urls

/// `regexMatch`.
pub(crate) fn regex_match(_: &str, args: Args) -> Out {
    Ok(Value::Bool(
        regex(&arg_text(args, 0))?.is_match(&arg_text(args, 1)),
    ))
}

/// `regexFind`.
pub(crate) fn regex_find(_: &str, args: Args) -> Out {
    s(regex(&arg_text(args, 0))?
        .find(&arg_text(args, 1))
        .map(|m| m.as_str().to_string())
        .unwrap_or_default())
}

/// `regexFindAll`.
pub(crate) fn regex_find_all(_: &str, args: Args) -> Out {
    let re = regex(&arg_text(args, 0))?;
    let whole = arg_text(args, 1);
    let n = int(&arg(args, 2));
    let found = re.find_iter(&whole).map(|m| m.as_str().to_string());
    Ok(str_list(if n < 0 {
        found.collect::<Vec<_>>()
    } else {
        found.take(n as usize).collect()
    }))
}

/// `regexReplaceAll`.
pub(crate) fn regex_replace_all(_: &str, args: Args) -> Out {
    s(regex(&arg_text(args, 0))?
        .replace_all(&arg_text(args, 1), arg_text(args, 2).as_str())
        .into_owned())
}

/// `regexReplaceAllLiteral`.
pub(crate) fn regex_replace_all_literal(_: &str, args: Args) -> Out {
    s(regex(&arg_text(args, 0))?
        .replace_all(&arg_text(args, 1), regex::NoExpand(&arg_text(args, 2)))
        .into_owned())
}

/// `regexSplit`.
pub(crate) fn regex_split(_: &str, args: Args) -> Out {
    let re = regex(&arg_text(args, 0))?;
    let whole = arg_text(args, 1);
    let n = int(&arg(args, 2));
    let parts: Vec<String> = if n == 0 {
        Vec::new()
    } else if n < 0 {
        re.split(&whole).map(String::from).collect()
    } else {
        re.splitn(&whole, n as usize).map(String::from).collect()
    };
    Ok(str_list(parts))
}

/// `semver`.
pub(crate) fn semver(_: &str, args: Args) -> Out {
    super::semver::parse(&arg_text(args, 0)).map(|v| v.to_value())
}

/// `semverCompare`.
pub(crate) fn semver_compare(_: &str, args: Args) -> Out {
    super::semver::matches(&arg_text(args, 0), &arg_text(args, 1)).map(Value::Bool)
}

/// `urlParse`.
pub(crate) fn url_parse(_: &str, args: Args) -> Out {
    parse_url(&arg_text(args, 0))
}

/// `urlJoin`.
pub(crate) fn url_join(_: &str, args: Args) -> Out {
    join_url(&dict(&arg(args, 0))?)
}

/// Sprig's `durationRound`: the largest whole unit (`y` = 365 days, `mo`
/// = 30 days, `d`, `h`, `m`, `s`).
fn round_duration(nanos: u128) -> String {
    const SECOND: u128 = 1_000_000_000;
    const UNITS: [(u128, &str); 6] = [
        (SECOND * 3600 * 24 * 365, "y"),
        (SECOND * 3600 * 24 * 30, "mo"),
        (SECOND * 3600 * 24, "d"),
        (SECOND * 3600, "h"),
        (SECOND * 60, "m"),
        (SECOND, "s"),
    ];
    UNITS
        .iter()
        .find(|(size, _)| nanos > *size)
        .map(|(size, unit)| format!("{}{unit}", nanos / size))
        .unwrap_or_else(|| "0s".into())
}

/// `time.Duration.String`: `1h30m0s`, `2m5s`, `0s`.
fn go_duration(nanos: i128) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let abs = nanos.unsigned_abs();
    if abs < 1_000_000_000 {
        return format!("{sign}{}s", super::value::go_float(abs as f64 / 1e9));
    }
    let seconds = abs / 1_000_000_000;
    let fraction = abs % 1_000_000_000;
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let s = if fraction == 0 {
        s.to_string()
    } else {
        format!("{s}.{}", format!("{fraction:09}").trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => format!("{sign}{s}s"),
        (0, m) => format!("{sign}{m}m{s}s"),
        (h, m) => format!("{sign}{h}h{m}m{s}s"),
    }
}

/// Whole maps of `source` merged into `target`; `overwrite` lets the
/// source win on leaves.
fn merge_into(
    target: &mut BTreeMap<String, Value>,
    source: &BTreeMap<String, Value>,
    overwrite: bool,
) {
    for (key, value) in source {
        match (target.get_mut(key), value) {
            (Some(Value::Map(inner)), Value::Map(more)) => merge_into(inner, more, overwrite),
            (Some(slot), _) if overwrite => *slot = value.clone(),
            (Some(slot), _) if empty(slot) => *slot = value.clone(),
            (Some(_), _) => {}
            (None, _) => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}

fn regex(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("bad regular expression: {e}"))
}

fn range_step(start: i64, stop: i64, step: i64) -> Vec<Value> {
    let mut out = Vec::new();
    if step == 0 {
        return out;
    }
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(Value::Int(i));
        i += step;
    }
    out
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
fn unquote_text(t: &str) -> String {
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
        if let Ok(parsed) = super::parse::parse(&literal) {
            if let [super::parse::Node::Action(pipe)] = parsed.body.as_slice() {
                if let [command] = pipe.commands.as_slice() {
                    if let [operand] = command.operands.as_slice() {
                        if let super::parse::Term::Literal(Value::Str(s)) = &operand.term {
                            return s.clone();
                        }
                        if let super::parse::Term::Literal(Value::Int(c)) = &operand.term {
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

fn substr_text(start: i64, end: i64, t: &str) -> String {
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

fn title_text(t: &str) -> String {
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

fn untitle_text(t: &str) -> String {
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
fn delimited(t: &str, delimiter: char) -> String {
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
fn wrap_text(t: &str, width: i64, newline: &str) -> String {
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

fn abbrev_text(t: &str, width: i64) -> String {
    if width < 4 || t.len() as i64 <= width {
        return t.to_string();
    }
    format!("{}...", t.get(..(width - 3) as usize).unwrap_or(t))
}

fn abbrev_both(t: &str, offset: i64, width: i64) -> String {
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

fn indent_text(n: i64, t: &str) -> String {
    let pad = " ".repeat(n.max(0) as usize);
    format!("{pad}{}", t.replace('\n', &format!("\n{pad}")))
}

fn random_index(bound: usize) -> usize {
    let mut bytes = [0u8; 8];
    if getrandom::fill(&mut bytes).is_err() {
        return 0;
    }
    (u64::from_le_bytes(bytes) % bound as u64) as usize
}

fn random(count: i64, alphabet: &[u8]) -> String {
    (0..count.max(0))
        .map(|_| alphabet[random_index(alphabet.len())] as char)
        .collect()
}

fn shuffle_text(t: &str) -> String {
    let mut chars: Vec<char> = t.chars().collect();
    for i in (1..chars.len()).rev() {
        chars.swap(i, random_index(i + 1));
    }
    chars.into_iter().collect()
}

const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

fn base32_encode(bytes: &[u8]) -> String {
    let mut out = String::new();
    for chunk in bytes.chunks(5) {
        let mut block = [0u8; 5];
        block[..chunk.len()].copy_from_slice(chunk);
        let bits = block.iter().fold(0u64, |acc, &b| (acc << 8) | b as u64);
        let symbols = (chunk.len() * 8).div_ceil(5);
        for i in 0..8 {
            if i < symbols {
                out.push(BASE32[((bits >> (35 - i * 5)) & 31) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn base32_decode(t: &str) -> Option<Vec<u8>> {
    let mut bits = 0u64;
    let mut count = 0;
    let mut out = Vec::new();
    for c in t.trim_end_matches('=').bytes() {
        let v = BASE32.iter().position(|&b| b == c)? as u64;
        bits = (bits << 5) | v;
        count += 5;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    Some(out)
}

/// `os.ExpandEnv`: `$NAME` and `${NAME}`, unset names empty.
fn expand_env(t: &str) -> String {
    static VAR: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"\$(?:\{([^}]*)\}|([A-Za-z0-9_]+))").expect("valid pattern")
    });
    VAR.replace_all(t, |c: &regex::Captures| {
        let name = c
            .get(1)
            .or_else(|| c.get(2))
            .map(|m| m.as_str())
            .unwrap_or_default();
        std::env::var(name).unwrap_or_default()
    })
    .into_owned()
}

/// Go's `path.Clean`.
fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

/// Sprig's `urlParse`: the parts of a URL as a dict.
fn parse_url(raw: &str) -> Out {
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once(':') {
        Some((scheme, after))
            if !scheme.is_empty()
                && scheme
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c)) =>
        {
            (scheme, after)
        }
        _ => ("", rest),
    };
    let (authority, path, opaque) = match rest.strip_prefix("//") {
        Some(after) => {
            let end = after.find('/').unwrap_or(after.len());
            (&after[..end], &after[end..], "")
        }
        None if !scheme.is_empty() && !rest.starts_with('/') => ("", "", rest),
        None => ("", rest, ""),
    };
    let (userinfo, host) = authority.rsplit_once('@').unwrap_or(("", authority));
    let hostname = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(h, _)| h),
    };
    Ok(map_of(
        [
            ("scheme", scheme),
            ("host", host),
            ("hostname", hostname),
            ("path", path),
            ("query", query),
            ("opaque", opaque),
            ("fragment", fragment),
            ("userinfo", userinfo),
        ]
        .map(|(k, v)| (k.to_string(), Value::str(v))),
    ))
}

fn join_url(parts: &BTreeMap<String, Value>) -> Out {
    let get = |k: &str| parts.get(k).map(text).unwrap_or_default();
    let mut out = String::new();
    if !get("scheme").is_empty() {
        out.push_str(&format!("{}:", get("scheme")));
    }
    if !get("host").is_empty() {
        out.push_str("//");
        if !get("userinfo").is_empty() {
            out.push_str(&format!("{}@", get("userinfo")));
        }
        out.push_str(&get("host"));
    }
    out.push_str(&get("path"));
    if !get("query").is_empty() {
        out.push_str(&format!("?{}", get("query")));
    }
    if !get("fragment").is_empty() {
        out.push_str(&format!("#{}", get("fragment")));
    }
    s(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn successor_functions() {
        let subdomain =
            |args: &[Value]| format_subdomain("formatSubdomain", args).expect("formatSubdomain");
        assert_eq!(subdomain(&[Value::str("--a b c--")]), Value::str("a-b-c"));
        assert_eq!(subdomain(&[Value::str("12a3 b c4")]), Value::str("a3-b-c4"));
        assert_eq!(subdomain(&[Value::str("A B  c")]), Value::str("a-b-c"));
        assert_eq!(
            subdomain(&[Value::str("a b c"), Value::Int(3)]),
            Value::str("a-b")
        );
        assert_eq!(
            subdomain(&[Value::str("a b c"), Value::str("3"), Value::str("_")]),
            Value::str("a_b")
        );
        assert_eq!(
            subdomain(&[Value::str("orbitApi.corp")]),
            Value::str("orbit-api-corp")
        );
        assert_eq!(unquote_text("'a'"), "a");
        assert_eq!(unquote_text("\"a'b\""), "a'b");
        assert_eq!(unquote_text("a\""), "a\"");
        assert_eq!(unquote_text("plain"), "plain");
    }

    #[test]
    fn words_and_paths() {
        assert_eq!(
            wrap_text("the quick brown fox jumped over lazy dogs", 10, "\n"),
            "the quick\nbrown fox\njumped\nover lazy\ndogs"
        );
        assert_eq!(delimited("OrbitApiServer2Go", '_'), "orbit_api_server2_go");
        assert_eq!(base32_encode(b"orbit-api"), "N5ZGE2LUFVQXA2I=");
        assert_eq!(
            path_clean("/srv/data/./logs/../archive"),
            "/srv/data/archive"
        );
        assert_eq!(
            abbrev_both("1234 5678 9123 4567 8912", 5, 14),
            "...5678 912..."
        );
    }
}
