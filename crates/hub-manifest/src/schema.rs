//! JSON Schemas of the Hub documents, generated from the model types.
//!
//! The committed copies in `schemas/` are for editors (YAML language
//! server); `hub validate` uses the generated ones. A unit test fails when
//! the two differ: regenerate with `UPDATE_SCHEMAS=1 cargo test --lib schema`.
//!
//! Every object schema is closed (`additionalProperties: false`) so editors
//! flag typos; `hub validate` reports such keys as warnings only, because the
//! loader ignores them. Defaults are left out: every key is optional unless
//! marked required, and the empty value is the default.

use super::model::{Manifest, ParamsFile};
use schemars::generate::SchemaSettings;
use schemars::transform::{transform_subschemas, Transform};
use schemars::{JsonSchema, Schema};
use serde_json::{json, Value};
use std::sync::OnceLock;

/// The kinds of document `hub validate` knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DocumentType {
    /// `hub.yaml` (`kind: stack`) and `hub-application.yaml` (`kind: application`).
    Stack,
    /// `hub-component.yaml` (`kind: component`).
    Component,
    /// Parameters files (`params.yaml`): `parameters` and `outputs` only.
    Params,
}

impl DocumentType {
    pub const ALL: [DocumentType; 3] = [
        DocumentType::Stack,
        DocumentType::Component,
        DocumentType::Params,
    ];

    /// The file name of the schema in `schemas/`.
    pub fn schema_file(self) -> &'static str {
        match self {
            DocumentType::Stack => "hub-stack.schema.json",
            DocumentType::Component => "hub-component.schema.json",
            DocumentType::Params => "hub-params.schema.json",
        }
    }

    /// How the document is named in messages.
    pub fn label(self) -> &'static str {
        match self {
            DocumentType::Stack => "stack",
            DocumentType::Component => "component",
            DocumentType::Params => "parameters",
        }
    }

    fn title(self) -> &'static str {
        match self {
            DocumentType::Stack => "Hub stack or application manifest",
            DocumentType::Component => "Hub component manifest",
            DocumentType::Params => "Hub parameters file",
        }
    }

    fn description(self) -> &'static str {
        match self {
            DocumentType::Stack => {
                "A stack (`hub.yaml`, kind: stack) or application (`hub-application.yaml`, kind: application): \
                 the components to deploy, their order and the stack's parameters and outputs. \
                 Keys not listed here are ignored by hub (a warning from `hub validate`)."
            }
            DocumentType::Component => {
                "A component (`hub-component.yaml`, kind: component): its parameters, outputs, \
                 templates and lifecycle. Keys not listed here are ignored by hub (a warning from `hub validate`)."
            }
            DocumentType::Params => {
                "A parameters file (`params.yaml`) given to `hub elaborate` after the stack: \
                 parameter values and extra outputs. Keys not listed here are ignored by hub \
                 (a warning from `hub validate`)."
            }
        }
    }

    /// The values of the top-level `kind` this document type stands for.
    fn kinds(self) -> &'static [&'static str] {
        match self {
            DocumentType::Stack => &["stack", "application"],
            DocumentType::Component => &["component"],
            DocumentType::Params => &[],
        }
    }
}

/// One value per document type, built on first use.
pub struct PerDocument<T>([OnceLock<T>; 3]);

impl<T> PerDocument<T> {
    pub const fn new() -> Self {
        PerDocument([OnceLock::new(), OnceLock::new(), OnceLock::new()])
    }

    pub fn get(&self, document: DocumentType, init: impl FnOnce() -> T) -> &T {
        let index = match document {
            DocumentType::Stack => 0,
            DocumentType::Component => 1,
            DocumentType::Params => 2,
        };
        self.0[index].get_or_init(init)
    }
}

impl<T> Default for PerDocument<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// The schema of a document type, generated once per process.
pub fn cached_schema(document: DocumentType) -> &'static Value {
    static SCHEMAS: PerDocument<Value> = PerDocument::new();
    SCHEMAS.get(document, || schema(document))
}

/// The schema of one document type.
pub fn schema(document: DocumentType) -> Value {
    let mut schema = match document {
        DocumentType::Stack | DocumentType::Component => generate::<Manifest>(),
        DocumentType::Params => generate::<ParamsFile>(),
    };
    let kinds = document.kinds();
    if !kinds.is_empty() {
        if let Some(kind) = schema.pointer_mut("/properties/kind") {
            kind["enum"] = json!(kinds);
            kind["description"] = json!(format!("The document kind: {}.", kinds.join(" or ")));
        }
    }
    if let Value::Object(head) = &mut schema {
        head.insert("$id".into(), json!(document.schema_file()));
        head.insert("title".into(), json!(document.title()));
        head.insert("description".into(), json!(document.description()));
    }
    sorted(schema)
}

