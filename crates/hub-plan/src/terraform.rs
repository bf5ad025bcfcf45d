//! Terraform components without a Makefile or script: a component folder
//! with `*.tf` files and no other implementation is deployed by hub
//! itself (see `docs/src/terraform.md`).
//!
//! * The program is `terraform`, else `tofu` (OpenTofu), from the PATH; the
//!   component's parameter `terraform.binary` or hub's environment variable
//!   `HUB_TERRAFORM` names another.
//! * `deploy`: `terraform init`, `terraform apply -auto-approve`, then
//!   `terraform output -json` into a file only its owner may read, which
//!   hub reads and removes ([`take_outputs`]): sensitive outputs become
//!   secrets, never raw outputs. `undeploy`: `init`, then
//!   `terraform destroy -auto-approve`. A dry run (`deploy-test`,
//!   `undeploy-test`) runs `terraform plan` (with `-destroy`).
//! * Every parameter with a value reaches Terraform as `TF_VAR_<name>`
//!   (`.` and `-` become `_`; lists and maps as JSON, which Terraform reads
//!   as HCL), unless the component's environment already has that name;
//!   `terraform.*` parameters are hub's own. `terraform.backend.<key>`
//!   parameters become `-backend-config=<key>=<value>` of `terraform init`,
//!   through `TF_CLI_ARGS_init`, so no value is on a command line.

use hub_params::ExpandedParam;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The parameter that names the program.
pub(crate) const BINARY_PARAMETER: &str = "terraform.binary";
/// Hub's environment variable that names the program.
pub(crate) const BINARY_ENV: &str = "HUB_TERRAFORM";
/// The prefix of the parameters that configure the backend.
pub const BACKEND_PREFIX: &str = "terraform.backend.";
/// Where the deploy leaves `terraform output -json`, in the component folder.
pub(crate) const OUTPUTS_FILE: &str = ".terraform/hub-outputs.json";
/// Where a plan step leaves `terraform show -json` of its plan, in the
/// component folder (`--plan-steps`).
pub const PLANNED_FILE: &str = ".terraform/hub-planned.json";
/// The environment variable through which the run's program reaches the
/// script when a parameter names it.
const BINARY_VAR: &str = "HUB_TERRAFORM_BINARY";

/// The script hub runs with `/bin/sh -c`; its arguments are the program,
/// the verb and the outputs file.
const SCRIPT: &str = r#"set -eu
umask 077
tf="${HUB_TERRAFORM_BINARY:-$1}"
verb=$2
outputs=$3
if ! command -v "$tf" >/dev/null 2>&1; then
  echo "hub: the Terraform program \`$tf\` was not found; install terraform or tofu on the PATH, or name it with the component parameter terraform.binary or HUB_TERRAFORM" >&2
  exit 127
fi
export TF_IN_AUTOMATION=1 TF_INPUT=0 CHECKPOINT_DISABLE=1
rm -f "$outputs"
"$tf" init -input=false -no-color
case $verb in
  deploy)
    "$tf" apply -auto-approve -input=false -no-color
    mkdir -p "$(dirname "$outputs")"
    "$tf" output -json -no-color >"$outputs.part"
    mv "$outputs.part" "$outputs"
    ;;
  undeploy) "$tf" destroy -auto-approve -input=false -no-color ;;
  deploy-test) "$tf" plan -input=false -no-color ;;
  undeploy-test) "$tf" plan -destroy -input=false -no-color ;;
  plan)
    mkdir -p "$(dirname "$outputs")"
    "$tf" plan -input=false -no-color -out="$outputs.tfplan"
    "$tf" show -json -no-color "$outputs.tfplan" >"$outputs.part"
    rm -f "$outputs.tfplan"
    mv "$outputs.part" "$outputs"
    ;;
esac
"#;

/// The verbs hub's built-in Terraform runs.
pub(crate) const VERBS: [&str; 4] = ["deploy", "undeploy", "deploy-test", "undeploy-test"];

