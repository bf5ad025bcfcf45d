//! Sprig's defaults, encodings (JSON, base64, base32), reflection, the
//! environment, paths, and the ciphers (`derivePassword`, `encryptAES`).

use super::{arg, arg_text, empty, int, s, Args, Out};
use crate::funcs::{self, at_least, json, want};
use crate::value::Value;
use regex::Regex;

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

/// `derivePassword`.
pub(crate) fn derive_password(name: &str, args: Args) -> Out {
    want(name, args, 5)?;
    crate::crypto::derive_password(
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
    crate::crypto::encrypt_aes(&arg_text(args, 0), &arg_text(args, 1)).map(Value::Str)
}

/// `decryptAES`.
pub(crate) fn decrypt_a_e_s(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    crate::crypto::decrypt_aes(&arg_text(args, 0), &arg_text(args, 1)).map(Value::Str)
}

const BASE32: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

pub(super) fn base32_encode(bytes: &[u8]) -> String {
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

pub(super) fn base32_decode(t: &str) -> Option<Vec<u8>> {
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
pub(super) fn expand_env(t: &str) -> String {
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
pub(super) fn path_clean(p: &str) -> String {
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

pub(super) fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let trimmed = p.trim_end_matches('/');
    if trimmed.is_empty() {
        return "/".into();
    }
    trimmed.rsplit('/').next().unwrap_or(trimmed).to_string()
}

pub(super) fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}
