//! Output capture (deploy.md §7.1–7.5): the `Outputs:` blocks a component
//! prints on stdout become raw outputs; the `secrets` raw output is opened
//! with the one-time pad; `provides` adds capabilities; declared outputs
//! with `fromTfVar` read raw outputs, dereference `file://` values and
//! decode `/base64` and `/json`.
//!
//! The parser follows the recommended, lenient reading of §7.1: the marker
//! is a line holding `Outputs:` (trailing spaces and CR allowed), blank
//! lines right after it are skipped and the block ends at the first line
//! of only whitespace. [`parse_outputs_strict`] is the reference's
//! byte-exact algorithm, kept for comparison.

use super::otp;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hub_manifest::diag::Warnings;
use hub_manifest::Output;
use indexmap::IndexMap;
use std::path::Path;
use yaml_serde::Value;

/// Raw outputs: key → its distinct values joined with `,`.
pub type RawOutputs = IndexMap<String, String>;

/// The raw key holding the one-time-pad encrypted secrets.
pub const SECRETS_KEY: &str = "secrets";
/// The raw key holding dynamic provides.
pub const PROVIDES_KEY: &str = "provides";
/// The value of a declared output whose raw output is missing.
pub const UNKNOWN: &str = "(unknown)";

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
            | CaptureError::UnknownEncoding { output, .. } => output.as_deref(),
        }
    }

    fn for_output(mut self, name: &str) -> Self {
        match &mut self {
            CaptureError::MissingRaw { output, .. }
            | CaptureError::BadBase64 { output, .. }
            | CaptureError::BadJson { output, .. }
            | CaptureError::UnknownEncoding { output, .. } => *output = Some(name.to_string()),
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
        })
    }
}

/// Raw outputs from a component's stdout (recommended reading of §7.1).
pub fn parse_outputs(stdout: &str) -> RawOutputs {
    let mut raw = Accumulator::default();
    let lines: Vec<&str> = stdout.split('\n').collect();
    let mut i = 0;
    while i < lines.len() {
        if !is_marker(lines[i]) {
            i += 1;
            continue;
        }
        i += 1;
        while i < lines.len() && is_blank(lines[i]) {
            i += 1;
        }
        while i < lines.len() && !is_blank(lines[i]) {
            raw.line(lines[i]);
            i += 1;
        }
    }
    raw.finish()
}

/// A marker line: `Outputs:` at the start of the line, then nothing but
/// spaces and CR.
pub(super) fn is_marker(line: &str) -> bool {
    line.strip_prefix("Outputs:")
        .is_some_and(|rest| rest.chars().all(|c| c == ' ' || c == '\r'))
}

pub(super) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// What one stdout line is to the `Outputs:` blocks, as [`parse_outputs`]
/// reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum BlockLine {
    /// Not in a block.
    Outside,
    /// The `Outputs:` marker that starts a block.
    Marker,
    /// A blank line between the marker and the block's first entry.
    Leading,
    /// A line of the block.
    Entry,
    /// The blank line that ends the block.
    End,
}

/// Follows a stdout, line by line, through its `Outputs:` blocks.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Blocks {
    place: Place,
}

#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Place {
    #[default]
    Outside,
    AfterMarker,
    InBlock,
}

impl Blocks {
    pub(super) fn step(&mut self, line: &str) -> BlockLine {
        let (place, seen) = match self.place {
            Place::Outside if is_marker(line) => (Place::AfterMarker, BlockLine::Marker),
            Place::Outside => (Place::Outside, BlockLine::Outside),
            Place::AfterMarker if is_blank(line) => (Place::AfterMarker, BlockLine::Leading),
            Place::InBlock if is_blank(line) => (Place::Outside, BlockLine::End),
            Place::AfterMarker | Place::InBlock => (Place::InBlock, BlockLine::Entry),
        };
        self.place = place;
        seen
    }
}

/// The reference's algorithm, byte for byte: the marker is exactly
/// `Outputs:\n` at a line start; a block runs to the first `\n\n` after it
/// unless that is right at its start (then, like a block with no blank
/// line, it runs to the end of stdout).
pub fn parse_outputs_strict(stdout: &str) -> RawOutputs {
    const MARKER: &str = "Outputs:\n";
    let mut raw = Accumulator::default();
    let mut consumed = 0;
    while let Some(found) = stdout[consumed..].find(MARKER) {
        let i = consumed + found;
        let at_line_start = i == 0 || stdout.as_bytes()[i - 1] == b'\n';
        consumed = i + MARKER.len();
        if !at_line_start {
            continue;
        }
        let rest = &stdout[consumed..];
        let chunk = match rest.find("\n\n") {
            Some(j) if j > 0 => &rest[..j],
            _ => rest,
        };
        chunk.split('\n').for_each(|line| raw.line(line));
    }
    raw.finish()
}

