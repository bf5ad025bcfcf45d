//! How values are turned into text: `${}` substitution, CEL results and
//! Go-style number printing (what the reference prints with `%v`).

use yaml_serde::Value;

/// The text a `${name}` reference is replaced with: `null` → `""`, strings as
/// they are, numbers and booleans as Go prints them, lists and maps as
/// compact JSON.
pub fn substitution_text(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => number_text(n),
        Some(Value::Tagged(tagged)) => substitution_text(Some(&tagged.value)),
        Some(other) => json_text(other),
    }
}

fn number_text(n: &yaml_serde::Number) -> String {
    if let Some(i) = n.as_i64() {
        i.to_string()
    } else if let Some(u) = n.as_u64() {
        u.to_string()
    } else {
        go_float(n.as_f64().unwrap_or(f64::NAN))
    }
}

/// Compact JSON with string keys; map keys that are not strings are
/// written as their text.
pub fn json_text(value: &Value) -> String {
    serde_json::to_string(&to_json(value)).unwrap_or_default()
}

fn to_json(value: &Value) -> serde_json::Value {
    match value {
        Value::Null => serde_json::Value::Null,
        Value::Bool(b) => serde_json::Value::Bool(*b),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.into()
            } else if let Some(u) = n.as_u64() {
                u.into()
            } else {
                serde_json::Number::from_f64(n.as_f64().unwrap_or(f64::NAN))
                    .map(serde_json::Value::Number)
                    .unwrap_or_else(|| serde_json::Value::String(number_text(n)))
            }
        }
        Value::String(s) => serde_json::Value::String(s.clone()),
        Value::Sequence(items) => serde_json::Value::Array(items.iter().map(to_json).collect()),
        Value::Mapping(map) => serde_json::Value::Object(
            map.iter()
                .map(|(k, v)| (substitution_text(Some(k)), to_json(v)))
                .collect(),
        ),
        Value::Tagged(tagged) => to_json(&tagged.value),
    }
}

/// Go's `%v` for a float64: the shortest representation that reads back
/// exactly, in exponent form when the decimal exponent is below -4 or 6 and
/// above (`1234567.0` → `1.234567e+06`, `100000.0` → `100000`), with at
/// least two exponent digits.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits: `1.234567e6`.
    let scientific = format!("{f:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let sign = if negative { "-" } else { "" };
    if !(-4..6).contains(&exponent) {
        let (first, rest) = digits.split_at(1);
        let fraction = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let exp_sign = if exponent < 0 { '-' } else { '+' };
        return format!("{sign}{first}{fraction}e{exp_sign}{:02}", exponent.abs());
    }
    let point = exponent + 1;
    let text = if point <= 0 {
        format!("0.{}{}", "0".repeat((-point) as usize), digits)
    } else if point as usize >= digits.len() {
        format!("{}{}", digits, "0".repeat(point as usize - digits.len()))
    } else {
        let (whole, fraction) = digits.split_at(point as usize);
        format!("{whole}.{fraction}")
    };
    format!("{sign}{text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go() {
        for (f, text) in [
            (2.5, "2.5"),
            (1.0, "1"),
            (100000.0, "100000"),
            (1234567.0, "1.234567e+06"),
            (1e21, "1e+21"),
            (1e-7, "1e-07"),
            (0.1 + 0.2, "0.30000000000000004"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-1.5, "-1.5"),
            (123456.0, "123456"),
        ] {
            assert_eq!(go_float(f), text, "{f}");
        }
    }

    #[test]
    fn substitution_of_each_kind() {
        let list: Value = yaml_serde::from_str("[a, b]").unwrap();
        let map: Value = yaml_serde::from_str("{k: v}").unwrap();
        assert_eq!(substitution_text(None), "");
        assert_eq!(substitution_text(Some(&Value::Null)), "");
        assert_eq!(substitution_text(Some(&Value::Bool(true))), "true");
        assert_eq!(substitution_text(Some(&Value::Number(5.into()))), "5");
        assert_eq!(substitution_text(Some(&Value::Number(1.5.into()))), "1.5");
        assert_eq!(substitution_text(Some(&list)), r#"["a","b"]"#);
        assert_eq!(substitution_text(Some(&map)), r#"{"k":"v"}"#);
    }
}
