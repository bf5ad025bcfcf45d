//! The only module that touches the `cel` crate (pinned at `=0.15.0`; its
//! API changes between minor releases, so nothing else depends on it).
//!
//! Hub parameters are dotted names (`cloud.kind`), which CEL reads as field
//! selections. The crate asks a [`VariableResolver`] for the most specific
//! dotted name first (`a.b.c`, then `a.b`, then `a`), so a lookup function
//! that understands Hub names plugs in directly.

use super::format::{go_float, json_text};
use super::table::FastMap;
use cel::common::ast::{operators, EntryExpr, Expr, IdedExpr};
use cel::common::value::CowVal;
use cel::context::VariableResolver;
use cel::extractors::Arguments;
use cel::objects::{Key, Opaque};
use cel::{Context, Env, ExecutionError, Value as CelValue};
use std::cell::RefCell;
use std::sync::Arc;
use yaml_serde::Value;

/// A parsed `#{...}` expression and the names it may read.
pub struct Compiled {
    expression: IdedExpr,
    names: Vec<Vec<String>>,
}

impl std::fmt::Debug for Compiled {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compiled")
            .field("names", &self.names)
            .finish()
    }
}

impl Compiled {
    /// For every identifier chain of the expression, the names it may
    /// denote, longest first: `a.b.c` gives `[a.b.c, a.b, a]`.
    pub fn names(&self) -> &[Vec<String>] {
        &self.names
    }
}

/// Why an expression could not be parsed or evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CelFailure {
    Parse(String),
    Eval(String),
}

impl std::error::Error for CelFailure {}

impl std::fmt::Display for CelFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CelFailure::Parse(message) => write!(f, "CEL parse error: {message}"),
            CelFailure::Eval(message) => write!(f, "CEL evaluation error: {message}"),
        }
    }
}

/// One environment with the standard library and Hub's operators, shared
/// by every evaluation, and the syntax trees of expression shapes already
/// parsed.
pub struct Cel {
    env: Arc<Env>,
    root: Context<'static, 'static>,
    shapes: RefCell<FastMap<String, Option<IdedExpr>>>,
}

impl Default for Cel {
    fn default() -> Self {
        let env = Arc::new(Env::stdlib());
        let mut root = Context::with_env(Arc::clone(&env));
        for (name, function) in [
            (
                EQUALS,
                equals as fn(Arguments) -> Result<CelValue, ExecutionError>,
            ),
            (NOT_EQUALS, not_equals),
            (ADD, add),
            (SUBTRACT, subtract),
            (MULTIPLY, multiply),
            (TIMESTAMP, timestamp),
        ] {
            // The names are Hub's own, so they cannot clash with the library.
            let _ = root.add_function(name, function);
        }
        Cel {
            env,
            root,
            shapes: RefCell::new(FastMap::default()),
        }
    }
}

thread_local! {
    static SHARED: std::rc::Rc<Cel> = std::rc::Rc::new(Cel::default());
}

impl Cel {
    /// One environment for the whole thread: building one registers the
    /// standard library, which costs more than expanding a component's
    /// parameters, so a run that expands many components shares it.
    pub fn shared() -> std::rc::Rc<Cel> {
        SHARED.with(std::rc::Rc::clone)
    }

    /// Parses `source`. Expressions that differ only in the names they
    /// read (`size(a.b) > 0` and `size(c) > 0`) share one parse: the
    /// parser is by far the slowest step of locking.
    pub fn compile(&self, source: &str) -> Result<Compiled, CelFailure> {
        let expression = match shape::of(source) {
            Some(shape) => {
                let cached = self.shapes.borrow().get(&shape.text).cloned();
                let tree = match cached {
                    Some(tree) => tree,
                    None => {
                        let tree = self.parse(&shape.text).ok().filter(shape::is_plain);
                        self.shapes
                            .borrow_mut()
                            .insert(shape.text.clone(), tree.clone());
                        tree
                    }
                };
                match tree {
                    Some(mut tree) => {
                        shape::fill(&mut tree, &shape.slots);
                        tree
                    }
                    // A parse error (reported with the real text) or a
                    // shape that cannot be shared.
                    None => self.parse(source)?,
                }
            }
            None => self.parse(source)?,
        };
        let mut names = Vec::new();
        collect_names(&expression, &mut names);
        Ok(Compiled { expression, names })
    }

