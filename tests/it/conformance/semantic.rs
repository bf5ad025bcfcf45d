//! Semantic comparison of elaborated files: a port of the `elaborate` mode of
//! the shared `tools/hubdiff.py`, so that `cargo test` and the conformance
//! script agree on what counts as a difference.
//!
//! Both sides are normalised the same way before they are compared:
//!
//! * absent key == `null` == `[]` == `{}`, except under `value` and `default`
//!   where only `null` counts as absent (`""` is always kept);
//! * every list whose items are all mappings with a `name` becomes a map keyed
//!   by that name (duplicates become `name#2`, `name#3`, ...), and keeps its
//!   order: a reordering is reported as `PATH (order)`;
//! * `$.stack.parameters` is keyed by `name` or `name|component` and compared
//!   as a set (the reference writes it sorted);
//! * the component documents are keyed by `meta.name` under `$.component`,
//!   and their order is checked.
//!
//! Scalars keep their YAML type (`"3"` != `3`, `true` != `"true"`), read with
//! YAML 1.2 rules (`yes`/`no`/`on`/`off` stay strings). The YAML reader is
//! `yaml_serde`, whose plain-scalar rules match the core schema used by
//! hubdiff.py except in corners no Hub writer produces unquoted: plain
//! `0755` (a string here, an integer there), `0b101` and signed hex/octal
//! (integers here, strings there).
//!
//! Differences are printed as hubdiff.py prints them:
//! `PATH: expected X, actual Y`, `PATH: missing in actual (expected X)`,
//! `PATH: unexpected in actual (Y)`.

use std::fmt;
use std::path::Path;

/// A YAML value after loading, with the shapes hubdiff.py works on.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    Null,
    Bool(bool),
    Int(i128),
    Float(f64),
    Str(String),
    List(Vec<Node>),
    Map(Map),
}

/// An insertion-ordered mapping. `keyed` is `Some(ordered)` when the map was
/// made from a list of named mappings (hubdiff.py's `Keyed`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Map {
    pub entries: Vec<(Key, Node)>,
    pub keyed: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Key {
    Str(String),
    Int(i128),
}

impl Map {
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entries
            .iter()
            .find(|(k, _)| matches!(k, Key::Str(s) if s == key))
            .map(|(_, v)| v)
    }

    fn position(&self, key: &Key) -> Option<usize> {
        self.entries.iter().position(|(k, _)| k == key)
    }

    fn contains(&self, key: &Key) -> bool {
        self.position(key).is_some()
    }

    /// Like assignment to a Python dict: replaces in place, or appends.
    fn insert(&mut self, key: Key, value: Node) {
        match self.position(&key) {
            Some(i) => self.entries[i].1 = value,
            None => self.entries.push((key, value)),
        }
    }
}

