//! `--affected[=BASE]`: the components whose inputs differ between a git
//! base and the work tree (uncommitted and untracked files included,
//! ignored ones not).
//!
//! A component's inputs are its folder (its manifest and templates are
//! there), the globs the stack's `lifecycle.watch` gives it, its entry in
//! the stack's `components:`, and the parameters it reads from the stack
//! and parameters files: a change to one of those files selects only the
//! components that read a parameter whose declaration changed.
//!
//! Git is read through the `git` program: `git diff BASE` compares the
//! base's tree with the work tree, so a shallow clone works as long as
//! the base commit was fetched.

mod files;

use super::stack::Stack;
use crate::order::schedule::{Chosen, Schedule};
use files::Changed;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How many reasons a component's line names before counting the rest.
const NAMED: usize = 3;

/// What `--affected` compares.
pub struct Request<'a> {
    /// `--affected=BASE`; `None` (or empty) for the default.
    pub base: Option<&'a str>,
    /// `HUB_GIT_BASE`, the default base when set.
    pub environment_base: Option<String>,
    /// `-b`.
    pub components_base: Option<&'a Path>,
}

#[derive(Debug, thiserror::Error)]
pub enum AffectedError {
    #[error("`--affected` reads git, and `git` could not be run: {0}")]
    NoGit(String),
    #[error("`--affected` compares with git, but `{}` is not in a git work tree", dir.display())]
    NotARepository { dir: PathBuf },
    #[error("`--affected` found no base to compare with: {detail}")]
    NoDefaultBase { detail: String },
    #[error("the base `{base}` of `--affected` is not in this clone")]
    MissingBase { base: String },
    #[error("`git {args}` failed: {detail}")]
    Git { args: String, detail: String },
    #[error("the `lifecycle.watch` entry of `{component}`: `{glob}` is not a glob ({reason})")]
    BadGlob {
        component: String,
        glob: String,
        reason: String,
    },
}

impl AffectedError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            AffectedError::NoGit(_) => "install git, or select components with `-c`".into(),
            AffectedError::NotARepository { .. } => {
                "run hub inside the stack's git checkout, or select components with `-c`".into()
            }
            AffectedError::NoDefaultBase { .. } => {
                "name the base: `--affected=main` (a branch, tag or commit), or set `HUB_GIT_BASE`"
                    .into()
            }
            AffectedError::MissingBase { base } => format!(
                "a shallow clone has only the commits it fetched: fetch the base too (`git fetch --depth=1 origin {base}`), or check its name"
            ),
            AffectedError::Git { .. } => {
                "check that the repository is readable with `git status`".into()
            }
            AffectedError::BadGlob { component, .. } => format!(
                "write globs relative to the stack's folder, for example `{component}: [modules/**/*.tf]`"
            ),
        })
    }
}

/// The components `--affected` selects, in the stack's order, each with
/// why. `plan` is the stack's full deploy plan (for what each component
/// reads).
pub fn affected(
    stack: &Stack,
    plan: &Schedule,
    request: &Request<'_>,
) -> Result<Vec<Chosen>, AffectedError> {
    let git = Git::at(&stack.base_dir)?;
    let base = git.base(request)?;
    let changed = git.changed(&base)?;
    let mut reasons: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut give = |name: &str, why: String| {
        let list = reasons.entry(name.to_string()).or_default();
        if !list.contains(&why) {
            list.push(why);
        }
    };
    let elaborated = &stack.elaborated;
    let watch = watched(stack)?;
    for reference in &elaborated.stack.components {
        let name = reference.name.as_str();
        let dir = stack
            .component_dir(reference, request.components_base)
            .ok()
            .map(|d| canonical(&d));
        let globs = watch.get(name).map(Vec::as_slice).unwrap_or_default();
        for file in &changed {
            let in_folder = dir.as_ref().is_some_and(|d| file.path.starts_with(d));
            let watched = !in_folder && globs.iter().any(|g| g.matches(&file.path));
            if in_folder || watched {
                give(name, file.describe(&git.root));
            }
        }
    }
    let sources = stack_files(stack);
    for file in changed.iter().filter(|f| sources.contains(&f.path)) {
        let shown = file.shown(&git.root);
        let before = git.show(&base, &file.path);
        let after = std::fs::read_to_string(&file.path).ok();
        let difference = files::compare(before.as_deref(), after.as_deref());
        for reference in &elaborated.stack.components {
            let name = reference.name.as_str();
            if difference.entries.contains(name) {
                give(name, format!("its entry in `{shown}` changed"));
            }
            let declared: BTreeSet<String> = elaborated
                .component(name)
                .map(|m| {
                    hub_params::flatten(&m.parameters)
                        .into_iter()
                        .map(|(p, _)| p.name.clone())
                        .collect()
                })
                .unwrap_or_default();
            let reads = |parameter: &str| {
                declared.contains(parameter)
                    || plan.reads(name).is_some_and(|r| r.contains(parameter))
            };
            if difference.unreadable && !declared.is_empty() {
                give(name, format!("`{shown}` changed and could not be compared"));
            }
            for (parameter, scope) in &difference.parameters {
                let applies = scope.as_deref().is_none_or(|s| s == name);
                if applies && reads(parameter) {
                    give(
                        name,
                        format!("parameter `{parameter}` changed in `{shown}`"),
                    );
                }
            }
        }
    }
    Ok(plan
        .order
        .iter()
        .filter_map(|name| {
            let list = reasons.remove(name)?;
            Some(Chosen {
                name: name.clone(),
                why: summary(&list),
            })
        })
        .collect())
}

