//! Template rendering before a component runs (deploy.md §6.10), and for
//! `hub render`.
//!
//! `templates:` in the component manifest selects files; each is rendered
//! with the component's expanded parameters (outputs are not visible; `hub
//! render` adds them) and written next to it without its `.template` /
//! `.gotemplate` suffix, or in place when it has none, keeping the input's
//! file mode. Output is byte for byte the reference's (the shared template
//! set checks it), except where a missing name is concerned. Kinds:
//!
//! * `curly` (default): `${name}` and `${name/enc/enc}`, names of
//!   `[a-zA-Z0-9_.|:/-]`; encodings after `/` only, in the reference's
//!   order whatever the written one: `first` and the URL parts (`scheme`,
//!   `hostname`, `port`, `isSecure`, `insecure`), then `json` (Go's
//!   encoder, `<>&` escaped) or else `yaml` (with its trailing newline),
//!   then `base64` or else `unbase64`. Without encodings the value is
//!   trimmed; lists and maps print as Go prints them (`[a b]`).
//! * `mustache`: the same engine with `{{name}}` delimiters (dots kept).
//! * `_mustache`: real Mustache as the reference renders it
//!   ([`super::mustache`]), binding names with `.` replaced by `_`.
//! * `go`: Go `text/template` with Sprig v2.22 and the hub's functions
//!   ([`super::gotemplate`]); names split on `.` into nested maps, `-` → `_`.
//!
//! A reference to a name that is not a parameter is an error naming the
//! file, the line and the name (the reference writes `(unknown)` or `<no
//! value>`). All files are rendered before any is written, and nothing is
//! written when any fails; each file is written atomically.

use super::mustache;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use gotemplate::{value::to_json, Value as GoValue};
use hub_manifest::diag::Warnings;
use hub_manifest::{TemplateSet, Templates};
use hub_params::expr::{self, Piece};
use hub_params::format::substitution_text;
use hub_params::ExpandedParam;
use indexmap::IndexMap;
use regex::Regex;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use yaml_serde::Value;

/// One problem with one template (or with the template configuration).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TemplateError {
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
    pub message: String,
    pub hint: Option<String>,
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(file) = &self.file {
            write!(f, "{}", file.display())?;
            if let Some(line) = self.line {
                write!(f, ":{line}")?;
            }
            f.write_str(": ")?;
        }
        f.write_str(&self.message)
    }
}

impl TemplateError {
    fn new(file: Option<&Path>, message: impl Into<String>) -> Self {
        TemplateError {
            file: file.map(Path::to_path_buf),
            line: None,
            message: message.into(),
            hint: None,
        }
    }

    fn at(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }
}

/// Every template error of a component.
#[derive(thiserror::Error, Debug)]
#[error("{}", list(.errors))]
pub struct TemplateErrors {
    pub errors: Vec<TemplateError>,
}

fn list(errors: &[TemplateError]) -> String {
    let mut out = format!(
        "template rendering failed ({} error{})",
        errors.len(),
        if errors.len() == 1 { "" } else { "s" }
    );
    for error in errors {
        out.push_str(&format!("\n  {error}"));
    }
    out
}

impl TemplateErrors {
    /// The errors, then their hints (`help: …`): the text a failed
    /// component records.
    pub fn with_hints(&self) -> String {
        match self.hint() {
            Some(hint) => format!("{self}\n  help: {}", hint.replace('\n', "\n  help: ")),
            None => self.to_string(),
        }
    }

    /// The distinct hints of the errors, one per line.
    pub fn hint(&self) -> Option<String> {
        let mut hints: Vec<&str> = Vec::new();
        for hint in self.errors.iter().filter_map(|e| e.hint.as_deref()) {
            if !hints.contains(&hint) {
                hints.push(hint);
            }
        }
        (!hints.is_empty()).then(|| hints.join("\n"))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Curly,
    Mustache,
    RealMustache,
    Go,
}

impl Kind {
    fn parse(kind: &str) -> Option<Kind> {
        match kind {
            "" | "curly" => Some(Kind::Curly),
            "mustache" => Some(Kind::Mustache),
            "_mustache" => Some(Kind::RealMustache),
            "go" => Some(Kind::Go),
            _ => None,
        }
    }
}

/// A file to render.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Job {
    input: PathBuf,
    output: PathBuf,
    kind: Kind,
}

/// The component's parameters by name.
struct Bindings<'a> {
    values: IndexMap<&'a str, Option<&'a Value>>,
    component: &'a str,
}

