//! What a plan read besides the state and the component folders, each
//! with its digest, so that an apply runs only what was reviewed: the
//! stack's files (the elaborated file or the manifest, the parameters
//! files, the parents and component manifests elaboration read), and for
//! each component the plan takes, what it reads from outside its folder
//! that hub can know of — the hooks' scripts, the files its
//! `lifecycle.watch` globs match, and the folders of Terraform modules
//! its `*.tf` files source by a relative path (`source = "../modules/x"`),
//! followed into the modules they source in turn.
//!
//! Paths are written relative to the stack's folder (with `..` for a
//! file beside it), so that a plan made in one checkout is compared in
//! another; a folder's path ends in `/` and its digest is the one
//! `--changed` uses ([`fingerprint::folder_digest`]).

use crate::decide::{digest_cache::DigestCache, fingerprint, hooks};
use crate::source::stack::Stack;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// The digest of a file or folder that is not there (or cannot be read).
pub const ABSENT: &str = "absent";

/// Folders a Terraform module search does not enter.
const SKIPPED_FOLDERS: [&str; 3] = [".terraform", ".git", "node_modules"];

/// Every input of the plan of `components` (name and folder) made of
/// `stack`: its path as written and its digest, sorted by path.
pub(super) fn inputs(
    stack: &Stack,
    components: &[(String, PathBuf)],
    cache: Option<&DigestCache>,
) -> Vec<(String, String)> {
    let root = real(&stack.base_dir);
    let mut found = Inputs {
        root: root.clone(),
        files: BTreeMap::new(),
        cache,
    };
    let stack_files = stack
        .file
        .iter()
        .chain(&stack.manifest)
        .chain(&stack.elaborated.provenance.sources);
    for file in stack_files {
        found.file(file);
    }
    for (name, dir) in components {
        let dir = real(dir);
        if let Some(reference) = stack.reference(name) {
            for verb in ["deploy", "undeploy"] {
                for (_, _, script) in hooks::found(&reference.hooks, verb, &dir, &stack.base_dir) {
                    if !real(&script).starts_with(&dir) {
                        found.file(&script);
                    }
                }
            }
        }
        if let Some(globs) = stack.elaborated.stack.lifecycle.watch.get(name) {
            for glob in globs {
                found.watched(glob);
            }
        }
        found.modules(&dir);
    }
    found.files.into_iter().collect()
}

/// The inputs found so far, by the path they are written with.
struct Inputs<'c> {
    root: PathBuf,
    files: BTreeMap<String, String>,
    /// The run's digest cache, which the folders' digests reuse.
    cache: Option<&'c DigestCache>,
}

impl Inputs<'_> {
    fn file(&mut self, path: &Path) {
        let path = real(path);
        let digest = std::fs::read(&path).map_or_else(|_| ABSENT.to_string(), |b| bytes_digest(&b));
        self.files.insert(relative(&path, &self.root), digest);
    }

    fn folder(&mut self, path: &Path) {
        let digest = fingerprint::folder_digest_with(path, self.cache)
            .unwrap_or_else(|_| ABSENT.to_string());
        let mut shown = relative(path, &self.root);
        shown.push('/');
        self.files.insert(shown, digest);
    }

    /// The files a `lifecycle.watch` glob (relative to the stack's
    /// folder) matches now; a glob that is not one is said by
    /// `--affected`, and matches nothing here.
    fn watched(&mut self, glob: &str) {
        let pattern = self.root.join(glob);
        let Ok(paths) = glob::glob(&pattern.to_string_lossy()) else {
            return;
        };
        for path in paths.flatten().filter(|p| p.is_file()) {
            self.file(&path);
        }
    }

    /// The modules the `*.tf` files under `dir` source from outside it,
    /// and the modules those source, each once.
    fn modules(&mut self, dir: &Path) {
        let mut seen = BTreeSet::from([dir.to_path_buf()]);
        let mut next = vec![dir.to_path_buf()];
        while let Some(folder) = next.pop() {
            for module in module_sources(&folder) {
                let inside = seen.iter().any(|s| module.starts_with(s));
                if !inside && seen.insert(module.clone()) {
                    self.folder(&module);
                    next.push(module);
                }
            }
        }
    }
}

/// `sha256:…` of `bytes`.
pub fn bytes_digest(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let hex: String = hash.iter().map(|byte| format!("{byte:02x}")).collect();
    format!("sha256:{hex}")
}

/// The folders that the `*.tf` files under `dir` give as a module's
/// `source` by a relative path (`./…` or `../…`), resolved.
fn module_sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut folders = vec![dir.to_path_buf()];
    while let Some(folder) = folders.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            let name = entry.file_name();
            if kind.is_dir() && !SKIPPED_FOLDERS.iter().any(|s| name == *s) {
                folders.push(path);
            } else if kind.is_file() && path.extension().is_some_and(|e| e == "tf") {
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                found.extend(
                    relative_sources(&text)
                        .into_iter()
                        .map(|source| real(&folder.join(source))),
                );
            }
        }
    }
    found
}

/// The relative `source = "…"` values of a Terraform file's lines.
fn relative_sources(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| {
            let rest = line.trim_start().strip_prefix("source")?;
            let rest = rest.trim_start().strip_prefix('=')?.trim_start();
            let value = rest.strip_prefix('"')?.split('"').next()?;
            (value.starts_with("./") || value.starts_with("../")).then(|| value.to_string())
        })
        .collect()
}

/// `path` with its links and `..` resolved when it exists; made absolute
/// and cleaned up when it does not.
fn real(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let mut clean = PathBuf::new();
    for part in absolute.components() {
        match part {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            other => clean.push(other),
        }
    }
    clean
}

/// `path` relative to `root`, with `..` for what is beside it.
fn relative(path: &Path, root: &Path) -> String {
    let (path_parts, root_parts): (Vec<_>, Vec<_>) =
        (path.components().collect(), root.components().collect());
    let common = path_parts
        .iter()
        .zip(&root_parts)
        .take_while(|(a, b)| a == b)
        .count();
    if common == 0 {
        return path.display().to_string();
    }
    let mut shown = PathBuf::new();
    for _ in common..root_parts.len() {
        shown.push("..");
    }
    for part in &path_parts[common..] {
        shown.push(part);
    }
    match shown.as_os_str().is_empty() {
        true => ".".into(),
        false => shown.display().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_relative_module_sources_are_followed() {
        let text = r#"
module "net" {
  source = "../modules/net"
}
module "db" {
  source  =  "./db"
}
module "registry" {
  source = "hashicorp/consul/aws"
}
module "git" { source = "git::https://example.com/x.git" }
  # source = "../commented"
"#;
        assert_eq!(relative_sources(text), ["../modules/net", "./db"]);
    }

    #[test]
    fn paths_are_written_from_the_stacks_folder() {
        let root = Path::new("/repo/stacks/app");
        assert_eq!(
            relative(Path::new("/repo/stacks/app/hub.yaml"), root),
            "hub.yaml"
        );
        assert_eq!(
            relative(Path::new("/repo/lib/x.sh"), root),
            "../../lib/x.sh"
        );
        assert_eq!(relative(root, root), ".");
        assert_eq!(real(Path::new("/nowhere/a/../b")), Path::new("/nowhere/b"));
    }

    #[test]
    fn a_files_digest_is_of_its_bytes() {
        assert_eq!(bytes_digest(b"x"), super::super::text_digest("x"));
    }
}
