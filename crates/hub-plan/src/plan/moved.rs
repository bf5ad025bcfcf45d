//! The stack's `moved: [{from, to}]` (Terraform's `moved` blocks): a
//! component renamed in the stack keeps its state. Before the plan is
//! made, each entry of the state named by a move's `from` is renamed to
//! where its chain of moves ends (`a → b`, `b → c`: `a` becomes `c`),
//! exactly as `hub state mv` renames it; the plan then finds the component
//! deployed under its new name (no undeploy of the old one, no first
//! deploy of the new one) and shows `moved OLD → NEW`. The engine writes
//! the renamed state before the first component runs.
//!
//! What Terraform refuses is refused here, before anything runs: a move to
//! itself, two moves from one name or to one name, a cycle, a `from` the
//! stack still lists, a chain that ends at a name the stack does not list,
//! and a state that holds both ends.

use crate::source::stack::Stack;
use hub_manifest::diag::Location;
use hub_manifest::{locate, Moved, Segment};
use hub_state::edit::{self, EditError};
use hub_state::{ComponentState, State, StateParameter};
use serde::Serialize;
use std::collections::HashMap;

/// One rename the state gets.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Renamed {
    pub from: String,
    pub to: String,
}

/// What is wrong with the `moved` entries, against the stack or the state.
#[derive(Debug, thiserror::Error)]
pub enum MovedProblem {
    #[error("`moved` entry `{0}` → `{0}` moves a component to itself")]
    ToItself(String),
    #[error("`moved` moves `{from}` twice: to `{first}` and to `{second}`")]
    TwoTargets {
        from: String,
        first: String,
        second: String,
    },
    #[error("`moved` moves both `{first}` and `{second}` to `{to}`")]
    TwoSources {
        to: String,
        first: String,
        second: String,
    },
    #[error("`moved` entries form a cycle: {}", .0.join(" → "))]
    Cycle(Vec<String>),
    #[error("`moved` moves `{0}`, which the stack still lists")]
    StillListed(String),
    #[error("`moved` moves `{from}` to `{to}`, which the stack does not list")]
    NotListed { from: String, to: String },
    #[error("`moved` moves `{from}` to `{to}`, but the state holds both")]
    BothExist { from: String, to: String },
    #[error(transparent)]
    Edit(#[from] EditError),
}

impl MovedProblem {
    pub fn hint(&self) -> String {
        match self {
            MovedProblem::BothExist { from, to } => format!(
                "keep one of them: forget `{from}` (`hub state rm {from}`) or `{to}`, or remove the entry from `moved`"
            ),
            MovedProblem::StillListed(_) => {
                "rename the component in `components:` (a move is from the old name to the new one)".into()
            }
            MovedProblem::NotListed { .. } => {
                "a chain of moves must end at a component the stack lists; fix the entry's `to`".into()
            }
            _ => "fix or remove the entry; a move says `from: OLD-NAME, to: NEW-NAME`".into(),
        }
    }
}

/// A problem with the `moved` entry it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{problem}")]
pub struct MovedError {
    pub problem: MovedProblem,
    /// The entry in the stack file, when found.
    pub at: Option<Location>,
}

/// Checks the stack's `moved` entries and renames the entries of `state`
/// they name; the renames made, in the order of the entries.
pub fn apply(stack: &Stack, state: Option<&mut State>) -> Result<Vec<Renamed>, Box<MovedError>> {
    let moves = &stack.elaborated.stack.moved;
    if moves.is_empty() {
        return Ok(Vec::new());
    }
    let targets = check(stack, moves)?;
    let Some(state) = state else {
        return Ok(Vec::new());
    };
    let mut renamed = Vec::new();
    for (index, entry) in moves.iter().enumerate() {
        if !state.components.contains_key(&entry.from) {
            continue;
        }
        let to = end_of_chain(&targets, &entry.from);
        let error = |problem: MovedProblem| Box::new(located(stack, index, problem));
        if stack.reference(&to).is_none() {
            return Err(error(MovedProblem::NotListed {
                from: entry.from.clone(),
                to,
            }));
        }
        if state.components.contains_key(&to) {
            return Err(error(MovedProblem::BothExist {
                from: entry.from.clone(),
                to,
            }));
        }
        rename(state, &entry.from, &to).map_err(|e| error(e.into()))?;
        renamed.push(Renamed {
            from: entry.from.clone(),
            to,
        });
    }
    Ok(renamed)
}

/// The entries among themselves and against the stack: `from → to`.
fn check(stack: &Stack, moves: &[Moved]) -> Result<HashMap<String, String>, Box<MovedError>> {
    let mut targets: HashMap<String, String> = HashMap::new();
    let mut sources: HashMap<&str, &str> = HashMap::new();
    for (index, entry) in moves.iter().enumerate() {
        let error = |problem: MovedProblem| Box::new(located(stack, index, problem));
        let (from, to) = (entry.from.as_str(), entry.to.as_str());
        if from == to {
            return Err(error(MovedProblem::ToItself(from.to_string())));
        }
        if let Some(first) = targets.get(from) {
            return Err(error(MovedProblem::TwoTargets {
                from: from.to_string(),
                first: first.clone(),
                second: to.to_string(),
            }));
        }
        if let Some(first) = sources.get(to) {
            return Err(error(MovedProblem::TwoSources {
                to: to.to_string(),
                first: first.to_string(),
                second: from.to_string(),
            }));
        }
        if stack.reference(from).is_some() {
            return Err(error(MovedProblem::StillListed(from.to_string())));
        }
        targets.insert(from.to_string(), to.to_string());
        sources.insert(to, from);
    }
    for (index, entry) in moves.iter().enumerate() {
        let mut path = vec![entry.from.clone()];
        let mut at = entry.from.as_str();
        while let Some(next) = targets.get(at) {
            path.push(next.clone());
            if next == &entry.from {
                return Err(Box::new(located(stack, index, MovedProblem::Cycle(path))));
            }
            if path.len() > moves.len() + 1 {
                break;
            }
            at = next;
        }
    }
    Ok(targets)
}

/// Where a chain of moves from `name` ends.
fn end_of_chain(targets: &HashMap<String, String>, name: &str) -> String {
    let mut at = name;
    // `check` found no cycle: the chain ends within as many steps as
    // there are moves.
    for _ in 0..=targets.len() {
        match targets.get(at) {
            Some(next) => at = next,
            None => break,
        }
    }
    at.to_string()
}

fn located(stack: &Stack, index: usize, problem: MovedProblem) -> MovedError {
    let file = match (stack.source(), &stack.provenance, &stack.manifest) {
        (Some(source), _, _) => Some(source),
        (None, Some(provenance), Some(manifest)) => provenance.file(manifest),
        _ => None,
    };
    let at = file.map(|file| {
        let path = [Segment::Key("moved".into()), Segment::Index(index)];
        match locate(&file.text, &path).or_else(|| locate(&file.text, &path[..1])) {
            Some((line, column)) => Location::at(&file.path, line, column),
            None => Location::file(&file.path),
        }
    });
    MovedError { problem, at }
}

/// Renames component `old` to `new` in `state` as `hub state mv` does:
/// everywhere the state names it, its fingerprint kept when only the
/// name changed.
pub fn rename(state: &mut State, old: &str, new: &str) -> Result<(), EditError> {
    edit::rename(state, old, new)?;
    keep_unchanged_fingerprint(state, old, new);
    Ok(())
}

/// The renamed entry's parameters digest, made again with its new
/// `hub.componentName`, when the recorded parameters (with the old name)
/// are those the digest was made of: a `deploy --changed` of the renamed
/// stack then finds the component unchanged. Any other recorded digest is
/// left alone (the component then runs again, which is safe).
fn keep_unchanged_fingerprint(state: &mut State, old: &str, new: &str) {
    let Some(ComponentState {
        parameters,
        fingerprint: Some(fingerprint),
        ..
    }) = state.components.get_mut(new)
    else {
        return;
    };
    if parameters_digest(parameters, Some(old)) == fingerprint.parameters {
        fingerprint.parameters = parameters_digest(parameters, None);
    }
}

/// The digest a deploy makes of these parameters, `hub.componentName`
/// taken as `component_name` when given.
fn parameters_digest(parameters: &[StateParameter], component_name: Option<&str>) -> String {
    let expanded: Vec<hub_params::ExpandedParam> = parameters
        .iter()
        .map(|p| hub_params::ExpandedParam {
            name: p.name().to_string(),
            value: match (p.name(), component_name) {
                ("hub.componentName", Some(name)) => {
                    Some(yaml_serde::Value::String(name.to_string()))
                }
                _ => p.non_null_value().cloned(),
            },
            env: p.env().to_string(),
            origin: hub_params::Origin::Implicit,
            expression: None,
            declared: None,
            secret: false,
        })
        .collect();
    crate::decide::fingerprint::parameters_digest(&expanded)
}
