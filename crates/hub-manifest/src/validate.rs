//! `hub validate`: checks manifests against the JSON Schemas of
//! [`super::schema`].
//!
//! What is a warning and what is an error follows what `hub elaborate` does
//! with the file: keys it ignores (unknown keys, extra YAML documents) and
//! values it reads anyway (a number where text is expected, a `kind` it does
//! not know) are warnings; YAML it cannot parse, values of the wrong shape
//! (a string where a list is expected) and list entries without their `name`
//! are errors. As a last check the file is decoded with the typed model, so
//! a file that passes here is one `hub elaborate` can read.

use super::keys::{judge, unknown_key_message, Verdict};
use super::locate::{locate, Segment};
use super::schema::{schema, DocumentType, PerDocument};
use super::{Manifest, ManifestError, ParamsFile, SourceFile};
use crate::diag::{Location, Warnings};
use crate::typos::{is_refused, refused_hint, refused_message, Origin, TypoPolicy};
use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::paths::LocationSegment;
use jsonschema::{JsonType, ValidationError, Validator};
use serde::Deserialize;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use yaml_serde::Value as Yaml;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Warning,
    Error,
}

/// One thing `hub validate` has to say about a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    pub location: Location,
    pub message: String,
    pub hint: Option<String>,
}

/// The findings for one file, in the order of the file where possible.
#[derive(Debug, Clone)]
pub struct FileReport {
    pub path: PathBuf,
    /// The schema the file was checked against; `None` when it could not
    /// be read.
    pub document: Option<DocumentType>,
    pub findings: Vec<Finding>,
}

impl FileReport {
    pub fn errors(&self) -> usize {
        self.count(Severity::Error)
    }

    pub fn warnings(&self) -> usize {
        self.count(Severity::Warning)
    }

    pub fn is_valid(&self) -> bool {
        self.errors() == 0
    }

    fn count(&self, severity: Severity) -> usize {
        self.findings
            .iter()
            .filter(|f| f.severity == severity)
            .count()
    }
}

/// Checks every file; the reports come in the order of `files`.
pub fn validate_files(files: &[PathBuf], policy: TypoPolicy) -> Vec<FileReport> {
    files
        .iter()
        .map(|file| validate_file(file, policy))
        .collect()
}

/// Which schema applies: `kind: stack|application|component` decides;
/// without one (or with another value) the file name does:
/// `hub-component.yaml` is a component, `params*.yaml` a parameters file,
/// anything else a stack.
pub fn document_type(path: &Path, kind: Option<&str>) -> DocumentType {
    match kind {
        Some("stack" | "application") => return DocumentType::Stack,
        Some("component") => return DocumentType::Component,
        _ => {}
    }
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let name = name.strip_suffix(".gz").unwrap_or(name);
    if matches!(name, "hub-component.yaml" | "hub-component.yml") {
        DocumentType::Component
    } else if name.starts_with("params") {
        DocumentType::Params
    } else {
        DocumentType::Stack
    }
}

/// `hub.yaml`, `hub-application.yaml`, `hub-component.yaml` (or `.yml`).
fn is_manifest_name(path: &Path) -> bool {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or_default();
    matches!(stem, "hub" | "hub-application" | "hub-component")
}

pub fn validate_file(path: &Path, policy: TypoPolicy) -> FileReport {
    match SourceFile::read(path) {
        Ok(file) => validate_source(&file, policy),
        Err(e) => FileReport {
            path: path.to_path_buf(),
            document: None,
            findings: vec![manifest_error(path, &e)],
        },
    }
}

/// [`validate_file`] for a file already read.
/// Near typos are errors or warnings as [`crate::typos::is_refused`]
/// decides for the file (a component manifest is [`Origin::Foreign`]), the
/// decision `elaborate`, `plan` and `deploy` make.
pub fn validate_source(file: &SourceFile, policy: TypoPolicy) -> FileReport {
    let path = file.path.as_path();
    let mut report = FileReport {
        path: path.to_path_buf(),
        document: None,
        findings: Vec::new(),
    };
    let mut checker = Checker {
        file,
        policy,
        origin: Origin::Own,
    };
    let documents = match checker.documents() {
        Ok(documents) => documents,
        Err(finding) => {
            report.findings.push(finding);
            return report;
        }
    };
    let first = documents.first();
    let kind = first.and_then(|doc| doc.get("kind")).and_then(Json::as_str);
    let document = document_type(path, kind);
    report.document = Some(document);
    if document == DocumentType::Component {
        checker.origin = Origin::Foreign;
    }
    let Some(first) = first else {
        // Fine for a parameters file; `hub elaborate` rejects an empty stack
        // or component manifest, so that is an error under their usual
        // names and a warning under any other.
        if document != DocumentType::Params {
            let e = ManifestError::NoDocuments {
                path: path.to_path_buf(),
            };
            let mut finding = manifest_error(path, &e);
            if !is_manifest_name(path) {
                finding.severity = Severity::Warning;
                finding
                    .message
                    .push_str(" (fine for a parameters file, not for a stack or component)");
            }
            report.findings.push(finding);
        }
        return report;
    };
    report.findings.extend(checker.check(document, first));
    if documents.len() > 1 {
        report.findings.push(Finding {
            severity: Severity::Warning,
            location: checker.second_document(),
            message: format!(
                "the file holds {} YAML documents; only the first is used and checked",
                documents.len()
            ),
            hint: None,
        });
    }
    if report.is_valid() {
        if let Err(e) = checker.decode(document) {
            report.findings.push(manifest_error(path, &e));
        }
    }
    report
}

