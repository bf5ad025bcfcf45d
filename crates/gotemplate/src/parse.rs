//! Go `text/template` source → a tree of [`Node`]s.
//!
//! The lexer splits the source into text and actions (`{{…}}`), applying
//! the `{{- ` / ` -}}` trim markers and dropping comments; the parser turns
//! the actions into control structures (`if`, `range`, `with`, `define`,
//! `block`, `template`, `break`, `continue`) and pipelines.

use super::value::Value;
use super::GoError;

/// One piece of a parsed template.
#[derive(Debug, Clone)]
pub enum Node {
    Text(String),
    Action(Pipe),
    If(Branch),
    Range(Branch),
    With(Branch),
    Template {
        line: usize,
        name: String,
        pipe: Option<Pipe>,
    },
    Break(usize),
    Continue(usize),
}

/// `if`/`range`/`with`: the pipeline, the body and the `else` part.
#[derive(Debug, Clone)]
pub struct Branch {
    pub pipe: Pipe,
    pub body: Vec<Node>,
    pub otherwise: Option<Vec<Node>>,
}

/// `[$a[, $b] :=|=] cmd | cmd …`
#[derive(Debug, Clone)]
pub struct Pipe {
    pub line: usize,
    pub variables: Vec<String>,
    pub assign: bool,
    pub commands: Vec<Command>,
}

/// One command of a pipeline: an operand, or a function and its arguments.
#[derive(Debug, Clone)]
pub struct Command {
    pub operands: Vec<Operand>,
}

/// A term followed by field names (`$x.a.b`, `(pipe).a`).
#[derive(Debug, Clone)]
pub struct Operand {
    pub term: Term,
    pub fields: Vec<String>,
}

#[derive(Debug, Clone)]
pub enum Term {
    Dot,
    Nil,
    Literal(Value),
    Variable(String),
    Function(String),
    Pipe(Box<Pipe>),
}

/// A parsed template: its body and the templates it defines.
#[derive(Debug, Clone, Default)]
pub struct Parsed {
    pub body: Vec<Node>,
    pub defines: Vec<(String, Vec<Node>)>,
}

pub fn parse(source: &str) -> Result<Parsed, GoError> {
    let items = lex(source)?;
    let mut parser = Parser {
        items,
        at: 0,
        defines: Vec::new(),
    };
    let (body, end) = parser.list()?;
    if let Some((line, word)) = end {
        return Err(GoError::new(line, format!("unexpected {{{{{word}}}}}")));
    }
    Ok(Parsed {
        body,
        defines: parser.defines,
    })
}

// ---------------------------------------------------------------- lexer

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Field(String),
    Dot,
    Variable(String),
    Ident(String),
    Literal(Value),
    Open,
    Close,
    Bar,
    Declare,
    Assign,
    Comma,
}

#[derive(Debug, Clone)]
struct Token {
    tok: Tok,
    /// Whether whitespace separates it from the token before.
    spaced: bool,
}

#[derive(Debug)]
enum Item {
    Text(String),
    Action { line: usize, tokens: Vec<Token> },
}

