//! Declared outputs with `fromTfVar` (deploy.md §7.5): the raw output
//! they read, `file://` values dereferenced, `/base64` and `/json`
//! decoded; a Terraform collection gives its structure, and Terraform's
//! `<sensitive>` placeholder or a malformed line an error.

use super::{Printed, RawOutputs, UNKNOWN};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hub_manifest::diag::Warnings;
use hub_manifest::Output;
use indexmap::IndexMap;
use std::path::Path;
use yaml_serde::Value;

const FILE_SCHEME: &str = "file://";
const ENCODINGS: &str = "`base64`, `json`";

#[derive(thiserror::Error, Debug)]
pub enum CaptureError {
    #[error("{}raw output `{raw_key}` was not printed", subject(.output))]
    MissingRaw {
        output: Option<String>,
        raw_key: String,
        seen: Vec<String>,
    },
    #[error("{}raw output `{raw_key}` is not valid base64: {reason}", subject(.output))]
    BadBase64 {
        output: Option<String>,
        raw_key: String,
        reason: String,
    },
    #[error("{}raw output `{raw_key}` is not valid JSON: {reason}", subject(.output))]
    BadJson {
        output: Option<String>,
        raw_key: String,
        reason: String,
    },
    #[error("{}unknown encoding `{encoding}` in `fromTfVar: {spec}`", subject(.output))]
    UnknownEncoding {
        output: Option<String>,
        spec: String,
        encoding: String,
    },
    #[error(
        "{}raw output `{raw_key}` was printed as `<sensitive>`, Terraform's placeholder for a sensitive \
         value, not the value; read it in the component with `terraform output -raw {raw_key}` (or \
         `-json`) and print that, or let hub deploy the component itself (a folder of `*.tf` files \
         without a Makefile or deploy script), which records sensitive outputs as secrets",
        subject(.output)
    )]
    Sensitive {
        output: Option<String>,
        raw_key: String,
    },
    #[error(
        "{}raw output `{raw_key}` is empty because the line `{line}` of the `Outputs:` block gave \
         no value ({problem}); print it as `{raw_key} = value`",
        subject(.output)
    )]
    Malformed {
        output: Option<String>,
        raw_key: String,
        line: String,
        problem: String,
    },
}

fn subject(output: &Option<String>) -> String {
    match output {
        Some(name) => format!("output `{name}`: "),
        None => String::new(),
    }
}

impl CaptureError {
    /// The declared output the error is about, when known.
    pub fn output(&self) -> Option<&str> {
        match self {
            CaptureError::MissingRaw { output, .. }
            | CaptureError::BadBase64 { output, .. }
            | CaptureError::BadJson { output, .. }
            | CaptureError::UnknownEncoding { output, .. }
            | CaptureError::Sensitive { output, .. }
            | CaptureError::Malformed { output, .. } => output.as_deref(),
        }
    }

    fn for_output(mut self, name: &str) -> Self {
        match &mut self {
            CaptureError::MissingRaw { output, .. }
            | CaptureError::BadBase64 { output, .. }
            | CaptureError::BadJson { output, .. }
            | CaptureError::UnknownEncoding { output, .. }
            | CaptureError::Sensitive { output, .. }
            | CaptureError::Malformed { output, .. } => *output = Some(name.to_string()),
        }
        self
    }

    pub fn hint(&self) -> Option<String> {
        Some(match self {
            CaptureError::MissingRaw { raw_key, seen, .. } => {
                let seen = if seen.is_empty() {
                    "none".to_string()
                } else {
                    seen.iter().map(|k| format!("`{k}`")).collect::<Vec<_>>().join(", ")
                };
                format!(
                    "the component must print a line `{raw_key} = <value>` in an `Outputs:` block on stdout \
                     (raw outputs seen: {seen})"
                )
            }
            CaptureError::BadBase64 { .. } => {
                "`/base64` expects standard base64 with `=` padding; drop `/base64` if the value is plain text".into()
            }
            CaptureError::BadJson { .. } => "`/json` expects one JSON document on one line".into(),
            CaptureError::UnknownEncoding { .. } => format!("known encodings: {ENCODINGS}"),
            CaptureError::Sensitive { raw_key, .. } => format!(
                "print the value itself: `terraform output -raw {raw_key}` in the component, or deploy the \
                 `*.tf` files with hub's built-in Terraform support"
            ),
            CaptureError::Malformed { raw_key, .. } => {
                format!("the component must print `{raw_key} = value` in its `Outputs:` block")
            }
        })
    }
}

/// The value of `fromTfVar: <rawKey>[/base64][/json]`: the first error,
/// if any. See [`decode_declared`] for the placeholder values kept on
/// errors.
pub fn decode_from_tf_var(
    spec: &str,
    raw: &RawOutputs,
    component_dir: &Path,
    warnings: &mut Warnings,
) -> Result<Value, CaptureError> {
    let printed = Printed::of_raw(raw);
    let (value, mut errors) = decode_with_placeholder(spec, &printed, component_dir, warnings);
    if errors.is_empty() {
        Ok(value)
    } else {
        Err(errors.remove(0))
    }
}