/// The program and arguments that deploy (or undeploy, …) the Terraform
/// configuration of the folder the process runs in.
pub fn command(binary: &Path, verb: &str) -> (PathBuf, Vec<String>) {
    (
        PathBuf::from("/bin/sh"),
        vec![
            "-c".into(),
            SCRIPT.into(),
            "hub-terraform".into(),
            binary.display().to_string(),
            verb.into(),
            match verb {
                "plan" => PLANNED_FILE.into(),
                _ => OUTPUTS_FILE.into(),
            },
        ],
    )
}

/// The program named by `HUB_TERRAFORM`, else `terraform` or `tofu` on
/// the PATH; `terraform` when none is found (the run then says what to do).
pub(crate) fn default_binary() -> PathBuf {
    match std::env::var(BINARY_ENV).ok().filter(|v| !v.is_empty()) {
        Some(named) => PathBuf::from(named),
        None => find_binary(None).unwrap_or_else(|_| PathBuf::from("terraform")),
    }
}

/// The Terraform program a component would run: `named` (the value of its
/// `terraform.binary` parameter) when given, else `HUB_TERRAFORM`, else
/// `terraform` or `tofu` on the PATH. The error says what was looked for
/// and what to do; the plan's preflight reports it.
pub(crate) fn find_binary(named: Option<&str>) -> Result<PathBuf, String> {
    let from_env = std::env::var(BINARY_ENV).ok().filter(|v| !v.is_empty());
    let (wanted, source) = match (named.filter(|n| !n.is_empty()), from_env) {
        (Some(name), _) => (
            vec![name.to_string()],
            format!("parameter `{BINARY_PARAMETER}`"),
        ),
        (None, Some(name)) => (vec![name], format!("`{BINARY_ENV}`")),
        (None, None) => (vec!["terraform".into(), "tofu".into()], "the PATH".into()),
    };
    // `which` looks a bare name up on the PATH and checks a name with a
    // `/` where it points, both only when it is an executable file.
    if let Some(found) = wanted.iter().find_map(|name| which::which(name).ok()) {
        return Ok(found);
    }
    let names = wanted
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(" or ");
    Err(format!(
        "the Terraform program {names} (from {source}) was not found or is not executable; install \
         Terraform or OpenTofu so that `terraform` or `tofu` is on the PATH, or name the program with \
         the component parameter `{BINARY_PARAMETER}` or the environment variable `{BINARY_ENV}`"
    ))
}

/// [`find_binary`] for a component's parameters.
pub(crate) fn check_binary(params: &[ExpandedParam]) -> Result<PathBuf, String> {
    let named = params
        .iter()
        .find(|p| p.name == BINARY_PARAMETER)
        .map(|p| crate::env::env_text(p.value.as_ref()));
    find_binary(named.as_deref())
}

/// The environment of a built-in Terraform run: `env` with every
/// parameter as `TF_VAR_*`, the backend configuration and the program a
/// parameter names.
pub fn environment(env: Vec<(String, String)>, params: &[ExpandedParam]) -> Vec<(String, String)> {
    let mut env = env;
    let mut backend = Vec::new();
    for param in params {
        if param.value.as_ref().is_none_or(|v| v.is_null()) {
            continue;
        }
        let text = crate::env::env_text(param.value.as_ref());
        if param.name == BINARY_PARAMETER {
            set(&mut env, BINARY_VAR, text);
        } else if let Some(key) = param.name.strip_prefix(BACKEND_PREFIX) {
            backend.push(shell_quote(&format!("-backend-config={key}={text}")));
        } else if !param.name.starts_with("terraform.") {
            let name = format!("TF_VAR_{}", param.name.replace(['.', '-'], "_"));
            if !env.iter().any(|(k, _)| *k == name) {
                env.push((name, text));
            }
        }
    }
    if !backend.is_empty() {
        let before = env
            .iter()
            .find(|(k, _)| k == "TF_CLI_ARGS_init")
            .map(|(_, v)| format!("{v} "))
            .unwrap_or_default();
        set(
            &mut env,
            "TF_CLI_ARGS_init",
            format!("{before}{}", backend.join(" ")),
        );
    }
    env
}