    fn parse(&self, source: &str) -> Result<IdedExpr, CelFailure> {
        let program = self.env.compile(source).map_err(|errors| {
            let first_lines: Vec<String> = errors
                .errors
                .iter()
                .map(|e| e.to_string().lines().next().unwrap_or_default().to_string())
                .collect();
            CelFailure::Parse(first_lines.join("; "))
        })?;
        let mut expression = program.expression().clone();
        use_hub_operators(&mut expression);
        Ok(expression)
    }

    /// Evaluates `compiled`, reading free names through `lookup`, and
    /// renders the result as Hub prints it.
    pub fn evaluate<F>(&self, compiled: &Compiled, lookup: F) -> Result<String, CelFailure>
    where
        F: Fn(&str) -> Option<Value> + Send + Sync,
    {
        let resolver = Resolver(lookup);
        let mut scope = self.root.new_inner_scope();
        scope.set_variable_resolver(&resolver);
        let value = scope
            .resolve(&compiled.expression)
            .map_err(|e| CelFailure::Eval(e.to_string()))?;
        Ok(render(&value))
    }
}

// Hub evaluates expressions the way the reference (cel-go 0.5) did where
// today's CEL differs: `==` and `!=` between different types are errors,
// not `false`; integer arithmetic wraps around instead of failing; and
// `timestamp()` exists without the crate's `chrono` feature.
const EQUALS: &str = "hub@equals";
const NOT_EQUALS: &str = "hub@not_equals";
const ADD: &str = "hub@add";
const SUBTRACT: &str = "hub@subtract";
const MULTIPLY: &str = "hub@multiply";
const TIMESTAMP: &str = "timestamp";

