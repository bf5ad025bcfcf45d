//! Path arithmetic for stacks and their components. Lexical only: nothing
//! here touches the file system.

use std::path::{Component, Path, PathBuf};

/// Removes `.` and folds `..` into the preceding normal component; leading
/// `..` stay. An empty result is `.`.
pub fn clean(path: &Path) -> PathBuf {
    let mut out: Vec<Component<'_>> = Vec::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => match out.last() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                _ => out.push(part),
            },
            other => out.push(other),
        }
    }
    if out.is_empty() {
        return PathBuf::from(".");
    }
    out.iter().collect()
}

/// `path` made absolute against the current folder and cleaned (links are
/// not resolved).
pub fn absolute(path: &Path) -> PathBuf {
    let joined = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    clean(&joined)
}

/// Joins `path` onto `base` unless it is absolute, and cleans the result.
pub fn rebase(base: &Path, path: &str) -> String {
    let p = Path::new(path);
    if p.is_absolute() {
        return path.to_string();
    }
    clean(&base.join(p)).to_string_lossy().into_owned()
}

/// The folder a stack's relative paths start from: the manifest's folder,
/// without trailing dot-folders (`.hub/hub.yaml` → `.`).
pub fn stack_base_dir(manifest: &Path) -> PathBuf {
    let mut dir = manifest.parent().map(Path::to_path_buf).unwrap_or_default();
    while let Some(last) = dir.file_name().and_then(|n| n.to_str()) {
        if last.starts_with('.') && last != "." && last != ".." {
            dir.pop();
        } else {
            break;
        }
    }
    if dir.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleaning() {
        assert_eq!(clean(Path::new("./a/../b")), PathBuf::from("b"));
        assert_eq!(
            clean(Path::new("../base/./components/a")),
            PathBuf::from("../base/components/a")
        );
        assert_eq!(clean(Path::new("a/../..")), PathBuf::from(".."));
        assert_eq!(clean(Path::new("")), PathBuf::from("."));
        assert_eq!(clean(Path::new("/x/../y")), PathBuf::from("/y"));
    }

    #[test]
    fn base_dirs() {
        assert_eq!(
            stack_base_dir(Path::new(".hub/hub.yaml")),
            PathBuf::from(".")
        );
        assert_eq!(
            stack_base_dir(Path::new("x/.cache/.hub/h.yaml")),
            PathBuf::from("x")
        );
        assert_eq!(stack_base_dir(Path::new("hub.yaml")), PathBuf::from("."));
        assert_eq!(
            stack_base_dir(Path::new("../s/hub.yaml")),
            PathBuf::from("../s")
        );
    }

    #[test]
    fn rebasing_keeps_absolute() {
        assert_eq!(
            rebase(Path::new("../base"), "components/a"),
            "../base/components/a"
        );
        assert_eq!(rebase(Path::new("../base"), "/opt/a"), "/opt/a");
    }
}
