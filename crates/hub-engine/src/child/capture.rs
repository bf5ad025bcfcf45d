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
//!
//! Values are read as Terraform prints them (`tfvalue`): a value that opens
//! a multi-line form (`[`, `{`, `tolist([`, `<<EOT`, …) runs to its end,
//! blank lines of a heredoc included, and a collection becomes its JSON
//! text, recorded as a structure by the declared outputs that read it.
//! Terraform's `<sensitive>` placeholder is never a value, and a line that
//! is not `name = value` is reported ([`Printed::malformed`]), never
//! dropped without a word.

mod decode;
mod tfvalue;

pub use decode::{decode_declared, decode_from_tf_var, decode_printed, CaptureError};

use super::otp;
use hub_manifest::diag::Warnings;
use hub_manifest::Output;
use indexmap::IndexMap;
use std::collections::BTreeSet;
use std::path::Path;

/// Raw outputs: key → its distinct values joined with `,`.
pub type RawOutputs = IndexMap<String, String>;

/// The raw key holding the one-time-pad encrypted secrets.
pub(crate) const SECRETS_KEY: &str = "secrets";
/// The raw key holding dynamic provides.
pub(crate) const PROVIDES_KEY: &str = "provides";
/// The value of a declared output whose raw output is missing.
pub(crate) const UNKNOWN: &str = "(unknown)";

/// Raw outputs from a component's stdout (recommended reading of §7.1).
pub fn parse_outputs(stdout: &str) -> RawOutputs {
    read_outputs(stdout).raw
}

/// What a component's `Outputs:` blocks said.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Printed {
    /// Raw outputs: key → its distinct values joined with `,`; a Terraform
    /// collection as its JSON text.
    pub raw: RawOutputs,
    /// The raw keys whose value is a Terraform collection.
    pub structured: BTreeSet<String>,
    /// The raw keys printed as Terraform's `<sensitive>` placeholder.
    pub sensitive: BTreeSet<String>,
    /// Sensitive values hub read itself (`terraform output -json`): they
    /// feed the declared outputs, which record them as secrets, and are
    /// never recorded as raw outputs.
    pub secrets: RawOutputs,
    /// Lines of a block that are not `name = value`, or whose value cannot
    /// be read.
    pub malformed: Vec<Malformed>,
}

/// A line of an `Outputs:` block that gave no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Malformed {
    /// The name it seems to give a value to, when it has one.
    pub key: Option<String>,
    /// The line as printed (ANSI colours removed).
    pub line: String,
    /// What is wrong with it.
    pub problem: String,
}

impl Malformed {
    /// The warning for a component's run.
    pub fn warning(&self, component: &str) -> String {
        format!(
            "component `{component}` printed `{}` in an `Outputs:` block: {}; expected `name = value`",
            self.line, self.problem
        )
    }
}

impl Printed {
    /// Raw outputs as they are (for callers that have no more).
    pub fn of_raw(raw: &RawOutputs) -> Printed {
        Printed {
            raw: raw.clone(),
            ..Printed::default()
        }
    }
}

/// Everything a component that deployed printed, read for its run: the
/// `Outputs:` blocks of its stdout, the outputs hub's built-in Terraform
/// read with `terraform output -json` (which win over what `apply`
/// printed), and the one-time-pad `secrets`. Each malformed line is a
/// warning naming the component.
pub(crate) fn component_outputs(
    component: &str,
    stdout: &str,
    dir: &Path,
    pad: &[u8],
    warnings: &mut Warnings,
) -> Printed {
    let mut printed = read_outputs(stdout);
    decode_secrets(&mut printed.raw, pad, warnings);
    match hub_plan::terraform::take_outputs(dir) {
        None => {}
        Some(Err(reason)) => warnings.warn(None, format!("component `{component}`: {reason}")),
        Some(Ok(outputs)) => printed.merge_terraform(outputs),
    }
    for line in &printed.malformed {
        warnings.warn(None, line.warning(component));
    }
    printed
}

