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
use gotemplate::Value as GoValue;
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

mod encode;

#[cfg(test)]
use encode::url_part;
use encode::{encode, plain_text, Encoded, ENCODINGS, KNOWN_ENCODINGS};

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
pub(crate) fn render_values(
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
            Some(hub_manifest::diag::Location::file(file)),
            format!("the template has no `{shape}` substitution"),
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
            None if error.bad_name => "a `_mustache` name cannot hold `-`: use the `go` kind, which reads `-` as `_` (`{{ .a_b }}`), or `curly` (`${a-b}`)".into(),
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
mod tests;