/// Parses `key = value` lines (no marker): what the `secrets` raw output
/// decodes to.
pub fn parse_lines(text: &str) -> RawOutputs {
    let mut raw = Accumulator::default();
    text.split('\n').for_each(|line| raw.line(line));
    raw.finish()
}

/// Each key's distinct values in first-seen order.
#[derive(Default)]
struct Accumulator {
    values: IndexMap<String, Vec<String>>,
}

impl Accumulator {
    /// One line of a block: `#` comments and lines without `=` are
    /// skipped; the key is what precedes the first `=`.
    fn line(&mut self, line: &str) {
        if line.starts_with('#') {
            return;
        }
        let Some((key, value)) = line.split_once('=') else {
            return;
        };
        let key = clean(key);
        let value = unquote(&clean(value));
        let values = self.values.entry(key).or_default();
        if !values.contains(&value) {
            values.push(value);
        }
    }

    fn finish(self) -> RawOutputs {
        self.values
            .into_iter()
            .map(|(k, v)| (k, v.join(",")))
            .collect()
    }
}

/// Trims spaces and CR (not tabs) and removes ANSI colour sequences.
pub(super) fn clean(text: &str) -> String {
    strip_ansi(text.trim_matches([' ', '\r']))
        .trim_matches([' ', '\r'])
        .to_string()
}

/// Removes `ESC [ <digits and ;> m` sequences.
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("\x1b[") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let params = after
            .find(|c: char| !(c.is_ascii_digit() || c == ';'))
            .unwrap_or(after.len());
        if after[params..].starts_with('m') {
            rest = &after[params + 1..];
        } else {
            out.push_str("\x1b[");
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// `"…"` (at least two characters) loses its quotes and `\"` becomes `"`.
pub(super) fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        value[1..value.len() - 1].replace("\\\"", "\"")
    } else {
        value.to_string()
    }
}

/// Opens the `secrets` raw output with the pad and stores the `key = value`
/// lines it holds in `raw`, replacing existing keys. Problems are warnings:
/// the declared outputs that needed the secrets then fail as missing.
pub fn decode_secrets(raw: &mut RawOutputs, pad: &[u8], warnings: &mut Warnings) {
    let Some(blob) = raw.get(SECRETS_KEY).filter(|v| !v.is_empty()) else {
        return;
    };
    let plain = match otp::decode(blob, pad) {
        Ok(plain) => plain,
        Err(error) => {
            let hint = error.hint().map(|h| format!(" ({h})")).unwrap_or_default();
            warnings.warn(
                None,
                format!("cannot decode the `secrets` raw output: {error}{hint}"),
            );
            return;
        }
    };
    let text = match String::from_utf8(plain) {
        Ok(text) => text,
        Err(error) => {
            warnings.warn(
                None,
                format!("the decoded `secrets` raw output is not UTF-8 text: {error}"),
            );
            String::from_utf8_lossy(error.as_bytes()).into_owned()
        }
    };
    for (key, value) in parse_lines(&text) {
        raw.insert(key, value);
    }
}

