//! A parameter as the state records it: a stack parameter (`component`
//! set when qualified) or a component's expanded parameter.
//!
//! A state holds one per stack parameter and one per parameter of every
//! component entry (44,000 at 1,000 components of the benchmark's
//! `real-roots` shape), all alive while the parameters are locked. Its
//! three texts (`name`, `component`, `env`; the last two usually empty or
//! short) are kept in one allocation with the lengths of the first two:
//! 104 bytes and two allocations (the texts, the value's) instead of 152
//! bytes and up to four.

use super::de::{is_empty_str, non_null, text};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Serialize};
use std::fmt;
use yaml_serde::Value;

/// A locked parameter: a stack parameter (`component` set when qualified)
/// or a component's expanded parameter (no `component`).
#[derive(Clone, Default, PartialEq, Deserialize)]
#[serde(from = "Wire")]
pub struct StateParameter {
    /// `name`, `component` and `env`, one after the other.
    texts: Box<str>,
    name_len: u32,
    component_len: u32,
    /// Always written; `null` when the parameter has no value.
    pub value: Value,
}

/// How a parameter is read: every key may be absent, a scalar reads as
/// its text.
#[derive(Deserialize)]
#[serde(default)]
#[derive(Default)]
struct Wire {
    #[serde(deserialize_with = "text")]
    component: String,
    #[serde(deserialize_with = "text")]
    name: String,
    value: Value,
    #[serde(deserialize_with = "text")]
    env: String,
}

impl From<Wire> for StateParameter {
    fn from(wire: Wire) -> StateParameter {
        StateParameter::qualified(&wire.name, &wire.component, wire.value, &wire.env)
    }
}

impl StateParameter {
    pub fn new(name: &str, value: Value) -> Self {
        StateParameter::qualified(name, "", value, "")
    }

    /// A parameter with all its parts (`component` and `env` may be empty).
    pub fn qualified(name: &str, component: &str, value: Value, env: &str) -> Self {
        let mut texts = String::with_capacity(name.len() + component.len() + env.len());
        texts.push_str(name);
        texts.push_str(component);
        texts.push_str(env);
        StateParameter {
            texts: texts.into_boxed_str(),
            name_len: length(name),
            component_len: length(component),
            value,
        }
    }

    pub fn name(&self) -> &str {
        &self.texts[..self.name_len as usize]
    }

    /// The component of a qualified stack parameter; empty otherwise.
    pub fn component(&self) -> &str {
        let start = self.name_len as usize;
        &self.texts[start..start + self.component_len as usize]
    }

    /// The environment variable the parameter is exported as; empty when
    /// none.
    pub fn env(&self) -> &str {
        &self.texts[(self.name_len + self.component_len) as usize..]
    }

    pub fn set_name(&mut self, name: &str) {
        let value = std::mem::take(&mut self.value);
        *self = StateParameter::qualified(name, self.component(), value, self.env());
    }

    pub fn set_component(&mut self, component: &str) {
        let value = std::mem::take(&mut self.value);
        *self = StateParameter::qualified(self.name(), component, value, self.env());
    }

    pub fn set_env(&mut self, env: &str) {
        let value = std::mem::take(&mut self.value);
        *self = StateParameter::qualified(self.name(), self.component(), value, env);
    }

    /// `name|component`, or `name` when unqualified.
    pub fn qualified_name(&self) -> String {
        let mut name = String::new();
        self.push_qualified_name(&mut name);
        name
    }

    /// Appends [`Self::qualified_name`] to `out` (a buffer kept between
    /// items when many are looked up).
    pub fn push_qualified_name(&self, out: &mut String) {
        out.push_str(self.name());
        if self.component_len > 0 {
            out.push('|');
            out.push_str(self.component());
        }
    }

    /// The value, unless it is `null` (or absent).
    pub fn non_null_value(&self) -> Option<&Value> {
        non_null(&self.value)
    }
}

/// A text's length as stored; a state's texts are far below 4 GB (every
/// command refuses a larger state before reading it).
fn length(text: &str) -> u32 {
    u32::try_from(text.len()).unwrap_or(u32::MAX)
}

/// Written as the type with four fields was: `component` and `env` when
/// not empty, `name` and `value` always.
impl Serialize for StateParameter {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (component, env) = (self.component(), self.env());
        let fields = 2 + usize::from(!is_empty_str(component)) + usize::from(!is_empty_str(env));
        let mut out = serializer.serialize_struct("StateParameter", fields)?;
        match is_empty_str(component) {
            true => out.skip_field("component")?,
            false => out.serialize_field("component", component)?,
        }
        out.serialize_field("name", self.name())?;
        out.serialize_field("value", &self.value)?;
        match is_empty_str(env) {
            true => out.skip_field("env")?,
            false => out.serialize_field("env", env)?,
        }
        out.end()
    }
}

impl fmt::Debug for StateParameter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateParameter")
            .field("component", &self.component())
            .field("name", &self.name())
            .field("value", &self.value)
            .field("env", &self.env())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_parameter_stays_small() {
        assert!(std::mem::size_of::<StateParameter>() <= 104);
    }

    #[test]
    fn its_parts_read_back_as_given() {
        let mut p = StateParameter::qualified("size", "db", Value::from("2"), "SIZE");
        assert_eq!((p.name(), p.component(), p.env()), ("size", "db", "SIZE"));
        assert_eq!(p.qualified_name(), "size|db");
        p.set_component("");
        p.set_env("");
        p.set_name("count");
        assert_eq!((p.name(), p.component(), p.env()), ("count", "", ""));
        assert_eq!(p.value, Value::from("2"));
    }

    #[test]
    fn it_is_written_and_read_as_before() {
        let text =
            "- component: db\n  name: size\n  value: 2\n  env: SIZE\n- name: x\n  value: null\n";
        let read: Vec<StateParameter> = yaml_serde::from_str(text).expect("read");
        assert_eq!(read[0].name(), "size");
        assert_eq!(read[0].component(), "db");
        assert_eq!(read[1].env(), "");
        assert_eq!(yaml_serde::to_string(&read).expect("write"), text);
    }
}
