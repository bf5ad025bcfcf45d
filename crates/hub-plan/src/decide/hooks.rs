//! Finding a component's hooks (hubctl, deploy.md §12.1): which hooks a
//! verb triggers and where their scripts are; the preflight reports those
//! [`missing`], a saved plan digests those [`found`]. Running them is the
//! engine's (`run/hooks.rs` in hub-engine).

use crate::source::discover::script_names;
use hub_manifest::Hook;
use std::path::{Path, PathBuf};

/// A hook the verb triggers whose script is not found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub file: String,
    /// `pre-deploy`, …
    pub trigger: String,
    /// It says `error: ignore`: the run goes on without it.
    pub optional: bool,
    /// The folders it was looked for in (empty for an absolute `file`).
    pub folders: Vec<PathBuf>,
}

/// What to do about a missing hook that is not optional.
pub(crate) const MISSING_HINT: &str = "add the script in one of those folders, correct the hook's `file:`, or add `error: ignore` to the hook to run without it (a missing hook is then a warning)";

impl Missing {
    pub fn of(hook: &Hook, trigger: &str, component_dir: &Path, stack_dir: &Path) -> Missing {
        Missing {
            file: hook.file.clone(),
            trigger: trigger.to_string(),
            optional: hook.ignores_errors(),
            folders: match Path::new(&hook.file).is_absolute() {
                true => Vec::new(),
                false => search_folders(component_dir, stack_dir).to_vec(),
            },
        }
    }

    /// `hook `F` (pre-deploy) not found in `A`, `B` (as `F`, `bin/F`, …)
    /// or on PATH`.
    pub fn text(&self) -> String {
        let file = &self.file;
        if self.folders.is_empty() {
            return format!(
                "hook `{file}` ({}) not found: `{file}` does not exist",
                self.trigger
            );
        }
        let folders: Vec<String> = self
            .folders
            .iter()
            .map(|f| {
                format!(
                    "`{}`",
                    std::path::absolute(f).unwrap_or(f.clone()).display()
                )
            })
            .collect();
        let names: Vec<String> = script_names(file)
            .iter()
            .map(|n| format!("`{n}`"))
            .collect();
        format!(
            "hook `{file}` ({}) not found in {} (as {}) or on PATH",
            self.trigger,
            folders.join(", "),
            names.join(", ")
        )
    }

    /// The text with the component, and for an optional hook what the run
    /// does without it.
    pub fn message(&self, component: &str) -> String {
        match self.optional {
            true => format!(
                "component `{component}`: {}; skipped (the hook says `error: ignore`)",
                self.text()
            ),
            false => format!("component `{component}`: {}", self.text()),
        }
    }
}

/// The hooks among `hooks` that `pre-VERB` or `post-VERB` triggers and
/// whose script is not found (see [`find_script`]).
pub fn missing(hooks: &[Hook], verb: &str, component_dir: &Path, stack_dir: &Path) -> Vec<Missing> {
    let mut found = Vec::new();
    for when in ["pre", "post"] {
        let trigger = format!("{when}-{verb}");
        for hook in hooks {
            if triggered(hook, &trigger) != Ok(true) {
                continue;
            }
            if find_script(&hook.file, component_dir, stack_dir).is_none() {
                found.push(Missing::of(hook, &trigger, component_dir, stack_dir));
            }
        }
    }
    found
}

/// The hooks among `hooks` that `pre-VERB` or `post-VERB` triggers and
/// whose script is found: each with its trigger and the script.
pub fn found<'h>(
    hooks: &'h [Hook],
    verb: &str,
    component_dir: &Path,
    stack_dir: &Path,
) -> Vec<(&'h Hook, String, PathBuf)> {
    let mut found = Vec::new();
    for when in ["pre", "post"] {
        let trigger = format!("{when}-{verb}");
        for hook in hooks.iter().filter(|h| triggered(h, &trigger) == Ok(true)) {
            if let Some(script) = find_script(&hook.file, component_dir, stack_dir) {
                found.push((hook, trigger.clone(), script));
            }
        }
    }
    found
}

/// The folders a relative hook is looked for in, in order.
fn search_folders(component_dir: &Path, stack_dir: &Path) -> [PathBuf; 5] {
    [
        component_dir.to_path_buf(),
        stack_dir.to_path_buf(),
        stack_dir.join("bin"),
        stack_dir.join(".hub"),
        stack_dir.join(".hub/bin"),
    ]
}

/// Whether one of the hook's patterns matches `trigger`; `Err` with the
/// first pattern that does not parse.
pub fn triggered(hook: &Hook, trigger: &str) -> Result<bool, String> {
    for pattern in &hook.triggers {
        let compiled = glob::Pattern::new(pattern).map_err(|_| pattern.clone())?;
        if compiled.matches(trigger) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// An absolute `file` as it is; otherwise the first regular file among the
/// candidate names in the component's folder, the stack's folder, its
/// `bin`, `.hub` and `.hub/bin`; then `file` on the `PATH`.
pub fn find_script(file: &str, component_dir: &Path, stack_dir: &Path) -> Option<PathBuf> {
    if file.is_empty() {
        return None;
    }
    let path = Path::new(file);
    if path.is_absolute() {
        return path.is_file().then(|| path.to_path_buf());
    }
    search_folders(component_dir, stack_dir)
        .iter()
        .flat_map(|folder| script_names(file).map(|name| folder.join(name)))
        .find(|candidate| candidate.is_file())
        .map(|found| std::path::absolute(&found).unwrap_or(found))
        .or_else(|| crate::source::discover::which(file))
}