fn set(env: &mut Vec<(String, String)>, name: &str, value: String) {
    env.retain(|(k, _)| k != name);
    env.push((name.to_string(), value));
}

/// Single quotes for Terraform's reading of `TF_CLI_ARGS_*` (shell words).
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// How a deployed folder of `*.tf` files is asked whether it drifted:
/// `terraform init`, then `terraform plan -detailed-exitcode -lock=false`
/// (exit 0: in sync; 2: Terraform would change something) in the folder,
/// with the component's parameters as a deploy would pass them. Nothing is
/// applied; `init` may create `.terraform/` in the folder. The caller runs
/// the two steps, so that they get its timeout, its interrupts and its
/// masking like any other child.
#[derive(Debug, Clone)]
pub struct DriftCheck {
    pub binary: PathBuf,
    pub env: Vec<(String, String)>,
}

/// The arguments of the two steps of a [`DriftCheck`].
pub const DRIFT_INIT: &[&str] = &["init", "-input=false", "-no-color"];
pub const DRIFT_PLAN: &[&str] = &[
    "plan",
    "-detailed-exitcode",
    "-lock=false",
    "-input=false",
    "-no-color",
];

/// The program and environment of a [`DriftCheck`]: the component's
/// parameters and `base` as the rest of the environment; an error when no
/// Terraform program is found.
pub fn drift_check(
    params: &[ExpandedParam],
    base: &[(String, String)],
) -> Result<DriftCheck, String> {
    let binary = check_binary(params)?;
    let mut env = environment(base.to_vec(), params);
    for (name, value) in [
        ("TF_IN_AUTOMATION", "1"),
        ("TF_INPUT", "0"),
        ("CHECKPOINT_DISABLE", "1"),
    ] {
        set(&mut env, name, value.to_string());
    }
    Ok(DriftCheck { binary, env })
}

/// The lines of a plan that say what would change (`Plan: …`,
/// `Changes to Outputs:`, `  ~ name …`).
pub fn plan_summary(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter(|line| {
            let trimmed = line.trim_start();
            line.starts_with("Plan:")
                || line.starts_with("Changes to Outputs:")
                || ["+ ", "- ", "~ ", "-/+ "]
                    .iter()
                    .any(|mark| trimmed.starts_with(mark))
                    && !line.starts_with("    ")
        })
        .map(|line| line.trim_end().to_string())
        .collect()
}

/// One output of `terraform output -json`.
#[derive(Debug, Clone, PartialEq)]
pub struct TfOutput {
    pub name: String,
    pub value: Value,
    pub sensitive: bool,
}

/// The outputs a built-in deploy left in `dir` (and removes the file);
/// `None` when there is no such file, an error when it cannot be read.
pub fn take_outputs(dir: &Path) -> Option<Result<Vec<TfOutput>, String>> {
    let path = dir.join(OUTPUTS_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return None,
        Err(error) => return Some(Err(format!("cannot read `{}`: {error}", path.display()))),
    };
    let _ = std::fs::remove_file(&path);
    Some(parse_outputs_json(&text).map_err(|reason| {
        format!("`terraform output -json` did not print what hub expects: {reason}")
    }))
}

/// `{"name": {"sensitive": bool, "type": …, "value": …}, …}`.
pub(crate) fn parse_outputs_json(text: &str) -> Result<Vec<TfOutput>, String> {
    let json: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let Value::Object(map) = json else {
        return Err("not a JSON object".into());
    };
    map.into_iter()
        .map(|(name, entry)| {
            let sensitive = entry
                .get("sensitive")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let value = entry
                .get("value")
                .cloned()
                .ok_or_else(|| format!("output `{name}` has no `value`"))?;
            Ok(TfOutput {
                name,
                value,
                sensitive,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests;
