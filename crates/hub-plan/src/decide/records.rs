//! What a run writes into the state: the component entries' parameters,
//! meta and raw outputs, the stack parameters and the stack-level outputs;
//! and where the component log files go.

use hub_manifest::redact::SecretMasker;
use hub_manifest::Manifest;
use hub_params::{self as params, ExpandedParam, Locked};
use hub_state::{self as state, ComponentMeta, ComponentState, RawOutput, State, StateParameter};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// The stack-level `capturedOutputs` after a deploy: all outputs of a
/// complete run; otherwise the run's outputs merged into the old ones.
pub fn refresh_stack_outputs(state: &mut State, outputs: &[state::CapturedOutput], complete: bool) {
    if complete {
        state.captured_outputs = outputs.to_vec();
        return;
    }
    for output in outputs {
        let key = output.qualified_name();
        match state
            .captured_outputs
            .iter_mut()
            .find(|o| o.qualified_name() == key)
        {
            Some(existing) => *existing = output.clone(),
            None => state.captured_outputs.push(output.clone()),
        }
    }
}

/// `STATE.logs`: the folder of the per-component log files, beside the
/// state's real location (see [`hub_state::real_location`]); for a
/// remote state, `BASENAME.logs` in the current folder.
pub fn log_dir(state: &Path) -> PathBuf {
    if let Ok(remote) = hub_state::remote::RemoteLocation::of_path(state) {
        return PathBuf::from(format!("{}.logs", remote.basename()));
    }
    let mut name = hub_state::real_location(state).into_os_string();
    name.push(".logs");
    PathBuf::from(name)
}

pub fn is_secret_output(output: &state::CapturedOutput) -> bool {
    output.kind.starts_with("secret") || hub_manifest::secrets::looks_secret(&output.name)
}

/// The secret outputs a state already holds, masked from the start of a
/// run: a component printing them again is masked before its `Outputs:`
/// block says they are secret.
pub fn mask_recorded_secrets(masker: &mut SecretMasker, state: &State) {
    // Each entry's own outputs are found through its snapshot's ladders
    // (see `Snapshot::outputs_of`): what the component holds, not the
    // whole snapshot, and no map of every output.
    for (name, entry) in &state.components {
        mask_entry_secrets(masker, name, entry);
    }
}

/// [`mask_recorded_secrets`] for one component's entry.
pub fn mask_entry_secrets(masker: &mut SecretMasker, name: &str, entry: &ComponentState) {
    if !entry.captured_outputs.is_empty() {
        mask_secret_outputs(masker, &entry.captured_outputs.outputs_of(name));
    }
}

fn mask_secret_outputs(masker: &mut SecretMasker, outputs: &[state::CapturedOutput]) {
    for output in outputs.iter().filter(|o| is_secret_output(o)) {
        masker.add(&params::format::substitution_text(Some(&output.value)));
    }
}

pub fn state_parameters(locked: &Locked) -> Vec<StateParameter> {
    locked
        .params
        .values()
        .map(|p| {
            let value = p.value.clone().unwrap_or(Value::Null);
            StateParameter::qualified(p.name(), p.component(), value, p.env())
        })
        .collect()
}

/// Whether `recorded` (a state's `stackParameters`) holds what
/// [`state_parameters`] would make of `locked`, in any order: the same
/// items, each once. A state writes the list sorted by qualified name, so
/// keeping `recorded` then writes the same text as replacing it.
///
/// Compared in place, one key at a time: at 10,000 components the list
/// has 220,000 items, and building it a second time (with two sorted key
/// lists to compare) was the peak of a no-op `deploy --changed`.
pub fn same_state_parameters(locked: &Locked, recorded: &[StateParameter]) -> bool {
    if recorded.len() != locked.params.len() {
        return false;
    }
    let mut matched = vec![false; recorded.len()];
    let mut key = String::new();
    recorded.iter().all(|item| {
        key.clear();
        item.push_qualified_name(&mut key);
        let Some((at, _, param)) = locked.params.get_full(key.as_str()) else {
            return false;
        };
        let same_value = match &param.value {
            Some(value) => *value == item.value,
            None => item.value.is_null(),
        };
        let same = param.name() == item.name()
            && param.component() == item.component()
            && param.env() == item.env()
            && same_value;
        same && !std::mem::replace(&mut matched[at], true)
    })
}

pub fn component_parameters(params: &[ExpandedParam]) -> Vec<StateParameter> {
    params
        .iter()
        .map(|p| {
            let value = p.value.clone().unwrap_or(Value::Null);
            StateParameter::qualified(&p.name, "", value, &p.env)
        })
        .collect()
}

