//! The only module that touches the `cel` crate (pinned at `=0.15.0`; its
//! API changes between minor releases, so nothing else depends on it), with
//! its child `predicate`: the yes-or-no rules of policies on plans.
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
    /// The evaluation ran over its [`Budget`]: what ran out.
    Budget(String),
}

impl std::error::Error for CelFailure {}

impl std::fmt::Display for CelFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CelFailure::Parse(message) => write!(f, "CEL parse error: {message}"),
            CelFailure::Eval(message) => write!(f, "CEL evaluation error: {message}"),
            CelFailure::Budget(message) => write!(f, "CEL evaluation stopped: {message}"),
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
        let mut env = Env::stdlib();
        budget::declare(&mut env);
        let env = Arc::new(env);
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
        let mut expression = parse_in(&self.env, source)?;
        budget::instrument(&mut expression);
        use_hub_operators(&mut expression);
        Ok(expression)
    }

    /// Evaluates `compiled`, reading free names through `lookup`, within
    /// the budget of this process ([`Budget::current`]), and renders the
    /// result as Hub prints it.
    pub fn evaluate<F>(&self, compiled: &Compiled, lookup: F) -> Result<String, CelFailure>
    where
        F: Fn(&str) -> Option<Value> + Send + Sync,
    {
        let budget = Budget::current().map_err(CelFailure::Budget)?;
        self.evaluate_within(compiled, lookup, budget)
    }

    /// [`Cel::evaluate`] within `budget` rather than the process's.
    pub fn evaluate_within<F>(
        &self,
        compiled: &Compiled,
        lookup: F,
        budget: Budget,
    ) -> Result<String, CelFailure>
    where
        F: Fn(&str) -> Option<Value> + Send + Sync,
    {
        let resolver = Resolver(lookup);
        let mut scope = self.root.new_inner_scope();
        scope.set_variable_resolver(&resolver);
        let value = budget::metered(budget, || scope.resolve(&compiled.expression))
            .map_err(CelFailure::Budget)?
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

/// Points the operators above at Hub's functions.
fn use_hub_operators(root: &mut IdedExpr) {
    walk::edit_each(root, |node| {
        let Expr::Call(call) = &mut node.expr else {
            return;
        };
        // `@result + [x]`, the step of `map` and `filter`, stays the
        // crate's: it appends in place (and the operands are lists).
        if call.target.is_some()
            || call.args.len() != 2
            || call.args.iter().any(budget::is_accumulator)
        {
            return;
        }
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
    });
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

/// `source` parsed in `env`, after the depth check that keeps a hostile
/// expression from overflowing the parser's stack; the first line of each
/// error, joined, when it does not parse.
fn parse_in(env: &Env, source: &str) -> Result<IdedExpr, CelFailure> {
    depth::check(source).map_err(CelFailure::Parse)?;
    let program = env.compile(source).map_err(|errors| {
        let first_lines: Vec<String> = errors
            .errors
            .iter()
            .map(|e| e.to_string().lines().next().unwrap_or_default().to_string())
            .collect();
        CelFailure::Parse(first_lines.join("; "))
    })?;
    Ok(program.expression().clone())
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

mod budget;
mod depth;
mod predicate;
mod shape;
mod walk;

pub use budget::{Budget, MEMORY_VARIABLE, TIME_VARIABLE};
pub use predicate::{Predicate, Predicates};

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
mod tests;
