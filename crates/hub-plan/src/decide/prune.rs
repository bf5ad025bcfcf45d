//! Components the state holds and the stack no longer lists ("removed"):
//! found before a run, shown by `hub plan`, warned about by `hub deploy`,
//! and checked for `--prune` (their folders). Undeploying and forgetting
//! them is the engine's (`run/prune.rs` in hub-engine).

use hub_params::{ExpandedParam, Origin};
use hub_state::{ComponentState, ComponentStatus, Recorded, State};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A component in the state that the stack no longer lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Removed {
    pub name: String,
    /// The folder its entry records; `None` for an entry written before
    /// hub recorded it.
    pub dir: Option<PathBuf>,
    /// Its `depends` as recorded.
    pub depends: Vec<String>,
    /// Its entry's status.
    pub status: Recorded<ComponentStatus>,
}

impl Removed {
    /// Its implementation runs: its entry is not `undeployed`.
    pub fn runs(&self) -> bool {
        self.status.known() != Some(ComponentStatus::Undeployed)
    }

    /// Why it is deleted, as a plan says it.
    pub fn reason(&self) -> String {
        let at = match &self.dir {
            Some(dir) => format!("implementation in `{}`", dir.display()),
            None => "its folder is not recorded".to_string(),
        };
        match self.runs() {
            true => format!("removed from the stack; {at}"),
            false => "removed from the stack; already undeployed: only its entry goes".to_string(),
        }
    }
}

/// The removed components of `state`, in the order `--prune` undeploys
/// them: a component before those it depends on; otherwise later in the
/// state's `lifecycle.order` first, then by name, last first.
pub fn removed(state: &State, in_stack: &dyn Fn(&str) -> bool) -> Vec<Removed> {
    let mut left: Vec<Removed> = state
        .components
        .iter()
        .filter(|(name, _)| !in_stack(name))
        .map(|(name, entry)| removed_entry(name, entry))
        .collect();
    let order = &state.lifecycle.order;
    let rank = |name: &str| order.iter().position(|o| o == name);
    left.sort_by(|a, b| (rank(&b.name), &b.name).cmp(&(rank(&a.name), &a.name)));
    let mut ordered = Vec::with_capacity(left.len());
    while !left.is_empty() {
        let needed: HashSet<&str> = left
            .iter()
            .flat_map(|r| r.depends.iter().map(String::as_str))
            .collect();
        // A cycle in recorded `depends` cannot hold up the rest.
        let next = left
            .iter()
            .position(|r| !needed.contains(r.name.as_str()))
            .unwrap_or(0);
        ordered.push(left.remove(next));
    }
    ordered
}

/// A state entry as `--prune` sees it: its recorded folder and `depends`.
pub fn removed_entry(name: &str, entry: &ComponentState) -> Removed {
    Removed {
        name: name.to_string(),
        dir: (!entry.dir.is_empty()).then(|| PathBuf::from(&entry.dir)),
        depends: recorded_depends(entry),
        status: entry.status.clone(),
    }
}

/// The entry's `depends`; in an entry written before hub recorded them,
/// the dependencies its fingerprint names (one digest per `depends`).
fn recorded_depends(entry: &ComponentState) -> Vec<String> {
    match (&entry.depends[..], &entry.fingerprint) {
        ([], Some(fingerprint)) => fingerprint.upstream.keys().cloned().collect(),
        (depends, _) => depends.to_vec(),
    }
}

/// `--prune`: a removed component whose folder is not there to run its
/// undeploy from.
#[derive(Debug, thiserror::Error)]
#[error("component `{component}` is no longer in the stack and cannot be undeployed: {}", match dir { Some(d) => format!("its folder `{}` is gone", d.display()), None => "the state does not record its folder".to_string() })]
pub struct FolderGone {
    pub component: String,
    pub dir: Option<PathBuf>,
}

impl FolderGone {
    pub fn hint(&self) -> Option<String> {
        Some(format!(
            "restore the folder and run again to undeploy it, or forget it without undeploying with `hub state rm {}` (what it created stays)",
            self.component
        ))
    }
}

/// Every removed component that has something to undeploy has its folder:
/// checked before anything runs.
pub fn check_folders(removed: &[Removed]) -> Result<(), FolderGone> {
    for gone in removed.iter().filter(|r| r.runs()) {
        if !gone.dir.as_deref().is_some_and(Path::is_dir) {
            return Err(FolderGone {
                component: gone.name.clone(),
                dir: gone.dir.clone(),
            });
        }
    }
    Ok(())
}

/// The warning of a deploy without `--prune`.
pub fn warning(removed: &[Removed]) -> Option<String> {
    let names: Vec<String> = removed.iter().map(|r| format!("`{}`", r.name)).collect();
    match names.len() {
        0 => None,
        1 => Some(format!(
            "component {} is in the state but no longer in the stack: it stays deployed; `hub deploy --prune` undeploys it and forgets it",
            names[0]
        )),
        _ => Some(format!(
            "components {} are in the state but no longer in the stack: they stay deployed; `hub deploy --prune` undeploys them and forgets them",
            names.join(", ")
        )),
    }
}

/// The entry's parameters as the component's last run had them: those
/// its undeploy gets.
pub fn recorded_parameters(entry: &ComponentState) -> Vec<ExpandedParam> {
    entry
        .parameters
        .iter()
        .map(|p| ExpandedParam {
            name: p.name().to_string(),
            value: Some(p.value.clone()),
            env: p.env().to_string(),
            origin: Origin::Value,
            expression: None,
            declared: None,
            secret: hub_manifest::secrets::looks_secret(p.name()),
        })
        .collect()
}
