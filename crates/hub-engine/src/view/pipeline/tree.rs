//! Pipelines are data: each target builds its file as a YAML value tree,
//! written by hub's YAML writer ([`hub_manifest::emit::document`]), which
//! quotes and escapes every string (line breaks, U+2028, control
//! characters) and writes every list as a block sequence, one item a
//! line. The only comments are hub's own constant text ([`Header`]):
//! nothing from the stack reaches a file unescaped, comments included.

use yaml_serde::{Mapping, Value};

/// A YAML mapping, its keys in the order they were set.
#[derive(Debug, Default)]
pub(crate) struct Map(Mapping);

impl Map {
    pub(crate) fn new() -> Map {
        Map::default()
    }

    /// `self` with `key: value`.
    pub(crate) fn with(mut self, key: &str, value: impl Into<Value>) -> Map {
        self.set(key, value);
        self
    }

    pub(crate) fn set(&mut self, key: &str, value: impl Into<Value>) {
        self.0.insert(Value::from(key), value.into());
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<Map> for Value {
    fn from(map: Map) -> Value {
        Value::Mapping(map.0)
    }
}

/// A YAML sequence of `items`.
pub(crate) fn list<T: Into<Value>>(items: impl IntoIterator<Item = T>) -> Value {
    Value::Sequence(items.into_iter().map(Into::into).collect())
}

/// The comment lines that open a file: hub's own text only, so the type
/// takes `'static` strings and no text of the stack can reach them.
pub(crate) type Header = &'static [&'static str];

/// `header` as `# ` lines, then `body`.
pub(crate) fn document(header: Header, body: Map) -> String {
    let mut out = String::new();
    for line in header {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&hub_manifest::emit::document(&body.into()));
    out
}