impl<'a> Bindings<'a> {
    /// `name`, or `name|<this component>` read as `name`.
    fn get(&self, name: &str) -> Option<Option<&'a Value>> {
        if let Some(value) = self.values.get(name) {
            return Some(*value);
        }
        let (plain, qualifier) = name.split_once('|')?;
        (qualifier == self.component)
            .then(|| self.values.get(plain).copied())
            .flatten()
    }
}

/// Renders the component's templates before invocation; returns the files
/// written, in selection order.
pub fn render(
    dir: &Path,
    templates: &Templates,
    params: &[ExpandedParam],
    component: &str,
    warnings: &mut Warnings,
) -> Result<Vec<PathBuf>, TemplateErrors> {
    let values = params
        .iter()
        .map(|p| (p.name.as_str(), p.value.as_ref()))
        .collect();
    render_with(dir, templates, &Bindings { values, component }, warnings)
}

/// Renders with name → value bindings (`hub render`: parameters, outputs
/// and additional values); later names replace earlier ones.
pub fn render_values(
    dir: &Path,
    templates: &Templates,
    values: &[(String, Option<Value>)],
    component: &str,
    warnings: &mut Warnings,
) -> Result<Vec<PathBuf>, TemplateErrors> {
    let values = values
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_ref()))
        .collect();
    render_with(dir, templates, &Bindings { values, component }, warnings)
}

fn render_with(
    dir: &Path,
    templates: &Templates,
    bindings: &Bindings,
    warnings: &mut Warnings,
) -> Result<Vec<PathBuf>, TemplateErrors> {
    let mut errors = Vec::new();
    let mut jobs: Vec<Job> = Vec::new();
    for set in sets(templates) {
        for job in select(dir, &set, bindings, &mut errors, warnings) {
            if !jobs.iter().any(|j| j.input == job.input) {
                jobs.push(job);
            }
        }
    }
    let rendered: Vec<(Job, String)> = jobs
        .into_iter()
        .filter_map(|job| match render_file(&job, bindings, warnings) {
            Ok(text) => Some((job, text)),
            Err(mut problems) => {
                errors.append(&mut problems);
                None
            }
        })
        .collect();
    if !errors.is_empty() {
        return Err(TemplateErrors { errors });
    }
    let mut written = Vec::new();
    for (job, text) in rendered {
        match write_atomically(&job.input, &job.output, &text) {
            Ok(()) => written.push(job.output),
            Err(error) => errors.push(error),
        }
    }
    if errors.is_empty() {
        Ok(written)
    } else {
        Err(TemplateErrors { errors })
    }
}

/// The main set (when it selects anything) and the `extra` sets.
fn sets(templates: &Templates) -> Vec<TemplateSet> {
    let main = TemplateSet {
        kind: templates.kind.clone(),
        directories: templates.directories.clone(),
        files: templates.files.clone(),
    };
    let mut out = Vec::new();
    if !main.files.is_empty() || !main.directories.is_empty() {
        out.push(main);
    }
    out.extend(templates.extra.iter().cloned());
    out
}

/// The files one set selects; problems go to `errors` (fatal) and
/// `warnings` (globs without matches, directories matched by globs).
fn select(
    dir: &Path,
    set: &TemplateSet,
    bindings: &Bindings,
    errors: &mut Vec<TemplateError>,
    warnings: &mut Warnings,
) -> Vec<Job> {
    let Some(kind) = Kind::parse(&set.kind) else {
        errors.push(
            TemplateError::new(None, format!("unknown template kind `{}`", set.kind)).hint(
                "`templates.kind` is one of `curly` (the default), `mustache`, `_mustache`, `go`",
            ),
        );
        return Vec::new();
    };
    let directories: Vec<String> = set
        .directories
        .iter()
        .filter_map(|d| expand_entry(d, bindings, errors))
        .collect();
    let mut files: Vec<String> = set
        .files
        .iter()
        .filter_map(|f| expand_entry(f, bindings, errors))
        .collect();
    if set.files.is_empty() && !directories.is_empty() {
        files.push("*".into());
    }
    let mut inputs = Vec::new();
    for entry in &files {
        if is_glob(entry) {
            let bases: Vec<PathBuf> = if directories.is_empty() {
                vec![dir.to_path_buf()]
            } else {
                directories.iter().map(|d| dir.join(d)).collect()
            };
            for base in bases {
                inputs.extend(glob_files(&base, entry, errors, warnings));
            }
        } else {
            inputs.push(plain_input(&dir.join(entry)));
        }
    }
    inputs
        .into_iter()
        .filter(|input| check_input(input, errors))
        .map(|input| Job {
            output: output_path(&input),
            input,
            kind,
        })
        .collect()
}