/// Points the operators above at Hub's functions, without recursion.
fn use_hub_operators(root: &mut IdedExpr) {
    let mut pending: Vec<&mut IdedExpr> = vec![root];
    while let Some(node) = pending.pop() {
        match &mut node.expr {
            Expr::Call(call) => {
                if call.target.is_none() && call.args.len() == 2 {
                    let replacement = match call.func_name.as_str() {
                        operators::EQUALS => Some(EQUALS),
                        operators::NOT_EQUALS => Some(NOT_EQUALS),
                        operators::ADD => Some(ADD),
                        operators::SUBSTRACT => Some(SUBTRACT),
                        operators::MULTIPLY => Some(MULTIPLY),
                        _ => None,
                    };
                    if let Some(name) = replacement {
                        call.func_name = name.to_string();
                    }
                }
                if let Some(target) = call.target.as_deref_mut() {
                    pending.push(target);
                }
                pending.extend(call.args.iter_mut());
            }
            Expr::Comprehension(c) => {
                let c = c.as_mut();
                pending.extend([
                    &mut c.iter_range,
                    &mut c.accu_init,
                    &mut c.loop_cond,
                    &mut c.loop_step,
                    &mut c.result,
                ]);
            }
            Expr::List(list) => pending.extend(list.elements.iter_mut()),
            Expr::Map(map) => {
                for entry in &mut map.entries {
                    match &mut entry.expr {
                        EntryExpr::MapEntry(e) => pending.extend([&mut e.key, &mut e.value]),
                        EntryExpr::StructField(field) => pending.push(&mut field.value),
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in &mut s.entries {
                    match &mut entry.expr {
                        EntryExpr::StructField(field) => pending.push(&mut field.value),
                        EntryExpr::MapEntry(e) => pending.extend([&mut e.key, &mut e.value]),
                    }
                }
            }
            Expr::Select(select) => pending.push(&mut select.operand),
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }
}

fn type_name(value: &CelValue) -> String {
    format!("{:?}", value.type_of()).to_lowercase()
}

fn no_overload(operator: &str, a: &CelValue, b: &CelValue) -> ExecutionError {
    ExecutionError::no_such_overload(operator, vec![type_name(a), type_name(b)])
}

fn two(args: &[CelValue]) -> Result<(&CelValue, &CelValue), ExecutionError> {
    match args {
        [a, b] => Ok((a, b)),
        _ => Err(ExecutionError::invalid_argument_count(2, args.len())),
    }
}

/// Same-type equality; `null` compares with anything.
fn same_type_equal(operator: &str, args: &[CelValue]) -> Result<bool, ExecutionError> {
    let (a, b) = two(args)?;
    let comparable = std::mem::discriminant(a) == std::mem::discriminant(b)
        || matches!(a, CelValue::Null)
        || matches!(b, CelValue::Null);
    if comparable {
        Ok(a == b)
    } else {
        Err(no_overload(operator, a, b))
    }
}

fn equals(Arguments(args): Arguments) -> Result<CelValue, ExecutionError> {
    same_type_equal("_==_", &args).map(CelValue::Bool)
}

fn not_equals(Arguments(args): Arguments) -> Result<CelValue, ExecutionError> {
    same_type_equal("_!=_", &args).map(|equal| CelValue::Bool(!equal))
}

fn add(Arguments(args): Arguments) -> Result<CelValue, ExecutionError> {
    let (a, b) = two(&args)?;
    Ok(match (a, b) {
        (CelValue::Int(x), CelValue::Int(y)) => CelValue::Int(x.wrapping_add(*y)),
        (CelValue::UInt(x), CelValue::UInt(y)) => CelValue::UInt(x.wrapping_add(*y)),
        (CelValue::Float(x), CelValue::Float(y)) => CelValue::Float(x + y),
        (CelValue::String(x), CelValue::String(y)) => CelValue::String(Arc::new(format!("{x}{y}"))),
        (CelValue::Bytes(x), CelValue::Bytes(y)) => {
            CelValue::Bytes(Arc::new([x.as_slice(), y.as_slice()].concat()))
        }
        (CelValue::List(x), CelValue::List(y)) => {
            CelValue::List(Arc::new(x.iter().chain(y.iter()).cloned().collect()))
        }
        _ => return Err(no_overload("_+_", a, b)),
    })
}

fn subtract(Arguments(args): Arguments) -> Result<CelValue, ExecutionError> {
    let (a, b) = two(&args)?;
    Ok(match (a, b) {
        (CelValue::Int(x), CelValue::Int(y)) => CelValue::Int(x.wrapping_sub(*y)),
        (CelValue::UInt(x), CelValue::UInt(y)) => CelValue::UInt(x.wrapping_sub(*y)),
        (CelValue::Float(x), CelValue::Float(y)) => CelValue::Float(x - y),
        _ => return Err(no_overload("_-_", a, b)),
    })
}

fn multiply(Arguments(args): Arguments) -> Result<CelValue, ExecutionError> {
    let (a, b) = two(&args)?;
    Ok(match (a, b) {
        (CelValue::Int(x), CelValue::Int(y)) => CelValue::Int(x.wrapping_mul(*y)),
        (CelValue::UInt(x), CelValue::UInt(y)) => CelValue::UInt(x.wrapping_mul(*y)),
        (CelValue::Float(x), CelValue::Float(y)) => CelValue::Float(x * y),
        _ => return Err(no_overload("_*_", a, b)),
    })
}

/// A point in time, printed the way the reference printed protobuf
/// timestamps: `seconds:N ` (and `nanos:N ` when there are any).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Timestamp {
    seconds: i64,
    nanos: u32,
}

impl Opaque for Timestamp {
    fn runtime_type_name(&self) -> &str {
        "google.protobuf.Timestamp"
    }
}

fn timestamp(Arguments(args): Arguments) -> Result<CelValue, ExecutionError> {
    match args.as_slice() {
        [CelValue::String(text)] => parse_rfc3339(text)
            .map(|t| CelValue::Opaque(Arc::new(t)))
            .ok_or_else(|| {
                ExecutionError::function_error(
                    "timestamp",
                    format!("cannot parse `{text}` as an RFC 3339 time"),
                )
            }),
        [other] => Err(ExecutionError::no_such_overload(
            "timestamp",
            vec![type_name(other)],
        )),
        _ => Err(ExecutionError::invalid_argument_count(1, args.len())),
    }
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
fn parse_rfc3339(text: &str) -> Option<Timestamp> {
    hub_state::rfc3339_to_unix(text).map(|(seconds, nanos)| Timestamp { seconds, nanos })
}

struct Resolver<F>(F);

impl<F> VariableResolver for Resolver<F>
where
    F: Fn(&str) -> Option<Value> + Send + Sync,
{
    fn resolve<'b>(&'b self, variable: &str) -> Option<CowVal<'b, 'b>> {
        let value = (self.0)(variable)?;
        let boxed: Box<dyn cel::common::value::Val> = to_cel(&value).try_into().ok()?;
        Some(CowVal::Owned(boxed))
    }
}

/// Walks the syntax tree without recursion; identifier chains are recorded
/// with every prefix, longest first.
fn collect_names(root: &IdedExpr, out: &mut Vec<Vec<String>>) {
    let mut pending: Vec<&IdedExpr> = vec![root];
    while let Some(node) = pending.pop() {
        if let Some(segments) = name_segments(&node.expr) {
            out.push(
                (1..=segments.len())
                    .rev()
                    .map(|n| segments[..n].join("."))
                    .collect(),
            );
            continue;
        }
        match &node.expr {
            Expr::Call(call) => {
                pending.extend(call.target.as_deref());
                pending.extend(call.args.iter());
            }
            Expr::Comprehension(c) => {
                pending.extend([
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ]);
            }
            Expr::List(list) => pending.extend(list.elements.iter()),
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(e) = &entry.expr {
                        pending.extend([&e.key, &e.value]);
                    }
                }
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    match &entry.expr {
                        EntryExpr::StructField(field) => pending.push(&field.value),
                        EntryExpr::MapEntry(e) => pending.extend([&e.key, &e.value]),
                    }
                }
            }
            Expr::Select(select) => pending.push(&select.operand),
            Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
        }
    }
}

