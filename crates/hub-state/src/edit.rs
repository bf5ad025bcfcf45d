//! Changes to a state that run nothing: forgetting components (`hub state
//! rm`) and renaming one (`hub state mv`), in memory. The CLI's `hub state`
//! commands lock, read and write the state around them.
//!
//! A component is named in many places of a state besides its entry:
//! `lifecycle.order`, the lists of `provides`, the `component` of captured
//! outputs (the stack's and every entry's snapshot), qualified stack
//! parameters (`name|component`) and stack outputs (`component:name`),
//! the phases of operations, and the upstream of other entries'
//! fingerprints. A rename changes them all; forgetting removes what
//! describes the component as deployed (its entry, its place in the order,
//! the capabilities it provides, its outputs among the stack's) and leaves
//! the history (operations, the snapshots other entries recorded).

use super::model::{CapturedOutput, ComponentState, State};
use super::snapshot::Snapshot;
use indexmap::IndexMap;

#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("the state has no component `{name}`")]
    Unknown {
        name: String,
        /// Names of the state close to `name`, closest first.
        close: Vec<String>,
        /// Every component of the state.
        known: Vec<String>,
    },
    #[error("cannot rename `{old}` to `{new}`: the state already has a component `{new}`")]
    Exists { old: String, new: String },
    #[error("`{name}` is not a component name")]
    BadName { name: String },
}

impl EditError {
    pub fn hint(&self) -> Option<String> {
        match self {
            EditError::Unknown { close, .. } if !close.is_empty() => {
                let names: Vec<String> = close.iter().map(|n| format!("`{n}`")).collect();
                Some(format!("did you mean {}?", names.join(" or ")))
            }
            EditError::Unknown { known, .. } if known.is_empty() => {
                Some("the state records no component".into())
            }
            EditError::Unknown { known, .. } => Some(format!(
                "the state's components are: {}",
                known.join(", ")
            )),
            EditError::Exists { new, .. } => Some(format!(
                "choose another name, or forget the entry of `{new}` first with `hub state rm {new}`"
            )),
            EditError::BadName { .. } => {
                Some("a component name is not empty and has no `:` or `|`".into())
            }
        }
    }
}

/// Fails unless the state has an entry for `name`, naming the close ones.
pub fn check_known(state: &State, name: &str) -> Result<(), EditError> {
    if state.components.contains_key(name) {
        return Ok(());
    }
    let known: Vec<String> = state.components.keys().cloned().collect();
    Err(EditError::Unknown {
        name: name.to_string(),
        close: close_names(name, &known),
        known,
    })
}

/// Up to three of `known` that `name` may stand for: a few edits away, or
/// one holding the other; closest first.
fn close_names(name: &str, known: &[String]) -> Vec<String> {
    use hub_manifest::keys::edit_distance;
    let lower = name.to_lowercase();
    let mut close: Vec<(usize, &String)> = known
        .iter()
        .map(|k| (edit_distance(&lower, &k.to_lowercase()), k))
        .filter(|(distance, k)| {
            let k = k.to_lowercase();
            *distance <= 2.max(lower.chars().count() / 3)
                || (!lower.is_empty() && (k.contains(&lower) || lower.contains(&k)))
        })
        .collect();
    close.sort();
    close.into_iter().take(3).map(|(_, k)| k.clone()).collect()
}

/// Removes the entries of `names` (each must exist; all are checked before
/// anything changes) with their place in `lifecycle.order`, the
/// capabilities they provide and their outputs among the stack's captured
/// outputs. Returns the removed entries, in the order given.
pub fn forget(
    state: &mut State,
    names: &[String],
) -> Result<Vec<(String, ComponentState)>, EditError> {
    for name in names {
        check_known(state, name)?;
    }
    let mut removed = Vec::with_capacity(names.len());
    for name in names {
        if let Some(entry) = state.components.shift_remove(name) {
            removed.push((name.clone(), entry));
        }
    }
    let gone = |name: &str| names.iter().any(|n| n == name);
    state.lifecycle.order.retain(|name| !gone(name));
    for providers in state.provides.values_mut() {
        providers.retain(|name| !gone(name));
    }
    state.provides.retain(|_, providers| !providers.is_empty());
    state
        .captured_outputs
        .retain(|output| !gone(&output.component));
    Ok(removed)
}