fn line_at(source: &str, offset: usize) -> usize {
    source[..offset].matches('\n').count() + 1
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

fn lex(source: &str) -> Result<Vec<Item>, GoError> {
    let mut items = Vec::new();
    let mut rest_start = 0;
    let mut trim_next = false;
    while let Some(found) = source[rest_start..].find("{{") {
        let open = rest_start + found;
        let mut text = &source[rest_start..open];
        if trim_next {
            text = text.trim_start_matches(is_space);
        }
        let after = &source[open + 2..];
        let trim_left = after.starts_with('-') && after[1..].starts_with(is_space);
        if trim_left {
            text = text.trim_end_matches(is_space);
        }
        if !text.is_empty() {
            items.push(Item::Text(text.to_string()));
        }
        let line = line_at(source, open);
        let body_start = open + 2 + if trim_left { 2 } else { 0 };
        let (tokens, end, trim_right) = lex_action(source, body_start, line)?;
        if let Some(tokens) = tokens {
            items.push(Item::Action { line, tokens });
        }
        trim_next = trim_right;
        rest_start = end;
    }
    let mut text = &source[rest_start..];
    if trim_next {
        text = text.trim_start_matches(is_space);
    }
    if !text.is_empty() {
        items.push(Item::Text(text.to_string()));
    }
    Ok(items)
}

/// The tokens of one action starting at `start` (after `{{` and a left trim
/// marker); `None` for a comment. Returns the offset after `}}` and whether
/// a right trim marker was present.
fn lex_action(
    source: &str,
    start: usize,
    line: usize,
) -> Result<(Option<Vec<Token>>, usize, bool), GoError> {
    let body = &source[start..];
    let trimmed = body.trim_start_matches(is_space);
    if trimmed.starts_with("/*") {
        let comment_start = start + (body.len() - trimmed.len());
        let (end, trim_right) = lex_comment(source, comment_start, line)?;
        return Ok((None, end, trim_right));
    }
    let chars: Vec<(usize, char)> = body.char_indices().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    let mut spaced = true;
    let mut depth = 0usize;
    loop {
        let Some(&(offset, c)) = chars.get(i) else {
            return Err(GoError::new(line, "unclosed action"));
        };
        let at = |k: usize| chars.get(k).map(|&(_, c)| c);
        if is_space(c) {
            // ` -}}` ends the action with a right trim.
            if at(i + 1) == Some('-') && at(i + 2) == Some('}') && at(i + 3) == Some('}') {
                return Ok((Some(tokens), start + offset + 4, true));
            }
            spaced = true;
            i += 1;
            continue;
        }
        if c == '}' && at(i + 1) == Some('}') && depth == 0 {
            return Ok((Some(tokens), start + offset + 2, false));
        }
        let token_line = line + body[..offset].matches('\n').count();
        let (tok, next) = token_at(&chars, i, spaced, token_line)?;
        match tok {
            Tok::Open => depth += 1,
            Tok::Close => depth = depth.saturating_sub(1),
            _ => {}
        }
        tokens.push(Token { tok, spaced });
        spaced = false;
        i = next;
    }
}

/// A `/* … */` comment action whose `/*` is at `comment_start`: the offset
/// after its `}}` and whether a right trim marker was present.
fn lex_comment(source: &str, comment_start: usize, line: usize) -> Result<(usize, bool), GoError> {
    let Some(close) = source[comment_start + 2..].find("*/") else {
        return Err(GoError::new(line, "unclosed comment"));
    };
    let after = comment_start + 2 + close + 2;
    let rest = &source[after..];
    if rest.starts_with("}}") {
        return Ok((after + 2, false));
    }
    let spaced = rest.trim_start_matches(is_space);
    if let Some(r) = spaced.strip_prefix("-}}") {
        if spaced.len() < rest.len() {
            return Ok((source.len() - r.len(), true));
        }
    }
    Err(GoError::new(line, "comment ends before closing delimiter"))
}

/// The token that starts at `chars[i]` (not a space, not the closing
/// `}}`) and the index after it; `spaced` tells whether a space came
/// before it (a `.5` is a number only then).
fn token_at(
    chars: &[(usize, char)],
    i: usize,
    spaced: bool,
    token_line: usize,
) -> Result<(Tok, usize), GoError> {
    let at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let c = chars[i].1;
    Ok(match c {
        '(' => (Tok::Open, i + 1),
        ')' => (Tok::Close, i + 1),
        '|' => (Tok::Bar, i + 1),
        ',' => (Tok::Comma, i + 1),
        '=' => (Tok::Assign, i + 1),
        ':' if at(i + 1) == Some('=') => (Tok::Declare, i + 2),
        '"' => {
            let (text, next) = quoted(chars, i, token_line)?;
            (Tok::Literal(Value::Str(text)), next)
        }
        '`' => raw_quoted(chars, i, token_line)?,
        '\'' => {
            let (text, next) = quoted(chars, i, token_line)?;
            let mut it = text.chars();
            let (Some(ch), None) = (it.next(), it.next()) else {
                return Err(GoError::new(token_line, "malformed character constant"));
            };
            (Tok::Literal(Value::Int(ch as i64)), next)
        }
        '.' if !at(i + 1).is_some_and(is_ident_char) => (Tok::Dot, i + 1),
        '.' if at(i + 1).is_some_and(|c| c.is_ascii_digit()) && spaced => {
            let (value, next) = number(chars, i, token_line)?;
            (Tok::Literal(value), next)
        }
        '.' => {
            let (name, next) = ident(chars, i + 1);
            (Tok::Field(name), next)
        }
        '$' => {
            let (name, next) = ident(chars, i + 1);
            (Tok::Variable(format!("${name}")), next)
        }
        c if c.is_ascii_digit()
            || ((c == '-' || c == '+')
                && at(i + 1).is_some_and(|d| d.is_ascii_digit() || d == '.')) =>
        {
            let (value, next) = number(chars, i, token_line)?;
            (Tok::Literal(value), next)
        }
        c if is_ident_char(c) => {
            let (name, next) = ident(chars, i);
            let tok = match name.as_str() {
                "true" => Tok::Literal(Value::Bool(true)),
                "false" => Tok::Literal(Value::Bool(false)),
                _ => Tok::Ident(name),
            };
            (tok, next)
        }
        other => {
            return Err(GoError::new(
                token_line,
                format!("unexpected {other:?} in action"),
            ))
        }
    })
}

/// A raw string literal whose opening backquote is at `chars[i]`.
fn raw_quoted(
    chars: &[(usize, char)],
    i: usize,
    token_line: usize,
) -> Result<(Tok, usize), GoError> {
    let at = |k: usize| chars.get(k).map(|&(_, c)| c);
    let mut j = i + 1;
    let mut text = String::new();
    while let Some(c) = at(j) {
        if c == '`' {
            break;
        }
        text.push(c);
        j += 1;
    }
    if at(j).is_none() {
        return Err(GoError::new(token_line, "unterminated raw quoted string"));
    }
    Ok((Tok::Literal(Value::Str(text)), j + 1))
}

fn is_ident_char(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

fn ident(chars: &[(usize, char)], mut i: usize) -> (String, usize) {
    let mut name = String::new();
    while let Some(&(_, c)) = chars.get(i) {
        if !is_ident_char(c) {
            break;
        }
        name.push(c);
        i += 1;
    }
    (name, i)
}

/// A `"…"` or `'…'` literal with Go escapes; returns the text and the index
/// after the closing quote.
fn quoted(chars: &[(usize, char)], start: usize, line: usize) -> Result<(String, usize), GoError> {
    let quote = chars[start].1;
    let mut out = String::new();
    let mut i = start + 1;
    let unterminated = || GoError::new(line, "unterminated quoted string");
    loop {
        let Some(&(_, c)) = chars.get(i) else {
            return Err(unterminated());
        };
        i += 1;
        if c == quote {
            return Ok((out, i));
        }
        if c == '\n' {
            return Err(unterminated());
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&(_, e)) = chars.get(i) else {
            return Err(unterminated());
        };
        i += 1;
        let simple = match e {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            '\\' => Some('\\'),
            '"' => Some('"'),
            '\'' => Some('\''),
            _ => None,
        };
        if let Some(c) = simple {
            out.push(c);
            continue;
        }
        let digits = match e {
            'x' => 2,
            'u' => 4,
            'U' => 8,
            '0'..='7' => 0,
            _ => return Err(GoError::new(line, format!("unknown escape sequence \\{e}"))),
        };
        let code = if digits == 0 {
            let text: String = chars[i - 1..(i + 2).min(chars.len())]
                .iter()
                .map(|&(_, c)| c)
                .collect();
            i += 2;
            u32::from_str_radix(&text, 8).ok()
        } else {
            let text: String = chars[i..(i + digits).min(chars.len())]
                .iter()
                .map(|&(_, c)| c)
                .collect();
            i += digits;
            u32::from_str_radix(&text, 16).ok()
        };
        match code.and_then(char::from_u32) {
            Some(c) => out.push(c),
            None => return Err(GoError::new(line, "invalid escape in quoted string")),
        }
    }
}

/// A number literal: an `int` when it is written as one (decimal, hex,
/// octal, binary), else a `float64`.
fn number(chars: &[(usize, char)], start: usize, line: usize) -> Result<(Value, usize), GoError> {
    let mut i = start;
    let mut text = String::new();
    while let Some(&(_, c)) = chars.get(i) {
        let exponent_sign = (c == '-' || c == '+')
            && text.ends_with(['e', 'E', 'p', 'P'])
            && !text.starts_with("0x");
        if c.is_ascii_alphanumeric()
            || c == '.'
            || c == '_'
            || exponent_sign
            || (i == start && (c == '-' || c == '+'))
        {
            text.push(c);
            i += 1;
        } else {
            break;
        }
    }
    let bad = || GoError::new(line, format!("bad number syntax: {text:?}"));
    let clean = text.replace('_', "");
    let (negative, digits) = match clean.strip_prefix('-') {
        Some(d) => (true, d.to_string()),
        None => (false, clean.trim_start_matches('+').to_string()),
    };
    let lower = digits.to_ascii_lowercase();
    let radix_int = if let Some(h) = lower.strip_prefix("0x") {
        Some(i64::from_str_radix(h, 16).map_err(|_| bad())?)
    } else if let Some(b) = lower.strip_prefix("0b") {
        Some(i64::from_str_radix(b, 2).map_err(|_| bad())?)
    } else if let Some(o) = lower.strip_prefix("0o") {
        Some(i64::from_str_radix(o, 8).map_err(|_| bad())?)
    } else if lower.len() > 1 && lower.starts_with('0') && lower.bytes().all(|b| b.is_ascii_digit())
    {
        Some(i64::from_str_radix(&lower[1..], 8).map_err(|_| bad())?)
    } else if lower.bytes().all(|b| b.is_ascii_digit()) {
        Some(lower.parse::<i64>().map_err(|_| bad())?)
    } else {
        None
    };
    let value = match radix_int {
        Some(n) => Value::Int(if negative { -n } else { n }),
        None => {
            let f: f64 = lower.parse().map_err(|_| bad())?;
            Value::Float(if negative { -f } else { f })
        }
    };
    Ok((value, i))
}

// ---------------------------------------------------------------- parser

struct Parser {
    items: Vec<Item>,
    at: usize,
    defines: Vec<(String, Vec<Node>)>,
}

/// What ended a list: `end`, `else` (with the rest of its tokens), or the
/// end of the source (`None`).
type Ending = Option<(usize, String)>;

impl Parser {
    /// Nodes up to `{{end}}`, `{{else …}}` or the end of the source.
    fn list(&mut self) -> Result<(Vec<Node>, Ending), GoError> {
        let mut nodes = Vec::new();
        while self.at < self.items.len() {
            let index = self.at;
            self.at += 1;
            let (line, tokens) = match &self.items[index] {
                Item::Text(text) => {
                    nodes.push(Node::Text(text.clone()));
                    continue;
                }
                Item::Action { line, tokens } => (*line, tokens.clone()),
            };
            let keyword = match tokens.first().map(|t| &t.tok) {
                Some(Tok::Ident(word)) => word.as_str(),
                _ => "",
            };
            match keyword {
                "end" | "else" => {
                    if keyword == "end" && tokens.len() > 1 {
                        return Err(GoError::new(line, "unexpected tokens after {{end}}"));
                    }
                    // Keep the `else` action's tokens for the caller.
                    self.at = index;
                    return Ok((nodes, Some((line, keyword.to_string()))));
                }
                "if" | "range" | "with" => {
                    let pipe = pipeline(line, &tokens[1..], keyword)?;
                    let branch = self.branch(line, pipe, keyword)?;
                    nodes.push(match keyword {
                        "if" => Node::If(branch),
                        "range" => Node::Range(branch),
                        _ => Node::With(branch),
                    });
                }
                "define" | "block" => {
                    let name = template_name(line, &tokens, keyword)?;
                    let pipe = if keyword == "block" {
                        Some(pipeline(line, &tokens[2..], "block")?)
                    } else {
                        if tokens.len() > 2 {
                            return Err(GoError::new(line, "unexpected tokens in define clause"));
                        }
                        None
                    };
                    let (body, end) = self.list()?;
                    self.expect_end(line, end, keyword)?;
                    self.defines.push((name.clone(), body));
                    if let Some(pipe) = pipe {
                        nodes.push(Node::Template {
                            line,
                            name,
                            pipe: Some(pipe),
                        });
                    }
                }
                "template" => {
                    let name = template_name(line, &tokens, keyword)?;
                    let pipe = if tokens.len() > 2 {
                        Some(pipeline(line, &tokens[2..], "template")?)
                    } else {
                        None
                    };
                    nodes.push(Node::Template { line, name, pipe });
                }
                "break" | "continue" if tokens.len() == 1 => nodes.push(if keyword == "break" {
                    Node::Break(line)
                } else {
                    Node::Continue(line)
                }),
                _ => nodes.push(Node::Action(pipeline(line, &tokens, "command")?)),
            }
        }
        Ok((nodes, None))
    }

    fn expect_end(&mut self, line: usize, end: Ending, what: &str) -> Result<(), GoError> {
        match end {
            Some((_, word)) if word == "end" => {
                self.at += 1;
                Ok(())
            }
            Some((else_line, _)) => Err(GoError::new(
                else_line,
                format!("unexpected {{{{else}}}} in {what}"),
            )),
            None => Err(GoError::new(
                line,
                format!("unexpected EOF: {{{{{what}}}}} has no matching {{{{end}}}}"),
            )),
        }
    }

    /// The body and `else` part of `if`/`range`/`with`; `else if` and
    /// `else with` nest as a single-node `else`.
    fn branch(&mut self, line: usize, pipe: Pipe, keyword: &str) -> Result<Branch, GoError> {
        let (body, end) = self.list()?;
        match end {
            Some((_, word)) if word == "end" => {
                self.at += 1;
                Ok(Branch {
                    pipe,
                    body,
                    otherwise: None,
                })
            }
            Some((else_line, _)) => {
                let Item::Action { tokens, .. } = &self.items[self.at] else {
                    unreachable!("an ending is an action");
                };
                let tokens = tokens.clone();
                self.at += 1;
                let otherwise = match tokens.get(1).map(|t| &t.tok) {
                    None => {
                        let (rest, end) = self.list()?;
                        self.expect_end(line, end, keyword)?;
                        rest
                    }
                    Some(Tok::Ident(word)) if word == "if" || word == "with" => {
                        let inner = pipeline(else_line, &tokens[2..], word)?;
                        let nested = self.branch(else_line, inner, word)?;
                        vec![if word == "if" {
                            Node::If(nested)
                        } else {
                            Node::With(nested)
                        }]
                    }
                    _ => return Err(GoError::new(else_line, "unexpected tokens after {{else}}")),
                };
                Ok(Branch {
                    pipe,
                    body,
                    otherwise: Some(otherwise),
                })
            }
            None => Err(GoError::new(
                line,
                format!("unexpected EOF: {{{{{keyword}}}}} has no matching {{{{end}}}}"),
            )),
        }
    }
}

fn template_name(line: usize, tokens: &[Token], keyword: &str) -> Result<String, GoError> {
    match tokens.get(1).map(|t| &t.tok) {
        Some(Tok::Literal(Value::Str(name))) => Ok(name.clone()),
        _ => Err(GoError::new(
            line,
            format!("{keyword} needs a quoted template name"),
        )),
    }
}

/// `[$a[, $b] :=|=] commands`.
fn pipeline(line: usize, tokens: &[Token], context: &str) -> Result<Pipe, GoError> {
    let mut variables = Vec::new();
    let mut assign = false;
    let mut rest = tokens;
    // Declarations: `$x :=`, `$x =`, `$i, $v :=`.
    let declared = match tokens {
        [Token {
            tok: Tok::Variable(a),
            ..
        }, Token {
            tok: Tok::Declare | Tok::Assign,
            ..
        }, ..] => Some((vec![a.clone()], 2)),
        [Token {
            tok: Tok::Variable(a),
            ..
        }, Token {
            tok: Tok::Comma, ..
        }, Token {
            tok: Tok::Variable(b),
            ..
        }, Token {
            tok: Tok::Declare | Tok::Assign,
            ..
        }, ..] => Some((vec![a.clone(), b.clone()], 4)),
        _ => None,
    };
    if let Some((names, used)) = declared {
        assign = tokens[used - 1].tok == Tok::Assign;
        if names.len() == 2 && context != "range" {
            return Err(GoError::new(line, "too many declarations in command"));
        }
        variables = names;
        rest = &tokens[used..];
    }
    if rest.is_empty() {
        return Err(GoError::new(line, format!("missing value for {context}")));
    }
    let mut commands = Vec::new();
    let mut at = 0;
    loop {
        let (command, next) = command(line, rest, at)?;
        commands.push(command);
        at = next;
        match rest.get(at).map(|t| &t.tok) {
            None => break,
            Some(Tok::Bar) => at += 1,
            Some(other) => {
                return Err(GoError::new(
                    line,
                    format!("unexpected {other:?} in {context}"),
                ))
            }
        }
    }
    Ok(Pipe {
        line,
        variables,
        assign,
        commands,
    })
}

/// Operands up to `|`, `)` or the end.
fn command(line: usize, tokens: &[Token], mut at: usize) -> Result<(Command, usize), GoError> {
    let mut operands = Vec::new();
    while let Some(token) = tokens.get(at) {
        if matches!(token.tok, Tok::Bar | Tok::Close) {
            break;
        }
        if !operands.is_empty() && !token.spaced && !matches!(token.tok, Tok::Open) {
            return Err(GoError::new(
                line,
                format!("missing space before {:?}", token.tok),
            ));
        }
        let (operand, next) = operand(line, tokens, at)?;
        operands.push(operand);
        at = next;
    }
    if operands.is_empty() {
        return Err(GoError::new(line, "empty command"));
    }
    Ok((Command { operands }, at))
}

fn operand(line: usize, tokens: &[Token], mut at: usize) -> Result<(Operand, usize), GoError> {
    let token = &tokens[at];
    at += 1;
    let mut fields = Vec::new();
    let term = match &token.tok {
        Tok::Dot => Term::Dot,
        Tok::Field(name) => {
            fields.push(name.clone());
            Term::Dot
        }
        Tok::Variable(name) => Term::Variable(name.clone()),
        Tok::Literal(value) => Term::Literal(value.clone()),
        Tok::Ident(name) if name == "nil" => Term::Nil,
        Tok::Ident(name) => Term::Function(name.clone()),
        Tok::Open => {
            let inner_end = closing(line, tokens, at)?;
            let inner = pipeline(line, &tokens[at..inner_end], "parenthesized pipeline")?;
            at = inner_end + 1;
            Term::Pipe(Box::new(inner))
        }
        other => {
            return Err(GoError::new(
                line,
                format!("unexpected {other:?} in operand"),
            ))
        }
    };
    while let Some(Token {
        tok: Tok::Field(name),
        spaced: false,
    }) = tokens.get(at)
    {
        fields.push(name.clone());
        at += 1;
    }
    Ok((Operand { term, fields }, at))
}

/// The index of the `)` matching the `(` before `at`.
fn closing(line: usize, tokens: &[Token], at: usize) -> Result<usize, GoError> {
    let mut depth = 1;
    for (i, token) in tokens.iter().enumerate().skip(at) {
        match token.tok {
            Tok::Open => depth += 1,
            Tok::Close => {
                depth -= 1;
                if depth == 0 {
                    return Ok(i);
                }
            }
            _ => {}
        }
    }
    Err(GoError::new(line, "unclosed left paren"))
}
