//! The renderings of [`Explained`]: a readable text view (tables, colour
//! on a terminal), the reference's JSON and YAML documents, `key=value`
//! lines and shell assignments that can be `eval`ed.

use super::{ComponentPart, Entry, Explained, StackPart};
use hub_state::ZERO_TIME;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The output formats of `hub explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Json,
    Yaml,
    Kv,
    Sh,
}

/// The document `--json` and `--yaml` print: the keys of the reference's
/// `hub explain --json` (struct fields in its order, map keys sorted).
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    pub meta: Meta<'a>,
    pub timestamp: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub status: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub message: &'a str,
    #[serde(rename = "stackParameters", skip_serializing_if = "BTreeMap::is_empty")]
    pub stack_parameters: BTreeMap<&'a str, &'a str>,
    #[serde(rename = "stackOutputs", skip_serializing_if = "BTreeMap::is_empty")]
    pub stack_outputs: BTreeMap<&'a str, Shown<'a>>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub provides: BTreeMap<&'a str, &'a [String]>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub components: BTreeMap<&'a str, ComponentDocument<'a>>,
}

#[derive(Debug, Serialize)]
pub struct Meta<'a> {
    #[serde(skip_serializing_if = "str::is_empty")]
    pub kind: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub name: &'a str,
}

#[derive(Debug, Serialize)]
pub struct ComponentDocument<'a> {
    pub timestamp: &'a str,
    pub timestamps: Timestamps<'a>,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub status: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub message: &'a str,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<&'a str, &'a str>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub outputs: BTreeMap<&'a str, Shown<'a>>,
    #[serde(rename = "rawOutputs", skip_serializing_if = "BTreeMap::is_empty")]
    pub raw_outputs: BTreeMap<&'a str, &'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<&'a hub_state::Health>,
}

#[derive(Debug, Serialize)]
pub struct Timestamps<'a> {
    pub start: &'a str,
    pub end: &'a str,
}

/// A missing time is written as Go's zero time, as the reference does.
fn time(text: &str) -> &str {
    if text.is_empty() {
        ZERO_TIME
    } else {
        text
    }
}

/// Entries by name; a later one with the same name wins.
fn by_name(entries: &[Entry]) -> BTreeMap<&str, &str> {
    entries
        .iter()
        .map(|e| (e.name.as_str(), e.value.as_str()))
        .collect()
}

/// An output's value in the document: its text, or the list or map it
/// was recorded as.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum Shown<'a> {
    Text(&'a str),
    Structured(&'a serde_json::Value),
}

/// Outputs by name, lists and maps as such when `structured` (`--json`,
/// `--yaml`), else as their JSON text (`--kv`, `--sh`, `state list`).
fn outputs_by_name(entries: &[Entry], structured: bool) -> BTreeMap<&str, Shown<'_>> {
    entries
        .iter()
        .map(|e| {
            let shown = match (&e.structured, structured) {
                (Some(value), true) => Shown::Structured(value),
                _ => Shown::Text(e.value.as_str()),
            };
            (e.name.as_str(), shown)
        })
        .collect()
}

impl<'a> Document<'a> {
    /// `structured`: lists and maps as such (`--json`, `--yaml`), else as
    /// their JSON text.
    pub fn of(explained: &'a Explained, structured: bool) -> Document<'a> {
        let (stack_parameters, stack_outputs, provides) = match &explained.stack {
            Some(stack) => (
                by_name(&stack.parameters),
                outputs_by_name(&stack.outputs, structured),
                stack
                    .provides
                    .iter()
                    .map(|(k, v)| (k.as_str(), v.as_slice()))
                    .collect(),
            ),
            None => Default::default(),
        };
        Document {
            meta: Meta {
                kind: &explained.kind,
                name: &explained.name,
            },
            timestamp: time(&explained.timestamp),
            status: &explained.status,
            message: &explained.message,
            stack_parameters,
            stack_outputs,
            provides,
            components: explained
                .components
                .iter()
                .map(|c| (c.name.as_str(), ComponentDocument::of(c, structured)))
                .collect(),
        }
    }
}

impl<'a> ComponentDocument<'a> {
    pub fn of(component: &'a ComponentPart, structured: bool) -> ComponentDocument<'a> {
        ComponentDocument {
            timestamp: time(&component.timestamp),
            timestamps: Timestamps {
                start: time(&component.start),
                end: time(&component.end),
            },
            status: &component.status,
            message: &component.message,
            parameters: by_name(&component.parameters),
            outputs: outputs_by_name(&component.outputs, structured),
            raw_outputs: by_name(&component.raw_outputs),
            health: component.health.as_ref(),
        }
    }
}

/// `--json`: indented by two spaces, `<`, `>`, `&`, U+2028 and U+2029
/// escaped as Go's encoder escapes them, one newline at the end.
pub fn json(explained: &Explained) -> String {
    let text = serde_json::to_string_pretty(&Document::of(explained, true))
        .expect("a document of strings serialises");
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out.push('\n');
    out
}

/// `--yaml`: the same document as YAML.
pub fn yaml(explained: &Explained) -> Result<String, yaml_serde::Error> {
    yaml_serde::to_string(&Document::of(explained, true))
}

/// Every value of the document with the path of keys that leads to it,
/// map keys sorted; a list (the components providing a capability)
/// becomes one value, its items separated by spaces.
fn leaves(explained: &Explained) -> Vec<(Vec<String>, String)> {
    fn walk(
        value: &serde_json::Value,
        path: &mut Vec<String>,
        out: &mut Vec<(Vec<String>, String)>,
    ) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    path.push(key.clone());
                    walk(value, path, out);
                    path.pop();
                }
            }
            serde_json::Value::Array(items) => {
                let items: Vec<String> = items.iter().map(text_of).collect();
                out.push((path.clone(), items.join(" ")));
            }
            other => out.push((path.clone(), text_of(other))),
        }
    }
    fn text_of(value: &serde_json::Value) -> String {
        match value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
    let document = serde_json::to_value(Document::of(explained, false))
        .expect("a document of strings serialises");
    let mut out = Vec::new();
    walk(&document, &mut Vec::new(), &mut out);
    out
}

/// `--kv`: `path.to.key=value`, one per line; in values, `\` is written
/// `\\`, a newline `\n` and a carriage return `\r`, so that every value
/// stays on its line.
pub fn kv(explained: &Explained) -> String {
    let mut out = String::new();
    for (path, value) in leaves(explained) {
        let value = value
            .replace('\\', "\\\\")
            .replace('\n', "\\n")
            .replace('\r', "\\r");
        let _ = writeln!(out, "{}={value}", path.join("."));
    }
    out
}

/// `--sh`: `name='value'` lines for `eval`: the name is the path of keys
/// joined by `_`, every character other than a letter, a digit or `_`
/// replaced by `_`; the value single-quoted (a `'` inside written `'\''`),
/// so nothing in it is expanded. Returns the text and the names that two
/// keys came to share (the first one is kept).
pub fn sh(explained: &Explained) -> (String, Vec<String>) {
    let mut out = String::new();
    let mut seen = std::collections::HashSet::new();
    let mut clashes = Vec::new();
    for (path, value) in leaves(explained) {
        let name = shell_name(&path);
        if !seen.insert(name.clone()) {
            clashes.push(name);
            continue;
        }
        let _ = writeln!(out, "{name}={}", shell_quote(&value));
    }
    (out, clashes)
}

fn shell_name(path: &[String]) -> String {
    path.join("_")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// `'value'`, with each `'` closed, escaped and reopened.
