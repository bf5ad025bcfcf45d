//! The shape of an expression: its text with every name it reads replaced
//! by a numbered placeholder, so that expressions differing only in names
//! parse once.
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
            i = shape.number(source, i);
            after_dot = false;
        } else if ident_start(b) && after_dot {
            let start = i;
            while i < bytes.len() && ident_char(bytes[i]) {
                i += 1;
            }
            shape.text.push_str(&source[start..i]);
            after_dot = false;
        } else if ident_start(b) {
            i = shape.name(source, i);
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

impl Shape {
    /// The number starting at `i`: a slot when it is a plain decimal
    /// integer, text otherwise; returns where it ends.
    fn number(&mut self, source: &str, mut i: usize) -> usize {
        let bytes = source.as_bytes();
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
                self.placeholder(Slot::Int(value))
            }
            _ => self.text.push_str(number),
        }
        i
    }

    /// The dotted name starting at `i`: a slot (with the method called on
    /// it, if any, kept as text), or text for a keyword; returns where it
    /// ends.
    fn name(&mut self, source: &str, i: usize) -> usize {
        let bytes = source.as_bytes();
        let mut segments = Vec::new();
        let mut end = i;
        loop {
            let start = end;
            while end < bytes.len() && ident_char(bytes[end]) {
                end += 1;
            }
            segments.push(&source[start..end]);
            if bytes.get(end) == Some(&b'.') && bytes.get(end + 1).copied().is_some_and(ident_start)
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
            self.text.push_str(&source[i..end]);
        } else {
            self.placeholder(Slot::Name(segments.join(".")));
            if let Some(method) = method {
                self.text.push('.');
                self.text.push_str(method);
            }
        }
        end
    }
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
