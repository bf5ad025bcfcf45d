//! What git says changed, and what changed inside a stack or parameters
//! file: which parameter declarations and which `components:` entries.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// A file that differs from the base.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Changed {
    /// Absolute, under the work tree's root.
    pub path: PathBuf,
    pub how: How,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum How {
    Modified,
    Added,
    Deleted,
    Untracked,
}

impl Changed {
    /// The path relative to the work tree's root.
    pub fn shown(&self, root: &Path) -> String {
        self.path
            .strip_prefix(root)
            .unwrap_or(&self.path)
            .display()
            .to_string()
    }

    /// `` `app/main.tf` changed ``.
    pub fn describe(&self, root: &Path) -> String {
        let how = match self.how {
            How::Modified => "changed",
            How::Added => "added",
            How::Deleted => "deleted",
            How::Untracked => "added (untracked)",
        };
        format!("`{}` {how}", self.shown(root))
    }
}

/// The output of `git diff --name-status -z` (status, path, status,
/// path, …) and of `git ls-files --others -z`, as files.
pub(super) fn parse_changes(root: &Path, diff: &[u8], untracked: &[u8]) -> Vec<Changed> {
    let fields = |bytes: &[u8]| -> Vec<String> {
        bytes
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect()
    };
    let mut found = Vec::new();
    for pair in fields(diff).chunks(2) {
        let [status, path] = pair else {
            continue;
        };
        let how = match status.chars().next() {
            Some('A') => How::Added,
            Some('D') => How::Deleted,
            _ => How::Modified,
        };
        found.push(Changed {
            path: root.join(path),
            how,
        });
    }
    found.extend(fields(untracked).into_iter().map(|path| Changed {
        path: root.join(path),
        how: How::Untracked,
    }));
    found
}

/// What differs between two versions of a stack or parameters file.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct Difference {
    /// Parameters declared differently (added, removed or changed), by
    /// dotted name, with the component they are restricted to.
    pub parameters: BTreeSet<(String, Option<String>)>,
    /// Components whose entry in `components:` changed.
    pub entries: BTreeSet<String>,
    /// A version could not be read as YAML: nothing finer is known.
    pub unreadable: bool,
}

/// Compares two versions of a file (`None`: not there).
pub(super) fn compare(before: Option<&str>, after: Option<&str>) -> Difference {
    let read = |text: Option<&str>| -> Option<Value> {
        match text {
            None => Some(Value::Null),
            Some(text) => yaml_serde::from_str(text).ok(),
        }
    };
    let (Some(before), Some(after)) = (read(before), read(after)) else {
        return Difference {
            unreadable: true,
            ..Difference::default()
        };
    };
    let (old, new) = (declarations(&before), declarations(&after));
    let parameters = old
        .keys()
        .chain(new.keys())
        .filter(|key| old.get(*key) != new.get(*key))
        .cloned()
        .collect();
    let (old, new) = (entries(&before), entries(&after));
    let entries = old
        .keys()
        .chain(new.keys())
        .filter(|key| old.get(*key) != new.get(*key))
        .cloned()
        .collect();
    Difference {
        parameters,
        entries,
        unreadable: false,
    }
}

type Key = (String, Option<String>);

/// Every parameter declaration of a document's `parameters:`, nested
/// groups flattened to dotted names, without their nested lists.
fn declarations(document: &Value) -> BTreeMap<Key, Value> {
    let mut found = BTreeMap::new();
    if let Some(list) = document.get("parameters") {
        flatten(list, "", &mut found);
    }
    found
}

fn flatten(list: &Value, prefix: &str, found: &mut BTreeMap<Key, Value>) {
    for item in list.as_sequence().into_iter().flatten() {
        let Some(name) = item.get("name").and_then(Value::as_str) else {
            continue;
        };
        let name = match prefix.is_empty() {
            true => name.to_string(),
            false => format!("{prefix}.{name}"),
        };
        if let Some(nested) = item.get("parameters") {
            flatten(nested, &name, found);
        }
        let component = item
            .get("component")
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut own = item.clone();
        if let Some(map) = own.as_mapping_mut() {
            map.remove("parameters");
        }
        found.insert((name, component), own);
    }
}

/// The `components:` entries of a stack manifest, by name.
fn entries(document: &Value) -> BTreeMap<String, Value> {
    document
        .get("components")
        .and_then(Value::as_sequence)
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let name = entry.get("name").and_then(Value::as_str)?;
            Some((name.to_string(), entry.clone()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_changed_declarations_and_entries_count() {
        let before = "
components:
- {name: app, source: {dir: app}}
- {name: db, source: {dir: db}}
parameters:
- name: app
  parameters:
  - {name: size, value: 1}
  - {name: color, value: red}
- {name: region, value: eu, component: db}
";
        let after = "
components:
- {name: app, source: {dir: app}}
- {name: db, source: {dir: database}}
parameters:
- name: app
  parameters:
  - {name: size, value: 2}
  - {name: color, value: red}
- {name: region, value: eu, component: db}
- {name: extra, value: x}
";
        let difference = compare(Some(before), Some(after));
        let names: Vec<(&str, Option<&str>)> = difference
            .parameters
            .iter()
            .map(|(n, c)| (n.as_str(), c.as_deref()))
            .collect();
        assert_eq!(names, [("app.size", None), ("extra", None)]);
        assert_eq!(difference.entries, BTreeSet::from(["db".to_string()]));
        assert!(compare(Some("a: [b"), Some("a: 1")).unreadable);
        let added = compare(None, Some("parameters: [{name: x, value: 1}]"));
        assert_eq!(added.parameters.len(), 1);
    }

    #[test]
    fn git_output_is_read_as_files() {
        let root = Path::new("/repo");
        let changes = parse_changes(root, b"M\0app/a.sh\0D\0old.txt\0", b"new.txt\0");
        let described: Vec<String> = changes.iter().map(|c| c.describe(root)).collect();
        assert_eq!(
            described,
            [
                "`app/a.sh` changed",
                "`old.txt` deleted",
                "`new.txt` added (untracked)"
            ]
        );
    }
}