pub fn shell_quote(value: &str) -> String {
    format!("'{}'", value.replace('\'', "'\\''"))
}

/// How the text view looks: colour only on a terminal, never with
/// `NO_COLOR` set (to anything but the empty string).
#[derive(Debug, Clone, Copy)]
pub struct Style {
    pub colour: bool,
}

impl Style {
    pub fn detect(terminal: bool, no_color: Option<&str>) -> Style {
        Style {
            colour: terminal && no_color.is_none_or(str::is_empty),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        match self.colour {
            true => format!("\x1b[{code}m{text}\x1b[0m"),
            false => text.to_string(),
        }
    }

    fn heading(&self, text: &str) -> String {
        self.paint("1", text)
    }

    fn column_names(&self, text: &str) -> String {
        self.paint("2", text)
    }

    fn status(&self, status: &str) -> String {
        let code = match status {
            "deployed" | "undeployed" | "success" => "32",
            "error" | "failed" | "incomplete" => "31",
            s if s.ends_with("ing") => "33",
            _ => return status.to_string(),
        };
        self.paint(code, status)
    }
}

/// The default view: the stack, then each component, as tables.
pub fn text(explained: &Explained, style: Style) -> String {
    let mut out = String::new();
    if let Some(stack) = &explained.stack {
        stack_text(&mut out, explained, stack, style);
    }
    for component in &explained.components {
        component_text(&mut out, component, style);
    }
    out
}

fn stack_text(out: &mut String, explained: &Explained, stack: &StackPart, style: Style) {
    let kind = match explained.kind.as_str() {
        "" => String::new(),
        kind => format!(" ({kind})"),
    };
    let _ = writeln!(
        out,
        "{}{kind}",
        style.heading(&format!("stack {}", explained.name))
    );
    let _ = writeln!(
        out,
        "status: {}, at {}",
        style.status(or_dash(&explained.status)),
        or_dash(&explained.timestamp)
    );
    if !explained.message.is_empty() {
        let _ = writeln!(out, "message: {}", one_line(&explained.message));
    }
    values_text(out, style, 0, &stack.parameters, &stack.outputs);
    let provides = stack
        .provides
        .iter()
        .map(|(capability, by)| vec![capability.clone(), by.join(", ")])
        .collect();
    section(
        out,
        style,
        0,
        "provides",
        &["CAPABILITY", "PROVIDED BY"],
        provides,
    );
    if !explained.components.is_empty() {
        // A HEALTH column once `hub check` has recorded one.
        let checked = explained.components.iter().any(|c| c.health.is_some());
        let rows = explained
            .components
            .iter()
            .map(|c| {
                let mut row = vec![
                    c.name.clone(),
                    style.status(or_dash(&c.status)),
                    duration(c),
                    c.timestamp.clone(),
                ];
                if checked {
                    row.push(
                        c.health
                            .as_ref()
                            .map_or("-".into(), |h| h.status.to_string()),
                    );
                }
                row
            })
            .collect();
        let headers: &[&str] = match checked {
            true => &["NAME", "STATUS", "DURATION", "UPDATED", "HEALTH"],
            false => &["NAME", "STATUS", "DURATION", "UPDATED"],
        };
        section(out, style, 0, "components", headers, rows);
    }
}

fn component_text(out: &mut String, component: &ComponentPart, style: Style) {
    out.push('\n');
    let _ = writeln!(
        out,
        "{}: {}",
        style.heading(&format!("component {}", component.name)),
        style.status(or_dash(&component.status))
    );
    let mut facts = Vec::new();
    if !component.kind.is_empty() && component.kind != component.name {
        facts.push(format!("kind: {}", component.kind));
    }
    if !component.version.is_empty() {
        facts.push(format!("version: {}", component.version));
    }
    if !component.timestamp.is_empty() {
        facts.push(format!("updated: {}", component.timestamp));
    }
    let took = duration(component);
    if !took.is_empty() {
        facts.push(format!("took: {took}"));
    }
    if let Some(health) = &component.health {
        facts.push(format!(
            "health: {} (checked {})",
            health.status, health.time
        ));
    }
    if !facts.is_empty() {
        let _ = writeln!(out, "  {}", facts.join(", "));
    }
    if !component.message.is_empty() {
        let _ = writeln!(out, "  message: {}", one_line(&component.message));
    }
    values_text(out, style, 2, &component.parameters, &component.outputs);
    section(
        out,
        style,
        2,
        "raw outputs",
        &["NAME", "VALUE"],
        entries(&component.raw_outputs, |_| Vec::new()),
    );
}

/// The tables of parameters and of outputs.
fn values_text(
    out: &mut String,
    style: Style,
    indent: usize,
    parameters: &[Entry],
    outputs: &[Entry],
) {
    let parameters = entries(parameters, |e| vec![e.env.clone()]);
    section(
        out,
        style,
        indent,
        "parameters",
        &["NAME", "VALUE", "ENV"],
        parameters,
    );
    let outputs = entries(outputs, |e| vec![e.kind.clone(), e.brief.clone()]);
    section(
        out,
        style,
        indent,
        "outputs",
        &["NAME", "VALUE", "KIND", "BRIEF"],
        outputs,
    );
}

/// `-l`: the operations the state records, oldest first.
pub fn operations(explained: &Explained, style: Style) -> String {
    let mut out = String::new();
    if explained.operations.is_empty() {
        out.push_str("no operations recorded\n");
        return out;
    }
    let _ = writeln!(out, "{}", style.heading("operations"));
    for op in &explained.operations {
        let by = match op.initiator.as_str() {
            "" => String::new(),
            who => format!(" by {who}"),
        };
        let _ = writeln!(
            out,
            "  {} {}: {}, at {}{by}",
            op.operation,
            op.id,
            style.status(or_dash(op.status.as_str())),
            or_dash(&op.timestamp)
        );
        if !op.description.is_empty() {
            let _ = writeln!(out, "    {}", op.description);
        }
        if !op.options.is_empty() {
            let options: Vec<String> = op
                .options
                .iter()
                .map(|(k, v)| format!("{k}={}", super::value_text(v)))
                .collect();
            let _ = writeln!(out, "    options: {}", options.join(" "));
        }
        for phase in &op.phases {
            let _ = writeln!(
                out,
                "    {}: {}",
                phase.phase,
                style.status(or_dash(phase.status.as_str()))
            );
        }
        if !op.logs.is_empty() {
            let _ = writeln!(out, "    logs:");
            for line in op.logs.lines() {
                let _ = writeln!(out, "      {line}");
            }
        }
    }
    out
}

fn or_dash(text: &str) -> &str {
    if text.is_empty() {
        "-"
    } else {
        text
    }
}

/// The first line of a value, saying how many more there are.
fn one_line(text: &str) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("").to_string();
    match lines.count() {
        0 => first,
        1 => format!("{first} … (1 more line)"),
        n => format!("{first} … ({n} more lines)"),
    }
}