fn manifest_error(path: &Path, error: &ManifestError) -> Finding {
    Finding {
        severity: Severity::Error,
        location: error.location().unwrap_or_else(|| Location::file(path)),
        message: error.to_string(),
        hint: error.hint(),
    }
}

/// A document type's schema and its compiled validator, built once.
struct Compiled {
    schema: Json,
    validator: Result<Validator, String>,
}

fn compiled(document: DocumentType) -> &'static Compiled {
    static COMPILED: PerDocument<Compiled> = PerDocument::new();
    COMPILED.get(document, || {
        let schema = schema(document);
        let validator = jsonschema::draft7::new(&schema).map_err(|e| e.to_string());
        Compiled { schema, validator }
    })
}

struct Checker<'a> {
    file: &'a SourceFile,
    policy: TypoPolicy,
    /// Who wrote the file: decides with `policy` whether a near typo is
    /// an error.
    origin: Origin,
}

impl Checker<'_> {
    /// The non-empty documents of the file, as JSON values.
    fn documents(&self) -> Result<Vec<Json>, Finding> {
        let mut out = Vec::new();
        self.file
            .check_limits()
            .map_err(|e| manifest_error(&self.file.path, &e))?;
        for document in yaml_serde::Deserializer::from_str(&self.file.text) {
            let value = Yaml::deserialize(document).map_err(|e| self.yaml_error(&e))?;
            if !value.is_null() {
                out.push(to_json(&value));
            }
        }
        Ok(out)
    }

    fn yaml_error(&self, error: &yaml_serde::Error) -> Finding {
        let location = match error.location() {
            Some(at) => Location::at(&self.file.path, at.line(), at.column()),
            None => Location::file(&self.file.path),
        };
        if let Some(message) = super::load::limit_of(&error.to_string()) {
            return manifest_error(&self.file.path, &ManifestError::Limit { location, message });
        }
        Finding {
            severity: Severity::Error,
            location,
            message: format!("invalid YAML: {error}"),
            hint: Some("fix the YAML syntax at the line shown".into()),
        }
    }

    /// Decodes the first document with the typed model, as `hub elaborate`
    /// would.
    fn decode(&self, document: DocumentType) -> Result<(), ManifestError> {
        // What decoding would warn about (unknown keys, further
        // documents) the schema check above reported as findings.
        let mut ignored = Warnings::already_reported();
        match document {
            DocumentType::Params => self
                .file
                .first_document::<ParamsFile>(&mut ignored)
                .map(drop),
            _ => self.file.first_document::<Manifest>(&mut ignored).map(drop),
        }
    }

    fn check(&self, document: DocumentType, value: &Json) -> Vec<Finding> {
        let Compiled { schema, validator } = compiled(document);
        let validator = match validator {
            Ok(validator) => validator,
            Err(message) => {
                return vec![Finding {
                    severity: Severity::Error,
                    location: Location::file(&self.file.path),
                    message: format!(
                        "the {} schema does not compile: {message}",
                        document.label()
                    ),
                    hint: None,
                }]
            }
        };
        let mut findings = Vec::new();
        for error in validator.iter_errors(value) {
            self.finding(&error, schema, &mut findings);
        }
        findings.sort_by_key(|f| (f.location.line, f.location.column));
        findings.dedup();
        findings
    }

    fn finding(&self, error: &ValidationError<'_>, schema: &Json, out: &mut Vec<Finding>) {
        let path: Vec<Segment> = error
            .instance_path()
            .iter()
            .map(|segment| match segment {
                LocationSegment::Property(key) => Segment::Key(key.into_owned()),
                LocationSegment::Index(index) => Segment::Index(index),
            })
            .collect();
        let instance: &Json = error.instance();
        let field = describe(&path);
        let said = match error.kind() {
            ValidationErrorKind::AdditionalProperties { unexpected } => {
                self.unknown_keys(&path, unexpected, schema, out);
                return;
            }
            ValidationErrorKind::AnyOf { context }
            | ValidationErrorKind::OneOfNotValid { context } => {
                // `Option<T>`: T or null; report why the value is not a T.
                let branches = context
                    .iter()
                    .filter(|errors| !errors.iter().all(is_null_mismatch));
                for branch in branches {
                    for inner in branch {
                        self.finding(inner, schema, out);
                    }
                }
                return;
            }
            ValidationErrorKind::Type { kind } => self.wrong_type(&path, &field, instance, kind),
            ValidationErrorKind::Enum { options } => unknown_value(&field, instance, options),
            ValidationErrorKind::Required { property } => Some((
                Severity::Error,
                format!("{field} lacks the required key `{}`", plain(property)),
                None,
            )),
            _ => Some((Severity::Error, format!("{field}: {error}"), None)),
        };
        if let Some((severity, message, hint)) = said {
            out.push(self.at(severity, &path, message, hint));
        }
    }

    /// The keys under `path` the schema does not know: a warning each, or
    /// an error for a near typo where the origin refuses typos.
    fn unknown_keys(
        &self,
        path: &[Segment],
        unexpected: &[String],
        schema: &Json,
        out: &mut Vec<Finding>,
    ) {
        for key in unexpected {
            let mut at = path.to_vec();
            at.push(Segment::Key(key.clone()));
            if let Verdict::Unknown {
                suggestion,
                near_typo,
            } = judge(Some(schema), &at)
            {
                let message = unknown_key_message(&at, suggestion.as_deref());
                let finding = if near_typo && is_refused(self.origin, self.policy) {
                    self.at(
                        Severity::Error,
                        &at,
                        refused_message(&message),
                        Some(refused_hint(self.origin)),
                    )
                } else {
                    self.at(Severity::Warning, &at, message, None)
                };
                out.push(finding);
            }
        }
    }

    /// A value of the wrong type, or nothing where an empty or null value
    /// reads as the expected type.
    fn wrong_type(
        &self,
        path: &[Segment],
        field: &str,
        instance: &Json,
        kind: &TypeKind,
    ) -> Option<Said> {
        let expected = expected_types(kind);
        let found = json_type_name(instance);
        let scalar = matches!(instance, Json::Null | Json::Bool(_) | Json::Number(_));
        let container = expected
            .iter()
            .all(|t| matches!(t, JsonType::Array | JsonType::Object));
        // `key:` with nothing after it is read as empty, whatever
        // the type; an explicit `~` or `null` only as a string.
        let null_text = match instance {
            Json::Null => Some(self.value_text(path)),
            _ => None,
        };
        if let Some(text) = &null_text {
            let empty_ok = container || expected == [JsonType::String];
            if empty_ok && text.as_deref() == Some("") {
                return None; // read as the empty list, mapping or string
            }
            if container && text.is_none() {
                return None; // not found: the typed decoding at the end decides
            }
        }
        Some(if container && null_text.is_some() {
            (
                Severity::Error,
                format!(
                    "{field} is null, which cannot be read as {}",
                    type_name(expected[0])
                ),
                Some(format!(
                    "leave the value empty or write `{}`",
                    if expected[0] == JsonType::Array {
                        "[]"
                    } else {
                        "{}"
                    }
                )),
            )
        } else if expected == [JsonType::String] && scalar {
            let found = match null_text.flatten() {
                Some(text) => format!("null; it is read as the text `{text}`"),
                None => format!("{found}; it is read as text"),
            };
            (
                Severity::Warning,
                format!("{field} should be a string, found {found}"),
                Some("quote the value to make it a string".to_string()),
            )
        } else {
            let names: Vec<&str> = expected.iter().map(|t| type_name(*t)).collect();
            (
                Severity::Error,
                format!(
                    "{field} has the wrong type: expected {}, found {found}",
                    names.join(" or ")
                ),
                Some("see the JSON Schemas in `schemas/` for the shape of each key".to_string()),
            )
        })
    }

    fn at(
        &self,
        severity: Severity,
        path: &[Segment],
        message: String,
        hint: Option<String>,
    ) -> Finding {
        let (line, column) = locate(&self.file.text, path).unwrap_or((1, 1));
        Finding {
            severity,
            location: Location::at(&self.file.path, line, column),
            message,
            hint,
        }
    }

    /// The text of a scalar as written after its key or list dash, without
    /// a trailing comment; `None` when it cannot be found.
    fn value_text(&self, path: &[Segment]) -> Option<String> {
        let (line, column) = locate(&self.file.text, path)?;
        let line = self.file.text.lines().nth(line - 1)?;
        let rest = line.get(column - 1..)?;
        let rest = match path.last()? {
            Segment::Key(_) => rest.split_once(':')?.1,
            Segment::Index(_) => rest.strip_prefix('-')?,
        };
        let rest = match rest.find(" #") {
            Some(at) => &rest[..at],
            None => rest,
        };
        Some(rest.trim().to_string())
    }

    /// The line where the second non-empty document starts.
    fn second_document(&self) -> Location {
        self.file.second_document()
    }
}