pub fn component_meta(manifest: &Manifest) -> ComponentMeta {
    let meta = &manifest.meta;
    ComponentMeta {
        origin: meta.origin.clone(),
        kind: meta.kind.clone(),
        title: meta.title.clone(),
        brief: meta.brief.clone(),
        description: meta.description.clone(),
        version: meta.version.clone(),
        maturity: meta.maturity.clone(),
        icon: meta.icon.clone(),
    }
}

/// The `Outputs:` a component printed (`child::capture::RawOutputs` in
/// the engine), sorted by name for the state.
pub fn raw_outputs(raw: &IndexMap<String, String>) -> Vec<RawOutput> {
    let mut out: Vec<RawOutput> = raw
        .iter()
        .map(|(name, value)| RawOutput {
            name: name.clone(),
            value: value.clone(),
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// The outputs a component's parameters are expanded with: of `visible`,
/// those it may read (all of them when `reads` is not known).
pub fn scope_outputs(
    visible: &[state::CapturedOutput],
    reads: Option<&std::collections::HashSet<String>>,
) -> Vec<params::CapturedOutput> {
    match reads {
        Some(reads) => super::known::outputs_read(visible, reads)
            .into_iter()
            .map(to_scope_output)
            .collect(),
        None => visible.iter().map(to_scope_output).collect(),
    }
}

pub fn to_scope_output(output: &state::CapturedOutput) -> params::CapturedOutput {
    params::CapturedOutput {
        component: output.component.clone(),
        name: output.name.clone(),
        value: Some(output.value.clone()),
        kind: output.kind.clone(),
        component_kind: output.component_kind.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_state::test_support::text_output as output;

    #[test]
    fn stack_level_outputs_are_replaced_after_a_complete_run_and_merged_otherwise() {
        let mut state = State {
            captured_outputs: vec![output("a", "x", "old"), output("gone", "y", "1")],
            ..State::default()
        };
        refresh_stack_outputs(&mut state, &[output("a", "x", "new")], false);
        let names: Vec<String> = state
            .captured_outputs
            .iter()
            .map(|o| o.qualified_name())
            .collect();
        assert_eq!(names, ["a:x", "gone:y"]);
        assert_eq!(state.captured_outputs[0].value, Value::String("new".into()));
        refresh_stack_outputs(&mut state, &[output("a", "x", "new")], true);
        assert_eq!(state.captured_outputs.len(), 1);
    }

    #[test]
    fn logs_live_beside_the_state() {
        assert_eq!(
            log_dir(Path::new("/s/hub.yaml.state")),
            PathBuf::from("/s/hub.yaml.state.logs")
        );
    }

    #[test]
    fn state_parameters_keep_qualifiers_and_nulls() {
        let mut locked = Locked::default();
        locked
            .insert(params::LockedParam::new("x", "a", None, params::Origin::Unset).with_env("X"));
        let written = state_parameters(&locked);
        assert_eq!(written[0].qualified_name(), "x|a");
        assert_eq!(written[0].value, Value::Null);
        assert_eq!(written[0].env(), "X");
    }

    fn locked_of(items: &[(&str, &str, Option<&str>)]) -> Locked {
        let mut locked = Locked::default();
        for (name, component, value) in items {
            let value = value.map(|v| Value::String(v.into()));
            locked.insert(params::LockedParam::new(
                name,
                component,
                value,
                params::Origin::Value,
            ));
        }
        locked
    }

    #[test]
    fn a_state_keeps_its_stack_parameters_only_when_they_are_the_locked_ones() {
        let locked = locked_of(&[
            ("a", "", Some("1")),
            ("b", "c", None),
            ("d", "c", Some("2")),
        ]);
        let mut same = state_parameters(&locked);
        assert!(same_state_parameters(&locked, &same));
        same.reverse();
        assert!(same_state_parameters(&locked, &same), "any order");

        let mut changed = same.clone();
        changed[0].value = Value::String("3".into());
        assert!(!same_state_parameters(&locked, &changed), "a value");
        let mut env = same.clone();
        env[1].set_env("B");
        assert!(!same_state_parameters(&locked, &env), "an env");
        let mut twice = same.clone();
        twice[0] = twice[1].clone();
        assert!(
            !same_state_parameters(&locked, &twice),
            "an item twice, one missing"
        );
        assert!(!same_state_parameters(&locked, &same[1..]), "fewer");
        let mut null = same.clone();
        null.iter_mut().for_each(|p| p.value = Value::Null);
        assert!(!same_state_parameters(&locked, &null), "null for a value");

        // `b|c` written as an unqualified name finds the key, not the item.
        let mut unqualified = state_parameters(&locked);
        let at = unqualified.iter().position(|p| p.name() == "b").expect("b");
        unqualified[at] = StateParameter::new("b|c", Value::Null);
        assert!(!same_state_parameters(&locked, &unqualified));
    }
}
