//! `Parameter`: the fields most parameters set are inline, the ones few set
//! (`brief`, `description`, `default`, `empty`, `fromEnv`, `fromFile` and a
//! group's nested `parameters`) behind one box.
//!
//! An elaborated stack of 10,000 components holds about 460,000
//! parameters, and most of them are a name, a value, often a component and
//! an environment variable. Read, written, compared and shown (`Debug`) as
//! the plain struct of all twelve fields was: the documents, the schema and
//! the unknown-key warnings do not change.

use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Serialize, Serializer};
use std::borrow::Cow;
use yaml_serde::Value;

/// A parameter declaration; groups carry nested `parameters`.
///
/// The fields few parameters set are read with [`Parameter::brief`],
/// [`Parameter::default_value`], [`Parameter::parameters`]… and changed
/// through [`Parameter::rare_mut`] or [`Parameter::with_rare`].
#[derive(Clone, Default, Deserialize)]
#[serde(from = "Wire")]
pub struct Parameter {
    /// Dotted parameter name, for example `component.ingress.fqdn`.
    pub name: String,
    /// Restricts the value to one component instance.
    pub component: String,
    /// `user`: supplied by the user; `tech`: technical; `link`: refers to an output.
    pub kind: String,
    /// The value; may refer to other parameters with `${name}`.
    pub value: Option<Value>,
    /// Environment variable the value is exported as to the component.
    pub env: String,
    /// The other fields, when one of them is set (read them with
    /// [`Parameter::rare`]; `None` and an empty box mean the same).
    pub rare: Option<Box<ParameterRare>>,
}

// Each parameter of a large stack pays for every byte here (the twelve
// fields inline took 384).
const _: () = assert!(std::mem::size_of::<Parameter>() <= 176);

/// The fields of a [`Parameter`] few parameters set.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ParameterRare {
    /// One-line summary.
    pub brief: String,
    pub description: String,
    /// Value used when none is given.
    pub default: Option<Value>,
    /// `allow`: an empty value is accepted.
    pub empty: String,
    /// Name of the environment variable (or `-e NAME=value`) giving the value.
    pub from_env: String,
    /// File whose content is the value.
    pub from_file: String,
    /// Nested parameters of a group; their names are prefixed with the group's.
    pub parameters: Vec<Parameter>,
}

/// What a parameter without rare fields reads.
static NONE_RARE: ParameterRare = ParameterRare {
    brief: String::new(),
    description: String::new(),
    default: None,
    empty: String::new(),
    from_env: String::new(),
    from_file: String::new(),
    parameters: Vec::new(),
};

impl ParameterRare {
    /// Whether no field is set (`default: null` counts as unset, as when
    /// written).
    pub fn is_empty(&self) -> bool {
        self.brief.is_empty()
            && self.description.is_empty()
            && is_null(&self.default)
            && self.empty.is_empty()
            && self.from_env.is_empty()
            && self.from_file.is_empty()
            && self.parameters.is_empty()
    }
}

impl Parameter {
    /// The rarely set fields (all empty when none is set).
    pub fn rare(&self) -> &ParameterRare {
        self.rare.as_deref().unwrap_or(&NONE_RARE)
    }

    /// The rarely set fields, to change them (boxed on first use).
    pub fn rare_mut(&mut self) -> &mut ParameterRare {
        self.rare.get_or_insert_with(Box::default)
    }

    /// This parameter with these rare fields (kept inline as nothing when
    /// all are empty).
    pub fn with_rare(mut self, rare: ParameterRare) -> Self {
        self.rare = (!rare.is_empty()).then(|| Box::new(rare));
        self
    }

    /// One-line summary.
    pub fn brief(&self) -> &str {
        &self.rare().brief
    }

    pub fn description(&self) -> &str {
        &self.rare().description
    }

    /// Value used when none is given.
    pub fn default_value(&self) -> &Option<Value> {
        &self.rare().default
    }

    /// `allow`: an empty value is accepted.
    pub fn empty(&self) -> &str {
        &self.rare().empty
    }

    /// Name of the environment variable (or `-e NAME=value`) giving the value.
    pub fn from_env(&self) -> &str {
        &self.rare().from_env
    }

    /// File whose content is the value.
    pub fn from_file(&self) -> &str {
        &self.rare().from_file
    }

    /// Nested parameters of a group.
    pub fn parameters(&self) -> &[Parameter] {
        &self.rare().parameters
    }

    /// The nested parameters, to change them.
    pub fn parameters_mut(&mut self) -> &mut Vec<Parameter> {
        &mut self.rare_mut().parameters
    }

    /// The key of a top-level parameter: `name` or `name|component`.
    pub fn qualified_name(&self) -> String {
        if self.component.is_empty() {
            self.name.clone()
        } else {
            format!("{}|{}", self.name, self.component)
        }
    }

    /// Gives back the room its lists grew into while decoded, and the box
    /// of rare fields when none is set.
    pub(super) fn shrink_to_fit(&mut self) {
        if self.rare.as_deref().is_some_and(ParameterRare::is_empty) {
            self.rare = None;
        }
        if let Some(rare) = self.rare.as_deref_mut() {
            if !rare.parameters.is_empty() {
                rare.parameters.shrink_to_fit();
                rare.parameters
                    .iter_mut()
                    .for_each(Parameter::shrink_to_fit);
            }
        }
    }
}

/// Equal when every field is: an empty box of rare fields is no box.
impl PartialEq for Parameter {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.component == other.component
            && self.kind == other.kind
            && self.value == other.value
            && self.env == other.env
            && self.rare() == other.rare()
    }
}

