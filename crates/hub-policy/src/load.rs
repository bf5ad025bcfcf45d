//! Reading rules: the stack's `policies:` and `--policy FILE`, each rule
//! with the line of its `deny` or `warn` (of its `rego` or `file`).

use super::rego::{Module, Origin};
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
            let (location, text) = texts
                .iter()
                .find_map(|(path, text)| {
                    let list = [Segment::Key("policies".into())];
                    rule_line(text, &list, rule)
                        .map(|(line, column)| (Location::at(path, line, column), text.as_str()))
                })
                .unwrap_or_else(|| (Location::file(&fallback), ""));
            self.add_rule(rule, location, text)?;
        }
        Ok(())
    }

    /// The rules of a policy file: a YAML list of rules, or a mapping with
    /// the list under `policies`; or a Rego module (`FILE.rego`).
    pub fn add_file(&mut self, path: &Path) -> Result<(), PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        if path.extension().is_some_and(|e| e == "rego") {
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let origin = Origin::file(path.to_path_buf());
            return self.add_module(&name, &text, origin.clone(), origin.start());
        }
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
            self.add_rule(rule, location, &text)?;
        }
        Ok(())
    }

    /// A rule written at `location` in `text` (the file that declares it).
    fn add_rule(
        &mut self,
        rule: &Policy,
        location: Location,
        text: &str,
    ) -> Result<(), PolicyError> {
        if rule.rego.is_empty() && rule.file.is_empty() {
            return self.push(&rule.name, &rule.deny, &rule.warn, &rule.message, location);
        }
        let shape = |problem: &str| PolicyError::Shape {
            name: rule.name.clone(),
            problem: problem.to_string(),
            location: location.clone(),
        };
        if rule.name.trim().is_empty() {
            return Err(shape("has no `name`"));
        }
        if !rule.rego.is_empty() && !rule.file.is_empty() {
            return Err(shape("has both `rego` and `file`"));
        }
        if !(rule.deny.is_empty() && rule.warn.is_empty() && rule.message.is_empty()) {
            return Err(shape(
                "has a Rego module and `deny`, `warn` or `message`: the module's `deny`, `violation` and `warn` rules give the results and their messages",
            ));
        }
        if !rule.file.is_empty() {
            let refused = |problem: String| PolicyError::RegoFile {
                name: rule.name.clone(),
                problem: format!("`{}`: {problem}", rule.file),
                location: location.clone(),
            };
            let path = module_file(&location, &rule.file).map_err(refused)?;
            let module = std::fs::read_to_string(&path)
                .map_err(|e| refused(format!("it cannot be read ({e})")))?;
            let shown = location
                .file
                .parent()
                .map_or_else(|| PathBuf::from(&rule.file), |p| p.join(&rule.file));
            let origin = Origin::file(shown);
            return self.add_module(&rule.name, &module, origin.clone(), origin.start());
        }
        let origin = inline_origin(text, &location);
        self.add_module(&rule.name, &rule.rego, origin, location)
    }

    /// Parses a Rego module, which a rule at `location` gives; its syntax
    /// error names where it is written.
    fn add_module(
        &mut self,
        name: &str,
        text: &str,
        origin: Origin,
        location: Location,
    ) -> Result<(), PolicyError> {
        let label = match origin.exact && origin.lines_before == 0 {
            true => origin.file.display().to_string(),
            false => format!("{}#{name}", origin.file.display()),
        };
        let mut module =
            Module::parse(text, &label, origin.clone()).map_err(|syntax| PolicyError::Rego {
                name: name.to_string(),
                message: syntax.message,
                location: match syntax.at {
                    Some((line, column)) => origin.at(line, column),
                    None => origin.start(),
                },
            })?;
        module.name = name.to_string();
        self.push_rego(name, module, location);
        Ok(())
    }
}

/// The file a rule's `file` names, relative to the folder of the file that
/// declares the rule: never an absolute path, nor one that leads out of
/// that folder (through `..` or a symbolic link).
fn module_file(location: &Location, written: &str) -> Result<PathBuf, String> {
    let path = Path::new(written);
    if path.is_absolute() || path.has_root() {
        return Err("it is an absolute path; write it relative to the stack file's folder".into());
    }
    let mut depth: usize = 0;
    for component in path.components() {
        match component {
            std::path::Component::ParentDir if depth == 0 => {
                return Err("it leads out of the stack file's folder through `..`".into())
            }
            std::path::Component::ParentDir => depth -= 1,
            std::path::Component::Normal(_) => depth += 1,
            _ => {}
        }
    }
    let folder = match location.file.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let real_folder = folder
        .canonicalize()
        .map_err(|e| format!("the stack file's folder cannot be read ({e})"))?;
    let real = folder
        .join(path)
        .canonicalize()
        .map_err(|e| format!("it cannot be read ({e})"))?;
    match real.starts_with(&real_folder) {
        true => Ok(real),
        false => Err("it leads out of the stack file's folder through a symbolic link".into()),
    }
}

/// Where an inline module's lines are: after the `rego:` key at
/// `location` when the value is a literal block (`rego: |`), indented as
/// its first line; else every line is the key's.
pub(crate) fn inline_origin(text: &str, location: &Location) -> Origin {
    let key_line = location.line.unwrap_or(0);
    let lines: Vec<&str> = text.lines().collect();
    let value = key_line
        .checked_sub(1)
        .and_then(|index| lines.get(index))
        .and_then(|line| line.split_once("rego:"))
        .map(|(_, value)| value.trim());
    let literal = value.is_some_and(|v| v.starts_with('|'));
    let indent = lines
        .iter()
        .skip(key_line)
        .find(|line| !line.trim().is_empty())
        .map_or(0, |line| line.len() - line.trim_start().len());
    match literal {
        true => Origin {
            file: location.file.to_path_buf(),
            lines_before: key_line,
            indent,
            exact: true,
        },
        false => Origin {
            file: location.file.to_path_buf(),
            lines_before: key_line,
            indent: location.column.unwrap_or(1),
            exact: false,
        },
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
    let known: Vec<String> = ["name", "deny", "warn", "message", "rego", "file"]
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
    let effect = if !rule.rego.is_empty() {
        "rego"
    } else if !rule.file.is_empty() {
        "file"
    } else if rule.deny.trim().is_empty() {
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
