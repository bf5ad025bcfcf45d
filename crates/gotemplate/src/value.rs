//! The values a Go template computes with, and how Go prints them.
//!
//! The reference hands its templates `interface{}` values decoded from
//! YAML: strings, `int`, `float64`, `bool`, `[]interface {}` and
//! `map[string]interface {}`. [`Value`] has exactly those shapes, and the
//! printing functions follow `fmt.Sprint` / `encoding/json` so that
//! rendered files are byte-identical.

use super::time::Time;
use std::collections::BTreeMap;

/// A Go template value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Value>),
    /// Go prints and ranges over map keys in sorted order.
    Map(BTreeMap<String, Value>),
    /// A `time.Time` from Sprig's date functions.
    Time(Box<super::time::Time>),
}

impl Value {
    /// Go's truth: false, 0, "", nil and empty collections are false.
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.is_empty(),
            Value::Time(_) => true,
        }
    }

    /// The Go type name `%T` and sprig's `typeOf` print.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Nil => "<nil>",
            Value::Bool(_) => "bool",
            Value::Int(_) => "int",
            Value::Float(_) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "[]interface {}",
            Value::Map(_) => "map[string]interface {}",
            Value::Time(_) => "time.Time",
        }
    }

    /// The Go kind name sprig's `kindOf` prints.
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Time(_) => "struct",
            other => other.type_name(),
        }
    }

    /// `fmt.Sprint` of one value.
    pub fn to_go_string(&self) -> String {
        let mut out = String::new();
        write_go(&mut out, self);
        out
    }

    pub fn str(s: impl Into<String>) -> Value {
        Value::Str(s.into())
    }

    /// The value from a YAML document; `trim` trims a top-level string as
    /// the reference does with parameter values.
    pub fn from_yaml(value: &yaml_serde::Value, trim: bool) -> Value {
        use yaml_serde::Value as Y;
        match value {
            Y::Null => Value::Nil,
            Y::Bool(b) => Value::Bool(*b),
            Y::Number(n) => match n.as_i64() {
                Some(i) => Value::Int(i),
                None => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Y::String(s) if trim => Value::Str(s.trim().to_string()),
            Y::String(s) => Value::Str(s.clone()),
            Y::Sequence(items) => {
                Value::List(items.iter().map(|v| Value::from_yaml(v, false)).collect())
            }
            Y::Mapping(map) => Value::Map(
                map.iter()
                    .map(|(k, v)| {
                        let key = match k {
                            Y::String(s) => s.clone(),
                            other => Value::from_yaml(other, false).to_go_string(),
                        };
                        (key, Value::from_yaml(v, false))
                    })
                    .collect(),
            ),
            Y::Tagged(tagged) => Value::from_yaml(&tagged.value, trim),
        }
    }
}

fn write_go(out: &mut String, value: &Value) {
    match value {
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&go_float(*f)),
        Value::Str(s) => out.push_str(s),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_go(out, item);
            }
            out.push(']');
        }
        Value::Time(time) => out.push_str(&time.go_string()),
        Value::Map(map) => {
            out.push_str("map[");
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(key);
                out.push(':');
                write_go(out, item);
            }
            out.push(']');
        }
    }
}

/// `%v` of a `float64`: the shortest representation, with an exponent
/// below 1e-4 and from 1e21 on.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let abs = f.abs();
    if abs != 0.0 && !(1e-4..1e21).contains(&abs) {
        return go_exponent(&format!("{f:e}"));
    }
    format!("{f}")
}

/// Rust's `1.5e-7` as Go's `1.5e-07`.
pub fn go_exponent(rust: &str) -> String {
    let Some((mantissa, exponent)) = rust.split_once('e') else {
        return rust.to_string();
    };
    let (sign, digits) = match exponent.strip_prefix('-') {
        Some(d) => ('-', d),
        None => ('+', exponent),
    };
    format!("{mantissa}e{sign}{digits:0>2}")
}

/// `encoding/json` of a value: HTML characters escaped, keys sorted,
/// whole floats without a fraction; `indent` gives `MarshalIndent`.
pub fn to_json(value: &Value, indent: Option<&str>) -> String {
    let mut out = String::new();
    write_json(&mut out, value, indent, 0);
    out
}

fn newline(out: &mut String, indent: Option<&str>, depth: usize) {
    if let Some(unit) = indent {
        out.push('\n');
        for _ in 0..depth {
            out.push_str(unit);
        }
    }
}

fn write_json(out: &mut String, value: &Value, indent: Option<&str>, depth: usize) {
    match value {
        Value::Nil => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => out.push_str(&json_float(*f)),
        Value::Str(s) => json_string(out, s),
        Value::Time(time) => json_string(
            out,
            &super::time::format("2006-01-02T15:04:05.999999999Z07:00", time),
        ),
        Value::List(items) if items.is_empty() => out.push_str("[]"),
        Value::List(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                write_json(out, item, indent, depth + 1);
            }
            newline(out, indent, depth);
            out.push(']');
        }
        Value::Map(map) if map.is_empty() => out.push_str("{}"),
        Value::Map(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, indent, depth + 1);
                json_string(out, key);
                out.push(':');
                if indent.is_some() {
                    out.push(' ');
                }
                write_json(out, item, indent, depth + 1);
            }
            newline(out, indent, depth);
            out.push('}');
        }
    }
}

fn json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        return go_exponent(&format!("{f:e}"));
    }
    format!("{f}")
}

/// A JSON string as Go writes it: `<`, `>`, `&`, U+2028 and U+2029 as
/// `\u` escapes.
pub fn json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32))
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A time from what Sprig's date functions accept: a time, or Unix
/// seconds.
pub fn time_of(value: &Value) -> Result<Time, String> {
    match value {
        Value::Time(t) => Ok((**t).clone()),
        Value::Int(seconds) => Time {
            seconds: *seconds,
            nanos: 0,
            offset: 0,
            zone: "UTC".into(),
        }
        .in_zone("Local"),
        other => Err(format!("expected a time, not {}", other.type_name())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_printing() {
        let list = Value::List(vec![Value::str("a"), Value::Int(1), Value::Float(2.5)]);
        assert_eq!(list.to_go_string(), "[a 1 2.5]");
        let mut map = BTreeMap::new();
        map.insert("z".to_string(), Value::Bool(true));
        map.insert("a".to_string(), list.clone());
        assert_eq!(Value::Map(map).to_go_string(), "map[a:[a 1 2.5] z:true]");
        assert_eq!(go_float(1000.0), "1000");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(0.00001), "1e-05");
    }

    #[test]
    fn json_like_go() {
        let list = Value::List(vec![Value::str("<a&b>"), Value::Float(3.0)]);
        assert_eq!(to_json(&list, None), r#"["\u003ca\u0026b\u003e",3]"#);
        assert_eq!(
            to_json(&list, Some("  ")),
            "[\n  \"\\u003ca\\u0026b\\u003e\",\n  3\n]"
        );
    }
}
