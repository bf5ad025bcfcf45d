//! Executing a parsed template against a value, as `text/template` does:
//! dot and `$`, variables scoped to their block, `and`/`or` evaluated
//! lazily, the last value of a pipeline passed as the last argument of the
//! next command, a missing map key an error.

use super::parse::{Branch, Command, Node, Operand, Parsed, Pipe, Term};
use super::value::Value;
use super::GoError;
use std::collections::HashMap;

/// How deep `template` calls may nest (Go stops at 100000; a smaller bound
/// keeps a self-including template from exhausting the stack).
const MAX_DEPTH: usize = 200;

enum Flow {
    Normal,
    Break,
    Continue,
}

pub struct Exec<'a> {
    defines: HashMap<&'a str, &'a [Node]>,
    variables: Vec<(String, Value)>,
    out: String,
    depth: usize,
}

pub fn execute(parsed: &Parsed, data: &Value) -> Result<String, GoError> {
    let mut defines: HashMap<&str, &[Node]> = HashMap::new();
    for (name, body) in &parsed.defines {
        defines.insert(name.as_str(), body.as_slice());
    }
    let mut exec = Exec {
        defines,
        variables: vec![("$".to_string(), data.clone())],
        out: String::new(),
        depth: 0,
    };
    match exec.list(&parsed.body, data)? {
        Flow::Normal => Ok(exec.out),
        _ => Err(GoError::new(
            0,
            "{{break}} or {{continue}} outside {{range}}",
        )),
    }
}

impl<'a> Exec<'a> {
    fn list(&mut self, nodes: &'a [Node], dot: &Value) -> Result<Flow, GoError> {
        for node in nodes {
            match self.node(node, dot)? {
                Flow::Normal => {}
                flow => return Ok(flow),
            }
        }
        Ok(Flow::Normal)
    }

    fn node(&mut self, node: &'a Node, dot: &Value) -> Result<Flow, GoError> {
        match node {
            Node::Text(text) => self.out.push_str(text),
            Node::Action(pipe) => {
                let value = self.pipe(pipe, dot)?;
                if pipe.variables.is_empty() {
                    print(&mut self.out, &value);
                }
            }
            Node::If(branch) => return self.scoped(|me| me.if_node(branch, dot)),
            Node::With(branch) => return self.scoped(|me| me.with_node(branch, dot)),
            Node::Range(branch) => return self.scoped(|me| me.range_node(branch, dot)),
            Node::Template { line, name, pipe } => {
                let data = match pipe {
                    Some(pipe) => self.pipe(pipe, dot)?,
                    None => Value::Nil,
                };
                self.call_template(*line, name, &data)?;
            }
            Node::Break(_) => return Ok(Flow::Break),
            Node::Continue(_) => return Ok(Flow::Continue),
        }
        Ok(Flow::Normal)
    }

    /// Runs `f` and forgets the variables it declared.
    fn scoped(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<Flow, GoError>,
    ) -> Result<Flow, GoError> {
        let mark = self.variables.len();
        let result = f(self);
        self.variables.truncate(mark);
        result
    }

    fn if_node(&mut self, branch: &'a Branch, dot: &Value) -> Result<Flow, GoError> {
        if self.pipe(&branch.pipe, dot)?.truthy() {
            self.scoped(|me| me.list(&branch.body, dot))
        } else if let Some(otherwise) = &branch.otherwise {
            self.scoped(|me| me.list(otherwise, dot))
        } else {
            Ok(Flow::Normal)
        }
    }

    fn with_node(&mut self, branch: &'a Branch, dot: &Value) -> Result<Flow, GoError> {
        let value = self.pipe(&branch.pipe, dot)?;
        if value.truthy() {
            self.scoped(|me| me.list(&branch.body, &value))
        } else if let Some(otherwise) = &branch.otherwise {
            self.scoped(|me| me.list(otherwise, dot))
        } else {
            Ok(Flow::Normal)
        }
    }