impl Printed {
    /// `terraform output -json`: sensitive values become secrets (and
    /// leave the raw outputs), the others raw outputs.
    fn merge_terraform(&mut self, outputs: Vec<hub_plan::terraform::TfOutput>) {
        for output in outputs {
            // As in a block: lists and maps are structures, a number or
            // a bool its text.
            let structured = output.value.is_array() || output.value.is_object();
            let text = match output.value {
                serde_json::Value::String(text) => text,
                other => other.to_string(),
            };
            self.malformed
                .retain(|m| m.key.as_deref() != Some(output.name.as_str()));
            if structured {
                self.structured.insert(output.name.clone());
            } else {
                self.structured.remove(&output.name);
            }
            if output.sensitive {
                self.raw.shift_remove(&output.name);
                self.sensitive.insert(output.name.clone());
                self.secrets.insert(output.name, text);
            } else {
                self.sensitive.remove(&output.name);
                self.raw.insert(output.name, text);
            }
        }
    }

    /// Whether a declared output reads a sensitive value hub read itself:
    /// it is recorded as a secret whatever its `kind`.
    pub fn reads_secret(&self, output: &Output) -> bool {
        let key = output.from_tf_var.split('/').next().unwrap_or_default();
        !key.is_empty() && self.secrets.contains_key(key)
    }
}

/// The lines of a whole stdout as a running component's stream gives them
/// (`process::LineSplitter`): split at `\n`, one `\r` before it dropped
/// (a CRLF line end), the last line's too. A multi-line value read from
/// the whole text and from the stream must be the same text.
pub(super) fn stdout_lines(stdout: &str) -> impl Iterator<Item = &str> {
    stdout
        .split('\n')
        .map(|line| line.strip_suffix('\r').unwrap_or(line))
}

/// The `Outputs:` blocks of a component's stdout, with every problem.
pub(crate) fn read_outputs(stdout: &str) -> Printed {
    let mut reader = Accumulator::default();
    let mut blocks = Blocks::default();
    for line in stdout_lines(stdout) {
        match blocks.step(line) {
            BlockLine::Entry | BlockLine::Continued => reader.line(line),
            BlockLine::Outside | BlockLine::Marker | BlockLine::Leading | BlockLine::End => {}
        }
    }
    reader.finish()
}

/// A marker line: `Outputs:` at the start of the line, then nothing but
/// spaces and CR.
pub(super) fn is_marker(line: &str) -> bool {
    let plain = |line: &str| {
        line.strip_prefix("Outputs:")
            .is_some_and(|rest| rest.chars().all(|c| c == ' ' || c == '\r'))
    };
    // Terraform prints the marker in colour unless told `-no-color`.
    plain(line) || (line.contains('\x1b') && plain(&strip_ansi(line)))
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
    /// A line of the block that starts an entry.
    Entry,
    /// A further line of an entry's multi-line value (a Terraform list,
    /// map or heredoc), blank lines included.
    Continued,
    /// The blank line that ends the block.
    End,
}

/// Follows a stdout, line by line, through its `Outputs:` blocks.
#[derive(Debug, Default, Clone)]
pub(super) struct Blocks {
    place: Place,
    /// The multi-line value being read.
    value: Option<tfvalue::Scan>,
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
        if let Some(scan) = self.value.as_mut() {
            scan.line(line);
            if scan.done() {
                self.value = None;
            }
            return BlockLine::Continued;
        }
        let (place, seen) = match self.place {
            Place::Outside if is_marker(line) => (Place::AfterMarker, BlockLine::Marker),
            Place::Outside => (Place::Outside, BlockLine::Outside),
            Place::AfterMarker if is_blank(line) => (Place::AfterMarker, BlockLine::Leading),
            Place::InBlock if is_blank(line) => (Place::Outside, BlockLine::End),
            Place::AfterMarker | Place::InBlock => (Place::InBlock, BlockLine::Entry),
        };
        self.place = place;
        if seen == BlockLine::Entry {
            self.value = multiline_value(line).map(|v| tfvalue::Scan::start(&v));
        }
        seen
    }

    /// Whether the last line opened a multi-line value not yet closed.
    pub(super) fn in_value(&self) -> bool {
        self.value.is_some()
    }
}

/// The value text of an entry line that opens a multi-line value.
fn multiline_value(line: &str) -> Option<String> {
    if line.starts_with('#') {
        return None;
    }
    let (_, value) = line.split_once('=')?;
    let value = clean(value);
    tfvalue::opens_multiline(&value).then_some(value)
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
    raw.finish().raw
}

/// Parses `key = value` lines (no marker): what the `secrets` raw output
/// decodes to.
pub(crate) fn parse_lines(text: &str) -> RawOutputs {
    let mut raw = Accumulator::default();
    text.split('\n')
        .filter(|line| !is_blank(line))
        .for_each(|line| raw.line(line));
    raw.finish().raw
}

