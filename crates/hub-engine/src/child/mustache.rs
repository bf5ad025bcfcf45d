//! The `_mustache` template kind: real Mustache as the reference renders
//! it (alexkappa/mustache semantics, which differ from the Mustache spec).
//!
//! * `{{x}}` escapes `& < > " '` (`&amp; &lt; &gt; &quot; &apos;`);
//!   `{{{x}}}` and `{{& x}}` do not; values print as Go prints them
//!   (a list as `[a b]`), untrimmed.
//! * Sections `{{#x}}…{{/x}}` are taken once for a true value, a string or
//!   a number (dot is the value), once per item of a list, and skipped for
//!   a false or empty value; inverted sections `{{^x}}` are taken for a
//!   false or empty value. An inverted section over a true value fails, as
//!   in the reference.
//! * A name missing inside a taken section renders empty; outside any
//!   section it is an error naming the line.
//! * A section, comment or delimiter tag alone on its line (blanks around
//!   it allowed) drops its indentation and the newline that follows it,
//!   the newline once: a list section repeats its body with its leading
//!   newline from the second item on (the reference's blank lines between
//!   items).
//! * Names are letters, digits, `_` and `.`; any other character (`-`) is
//!   an error, as in the reference.
//! * `{{=<% %>=}}` changes the delimiters; comments `{{! … }}` vanish;
//!   partials are not supported.

use gotemplate::funcs::escape;
use gotemplate::Value;

/// A problem at a line of the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MustacheError {
    pub line: usize,
    pub message: String,
    /// The name that could not be found, when that is the problem.
    pub missing: Option<String>,
    /// A name with a character names cannot hold, when that is the problem.
    pub bad_name: bool,
}

impl MustacheError {
    fn new(line: usize, message: impl Into<String>) -> Self {
        MustacheError {
            line,
            message: message.into(),
            missing: None,
            bad_name: false,
        }
    }
}

#[derive(Debug)]
enum Node {
    Text(String),
    Variable {
        line: usize,
        name: String,
        escape: bool,
    },
    Section {
        line: usize,
        name: String,
        inverted: bool,
        standalone_open: bool,
        standalone_close: bool,
        body: Vec<Node>,
    },
    /// A standalone comment or delimiter change: it only eats a newline.
    Standalone,
}

/// Renders `source` with `data` (a map) as the context.
pub fn render(source: &str, data: &Value) -> Result<String, MustacheError> {
    let mut parser = Parser {
        source,
        at: 0,
        open: "{{".into(),
        close: "}}".into(),
        last_close_standalone: false,
    };
    let nodes = parser.nodes(None)?;
    let mut out = Renderer {
        out: String::new(),
        skip_newline: false,
    };
    out.nodes(&nodes, &mut vec![data.clone()])?;
    Ok(out.out)
}

struct Parser<'a> {
    source: &'a str,
    at: usize,
    open: String,
    close: String,
    /// Whether the section closing tag just read was alone on its line.
    last_close_standalone: bool,
}

impl<'a> Parser<'a> {
    fn line(&self, offset: usize) -> usize {
        self.source[..offset].matches('\n').count() + 1
    }

    /// Whether the tag spanning `start..end` is alone on its line.
    fn standalone(&self, start: usize, end: usize) -> bool {
        let before = &self.source[..start];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let alone_before = before[line_start..].chars().all(|c| c == ' ' || c == '\t');
        let after = &self.source[end..];
        alone_before && (after.starts_with('\n') || after.starts_with("\r\n"))
    }

