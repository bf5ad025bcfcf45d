//! `-s STATE`: fills the empty top-level parameters of a stack from the
//! state of an already deployed platform stack, and counts what that
//! platform provides as available.

use super::params::show;
use super::{ElaborateError, ENVIRONMENT_PROVIDED};
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::{value_is_empty, Manifest, Parameter};
use hub_state::{CapturedOutput, State, StateError};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// Where the state is and which of its parts give values.
#[derive(Debug, Clone)]
pub struct StateSource {
    pub path: PathBuf,
    /// Take values from the state's stack parameters too, not only from its
    /// stack outputs.
    pub use_stack_parameters: bool,
}

/// The parameters a Kubernetes provider hands to the stacks deployed on it.
pub(crate) const KUBERNETES_PARAMETERS: [&str; 9] = [
    "dns.domain",
    "kubernetes.flavor",
    "kubernetes.api.endpoint",
    "kubernetes.api.token",
    "kubernetes.api.caCert",
    "kubernetes.api.clientCert",
    "kubernetes.api.clientKey",
    "kubernetes.eks.cluster",
    "kubernetes.gke.cluster",
];

/// Applies the state at `source` to the assembled stack document.
pub fn apply(
    doc: &mut Manifest,
    source: &StateSource,
    warnings: &mut Warnings,
) -> Result<(), ElaborateError> {
    let state = read(&source.path, warnings)?;
    let values = candidates(&state, source.use_stack_parameters);
    let kubernetes = kubernetes_values(&state);
    if doc
        .requires
        .iter()
        .any(|r| r == "kubernetes" || r == "kubectl")
    {
        add_bare_parameters(&mut doc.parameters, kubernetes.keys());
    }
    fill(
        &mut doc.parameters,
        &values,
        &kubernetes,
        &source.path,
        warnings,
    );
    apply_provides(doc, &state);
    Ok(())
}

fn read(path: &Path, warnings: &mut Warnings) -> Result<State, ElaborateError> {
    // Remarks on the file (unknown keys, further documents) are said: the
    // state is usually another stack's, which no command of this one reads.
    // (A state has no schema: none of them is a near typo that stops.)
    let state = hub_state::read(path, warnings).map_err(|error| match error {
        StateError::WrongKind { kind, location } => ElaborateError::StateKind { kind, location },
        other => ElaborateError::State(other),
    })?;
    state.ok_or_else(|| {
        ElaborateError::State(StateError::Read {
            path: path.to_path_buf(),
            source: std::io::Error::from_raw_os_error(libc::ENOENT),
            backup: None,
        })
    })
}

/// Values by plain name: stack parameters without a component (when
/// enabled), overridden by stack outputs (`component:name` counts as `name`).
fn candidates(state: &State, use_stack_parameters: bool) -> IndexMap<String, Value> {
    let parameters = state
        .stack_parameters
        .iter()
        .filter(|p| use_stack_parameters && p.component().is_empty())
        .map(|p| (p.name(), &p.value));
    let outputs = state
        .stack_outputs
        .iter()
        .map(|o| (plain_name(&o.name), &o.value));
    non_empty(parameters.chain(outputs))
}

/// The Kubernetes parameters of the platform: from its stack outputs when
/// they carry at least two of them, else from the captured outputs of the
/// first component listed as providing `kubernetes` that has any, else from
/// the stack parameters. (The reference also tries a fixed list of well-known
/// provider component names; a state written by this project always lists
/// the provider under `provides`, so that list is left out.)
fn kubernetes_values(state: &State) -> IndexMap<String, Value> {
    let known = |name: &str| KUBERNETES_PARAMETERS.contains(&name);
    let outputs = non_empty(
        state
            .stack_outputs
            .iter()
            .map(|o| (plain_name(&o.name), &o.value))
            .filter(|(name, _)| known(name)),
    );
    if outputs.len() >= 2 {
        return outputs;
    }
    let providers = state
        .provides
        .get("kubernetes")
        .map(Vec::as_slice)
        .unwrap_or_default();
    for provider in providers {
        let snapshot = snapshot_of(state, provider);
        let captured = captured_outputs(&snapshot, provider);
        if !captured.is_empty() {
            return non_empty(captured.into_iter().filter(|(name, _)| known(name)));
        }
    }
    non_empty(
        state
            .stack_parameters
            .iter()
            .filter(|p| p.component().is_empty() && known(p.name()))
            .map(|p| (p.name(), &p.value)),
    )
}

/// The snapshot `component`'s outputs are read from: its own entry's,
/// else the stack-wide list.
fn snapshot_of(state: &State, component: &str) -> Vec<CapturedOutput> {
    match state.components.get(component) {
        Some(entry) if !entry.captured_outputs.is_empty() => entry.captured_outputs.to_vec(),
        _ => state.captured_outputs.clone(),
    }
}

