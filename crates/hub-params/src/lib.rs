//! The parameter engine: locking the stack parameters of an elaborated
//! stack (values, `fromEnv`, `fromFile`, prompts, defaults), expanding
//! `${name}` references and `#{CEL}` expressions in dependency order with
//! every cycle and unknown name reported, and expanding a component's
//! parameters and declared outputs in its own scope.
//!
//! The library never prints: warnings go to a [`Warnings`](hub_manifest::diag::Warnings) sink, prompts go
//! through the [`Prompter`] trait and problems come back as
//! [`ParamsError`].

mod captured;
mod cel;
pub mod drift;
mod error;
pub mod expr;
pub mod format;
mod graph;
mod lock;
mod locked;
mod origin;
mod prompt;
mod scope;
pub mod state;
mod table;

pub use captured::CapturedOutput;
pub use cel::{Budget, Cel, CelFailure, Predicate, Predicates};
/// The variables that set the time and memory budgets of policies (CEL
/// and Rego).
pub use cel::{MEMORY_VARIABLE as BUDGET_MEMORY_VARIABLE, TIME_VARIABLE as BUDGET_TIME_VARIABLE};
pub use error::{MissingValue, ParamsError, Problem};
pub use lock::{flatten, lock, lock_owned, LockOptions};
pub use locked::LockedParam;
pub use origin::Origin;
pub use prompt::{interactive, PromptRequest, Prompter, TerminalPrompter};
pub use scope::{
    certain_output_problems, expand_component, expand_outputs, ComponentScope, ExpandedOutput,
    ExpandedParam, OutputsContext,
};
pub use table::{FastHash, FastMap, Scope};

use indexmap::IndexMap;
use std::sync::Arc;
use yaml_serde::Value;

/// The locked stack parameters by qualified name (`name` or
/// `name|component`), in declaration order, implicit ones first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Locked {
    /// Hashed with FNV-1a, as the components' own tables are, so that a
    /// lookup hashes its key once for both (see [`table::Table::find`]).
    pub params: LockedParams,
    /// Parameters whose value differs from the state's (non-empty both).
    pub drift: Vec<drift::Drift>,
}

impl Locked {
    pub fn get(&self, qualified_name: &str) -> Option<&LockedParam> {
        self.params.get(qualified_name)
    }

    pub fn value(&self, qualified_name: &str) -> Option<&Value> {
        self.get(qualified_name).and_then(|p| p.value.as_ref())
    }

    /// Adds `param` under its key, or replaces the one of that key (in
    /// its place).
    pub fn insert(&mut self, param: LockedParam) {
        self.params.insert(param.shared_key(), param);
    }
}

/// The locked stack parameters by qualified name.
pub type LockedParams = IndexMap<Arc<str>, LockedParam, table::FastHash>;

/// The locked parameters are the base of every component's lookup table.
impl table::Base for LockedParams {
    fn len(&self) -> usize {
        IndexMap::len(self)
    }

    fn entry(&self, key: &str) -> Option<usize> {
        self.get_index_of(key)
    }

    fn entry_of(&self, key: &table::Key<'_>) -> Option<usize> {
        use indexmap::map::RawEntryApiV1;
        self.raw_entry_v1().index_from_hash(key.hash, |k| key.is(k))
    }

    fn key(&self, entry: usize) -> &str {
        self.get_index(entry).map(|(k, _)| &**k).unwrap_or_default()
    }

    fn value(&self, entry: usize) -> Option<&Value> {
        self.get_index(entry).and_then(|(_, p)| p.value.as_ref())
    }
}

/// The names a template refers to: each `${name}` (trimmed), and every
/// name each `#{...}` expression may read, longest first. An expression
/// that does not parse names nothing. Plain text names nothing.
pub fn template_names(cel: &Cel, text: &str) -> Vec<String> {
    if !expr::needs_expansion(text) {
        return Vec::new();
    }
    let mut names = Vec::new();
    for piece in expr::parse(text) {
        match piece {
            expr::Piece::Reference(name) => names.push(name.trim().to_string()),
            expr::Piece::Cel(source) => {
                if let Ok(compiled) = cel.compile(source) {
                    names.extend(compiled.names().iter().flatten().cloned());
                }
            }
            expr::Piece::Text(_) => {}
        }
    }
    names
}

pub fn qualified(name: &str, component: &str) -> String {
    if component.is_empty() {
        name.to_string()
    } else {
        format!("{name}|{component}")
    }
}

/// `name=value,name=value` (the argument may be repeated); a value may
/// contain `=`, not `,`.
pub fn parse_bindings(items: &[String]) -> Result<IndexMap<String, String>, ParamsError> {
    let mut out = IndexMap::new();
    for pair in items
        .iter()
        .flat_map(|i| i.split(','))
        .filter(|p| !p.is_empty())
    {
        let (name, value) = pair.split_once('=').ok_or_else(|| ParamsError::Binding {
            item: pair.to_string(),
        })?;
        out.insert(name.to_string(), value.to_string());
    }
    Ok(out)
}

/// Evaluates one CEL expression with string bindings, as `hub cel` does.
pub fn evaluate_cel(
    source: &str,
    bindings: &IndexMap<String, String>,
) -> Result<String, CelFailure> {
    let engine = cel::Cel::default();
    let compiled = engine.compile(source)?;
    engine.evaluate(&compiled, |name| {
        bindings.get(name).map(|v| Value::String(v.clone()))
    })
}

/// Expands a template mixing `${}` and `#{}` with string bindings, as
/// `hub cel -y` does: the text inside `${...}` is evaluated as CEL too.
/// Returns the text and the `${...}` expressions that were read as CEL.
pub fn evaluate_template(
    text: &str,
    bindings: &IndexMap<String, String>,
) -> Result<(String, Vec<String>), CelFailure> {
    let mut out = String::new();
    let mut read_as_cel = Vec::new();
    for piece in expr::parse(text) {
        match piece {
            expr::Piece::Text(t) => out.push_str(t),
            expr::Piece::Reference(source) => {
                out.push_str(&evaluate_cel(source, bindings)?);
                read_as_cel.push(source.to_string());
            }
            expr::Piece::Cel(source) => out.push_str(&evaluate_cel(source, bindings)?),
        }
    }
    Ok((out, read_as_cel))
}
