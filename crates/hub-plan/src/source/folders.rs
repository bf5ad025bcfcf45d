//! `-c` entries that name folders: `.`, `../app`, `components/` select
//! the components whose folder is at or under that path (relative to the
//! current folder), with the entry's `+` signs.

use super::stack::Stack;
use crate::order::schedule::Pick;
use std::path::{Path, PathBuf};

/// An entry is a folder when it contains a `/` or is `.` or `..`.
pub fn is_folder(entry: &str) -> bool {
    let name = Pick::parse(entry).name;
    name.contains('/') || name == "." || name == ".."
}

#[derive(Debug, thiserror::Error)]
#[error("`-c {entry}`: no component of the stack has its folder at or under `{}`", dir.display())]
pub struct NoComponentsThere {
    pub entry: String,
    pub dir: PathBuf,
    /// The component folders, for the hint.
    pub folders: Vec<String>,
}

impl NoComponentsThere {
    pub fn hint(&self) -> String {
        let shown: Vec<String> = self.folders.iter().take(5).cloned().collect();
        format!(
            "a folder entry is relative to the current folder; the components' folders are: {}",
            shown.join(", ")
        )
    }
}

/// The `-c` entries with each folder entry replaced by the components it
/// selects (in the stack's order); names are kept as given.
pub fn resolve(
    stack: &Stack,
    entries: &[String],
    current: &Path,
    components_base: Option<&Path>,
) -> Result<Vec<String>, NoComponentsThere> {
    let folders: Vec<(String, Option<PathBuf>)> = stack
        .elaborated
        .stack
        .components
        .iter()
        .map(|reference| {
            let dir = stack.component_dir(reference, components_base).ok();
            (reference.name.clone(), dir.map(|d| real(&d)))
        })
        .collect();
    let mut resolved = Vec::new();
    for entry in entries {
        if !is_folder(entry) {
            resolved.push(entry.clone());
            continue;
        }
        let pick = Pick::parse(entry);
        let dir = real(&current.join(pick.name));
        let found: Vec<&String> = folders
            .iter()
            .filter(|(_, folder)| folder.as_ref().is_some_and(|f| f.starts_with(&dir)))
            .map(|(name, _)| name)
            .collect();
        if found.is_empty() {
            return Err(NoComponentsThere {
                entry: entry.clone(),
                dir,
                folders: folders
                    .iter()
                    .filter_map(|(_, f)| f.as_ref().map(|f| f.display().to_string()))
                    .collect(),
            });
        }
        resolved.extend(found.into_iter().map(|name| {
            Pick {
                name: name.as_str(),
                ..pick
            }
            .to_string()
        }));
    }
    Ok(resolved)
}

/// The path with links and `..` resolved: by the file system when it
/// exists, else by its words.
fn real(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let mut plain = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                plain.pop();
            }
            other => plain.push(other),
        }
    }
    plain
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_entries_have_a_slash_or_are_dots() {
        for (entry, folder) in [
            (".", true),
            ("..", true),
            ("+./app+", true),
            ("components/app", true),
            ("app", false),
            ("app+", false),
        ] {
            assert_eq!(is_folder(entry), folder, "{entry}");
        }
    }
}
