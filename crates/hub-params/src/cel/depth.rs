//! How deep an expression may go before the parser and the evaluator see
//! it. Both recurse once per level of nesting and once per operator of a
//! chain (`1+1+…+1` is a tree as deep as it is long), so an expression of a
//! few kilobytes could overflow the stack and abort hub. It is refused
//! instead, with what to do about it; real expressions stay far below the
//! limits.

/// Brackets (`(`, `[`, `{`) open at once.
pub const MAX_NESTING: usize = 24;
/// Operators in the whole expression (each may add a level to the tree),
/// less [`OPERATORS_PER_BRACKET`] for each level of brackets: a bracket
/// level costs the parser as much stack as that many operators.
pub const MAX_OPERATORS: usize = 160;
pub const OPERATORS_PER_BRACKET: usize = 6;

/// `Ok` when `source` stays within both limits, else why not. String literals are
/// skipped: what they hold adds no depth.
pub fn check(source: &str) -> Result<(), String> {
    let (nesting, operators) = measure(source);
    if nesting > MAX_NESTING {
        return Err(format!(
            "the expression nests {nesting} brackets deep; hub accepts at most {MAX_NESTING}: \
             compute the inner part in a parameter of its own and refer to it"
        ));
    }
    let allowed = MAX_OPERATORS - OPERATORS_PER_BRACKET * nesting;
    if operators > allowed {
        return Err(format!(
            "the expression has {operators} operators in {nesting} levels of brackets; \
             hub accepts at most {allowed} at that depth ({MAX_OPERATORS}, less \
             {OPERATORS_PER_BRACKET} a level): split it into parameters that refer to each other"
        ));
    }
    Ok(())
}

/// The deepest bracket nesting and the number of operator characters
/// outside string literals.
fn measure(source: &str) -> (usize, usize) {
    let bytes = source.as_bytes();
    let (mut depth, mut deepest, mut operators) = (0usize, 0usize, 0usize);
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            quote @ (b'"' | b'\'') => at = skip_string(bytes, at, quote),
            b'(' | b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'+' | b'-' | b'*' | b'/' | b'%' | b'!' | b'<' | b'>' | b'=' | b'&' | b'|' | b'?'
            | b'.' => operators += 1,
            _ => {}
        }
        at += 1;
    }
    (deepest, operators)
}

/// The position of the last byte of the string literal opening at `start`
/// (a triple quote too); the end of the text when it is not closed.
fn skip_string(bytes: &[u8], start: usize, quote: u8) -> usize {
    let triple = bytes.get(start..start + 3) == Some(&[quote, quote, quote][..]);
    let mut at = start + if triple { 3 } else { 1 };
    while at < bytes.len() {
        if bytes[at] == b'\\' {
            at += 2;
            continue;
        }
        if bytes[at] == quote {
            if !triple {
                return at;
            }
            if bytes.get(at..at + 3) == Some(&[quote, quote, quote][..]) {
                return at + 2;
            }
        }
        at += 1;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_expressions_pass() {
        for source in [
            "size(a.b) > 0 && c == 'x'",
            "dns.domain + '.' + (region == 'us-east-1' ? 'use1' : region)",
            "[1, 2, 3].map(x, x * 2)",
            "'((((((((((((((((((((((((((((((' + a",
            r#""a \" ((((((((((((((((((((((((((((((( b""#,
            "'''(((((((((((((((((((((((((((((((((('''",
        ] {
            assert!(check(source).is_ok(), "{source}");
        }
    }

    #[test]
    fn deep_nesting_and_long_chains_are_refused_with_a_hint() {
        let nested = format!("{}1{}", "(".repeat(25), ")".repeat(25));
        let message = check(&nested).expect_err("too deep").to_string();
        assert!(
            message.contains("25 brackets deep") && message.contains("at most 24"),
            "{message}"
        );
        let chain = vec!["1"; 162].join("+");
        let message = check(&chain).expect_err("too long").to_string();
        assert!(message.contains("161 operators in 0 levels"), "{message}");
        let both = format!(
            "{}{}{}",
            "(".repeat(20),
            vec!["1"; 100].join("+"),
            ")".repeat(20)
        );
        let message = check(&both).expect_err("deep and long").to_string();
        assert!(message.contains("at most 40 at that depth"), "{message}");
        let lists = format!("{}{}", "[".repeat(40), "]".repeat(40));
        assert!(check(&lists).is_err());
        assert!(check(&format!("{}1{}", "(".repeat(24), ")".repeat(24))).is_ok());
    }
}
