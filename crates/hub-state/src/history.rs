//! Whether one version of a state descends from another. Every run that
//! changes a state adds an operation with a unique id to its
//! `operations`, oldest first, and keeps the earlier ones: a state
//! descends from another when it holds that state's last operation. A
//! state whose history lacks the stored state's last operation has
//! diverged from it (another run went on from a common ancestor), and
//! writing it over the stored one would drop what that run did.

use super::model::{Operation, State};
use std::fmt;

/// How a state (the "file") diverged from the stored one.
#[derive(Debug, Clone, PartialEq)]
pub struct Divergence {
    /// The stored state's last operation, which the file does not hold.
    pub stored_last: String,
    /// The file's last operation; empty when it has none.
    pub file_last: String,
    /// The components whose status differs: `name: STORED there, FILE here`.
    pub components: Vec<String>,
}

/// At most this many differing components are named.
const MAX_NAMED: usize = 10;

/// `None` when `file` descends from `stored` (or `stored` has no
/// operation to lose).
pub fn diverged(file: &State, stored: &State) -> Option<Divergence> {
    let last = stored.operations.last().filter(|o| !o.id.is_empty())?;
    if file.operations.iter().any(|o| o.id == last.id) {
        return None;
    }
    Some(Divergence {
        stored_last: describe(last),
        file_last: file.operations.last().map(describe).unwrap_or_default(),
        components: differing_components(file, stored),
    })
}

/// `file` is an earlier version of `stored`: `stored` holds the file's
/// last operation as the file has it (or the file has none), so `stored`
/// only went on from it. A file whose last operation went further than
/// `stored` knows (a run that went on after another took the state) is
/// not.
pub fn is_ancestor(file: &State, stored: &State) -> bool {
    file.operations
        .last()
        .is_none_or(|last| stored.operations.iter().any(|o| o == last))
}

/// `` `ID` (deploy by alice at T, success) ``
fn describe(operation: &Operation) -> String {
    let mut what = vec![];
    if !operation.operation.is_empty() {
        what.push(operation.operation.clone());
    }
    if !operation.initiator.is_empty() {
        what.push(format!("by {}", operation.initiator));
    }
    if !operation.timestamp.is_empty() {
        what.push(format!("at {}", operation.timestamp));
    }
    let mut text = format!("`{}` ({}", operation.id, what.join(" "));
    if !operation.status.is_empty() {
        text.push_str(&format!(", {}", operation.status));
    }
    text.push(')');
    text
}

fn differing_components(file: &State, stored: &State) -> Vec<String> {
    let status = |state: &State, name: &str| {
        state
            .components
            .get(name)
            .map_or("absent".to_string(), |c| match c.status.as_str() {
                "" => "no status".to_string(),
                status => status.to_string(),
            })
    };
    let mut names: Vec<&String> = stored.components.keys().collect();
    names.extend(
        file.components
            .keys()
            .filter(|n| !stored.components.contains_key(*n)),
    );
    let mut differing: Vec<String> = names
        .into_iter()
        .filter_map(|name| {
            let (there, here) = (status(stored, name), status(file, name));
            (there != here).then(|| format!("{name}: {there} there, {here} in the file"))
        })
        .collect();
    if differing.len() > MAX_NAMED {
        let more = differing.len() - MAX_NAMED;
        differing.truncate(MAX_NAMED);
        differing.push(format!("and {more} more"));
    }
    differing
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the last operation there, {}, is not in the file's history",
            self.stored_last
        )?;
        match self.file_last.as_str() {
            "" => f.write_str(" (the file has no operation)")?,
            last => write!(f, ", whose last operation is {last}")?,
        }
        if !self.components.is_empty() {
            write!(
                f,
                "; components that differ: {}",
                self.components.join("; ")
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ComponentState;
    use crate::StackMeta;

    fn state(operations: &[(&str, &str)], components: &[(&str, &str)]) -> State {
        let mut state = State::new(StackMeta::default(), Vec::new());
        for (id, status) in operations {
            state.operations.push(Operation {
                id: id.to_string(),
                operation: "deploy".into(),
                status: (*status).into(),
                ..Operation::default()
            });
        }
        for (name, status) in components {
            let entry = ComponentState {
                status: (*status).into(),
                ..ComponentState::default()
            };
            state.components.insert(name.to_string(), entry);
        }
        state
    }

    #[test]
    fn a_state_that_holds_the_stored_last_operation_descends_from_it() {
        let stored = state(&[("op-1", "success")], &[]);
        let file = state(&[("op-1", "success"), ("op-2", "in-progress")], &[]);
        assert_eq!(diverged(&file, &stored), None);
        assert!(is_ancestor(&stored, &file));
        assert!(!is_ancestor(&file, &stored));
        assert_eq!(diverged(&file, &state(&[], &[])), None);
    }

    #[test]
    fn a_state_without_the_stored_last_operation_diverged_and_says_what_differs() {
        let stored = state(
            &[("op-a", "in-progress"), ("op-b", "success")],
            &[("a", "deploying"), ("c", "deployed")],
        );
        let mut file = state(&[("op-a", "in-progress")], &[("a", "deployed")]);
        file.operations[0].phases.push(crate::model::Phase {
            phase: "a".into(),
            status: "success".into(),
        });
        assert!(
            !is_ancestor(&file, &stored),
            "the file went on from op-a too"
        );
        let divergence = diverged(&file, &stored).expect("diverged");
        let text = divergence.to_string();
        assert!(text.contains("`op-b` (deploy, success)"), "{text}");
        assert!(text.contains("`op-a` (deploy, in-progress)"), "{text}");
        assert!(
            text.contains("a: deploying there, deployed in the file"),
            "{text}"
        );
        assert!(
            text.contains("c: deployed there, absent in the file"),
            "{text}"
        );
    }
}
