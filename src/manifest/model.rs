//! Serde types for every Hub document: stack, component, application, params
//! file and the elaborated multi-document file (which is a stack document
//! followed by component documents of the same shape).
//!
//! Field order is the order in which documents are written; empty values are
//! omitted, except the few keys the Hub format always writes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use yaml_serde::Value;

fn is_empty_str(s: &str) -> bool {
    s.is_empty()
}
fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// A value is empty when it is absent, null or the empty string; `0`,
/// `false`, `[]` and `{}` are real values.
pub fn value_is_empty(v: &Option<Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    }
}

fn is_null(v: &Option<Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// Stack (`hub.yaml`), application (`hub-application.yaml`) and component
/// (`hub-component.yaml`) manifests share one structure.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Manifest {
    pub version: i64,
    pub kind: String,
    pub meta: Meta,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub components: Vec<ComponentRef>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<String>,
    #[serde(skip_serializing_if = "Platform::is_empty")]
    pub platform: Platform,
    #[serde(skip_serializing_if = "Lifecycle::is_empty")]
    pub lifecycle: Lifecycle,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<Output>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    #[serde(skip_serializing_if = "Templates::is_empty")]
    pub templates: Templates,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Meta {
    pub name: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub origin: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub kind: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub title: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub brief: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub description: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub version: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub maturity: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub license: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub icon: String,
    #[serde(skip_serializing_if = "Source::is_empty")]
    pub source: Source,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub from_stack: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// An entry of a stack's `components:` list.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ComponentRef {
    pub name: String,
    #[serde(skip_serializing_if = "Source::is_empty")]
    pub source: Source,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub depends: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// Passed through untouched.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[schemars(with = "Vec<serde_json::Value>")]
    pub hooks: Vec<Value>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Source {
    #[serde(skip_serializing_if = "is_empty_str")]
    pub dir: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub s3: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub git: Option<GitSource>,
}

impl Source {
    pub fn is_empty(&self) -> bool {
        self.dir.is_empty() && self.s3.is_empty() && self.git.is_none()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct GitSource {
    pub remote: String,
    #[serde(rename = "ref", skip_serializing_if = "is_empty_str")]
    pub git_ref: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub sub_dir: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub local_dir: String,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Platform {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub provides: Vec<String>,
}

impl Platform {
    pub fn is_empty(&self) -> bool {
        self.provides.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Lifecycle {
    #[serde(skip_serializing_if = "is_empty_str")]
    pub bare: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub verbs: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub order: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mandatory: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub optional: Vec<String>,
    #[serde(skip_serializing_if = "RequiresTuning::is_empty")]
    pub requires: RequiresTuning,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ready_conditions: Vec<ReadyCondition>,
    #[serde(skip_serializing_if = "LifecycleOptions::is_empty")]
    pub options: LifecycleOptions,
}

impl Lifecycle {
    pub fn is_empty(&self) -> bool {
        self == &Lifecycle::default()
    }
}

/// `lifecycle.requires`: which requirements are optional, for whom.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RequiresTuning {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub optional: Vec<String>,
}

impl RequiresTuning {
    pub fn is_empty(&self) -> bool {
        self.optional.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct ReadyCondition {
    #[serde(skip_serializing_if = "is_empty_str")]
    pub dns: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub url: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub wait_seconds: i64,
    #[serde(skip_serializing_if = "is_zero")]
    pub pause_seconds: i64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct LifecycleOptions {
    #[serde(skip_serializing_if = "RandomOptions::is_empty")]
    pub random: RandomOptions,
}

impl LifecycleOptions {
    pub fn is_empty(&self) -> bool {
        self.random.is_empty()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct RandomOptions {
    #[serde(skip_serializing_if = "is_zero")]
    pub bytes: i64,
}

impl RandomOptions {
    pub fn is_empty(&self) -> bool {
        self.bytes == 0
    }
}

/// A parameter declaration; groups carry nested `parameters`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Parameter {
    pub name: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub component: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub kind: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub brief: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub description: String,
    #[serde(skip_serializing_if = "is_null")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub default: Option<Value>,
    #[serde(skip_serializing_if = "is_null")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub empty: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub from_env: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub from_file: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub env: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
}

impl Parameter {
    /// The key of a top-level parameter: `name` or `name|component`.
    pub fn qualified_name(&self) -> String {
        if self.component.is_empty() {
            self.name.clone()
        } else {
            format!("{}|{}", self.name, self.component)
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, rename_all = "camelCase")]
pub struct Output {
    pub name: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub brief: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub description: String,
    #[serde(skip_serializing_if = "is_null")]
    #[schemars(with = "Option<serde_json::Value>")]
    pub value: Option<Value>,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub from_tf_var: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    pub kind: String,
}

impl Output {
    /// Field-wise update: the incoming non-empty fields win.
    pub fn update_from(&mut self, over: &Output) {
        if !value_is_empty(&over.value) {
            self.value = over.value.clone();
        }
        for (mine, theirs) in [
            (&mut self.from_tf_var, &over.from_tf_var),
            (&mut self.kind, &over.kind),
            (&mut self.brief, &over.brief),
            (&mut self.description, &over.description),
        ] {
            if !theirs.is_empty() {
                mine.clone_from(theirs);
            }
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Templates {
    #[serde(skip_serializing_if = "is_empty_str")]
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directories: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub extra: Vec<TemplateSet>,
}

impl Templates {
    pub fn is_empty(&self) -> bool {
        self == &Templates::default()
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct TemplateSet {
    #[serde(skip_serializing_if = "is_empty_str")]
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub directories: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
}

/// A parameters file (`params.yaml`): parameters and outputs only.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct ParamsFile {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub outputs: Vec<Output>,
}

/// The result of `hub elaborate`: the assembled stack and one document per
/// component instance, in the order they are written.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Elaborated {
    pub stack: Manifest,
    pub components: Vec<Manifest>,
}

impl Elaborated {
    pub fn component(&self, name: &str) -> Option<&Manifest> {
        self.components.iter().find(|c| c.meta.name == name)
    }
}