/// Shown as the plain struct of all its fields, in the documents' order.
impl std::fmt::Debug for Parameter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let rare = self.rare();
        f.debug_struct("Parameter")
            .field("name", &self.name)
            .field("component", &self.component)
            .field("kind", &self.kind)
            .field("brief", &rare.brief)
            .field("description", &rare.description)
            .field("default", &rare.default)
            .field("value", &self.value)
            .field("empty", &rare.empty)
            .field("from_env", &rare.from_env)
            .field("from_file", &rare.from_file)
            .field("env", &self.env)
            .field("parameters", &rare.parameters)
            .finish()
    }
}

// The document form of a parameter: every field, in the written order. It
// is what is read (so errors and unknown-key paths are those of the plain
// struct) and what the schema describes (its doc comment is the schema's).

/// A parameter declaration; groups carry nested `parameters`.
#[derive(Default, Deserialize, JsonSchema)]
#[serde(
    default,
    rename = "Parameter",
    rename_all = "camelCase",
    expecting = "struct Parameter"
)]
#[schemars(extend("required" = ["name"]))]
struct Wire {
    /// Dotted parameter name, for example `component.ingress.fqdn`.
    name: String,
    /// Restricts the value to one component instance.
    #[serde(skip_serializing_if = "is_empty_str")]
    component: String,
    /// `user`: supplied by the user; `tech`: technical; `link`: refers to an output.
    #[serde(skip_serializing_if = "is_empty_str")]
    #[schemars(extend("enum" = ["user", "tech", "link"]))]
    kind: String,
    /// One-line summary.
    #[serde(skip_serializing_if = "is_empty_str")]
    brief: String,
    #[serde(skip_serializing_if = "is_empty_str")]
    description: String,
    /// Value used when none is given.
    #[serde(skip_serializing_if = "is_null")]
    #[schemars(with = "Option<serde_json::Value>")]
    default: Option<Value>,
    /// The value; may refer to other parameters with `${name}`.
    #[serde(skip_serializing_if = "is_null")]
    #[schemars(with = "Option<serde_json::Value>")]
    value: Option<Value>,
    /// `allow`: an empty value is accepted.
    #[serde(skip_serializing_if = "is_empty_str")]
    #[schemars(extend("enum" = ["allow"]))]
    empty: String,
    /// Name of the environment variable (or `-e NAME=value`) giving the value.
    #[serde(skip_serializing_if = "is_empty_str")]
    from_env: String,
    /// File whose content is the value.
    #[serde(skip_serializing_if = "is_empty_str")]
    from_file: String,
    /// Environment variable the value is exported as to the component.
    #[serde(skip_serializing_if = "is_empty_str")]
    env: String,
    /// Nested parameters of a group; their names are prefixed with the group's.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    parameters: Vec<Parameter>,
}

impl From<Wire> for Parameter {
    fn from(wire: Wire) -> Self {
        let rare = ParameterRare {
            brief: wire.brief,
            description: wire.description,
            default: wire.default,
            empty: wire.empty,
            from_env: wire.from_env,
            from_file: wire.from_file,
            parameters: wire.parameters,
        };
        Parameter {
            name: wire.name,
            component: wire.component,
            kind: wire.kind,
            value: wire.value,
            env: wire.env,
            rare: None,
        }
        .with_rare(rare)
    }
}

fn is_empty_str(s: &str) -> bool {
    s.is_empty()
}
fn is_null(v: &Option<Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}
fn blank(s: &&str) -> bool {
    s.is_empty()
}
fn null(v: &&Option<Value>) -> bool {
    is_null(v)
}
fn none(list: &&[Parameter]) -> bool {
    list.is_empty()
}

/// [`Wire`] borrowed, to write a parameter without copying it.
#[derive(Serialize)]
#[serde(rename = "Parameter", rename_all = "camelCase")]
struct WireRef<'p> {
    name: &'p str,
    #[serde(skip_serializing_if = "blank")]
    component: &'p str,
    #[serde(skip_serializing_if = "blank")]
    kind: &'p str,
    #[serde(skip_serializing_if = "blank")]
    brief: &'p str,
    #[serde(skip_serializing_if = "blank")]
    description: &'p str,
    #[serde(skip_serializing_if = "null")]
    default: &'p Option<Value>,
    #[serde(skip_serializing_if = "null")]
    value: &'p Option<Value>,
    #[serde(skip_serializing_if = "blank")]
    empty: &'p str,
    #[serde(skip_serializing_if = "blank")]
    from_env: &'p str,
    #[serde(skip_serializing_if = "blank")]
    from_file: &'p str,
    #[serde(skip_serializing_if = "blank")]
    env: &'p str,
    #[serde(skip_serializing_if = "none")]
    parameters: &'p [Parameter],
}

impl Serialize for Parameter {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let rare = self.rare();
        WireRef {
            name: &self.name,
            component: &self.component,
            kind: &self.kind,
            brief: &rare.brief,
            description: &rare.description,
            default: &rare.default,
            value: &self.value,
            empty: &rare.empty,
            from_env: &rare.from_env,
            from_file: &rare.from_file,
            env: &self.env,
            parameters: &rare.parameters,
        }
        .serialize(serializer)
    }
}

/// The schema of [`Wire`], under the name `Parameter`.
impl JsonSchema for Parameter {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed("Parameter")
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Borrowed(concat!(module_path!(), "::Parameter"))
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        Wire::json_schema(generator)
    }
}

#[cfg(test)]
mod tests;
