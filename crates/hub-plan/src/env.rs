//! The environment of a component's process (§6.9): the OS base (filtered
//! by `--os-environment`, computed once per run), the variables that let
//! a component call hub back (`HUB`, `HUB_ELABORATE`, `HUB_STATE`,
//! `HUB_COMPONENTS_BASEDIR`), then the component's parameters that have an
//! `env:` name, then the variables hub always adds. Later entries win.

use hub_manifest::diag::Warnings;
use hub_manifest::secrets::HEADER_VARIABLES;
use hub_params::format::json_text;
use hub_params::ExpandedParam;
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use yaml_serde::Value;

/// `--os-environment`: how much of hub's own environment components see.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OsEnvironment {
    /// Everything.
    Everything,
    /// Everything except `TF_VAR_*`.
    #[default]
    NoTfvars,
    /// Only the names of [`STRICT`].
    Strict,
}

impl std::str::FromStr for OsEnvironment {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "everything" => Ok(OsEnvironment::Everything),
            "no-tfvars" => Ok(OsEnvironment::NoTfvars),
            "strict" => Ok(OsEnvironment::Strict),
            other => Err(format!(
                "`{other}` is not one of everything, no-tfvars, strict"
            )),
        }
    }
}

/// The names kept by `--os-environment strict`; a trailing `*` matches a
/// prefix.
pub(crate) const STRICT: [&str; 30] = [
    "AWS_PROFILE",
    "AWS_DEFAULT_REGION",
    "AZURE_*",
    "ARM_*",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "KUBECONFIG",
    "HUB",
    "HUB_*",
    "GOBIN",
    "GOPATH",
    "GOROOT",
    "GOOS",
    "GOARCH",
    "DOCKER_*",
    "NVM_*",
    "NODE_*",
    "SDKMAN_*",
    "GRADLE_HOME",
    "VIRTUALENVWRAPPER_*",
    "VIRTUAL_ENV",
    "HOME",
    "LANG",
    "LC_*",
    "LOGNAME",
    "PATH",
    "LD_LIBRARY_PATH",
    "SHELL",
    "SSH_AUTH_SOCK",
    "TERM",
    "TMPDIR",
];

fn strict_keeps(name: &str) -> bool {
    name == "USER"
        || STRICT
            .iter()
            .any(|pattern| match pattern.strip_suffix('*') {
                Some(prefix) => name.starts_with(prefix),
                None => name == *pattern,
            })
}

/// Where hub and the run's files are, for components that call hub.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Nested {
    /// The running hub executable.
    pub hub: PathBuf,
    /// The elaborated file, when there is one on disk.
    pub elaborate: Option<PathBuf>,
    /// The state file (absolute even before it exists).
    pub state: Option<PathBuf>,
    /// `-b`, when given.
    pub components_base_dir: Option<PathBuf>,
}

/// The base environment of every component of a run: hub's environment
/// filtered by `mode` (without the OTLP headers variables, in every mode),
/// plus the nested-CLI variables (which `strict` keeps:
/// they start with `HUB`).
pub fn base(
    mode: OsEnvironment,
    vars: &[(String, String)],
    nested: &Nested,
) -> Vec<(String, String)> {
    let mut out: IndexMap<String, String> = vars
        .iter()
        // The headers of hub's own trace exports (a collector's API key)
        // are hub's, not the components'.
        .filter(|(name, _)| !HEADER_VARIABLES.contains(&name.as_str()))
        .filter(|(name, _)| match mode {
            OsEnvironment::Everything => true,
            OsEnvironment::NoTfvars => !name.starts_with("TF_VAR_"),
            OsEnvironment::Strict => strict_keeps(name),
        })
        .cloned()
        .collect();
    let mut set = |name: &str, path: &Path| {
        out.insert(name.to_string(), path.display().to_string());
    };
    set("HUB", &nested.hub);
    if let Some(path) = &nested.elaborate {
        set("HUB_ELABORATE", path);
    }
    if let Some(path) = &nested.state {
        set("HUB_STATE", path);
    }
    if let Some(path) = &nested.components_base_dir {
        set("HUB_COMPONENTS_BASEDIR", path);
    }
    out.into_iter().collect()
}

