//! What the built-in functions and Sprig's share: argument checks, the
//! text of a value, the JSON, base64 and SHA-256 encoders, and the Sprig
//! functions hub does not have.

use crate::printf::go_quote;
use crate::value::{to_json, Value};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;

type Args<'a> = &'a [Value];

/// Sprig v2.22 text functions this hub does not offer; a template naming
/// one fails to parse, as for any unknown function.
pub const MISSING: &[&str] = &[
    "genPrivateKey",
    "genCA",
    "genSelfSignedCert",
    "genSignedCert",
    "buildCustomCert",
    "getHostByName",
];

pub fn want(name: &str, args: Args, n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ))
    }
}

pub fn at_least(name: &str, args: Args, n: usize) -> Result<(), String> {
    if args.len() >= n {
        Ok(())
    } else {
        Err(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            args.len()
        ))
    }
}

/// The text of a value (Sprig's `strval`).
pub fn text(value: &Value) -> String {
    match value {
        Value::Nil => String::new(),
        other => other.to_go_string(),
    }
}

/// `strconv.Quote` of each value's text, space-separated (Sprig `quote`).
pub fn quote_all(args: Args) -> String {
    args.iter()
        .filter(|a| !matches!(a, Value::Nil))
        .map(|a| go_quote(&text(a)))
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn json(value: &Value, pretty: bool) -> String {
    to_json(value, pretty.then_some("  "))
}

pub fn b64enc(s: &str) -> String {
    STANDARD.encode(s)
}

pub fn b64dec(s: &str) -> String {
    match STANDARD.decode(s) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) => e.to_string(),
    }
}

pub fn sha256_hex(s: &str) -> String {
    Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn map_of(pairs: impl IntoIterator<Item = (String, Value)>) -> Value {
    Value::Map(pairs.into_iter().collect::<BTreeMap<_, _>>())
}
