//! The few parts of a state file (`hub.yaml.state`) the parameter engine
//! reads: stack parameters, captured outputs and each component's outputs
//! snapshot. Reading goes through the state module, which owns the format.

use super::captured::CapturedOutput;
use super::drift::{self, Drift};
use super::{Locked, LockedParam, Origin, ParamsError};
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::secrets::looks_secret;
use hub_manifest::value_is_empty;
use hub_state::{CapturedOutput as StateOutput, State as StateFile, StateError};
use indexmap::IndexMap;
use std::borrow::Cow;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// A state file, read (or borrowed from the step that read it: locking
/// only reads it, so a run's state is not copied for it).
#[derive(Debug, Clone)]
pub struct StateView<'s> {
    path: PathBuf,
    file: Cow<'s, StateFile>,
}

impl StateView<'static> {
    /// Reads a plain or gzip-compressed state; rejects anything that is not
    /// `kind: state`, `version: 1`. Remarks on the rest of the file
    /// (unknown keys, further documents) go to `warnings`.
    pub fn read(path: &Path, warnings: &mut Warnings) -> Result<StateView<'static>, ParamsError> {
        let file =
            hub_state::read(path, warnings).and_then(|file| file.ok_or_else(|| not_found(path)));
        StateView::new(path, file)
    }

    pub fn parse(
        path: &Path,
        text: &str,
        warnings: &mut Warnings,
    ) -> Result<StateView<'static>, ParamsError> {
        StateView::new(path, hub_state::parse(path, text, warnings))
    }

    fn new(
        path: &Path,
        file: Result<StateFile, StateError>,
    ) -> Result<StateView<'static>, ParamsError> {
        let path = path.to_path_buf();
        match file {
            Ok(file) => Ok(StateView {
                path,
                file: Cow::Owned(file),
            }),
            Err(error) => Err(ParamsError::State {
                path,
                error: Box::new(error),
            }),
        }
    }
}