fn describe(path: &[Segment]) -> String {
    if path.is_empty() {
        "the document".to_string()
    } else {
        format!("`{}`", Segment::display(path))
    }
}

fn is_null_mismatch(error: &ValidationError<'_>) -> bool {
    matches!(error.kind(), ValidationErrorKind::Type { kind } if expected_types(kind) == [JsonType::Null])
}

/// What a finding says: how bad, the message, and a hint.
type Said = (Severity, String, Option<String>);

/// A string outside a key's known values (a warning: newer tools may know
/// more); nothing for a value not a string, already reported by its type.
fn unknown_value(field: &str, instance: &Json, options: &Json) -> Option<Said> {
    let Json::String(value) = instance else {
        return None; // already reported as a type mismatch
    };
    let allowed: Vec<String> = match options {
        Json::Array(options) => options.iter().map(|o| format!("`{}`", plain(o))).collect(),
        other => vec![format!("`{}`", plain(other))],
    };
    Some((
        Severity::Warning,
        format!(
            "{field} has the unknown value `{value}`; known values: {}",
            allowed.join(", ")
        ),
        None,
    ))
}

fn expected_types(kind: &TypeKind) -> Vec<JsonType> {
    match kind {
        TypeKind::Single(t) => vec![*t],
        TypeKind::Multiple(set) => set.iter().collect(),
    }
}