/// Renames the component `old` to `new` everywhere the state names it.
/// The entry keeps its place, status, parameters and outputs; its
/// `hub.componentName` parameter takes the new name. Fails when `old` has
/// no entry or `new` has one.
pub fn rename(state: &mut State, old: &str, new: &str) -> Result<(), EditError> {
    if new.is_empty() || new.contains([':', '|']) {
        return Err(EditError::BadName {
            name: new.to_string(),
        });
    }
    check_known(state, old)?;
    if state.components.contains_key(new) || old == new {
        return Err(EditError::Exists {
            old: old.to_string(),
            new: new.to_string(),
        });
    }
    let rename = |name: &mut String| {
        if name == old {
            *name = new.to_string();
        }
    };
    rename_entry(state, old, new);
    rename_in_order(&mut state.lifecycle.order, old, new);
    state.provides.values_mut().flatten().for_each(rename);
    state.stack_parameters.iter_mut().for_each(|p| {
        let mut component = p.component().to_string();
        rename(&mut component);
        if component != p.component() {
            p.set_component(&component);
        }
    });
    let old_prefix = format!("{old}:");
    for output in &mut state.stack_outputs {
        if let Some(rest) = output.name.strip_prefix(&old_prefix) {
            output.name = format!("{new}:{rest}");
        }
    }
    for output in &mut state.captured_outputs {
        rename_output(output, old, new);
    }
    rename_in_snapshots(state, old, new);
    for entry in state.components.values_mut() {
        if let Some(fingerprint) = &mut entry.fingerprint {
            fingerprint.upstream = rename_key(std::mem::take(&mut fingerprint.upstream), old, new);
        }
    }
    state
        .operations
        .iter_mut()
        .flat_map(|operation| operation.phases.iter_mut())
        .for_each(|phase| rename(&mut phase.phase));
    Ok(())
}

/// The entry under its new name, in the same place; its
/// `hub.componentName` parameter says the new name.
fn rename_entry(state: &mut State, old: &str, new: &str) {
    let Some((index, _, mut entry)) = state.components.shift_remove_full(old) else {
        return;
    };
    for parameter in &mut entry.parameters {
        if parameter.name() == "hub.componentName" && parameter.value.as_str() == Some(old) {
            parameter.value = yaml_serde::Value::String(new.to_string());
        }
    }
    state.components.shift_insert(index, new.to_string(), entry);
}

/// `old` replaced by `new`; a `new` already listed is dropped, so that the
/// order names each component once.
fn rename_in_order(order: &mut Vec<String>, old: &str, new: &str) {
    if !order.iter().any(|name| name == old) {
        return;
    }
    order.retain(|name| name != new);
    for name in order.iter_mut().filter(|name| *name == old) {
        *name = new.to_string();
    }
}

fn rename_key(map: IndexMap<String, String>, old: &str, new: &str) -> IndexMap<String, String> {
    map.into_iter()
        .map(|(key, value)| match key == old {
            true => (new.to_string(), value),
            false => (key, value),
        })
        .collect()
}

/// An output of `old` becomes one of `new`, its `hub.components.OLD.*`
/// bookkeeping name too.
fn rename_output(output: &mut CapturedOutput, old: &str, new: &str) {
    if output.component != old {
        return;
    }
    output.component = new.to_string();
    let bookkeeping = format!("hub.components.{old}.");
    if let Some(rest) = output.name.strip_prefix(&bookkeeping) {
        output.name = format!("hub.components.{new}.{rest}");
    }
}

