//! Pipelines are data: each target builds its file as a YAML value tree,
//! written by hub's YAML writer ([`hub_manifest::emit::document`]), which
//! quotes and escapes every string (line breaks, U+2028, control
//! characters) and writes every list as a block sequence, one item a
//! line. The only comments are hub's own constant text ([`Header`]) and
//! one line that says where the jobs come from ([`JobOrigin`], built
//! from a number): nothing from the stack reaches a file unescaped,
//! comments included.

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

/// Where a pipeline's jobs come from, said in its file so that no one
/// reads the jobs as the plan of the moment the pipeline runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobOrigin {
    /// A deploy: the plan job plans again when the pipeline runs.
    Replanned { serial: Option<u64> },
    /// `--plan PLAN`: the jobs apply that saved plan.
    Saved { serial: Option<u64> },
    /// An undeploy: each job plans its component again when it runs.
    Undeploy { serial: Option<u64> },
}

impl JobOrigin {
    /// The comment line: hub's text and the state's serial only.
    pub fn line(self) -> String {
        let from = |serial: Option<u64>| match serial {
            Some(serial) => format!("from state serial {serial}"),
            None => "before the state existed".to_string(),
        };
        match self {
            JobOrigin::Replanned { serial } => format!(
                "Jobs: the components hub planned to run when this file was written ({}); the hub-plan job plans again when the pipeline runs, and its log says why each one runs.",
                from(serial)
            ),
            JobOrigin::Saved { serial } => format!(
                "Jobs: the components the saved plan given to --plan runs (planned {}); `hub plan` of that stack and state says why.",
                from(serial)
            ),
            JobOrigin::Undeploy { serial } => format!(
                "Jobs: the components hub planned to undeploy when this file was written ({}); each job plans its component again when it runs.",
                from(serial)
            ),
        }
    }
}

/// `header` and the `provenance` line as `# ` lines, then `body`.
pub(crate) fn document(header: Header, provenance: JobOrigin, body: Map) -> String {
    let mut out = String::new();
    let provenance = provenance.line();
    for line in header.iter().copied().chain([provenance.as_str()]) {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push_str(&hub_manifest::emit::document(&body.into()));
    out
}