impl<'s> StateView<'s> {
    /// Borrows a state another step already read from `path`.
    pub fn from_read(path: &Path, file: &'s StateFile) -> StateView<'s> {
        StateView {
            path: path.to_path_buf(),
            file: Cow::Borrowed(file),
        }
    }

    /// The provided capabilities, space-separated, as `hub.provides` shows
    /// them.
    pub fn provides(&self) -> String {
        self.file.provided().join(" ")
    }

    /// The value of a stack parameter by qualified name.
    pub fn stack_parameter(&self, qualified_name: &str) -> Option<&Value> {
        self.file
            .stack_parameters
            .iter()
            .find(|p| p.qualified_name() == qualified_name)
            .and_then(|p| p.non_null_value())
    }

    /// Merges the state's stack parameters into freshly locked ones:
    /// unknown ones are added; an empty locked value takes the state's
    /// (warned about, secret-looking values masked); a different non-empty
    /// one is kept and listed in `locked.drift`, for the command to report.
    pub fn merge_into(&self, locked: &mut Locked, warnings: &mut Warnings) {
        let mut drift = Vec::new();
        let at = Some(Location::file(&self.path));
        for p in &self.file.stack_parameters {
            let key = p.qualified_name();
            let value = p.non_null_value().cloned();
            let Some(current) = locked.params.get_mut(key.as_str()) else {
                locked.insert(
                    LockedParam::new(p.name(), p.component(), value, Origin::State)
                        .with_env(p.env())
                        .declared_at(at.clone())
                        .with_secret(looks_secret(p.name())),
                );
                continue;
            };
            let secret = looks_secret(p.name()) || current.secret;
            let shown = |v: &Option<Value>| {
                if secret {
                    "(masked)".to_string()
                } else {
                    super::format::substitution_text(v.as_ref())
                }
            };
            // The stack parameter's declaration, else the state.
            let here = current.declared().or_else(|| at.clone());
            if current.value != value {
                if value_is_empty(&current.value) {
                    warnings.warn(
                        here.clone(),
                        format!(
                            "stack parameter `{key}` is empty; using the state's value `{}`",
                            shown(&value)
                        ),
                    );
                    current.value = value;
                    current.set_origin(Origin::State);
                } else if !value_is_empty(&value) {
                    drift::push(
                        &mut drift,
                        Drift {
                            name: current.name().to_string(),
                            components: vec![current.component().to_string()],
                            recorded: value,
                            current: current.value.clone(),
                            origin: current.origin().clone(),
                            declared: current.declared(),
                            secret,
                        },
                    );
                }
            }
            if current.env().is_empty() {
                current.set_env(p.env());
            } else if !p.env().is_empty() && current.env() != p.env() {
                warnings.warn(
                    here,
                    format!(
                        "stack parameter `{key}` is exported as {} but the state says {}; keeping {}",
                        current.env(),
                        p.env(),
                        current.env()
                    ),
                );
            }
        }
        locked.drift = drift;
    }

    /// The outputs visible to component `component` when a deploy starts
    /// at it: the snapshot of the nearest earlier component (in the state's
    /// lifecycle order) that has one, else the stack-level outputs; then
    /// the snapshots of its `depends`, last dependency first.
    pub fn outputs_before(
        &self,
        component: &str,
        depends: &[String],
        warnings: &mut Warnings,
    ) -> Vec<CapturedOutput> {
        let order = &self.file.lifecycle.order;
        let mut outputs: IndexMap<String, CapturedOutput> = IndexMap::new();
        for output in &self.file.outputs_before(order, component) {
            outputs.insert(output_key(output), to_captured(output));
        }
        for dep in depends.iter().rev() {
            let Some(entry) = self.file.components.get(dep) else {
                continue;
            };
            for output in &entry.captured_outputs.to_vec() {
                let key = output_key(output);
                let captured = to_captured(output);
                match outputs.get_mut(&key) {
                    None => {
                        outputs.insert(key, captured);
                    }
                    Some(current) if current.value == captured.value => {}
                    Some(current) => {
                        if !value_is_empty(&current.value) && !output.name.starts_with("hub.") {
                            warnings.warn(
                                Some(Location::file(&self.path)),
                                format!("output `{key}` differs in the snapshot of `{dep}`; using that one"),
                            );
                        }
                        *current = captured;
                    }
                }
            }
        }
        outputs.into_values().collect()
    }
}

/// The error for a `-s` state that does not exist ([`hub_state::read`]
/// gives `Ok(None)` then).
fn not_found(path: &Path) -> StateError {
    StateError::Read {
        path: path.to_path_buf(),
        source: std::io::Error::from_raw_os_error(libc::ENOENT),
        backup: None,
    }
}

fn output_key(output: &StateOutput) -> String {
    format!("{}:{}", output.component, output.name)
}

fn to_captured(output: &StateOutput) -> CapturedOutput {
    CapturedOutput {
        component: output.component.clone(),
        name: output.name.clone(),
        value: output.non_null_value().cloned(),
        kind: output.kind.clone(),
        component_kind: output.component_kind.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STATE: &str = "version: 1\nkind: state\nlifecycle: {order: [a, b, c]}\nstackParameters:\n- {name: dns.domain, value: example.com}\n- {name: api.token, value: T}\n- {name: app.color, value: red}\n- {name: legacy.flag, value: 'on'}\ncapturedOutputs:\n- {component: b, name: url, value: u}\ncomponents:\n  a:\n    capturedOutputs:\n    - {component: a, name: host, value: h}\n";

    fn param(name: &str, value: &str) -> LockedParam {
        LockedParam::new(name, "", Some(Value::String(value.into())), Origin::Value)
    }

    #[test]
    fn merge_follows_the_spec_example() {
        let state = StateView::parse(Path::new("s"), STATE, &mut Warnings::default()).unwrap();
        let mut locked = Locked::default();
        for (n, v) in [
            ("dns.domain", "example.com"),
            ("api.token", ""),
            ("app.color", "blue"),
        ] {
            locked.params.insert(n.into(), param(n, v));
        }
        let mut warnings = Warnings::default();
        state.merge_into(&mut locked, &mut warnings);
        let text = |n: &str| super::super::format::substitution_text(locked.value(n));
        assert_eq!(text("dns.domain"), "example.com");
        assert_eq!(text("api.token"), "T");
        assert_eq!(text("app.color"), "blue");
        assert_eq!(text("legacy.flag"), "on");
        let all: Vec<String> = warnings.iter().map(|w| w.message.clone()).collect();
        assert_eq!(all.len(), 1, "{all:?}");
        assert!(all[0].contains("(masked)"), "api.token is masked: {all:?}");
        let changed: Vec<&str> = locked.drift.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(changed, ["app.color"]);
    }

    #[test]
    fn snapshots_before_a_component() {
        let state = StateView::parse(Path::new("s"), STATE, &mut Warnings::default()).unwrap();
        let mut warnings = Warnings::default();
        let names = |outputs: Vec<CapturedOutput>| {
            outputs
                .iter()
                .map(|o| format!("{}:{}", o.component, o.name))
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(state.outputs_before("a", &[], &mut warnings)),
            Vec::<String>::new()
        );
        assert_eq!(
            names(state.outputs_before("c", &[], &mut warnings)),
            vec!["a:host"]
        );
        assert_eq!(
            names(state.outputs_before("a", &["a".into()], &mut warnings)),
            vec!["a:host"]
        );
    }

    #[test]
    fn rejects_other_kinds() {
        assert!(StateView::parse(
            Path::new("s"),
            "version: 1\nkind: foo\n",
            &mut Warnings::default()
        )
        .is_err());
        assert!(StateView::parse(
            Path::new("s"),
            "version: 2\nkind: state\n",
            &mut Warnings::default()
        )
        .is_err());
    }
}
