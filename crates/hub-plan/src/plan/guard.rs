//! `lifecycle.protected` (Terraform's `prevent_destroy`): a plan that
//! would undeploy, prune or replace a protected component is refused
//! before anything runs, naming the component and the stack file and line
//! that protect it. There is no flag to get past it: the protection is
//! lifted by removing the entry from the stack.

use super::{Action, Plan};
use crate::order::schedule::Verb;
use crate::source::stack::Stack;
use hub_manifest::diag::Location;
use hub_manifest::{locate_entry, Segment, SourceFile};
use std::fmt;

/// What a plan would do to a protected component.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `hub undeploy`.
    Undeploy,
    /// `hub deploy --prune`: it is no longer in the stack.
    Prune,
    /// `--replace` names it.
    Replace,
    /// `lifecycle.replaceTriggeredBy` plans it as `replace`.
    ReplaceTriggered,
    /// `hub state rm`.
    Forget,
}

impl fmt::Display for Operation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Operation::Undeploy => "undeploy",
            Operation::Prune => "prune (`--prune`)",
            Operation::Replace => "replace (`--replace`)",
            Operation::ReplaceTriggered => "replace (`lifecycle.replaceTriggeredBy`)",
            Operation::Forget => "forget (`hub state rm`)",
        })
    }
}

/// A protected component the command would destroy or forget.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refusing to {operation} `{component}`: the stack's `lifecycle.protected` lists it; nothing was run")]
pub struct Refused {
    pub component: String,
    pub operation: Operation,
    /// The `lifecycle.protected` entry that protects it, when found
    /// (printed as the error's location).
    pub at: Option<Location>,
}

impl Refused {
    pub fn hint(&self) -> String {
        format!(
            "remove `{}` from `lifecycle.protected` in the stack to {} it; no flag overrides the protection",
            self.component,
            match self.operation {
                Operation::Undeploy | Operation::Prune => "undeploy",
                Operation::Replace | Operation::ReplaceTriggered => "replace",
                Operation::Forget => "forget",
            }
        )
    }
}

/// The first component of `plan` that the stack protects and the plan
/// would undeploy, prune or (named by `--replace`) replace.
pub fn check(stack: &Stack, plan: &Plan, replace: &[String]) -> Result<(), Box<Refused>> {
    for component in &plan.components {
        let operation = if plan.verb == Verb::Undeploy && component.action == Action::Delete {
            Operation::Undeploy
        } else if component.action.runs() && replace.contains(&component.name) {
            Operation::Replace
        } else if component.action == Action::Replace {
            Operation::ReplaceTriggered
        } else {
            continue;
        };
        refuse_if_protected(stack, &component.name, operation)?;
    }
    if plan.prune {
        for removed in &plan.removed {
            refuse_if_protected(stack, &removed.name, Operation::Prune)?;
        }
    }
    Ok(())
}

/// Refuses `operation` on `name` when the stack protects it.
pub fn refuse_if_protected(
    stack: &Stack,
    name: &str,
    operation: Operation,
) -> Result<(), Box<Refused>> {
    let protected = &stack.elaborated.stack.lifecycle.protected;
    let Some(index) = protected.iter().position(|p| p == name) else {
        return Ok(());
    };
    Err(Box::new(Refused {
        component: name.to_string(),
        operation,
        at: entry(stack, index, name),
    }))
}

/// Where the `lifecycle.protected` entry is written: its line in the
/// elaborated file or the stack manifest, else the file alone (an entry
/// a `fromStack` parent wrote).
fn entry(stack: &Stack, index: usize, name: &str) -> Option<Location> {
    let file: &SourceFile = match (stack.source(), &stack.provenance, &stack.manifest) {
        (Some(source), _, _) => source,
        (None, Some(provenance), Some(manifest)) => match provenance.file(manifest) {
            Some(file) => file,
            None => return Some(Location::file(manifest)),
        },
        _ => return None,
    };
    let list = ["lifecycle", "protected"].map(|k| Segment::Key(k.to_string()));
    let own = (stack.source().is_none())
        .then(|| own_entries(file))
        .flatten();
    // In a stack manifest the entry's index is its own list's, not the
    // merged one's.
    let index = match &own {
        Some(own) => match own.iter().position(|p| p == name) {
            Some(i) => i,
            None => return Some(Location::file(&file.path)),
        },
        None => index,
    };
    match locate_entry(&file.text, &list, index, name) {
        Some((line, column)) => Some(Location::at(&file.path, line, column)),
        None => Some(Location::file(&file.path)),
    }
}

/// The `lifecycle.protected` list the manifest itself writes.
fn own_entries(file: &SourceFile) -> Option<Vec<String>> {
    // The manifest was read before: what it warns about was said then.
    let mut warnings = hub_manifest::diag::Warnings::already_reported();
    let (manifest, _) = file
        .first_document::<hub_manifest::Manifest>(&mut warnings)
        .ok()?;
    Some(manifest?.lifecycle.protected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_names_the_component_the_operation_and_the_entry() {
        let refused = Refused {
            component: "db".into(),
            operation: Operation::Prune,
            at: Some(Location::at(std::path::Path::new("hub.yaml"), 7, 7)),
        };
        assert_eq!(
            refused.to_string(),
            "refusing to prune (`--prune`) `db`: the stack's `lifecycle.protected` \
             lists it; nothing was run"
        );
        assert_eq!(
            refused.hint(),
            "remove `db` from `lifecycle.protected` in the stack to undeploy it; \
             no flag overrides the protection"
        );
    }
}