/// Each key's distinct values in first-seen order, and what could not
/// be read.
#[derive(Default)]
struct Accumulator {
    values: IndexMap<String, Vec<String>>,
    printed: Printed,
    pending: Option<Pending>,
}

/// A multi-line value being read.
struct Pending {
    key: String,
    first_line: String,
    text: String,
    scan: tfvalue::Scan,
}

impl Accumulator {
    /// One line of a block: `#` comments are skipped; the key is what
    /// precedes the first `=`; a line without `=`, or without a name, is
    /// malformed.
    fn line(&mut self, line: &str) {
        if let Some(pending) = self.pending.as_mut() {
            pending.text.push('\n');
            pending.text.push_str(line);
            pending.scan.line(line);
            if pending.scan.done() {
                self.finish_pending();
            }
            return;
        }
        if line.starts_with('#') {
            return;
        }
        let Some((key, value)) = line.split_once('=') else {
            self.malformed(first_word(line), line, "it has no `=`".into());
            return;
        };
        let key = clean(key);
        if key.is_empty() {
            self.malformed(None, line, "it has no name before `=`".into());
            return;
        }
        let value = clean(value);
        if value.is_empty() {
            self.malformed(Some(key.clone()), line, "it has no value after `=`".into());
        } else if value == tfvalue::SENSITIVE {
            self.printed.sensitive.insert(key);
            return;
        } else if tfvalue::opens_multiline(&value) {
            self.pending = Some(Pending {
                key,
                first_line: clean(line),
                scan: tfvalue::Scan::start(&value),
                text: value,
            });
            return;
        } else if tfvalue::is_empty_collection(&value) {
            if let Ok(json) = tfvalue::parse(&value) {
                self.printed.structured.insert(key.clone());
                self.record(key, json.to_string());
                return;
            }
        }
        self.record(key, unquote(&value));
    }

    fn record(&mut self, key: String, value: String) {
        let values = self.values.entry(key).or_default();
        if !values.contains(&value) {
            values.push(value);
        }
    }

    fn malformed(&mut self, key: Option<String>, line: &str, problem: String) {
        self.printed.malformed.push(Malformed {
            key,
            line: clean(line),
            problem,
        });
    }

    fn finish_pending(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        match tfvalue::parse(&pending.text) {
            Ok(serde_json::Value::String(text)) => self.record(pending.key, text),
            Ok(json) => {
                self.printed.structured.insert(pending.key.clone());
                self.record(pending.key, json.to_string());
            }
            Err(reason) => {
                let problem = format!("its value is not one Terraform prints: {reason}");
                self.malformed(Some(pending.key), &pending.first_line, problem);
            }
        }
    }

    fn finish(mut self) -> Printed {
        if let Some(pending) = self.pending.take() {
            let opener = pending.text.lines().next().unwrap_or_default().to_string();
            self.malformed(
                Some(pending.key),
                &pending.first_line,
                format!("the value it opens with `{opener}` is not closed before the output ends"),
            );
        }
        let mut printed = self.printed;
        printed.raw = self
            .values
            .into_iter()
            .map(|(k, v)| (k, v.join(",")))
            .collect();
        printed
    }
}

/// The first word of a line without `=`: the name it may have meant.
fn first_word(line: &str) -> Option<String> {
    clean(line)
        .split_whitespace()
        .next()
        .map(str::to_string)
        .filter(|w| !w.is_empty())
}

/// Trims spaces and CR (not tabs) and removes ANSI colour sequences.
pub(super) fn clean(text: &str) -> String {
    strip_ansi(text.trim_matches([' ', '\r']))
        .trim_matches([' ', '\r'])
        .to_string()
}

/// Removes `ESC [ <digits and ;> m` sequences.
pub(crate) fn strip_ansi(text: &str) -> String {
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

/// `"…"` (at least two characters) loses its quotes; its escapes are
/// resolved as Go (and so Terraform) writes them, or, when they are not
/// all valid, only `\"` becomes `"`.
pub(super) fn unquote(value: &str) -> String {
    if value.len() >= 2 && value.starts_with('"') && value.ends_with('"') {
        if let Some(text) = tfvalue::unquote_go(value) {
            return text;
        }
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
pub(crate) fn dynamic_provides(raw: &RawOutputs) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for capability in raw.get(PROVIDES_KEY).into_iter().flat_map(|v| v.split(',')) {
        let capability = capability.trim();
        if !capability.is_empty() && !out.iter().any(|c| c == capability) {
            out.push(capability.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests;