    fn range_node(&mut self, branch: &'a Branch, dot: &Value) -> Result<Flow, GoError> {
        let pipe = &branch.pipe;
        let declared = pipe.variables.clone();
        let value = self.pipe(
            &Pipe {
                variables: Vec::new(),
                ..pipe.clone()
            },
            dot,
        )?;
        let items: Vec<(Value, Value)> = match value {
            Value::List(items) => items
                .into_iter()
                .enumerate()
                .map(|(i, v)| (Value::Int(i as i64), v))
                .collect(),
            Value::Map(map) => map.into_iter().map(|(k, v)| (Value::Str(k), v)).collect(),
            Value::Int(n) => (0..n.max(0))
                .map(|i| (Value::Int(i), Value::Int(i)))
                .collect(),
            Value::Nil => Vec::new(),
            other => {
                return Err(GoError::new(
                    pipe.line,
                    format!("range can't iterate over {}", other.to_go_string()),
                ))
            }
        };
        if items.is_empty() {
            if let Some(otherwise) = &branch.otherwise {
                return self.scoped(|me| me.list(otherwise, dot));
            }
            return Ok(Flow::Normal);
        }
        for (key, item) in items {
            let mark = self.variables.len();
            match declared.as_slice() {
                [one] => self.variables.push((one.clone(), item.clone())),
                [k, v] => {
                    self.variables.push((k.clone(), key));
                    self.variables.push((v.clone(), item.clone()));
                }
                _ => {}
            }
            let flow = self.list(&branch.body, &item);
            self.variables.truncate(mark);
            match flow? {
                Flow::Break => break,
                Flow::Normal | Flow::Continue => {}
            }
        }
        Ok(Flow::Normal)
    }

    fn call_template(&mut self, line: usize, name: &str, data: &Value) -> Result<(), GoError> {
        let Some(body) = self.defines.get(name).copied() else {
            return Err(GoError::new(line, format!("no such template {name:?}")));
        };
        if self.depth >= MAX_DEPTH {
            return Err(GoError::new(
                line,
                format!("template {name:?} nests deeper than {MAX_DEPTH} calls"),
            ));
        }
        let saved = std::mem::replace(&mut self.variables, vec![("$".to_string(), data.clone())]);
        self.depth += 1;
        let result = self.list(body, data);
        self.depth -= 1;
        self.variables = saved;
        match result? {
            Flow::Normal => Ok(()),
            _ => Err(GoError::new(
                line,
                "{{break}} or {{continue}} outside {{range}}",
            )),
        }
    }

    fn pipe(&mut self, pipe: &Pipe, dot: &Value) -> Result<Value, GoError> {
        let mut value: Option<Value> = None;
        for command in &pipe.commands {
            value = Some(self.command(pipe.line, command, dot, value)?);
        }
        let value = value.unwrap_or(Value::Nil);
        if let Some(first) = pipe.variables.first() {
            if pipe.assign {
                self.assign(pipe.line, first, value.clone())?;
            } else {
                self.variables.push((first.clone(), value.clone()));
            }
        }
        Ok(value)
    }

    fn assign(&mut self, line: usize, name: &str, value: Value) -> Result<(), GoError> {
        match self.variables.iter_mut().rev().find(|(n, _)| n == name) {
            Some(slot) => {
                slot.1 = value;
                Ok(())
            }
            None => Err(GoError::new(line, format!("undefined variable: {name}"))),
        }
    }

    fn variable(&self, line: usize, name: &str) -> Result<Value, GoError> {
        self.variables
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
            .ok_or_else(|| GoError::new(line, format!("undefined variable: {name}")))
    }

    fn command(
        &mut self,
        line: usize,
        command: &Command,
        dot: &Value,
        piped: Option<Value>,
    ) -> Result<Value, GoError> {
        let first = &command.operands[0];
        if let (Term::Function(name), true) = (&first.term, first.fields.is_empty()) {
            return self.call(line, name, &command.operands[1..], dot, piped);
        }
        if matches!(first.term, Term::Nil) && first.fields.is_empty() {
            return Err(GoError::new(line, "nil is not a command"));
        }
        if command.operands.len() > 1 || piped.is_some() {
            return Err(GoError::new(
                line,
                format!("can't give argument to non-function {}", describe(first)),
            ));
        }
        self.operand(line, first, dot)
    }