impl Node {
    pub fn as_map(&self) -> Option<&Map> {
        match self {
            Node::Map(m) => Some(m),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_list(&self) -> Option<&[Node]> {
        match self {
            Node::List(l) => Some(l),
            _ => None,
        }
    }

    /// `node.get(key)` on a mapping, `None` on anything else.
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.as_map().and_then(|m| m.get(key))
    }

    fn is_container(&self) -> bool {
        matches!(self, Node::List(_) | Node::Map(_))
    }

    fn is_empty_container(&self) -> bool {
        match self {
            Node::List(l) => l.is_empty(),
            Node::Map(m) => m.entries.is_empty(),
            _ => false,
        }
    }

    /// Python truthiness.
    fn truthy(&self) -> bool {
        match self {
            Node::Null => false,
            Node::Bool(b) => *b,
            Node::Int(i) => *i != 0,
            Node::Float(f) => *f != 0.0,
            Node::Str(s) => !s.is_empty(),
            Node::List(l) => !l.is_empty(),
            Node::Map(m) => !m.entries.is_empty(),
        }
    }
}

impl From<yaml_serde::Value> for Node {
    fn from(value: yaml_serde::Value) -> Self {
        use yaml_serde::Value;
        match value {
            Value::Null => Node::Null,
            Value::Bool(b) => Node::Bool(b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Node::Int(i.into())
                } else if let Some(u) = n.as_u64() {
                    Node::Int(u.into())
                } else {
                    Node::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => Node::Str(s),
            Value::Sequence(items) => Node::List(items.into_iter().map(Node::from).collect()),
            Value::Mapping(mapping) => {
                let mut map = Map::default();
                for (k, v) in mapping {
                    let key = match Node::from(k) {
                        Node::Int(i) => Key::Int(i),
                        other => Key::Str(py_str(&other)),
                    };
                    map.insert(key, Node::from(v));
                }
                Node::Map(map)
            }
            // Tags carry no meaning for the comparison.
            Value::Tagged(tagged) => Node::from(tagged.value),
        }
    }
}

// ------------------------------------------------------------------ loading

/// The non-null documents of a plain or gzip-compressed YAML file; the first
/// must be a mapping.
pub fn load_documents(path: &Path) -> Result<Vec<Node>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        use std::io::Read;
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(|e| format!("{}: bad gzip data: {e}", path.display()))?;
        out
    } else {
        bytes
    };
    let text =
        String::from_utf8(bytes).map_err(|e| format!("{}: not valid YAML: {e}", path.display()))?;
    parse_documents(&text).map_err(|e| format!("{}: {e}", path.display()))
}

pub fn parse_documents(text: &str) -> Result<Vec<Node>, String> {
    use serde::Deserialize;
    let mut docs = Vec::new();
    for document in yaml_serde::Deserializer::from_str(text) {
        let value =
            yaml_serde::Value::deserialize(document).map_err(|e| format!("not valid YAML: {e}"))?;
        if !value.is_null() {
            docs.push(Node::from(value));
        }
    }
    match docs.first() {
        Some(Node::Map(_)) => Ok(docs),
        _ => Err("no YAML mapping document found".into()),
    }
}

// ------------------------------------------------------------ normalisation

/// Absent == null == empty list/map (except under `value`/`default`, where
/// only null counts as absent).
pub fn prune(node: Node) -> Node {
    match node {
        Node::Map(map) => {
            let mut out = Map {
                entries: Vec::with_capacity(map.entries.len()),
                keyed: map.keyed,
            };
            for (k, v) in map.entries {
                let v = prune(v);
                let keeps_empty = matches!(&k, Key::Str(s) if s == "value" || s == "default");
                if v == Node::Null || (v.is_empty_container() && !keeps_empty) {
                    continue;
                }
                out.entries.push((k, v));
            }
            Node::Map(out)
        }
        Node::List(items) => Node::List(items.into_iter().map(prune).collect()),
        other => other,
    }
}

/// `name`, or `name|component` when the item names a component.
pub fn qualified_name(item: &Map) -> String {
    let name = item.get("name").map(py_str).unwrap_or_default();
    match item.get("component") {
        Some(component) if component.truthy() => format!("{name}|{}", py_str(component)),
        _ => name,
    }
}

fn plain_name(item: &Map) -> String {
    item.get("name").map(py_str).unwrap_or_default()
}

/// Turns a non-empty list whose items are all mappings with a `name` into a
/// keyed map; leaves anything else unchanged.
fn keyed(node: Node, key_of: fn(&Map) -> String, ordered: bool) -> Node {
    let Node::List(items) = node else { return node };
    let named = |item: &Node| matches!(item, Node::Map(m) if m.contains(&Key::Str("name".into())));
    if items.is_empty() || !items.iter().all(named) {
        return Node::List(items);
    }
    let mut out = Map {
        entries: Vec::with_capacity(items.len()),
        keyed: Some(ordered),
    };
    for item in items {
        let Node::Map(map) = &item else {
            unreachable!()
        };
        let base = key_of(map);
        let (mut key, mut n) = (base.clone(), 2);
        while out.contains(&Key::Str(key.clone())) {
            key = format!("{base}#{n}");
            n += 1;
        }
        out.entries.push((Key::Str(key), item));
    }
    Node::Map(out)
}