fn duration(component: &ComponentPart) -> String {
    match super::time::seconds_between(&component.start, &component.end) {
        Some(seconds) if seconds < 60.0 => format!("{seconds:.2}s"),
        Some(seconds) => {
            let seconds = seconds.round() as u64;
            format!("{}m{:02}s", seconds / 60, seconds % 60)
        }
        None => String::new(),
    }
}

fn entries(list: &[Entry], extra: impl Fn(&Entry) -> Vec<String>) -> Vec<Vec<String>> {
    list.iter()
        .map(|e| {
            let mut row = vec![e.name.clone(), one_line(&e.value)];
            row.extend(extra(e));
            row
        })
        .collect()
}

/// A titled table; nothing when it has no rows. Columns empty in every
/// row are left out.
fn section(
    out: &mut String,
    style: Style,
    indent: usize,
    title: &str,
    headers: &[&str],
    rows: Vec<Vec<String>>,
) {
    if rows.is_empty() {
        return;
    }
    let pad = " ".repeat(indent);
    let _ = writeln!(out, "\n{pad}{}", style.heading(title));
    let used: Vec<usize> = (0..headers.len())
        .filter(|&i| i < 2 || rows.iter().any(|r| r.get(i).is_some_and(|c| !c.is_empty())))
        .collect();
    let width = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| visible_len(c)))
            .chain([headers[i].len()])
            .max()
            .unwrap_or(0)
    };
    let widths: Vec<usize> = used.iter().map(|&i| width(i)).collect();
    let line = |cells: Vec<String>| {
        let mut text = String::new();
        for (n, cell) in cells.iter().enumerate() {
            text.push_str(cell);
            if n + 1 < cells.len() {
                text.push_str(&" ".repeat(widths[n] - visible_len(cell) + 2));
            }
        }
        text.trim_end().to_string()
    };
    let header = line(used.iter().map(|&i| headers[i].to_string()).collect());
    let _ = writeln!(out, "{pad}  {}", style.column_names(&header));
    for row in &rows {
        let cells = used
            .iter()
            .map(|&i| row.get(i).cloned().unwrap_or_default())
            .collect();
        let _ = writeln!(out, "{pad}  {}", line(cells));
    }
}