/// `a.b.c` as `["a", "b", "c"]` when the expression is an identifier with
/// field selections (not a presence test).
fn name_segments(expr: &Expr) -> Option<Vec<&str>> {
    let mut segments = Vec::new();
    let mut cursor = expr;
    loop {
        match cursor {
            Expr::Ident(name) => {
                segments.push(name.as_str());
                segments.reverse();
                return Some(segments);
            }
            Expr::Select(select) if !select.test => {
                segments.push(select.field.as_str());
                cursor = &select.operand.expr;
            }
            _ => return None,
        }
    }
}

/// The shape of an expression: its text with every name it reads replaced
/// by a numbered placeholder, so that expressions differing only in names
/// parse once.
mod shape {
    use cel::common::ast::{Expr, IdedExpr, LiteralValue, SelectExpr};
    use std::fmt::Write;

    const PLACEHOLDER: &str = "_hub_";

    /// What a placeholder stands for.
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub enum Slot {
        /// A dotted name.
        Name(String),
        /// A string literal without escapes.
        Text(String),
        Int(i64),
    }

    pub struct Shape {
        pub text: String,
        pub slots: Vec<Slot>,
    }

    impl Shape {
        fn placeholder(&mut self, slot: Slot) {
            let number = self
                .slots
                .iter()
                .position(|s| *s == slot)
                .unwrap_or_else(|| {
                    self.slots.push(slot);
                    self.slots.len() - 1
                });
            // Into the text directly: `format!` would allocate for every
            // name of every expression.
            let _ = write!(self.text, "{PLACEHOLDER}{number}");
        }
    }

    const KEYWORDS: [&str; 21] = [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];

    fn ident_start(b: u8) -> bool {
        b.is_ascii_alphabetic() || b == b'_'
    }

    fn ident_char(b: u8) -> bool {
        b.is_ascii_alphanumeric() || b == b'_'
    }

    fn is_string_start(bytes: &[u8], i: usize) -> bool {
        let b = bytes[i];
        b == b'"'
            || b == b'\''
            || (matches!(b, b'r' | b'R' | b'b' | b'B')
                && matches!(bytes.get(i + 1), Some(b'"' | b'\'')))
    }