/// Recursively keys every list of named mappings by `name`, keeping order.
/// Maps already keyed are left as they are (their items are not descended).
pub fn key_named_lists(node: Node) -> Node {
    match node {
        Node::Map(map) if map.keyed.is_none() => Node::Map(Map {
            entries: map
                .entries
                .into_iter()
                .map(|(k, v)| (k, key_named_lists(v)))
                .collect(),
            keyed: None,
        }),
        Node::List(items) => keyed(
            Node::List(items.into_iter().map(key_named_lists).collect()),
            plain_name,
            true,
        ),
        other => other,
    }
}

/// The tree both sides are compared as: `{stack: ..., component: {NAME: doc}}`.
pub fn normalise_elaborate(docs: Vec<Node>) -> Node {
    let mut docs = docs.into_iter();
    let mut stack = prune(docs.next().unwrap_or(Node::Null));
    if let Node::Map(map) = &mut stack {
        let key = Key::Str("parameters".into());
        if let Some(i) = map.position(&key) {
            let parameters = std::mem::replace(&mut map.entries[i].1, Node::Null);
            // Sorted by the reference: compared as a set.
            map.entries[i].1 = keyed(parameters, qualified_name, false);
        }
    }
    let mut components = Map::default();
    for (i, doc) in docs.enumerate() {
        let doc = prune(doc);
        let name = doc
            .get("meta")
            .and_then(|meta| meta.get("name"))
            .filter(|n| n.truthy());
        let mut key = match name {
            Some(name) => py_str(name),
            None => format!("#doc{}", i + 2),
        };
        while components.contains(&Key::Str(key.clone())) {
            key.push_str("#dup");
        }
        components.entries.push((Key::Str(key), doc));
    }
    let Node::Map(mut components) = key_named_lists(Node::Map(components)) else {
        unreachable!()
    };
    components.keyed = Some(true);
    Node::Map(Map {
        entries: vec![
            (Key::Str("stack".into()), key_named_lists(stack)),
            (Key::Str("component".into()), Node::Map(components)),
        ],
        keyed: None,
    })
}

// --------------------------------------------------------------- comparison

#[derive(Debug, Clone, PartialEq)]
pub struct Difference {
    pub path: String,
    pub text: String,
}

impl fmt::Display for Difference {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path, self.text)
    }
}