    /// Nodes up to the closing tag of `section` (or the end).
    fn nodes(&mut self, section: Option<(&str, usize)>) -> Result<Vec<Node>, MustacheError> {
        let mut nodes = Vec::new();
        loop {
            let rest = &self.source[self.at..];
            let Some(found) = rest.find(self.open.as_str()) else {
                if !rest.is_empty() {
                    nodes.push(Node::Text(rest.to_string()));
                }
                self.at = self.source.len();
                if let Some((name, line)) = section {
                    return Err(MustacheError::new(
                        line,
                        format!("section `{name}` is not closed"),
                    ));
                }
                return Ok(nodes);
            };
            if found > 0 {
                nodes.push(Node::Text(rest[..found].to_string()));
            }
            let Tag {
                line,
                raw,
                triple,
                alone,
            } = self.tag(self.at + found)?;
            if triple {
                nodes.push(Node::Variable {
                    line,
                    name: checked_name(raw, line)?,
                    escape: false,
                });
                continue;
            }
            let standalone_kind = matches!(raw.chars().next(), Some('!' | '=' | '#' | '^' | '/'));
            if alone && standalone_kind {
                drop_indentation(&mut nodes);
            }
            match raw.chars().next() {
                Some('!') => {
                    if alone {
                        nodes.push(Node::Standalone);
                    }
                }
                Some('=') => {
                    self.set_delimiters(raw, line)?;
                    if alone {
                        nodes.push(Node::Standalone);
                    }
                }
                Some('#') | Some('^') => nodes.push(self.section(raw, line, alone)?),
                Some('/') => {
                    let name = raw[1..].trim();
                    self.close_section(section, name, line, alone)?;
                    return Ok(nodes);
                }
                Some('>') => return Err(MustacheError::new(line, "partials are not supported")),
                Some('&') => nodes.push(Node::Variable {
                    line,
                    name: checked_name(raw[1..].trim(), line)?,
                    escape: false,
                }),
                Some(_) => nodes.push(Node::Variable {
                    line,
                    name: checked_name(raw, line)?,
                    escape: true,
                }),
                None => return Err(MustacheError::new(line, "empty tag")),
            }
        }
    }

    /// The tag whose opening delimiter is at `start`; reading goes on
    /// after it.
    fn tag(&mut self, start: usize) -> Result<Tag<'a>, MustacheError> {
        let source: &'a str = self.source;
        let line = self.line(start);
        let body_start = start + self.open.len();
        let triple = source[body_start..].starts_with('{');
        let closer = if triple {
            format!("}}{}", self.close)
        } else {
            self.close.clone()
        };
        let search_from = body_start + usize::from(triple);
        let Some(length) = source[search_from..].find(closer.as_str()) else {
            return Err(MustacheError::new(line, "unclosed tag"));
        };
        let end = search_from + length + closer.len();
        let raw = source[search_from..search_from + length].trim();
        self.at = end;
        Ok(Tag {
            line,
            raw,
            triple,
            alone: self.standalone(start, end),
        })
    }

    /// `{{=<% %>=}}`: the delimiters from here on.
    fn set_delimiters(&mut self, raw: &str, line: usize) -> Result<(), MustacheError> {
        let inner = raw.trim_start_matches('=').trim_end_matches('=').trim();
        let mut parts = inner.split_whitespace();
        match (parts.next(), parts.next(), parts.next()) {
            (Some(open), Some(close), None) => {
                self.open = open.to_string();
                self.close = close.to_string();
                Ok(())
            }
            _ => Err(MustacheError::new(
                line,
                format!("invalid delimiter tag `{raw}`"),
            )),
        }
    }

    /// A section (`#`) or inverted section (`^`) opened by tag `raw`, read
    /// up to its closing tag.
    fn section(&mut self, raw: &str, line: usize, alone: bool) -> Result<Node, MustacheError> {
        let name = checked_name(raw[1..].trim(), line)?;
        let body = self.nodes(Some((&name, line)))?;
        let standalone_close = self.last_close_standalone;
        Ok(Node::Section {
            line,
            inverted: raw.starts_with('^'),
            name,
            standalone_open: alone,
            standalone_close,
            body,
        })
    }

    /// The closing tag of section `name`: it must close the open one.
    fn close_section(
        &mut self,
        section: Option<(&str, usize)>,
        name: &str,
        line: usize,
        alone: bool,
    ) -> Result<(), MustacheError> {
        match section {
            Some((open, _)) if open == name => {
                self.last_close_standalone = alone;
                Ok(())
            }
            Some((open, _)) => Err(MustacheError::new(
                line,
                format!("`{{{{/{name}}}}}` closes section `{open}`"),
            )),
            None => Err(MustacheError::new(
                line,
                format!("`{{{{/{name}}}}}` closes no section"),
            )),
        }
    }
}

/// A tag: its line, its text between the delimiters (trimmed), whether it
/// is a triple mustache (`{{{name}}}`), and whether it is alone on its
/// line.
struct Tag<'a> {
    line: usize,
    raw: &'a str,
    triple: bool,
    alone: bool,
}