/// Every entry's snapshot that holds outputs of `old`, rebuilt with them
/// renamed; each rebuilt one shares what it can with the one rebuilt
/// before it.
fn rename_in_snapshots(state: &mut State, old: &str, new: &str) {
    let mut previous = Snapshot::default();
    for entry in state.components.values_mut() {
        if entry.captured_outputs.outputs_of(old).is_empty() {
            continue;
        }
        let mut outputs = entry.captured_outputs.to_vec();
        for output in &mut outputs {
            rename_output(output, old, new);
        }
        entry.captured_outputs = Snapshot::derive(&previous, outputs);
        previous = entry.captured_outputs.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Fingerprint, Operation, Phase, StateParameter};
    use yaml_serde::Value;

    fn output(component: &str, name: &str) -> CapturedOutput {
        CapturedOutput {
            component: component.into(),
            name: name.into(),
            value: Value::String(format!("{component}-{name}")),
            ..CapturedOutput::default()
        }
    }

    /// `db` then `app` (which depends on db), both deployed.
    fn sample() -> State {
        let mut state = State::default();
        state.lifecycle.order = vec!["db".into(), "app".into()];
        state.provides.insert("database".into(), vec!["db".into()]);
        let db_outputs = vec![output("db", "host")];
        let both = vec![output("db", "host"), output("app", "url")];
        let db = ComponentState {
            status: "deployed".into(),
            parameters: vec![StateParameter::new(
                "hub.componentName",
                Value::String("db".into()),
            )],
            captured_outputs: Snapshot::from_outputs(db_outputs),
            ..ComponentState::default()
        };
        let app = ComponentState {
            status: "deployed".into(),
            captured_outputs: Snapshot::from_outputs(both.clone()),
            fingerprint: Some(Fingerprint {
                upstream: [("db".to_string(), "sha256:x".to_string())].into(),
                ..Fingerprint::default()
            }),
            ..ComponentState::default()
        };
        state.components.insert("db".into(), db);
        state.components.insert("app".into(), app);
        state.captured_outputs = both;
        let mut qualified = StateParameter::new("size", Value::Null);
        qualified.set_component("db");
        state.stack_parameters.push(qualified);
        state.operations.push(Operation {
            phases: vec![Phase {
                phase: "db".into(),
                status: "success".into(),
            }],
            ..Operation::default()
        });
        state
    }

    #[test]
    fn a_rename_reaches_every_place_that_names_the_component() {
        let mut state = sample();
        rename(&mut state, "db", "database").expect("rename");
        assert_eq!(
            state.components.keys().collect::<Vec<_>>(),
            ["database", "app"]
        );
        assert_eq!(state.lifecycle.order, ["database", "app"]);
        assert_eq!(state.provides["database"], ["database"]);
        assert_eq!(state.stack_parameters[0].component(), "database");
        assert_eq!(state.operations[0].phases[0].phase, "database");
        let entry = &state.components["database"];
        assert_eq!(entry.status, "deployed");
        assert_eq!(entry.parameters[0].value.as_str(), Some("database"));
        let app = &state.components["app"];
        let upstream = &app.fingerprint.as_ref().expect("fingerprint").upstream;
        assert_eq!(upstream.keys().collect::<Vec<_>>(), ["database"]);
        let names: Vec<String> = app
            .captured_outputs
            .iter()
            .map(|o| o.qualified_name())
            .collect();
        assert_eq!(names, ["app:url", "database:host"]);
        assert_eq!(
            entry.captured_outputs.to_vec()[0].qualified_name(),
            "database:host"
        );
        assert!(state.captured_outputs.iter().all(|o| o.component != "db"));
    }

    #[test]
    fn a_rename_onto_an_existing_or_missing_name_is_refused() {
        let mut state = sample();
        let error = rename(&mut state, "db", "app").unwrap_err();
        assert!(matches!(error, EditError::Exists { .. }), "{error}");
        let error = rename(&mut state, "dbb", "x").unwrap_err();
        assert!(
            matches!(&error, EditError::Unknown { close, .. } if close == &["db"]),
            "{error}"
        );
        assert!(error.hint().is_some_and(|h| h.contains("`db`")));
        assert_eq!(state, sample(), "nothing changed");
    }

    #[test]
    fn forgetting_removes_the_entry_and_what_says_it_is_deployed() {
        let mut state = sample();
        let removed = forget(&mut state, &["db".into()]).expect("forget");
        assert_eq!(removed[0].0, "db");
        assert_eq!(state.components.keys().collect::<Vec<_>>(), ["app"]);
        assert_eq!(state.lifecycle.order, ["app"]);
        assert!(state.provides.is_empty());
        assert_eq!(state.captured_outputs, [output("app", "url")]);
        assert_eq!(state.operations, sample().operations, "history is kept");
    }

    #[test]
    fn forgetting_checks_every_name_first() {
        let mut state = sample();
        let error = forget(&mut state, &["db".into(), "nope".into()]).unwrap_err();
        assert!(matches!(error, EditError::Unknown { .. }), "{error}");
        assert_eq!(state, sample());
    }
}