/// The outputs of `component` in `snapshot`.
fn captured_outputs<'a>(
    snapshot: &'a [CapturedOutput],
    component: &str,
) -> Vec<(&'a str, &'a Value)> {
    snapshot
        .iter()
        .filter(|o| o.component == component)
        .map(|o| (o.name.as_str(), &o.value))
        .collect()
}

fn non_empty<'a>(pairs: impl Iterator<Item = (&'a str, &'a Value)>) -> IndexMap<String, Value> {
    pairs
        .map(|(name, value)| (name, Some(value.clone())))
        .filter(|(_, value)| !value_is_empty(value))
        .filter_map(|(name, value)| Some((name.to_string(), value?)))
        .collect()
}

fn plain_name(name: &str) -> &str {
    name.split_once(':').map_or(name, |(_, plain)| plain)
}

/// Declares `names` as plain stack parameters unless they already are, so
/// that the fill below gives them their value. Keeps the list sorted by key.
fn add_bare_parameters<'a>(params: &mut Vec<Parameter>, names: impl Iterator<Item = &'a String>) {
    let mut added = false;
    for name in names {
        if !params
            .iter()
            .any(|p| p.component.is_empty() && &p.name == name)
        {
            params.push(Parameter {
                name: name.clone(),
                ..Parameter::default()
            });
            added = true;
        }
    }
    if added {
        params.sort_by_cached_key(Parameter::qualified_name);
    }
}

/// Gives each empty parameter (except `hub.*`) the state's value of the same
/// plain name. A parameter read from the environment at deploy (`fromEnv`)
/// gets it as `default` instead, so the environment still wins.
fn fill(
    params: &mut [Parameter],
    values: &IndexMap<String, Value>,
    kubernetes: &IndexMap<String, Value>,
    state_path: &Path,
    warnings: &mut Warnings,
) {
    for p in params
        .iter_mut()
        .filter(|p| !p.name.starts_with("hub.") && value_is_empty(&p.value))
    {
        let Some(candidate) = values.get(&p.name).or_else(|| kubernetes.get(&p.name)) else {
            continue;
        };
        if p.from_env().is_empty() {
            p.value = Some(candidate.clone());
            continue;
        }
        if !value_is_empty(p.default_value()) && p.default_value().as_ref() != Some(candidate) {
            warnings.warn(
                Some(Location::file(state_path)),
                format!(
                    "parameter `{}` (`fromEnv: {}`) has `default: {}`; the state's value `{}` replaces it",
                    p.qualified_name(),
                    p.from_env(),
                    show(p.default_value()),
                    show(&Some(candidate.clone()))
                ),
            );
        }
        p.rare_mut().default = Some(candidate.clone());
    }
}

/// What the platform provides is no longer required, except what the
/// environment provides anyway; it is recorded in `platform.provides`.
fn apply_provides(doc: &mut Manifest, state: &State) {
    doc.requires.retain(|r| {
        ENVIRONMENT_PROVIDED.contains(&r.as_str())
            || state
                .provides
                .get(r)
                .is_none_or(|providers| providers.iter().any(|p| p == "*environment*"))
    });
    for name in state.provided() {
        if !doc.platform.provides.iter().any(|p| p == name) {
            doc.platform.provides.push(name.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(text: &str) -> State {
        yaml_serde::from_str(text).expect("state")
    }

    #[test]
    fn outputs_override_parameters_and_lose_their_prefix() {
        let s = state("kind: state\nstackParameters:\n- {name: a, value: p}\n- {name: b, value: p}\n- {name: c, component: x, value: q}\nstackOutputs:\n- {name: 'x:a', value: o}\n");
        let values = candidates(&s, true);
        assert_eq!(values.get("a"), Some(&Value::from("o")));
        assert_eq!(values.get("b"), Some(&Value::from("p")));
        assert!(!values.contains_key("c"));
        assert!(!candidates(&s, false).contains_key("b"));
    }

    #[test]
    fn kubernetes_from_stack_outputs_when_two_match() {
        let s = state("kind: state\nstackOutputs:\n- {name: kubernetes.flavor, value: eks}\n- {name: kubernetes.api.endpoint, value: e}\nprovides: {kubernetes: [k]}\ncapturedOutputs:\n- {component: k, name: kubernetes.api.token, value: t}\n");
        let values = kubernetes_values(&s);
        assert_eq!(
            values.keys().collect::<Vec<_>>(),
            ["kubernetes.flavor", "kubernetes.api.endpoint"]
        );
    }

    #[test]
    fn kubernetes_from_provider_captured_outputs() {
        let s = state("kind: state\nstackOutputs:\n- {name: kubernetes.flavor, value: eks}\nprovides: {kubernetes: [k]}\ncapturedOutputs:\n- {component: k, name: kubernetes.api.token, value: t}\n- {component: other, name: kubernetes.api.endpoint, value: e}\n");
        let values = kubernetes_values(&s);
        assert_eq!(values.keys().collect::<Vec<_>>(), ["kubernetes.api.token"]);
    }
}
