//! `fmt.Sprintf`, `fmt.Sprint` and `fmt.Sprintln` over [`Value`]s, for
//! the `printf`, `print` and `println` functions.

use super::value::{go_exponent, go_float, Value};

/// `fmt.Sprint`: a space between operands when neither is a string.
pub fn sprint(args: &[Value]) -> String {
    let mut out = String::new();
    for (i, arg) in args.iter().enumerate() {
        let is_str = |v: &Value| matches!(v, Value::Str(_));
        if i > 0 && !is_str(arg) && !is_str(&args[i - 1]) {
            out.push(' ');
        }
        out.push_str(&arg.to_go_string());
    }
    out
}

/// `fmt.Sprintln`: spaces between all operands, a newline at the end.
pub fn sprintln(args: &[Value]) -> String {
    let parts: Vec<String> = args.iter().map(Value::to_go_string).collect();
    format!("{}\n", parts.join(" "))
}

#[derive(Default)]
struct Spec {
    minus: bool,
    plus: bool,
    zero: bool,
    space: bool,
    sharp: bool,
    width: Option<usize>,
    precision: Option<usize>,
}

/// `fmt.Sprintf` with Go's verbs, flags, width and precision; mistakes
/// print as Go prints them (`%!d(string=x)`, `%!s(MISSING)`).
pub fn sprintf(format: &str, args: &[Value]) -> String {
    let mut out = String::new();
    let mut next = 0;
    let mut chars = format.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = Spec::default();
        while let Some(&f) = chars.peek() {
            match f {
                '-' => spec.minus = true,
                '+' => spec.plus = true,
                '0' => spec.zero = true,
                ' ' => spec.space = true,
                '#' => spec.sharp = true,
                _ => break,
            }
            chars.next();
        }
        spec.width = digits(&mut chars);
        if chars.peek() == Some(&'.') {
            chars.next();
            spec.precision = Some(digits(&mut chars).unwrap_or(0));
        }
        let Some(verb) = chars.next() else {
            out.push_str("%!(NOVERB)");
            break;
        };
        if verb == '%' {
            out.push('%');
            continue;
        }
        let Some(arg) = args.get(next) else {
            out.push_str(&format!("%!{verb}(MISSING)"));
            continue;
        };
        next += 1;
        let text = verb_text(verb, &spec, arg);
        out.push_str(&pad(&text, &spec, verb));
    }
    if next < args.len() {
        out.push_str("%!(EXTRA ");
        let extra: Vec<String> = args[next..]
            .iter()
            .map(|a| format!("{}={}", a.type_name(), a.to_go_string()))
            .collect();
        out.push_str(&extra.join(", "));
        out.push(')');
    }
    out
}

fn digits(chars: &mut std::iter::Peekable<std::str::Chars>) -> Option<usize> {
    let mut n: Option<usize> = None;
    while let Some(d) = chars.peek().and_then(|c| c.to_digit(10)) {
        n = Some(n.unwrap_or(0) * 10 + d as usize);
        chars.next();
    }
    n
}

fn bad(verb: char, arg: &Value) -> String {
    format!("%!{verb}({}={})", arg.type_name(), arg.to_go_string())
}