    fn call(
        &mut self,
        line: usize,
        name: &str,
        operands: &[Operand],
        dot: &Value,
        piped: Option<Value>,
    ) -> Result<Value, GoError> {
        let fail = |message: String| GoError::new(line, format!("error calling {name}: {message}"));
        // `and` and `or` stop at the first operand that decides.
        if name == "and" || name == "or" {
            if operands.is_empty() && piped.is_none() {
                return Err(GoError::new(
                    line,
                    format!("wrong number of args for {name}: want at least 1 got 0"),
                ));
            }
            let mut last = Value::Nil;
            for operand in operands {
                last = self.operand(line, operand, dot)?;
                if last.truthy() == (name == "or") {
                    return Ok(last);
                }
            }
            if let Some(value) = piped {
                last = value;
            }
            return Ok(last);
        }
        let mut args = Vec::with_capacity(operands.len() + 1);
        for operand in operands {
            args.push(self.operand(line, operand, dot)?);
        }
        args.extend(piped);
        let result = super::table::call(name, &args).map_err(fail)?;
        // `set`/`unset` change the dictionary in place in Go; a variable
        // named as the dictionary sees the change.
        if matches!(name, "set" | "unset") {
            if let Some(Operand {
                term: Term::Variable(var),
                fields,
            }) = operands.first()
            {
                if fields.is_empty() {
                    self.assign(line, var, result.clone())?;
                }
            }
        }
        Ok(result)
    }

    fn operand(&mut self, line: usize, operand: &Operand, dot: &Value) -> Result<Value, GoError> {
        let base = match &operand.term {
            Term::Dot => dot.clone(),
            Term::Nil => Value::Nil,
            Term::Literal(value) => value.clone(),
            Term::Variable(name) => self.variable(line, name)?,
            Term::Function(name) => self.call(line, name, &[], dot, None)?,
            Term::Pipe(pipe) => self.pipe(pipe, dot)?,
        };
        fields(line, operand, base)
    }
}

/// Follows `.a.b.c` from `base`; a missing key is an error naming the
/// whole path.
fn fields(line: usize, operand: &Operand, mut value: Value) -> Result<Value, GoError> {
    for (i, field) in operand.fields.iter().enumerate() {
        let path = || {
            let mut p = match &operand.term {
                Term::Variable(name) => name.clone(),
                Term::Dot => String::new(),
                _ => "(…)".into(),
            };
            for f in &operand.fields[..=i] {
                p.push('.');
                p.push_str(f);
            }
            p
        };
        value = match value {
            Value::Map(mut map) => match map.remove(field) {
                Some(v) => v,
                None => {
                    return Err(GoError::new(
                        line,
                        format!("map has no entry for key {field:?} (in `{}`)", path()),
                    )
                    .key(path()))
                }
            },
            Value::Nil => {
                return Err(GoError::new(
                    line,
                    format!("nil pointer evaluating `{}`", path()),
                ))
            }
            other => {
                return Err(GoError::new(
                    line,
                    format!(
                        "can't evaluate field {field} in type {} (in `{}`)",
                        other.type_name(),
                        path()
                    ),
                ))
            }
        };
    }
    Ok(value)
}

fn describe(operand: &Operand) -> String {
    let mut text = match &operand.term {
        Term::Dot => {
            if operand.fields.is_empty() {
                ".".into()
            } else {
                String::new()
            }
        }
        Term::Nil => "nil".into(),
        Term::Literal(v) => v.to_go_string(),
        Term::Variable(name) => name.clone(),
        Term::Function(name) => name.clone(),
        Term::Pipe(_) => "(…)".into(),
    };
    for f in &operand.fields {
        text.push('.');
        text.push_str(f);
    }
    text
}

/// What an action prints: `fmt.Fprint` of the value; nil prints nothing.
fn print(out: &mut String, value: &Value) {
    if !matches!(value, Value::Nil) {
        out.push_str(&value.to_go_string());
    }
}