/// The first reasons, then how many more.
fn summary(reasons: &[String]) -> String {
    let mut shown: Vec<String> = reasons.iter().take(NAMED).cloned().collect();
    if reasons.len() > NAMED {
        shown.push(format!("{} more", reasons.len() - NAMED));
    }
    shown.join(", ")
}

/// The stack manifest, its parameters files and `fromStack` parents, as
/// elaborate recorded them (component manifests are in their folders).
fn stack_files(stack: &Stack) -> BTreeSet<PathBuf> {
    stack
        .elaborated
        .provenance
        .sources
        .iter()
        .filter(|p| p.file_name().is_none_or(|n| n != "hub-component.yaml"))
        .map(|p| canonical(p))
        .collect()
}

/// `lifecycle.watch`, each glob made absolute against the stack's folder.
fn watched(stack: &Stack) -> Result<BTreeMap<String, Vec<Glob>>, AffectedError> {
    let root = canonical(&stack.base_dir);
    let mut found = BTreeMap::new();
    for (component, globs) in &stack.elaborated.stack.lifecycle.watch {
        let mut compiled = Vec::new();
        for glob in globs {
            let pattern = glob::Pattern::new(glob).map_err(|e| AffectedError::BadGlob {
                component: component.clone(),
                glob: glob.clone(),
                reason: e.msg.to_string(),
            })?;
            compiled.push(Glob {
                root: root.clone(),
                pattern,
            });
        }
        found.insert(component.clone(), compiled);
    }
    Ok(found)
}

/// A `lifecycle.watch` glob, relative to the stack's folder.
struct Glob {
    root: PathBuf,
    pattern: glob::Pattern,
}

impl Glob {
    fn matches(&self, path: &Path) -> bool {
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..glob::MatchOptions::new()
        };
        path.strip_prefix(&self.root)
            .is_ok_and(|relative| self.pattern.matches_path_with(relative, options))
    }
}

/// A path with its links resolved when it exists (git names files under
/// the real path of the work tree).
fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = path.canonicalize() {
        return real;
    }
    // A file that is gone: its folder's real path, and its name.
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => canonical(parent).join(name),
        _ => path.to_path_buf(),
    }
}

/// The commit checked out in the git work tree `dir` is in (`HEAD`);
/// `None` outside git, or when git cannot be run.
pub fn head_commit(dir: &Path) -> Option<String> {
    let git = Git::at(dir).ok()?;
    git.text(&["rev-parse", "--verify", "--quiet", "HEAD^{commit}"])
        .ok()
        .filter(|sha| !sha.is_empty())
}

/// The git work tree a stack is in.
struct Git {
    root: PathBuf,
}

impl Git {
    fn at(dir: &Path) -> Result<Git, AffectedError> {
        let output = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["rev-parse", "--show-toplevel"])
            .output()
            .map_err(|e| AffectedError::NoGit(e.to_string()))?;
        if !output.status.success() {
            return Err(AffectedError::NotARepository {
                dir: dir.to_path_buf(),
            });
        }
        let root = String::from_utf8_lossy(&output.stdout).trim().to_string();
        Ok(Git {
            root: canonical(Path::new(&root)),
        })
    }

    /// Runs `git ARGS` in the work tree's root; its stdout.
    fn run(&self, args: &[&str]) -> Result<Vec<u8>, AffectedError> {
        let output = Command::new("git")
            .arg("-C")
            .arg(&self.root)
            .args(args)
            .output()
            .map_err(|e| AffectedError::NoGit(e.to_string()))?;
        if !output.status.success() {
            return Err(AffectedError::Git {
                args: args.join(" "),
                detail: String::from_utf8_lossy(&output.stderr).trim().to_string(),
            });
        }
        Ok(output.stdout)
    }

    fn text(&self, args: &[&str]) -> Result<String, AffectedError> {
        Ok(String::from_utf8_lossy(&self.run(args)?).trim().to_string())
    }

    /// The commit to compare with: `--affected=BASE`, `HUB_GIT_BASE`, or
    /// the merge-base of `HEAD` with the remote's default branch.
    fn base(&self, request: &Request<'_>) -> Result<String, AffectedError> {
        let given = request
            .base
            .filter(|b| !b.is_empty())
            .map(str::to_string)
            .or_else(|| request.environment_base.clone().filter(|b| !b.is_empty()));
        if let Some(base) = given {
            let commit = format!("{base}^{{commit}}");
            return self
                .text(&["rev-parse", "--verify", "--quiet", &commit])
                .map_err(|_| AffectedError::MissingBase { base });
        }
        let remote = self
            .text(&["rev-parse", "--abbrev-ref", "origin/HEAD"])
            .map_err(|_| AffectedError::NoDefaultBase {
                detail: "the remote `origin` names no default branch (`origin/HEAD`)".into(),
            })?;
        self.text(&["merge-base", "HEAD", &remote])
            .map_err(|_| AffectedError::NoDefaultBase {
                detail: format!(
                    "`HEAD` and `{remote}` have no common commit in this clone (a shallow clone may lack it)"
                ),
            })
    }

    /// The files that differ between `base` and the work tree, and the
    /// untracked ones (ignored files left out).
    fn changed(&self, base: &str) -> Result<Vec<Changed>, AffectedError> {
        let diff = self.run(&["diff", "--name-status", "--no-renames", "-z", base, "--"])?;
        let untracked = self.run(&["ls-files", "--others", "--exclude-standard", "-z"])?;
        Ok(files::parse_changes(&self.root, &diff, &untracked))
    }

    /// The text of `path` at `base`; `None` when it was not there.
    fn show(&self, base: &str, path: &Path) -> Option<String> {
        let relative = path.strip_prefix(&self.root).ok()?;
        let spec = format!("{base}:{}", relative.to_string_lossy());
        self.run(&["show", &spec])
            .ok()
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }
}
