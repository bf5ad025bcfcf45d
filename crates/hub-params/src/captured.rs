//! An output a component that already ran captured, as the parameters of
//! later components read it (from the state, or from the run so far).

use yaml_serde::Value;

/// An output captured from a component that already ran.
#[derive(Debug, Clone, PartialEq)]
pub struct CapturedOutput {
    pub component: String,
    pub name: String,
    pub value: Option<Value>,
    pub kind: String,
    /// `meta.kind` of the component that produced it.
    pub component_kind: String,
}