fn type_name(t: JsonType) -> &'static str {
    match t {
        JsonType::Null => "null",
        JsonType::Boolean => "true or false",
        JsonType::Integer => "an integer",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "a list",
        JsonType::Object => "a mapping",
    }
}

fn json_type_name(value: &Json) -> String {
    match value {
        Json::Null => "null".into(),
        Json::Bool(b) => format!("`{b}`"),
        Json::Number(n) => format!("the number `{n}`"),
        Json::String(s) => format!("the string `{s}`"),
        Json::Array(_) => "a list".into(),
        Json::Object(_) => "a mapping".into(),
    }
}

/// A JSON value as a user would write it in YAML.
fn plain(value: &Json) -> String {
    match value {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// YAML to JSON: keys become strings, tags are dropped, and numbers JSON
/// cannot hold (`.inf`, `.nan`) become strings.
fn to_json(value: &Yaml) -> Json {
    match value {
        Yaml::Null => Json::Null,
        Yaml::Bool(b) => Json::Bool(*b),
        Yaml::Number(n) => {
            if let Some(i) = n.as_i64() {
                Json::from(i)
            } else if let Some(u) = n.as_u64() {
                Json::from(u)
            } else {
                n.as_f64()
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| Json::String(n.to_string()), Json::Number)
            }
        }
        Yaml::String(s) => Json::String(s.clone()),
        Yaml::Sequence(items) => Json::Array(items.iter().map(to_json).collect()),
        Yaml::Mapping(map) => {
            Json::Object(map.iter().map(|(k, v)| (key_text(k), to_json(v))).collect())
        }
        Yaml::Tagged(tagged) => to_json(&tagged.value),
    }
}

fn key_text(key: &Yaml) -> String {
    match key {
        Yaml::String(s) => s.clone(),
        Yaml::Null => "null".into(),
        Yaml::Bool(b) => b.to_string(),
        Yaml::Number(n) => n.to_string(),
        other => yaml_serde::to_string(other)
            .map(|s| s.trim_end().to_string())
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn document_type_by_kind_then_name() {
        let p = Path::new;
        assert_eq!(
            document_type(p("x/params.yaml"), Some("component")),
            DocumentType::Component
        );
        assert_eq!(
            document_type(p("hub.yaml"), Some("application")),
            DocumentType::Stack
        );
        assert_eq!(
            document_type(p("a/hub-component.yaml"), None),
            DocumentType::Component
        );
        assert_eq!(
            document_type(p("params-db.yaml"), Some("other")),
            DocumentType::Params
        );
        assert_eq!(document_type(p("stack.yaml"), None), DocumentType::Stack);
    }

    #[test]
    fn yaml_to_json() {
        let yaml: Yaml = yaml_serde::from_str("a: 1\n2: [x, 1.5, .inf]\n").expect("yaml");
        assert_eq!(
            to_json(&yaml),
            serde_json::json!({"a": 1, "2": ["x", 1.5, ".inf"]})
        );
    }
}