    /// `None` when the text holds something the scanner does not handle
    /// with certainty (the expression is then parsed as it is).
    pub fn of(source: &str) -> Option<Shape> {
        if source.contains(PLACEHOLDER) || !source.is_ascii() {
            return None;
        }
        let bytes = source.as_bytes();
        let mut shape = Shape {
            text: String::with_capacity(source.len()),
            slots: Vec::new(),
        };
        let mut i = 0;
        let mut after_dot = false;
        while i < bytes.len() {
            let b = bytes[i];
            if is_string_start(bytes, i) {
                let end = string_end(bytes, i)?;
                match simple_string(&source[i..end]) {
                    Some(text) => shape.placeholder(Slot::Text(text.to_string())),
                    None => shape.text.push_str(&source[i..end]),
                }
                i = end;
                after_dot = false;
            } else if b.is_ascii_digit() {
                let start = i;
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric()
                        || bytes[i] == b'.' && bytes.get(i + 1).is_some_and(u8::is_ascii_digit)
                        || (matches!(bytes[i], b'+' | b'-') && matches!(bytes[i - 1], b'e' | b'E')))
                {
                    i += 1;
                }
                let number = &source[start..i];
                match number.parse::<i64>() {
                    // Plain decimal integers only; CEL rejects leading zeros.
                    Ok(value)
                        if number.bytes().all(|d| d.is_ascii_digit())
                            && (number == "0" || !number.starts_with('0')) =>
                    {
                        shape.placeholder(Slot::Int(value))
                    }
                    _ => shape.text.push_str(number),
                }
                after_dot = false;
            } else if ident_start(b) && after_dot {
                let start = i;
                while i < bytes.len() && ident_char(bytes[i]) {
                    i += 1;
                }
                shape.text.push_str(&source[start..i]);
                after_dot = false;
            } else if ident_start(b) {
                let mut segments = Vec::new();
                let mut end = i;
                loop {
                    let start = end;
                    while end < bytes.len() && ident_char(bytes[end]) {
                        end += 1;
                    }
                    segments.push(&source[start..end]);
                    if bytes.get(end) == Some(&b'.')
                        && bytes.get(end + 1).copied().is_some_and(ident_start)
                    {
                        end += 1;
                    } else {
                        break;
                    }
                }
                let mut rest = end;
                while rest < bytes.len() && bytes[rest] == b' ' {
                    rest += 1;
                }
                let call = bytes.get(rest) == Some(&b'(');
                let method = if call { segments.pop() } else { None };
                if segments.is_empty() || KEYWORDS.contains(&segments[0]) {
                    shape.text.push_str(&source[i..end]);
                } else {
                    shape.placeholder(Slot::Name(segments.join(".")));
                    if let Some(method) = method {
                        shape.text.push('.');
                        shape.text.push_str(method);
                    }
                }
                i = end;
                after_dot = false;
            } else {
                shape.text.push(b as char);
                if !b.is_ascii_whitespace() {
                    after_dot = b == b'.';
                }
                i += 1;
            }
        }
        Some(shape)
    }

    /// The value of a quoted string whose text is its value: single
    /// quotes, no escapes (any raw string qualifies).
    fn simple_string(literal: &str) -> Option<&str> {
        let (raw, rest) = match literal.as_bytes().first()? {
            b'r' | b'R' => (true, &literal[1..]),
            b'"' | b'\'' => (false, literal),
            _ => return None,
        };
        if rest.len() < 2 || rest.starts_with("\"\"\"") || rest.starts_with("'''") {
            return None;
        }
        let inner = &rest[1..rest.len() - 1];
        (raw || !inner.contains('\\')).then_some(inner)
    }

    /// The index after a string literal starting at `start` (with an
    /// optional `r`/`b` prefix, single or triple quotes).
    fn string_end(bytes: &[u8], start: usize) -> Option<usize> {
        let mut i = start;
        let mut raw = false;
        while matches!(bytes[i], b'r' | b'R' | b'b' | b'B') {
            raw |= matches!(bytes[i], b'r' | b'R');
            i += 1;
        }
        let quote = bytes[i];
        let triple = bytes.get(i..i + 3) == Some(&[quote, quote, quote][..]);
        i += if triple { 3 } else { 1 };
        while i < bytes.len() {
            if bytes[i] == b'\\' && !raw {
                i += 2;
                continue;
            }
            if triple {
                if bytes.get(i..i + 3) == Some(&[quote, quote, quote][..]) {
                    return Some(i + 3);
                }
            } else if bytes[i] == quote {
                return Some(i + 1);
            } else if bytes[i] == b'\n' {
                return None;
            }
            i += 1;
        }
        None
    }

    /// Shapes can be shared when every placeholder is a plain identifier:
    /// macros (comprehensions) bind variable names of their own.
    pub fn is_plain(tree: &IdedExpr) -> bool {
        let mut pending = vec![tree];
        while let Some(node) = pending.pop() {
            match &node.expr {
                Expr::Comprehension(_) | Expr::Struct(_) => return false,
                // A placeholder the parser took for a field or function
                // name (`a.?0` read as `a.?_hub_1`) stood for a literal,
                // which the real text cannot have there.
                Expr::Call(call) if call.func_name.contains(PLACEHOLDER) => return false,
                Expr::Select(select) if select.field.contains(PLACEHOLDER) => return false,
                Expr::Literal(LiteralValue::String(text)) if text.contains(PLACEHOLDER) => {
                    return false
                }
                Expr::Call(call) => {
                    pending.extend(call.target.as_deref());
                    pending.extend(call.args.iter());
                }
                Expr::List(list) => pending.extend(list.elements.iter()),
                Expr::Map(map) => {
                    for entry in &map.entries {
                        match &entry.expr {
                            cel::common::ast::EntryExpr::MapEntry(e) => {
                                pending.extend([&e.key, &e.value])
                            }
                            cel::common::ast::EntryExpr::StructField(_) => return false,
                        }
                    }
                }
                Expr::Select(select) => pending.push(&select.operand),
                Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => {}
            }
        }
        true
    }

    /// Puts names and literals back where their placeholders are.
    pub fn fill(tree: &mut IdedExpr, slots: &[Slot]) {
        let mut pending: Vec<&mut IdedExpr> = vec![tree];
        while let Some(node) = pending.pop() {
            if let Expr::Ident(ident) = &node.expr {
                let number = ident
                    .strip_prefix(PLACEHOLDER)
                    .and_then(|n| n.parse::<usize>().ok());
                match number.and_then(|n| slots.get(n)) {
                    Some(Slot::Name(name)) => node.expr = dotted(name, node.id),
                    Some(Slot::Text(text)) => {
                        node.expr = Expr::Literal(LiteralValue::String(text.clone().into()))
                    }
                    Some(Slot::Int(value)) => {
                        node.expr = Expr::Literal(LiteralValue::Int((*value).into()))
                    }
                    None => {}
                }
                continue;
            }
            match &mut node.expr {
                Expr::Call(call) => {
                    if let Some(target) = call.target.as_deref_mut() {
                        pending.push(target);
                    }
                    pending.extend(call.args.iter_mut());
                }
                Expr::List(list) => pending.extend(list.elements.iter_mut()),
                Expr::Map(map) => {
                    for entry in &mut map.entries {
                        if let cel::common::ast::EntryExpr::MapEntry(e) = &mut entry.expr {
                            pending.extend([&mut e.key, &mut e.value]);
                        }
                    }
                }
                Expr::Select(select) => pending.push(&mut select.operand),
                Expr::Ident(_)
                | Expr::Comprehension(_)
                | Expr::Struct(_)
                | Expr::Literal(_)
                | Expr::Unspecified => {}
            }
        }
    }

    /// `a.b.c` as the parser writes it: selections on an identifier.
    fn dotted(name: &str, id: u64) -> Expr {
        let mut segments = name.split('.');
        let mut expr = Expr::Ident(segments.next().unwrap_or_default().to_string());
        for field in segments {
            expr = Expr::Select(SelectExpr {
                operand: Box::new(IdedExpr { id, expr }),
                field: field.to_string(),
                test: false,
            });
        }
        expr
    }
}

