//! Stack outputs (§7.8): the stack manifest's `outputs:`, computed from the
//! captured outputs and the stack parameters after every component.
//!
//! * `comp:name` → the captured output of that name; its `kind`/`brief`
//!   when the stack output sets none. Not captured yet → left out.
//! * any other name → its `value` (default `${name}`): each `${x}` is a
//!   captured output (`comp:name`, then plain name, latest producer first)
//!   or a stack parameter. A value that is one reference keeps the
//!   referenced value's type. Unknown references and `#{}` leave the
//!   output out (with a warning when `strict`).
//! * earlier entries that were not recomputed are kept while still declared.

use hub_manifest::diag::Warnings;
use hub_manifest::Output;
use hub_params::expr::{parse, Piece};
use hub_params::format::substitution_text;
use hub_params::Locked;
use hub_state::{CapturedOutput, StackOutput};
use yaml_serde::Value;

pub fn stack_outputs(
    declared: &[Output],
    captured: &[CapturedOutput],
    locked: &Locked,
    previous: &[StackOutput],
    strict: bool,
    warnings: &mut Warnings,
) -> Vec<StackOutput> {
    let mut out = Vec::new();
    for output in declared {
        let computed = if output.name.contains(':') {
            qualified(output, captured, strict, warnings)
        } else {
            expanded(output, captured, locked, strict, warnings)
        };
        match computed {
            Some(entry) => out.push(entry),
            None => {
                if let Some(old) = previous.iter().find(|p| p.name == output.name) {
                    out.push(old.clone());
                }
            }
        }
    }
    out
}

fn qualified(
    output: &Output,
    captured: &[CapturedOutput],
    strict: bool,
    warnings: &mut Warnings,
) -> Option<StackOutput> {
    if strict && output.value.is_some() {
        warnings.warn(
            None,
            format!(
                "stack output `{}` names a component output; its `value` is ignored",
                output.name
            ),
        );
    }
    let found = captured
        .iter()
        .rev()
        .find(|c| c.qualified_name() == output.name)?;
    Some(StackOutput {
        name: output.name.clone(),
        value: found.value.clone(),
        brief: first_set(&output.brief, &found.brief),
        kind: first_set(&output.kind, &found.kind),
    })
}

fn first_set(mine: &str, theirs: &str) -> String {
    if mine.is_empty() { theirs } else { mine }.to_string()
}

fn expanded(
    output: &Output,
    captured: &[CapturedOutput],
    locked: &Locked,
    strict: bool,
    warnings: &mut Warnings,
) -> Option<StackOutput> {
    let template = match &output.value {
        None | Some(Value::Null) => format!("${{{}}}", output.name),
        Some(Value::String(s)) => s.clone(),
        Some(literal) => return Some(entry(output, literal.clone())),
    };
    let pieces = parse(&template);
    let lookup = |name: &str| -> Option<Value> {
        captured
            .iter()
            .rev()
            .find(|c| c.qualified_name() == name)
            .or_else(|| captured.iter().rev().find(|c| c.name == name))
            .map(|c| c.value.clone())
            .or_else(|| {
                locked
                    .get(name)
                    .map(|p| p.value.clone().unwrap_or(Value::Null))
            })
    };
    if let [Piece::Reference(name)] = pieces.as_slice() {
        return match lookup(name) {
            Some(value) => Some(entry(output, value)),
            None => missing(output, name, strict, warnings),
        };
    }
    let mut text = String::new();
    for piece in pieces {
        match piece {
            Piece::Text(t) => text.push_str(t),
            Piece::Reference(name) => match lookup(name) {
                Some(value) => text.push_str(&substitution_text(Some(&value))),
                None => return missing(output, name, strict, warnings),
            },
            Piece::Cel(_) => {
                if strict {
                    warnings.warn(
                        None,
                        format!("stack output `{}`: `#{{}}` is not supported in stack outputs; left out", output.name),
                    );
                }
                return None;
            }
        }
    }
    Some(entry(output, Value::String(text)))
}

fn missing(
    output: &Output,
    name: &str,
    strict: bool,
    warnings: &mut Warnings,
) -> Option<StackOutput> {
    if strict {
        warnings.warn(
            None,
            format!(
                "stack output `{}`: `{name}` is neither an output nor a stack parameter; left out",
                output.name
            ),
        );
    }
    None
}

fn entry(output: &Output, value: Value) -> StackOutput {
    StackOutput {
        name: output.name.clone(),
        value,
        brief: output.brief.clone(),
        kind: output.kind.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_params::{LockedParam, Origin};

    fn output(name: &str, value: Option<&str>) -> Output {
        Output {
            name: name.into(),
            value: value.map(|v| yaml_serde::from_str(v).unwrap()),
            ..Output::default()
        }
    }

    #[test]
    fn follows_the_specification_example() {
        let captured = vec![CapturedOutput {
            component: "b".into(),
            name: "url".into(),
            value: Value::String("https://a.example.com".into()),
            ..CapturedOutput::default()
        }];
        let mut locked = Locked::default();
        let value = Some(Value::String("example.com".into()));
        locked.insert(LockedParam::new("dns.domain", "", value, Origin::Value));
        let declared = vec![
            output("b:url", None),
            output("api", Some("'${b:url}/api'")),
            output("domain", Some("'${dns.domain}'")),
            output("nope", Some("'${missing}'")),
            output("cel", Some("'#{1}'")),
            output("lit", Some("42")),
        ];
        let mut warnings = Warnings::default();
        let out = stack_outputs(&declared, &captured, &locked, &[], true, &mut warnings);
        let pairs: Vec<(String, String)> = out
            .iter()
            .map(|o| (o.name.clone(), substitution_text(Some(&o.value))))
            .collect();
        assert_eq!(
            pairs,
            [
                ("b:url".to_string(), "https://a.example.com".to_string()),
                ("api".into(), "https://a.example.com/api".into()),
                ("domain".into(), "example.com".into()),
                ("lit".into(), "42".into()),
            ]
        );
        assert_eq!(warnings.len(), 2);
    }
}
