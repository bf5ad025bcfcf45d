//! An output of a component as captured during deploy: the element of a
//! component's and a stack's captured outputs (see [`super::snapshot`]).

use crate::model::de::{is_empty_str, non_null, text};
use serde::{Deserialize, Serialize};
use yaml_serde::Value;

/// An output of a component as captured during deploy.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CapturedOutput {
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub component: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub component_origin: String,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub component_kind: String,
    #[serde(deserialize_with = "text")]
    pub name: String,
    pub value: Value,
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub brief: String,
    /// For example `secret`.
    #[serde(skip_serializing_if = "is_empty_str", deserialize_with = "text")]
    pub kind: String,
}

impl CapturedOutput {
    /// `component:name`, or `name` when the output has no component.
    pub fn qualified_name(&self) -> String {
        if self.component.is_empty() {
            self.name.clone()
        } else {
            format!("{}:{}", self.component, self.name)
        }
    }

    /// The value, unless it is `null` (or absent).
    pub fn non_null_value(&self) -> Option<&Value> {
        non_null(&self.value)
    }
}