/// Characters shown, colour codes left out.
fn visible_len(text: &str) -> usize {
    let mut count = 0;
    let mut in_escape = false;
    for c in text.chars() {
        match (in_escape, c) {
            (false, '\x1b') => in_escape = true,
            (true, 'm') => in_escape = false,
            (true, _) => {}
            (false, _) => count += 1,
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quoting_keeps_everything_literal() {
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's $HOME"), "'it'\\''s $HOME'");
        assert_eq!(
            shell_name(&[
                "components".into(),
                "app".into(),
                "outputs".into(),
                "component.app.url".into()
            ]),
            "components_app_outputs_component_app_url"
        );
    }

    #[test]
    fn colour_only_on_a_terminal_without_no_color() {
        assert!(Style::detect(true, None).colour);
        assert!(Style::detect(true, Some("")).colour);
        assert!(!Style::detect(true, Some("1")).colour);
        assert!(!Style::detect(false, None).colour);
    }

    #[test]
    fn json_escapes_as_go_does() {
        let explained = Explained {
            name: "a<b>&c".into(),
            ..Explained::default()
        };
        let text = json(&explained);
        assert!(
            text.contains(r#""name": "a\u003cb\u003e\u0026c""#),
            "{text}"
        );
        assert!(
            text.contains(r#""timestamp": "0001-01-01T00:00:00Z""#),
            "{text}"
        );
    }
}