/// The capabilities in the raw output `provides = a,b`: split on `,`,
/// trimmed, empty entries dropped, each once.
pub fn dynamic_provides(raw: &RawOutputs) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for capability in raw.get(PROVIDES_KEY).into_iter().flat_map(|v| v.split(',')) {
        let capability = capability.trim();
        if !capability.is_empty() && !out.iter().any(|c| c == capability) {
            out.push(capability.to_string());
        }
    }
    out
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
    let (value, mut errors) = decode_with_placeholder(spec, raw, component_dir, warnings);
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
    raw: &RawOutputs,
    component_dir: &Path,
    warnings: &mut Warnings,
) -> (Value, Vec<CaptureError>) {
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
    let Some(found) = raw.get(&raw_key) else {
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
    if !json {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn raw(pairs: &[(&str, &str)]) -> RawOutputs {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn spec_7_1_example() {
        let stdout = "Applying...\nOutputs:\nhost = \"db.internal\"\nport=5432\n# ignored = x\n\
                      url = jdbc:pg://h:5432/db?a=b\n\ntrailing = not-captured\n";
        let expected = raw(&[
            ("host", "db.internal"),
            ("port", "5432"),
            ("url", "jdbc:pg://h:5432/db?a=b"),
        ]);
        assert_eq!(parse_outputs(stdout), expected);
        assert_eq!(parse_outputs_strict(stdout), expected);
    }

    #[test]
    fn deploy_case_33_block_parsing() {
        let stdout =
            "noise = 1\nOutputs:\nk1 = v1\nk2=\"quoted \\\"x\\\"\"\n# comment = no\nk3 = a = b\n\n\
                      after = blank\nOutputs:\nk1 = v2\n";
        let expected = raw(&[("k1", "v1,v2"), ("k2", "quoted \"x\""), ("k3", "a = b")]);
        assert_eq!(parse_outputs(stdout), expected);
        assert_eq!(parse_outputs_strict(stdout), expected);
    }

    #[test]
    fn deploy_case_34a_marker_must_start_a_line() {
        assert!(parse_outputs("xOutputs:\nk = 1\n").is_empty());
        assert!(parse_outputs_strict("xOutputs:\nk = 1\n").is_empty());
        assert_eq!(parse_outputs("x\nOutputs:\nk = 1\n"), raw(&[("k", "1")]));
    }

    #[test]
    fn deploy_case_34b_one_blank_line_after_the_marker_is_skipped() {
        assert_eq!(parse_outputs("Outputs:\n\nk = 1\n\n"), raw(&[("k", "1")]));
        assert_eq!(
            parse_outputs_strict("Outputs:\n\nk = 1\n\n"),
            raw(&[("k", "1")])
        );
    }

    #[test]
    fn deploy_case_34c_two_blank_lines_after_the_marker() {
        let stdout = "Outputs:\n\n\nk = 1\n\nlate = 2\n";
        // Recommended: blank lines after the marker are skipped, the next
        // blank line ends the block.
        assert_eq!(parse_outputs(stdout), raw(&[("k", "1")]));
        // Reference: the block runs to the end of stdout.
        assert_eq!(
            parse_outputs_strict(stdout),
            raw(&[("k", "1"), ("late", "2")])
        );
    }

    #[test]
    fn deploy_case_34d_crlf() {
        let stdout = "Outputs:\r\nk = 1\r\n";
        assert_eq!(parse_outputs(stdout), raw(&[("k", "1")]));
        assert!(parse_outputs_strict(stdout).is_empty());
        // A CRLF blank line ends the block in the lenient reading only.
        let blank = "Outputs:\nk = 1\r\n\r\nlate = 2\n";
        assert_eq!(parse_outputs(blank), raw(&[("k", "1")]));
        assert_eq!(
            parse_outputs_strict(blank),
            raw(&[("k", "1"), ("late", "2")])
        );
    }

    #[test]
    fn marker_with_trailing_spaces_is_accepted_leniently() {
        assert_eq!(parse_outputs("Outputs:  \nk = 1\n"), raw(&[("k", "1")]));
        assert!(parse_outputs_strict("Outputs:  \nk = 1\n").is_empty());
        assert!(parse_outputs("Outputs: k = 1\n").is_empty());
    }

    #[test]
    fn whitespace_only_line_ends_the_block() {
        assert_eq!(
            parse_outputs("Outputs:\na = 1\n \t\nb = 2\n"),
            raw(&[("a", "1")])
        );
    }

    #[test]
    fn block_without_blank_line_runs_to_the_end() {
        let stdout = "Outputs:\na = 1\nnoise\nb = 2";
        assert_eq!(parse_outputs(stdout), raw(&[("a", "1"), ("b", "2")]));
        assert_eq!(parse_outputs_strict(stdout), raw(&[("a", "1"), ("b", "2")]));
    }

    #[test]
    fn comments_first_equals_and_lines_without_equals() {
        let parsed = parse_outputs("Outputs:\n#a = 1\n # b = 2\nno equals\nc==d\n");
        assert_eq!(parsed, raw(&[("# b", "2"), ("c", "=d")]));
    }

    #[test]
    fn only_spaces_and_cr_are_trimmed() {
        let parsed = parse_outputs("Outputs:\n\tk = v\t\n  j =  w \r\n= empty key\n");
        assert_eq!(
            parsed,
            raw(&[("\tk", "v\t"), ("j", "w"), ("", "empty key")])
        );
    }

    #[test]
    fn ansi_colours_are_stripped() {
        let parsed = parse_outputs("Outputs:\n\x1b[1mhost\x1b[0m = \x1b[32;1m\"h\"\x1b[0m\n");
        assert_eq!(parsed, raw(&[("host", "h")]));
        assert_eq!(strip_ansi("a\x1b[Kb"), "a\x1b[Kb");
    }

    #[test]
    fn unquote_rules() {
        assert_eq!(unquote("\"a \\\"b\\\" c\""), "a \"b\" c");
        assert_eq!(unquote("\""), "\"");
        assert_eq!(unquote("\"\""), "");
        assert_eq!(unquote("https://x\""), "https://x\"");
        assert_eq!(unquote("\"a\\nb\""), "a\\nb");
    }

    #[test]
    fn repeated_keys_accumulate_distinct_values() {
        let parsed =
            parse_outputs("Outputs:\na = 1\na = 2\na = 1\nb = x\n\nOutputs:\nb = x\na = 3\n");
        assert_eq!(parsed, raw(&[("a", "1,2,3"), ("b", "x")]));
    }

    #[test]
    fn empty_values_are_kept() {
        assert_eq!(
            parse_outputs("Outputs:\nload_balancer = \n"),
            raw(&[("load_balancer", "")])
        );
    }

    #[test]
    fn deploy_case_39_secrets_override_raw_keys() {
        let pad: Vec<u8> = (1..=64).collect();
        let line = otp::encode(b"password = s3cret\nuser = admin\n", &pad)
            .expect("fits")
            .expect("not blank");
        let stdout = format!("Outputs:\nuser = old\n{line}\n\n");
        let mut parsed = parse_outputs(&stdout);
        let mut warnings = Warnings::default();
        decode_secrets(&mut parsed, &pad, &mut warnings);
        assert_eq!(warnings.iter().count(), 0);
        assert_eq!(parsed["password"], "s3cret");
        assert_eq!(parsed["user"], "admin");
        assert!(parsed.contains_key(SECRETS_KEY));
    }

    #[test]
    fn undecodable_secrets_are_a_warning() {
        let pad = [9u8; 16];
        let mut parsed = raw(&[("secrets", "AAAA,BBBB"), ("k", "v")]);
        let mut warnings = Warnings::default();
        decode_secrets(&mut parsed, &pad, &mut warnings);
        assert_eq!(parsed, raw(&[("secrets", "AAAA,BBBB"), ("k", "v")]));
        let messages: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        assert_eq!(messages.len(), 1);
        assert!(messages[0].contains("secrets"), "{messages:?}");
    }

    #[test]
    fn deploy_case_42_dynamic_provides() {
        assert_eq!(
            dynamic_provides(&raw(&[("provides", "tls,dns")])),
            ["tls", "dns"]
        );
        assert_eq!(
            dynamic_provides(&raw(&[("provides", " a , ,a,b ")])),
            ["a", "b"]
        );
        assert!(dynamic_provides(&raw(&[("provides", "")])).is_empty());
        assert!(dynamic_provides(&raw(&[])).is_empty());
    }

    fn decode(
        spec: &str,
        raw: &RawOutputs,
        dir: &Path,
    ) -> (Result<Value, CaptureError>, Vec<String>) {
        let mut warnings = Warnings::default();
        let result = decode_from_tf_var(spec, raw, dir, &mut warnings);
        (result, warnings.iter().map(|w| w.to_string()).collect())
    }

    fn yaml(text: &str) -> Value {
        yaml_serde::from_str(text).expect("yaml literal")
    }

    #[test]
    fn deploy_case_36_encodings() {
        let outputs = raw(&[
            ("b", "aGVsbG8="),
            ("j", "{\"x\":[1,2]}"),
            ("bj", "eyJ4IjoxfQ=="),
        ]);
        let dir = Path::new(".");
        assert_eq!(
            decode("b/base64", &outputs, dir).0.expect("ok"),
            yaml("hello")
        );
        assert_eq!(
            decode("j/json", &outputs, dir).0.expect("ok"),
            yaml("{x: [1, 2]}")
        );
        assert_eq!(
            decode("bj/json/base64", &outputs, dir).0.expect("ok"),
            yaml("{x: 1}")
        );
        assert_eq!(
            decode("bj/base64/json", &outputs, dir).0.expect("ok"),
            yaml("{x: 1}")
        );
        let error = decode("b/rot13", &outputs, dir)
            .0
            .expect_err("unknown encoding");
        assert!(error.to_string().contains("rot13"), "{error}");
        assert!(error.hint().expect("hint").contains("base64"));
    }

    #[test]
    fn bad_encodings_keep_the_text() {
        let outputs = raw(&[("t", "not base64!"), ("j", "{oops")]);
        let declared = vec![
            out("a", "t/base64"),
            out("b", "j/json"),
            out("c", "t/json/nope"),
        ];
        let mut warnings = Warnings::default();
        let (values, errors) = decode_declared(&declared, &outputs, Path::new("."), &mut warnings);
        assert_eq!(values["a"], yaml("not base64!"));
        assert_eq!(values["b"], yaml("'{oops'"));
        assert_eq!(values["c"], yaml("not base64!"));
        let kinds: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert_eq!(kinds.len(), 4, "{kinds:?}");
        assert!(
            kinds[0].starts_with("output `a`: raw output `t` is not valid base64"),
            "{kinds:?}"
        );
        assert!(kinds[1].contains("not valid JSON"), "{kinds:?}");
        assert!(kinds[2].contains("`nope`"), "{kinds:?}");
        assert!(kinds[3].starts_with("output `c`:"), "{kinds:?}");
    }

    #[test]
    fn json_null_keeps_the_text_and_scalars_are_typed() {
        let outputs = raw(&[("n", "null"), ("i", "5"), ("s", "\"x\"")]);
        let dir = Path::new(".");
        assert_eq!(
            decode("n/json", &outputs, dir).0.expect("ok"),
            yaml("'null'")
        );
        assert_eq!(decode("i/json", &outputs, dir).0.expect("ok"), yaml("5"));
        assert_eq!(decode("s/json", &outputs, dir).0.expect("ok"), yaml("x"));
        assert_eq!(decode("i", &outputs, dir).0.expect("ok"), yaml("'5'"));
    }

    fn out(name: &str, from_tf_var: &str) -> Output {
        Output {
            name: name.into(),
            from_tf_var: from_tf_var.into(),
            ..Output::default()
        }
    }

    #[test]
    fn deploy_case_35_missing_raw_output() {
        let outputs = raw(&[("seen", "1")]);
        let declared = vec![out("out", "nothere"), out("plain", ""), out("ok", "seen")];
        let mut warnings = Warnings::default();
        let (values, errors) = decode_declared(&declared, &outputs, Path::new("."), &mut warnings);
        assert_eq!(values.keys().collect::<Vec<_>>(), ["out", "ok"]);
        assert_eq!(values["out"], yaml("(unknown)"));
        assert_eq!(values["ok"], yaml("'1'"));
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].output(), Some("out"));
        assert_eq!(
            errors[0].to_string(),
            "output `out`: raw output `nothere` was not printed"
        );
        assert!(errors[0].hint().expect("hint").contains("`seen`"));
    }

    #[test]
    fn deploy_case_37_file_values() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("one.txt"), "line\n").expect("write");
        std::fs::write(dir.path().join("multi.txt"), "l1\nl2\n").expect("write");
        let abs = dir.path().join("abs.txt");
        std::fs::write(&abs, " abs \r\n").expect("write");
        let outputs = raw(&[
            ("f1", "file://one.txt"),
            ("f2", "file://multi.txt"),
            ("f4", "file://missing.txt"),
            ("f5", "file://"),
        ]);
        let mut outputs = outputs;
        outputs.insert("f3".into(), format!("file://{}", abs.display()));
        let d = dir.path();
        assert_eq!(decode("f1", &outputs, d).0.expect("ok"), yaml("line"));
        assert_eq!(
            decode("f2", &outputs, d).0.expect("ok"),
            Value::String("l1\nl2\n".into())
        );
        assert_eq!(decode("f3", &outputs, d).0.expect("ok"), yaml("abs"));
        let (missing, warnings) = decode("f4", &outputs, d);
        assert_eq!(missing.expect("a warning only"), yaml("file://missing.txt"));
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("missing.txt"), "{warnings:?}");
        assert_eq!(decode("f5", &outputs, d).0.expect("ok"), yaml("'file://'"));
    }

    #[test]
    fn file_content_is_decoded_after_dereferencing() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("t.b64"), "aGVs\nbG8=\n").expect("write");
        let outputs = raw(&[("t", "file://t.b64")]);
        assert_eq!(
            decode("t/base64", &outputs, dir.path()).0.expect("ok"),
            yaml("hello")
        );
    }

    #[test]
    fn parse_lines_needs_no_marker() {
        assert_eq!(parse_lines("a = 1\n\nb=2"), raw(&[("a", "1"), ("b", "2")]));
    }
}