/// The decoded value of every declared output with `fromTfVar`, by output
/// name, and every error. An output in error still gets a value: `(unknown)`
/// when its raw output is missing, the undecoded text when an encoding
/// failed (the other encodings are still applied).
pub fn decode_declared(
    outputs: &[Output],
    raw: &RawOutputs,
    component_dir: &Path,
    warnings: &mut Warnings,
) -> (IndexMap<String, Value>, Vec<CaptureError>) {
    decode_printed(outputs, &Printed::of_raw(raw), component_dir, warnings)
}

/// [`decode_declared`] for all a component printed: a raw output that
/// is a Terraform collection gives its structure (with or without
/// `/json`), a sensitive one read by hub its value, and a `<sensitive>`
/// placeholder or a malformed line an error.
pub fn decode_printed(
    outputs: &[Output],
    raw: &Printed,
    component_dir: &Path,
    warnings: &mut Warnings,
) -> (IndexMap<String, Value>, Vec<CaptureError>) {
    let mut values = IndexMap::new();
    let mut errors = Vec::new();
    for output in outputs.iter().filter(|o| !o.from_tf_var.is_empty()) {
        let (value, problems) =
            decode_with_placeholder(&output.from_tf_var, raw, component_dir, warnings);
        errors.extend(problems.into_iter().map(|e| e.for_output(&output.name)));
        values.insert(output.name.clone(), value);
    }
    (values, errors)
}

/// The value of one `fromTfVar` and all its errors.
fn decode_with_placeholder(
    spec: &str,
    printed: &Printed,
    component_dir: &Path,
    warnings: &mut Warnings,
) -> (Value, Vec<CaptureError>) {
    let raw = &printed.raw;
    let mut segments = spec.split('/');
    let raw_key = segments.next().unwrap_or_default().to_string();
    let mut errors = Vec::new();
    let (mut base64, mut json) = (false, false);
    for encoding in segments {
        match encoding {
            "base64" => base64 = true,
            "json" => json = true,
            other => errors.push(CaptureError::UnknownEncoding {
                output: None,
                spec: spec.to_string(),
                encoding: other.to_string(),
            }),
        }
    }
    if printed.sensitive.contains(&raw_key) && !printed.secrets.contains_key(&raw_key) {
        errors.push(CaptureError::Sensitive {
            output: None,
            raw_key,
        });
        return (Value::String(UNKNOWN.into()), errors);
    }
    let malformed = printed
        .malformed
        .iter()
        .find(|m| m.key.as_deref() == Some(raw_key.as_str()));
    let found = raw.get(&raw_key).or_else(|| printed.secrets.get(&raw_key));
    if let Some(bad) = malformed.filter(|_| found.is_none_or(|v| v.is_empty())) {
        errors.push(CaptureError::Malformed {
            output: None,
            raw_key: raw_key.clone(),
            line: bad.line.clone(),
            problem: bad.problem.clone(),
        });
        return (Value::String(found.cloned().unwrap_or_default()), errors);
    }
    let Some(found) = found else {
        errors.push(CaptureError::MissingRaw {
            output: None,
            raw_key,
            seen: raw.keys().cloned().collect(),
        });
        return (Value::String(UNKNOWN.into()), errors);
    };
    let mut text = dereference_file(found, component_dir, warnings);
    if base64 {
        match decode_base64(&text) {
            Ok(decoded) => text = decoded,
            Err(reason) => errors.push(CaptureError::BadBase64 {
                output: None,
                raw_key: raw_key.clone(),
                reason,
            }),
        }
    }
    let structured = printed.structured.contains(&raw_key) && !base64;
    if !json && !structured {
        return (Value::String(text), errors);
    }
    match parse_json(&text) {
        Ok(Some(value)) => (value, errors),
        Ok(None) => (Value::String(text), errors),
        Err(reason) => {
            errors.push(CaptureError::BadJson {
                output: None,
                raw_key,
                reason,
            });
            (Value::String(text), errors)
        }
    }
}

/// `file://<path>` → the file's content (relative paths from the component
/// directory), trimmed of spaces, CR and LF when it has at most one line
/// break. An unreadable file is a warning and the text stays as it is.
fn dereference_file(value: &str, component_dir: &Path, warnings: &mut Warnings) -> String {
    let Some(path) = value.strip_prefix(FILE_SCHEME).filter(|p| !p.is_empty()) else {
        return value.to_string();
    };
    let path = component_dir.join(path);
    match std::fs::read(&path) {
        Ok(bytes) => {
            let content = String::from_utf8_lossy(&bytes).into_owned();
            if content.matches('\n').count() <= 1 {
                content.trim_matches([' ', '\r', '\n']).to_string()
            } else {
                content
            }
        }
        Err(error) => {
            warnings.warn(
                None,
                format!(
                    "raw output `{value}`: cannot read `{}`: {error}; the value is kept as it is",
                    path.display()
                ),
            );
            value.to_string()
        }
    }
}

/// Standard base64 with padding; line breaks are ignored. The decoded
/// bytes must be UTF-8 text.
fn decode_base64(text: &str) -> Result<String, String> {
    let compact: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    let bytes = STANDARD.decode(compact.trim()).map_err(|e| e.to_string())?;
    String::from_utf8(bytes).map_err(|_| "the decoded bytes are not UTF-8 text".to_string())
}

/// The parsed structure; `None` for JSON `null` (the text is kept).
fn parse_json(text: &str) -> Result<Option<Value>, String> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    if json.is_null() {
        return Ok(None);
    }
    yaml_serde::to_value(&json)
        .map(Some)
        .map_err(|e| e.to_string())
}
