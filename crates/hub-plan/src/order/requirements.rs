//! The stack's `requires` against the environment (§8.2) and the provides
//! map a run starts with (§8.1).
//!
//! A well-known requirement is met when its tool is on the `PATH` (found
//! with `which`; the tool is not run): `aws` → `aws`, `azure` → `az`,
//! `gcp` → `gcloud`, `gcs` → `gsutil`, `kubectl`/`kubernetes` → `kubectl`,
//! `helm`, `terraform`, `vault`. A capability of `platform.provides` meets
//! a requirement by itself. Anything else is unmet.

use super::schedule::Tuning;
use hub_manifest::Elaborated;
use hub_state::ENVIRONMENT_PROVIDER;
use indexmap::IndexMap;
use std::ffi::OsStr;
use std::path::Path;

/// The provider of `platform.provides` capabilities.
pub(crate) const PLATFORM_PROVIDER: &str = "*platform*";

/// The tool whose presence meets a well-known requirement.
pub(crate) fn tool_of(requirement: &str) -> Option<&'static str> {
    Some(match requirement {
        "aws" => "aws",
        "azure" => "az",
        "gcp" => "gcloud",
        "gcs" => "gsutil",
        "kubectl" | "kubernetes" => "kubectl",
        "helm" => "helm",
        "terraform" => "terraform",
        "vault" => "vault",
        _ => return None,
    })
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the stack requires {}, which the environment does not provide", unmet.iter().map(|u| format!("`{u}`")).collect::<Vec<_>>().join(", "))]
pub struct RequirementError {
    pub unmet: Vec<String>,
}

impl RequirementError {
    /// `put `helm` and `az` (for `azure`) on the PATH, list the requirement
    /// under `platform.provides`, or make it optional with …`: a sentence
    /// whatever is unmet.
    pub fn hint(&self) -> String {
        let tools: Vec<String> = self
            .unmet
            .iter()
            .filter_map(|u| {
                tool_of(u).map(|t| match t == u {
                    true => format!("`{t}`"),
                    false => format!("`{t}` (for `{u}`)"),
                })
            })
            .collect();
        let (requirement, it) = match self.unmet.len() {
            1 => ("the requirement", "it"),
            _ => ("the requirements", "them"),
        };
        let optional = format!(
            "make {it} optional with `lifecycle.requires.optional: [{}]`",
            self.unmet.join(", ")
        );
        let listed = format!("list {requirement} under `platform.provides`");
        match tools.as_slice() {
            [] => format!("{listed}, or {optional}"),
            tools => format!(
                "put {} on the PATH, {listed}, or {optional}",
                and_list(tools)
            ),
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// The provides map before any component runs: stack requirements met by
/// the environment (provider `*environment*`), then `platform.provides`
/// (provider `*platform*`). An unmet requirement is an error unless it is
/// tuned optional, or every component requiring it is optional.
pub fn initial_provides(
    elaborated: &Elaborated,
    tuning: &Tuning,
    is_optional: &dyn Fn(&str) -> bool,
    path: Option<&OsStr>,
) -> Result<IndexMap<String, Vec<String>>, RequirementError> {
    let stack = &elaborated.stack;
    let mut provides: IndexMap<String, Vec<String>> = IndexMap::new();
    let mut unmet = Vec::new();
    for requirement in &stack.requires {
        if stack.platform.provides.contains(requirement) {
            continue;
        }
        if tool_of(requirement).is_some_and(|tool| on_path(tool, path)) {
            hub_state::add_provider(&mut provides, requirement, ENVIRONMENT_PROVIDER);
        } else if !tolerated(elaborated, requirement, tuning, is_optional) {
            unmet.push(requirement.clone());
        }
    }
    for capability in &stack.platform.provides {
        hub_state::add_provider(&mut provides, capability, PLATFORM_PROVIDER);
    }
    if unmet.is_empty() {
        Ok(provides)
    } else {
        Err(RequirementError { unmet })
    }
}

fn tolerated(
    elaborated: &Elaborated,
    requirement: &str,
    tuning: &Tuning,
    is_optional: &dyn Fn(&str) -> bool,
) -> bool {
    if tuning.mentions(requirement) {
        return true;
    }
    let requiring: Vec<&str> = elaborated
        .components
        .iter()
        .filter(|c| c.requires.iter().any(|r| r == requirement))
        .map(|c| c.meta.name.as_str())
        .collect();
    !requiring.is_empty() && requiring.iter().all(|c| is_optional(c))
}

fn on_path(tool: &str, path: Option<&OsStr>) -> bool {
    let cwd = std::env::current_dir().unwrap_or_else(|_| Path::new("/").to_path_buf());
    which::which_in(tool, path, cwd).is_ok()
}

/// `hub.provides` / `HUB_PROVIDES`: every capability, sorted, space-separated.
pub fn provides_text(provides: &IndexMap<String, Vec<String>>) -> String {
    let mut names: Vec<&str> = provides
        .iter()
        .filter(|(_, providers)| !providers.is_empty())
        .map(|(name, _)| name.as_str())
        .collect();
    names.sort_unstable();
    names.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_manifest::Manifest;
    use std::os::unix::fs::PermissionsExt;

    fn stack(requires: &[&str], platform: &[&str]) -> Elaborated {
        let mut stack = Manifest {
            requires: requires.iter().map(|s| s.to_string()).collect(),
            ..Manifest::default()
        };
        stack.platform.provides = platform.iter().map(|s| s.to_string()).collect();
        let mut c = Manifest::default();
        c.meta.name = "c".into();
        c.requires = stack.requires.clone();
        Elaborated {
            stack,
            components: vec![c],
            ..Elaborated::default()
        }
    }

    #[test]
    fn tools_on_the_path_and_platform_capabilities_meet_requirements() {
        let dir = tempfile::tempdir().unwrap();
        let tool = dir.path().join("terraform");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = dir.path().as_os_str();
        let mandatory = |_: &str| false;
        let e = stack(&["terraform", "cdn"], &["cdn"]);
        let provides = initial_provides(&e, &Tuning::default(), &mandatory, Some(path)).unwrap();
        assert_eq!(provides["terraform"], [ENVIRONMENT_PROVIDER]);
        assert_eq!(provides["cdn"], [PLATFORM_PROVIDER]);
        assert_eq!(provides_text(&provides), "cdn terraform");
        let e = stack(&["vault", "zz"], &[]);
        let error = initial_provides(&e, &Tuning::default(), &mandatory, Some(path)).unwrap_err();
        assert_eq!(error.unmet, ["vault", "zz"]);
        assert_eq!(
            error.hint(),
            "put `vault` on the PATH, list the requirements under `platform.provides`, or make them optional with `lifecycle.requires.optional: [vault, zz]`"
        );
        let azure = RequirementError {
            unmet: vec!["azure".into(), "helm".into()],
        };
        assert_eq!(
            azure.hint(),
            "put `az` (for `azure`) and `helm` on the PATH, list the requirements under `platform.provides`, or make them optional with `lifecycle.requires.optional: [azure, helm]`"
        );
        let unknown = RequirementError {
            unmet: vec!["cdn".into()],
        };
        assert_eq!(
            unknown.hint(),
            "list the requirement under `platform.provides`, or make it optional with `lifecycle.requires.optional: [cdn]`"
        );
        let tuning = Tuning::parse(&["vault".into(), "zz:c".into()]);
        assert!(initial_provides(&e, &tuning, &mandatory, Some(path)).is_ok());
        let optional = |_: &str| true;
        assert!(initial_provides(&e, &Tuning::default(), &optional, Some(path)).is_ok());
    }
}