/// YAML values become CEL values of the same shape.
fn to_cel(value: &Value) -> CelValue {
    match value {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                CelValue::Int(i)
            } else if let Some(u) = n.as_u64() {
                CelValue::UInt(u)
            } else {
                CelValue::Float(n.as_f64().unwrap_or(f64::NAN))
            }
        }
        Value::String(s) => CelValue::String(Arc::new(s.clone())),
        Value::Sequence(items) => CelValue::List(Arc::new(items.iter().map(to_cel).collect())),
        Value::Mapping(map) => {
            let entries: std::collections::HashMap<Key, CelValue> =
                map.iter().map(|(k, v)| (to_key(k), to_cel(v))).collect();
            CelValue::Map(entries.into())
        }
        Value::Tagged(tagged) => to_cel(&tagged.value),
    }
}

fn to_key(value: &Value) -> Key {
    match value {
        Value::Bool(b) => Key::Bool(*b),
        Value::Number(n) if n.as_i64().is_some() => Key::Int(n.as_i64().unwrap_or_default()),
        Value::Number(n) if n.as_u64().is_some() => Key::Uint(n.as_u64().unwrap_or_default()),
        Value::String(s) => Key::String(Arc::new(s.clone())),
        other => Key::String(Arc::new(json_text(other))),
    }
}

/// Strings as they are, numbers in Go `%v` form, booleans `true`/`false`,
/// `null` as `0`, bytes as a Go byte slice, lists and maps as JSON.
fn render(value: &CelValue) -> String {
    match value {
        CelValue::String(s) => s.to_string(),
        CelValue::Int(i) => i.to_string(),
        CelValue::UInt(u) => u.to_string(),
        CelValue::Float(f) => go_float(*f),
        CelValue::Bool(b) => b.to_string(),
        CelValue::Null => "0".to_string(),
        CelValue::Bytes(bytes) => {
            let items: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
            format!("[{}]", items.join(" "))
        }
        CelValue::List(_) | CelValue::Map(_) => json_text(&to_yaml(value)),
        CelValue::Opaque(opaque) => match opaque.downcast_ref::<Timestamp>() {
            Some(Timestamp { seconds, nanos: 0 }) => format!("seconds:{seconds} "),
            Some(Timestamp { seconds, nanos }) => format!("seconds:{seconds} nanos:{nanos} "),
            None => format!("{value:?}"),
        },
        other => format!("{other:?}"),
    }
}

