//! Reading rules: the stack's `policies:` and `--policy FILE`, each rule
//! with the line of its `deny` or `warn`.

use super::{PolicyError, PolicySet};
use hub_manifest::diag::Location;
use hub_manifest::Policy;
use hub_manifest::{locate, Segment};
use hub_plan::source::stack::Stack;
use std::path::{Path, PathBuf};

impl PolicySet {
    /// The rules of the stack's `policies:` (its `fromStack` parents'
    /// first), each located in the file that writes it.
    pub fn add_stack(&mut self, stack: &Stack) -> Result<(), PolicyError> {
        let policies = &stack.elaborated.stack.policies;
        if policies.is_empty() {
            return Ok(());
        }
        let candidates: Vec<PathBuf> = candidate_files(stack).iter().map(|p| shown(p)).collect();
        let texts: Vec<(PathBuf, String)> = candidates
            .into_iter()
            .filter_map(|path| std::fs::read_to_string(&path).ok().map(|t| (path, t)))
            .collect();
        let fallback = stack
            .file
            .clone()
            .or_else(|| stack.manifest.clone())
            .map(|p| shown(&p))
            .unwrap_or_default();
        for rule in policies {
            let location = texts
                .iter()
                .find_map(|(path, text)| {
                    let list = [Segment::Key("policies".into())];
                    rule_line(text, &list, rule)
                        .map(|(line, column)| Location::at(path, line, column))
                })
                .unwrap_or_else(|| Location::file(&fallback));
            self.add_rule(rule, location)?;
        }
        Ok(())
    }

    /// The rules of a policy file: a YAML list of rules, or a mapping with
    /// the list under `policies`.
    pub fn add_file(&mut self, path: &Path) -> Result<(), PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let yaml_error = |message: String, line: Option<usize>| PolicyError::Yaml {
            message,
            location: match line {
                Some(line) => Location::at(path, line, 1),
                None => Location::file(path),
            },
        };
        let value: yaml_serde::Value = yaml_serde::from_str(&text)
            .map_err(|e| yaml_error(e.to_string(), e.location().map(|l| l.line())))?;
        let (list, rules): (Vec<Segment>, yaml_serde::Value) = match value {
            yaml_serde::Value::Mapping(mut map) => match map.remove("policies") {
                Some(rules) => (vec![Segment::Key("policies".into())], rules),
                None => return Err(yaml_error("a mapping without `policies`".into(), Some(1))),
            },
            yaml_serde::Value::Null => return Ok(()),
            other => (Vec::new(), other),
        };
        unknown_keys(&text, &list, &rules, path)?;
        let rules: Vec<Policy> =
            yaml_serde::from_value(rules).map_err(|e| yaml_error(e.to_string(), None))?;
        for rule in &rules {
            let location = rule_line(&text, &list, rule)
                .map_or_else(|| Location::file(path), |(l, c)| Location::at(path, l, c));
            self.add_rule(rule, location)?;
        }
        Ok(())
    }

    fn add_rule(&mut self, rule: &Policy, location: Location) -> Result<(), PolicyError> {
        self.push(&rule.name, &rule.deny, &rule.warn, &rule.message, location)
    }
}

/// A key of a rule that is not one of a rule's, refused (with the key it
/// most likely stands for): a rule with a misspelt `deny` would otherwise
/// be read without it.
fn unknown_keys(
    text: &str,
    list: &[Segment],
    rules: &yaml_serde::Value,
    path: &Path,
) -> Result<(), PolicyError> {
    let known: Vec<String> = ["name", "deny", "warn", "message"]
        .map(String::from)
        .to_vec();
    let Some(items) = rules.as_sequence() else {
        return Ok(());
    };
    for (index, item) in items.iter().enumerate() {
        let Some(map) = item.as_mapping() else {
            continue;
        };
        for key in map.keys().filter_map(|k| k.as_str()) {
            if known.iter().any(|k| k == key) {
                continue;
            }
            let mut at = list.to_vec();
            at.extend([Segment::Index(index), Segment::Key(key.to_string())]);
            let location = locate(text, &at)
                .map_or_else(|| Location::file(path), |(l, c)| Location::at(path, l, c));
            let name = map
                .get("name")
                .and_then(|n| n.as_str())
                .unwrap_or_default()
                .to_string();
            let problem = match hub_manifest::keys::suggest(key, &known) {
                Some(suggestion) => format!(
                    "has an unknown key `{key}` (did you mean `{}`?)",
                    suggestion.key
                ),
                None => format!("has an unknown key `{key}`"),
            };
            return Err(PolicyError::Shape {
                name,
                problem,
                location,
            });
        }
    }
    Ok(())
}

/// The files a stack's rules may be written in: the elaborated file, the
/// stack manifest, then every file elaborate read (the parents).
fn candidate_files(stack: &Stack) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = stack.file.iter().chain(&stack.manifest).cloned().collect();
    files.extend(stack.elaborated.provenance.sources.iter().cloned());
    files
}

/// `path` from the current folder when it is below it, as the user would
/// write it.
fn shown(path: &Path) -> PathBuf {
    std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(Path::to_path_buf))
        .unwrap_or_else(|| path.to_path_buf())
}

/// The (line, column) of the `deny` or `warn` of the rule named like
/// `rule` in the list at `list` (the empty path: the document is the list).
fn rule_line(text: &str, list: &[Segment], rule: &Policy) -> Option<(usize, usize)> {
    let list_at = if list.is_empty() {
        None
    } else {
        Some(locate(text, list)?)
    };
    let lines: Vec<&str> = text.lines().collect();
    let effect = if rule.deny.trim().is_empty() {
        "warn"
    } else {
        "deny"
    };
    for index in 0.. {
        let mut item = list.to_vec();
        item.push(Segment::Index(index));
        let item_at = locate(text, &item)?;
        if Some(item_at) == list_at {
            return None;
        }
        let mut name = item.clone();
        name.push(Segment::Key("name".into()));
        let name_at = locate(text, &name).filter(|at| *at != item_at || names_here(&lines, *at));
        let named = name_at.is_some_and(|(line, column)| {
            lines
                .get(line - 1)
                .and_then(|l| l.get(column - 1..))
                .and_then(|rest| rest.split_once(':'))
                .is_some_and(|(_, value)| unquote(value.trim()) == rule.name)
        });
        if named {
            let mut at = item.clone();
            at.push(Segment::Key(effect.into()));
            return Some(locate(text, &at).unwrap_or(item_at));
        }
        if index > 10_000 {
            return None;
        }
    }
    None
}

/// The item's first key is `name` (`- name: x`).
fn names_here(lines: &[&str], (line, column): (usize, usize)) -> bool {
    lines
        .get(line - 1)
        .and_then(|l| l.get(column - 1..))
        .is_some_and(|rest| rest.trim_start_matches(['-', ' ']).starts_with("name"))
}

fn unquote(text: &str) -> &str {
    let text = text.split(" #").next().unwrap_or(text).trim();
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .or_else(|| text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')))
        .unwrap_or(text)
}
