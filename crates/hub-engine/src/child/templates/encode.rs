//! The encodings a `${name | encoding}` substitution applies: base64, JSON,
//! YAML, the first item, parts of a URL.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use gotemplate::{value::to_json, Value as GoValue};
use hub_params::format::substitution_text;
use yaml_serde::Value;

/// A value as the reference prints it: scalars as text, lists and maps as
/// Go prints them (`[a b]`, `map[k:v]`).
pub(super) fn plain_text(value: Option<&Value>) -> String {
    match value {
        Some(v @ (Value::Sequence(_) | Value::Mapping(_))) => {
            GoValue::from_yaml(v, false).to_go_string()
        }
        other => substitution_text(other),
    }
}

/// A value part-way through its encodings.
pub(super) enum Encoded {
    Value(Value),
    Text(String),
}

impl Encoded {
    pub(super) fn text(&self) -> String {
        match self {
            Encoded::Value(value) => plain_text(Some(value)),
            Encoded::Text(text) => text.clone(),
        }
    }

    fn into_value(self) -> Value {
        match self {
            Encoded::Value(value) => value,
            Encoded::Text(text) => Value::String(text),
        }
    }
}

pub(super) const KNOWN_ENCODINGS: [&str; 10] = [
    "json", "yaml", "base64", "unbase64", "first", "scheme", "hostname", "port", "isSecure",
    "insecure",
];

pub(super) const ENCODINGS: &str =
    "`json`, `yaml`, `base64`, `unbase64`, `first`, `scheme`, `hostname`, `port`, `isSecure`, `insecure`";

pub(super) fn encode(encoding: &str, current: Encoded) -> Result<Encoded, String> {
    let text = || current.text();
    Ok(Encoded::Text(match encoding {
        // Go's encoder: `<`, `>` and `&` escaped, keys sorted.
        "json" => to_json(&GoValue::from_yaml(&current.into_value(), false), None),
        "yaml" => yaml_text(&current.into_value())?,
        "base64" => STANDARD.encode(text()),
        "unbase64" => {
            let bytes = STANDARD
                .decode(text().trim())
                .map_err(|e| format!("`unbase64`: not valid base64: {e}"))?;
            String::from_utf8(bytes)
                .map_err(|_| "`unbase64`: the decoded bytes are not UTF-8 text".to_string())?
        }
        "first" => return Ok(first(current)),
        "scheme" | "hostname" | "port" | "isSecure" | "insecure" => url_part(encoding, &text())?,
        other => return Err(format!("unknown encoding `{other}` (known: {ENCODINGS})")),
    }))
}

/// YAML of a value, ending with a newline as the reference's does.
pub(super) fn yaml_text(value: &Value) -> Result<String, String> {
    yaml_serde::to_string(value).map_err(|e| format!("`yaml`: {e}"))
}

/// The first element of a list, or the first of comma-separated text.
pub(super) fn first(current: Encoded) -> Encoded {
    match current {
        Encoded::Value(Value::Sequence(items)) => {
            Encoded::Value(items.into_iter().next().unwrap_or(Value::Null))
        }
        other => Encoded::Text(
            other
                .text()
                .split(',')
                .next()
                .unwrap_or_default()
                .trim()
                .to_string(),
        ),
    }
}

/// Parts of `scheme://[user@]host[:port][/path]`; the port defaults to 80
/// for http and 443 for https.
pub(super) fn url_part(part: &str, url: &str) -> Result<String, String> {
    let url = url.trim();
    let (scheme, rest) = url
        .split_once("://")
        .ok_or_else(|| format!("`{part}`: `{url}` is not a URL (scheme://host[:port])"))?;
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = split_port(host_port);
    let secure = scheme.eq_ignore_ascii_case("https");
    Ok(match part {
        "scheme" => scheme.to_string(),
        "hostname" => host.to_string(),
        "isSecure" => secure.to_string(),
        "insecure" => (!secure).to_string(),
        _ => match (port, scheme.to_ascii_lowercase().as_str()) {
            (Some(port), _) => port.to_string(),
            (None, "https") => "443".into(),
            (None, "http") => "80".into(),
            (None, _) => {
                return Err(format!(
                    "`port`: `{url}` has no port and no default for `{scheme}`"
                ))
            }
        },
    })
}

/// `host:port` → (host, Some(port)); `[v6]:port` keeps the brackets off.
pub(super) fn split_port(host_port: &str) -> (&str, Option<&str>) {
    if let Some(rest) = host_port.strip_prefix('[') {
        if let Some((host, after)) = rest.split_once(']') {
            return (host, after.strip_prefix(':').filter(|p| !p.is_empty()));
        }
    }
    match host_port.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => {
            (host, Some(port))
        }
        _ => (host_port, None),
    }
}