fn is_simple_key(key: &str) -> bool {
    // Python's `$` also matches before one trailing newline.
    let key = key.strip_suffix('\n').unwrap_or(key);
    let mut chars = key.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

fn step(path: &str, key: &Key) -> String {
    match key {
        Key::Int(i) => format!("{path}[{i}]"),
        Key::Str(s) if is_simple_key(s) => format!("{path}.{s}"),
        Key::Str(s) => format!("{path}[{}]", json_string(s, true)),
    }
}

fn index_step(path: &str, index: usize) -> String {
    format!("{path}[{index}]")
}

fn same_scalar(a: &Node, b: &Node) -> bool {
    match (a, b) {
        (Node::Null, Node::Null) => true,
        (Node::Bool(x), Node::Bool(y)) => x == y,
        (Node::Int(x), Node::Int(y)) => x == y,
        (Node::Float(x), Node::Float(y)) => x == y,
        (Node::Str(x), Node::Str(y)) => x == y,
        _ => false,
    }
}

/// Appends every difference between `a` (expected) and `b` (actual).
pub fn diff(a: &Node, b: &Node, path: &str, out: &mut Vec<Difference>) {
    fn push(out: &mut Vec<Difference>, path: String, text: String) {
        out.push(Difference { path, text });
    }
    match (a, b) {
        (Node::Map(ma), Node::Map(mb)) => {
            if ma.keyed == Some(true) {
                let ka: Vec<&Key> = ma
                    .entries
                    .iter()
                    .map(|(k, _)| k)
                    .filter(|k| mb.contains(k))
                    .collect();
                let kb: Vec<&Key> = mb
                    .entries
                    .iter()
                    .map(|(k, _)| k)
                    .filter(|k| ma.contains(k))
                    .collect();
                if ka != kb {
                    push(
                        out,
                        format!("{path} (order)"),
                        format!("expected {}, actual {}", show_keys(&ka), show_keys(&kb)),
                    );
                }
            }
            for (k, va) in &ma.entries {
                match mb.position(k) {
                    None => push(
                        out,
                        step(path, k),
                        format!("missing in actual (expected {})", show(va)),
                    ),
                    Some(i) => diff(va, &mb.entries[i].1, &step(path, k), out),
                }
            }
            for (k, vb) in &mb.entries {
                if !ma.contains(k) {
                    push(
                        out,
                        step(path, k),
                        format!("unexpected in actual ({})", show(vb)),
                    );
                }
            }
        }
        (Node::List(la), Node::List(lb)) => {
            if la.iter().chain(lb).all(|x| !x.is_container()) {
                if la.len() != lb.len() || !la.iter().zip(lb).all(|(x, y)| same_scalar(x, y)) {
                    push(
                        out,
                        path.to_string(),
                        format!("expected {}, actual {}", show(a), show(b)),
                    );
                }
                return;
            }
            for (i, (x, y)) in la.iter().zip(lb).enumerate() {
                diff(x, y, &index_step(path, i), out);
            }
            for (i, x) in la.iter().enumerate().skip(lb.len()) {
                push(
                    out,
                    index_step(path, i),
                    format!("missing in actual (expected {})", show(x)),
                );
            }
            for (i, y) in lb.iter().enumerate().skip(la.len()) {
                push(
                    out,
                    index_step(path, i),
                    format!("unexpected in actual ({})", show(y)),
                );
            }
        }
        _ => {
            if a.is_container() || b.is_container() || !same_scalar(a, b) {
                push(
                    out,
                    path.to_string(),
                    format!("expected {}, actual {}", show(a), show(b)),
                );
            }
        }
    }
}

/// All differences between two elaborated files, in hubdiff.py's order.
pub fn diff_elaborate(expected: Vec<Node>, actual: Vec<Node>) -> Vec<Difference> {
    let mut out = Vec::new();
    diff(
        &normalise_elaborate(expected),
        &normalise_elaborate(actual),
        "$",
        &mut out,
    );
    out
}

// ------------------------------------------------------------- allow rules

/// One entry of a deviations file (hubdiff.py `--allow` format).
#[derive(Debug, Clone)]
pub struct Allow {
    pub pattern: String,
    pub reason: String,
    pub origin: String,
    regex: regex::Regex,
}

impl Allow {
    pub fn new(pattern: &str, reason: &str, origin: &str) -> Self {
        // `*` matches any run of characters; a pattern also covers
        // everything below the path it matches.
        let body = regex::escape(pattern).replace(r"\*", ".*");
        let regex = regex::Regex::new(&format!(r"^{body}(?:$|[.\[ ])")).expect("pattern regex");
        Allow {
            pattern: pattern.into(),
            reason: reason.into(),
            origin: origin.into(),
            regex,
        }
    }

    pub fn covers(&self, path: &str) -> bool {
        self.regex.is_match(&format!("{path} "))
    }
}

/// `PATTERN  REASON...` per line; `#` comments and blank lines are skipped.
pub fn parse_allow(text: &str, name: &str) -> Result<Vec<Allow>, String> {
    let mut rules = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        match line.split_once(char::is_whitespace) {
            Some((pattern, reason)) if !reason.trim().is_empty() => rules.push(Allow::new(
                pattern,
                reason.trim(),
                &format!("{name}:{}", n + 1),
            )),
            _ => {
                return Err(format!(
                    "{name}:{}: pattern without a reason: {line}",
                    n + 1
                ))
            }
        }
    }
    Ok(rules)
}

