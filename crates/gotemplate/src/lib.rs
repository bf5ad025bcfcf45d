//! Go's `text/template`, with the Sprig v2.22 text functions, in Rust.
//!
//! Templates written for Go tools (Helm charts' helpers, Hub CLI and hubctl
//! components, `gomplate`-style files) render here byte for byte as Go
//! renders them: the same parsing (trim markers `{{-`/`-}}`, comments,
//! `if`/`else if`/`range`/`with`/`define`/`template`/`block`, pipelines,
//! variables), the same printing of values (`fmt.Sprint`, `%v`, `printf`
//! verbs, JSON), and Go's time layouts and zones in the date functions.
//!
//! ```
//! use gotemplate::{render, Value};
//! use std::collections::BTreeMap;
//!
//! let mut data = BTreeMap::new();
//! data.insert("name".to_string(), Value::str("world"));
//! data.insert("replicas".to_string(), Value::Int(3));
//! let text = render(
//!     "hello {{ .name | upper }}: {{ add .replicas 1 }} pods{{ if gt .replicas 2 }}, ha{{ end }}",
//!     &Value::Map(data),
//! )
//! .unwrap();
//! assert_eq!(text, "hello WORLD: 4 pods, ha");
//! ```
//!
//! YAML data (the usual source of a deployment tool's parameters) binds
//! with [`bindings`]: a dotted name such as `component.db.host` becomes
//! nested maps (`.component.db.host`).
//!
//! A missing map key is an error naming the key ([`GoError::key`]), as Go's
//! `missingkey=error` option makes it, not `<no value>`: a configuration
//! file rendered with a hole in it is worse than no file.
//!
//! # Modules
//!
//! * [`parse`]: source → tree.
//! * `exec`: the tree run against the data.
//! * [`table`]: every function name and the module that runs it, which
//!   the parser and the executor both read.
//! * [`funcs`]: Go's builtins; `sprig`, `semver` and `crypto`: Sprig's
//!   functions (strings, lists, dicts, math, dates, encodings, hashes,
//!   `semver`, `derivePassword`, `encryptAES`…).
//! * [`value`]: the values and Go's printing of them; `printf`: `fmt`;
//!   `time`: Go's time layouts, zones and durations.

mod crypto;
mod error;
mod exec;
pub mod funcs;
pub mod parse;
mod printf;
mod semver;
mod sprig;
pub mod table;
mod time;
pub mod value;

pub use error::GoError;
use parse::{Node, Operand, Pipe, Term};
use std::collections::BTreeMap;
pub use value::Value;

/// Renders `source` with `data` as dot.
pub fn render(source: &str, data: &Value) -> Result<String, GoError> {
    let parsed = parse::parse(source)?;
    check_functions(&parsed.body)?;
    for (_, body) in &parsed.defines {
        check_functions(body)?;
    }
    exec::execute(&parsed, data)
}

/// Go rejects a template naming an unknown function when it parses it,
/// even in a branch never taken.
fn check_functions(nodes: &[Node]) -> Result<(), GoError> {
    for node in nodes {
        match node {
            Node::Action(pipe) => check_pipe(pipe)?,
            Node::If(b) | Node::Range(b) | Node::With(b) => {
                check_pipe(&b.pipe)?;
                check_functions(&b.body)?;
                if let Some(otherwise) = &b.otherwise {
                    check_functions(otherwise)?;
                }
            }
            Node::Template {
                pipe: Some(pipe), ..
            } => check_pipe(pipe)?,
            _ => {}
        }
    }
    Ok(())
}

fn check_pipe(pipe: &Pipe) -> Result<(), GoError> {
    for operand in pipe.commands.iter().flat_map(|c| &c.operands) {
        check_operand(pipe.line, operand)?;
    }
    Ok(())
}

fn check_operand(line: usize, operand: &Operand) -> Result<(), GoError> {
    match &operand.term {
        Term::Function(name) if !table::exists(name) => {
            let message = if funcs::MISSING.contains(&name.as_str()) {
                format!("function {name:?} not defined (a Sprig function this hub does not offer)")
            } else {
                format!("function {name:?} not defined")
            };
            Err(GoError::new(line, message))
        }
        Term::Pipe(inner) => check_pipe(inner),
        _ => Ok(()),
    }
}

/// The data of a template: parameter names split on `.` into nested maps,
/// `-` → `_` in each part, top-level strings trimmed. A name that is both a
/// value and a prefix of another keeps the first installed; the conflicts
/// are returned for a warning.
pub fn bindings<'a>(
    params: impl IntoIterator<Item = (&'a str, Option<&'a yaml_serde::Value>)>,
) -> (Value, Vec<String>) {
    let mut root = BTreeMap::new();
    let mut conflicts = Vec::new();
    for (name, value) in params {
        let parts: Vec<String> = name.split('.').map(|p| p.replace('-', "_")).collect();
        let value = value.map_or(Value::Nil, |v| Value::from_yaml(v, true));
        if !install(&mut root, &parts, value) {
            conflicts.push(name.to_string());
        }
    }
    (Value::Map(root), conflicts)
}

fn install(map: &mut BTreeMap<String, Value>, parts: &[String], value: Value) -> bool {
    let [head, rest @ ..] = parts else {
        return false;
    };
    if rest.is_empty() {
        if map.contains_key(head) {
            return false;
        }
        map.insert(head.clone(), value);
        return true;
    }
    match map
        .entry(head.clone())
        .or_insert_with(|| Value::Map(BTreeMap::new()))
    {
        Value::Map(inner) => install(inner, rest, value),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
