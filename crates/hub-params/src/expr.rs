//! Templates: strings holding `${name}` references and `#{CEL}` expressions.
//!
//! Expressions are found by one left-to-right scan equivalent to
//! `\$\{[^}]+\}` or `#\{([^{}]|\{[^{}]+\})*\}`: a reference is any run of
//! characters other than `}`; a CEL expression may hold one level of nested
//! braces. `${}` is not an expression and stays literal.

/// One piece of a template.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Piece<'a> {
    Text(&'a str),
    /// `${name}`: the name between the braces.
    Reference(&'a str),
    /// `#{source}`: the CEL source between the braces.
    Cel(&'a str),
}

/// A value needs expansion when it is a string holding `${` or `#{`
/// anywhere, even without a closing brace.
pub fn needs_expansion(text: &str) -> bool {
    text.contains("${") || text.contains("#{")
}

/// Splits `text` into literal text, references and CEL expressions.
pub fn parse(text: &str) -> Vec<Piece<'_>> {
    let mut pieces = Vec::new();
    parse_into(text, &mut pieces);
    pieces
}

/// [`parse`] into a list that is cleared first, so that one list serves
/// many templates.
pub fn parse_into<'a>(text: &'a str, pieces: &mut Vec<Piece<'a>>) {
    pieces.clear();
    let bytes = text.as_bytes();
    let mut literal_start = 0;
    let mut i = 0;
    while i + 1 < bytes.len() {
        let matched = match (bytes[i], bytes[i + 1]) {
            (b'$', b'{') => {
                reference_end(bytes, i + 2).map(|end| (Piece::Reference(&text[i + 2..end]), end))
            }
            (b'#', b'{') => cel_end(bytes, i + 2).map(|end| (Piece::Cel(&text[i + 2..end]), end)),
            _ => None,
        };
        match matched {
            Some((piece, end)) => {
                if literal_start < i {
                    pieces.push(Piece::Text(&text[literal_start..i]));
                }
                pieces.push(piece);
                i = end + 1;
                literal_start = i;
            }
            None => i += 1,
        }
    }
    if literal_start < text.len() {
        pieces.push(Piece::Text(&text[literal_start..]));
    }
}

/// The index of the `}` closing a reference whose name starts at `start`;
/// the name must not be empty.
fn reference_end(bytes: &[u8], start: usize) -> Option<usize> {
    let end = start + bytes[start..].iter().position(|&b| b == b'}')?;
    (end > start).then_some(end)
}

/// The index of the `}` closing a CEL expression starting at `start`:
/// characters other than braces, or one `{...}` group with at least one
/// character and no braces inside.
fn cel_end(bytes: &[u8], start: usize) -> Option<usize> {
    let mut i = start;
    while i < bytes.len() {
        match bytes[i] {
            b'}' => return Some(i),
            b'{' => {
                let close = i
                    + 1
                    + bytes[i + 1..]
                        .iter()
                        .position(|&b| b == b'{' || b == b'}')?;
                if bytes[close] == b'{' || close == i + 1 {
                    return None;
                }
                i = close + 1;
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::Piece::*;
    use super::*;

    fn text(s: &str) -> Piece<'_> {
        Text(s)
    }

    #[test]
    fn references_and_cel() {
        assert_eq!(
            parse("a${b}c#{1 + 2}d"),
            vec![
                text("a"),
                Reference("b"),
                text("c"),
                Cel("1 + 2"),
                text("d")
            ]
        );
    }

    #[test]
    fn empty_reference_stays_literal() {
        assert_eq!(parse("x${}y"), vec![text("x${}y")]);
        assert_eq!(parse("${"), vec![text("${")]);
        assert!(needs_expansion("${"));
    }

    #[test]
    fn cel_with_one_level_of_braces() {
        assert_eq!(parse("#{ {'a':1}['a'] }"), vec![Cel(" {'a':1}['a'] ")]);
        assert_eq!(parse("#{}"), vec![Cel("")]);
        assert_eq!(parse("#{ {{}} }"), vec![text("#{ {{}} }")]);
    }

    #[test]
    fn no_escape_syntax() {
        assert_eq!(parse("$${x}"), vec![text("$"), Reference("x")]);
    }

    #[test]
    fn unclosed_reference_after_expression() {
        assert_eq!(parse("#{a} (${lb2"), vec![Cel("a"), text(" (${lb2")]);
    }
}