pub fn load_allow(path: &Path) -> Result<Vec<Allow>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse_allow(&text, &path.display().to_string())
}

/// Differences split by the allow rules: `real` ones, and `allowed` ones
/// with the index of the first rule that covers them.
#[derive(Debug, Default)]
pub struct Outcome {
    pub real: Vec<Difference>,
    pub allowed: Vec<(Difference, usize)>,
}

pub fn classify(found: Vec<Difference>, rules: &[Allow]) -> Outcome {
    let mut outcome = Outcome::default();
    for d in found {
        match rules.iter().position(|r| r.covers(&d.path)) {
            Some(i) => outcome.allowed.push((d, i)),
            None => outcome.real.push(d),
        }
    }
    outcome
}

// ---------------------------------------------------- Python-like printing

/// `str(value)` in Python.
pub fn py_str(node: &Node) -> String {
    match node {
        Node::Str(s) => s.clone(),
        other => py_repr(other),
    }
}

fn py_repr(node: &Node) -> String {
    match node {
        Node::Null => "None".into(),
        Node::Bool(true) => "True".into(),
        Node::Bool(false) => "False".into(),
        Node::Int(i) => i.to_string(),
        Node::Float(f) => py_float(*f),
        Node::Str(s) => {
            let quote = if s.contains('\'') && !s.contains('"') {
                '"'
            } else {
                '\''
            };
            let mut out = String::from(quote);
            for c in s.chars() {
                match c {
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\r' => out.push_str("\\r"),
                    '\t' => out.push_str("\\t"),
                    c if c == quote => {
                        out.push('\\');
                        out.push(c);
                    }
                    c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                        out.push_str(&format!("\\x{:02x}", c as u32))
                    }
                    c => out.push(c),
                }
            }
            out.push(quote);
            out
        }
        Node::List(items) => format!(
            "[{}]",
            items.iter().map(py_repr).collect::<Vec<_>>().join(", ")
        ),
        Node::Map(map) => format!(
            "{{{}}}",
            map.entries
                .iter()
                .map(|(k, v)| format!("{}: {}", py_repr(&key_node(k)), py_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn key_node(key: &Key) -> Node {
    match key {
        Key::Str(s) => Node::Str(s.clone()),
        Key::Int(i) => Node::Int(*i),
    }
}

/// `repr(float)` in Python: shortest round-trip digits, exponent form below
/// 1e-4 and from 1e16 on.
pub fn py_float(f: f64) -> String {
    if f.is_nan() {
        return "nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "inf" } else { "-inf" }.into();
    }
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').expect("exponent");
    let exp: i32 = exp.parse().expect("exponent digits");
    let sign = if mantissa.starts_with('-') { "-" } else { "" };
    let digits: String = mantissa.trim_start_matches('-').replace('.', "");
    if (-4..16).contains(&exp) {
        if exp < 0 {
            let zeros = "0".repeat((-exp - 1) as usize);
            format!("{sign}0.{zeros}{digits}")
        } else {
            let int_len = exp as usize + 1;
            if digits.len() > int_len {
                format!("{sign}{}.{}", &digits[..int_len], &digits[int_len..])
            } else {
                format!("{sign}{digits}{}.0", "0".repeat(int_len - digits.len()))
            }
        }
    } else {
        let rest = if digits.len() > 1 {
            format!(".{}", &digits[1..])
        } else {
            String::new()
        };
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{}{rest}e{exp_sign}{:02}", &digits[..1], exp.abs())
    }
}

/// `json.dumps(s)` (with `ensure_ascii` as given).
fn json_string(s: &str, ensure_ascii: bool) -> String {
    let mut out = String::from('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (ensure_ascii && (c as u32) > 0x7e) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `json.dumps(plain(v), ensure_ascii=False)`: keyed maps print as lists.
fn json(node: &Node) -> String {
    match node {
        Node::Null => "null".into(),
        Node::Bool(b) => b.to_string(),
        Node::Int(i) => i.to_string(),
        Node::Float(f) if f.is_nan() => "NaN".into(),
        Node::Float(f) if f.is_infinite() => if *f > 0.0 { "Infinity" } else { "-Infinity" }.into(),
        Node::Float(f) => py_float(*f),
        Node::Str(s) => json_string(s, false),
        Node::List(items) => format!(
            "[{}]",
            items.iter().map(json).collect::<Vec<_>>().join(", ")
        ),
        Node::Map(map) if map.keyed.is_some() => {
            format!(
                "[{}]",
                map.entries
                    .iter()
                    .map(|(_, v)| json(v))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        Node::Map(map) => format!(
            "{{{}}}",
            map.entries
                .iter()
                .map(|(k, v)| format!("{}: {}", json_string(&py_str(&key_node(k)), false), json(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// A value as hubdiff.py shows it: JSON, cut at 160 characters.
pub fn show(node: &Node) -> String {
    const LIMIT: usize = 160;
    let s = json(node);
    if s.chars().count() <= LIMIT {
        s
    } else {
        s.chars().take(LIMIT - 3).collect::<String>() + "..."
    }
}

fn show_keys(keys: &[&Key]) -> String {
    show(&Node::List(keys.iter().map(|k| key_node(k)).collect()))
}

// -------------------------------------------------------------------- tests

#[cfg(test)]
mod tests {
    use super::*;

    fn docs(text: &str) -> Vec<Node> {
        parse_documents(&crate::common::unindent(text)).expect("test YAML")
    }

    fn differences(expected: &str, actual: &str) -> Vec<String> {
        diff_elaborate(docs(expected), docs(actual))
            .iter()
            .map(|d| d.to_string())
            .collect()
    }

    #[test]
    fn absent_null_and_empty_are_the_same() {
        let expected = "
            kind: stack
            meta: {name: s}
            requires: []
            outputs: ~
            lifecycle: {order: [], verbs: []}
            ";
        assert_eq!(
            differences(expected, "kind: stack\nmeta: {name: s}\n"),
            Vec::<String>::new()
        );
    }

    #[test]
    fn empty_value_and_default_are_real_values() {
        let expected = "
            kind: stack
            parameters:
              - {name: a, value: []}
              - {name: b, default: {}}
              - {name: c, value: ''}
            ";
        let actual = "
            kind: stack
            parameters:
              - {name: a}
              - {name: b}
              - {name: c}
            ";
        assert_eq!(
            differences(expected, actual),
            [
                "$.stack.parameters.a.value: missing in actual (expected [])",
                "$.stack.parameters.b.default: missing in actual (expected {})",
                "$.stack.parameters.c.value: missing in actual (expected \"\")",
            ]
        );
        // Only null counts as absent under `value`.
        assert_eq!(
            differences(
                "kind: stack\nparameters: [{name: a, value: ~}]\n",
                "kind: stack\nparameters: [{name: a}]\n"
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn stack_parameters_are_a_set_keyed_by_name_and_component() {
        let expected = "
            kind: stack
            parameters:
              - {name: a, value: 1}
              - {name: a, component: x, value: 2}
              - {name: 'dns.domain', value: d}
            ";
        let reordered = "
            kind: stack
            parameters:
              - {name: 'dns.domain', value: d}
              - {name: a, component: x, value: 3}
              - {name: a, value: 1}
            ";
        assert_eq!(
            differences(expected, reordered),
            ["$.stack.parameters[\"a|x\"].value: expected 2, actual 3"]
        );
    }

    #[test]
    fn named_lists_keep_their_order_elsewhere() {
        let expected = "
            kind: stack
            ---
            kind: component
            meta: {name: db}
            parameters: [{name: a}, {name: b}]
            outputs: [{name: 'db.url'}]
            ";
        let actual = "
            kind: stack
            ---
            kind: component
            meta: {name: db}
            parameters: [{name: b}, {name: a}]
            outputs: [{name: 'db.url', kind: secret}]
            ";
        assert_eq!(
            differences(expected, actual),
            [
                "$.component.db.parameters (order): expected [\"a\", \"b\"], actual [\"b\", \"a\"]",
                "$.component.db.outputs[\"db.url\"].kind: unexpected in actual (\"secret\")",
            ]
        );
    }

    #[test]
    fn component_documents_are_keyed_by_name_and_ordered() {
        let a = "kind: stack\n---\nmeta: {name: a}\n---\nmeta: {name: b}\n";
        let b = "kind: stack\n---\nmeta: {name: b}\n---\nmeta: {name: a}\n";
        assert_eq!(
            differences(a, b),
            ["$.component (order): expected [\"a\", \"b\"], actual [\"b\", \"a\"]"]
        );
        assert_eq!(
            differences(
                a,
                "kind: stack\n---\nmeta: {name: a}\n---\nkind: component\n"
            ),
            [
                "$.component.b: missing in actual (expected {\"meta\": {\"name\": \"b\"}})",
                "$.component[\"#doc3\"]: unexpected in actual ({\"kind\": \"component\"})",
            ]
        );
    }

    #[test]
    fn scalars_keep_their_yaml_1_2_types() {
        assert_eq!(
            differences(
                "kind: stack\nmeta: {a: '3', b: true, c: 1, d: yes, e: [1, 2]}\n",
                "kind: stack\nmeta: {a: 3, b: 'true', c: 1.0, d: 'yes', e: ['1', 2]}\n"
            ),
            [
                "$.stack.meta.a: expected \"3\", actual 3",
                "$.stack.meta.b: expected true, actual \"true\"",
                "$.stack.meta.c: expected 1, actual 1.0",
                "$.stack.meta.e: expected [1, 2], actual [\"1\", 2]",
            ]
        );
    }

    #[test]
    fn long_values_are_cut() {
        let long = "x".repeat(200);
        let shown = show(&Node::Str(long));
        assert_eq!(shown.chars().count(), 160);
        assert!(shown.ends_with("xx..."));
    }

    #[test]
    fn python_float_repr() {
        for (f, s) in [
            (1.0, "1.0"),
            (0.5, "0.5"),
            (-2.25, "-2.25"),
            (1e16, "1e+16"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (123456789.0, "123456789.0"),
        ] {
            assert_eq!(py_float(f), s);
        }
    }

    #[test]
    fn allow_patterns_cover_the_path_and_below() {
        let rules = parse_allow(
            "# comment\n\n$.stack.components.*.hooks   passthrough\n$.stack.parameters[\"dns|*\"] not implemented\n",
            "deviations",
        )
        .expect("rules");
        assert_eq!(rules.len(), 2);
        assert_eq!(rules[0].origin, "deviations:3");
        assert!(rules[0].covers("$.stack.components.nginx.hooks"));
        assert!(rules[0].covers("$.stack.components.nginx.hooks[0].file"));
        assert!(!rules[0].covers("$.stack.components.nginx.hooksX"));
        assert!(!rules[0].covers("$.component.nginx.hooks"));
        assert!(rules[1].covers("$.stack.parameters[\"dns|x\"].value"));
        assert!(parse_allow("$.stack.x\n", "d").is_err());
    }

    #[test]
    fn duplicate_names_are_numbered() {
        assert_eq!(
            differences(
                "kind: stack\noutputs: [{name: a, value: 1}, {name: a, value: 2}]\n",
                "kind: stack\noutputs: [{name: a, value: 1}, {name: a, value: 3}]\n"
            ),
            ["$.stack.outputs[\"a#2\"].value: expected 2, actual 3"]
        );
    }
}