fn verb_text(verb: char, spec: &Spec, arg: &Value) -> String {
    match (verb, arg) {
        ('v', Value::Float(f)) => float_g(*f, spec.precision),
        ('v', Value::Int(i)) if spec.plus => format!("{i:+}"),
        ('v', _) => arg.to_go_string(),
        ('T', _) => arg.type_name().to_string(),
        ('s', Value::Str(s)) => match spec.precision {
            Some(p) => s.chars().take(p).collect(),
            None => s.clone(),
        },
        ('s', Value::List(_) | Value::Map(_) | Value::Bool(_)) => arg.to_go_string(),
        ('s', Value::Int(_) | Value::Float(_) | Value::Nil) => bad(verb, arg),
        ('q', Value::Str(s)) => go_quote(s),
        ('q', Value::Int(i)) => char::from_u32(*i as u32)
            .map(|c| format!("'{}'", c))
            .unwrap_or_else(|| bad(verb, arg)),
        ('d', Value::Int(i)) => sign(*i, spec, i.unsigned_abs().to_string()),
        ('b', Value::Int(i)) => sign(*i, spec, format!("{:b}", i.unsigned_abs())),
        ('o', Value::Int(i)) => sign(*i, spec, format!("{:o}", i.unsigned_abs())),
        ('x', Value::Int(i)) => sign(
            *i,
            spec,
            format!(
                "{}{:x}",
                if spec.sharp { "0x" } else { "" },
                i.unsigned_abs()
            ),
        ),
        ('X', Value::Int(i)) => sign(
            *i,
            spec,
            format!(
                "{}{:X}",
                if spec.sharp { "0X" } else { "" },
                i.unsigned_abs()
            ),
        ),
        ('x', Value::Str(s)) => s.bytes().map(|b| format!("{b:02x}")).collect(),
        ('X', Value::Str(s)) => s.bytes().map(|b| format!("{b:02X}")).collect(),
        ('c', Value::Int(i)) => char::from_u32(*i as u32)
            .map(String::from)
            .unwrap_or_default(),
        ('t', Value::Bool(b)) => b.to_string(),
        ('f' | 'F', Value::Float(f)) => float_sign(
            *f,
            spec,
            format!("{:.*}", spec.precision.unwrap_or(6), f.abs()),
        ),
        ('e', Value::Float(f)) => float_sign(
            *f,
            spec,
            go_exponent(&format!("{:.*e}", spec.precision.unwrap_or(6), f.abs())),
        ),
        ('g', Value::Float(f)) => float_g(*f, spec.precision),
        _ => bad(verb, arg),
    }
}

fn sign(n: i64, spec: &Spec, digits: String) -> String {
    if n < 0 {
        format!("-{digits}")
    } else if spec.plus {
        format!("+{digits}")
    } else if spec.space {
        format!(" {digits}")
    } else {
        digits
    }
}

fn float_sign(f: f64, spec: &Spec, digits: String) -> String {
    if f.is_sign_negative() && f != 0.0 {
        format!("-{digits}")
    } else if spec.plus {
        format!("+{digits}")
    } else {
        digits
    }
}

fn float_g(f: f64, precision: Option<usize>) -> String {
    match precision {
        None => go_float(f),
        Some(p) => {
            let p = p.max(1);
            let exponent = if f == 0.0 {
                0
            } else {
                f.abs().log10().floor() as i32
            };
            if exponent < -4 || exponent >= p as i32 {
                go_exponent(&format!("{:.*e}", p - 1, f))
            } else {
                let decimals = (p as i32 - 1 - exponent).max(0) as usize;
                let text = format!("{f:.decimals$}");
                if text.contains('.') {
                    text.trim_end_matches('0').trim_end_matches('.').to_string()
                } else {
                    text
                }
            }
        }
    }
}

fn pad(text: &str, spec: &Spec, verb: char) -> String {
    let Some(width) = spec.width else {
        return text.to_string();
    };
    let len = text.chars().count();
    if len >= width {
        return text.to_string();
    }
    let fill = width - len;
    if spec.minus {
        return format!("{text}{}", " ".repeat(fill));
    }
    let numeric = matches!(
        verb,
        'd' | 'f' | 'F' | 'e' | 'g' | 'x' | 'X' | 'o' | 'b' | 'v'
    );
    if spec.zero && numeric {
        let (sign, digits) = match text.strip_prefix(['-', '+']) {
            Some(rest) => (&text[..1], rest),
            None => ("", text),
        };
        return format!("{sign}{}{digits}", "0".repeat(fill));
    }
    format!("{}{text}", " ".repeat(fill))
}

/// `strconv.Quote`: a double-quoted Go string literal.
pub fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbs() {
        let args = [
            Value::str("api"),
            Value::Int(7),
            Value::Float(2.5),
            Value::str("a\"b"),
        ];
        assert_eq!(
            sprintf(
                "%s|%d|%5.2f|%q|%x|%-5s|%06d|%T",
                &[
                    args[0].clone(),
                    args[1].clone(),
                    args[2].clone(),
                    args[3].clone(),
                    args[0].clone(),
                    args[0].clone(),
                    args[1].clone(),
                    args[2].clone()
                ]
            ),
            "api|7| 2.50|\"a\\\"b\"|617069|api  |000007|float64"
        );
        assert_eq!(
            sprintf("%d %s", &[Value::str("x")]),
            "%!d(string=x) %!s(MISSING)"
        );
        assert_eq!(
            sprintf("%s", &[Value::str("a"), Value::Int(1)]),
            "a%!(EXTRA int=1)"
        );
        assert_eq!(
            sprint(&[Value::str("a"), Value::Int(1), Value::Int(2)]),
            "a1 2"
        );
    }
}