/// Removes the blanks that indent a standalone tag: the end of the text
/// before it on its line.
fn drop_indentation(nodes: &mut Vec<Node>) {
    if let Some(Node::Text(text)) = nodes.last_mut() {
        let kept = text.trim_end_matches([' ', '\t']).len();
        text.truncate(kept);
        if text.is_empty() {
            nodes.pop();
        }
    }
}

/// A name as the reference reads it: letters, digits, `_` and `.`
/// (`.` alone is the current item).
fn checked_name(name: &str, line: usize) -> Result<String, MustacheError> {
    match name
        .chars()
        .find(|c| !(c.is_alphanumeric() || *c == '_' || *c == '.'))
    {
        None => Ok(name.to_string()),
        Some(c) => Err(MustacheError {
            bad_name: true,
            ..MustacheError::new(
                line,
                format!("`{name}`: `{c}` cannot be part of a name (names hold letters, digits, `_` and `.`)"),
            )
        }),
    }
}

struct Renderer {
    out: String,
    skip_newline: bool,
}

impl Renderer {
    fn text(&mut self, text: &str) {
        let text = if std::mem::take(&mut self.skip_newline) {
            text.strip_prefix("\r\n")
                .or_else(|| text.strip_prefix('\n'))
                .unwrap_or(text)
        } else {
            text
        };
        self.out.push_str(text);
    }

    fn nodes(&mut self, nodes: &[Node], stack: &mut Vec<Value>) -> Result<(), MustacheError> {
        for node in nodes {
            match node {
                Node::Text(text) => self.text(text),
                Node::Standalone => self.skip_newline = true,
                Node::Variable { line, name, escape } => {
                    let text = match lookup(stack, name) {
                        Some(Value::Nil) => String::new(),
                        Some(value) => value.to_go_string(),
                        None if stack.len() > 1 => String::new(),
                        None => return Err(missing(*line, name)),
                    };
                    self.text(&if *escape { escape_html(&text) } else { text });
                }
                Node::Section {
                    line,
                    name,
                    inverted,
                    standalone_open,
                    standalone_close,
                    body,
                } => {
                    let value = match lookup(stack, name) {
                        Some(value) => value,
                        None if stack.len() > 1 => Value::Nil,
                        None => return Err(missing(*line, name)),
                    };
                    if *standalone_open {
                        self.skip_newline = true;
                    }
                    if *inverted {
                        if value.truthy() {
                            return Err(MustacheError::new(
                                *line,
                                format!("inverted section `{{{{^{name}}}}}` over a true value: failed to lookup `{name}` (as in the reference)"),
                            ));
                        }
                        self.nodes(body, stack)?;
                    } else if value.truthy() {
                        let items = match value {
                            Value::List(items) => items,
                            other => vec![other],
                        };
                        for item in items {
                            stack.push(item);
                            let result = self.nodes(body, stack);
                            stack.pop();
                            result?;
                        }
                    }
                    if *standalone_close {
                        self.skip_newline = true;
                    }
                }
            }
        }
        Ok(())
    }
}

fn missing(line: usize, name: &str) -> MustacheError {
    MustacheError {
        line,
        message: format!("unknown parameter `{name}`"),
        missing: Some(name.to_string()),
        bad_name: false,
    }
}

/// `.` is the innermost value; other names are looked up from the
/// innermost context out, `a.b` step by step.
fn lookup(stack: &[Value], name: &str) -> Option<Value> {
    if name == "." {
        return stack.last().cloned();
    }
    let mut parts = name.split('.');
    let head = parts.next()?;
    let mut value = stack.iter().rev().find_map(|frame| match frame {
        Value::Map(map) => map.get(head).cloned(),
        _ => None,
    })?;
    for part in parts {
        value = match value {
            Value::Map(mut map) => map.remove(part)?,
            _ => return None,
        };
    }
    Some(value)
}

fn escape_html(text: &str) -> String {
    escape(text, |c| {
        Some(
            match c {
                '&' => "&amp;",
                '<' => "&lt;",
                '>' => "&gt;",
                '"' => "&quot;",
                '\'' => "&apos;",
                _ => return None,
            }
            .to_string(),
        )
    })
}
