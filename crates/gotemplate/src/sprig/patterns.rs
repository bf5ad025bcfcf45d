//! Sprig's regular expressions, `semver` and URLs.

use super::{arg, arg_text, dict, int, s, str_list, Args, Out};
use crate::funcs::{map_of, text};
use crate::value::Value;
use regex::Regex;
use std::collections::BTreeMap;

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
    crate::semver::parse(&arg_text(args, 0)).map(|v| v.to_value())
}

/// `semverCompare`.
pub(crate) fn semver_compare(_: &str, args: Args) -> Out {
    crate::semver::matches(&arg_text(args, 0), &arg_text(args, 1)).map(Value::Bool)
}

/// `urlParse`.
pub(crate) fn url_parse(_: &str, args: Args) -> Out {
    parse_url(&arg_text(args, 0))
}

/// `urlJoin`.
pub(crate) fn url_join(_: &str, args: Args) -> Out {
    join_url(&dict(&arg(args, 0))?)
}

pub(super) fn regex(pattern: &str) -> Result<Regex, String> {
    Regex::new(pattern).map_err(|e| format!("bad regular expression: {e}"))
}

/// Sprig's `urlParse`: the parts of a URL as a dict.
pub(super) fn parse_url(raw: &str) -> Out {
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

pub(super) fn join_url(parts: &BTreeMap<String, Value>) -> Out {
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