/// The component's name unless a parameter maps to the variable:
/// `COMPONENT_NAME` (the reference), `HUB_COMPONENT_NAME` (the name hubctl's
/// tutorials and components read, which they bound to `hub.componentName`).
pub(crate) const COMPONENT_NAME_VARIABLES: [&str; 2] = ["COMPONENT_NAME", "HUB_COMPONENT_NAME"];

/// What a component adds to the base environment.
pub struct ComponentVariables<'a> {
    pub component: &'a str,
    /// The expanded parameters (§6.3), `hub.provides` included.
    pub params: &'a [ExpandedParam],
    /// `HUB_RANDOM`: the one-time pad, base64 without padding.
    pub random: &'a str,
    pub component_dir: &'a Path,
    pub base_dir: &'a Path,
}

/// A value as a component sees it in its environment: strings as they
/// are, null as empty, anything else as compact JSON; then trimmed.
pub(crate) fn env_text(value: Option<&Value>) -> String {
    let text = match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Tagged(tagged)) => return env_text(Some(&tagged.value)),
        Some(other) => json_text(other),
    };
    text.trim().to_string()
}

/// The complete environment of the component's process.
pub fn component(
    base: &[(String, String)],
    vars: &ComponentVariables<'_>,
    warnings: &mut Warnings,
) -> Vec<(String, String)> {
    let mut out: IndexMap<String, String> = base.iter().cloned().collect();
    let mut mapped: IndexMap<&str, (&str, String)> = IndexMap::new();
    for param in vars.params.iter().filter(|p| !p.env.is_empty()) {
        let value = env_text(param.value.as_ref());
        if let Some((earlier, previous)) = mapped.get(param.env.as_str()) {
            if *previous != value {
                warnings.warn(
                    None,
                    format!(
                        "component `{}`: parameters `{earlier}` and `{}` both set `{}`; `{}` wins",
                        vars.component, param.name, param.env, param.name
                    ),
                );
            }
        }
        mapped.insert(&param.env, (&param.name, value));
    }
    // A parameter mapped to one of these names keeps its value.
    let unmapped_names: Vec<&str> = COMPONENT_NAME_VARIABLES
        .into_iter()
        .filter(|name| !mapped.contains_key(name))
        .collect();
    for (name, (_, value)) in mapped {
        out.insert(name.to_string(), value);
    }
    for name in unmapped_names {
        out.insert(name.into(), vars.component.to_string());
    }
    out.insert("HUB_COMPONENT".into(), vars.component.to_string());
    out.insert(
        "HUB_COMPONENT_DIR".into(),
        vars.component_dir.display().to_string(),
    );
    out.insert("HUB_BASE_DIR".into(), vars.base_dir.display().to_string());
    out.insert("HUB_RANDOM".into(), vars.random.to_string());
    out.into_iter()
        .filter(|(name, _)| !name.is_empty() && !name.contains('='))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_params::Origin;

    fn param(name: &str, env: &str, value: Value) -> ExpandedParam {
        ExpandedParam {
            name: name.into(),
            value: Some(value),
            env: env.into(),
            origin: Origin::Value,
            expression: None,
            declared: None,
            secret: false,
        }
    }

    fn vars(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn get<'a>(env: &'a [(String, String)], name: &str) -> Option<&'a str> {
        env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }

    #[test]
    fn os_modes_filter_the_base() {
        let os = vars(&[
            ("TF_VAR_x", "1"),
            ("FOO", "2"),
            ("PATH", "/bin"),
            ("AZURE_X", "a"),
            ("USER", "u"),
        ]);
        let nested = Nested {
            hub: "/bin/hub".into(),
            ..Nested::default()
        };
        let env = base(OsEnvironment::NoTfvars, &os, &nested);
        assert_eq!(get(&env, "FOO"), Some("2"));
        assert_eq!(get(&env, "TF_VAR_x"), None);
        let env = base(OsEnvironment::Everything, &os, &nested);
        assert_eq!(get(&env, "TF_VAR_x"), Some("1"));
        let env = base(OsEnvironment::Strict, &os, &nested);
        assert_eq!(get(&env, "FOO"), None);
        assert_eq!(get(&env, "PATH"), Some("/bin"));
        assert_eq!(get(&env, "AZURE_X"), Some("a"));
        assert_eq!(get(&env, "HUB"), Some("/bin/hub"));
        assert!("bogus".parse::<OsEnvironment>().is_err());
    }

    #[test]
    fn the_otlp_headers_reach_no_component_in_any_mode() {
        let os = vars(&[
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=k"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=k"),
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            ("HUB_X", "kept"),
        ]);
        for mode in [
            OsEnvironment::Everything,
            OsEnvironment::NoTfvars,
            OsEnvironment::Strict,
        ] {
            let env = base(mode, &os, &Nested::default());
            assert_eq!(get(&env, "OTEL_EXPORTER_OTLP_HEADERS"), None, "{mode:?}");
            assert_eq!(get(&env, "OTEL_EXPORTER_OTLP_TRACES_HEADERS"), None);
            assert_eq!(get(&env, "HUB_X"), Some("kept"));
        }
    }

    #[test]
    fn values_are_formatted_and_trimmed() {
        let list: Value = yaml_serde::from_str("[a, b]").unwrap();
        let map: Value = yaml_serde::from_str("{k: v}").unwrap();
        assert_eq!(env_text(Some(&Value::from(3))), "3");
        assert_eq!(env_text(Some(&list)), r#"["a","b"]"#);
        assert_eq!(env_text(Some(&map)), r#"{"k":"v"}"#);
        assert_eq!(env_text(Some(&Value::String(" padded ".into()))), "padded");
        assert_eq!(env_text(None), "");
    }

    /// Component `c` in `/s/c` of a stack in `/s`.
    fn of_c(params: &[ExpandedParam]) -> ComponentVariables<'_> {
        ComponentVariables {
            component: "c",
            params,
            random: "pad",
            component_dir: Path::new("/s/c"),
            base_dir: Path::new("/s"),
        }
    }

    #[test]
    fn component_variables_and_later_mapping_wins() {
        let params = vec![
            param("a", "X", Value::String("1".into())),
            param("b", "X", Value::String("2".into())),
            param("n", "COMPONENT_NAME", Value::String("custom".into())),
        ];
        let mut warnings = Warnings::default();
        let env = component(&vars(&[("X", "os")]), &of_c(&params), &mut warnings);
        assert_eq!(get(&env, "X"), Some("2"));
        assert_eq!(warnings.len(), 1);
        assert_eq!(get(&env, "COMPONENT_NAME"), Some("custom"));
        assert_eq!(get(&env, "HUB_COMPONENT"), Some("c"));
        assert_eq!(get(&env, "HUB_RANDOM"), Some("pad"));
        assert_eq!(get(&env, "HUB_COMPONENT_DIR"), Some("/s/c"));
        assert_eq!(get(&env, "HUB_BASE_DIR"), Some("/s"));
        assert_eq!(get(&env, "HUB_COMPONENT_NAME"), Some("c"));
    }

    #[test]
    fn a_parameter_mapped_to_hub_component_name_keeps_its_value() {
        let params = vec![param(
            "hub.componentName",
            "HUB_COMPONENT_NAME",
            Value::String("named".into()),
        )];
        let env = component(&[], &of_c(&params), &mut Warnings::default());
        assert_eq!(get(&env, "HUB_COMPONENT_NAME"), Some("named"));
        assert_eq!(get(&env, "COMPONENT_NAME"), Some("c"));
    }
}