fn to_yaml(value: &CelValue) -> Value {
    match value {
        CelValue::String(s) => Value::String(s.to_string()),
        CelValue::Int(i) => Value::Number((*i).into()),
        CelValue::UInt(u) => Value::Number((*u).into()),
        CelValue::Float(f) => Value::Number((*f).into()),
        CelValue::Bool(b) => Value::Bool(*b),
        CelValue::Null => Value::Null,
        CelValue::List(items) => Value::Sequence(items.iter().map(to_yaml).collect()),
        CelValue::Map(map) => {
            let mut entries: Vec<(String, Value)> = map
                .map
                .iter()
                .map(|(k, v)| (key_text(k), to_yaml(v)))
                .collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            Value::Mapping(
                entries
                    .into_iter()
                    .map(|(k, v)| (Value::String(k), v))
                    .collect(),
            )
        }
        other => Value::String(render(other)),
    }
}

fn key_text(key: &Key) -> String {
    match key {
        Key::Int(i) => i.to_string(),
        Key::Uint(u) => u.to_string(),
        Key::Bool(b) => b.to_string(),
        Key::String(s) => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(source: &str, bindings: &[(&str, &str)]) -> Result<String, CelFailure> {
        let cel = Cel::default();
        let compiled = cel.compile(source)?;
        cel.evaluate(&compiled, |name| {
            bindings
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| Value::String(v.to_string()))
        })
    }

    #[test]
    fn dotted_names_resolve_longest_first() {
        assert_eq!(
            eval("a.b + '/' + a.b.c", &[("a.b", "x"), ("a.b.c", "y")]).unwrap(),
            "x/y"
        );
        assert_eq!(eval("a.b", &[("a.b", "x"), ("a", "y")]).unwrap(), "x");
    }

    #[test]
    fn names_lists_every_prefix() {
        let compiled = Cel::default().compile("size(a.b.c) > 0 ? x : 'y'").unwrap();
        let mut names = compiled.names().to_vec();
        names.sort();
        assert_eq!(
            names,
            vec![
                vec!["a.b.c".to_string(), "a.b".into(), "a".into()],
                vec!["x".to_string()]
            ]
        );
    }

    #[test]
    fn typed_values_bind_as_typed() {
        let cel = Cel::default();
        let compiled = cel.compile("n + 1").unwrap();
        let out = cel
            .evaluate(&compiled, |_| Some(Value::Number(41.into())))
            .unwrap();
        assert_eq!(out, "42");
    }

    #[test]
    fn shapes_share_one_parse_and_keep_meaning() {
        let cel = Cel::default();
        for (source, bindings, expected) in [
            ("size(a.b) > 0 ? a.b : 'none'", vec![("a.b", "x")], "x"),
            ("size(c) > 0 ? c : 'none'", vec![("c", "")], "none"),
            ("a.b.size() + int(n)", vec![("a.b", "abc"), ("n", "2")], "5"),
            (
                "x == \"a.b\" && y in ['q', 'r']",
                vec![("x", "a.b"), ("y", "r")],
                "true",
            ),
            ("1e3 + 2.5 == 1002.5 && 3u > 2u", vec![], "true"),
            ("[1, 2].map(v, v * 2)[1]", vec![], "4"),
        ] {
            let compiled = cel.compile(source).unwrap();
            let direct = Compiled {
                names: Vec::new(),
                expression: cel.parse(source).unwrap(),
            };
            let lookup = |name: &str| {
                bindings
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| Value::String(v.to_string()))
            };
            assert_eq!(
                cel.evaluate(&compiled, lookup).unwrap(),
                expected,
                "{source}"
            );
            assert_eq!(cel.evaluate(&direct, lookup).unwrap(), expected, "{source}");
        }
        assert_eq!(cel.shapes.borrow().len(), 5, "the first two share a shape");
        cel.compile("size(other.name) > 0 ? other.name : 'none'")
            .unwrap();
        assert_eq!(cel.shapes.borrow().len(), 5, "same shape as the first");
    }

    #[test]
    fn shape_text() {
        use shape::Slot;
        let shape =
            shape::of("size(a.b) > 10 && a.b.startsWith('a.b') || has(x.y) || 'q\\n'.size() > 1.5")
                .unwrap();
        assert_eq!(shape.text, "size(_hub_0) > _hub_1 && _hub_0.startsWith(_hub_2) || has(_hub_3) || 'q\\n'.size() > 1.5");
        assert_eq!(
            shape.slots,
            vec![
                Slot::Name("a.b".into()),
                Slot::Int(10),
                Slot::Text("a.b".into()),
                Slot::Name("x.y".into())
            ]
        );
    }

    #[test]
    fn a_literal_where_a_field_name_goes_is_a_parse_error_either_way() {
        for source in ["a . ? 0", "a.?'s'", "a . 7", "x.?1 == 2"] {
            let cel = Cel::default();
            assert!(
                matches!(cel.compile(source), Err(CelFailure::Parse(_))),
                "{source}"
            );
            assert!(cel.parse(source).is_err(), "{source}");
        }
    }

    #[test]
    fn timestamps_print_like_protobuf_text() {
        assert_eq!(
            eval("timestamp('2020-01-01T00:00:00Z')", &[]).unwrap(),
            "seconds:1577836800 "
        );
        assert_eq!(
            eval("timestamp('2020-01-01T02:00:00.5+02:00')", &[]).unwrap(),
            "seconds:1577836800 nanos:500000000 "
        );
        assert_eq!(
            eval("timestamp('1969-12-31T23:59:59Z')", &[]).unwrap(),
            "seconds:-1 "
        );
        assert!(eval("timestamp('2020-13-01T00:00:00Z')", &[]).is_err());
        assert!(eval("timestamp(1)", &[]).is_err());
    }

    #[test]
    fn reference_operator_semantics() {
        assert_eq!(
            eval("9223372036854775807 + 1", &[]).unwrap(),
            "-9223372036854775808"
        );
        assert!(
            eval("a == 1", &[("a", "1")]).is_err(),
            "no equality across types"
        );
        assert_eq!(
            eval("a != 'x' && [1] + [2] == [1, 2]", &[("a", "y")]).unwrap(),
            "true"
        );
        assert!(eval("2.5 * 2", &[]).is_err(), "no mixed arithmetic");
        assert_eq!(
            eval("007 == 7", &[]).is_err(),
            Cel::default().parse("007 == 7").is_err(),
            "shapes keep the parser's verdict"
        );
    }

    proptest::proptest! {
        /// Sharing parses between expressions of the same shape never
        /// changes a result: random token soups give the same outcome
        /// (value or error) either way.
        #[test]
        fn shapes_never_change_results(tokens in proptest::collection::vec(proptest::sample::select(vec![
            "a", "a.b", "x", "0", "7", "007", "'s'", "\"t\"", "r'\\d'", "1.5", "2u", "true", "null", "in",
            "==", "!=", "+", "-", "*", "&&", "||", "?", ":", "(", ")", "[", "]", "{", "}", ",", ".", "!",
            "size(", "int(", "string(", ".size()", "has(", "matches(",
        ]), 1..9)) {
            let source = tokens.join(" ");
            let cel = Cel::default();
            let bindings = [("a", "1"), ("a.b", "x"), ("x", "y")];
            let lookup = |name: &str| bindings.iter().find(|(k, _)| *k == name).map(|(_, v)| Value::String(v.to_string()));
            let shared = cel.compile(&source).and_then(|c| cel.evaluate(&c, lookup));
            let direct = cel
                .parse(&source)
                .map(|expression| Compiled { expression, names: Vec::new() })
                .and_then(|c| cel.evaluate(&c, lookup));
            proptest::prop_assert_eq!(shared.is_ok(), direct.is_ok(), "{}: {:?} vs {:?}", source, shared, direct);
            if let (Ok(a), Ok(b)) = (&shared, &direct) {
                proptest::prop_assert_eq!(a, b, "{}", source);
            }
        }
    }

    proptest::proptest! {
        #[test]
        fn any_text_compiles_or_fails_cleanly(source in "[ -~]{0,24}") {
            let cel = Cel::default();
            if let Ok(compiled) = cel.compile(&source) {
                let _ = cel.evaluate(&compiled, |_| None);
            }
        }
    }

    #[test]
    fn errors_are_classified() {
        assert!(matches!(eval("1 +", &[]), Err(CelFailure::Parse(_))));
        assert!(matches!(eval("missing", &[]), Err(CelFailure::Eval(_))));
    }
}