/// Keys in alphabetical order at every level, whether or not serde_json
/// keeps insertion order, so the committed files do not depend on the
/// features other crates turn on.
pub(crate) fn sorted(value: Value) -> Value {
    match value {
        Value::Object(object) => {
            let mut entries: Vec<(String, Value)> = object.into_iter().collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Object(entries.into_iter().map(|(k, v)| (k, sorted(v))).collect())
        }
        Value::Array(items) => Value::Array(items.into_iter().map(sorted).collect()),
        other => other,
    }
}

/// The schema of `T` as hub serialises it (a report, a saved plan), with
/// its `$id` (the file name in `schemas/`), title and description.
pub fn of_output<T: JsonSchema>(id: &str, title: &str, description: &str) -> Value {
    let generator = SchemaSettings::draft07().for_serialize().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(head) = &mut schema {
        head.insert("$id".into(), json!(id));
        head.insert("title".into(), json!(title));
        head.insert("description".into(), json!(description));
    }
    sorted(schema)
}

/// A schema as written to `schemas/`: pretty JSON ending in a newline.
pub fn pretty(schema: &Value) -> String {
    let mut text = serde_json::to_string_pretty(schema).unwrap_or_default();
    text.push('\n');
    text
}

/// The repository's `schemas/` folder, where the committed schemas live.
fn schemas_folder() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schemas")
}

/// Fails when `schemas/FILE` is not `generated` (from the types in
/// `source`); with `UPDATE_SCHEMAS=1`, writes it instead.
/// Test support for every crate that generates a schema (not for use
/// outside hub's tests).
#[doc(hidden)]
pub fn assert_committed(file: &str, generated: &str, source: &str) {
    let path = schemas_folder().join(file);
    if std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| !v.is_empty() && v != "0") {
        std::fs::write(&path, generated).expect("write schema");
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == generated,
        "schemas/{file} is out of date with {source}; \
         regenerate with `UPDATE_SCHEMAS=1 cargo test --lib schema` and commit the result"
    );
}

/// The schema as written to `schemas/`: pretty JSON ending in a newline.
pub fn schema_text(document: DocumentType) -> String {
    let mut text = serde_json::to_string_pretty(&schema(document)).unwrap_or_default();
    text.push('\n');
    text
}

fn generate<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft07()
        .for_deserialize()
        .with_transform(Closed)
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// Closes every object schema that lists its properties, and drops the
/// `default` values (all of them the empty value).
#[derive(Debug, Clone)]
struct Closed;

impl Transform for Closed {
    fn transform(&mut self, schema: &mut Schema) {
        if let Some(object) = schema.as_object_mut() {
            object.remove("default");
            if object.contains_key("properties") && !object.contains_key("additionalProperties") {
                object.insert("additionalProperties".into(), Value::Bool(false));
            }
        }
        // `{"allOf": [{"$ref": …}], "description": …}` is how draft 7 keeps a
        // description next to a reference; without one, the bare reference.
        let lone_ref = schema
            .as_object()
            .and_then(|object| match object.get("allOf") {
                Some(Value::Array(all)) if all.len() == 1 && object.len() == 1 => {
                    all.first().cloned()
                }
                _ => None,
            });
        if let Some(inner) = lone_ref.and_then(|v| Schema::try_from(v).ok()) {
            *schema = inner;
        }
        transform_subschemas(self, schema);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn committed(document: DocumentType) -> PathBuf {
        schemas_folder().join(document.schema_file())
    }

    /// `schemas/*.json` must be what the model generates.
    #[test]
    fn schema_files_are_up_to_date() {
        let update = std::env::var_os("UPDATE_SCHEMAS").is_some_and(|v| !v.is_empty() && v != "0");
        let mut stale = Vec::new();
        for document in DocumentType::ALL {
            let path = committed(document);
            let generated = schema_text(document);
            if update {
                std::fs::write(&path, &generated).expect("write schema");
                continue;
            }
            let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
            if on_disk != generated {
                stale.push(format!("schemas/{}", document.schema_file()));
            }
        }
        assert!(
            stale.is_empty(),
            "out of date with crates/hub-manifest/src/model.rs: {}; \
             regenerate with `UPDATE_SCHEMAS=1 cargo test --lib schema` and commit the result",
            stale.join(", ")
        );
    }

    #[test]
    fn schemas_compile_and_are_closed() {
        for document in DocumentType::ALL {
            let schema = schema(document);
            assert!(
                jsonschema::draft7::new(&schema).is_ok(),
                "{document:?} schema compiles"
            );
            assert_eq!(
                schema["additionalProperties"],
                json!(false),
                "{document:?} is closed"
            );
        }
    }

    #[test]
    fn kind_is_constrained_per_document() {
        let stack = schema(DocumentType::Stack);
        assert_eq!(
            stack["properties"]["kind"]["enum"],
            json!(["stack", "application"])
        );
        let component = schema(DocumentType::Component);
        assert_eq!(
            component["properties"]["kind"]["enum"],
            json!(["component"])
        );
    }
}