/// Expands `${name}` in a file or directory entry.
fn expand_entry(
    entry: &str,
    bindings: &Bindings,
    errors: &mut Vec<TemplateError>,
) -> Option<String> {
    let mut out = String::new();
    let mut ok = true;
    for piece in expr::parse(entry) {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Reference(name) => match bindings.get(name) {
                Some(value) => out.push_str(&substitution_text(value)),
                None => {
                    ok = false;
                    errors.push(
                        TemplateError::new(
                            None,
                            format!(
                                "template entry `{entry}` refers to unknown parameter `{name}`"
                            ),
                        )
                        .hint(declare_hint(name)),
                    );
                }
            },
            Piece::Cel(_) => {
                ok = false;
                errors.push(TemplateError::new(
                    None,
                    format!("template entry `{entry}`: `#{{...}}` is not supported in template entries, only `${{name}}`"),
                ));
            }
        }
    }
    ok.then_some(out)
}

fn declare_hint(name: &str) -> String {
    format!(
        "templates see only the component's own parameters: declare `{name}` under `parameters` in the component manifest"
    )
}

fn is_glob(entry: &str) -> bool {
    entry.contains('*') || entry.contains('[') || entry.contains('?')
}

/// The regular files matching `pattern` under `base`, in name order.
fn glob_files(
    base: &Path,
    pattern: &str,
    errors: &mut Vec<TemplateError>,
    warnings: &mut Warnings,
) -> Vec<PathBuf> {
    let full = format!(
        "{}/{pattern}",
        glob::Pattern::escape(&base.to_string_lossy())
    );
    let paths = match glob::glob(&full) {
        Ok(paths) => paths,
        Err(error) => {
            errors.push(TemplateError::new(
                None,
                format!("bad template glob `{pattern}`: {error}"),
            ));
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for path in paths.filter_map(Result::ok) {
        if path.is_file() {
            out.push(path);
        } else {
            warnings.warn(
                None,
                format!(
                    "template glob `{pattern}` matched `{}`, which is not a file; skipped",
                    path.display()
                ),
            );
        }
    }
    if out.is_empty() {
        warnings.warn(
            None,
            format!(
                "template glob `{pattern}` matched no file in `{}`",
                base.display()
            ),
        );
    }
    out
}

/// A non-glob entry: `<file>.template`, then `<file>.gotemplate`, when the
/// entry has neither suffix and such a file exists; else the file itself.
fn plain_input(path: &Path) -> PathBuf {
    let name = path.to_string_lossy();
    if name.ends_with(".template") || name.ends_with(".gotemplate") {
        return path.to_path_buf();
    }
    [".template", ".gotemplate"]
        .iter()
        .map(|suffix| PathBuf::from(format!("{name}{suffix}")))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| path.to_path_buf())
}

fn check_input(input: &Path, errors: &mut Vec<TemplateError>) -> bool {
    match std::fs::metadata(input) {
        Ok(meta) if meta.is_file() => true,
        Ok(_) => {
            errors.push(TemplateError::new(
                Some(input),
                "template is not a regular file",
            ));
            false
        }
        Err(error) => {
            errors.push(
                TemplateError::new(Some(input), format!("template cannot be read: {error}")).hint(
                    "list existing files in `templates.files`, relative to the component directory",
                ),
            );
            false
        }
    }
}

/// The input without its `.template` / `.gotemplate` suffix; the input
/// itself when it has neither (rendered in place).
fn output_path(input: &Path) -> PathBuf {
    let name = input.to_string_lossy();
    [".template", ".gotemplate"]
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .filter(|stem| !stem.is_empty() && !stem.ends_with('/'))
        .map(PathBuf::from)
        .unwrap_or_else(|| input.to_path_buf())
}

fn render_file(
    job: &Job,
    bindings: &Bindings,
    warnings: &mut Warnings,
) -> Result<String, Vec<TemplateError>> {
    let file = job.input.as_path();
    let source = std::fs::read(file).map_err(|e| {
        vec![TemplateError::new(
            Some(file),
            format!("template cannot be read: {e}"),
        )]
    })?;
    let source = String::from_utf8(source)
        .map_err(|_| vec![TemplateError::new(Some(file), "template is not UTF-8 text")])?;
    match job.kind {
        Kind::Curly => replace(file, &source, &CURLY, "${...}", bindings, warnings),
        Kind::Mustache => replace(file, &source, &MUSTACHE, "{{...}}", bindings, warnings),
        Kind::RealMustache => real_mustache(file, &source, bindings),
        Kind::Go => go_template(file, &source, bindings, warnings),
    }
}

static CURLY: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\$\{([a-zA-Z0-9_.|:/-]+)\}").expect("valid pattern"));
static MUSTACHE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\{\{([a-zA-Z0-9_.|:/-]+)\}\}").expect("valid pattern"));

/// The `curly` and `mustache` engine.
fn replace(
    file: &Path,
    source: &str,
    pattern: &Regex,
    shape: &str,
    bindings: &Bindings,
    warnings: &mut Warnings,
) -> Result<String, Vec<TemplateError>> {
    let mut errors = Vec::new();
    let mut out = String::with_capacity(source.len());
    let mut last = 0;
    let mut substitutions = 0;
    for captures in pattern.captures_iter(source) {
        let (Some(whole), Some(reference)) = (captures.get(0), captures.get(1)) else {
            continue;
        };
        out.push_str(&source[last..whole.start()]);
        last = whole.end();
        substitutions += 1;
        let line = line_of(source, whole.start());
        match substitute(reference.as_str(), bindings) {
            Ok(text) => out.push_str(&text),
            Err(error) => errors.push(TemplateError {
                file: Some(file.to_path_buf()),
                line: Some(line),
                ..error
            }),
        }
    }
    out.push_str(&source[last..]);
    if substitutions == 0 {
        warnings.warn(
            None,
            format!(
                "template `{}` has no `{shape}` substitution",
                file.display()
            ),
        );
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

fn line_of(source: &str, offset: usize) -> usize {
    source[..offset].matches('\n').count() + 1
}

/// The text for `name/enc/enc`. As in the reference, the order of the
/// encodings does not matter: the successor's extractions (`first`, URL
/// parts) apply first, then `json` (else `yaml`), then `base64` (else
/// `unbase64`).
fn substitute(reference: &str, bindings: &Bindings) -> Result<String, TemplateError> {
    let mut parts = reference.split('/');
    let name = parts.next().unwrap_or_default();
    let encodings: Vec<&str> = parts.collect();
    let Some(value) = bindings.get(name) else {
        return Err(
            TemplateError::new(None, format!("unknown parameter `{name}`"))
                .hint(declare_hint(name)),
        );
    };
    if encodings.is_empty() {
        return Ok(plain_text(value).trim().to_string());
    }
    let fail = |message: String| TemplateError::new(None, format!("`${{{reference}}}`: {message}"));
    for encoding in &encodings {
        match *encoding {
            "bcrypt" => return Err(fail("the `bcrypt` encoding is not supported".into())),
            known if KNOWN_ENCODINGS.contains(&known) => {}
            other => {
                return Err(fail(format!(
                    "unknown encoding `{other}` (known: {ENCODINGS})"
                )))
            }
        }
    }
    let has = |wanted: &str| encodings.contains(&wanted);
    let mut current = Encoded::Value(value.cloned().unwrap_or(Value::Null));
    let ordered = encodings
        .iter()
        .filter(|e| !matches!(**e, "json" | "yaml" | "base64" | "unbase64"))
        .copied()
        .chain(["json", "yaml"].into_iter().find(|e| has(e)))
        .chain(["base64", "unbase64"].into_iter().find(|e| has(e)));
    for encoding in ordered {
        current = encode(encoding, current).map_err(fail)?;
    }
    Ok(current.text())
}

/// A value as the reference prints it: scalars as text, lists and maps as
/// Go prints them (`[a b]`, `map[k:v]`).
fn plain_text(value: Option<&Value>) -> String {
    match value {
        Some(v @ (Value::Sequence(_) | Value::Mapping(_))) => {
            GoValue::from_yaml(v, false).to_go_string()
        }
        other => substitution_text(other),
    }
}

/// A value part-way through its encodings.
enum Encoded {
    Value(Value),
    Text(String),
}

impl Encoded {
    fn text(&self) -> String {
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

const KNOWN_ENCODINGS: [&str; 10] = [
    "json", "yaml", "base64", "unbase64", "first", "scheme", "hostname", "port", "isSecure",
    "insecure",
];

const ENCODINGS: &str =
    "`json`, `yaml`, `base64`, `unbase64`, `first`, `scheme`, `hostname`, `port`, `isSecure`, `insecure`";

fn encode(encoding: &str, current: Encoded) -> Result<Encoded, String> {
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
fn yaml_text(value: &Value) -> Result<String, String> {
    yaml_serde::to_string(value).map_err(|e| format!("`yaml`: {e}"))
}

/// The first element of a list, or the first of comma-separated text.
fn first(current: Encoded) -> Encoded {
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
fn url_part(part: &str, url: &str) -> Result<String, String> {
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
fn split_port(host_port: &str) -> (&str, Option<&str>) {
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

/// `_mustache`: binding names with `.` → `_`, values untrimmed.
fn real_mustache(
    file: &Path,
    source: &str,
    bindings: &Bindings,
) -> Result<String, Vec<TemplateError>> {
    let context = GoValue::Map(
        bindings
            .values
            .iter()
            .map(|(name, value)| {
                let value = value.map_or(GoValue::Nil, |v| GoValue::from_yaml(v, false));
                (name.replace('.', "_"), value)
            })
            .collect(),
    );
    mustache::render(source, &context).map_err(|error| {
        let hint = match &error.missing {
            Some(name) if name.contains('.') => format!(
                "`_mustache` templates write dots as underscores: `{{{{{}}}}}`",
                name.replace('.', "_")
            ),
            Some(name) => declare_hint(name),
            None => "see the Mustache syntax: sections `{{#x}}…{{/x}}`, inverted `{{^x}}…{{/x}}`, raw `{{{x}}}`".into(),
        };
        vec![TemplateError::new(Some(file), error.message)
            .at(error.line)
            .hint(hint)]
    })
}

/// `go`: Go `text/template` with Sprig and the hub's functions; parameter
/// names split on `.` into nested maps with `-` → `_`.
fn go_template(
    file: &Path,
    source: &str,
    bindings: &Bindings,
    warnings: &mut Warnings,
) -> Result<String, Vec<TemplateError>> {
    let (data, conflicts) = gotemplate::bindings(bindings.values.iter().map(|(n, v)| (*n, *v)));
    for name in conflicts {
        warnings.warn(
            None,
            format!(
                "`{}`: parameter `{name}` is both a value and a prefix of another parameter; the `go` template sees the first",
                file.display()
            ),
        );
    }
    gotemplate::render(source, &data).map_err(|error| {
        let mut problem = TemplateError::new(Some(file), error.message);
        if error.line > 0 {
            problem = problem.at(error.line);
        }
        if let Some(key) = error.key {
            problem = problem.hint(format!(
                "a `go` template sees only the component's own parameters (`.a.b_c` is parameter `a.b-c` or `a.b_c`): declare the one behind `{key}` under `parameters` in the component manifest"
            ));
        }
        vec![problem]
    })
}

/// Writes `text` to a temporary file beside `output`, gives it the mode of
/// `input`, then renames it over `output`.
fn write_atomically(input: &Path, output: &Path, text: &str) -> Result<(), TemplateError> {
    let fail = |what: &str, e: std::io::Error| {
        TemplateError::new(Some(output), format!("cannot {what}: {e}"))
    };
    let parent = output
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = output
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temporary = parent.join(format!(".{name}.hub-{}.tmp", std::process::id()));
    let permissions = std::fs::metadata(input)
        .map_err(|e| fail("read the template's mode", e))?
        .permissions();
    let result = std::fs::write(&temporary, text)
        .map_err(|e| fail("write the rendered file", e))
        .and_then(|()| {
            std::fs::set_permissions(&temporary, permissions)
                .map_err(|e| fail("set the file mode", e))
        })
        .and_then(|()| {
            std::fs::rename(&temporary, output).map_err(|e| fail("replace the file", e))
        });
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_params::Origin;
    use std::os::unix::fs::PermissionsExt;

    fn param(name: &str, value: &str) -> ExpandedParam {
        ExpandedParam {
            name: name.into(),
            value: Some(yaml_serde::from_str(value).expect("yaml value")),
            env: String::new(),
            origin: Origin::Value,
            expression: None,
            declared: None,
            secret: false,
        }
    }

    fn params() -> Vec<ExpandedParam> {
        vec![
            param("hub.componentName", "a"),
            param("dns.domain", "example.com"),
            param("padded", "' x '"),
            param("list", "[a, b]"),
            param("map", "{k: v}"),
            param("n", "5"),
            param("url", "https://user@api.example.com:8443/x"),
            param("html", "'<b>&'"),
            param("empty", "''"),
        ]
    }

    fn files(pairs: &[(&str, &str)]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        for (name, text) in pairs {
            let path = dir.path().join(name);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, text).expect("write");
        }
        dir
    }

    fn templates(kind: &str, directories: &[&str], entries: &[&str]) -> Templates {
        Templates {
            kind: kind.into(),
            directories: directories.iter().map(|s| s.to_string()).collect(),
            files: entries.iter().map(|s| s.to_string()).collect(),
            extra: Vec::new(),
        }
    }

    fn run(
        dir: &Path,
        templates: &Templates,
    ) -> (Result<Vec<PathBuf>, TemplateErrors>, Vec<String>) {
        let mut warnings = Warnings::default();
        let result = render(dir, templates, &params(), "a", &mut warnings);
        (result, warnings.iter().map(|w| w.to_string()).collect())
    }

    fn read(dir: &Path, name: &str) -> String {
        std::fs::read_to_string(dir.join(name)).expect("rendered file")
    }

    #[test]
    fn deploy_case_28_curly_template_keeps_mode() {
        let dir = files(&[(
            "conf.txt.template",
            "d=${dns.domain} b=${dns.domain/base64} n=${hub.componentName}\n",
        )]);
        let input = dir.path().join("conf.txt.template");
        std::fs::set_permissions(&input, std::fs::Permissions::from_mode(0o640)).expect("chmod");
        let (result, warnings) = run(dir.path(), &templates("", &[], &["*.template"]));
        assert_eq!(result.expect("rendered"), [dir.path().join("conf.txt")]);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            read(dir.path(), "conf.txt"),
            "d=example.com b=ZXhhbXBsZS5jb20= n=a\n"
        );
        let mode = std::fs::metadata(dir.path().join("conf.txt"))
            .expect("meta")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
        assert!(input.exists(), "the template stays");
    }

    #[test]
    fn deploy_case_29_unknown_parameter_fails_and_writes_nothing() {
        let dir = files(&[
            (
                "a.template",
                "ok=${dns.domain}\nregion=${cloud.region}\n\nz=${also.missing}\n",
            ),
            ("b.template", "fine=${n}\n"),
        ]);
        let (result, _) = run(dir.path(), &templates("curly", &[], &["*.template"]));
        let errors = result.expect_err("unknown names");
        assert_eq!(errors.errors.len(), 2);
        assert_eq!(errors.errors[0].line, Some(2));
        assert_eq!(errors.errors[1].line, Some(4));
        let text = errors.to_string();
        assert!(
            text.contains("a.template:2: unknown parameter `cloud.region`"),
            "{text}"
        );
        assert!(text.contains("`also.missing`"), "{text}");
        assert!(errors.hint().expect("hint").contains("parameters"));
        assert!(!dir.path().join("a").exists());
        assert!(
            !dir.path().join("b").exists(),
            "nothing is written when any template fails"
        );
    }

    #[test]
    fn curly_stringification_and_trimming() {
        let dir = files(&[(
            "t.template",
            "[${padded}] ${list} ${map} ${n} [${empty}] ${x|a}\n",
        )]);
        let mut warnings = Warnings::default();
        let mut all = params();
        all.push(param("x", "q"));
        render(
            dir.path(),
            &templates("", &[], &["t"]),
            &all,
            "a",
            &mut warnings,
        )
        .expect("rendered");
        assert_eq!(read(dir.path(), "t"), "[x] [a b] map[k:v] 5 [] q\n");
    }

    #[test]
    fn curly_encodings_apply_in_the_reference_order() {
        let dir = files(&[(
            "t.template",
            "${list/json} ${map/yaml} ${padded/base64} ${dns.domain/base64/unbase64} ${list/first} \
             ${url/hostname} ${url/port} ${url/scheme} ${url/isSecure} ${url/insecure} ${list/json/base64}\n",
        )]);
        let (result, _) = run(dir.path(), &templates("", &[], &["t.template"]));
        result.expect("rendered");
        assert_eq!(
            read(dir.path(), "t"),
            "[\"a\",\"b\"] k: v\n IHgg ZXhhbXBsZS5jb20= a api.example.com 8443 https true false WyJhIiwiYiJd\n"
        );
    }

    #[test]
    fn curly_json_escapes_html_and_yaml_keeps_its_newline() {
        let dir = files(&[(
            "t.template",
            "${html/json}|${html/yaml}|${list/yaml/json}|${n/unbase64/base64}\n",
        )]);
        let (result, _) = run(dir.path(), &templates("", &[], &["t.template"]));
        result.expect("rendered");
        assert_eq!(
            read(dir.path(), "t"),
            "\"\\u003cb\\u003e\\u0026\"|<b>&\n|[\"a\",\"b\"]|NQ==\n"
        );
    }

    #[test]
    fn unknown_and_unsupported_encodings_are_errors() {
        let dir = files(&[(
            "t.template",
            "${n/rot13}\n${n/bcrypt}\n${dns.domain/port}\n",
        )]);
        let (result, _) = run(dir.path(), &templates("", &[], &["t.template"]));
        let errors = result.expect_err("bad encodings").errors;
        assert_eq!(errors.len(), 3);
        assert!(
            errors[0].message.contains("unknown encoding `rot13`"),
            "{}",
            errors[0]
        );
        assert!(errors[1].message.contains("bcrypt"), "{}", errors[1]);
        assert!(errors[2].message.contains("not a URL"), "{}", errors[2]);
    }

    #[test]
    fn url_parts() {
        assert_eq!(url_part("port", "http://h/x").expect("port"), "80");
        assert_eq!(
            url_part("hostname", "https://[::1]:9/").expect("host"),
            "::1"
        );
        assert_eq!(url_part("port", "https://[::1]:9/").expect("port"), "9");
        assert!(url_part("port", "ftp://h").is_err());
    }

    #[test]
    fn template_without_substitution_warns() {
        let dir = files(&[("plain.conf.template", "static\n")]);
        let (result, warnings) = run(dir.path(), &templates("", &[], &["plain.conf"]));
        assert_eq!(result.expect("rendered"), [dir.path().join("plain.conf")]);
        assert_eq!(read(dir.path(), "plain.conf"), "static\n");
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("no `${...}` substitution")),
            "{warnings:?}"
        );
    }

    #[test]
    fn plain_entries_prefer_template_then_gotemplate_then_in_place() {
        let dir = files(&[
            ("a.conf.template", "a=${n}"),
            ("a.conf.gotemplate", "never"),
            ("b.conf.gotemplate", "b=${n}"),
            ("c.conf", "c=${n}"),
        ]);
        let (result, _) = run(
            dir.path(),
            &templates("", &[], &["a.conf", "b.conf", "c.conf"]),
        );
        let root = dir.path();
        assert_eq!(
            result.expect("rendered"),
            [
                root.join("a.conf"),
                root.join("b.conf"),
                root.join("c.conf")
            ]
        );
        assert_eq!(read(root, "a.conf"), "a=5");
        assert_eq!(read(root, "b.conf"), "b=5");
        assert_eq!(read(root, "c.conf"), "c=5");
    }

    #[test]
    fn missing_selected_files_are_listed() {
        let dir = files(&[]);
        let (result, _) = run(dir.path(), &templates("", &[], &["one.conf", "two.conf"]));
        let errors = result.expect_err("missing").errors;
        assert_eq!(errors.len(), 2);
        assert!(errors[0].to_string().contains("one.conf"), "{}", errors[0]);
        assert!(errors[1].to_string().contains("two.conf"), "{}", errors[1]);
    }

    #[test]
    fn directories_scope_globs_and_default_to_everything() {
        let dir = files(&[
            ("top.template", "t=${n}"),
            ("conf.d/x.template", "x=${n}"),
            ("conf.d/y.conf", "y=${n}"),
            ("conf.d/sub/z", "no"),
        ]);
        let (result, warnings) = run(dir.path(), &templates("", &["conf.d"], &[]));
        let written = result.expect("rendered");
        let root = dir.path();
        assert_eq!(written, [root.join("conf.d/x"), root.join("conf.d/y.conf")]);
        assert_eq!(read(root, "conf.d/x"), "x=5");
        assert_eq!(read(root, "conf.d/y.conf"), "y=5");
        assert!(
            !root.join("top").exists(),
            "top-level globs are not scanned with directories"
        );
        assert!(
            warnings.iter().any(|w| w.contains("not a file")),
            "{warnings:?}"
        );

        let (result, warnings) = run(root, &templates("", &["conf.d"], &["*.nothing"]));
        assert!(result.expect("nothing selected").is_empty());
        assert!(
            warnings.iter().any(|w| w.contains("matched no file")),
            "{warnings:?}"
        );
    }

    #[test]
    fn entries_expand_parameters() {
        let dir = files(&[("a/example.com.conf.template", "${n}")]);
        let root = dir.path();
        // Plain entries are relative to the component directory, not to
        // `directories`.
        let (result, _) = run(root, &templates("", &["a"], &["${dns.domain}.conf"]));
        let text = result
            .expect_err("not in the component directory")
            .to_string();
        assert!(text.contains("example.com.conf"), "{text}");
        let (result, _) = run(root, &templates("", &[], &["a/${dns.domain}.conf"]));
        assert_eq!(result.expect("rendered"), [root.join("a/example.com.conf")]);
        let (result, _) = run(root, &templates("", &[], &["${nope}.conf"]));
        assert!(result.expect_err("unknown").to_string().contains("`nope`"));
    }

    #[test]
    fn mustache_kind_uses_braces_and_keeps_dots() {
        let dir = files(&[("m.template", "{{dns.domain}} {{ n }} ${n} {{n/base64}}\n")]);
        let (result, _) = run(dir.path(), &templates("mustache", &[], &["m.template"]));
        result.expect("rendered");
        assert_eq!(read(dir.path(), "m"), "example.com {{ n }} ${n} NQ==\n");
    }

    #[test]
    fn real_mustache_renders_with_underscores_and_escapes_html() {
        let dir = files(&[(
            "r.template",
            "{{dns_domain}} {{html}} {{{html}}} {{&html}}{{#n}} n={{n}}{{/n}}{{^empty}} empty{{/empty}}{{! note }}\n\n",
        )]);
        let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
        result.expect("rendered");
        assert_eq!(
            read(dir.path(), "r"),
            "example.com &lt;b&gt;&amp; <b>& <b>& n=5 empty\n\n"
        );
    }

    #[test]
    fn real_mustache_missing_keys_are_errors_with_lines() {
        let dir = files(&[(
            "r.template",
            "ok {{n}}\n{{dns.domain}}\n{{#nope}}x{{/nope}}\n",
        )]);
        let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
        let errors = result.expect_err("missing").errors;
        assert_eq!(errors.len(), 1, "the first problem stops the file");
        assert_eq!(errors[0].line, Some(2));
        assert!(errors[0]
            .hint
            .as_deref()
            .expect("hint")
            .contains("{{dns_domain}}"));
        assert!(!dir.path().join("r").exists());
    }

    #[test]
    fn real_mustache_sections_follow_the_reference() {
        let dir = files(&[(
            "r.template",
            "{{#list}}\n- {{.}} {{missing}}\n{{/list}}\n{{#empty}}never{{/empty}}{{^empty}}blank{{/empty}}\n",
        )]);
        let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
        result.expect("rendered");
        assert_eq!(read(dir.path(), "r"), "- a \n\n- b \nblank\n");

        let dir = files(&[("r.template", "{{^n}}x{{/n}}")]);
        let (result, _) = run(dir.path(), &templates("_mustache", &[], &["r.template"]));
        let text = result.expect_err("inverted over true").to_string();
        assert!(text.contains("r.template:1: inverted section"), "{text}");
    }

    #[test]
    fn go_kind_renders_and_unknown_kind_fails() {
        let dir = files(&[(
            "values.yaml.gotemplate",
            "d={{ .dns.domain }} {{ .list | join \",\" }}\n",
        )]);
        let mut set = templates("", &[], &[]);
        set.extra.push(TemplateSet {
            kind: "go".into(),
            directories: vec![],
            files: vec!["values.yaml.gotemplate".into()],
        });
        let (result, _) = run(dir.path(), &set);
        result.expect("rendered");
        assert_eq!(read(dir.path(), "values.yaml"), "d=example.com a,b\n");

        let dir = files(&[("v.gotemplate", "{{ .dns.domain }}\n{{ .dns.nope }}")]);
        let (result, _) = run(dir.path(), &templates("go", &[], &["v.gotemplate"]));
        let errors = result.expect_err("missing key");
        assert!(
            errors
                .to_string()
                .contains("v.gotemplate:2: map has no entry for key \"nope\""),
            "{errors}"
        );
        assert!(errors.hint().expect("hint").contains("parameters"));
        assert!(!dir.path().join("v").exists());

        let (result, _) = run(dir.path(), &templates("jinja", &[], &["*"]));
        let errors = result.expect_err("unknown kind");
        assert!(errors.to_string().contains("unknown template kind `jinja`"));
        assert!(errors.hint().expect("hint").contains("_mustache"));
    }

    #[test]
    fn extra_sets_use_their_own_kind() {
        let dir = files(&[("a.template", "${n}"), ("b.template", "{{n}}")]);
        let mut set = templates("curly", &[], &["a.template"]);
        set.extra.push(TemplateSet {
            kind: "mustache".into(),
            directories: vec![],
            files: vec!["b.template".into()],
        });
        let (result, _) = run(dir.path(), &set);
        assert_eq!(result.expect("rendered").len(), 2);
        assert_eq!(read(dir.path(), "a"), "5");
        assert_eq!(read(dir.path(), "b"), "5");
    }

    #[test]
    fn no_templates_render_nothing() {
        let dir = files(&[("x.template", "${n}")]);
        let (result, warnings) = run(dir.path(), &Templates::default());
        assert!(result.expect("nothing").is_empty());
        assert!(warnings.is_empty());
    }

    #[test]
    fn output_paths() {
        assert_eq!(
            output_path(Path::new("d/a.conf.template")),
            Path::new("d/a.conf")
        );
        assert_eq!(
            output_path(Path::new("d/v.yaml.gotemplate")),
            Path::new("d/v.yaml")
        );
        assert_eq!(output_path(Path::new("d/plain")), Path::new("d/plain"));
        assert_eq!(
            output_path(Path::new("d/.template")),
            Path::new("d/.template")
        );
    }
}
