//! The preflight: what a deploy or undeploy would stop on, found before
//! the first component starts, from what can be known without running
//! anything. `hub plan` shows each problem as `would fail`; the engine
//! refuses the run with the same message before any component starts.
//!
//! Checked, for each component the plan runs:
//!
//! - its implementation is found (by `run::setup::check_implementations`,
//!   whose problems join these: every component without one is named);
//! - its implementation can be started: a script is run as a program
//!   (`execve`, as the Hub CLI does), so it must be executable; `make` and
//!   an extension must be found;
//! - each hook the verb triggers is found (a missing hook is an error,
//!   unless the hook says `error: ignore`: then a warning) and executable;
//! - no environment variable's value holds a NUL byte (it would end the
//!   C string `execve` takes);
//! - each environment variable fits the system's limit for one string
//!   (`NAME=value`, 128 KiB on Linux), and the whole environment with the
//!   arguments fits `ARG_MAX`;
//!
//! and for the run: each local state location's folder exists and can be
//! written.

mod environment;

pub use super::{EnvEntry, PreflightProblem};
pub use environment::{env_entries, environment_fits, size_text, TooLarge};

use crate::decide::hooks;
use crate::options::RunOptions;
use crate::plan::{Action, ComponentPlan, Plan};
use crate::source::discover::Implementation;
use crate::source::stack::Stack;
use hub_manifest::parallel;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What the preflight found: problems stop the run, warnings do not.
#[derive(Debug, Default)]
pub struct Findings {
    pub problems: Vec<PreflightProblem>,
    pub warnings: Vec<String>,
    /// What runs each component the plan runs, in a few words.
    pub implementations: Vec<(String, String)>,
}

/// What the preflight looks at.
pub struct Inputs<'a> {
    pub stack: &'a Stack,
    pub options: &'a RunOptions,
    /// The action plan: only the components it runs are checked.
    pub plan: &'a Plan,
    /// What implements the run's verb, by component, as found before the
    /// run ([`crate::checks::check_implementations`]).
    pub implementations: &'a HashMap<String, Implementation>,
    /// hub's base environment for the components (without their own
    /// variables).
    pub base_env: &'a [(String, String)],
    /// Check the state locations' folders: `hub plan`, which locks
    /// nothing; a run has taken their locks already (or left out, with
    /// a warning, a location it could not lock while another one it
    /// could).
    pub state_folders: bool,
}

/// Runs every check; see the module documentation.
pub fn check(inputs: &Inputs<'_>) -> Findings {
    let mut findings = Findings::default();
    if inputs.state_folders {
        state_folders(&inputs.options.state, &mut findings);
    }
    let verb = inputs
        .options
        .implementation_verb(inputs.plan.verb.as_str());
    let runs: Vec<&ComponentPlan> = inputs
        .plan
        .components
        .iter()
        .filter(|c| c.action.runs())
        .collect();
    // Each component's checks read its folder and its hooks' files: they
    // run on several threads, and their findings are kept in the plan's
    // order.
    let each = parallel::map(&runs, PREFLIGHT_SPREAD, |component| {
        component_findings(inputs, &verb, component)
    });
    for found in each {
        findings.problems.extend(found.problems);
        findings.warnings.extend(found.warnings);
        findings.implementations.extend(found.implementations);
    }
    findings
}

/// Components per thread at least in the preflight, and threads at most.
const PREFLIGHT_SPREAD: parallel::Spread = parallel::Spread {
    smallest_share: 128,
    most_threads: 4,
};

/// The checks of one component the plan runs.
fn component_findings(inputs: &Inputs<'_>, verb: &str, component: &ComponentPlan) -> Findings {
    let mut findings = Findings::default();
    let name = component.name.as_str();
    let mut problem = |message: String, hint: String| {
        findings.problems.push(PreflightProblem {
            component: Some(name.to_string()),
            message,
            hint,
        })
    };
    if let Some(implementation) = inputs.implementations.get(name) {
        if let Err((message, hint)) = startable(implementation, component) {
            problem(message, hint);
        }
    }
    let Some(reference) = inputs.stack.reference(name) else {
        return findings;
    };
    let dir = inputs
        .stack
        .component_dir(reference, inputs.options.components_base_dir.as_deref())
        .ok();
    if let (Some(implementation), Some(dir)) = (inputs.implementations.get(name), &dir) {
        findings
            .implementations
            .push((name.to_string(), implementation.short(dir)));
    }
    if let Some(dir) = &dir {
        for missing in hooks::missing(&reference.hooks, verb, dir, &inputs.stack.base_dir) {
            let message = missing.message(name);
            match missing.optional {
                true => findings.warnings.push(message),
                false => findings.problems.push(PreflightProblem {
                    component: Some(name.to_string()),
                    message: missing.text(),
                    hint: hooks::MISSING_HINT.into(),
                }),
            }
        }
        let found = hooks::found(&reference.hooks, verb, dir, &inputs.stack.base_dir);
        for (hook, trigger, script) in found {
            let what = format!("hook `{}` ({trigger})", hook.file);
            let Err((message, hint)) = executable(&script, &what) else {
                continue;
            };
            match hook.ignores_errors() {
                true => findings.warnings.push(format!(
                    "component `{name}`: {message}; its failure is ignored (`error: ignore`)"
                )),
                false => findings.problems.push(PreflightProblem {
                    component: Some(name.to_string()),
                    message,
                    hint,
                }),
            }
        }
    }
    let program = inputs
        .implementations
        .get(name)
        .and_then(Implementation::command);
    let args = program.as_ref().map(|(p, a)| (p.as_path(), a.as_slice()));
    for entry in &component.environment {
        if let Some(nul) = &entry.nul_byte {
            let (message, hint) = environment::nul_problem(entry, nul);
            findings.problems.push(PreflightProblem {
                component: Some(name.to_string()),
                message,
                hint,
            });
        }
    }
    if let Err(too_large) = environment::planned_fits(inputs.base_env, &component.environment, args)
    {
        findings.problems.push(PreflightProblem {
            component: Some(name.to_string()),
            message: too_large.to_string(),
            hint: too_large.hint(),
        });
    }
    findings
}

/// Whether `implementation` can be started; `Err` with the message and
/// the hint.
fn startable(
    implementation: &Implementation,
    component: &ComponentPlan,
) -> Result<(), (String, String)> {
    match implementation {
        Implementation::Terraform { .. } => {
            let named = component
                .parameters
                .iter()
                .find(|p| p.name == crate::terraform::BINARY_PARAMETER)
                .and_then(|p| p.value.as_deref());
            crate::terraform::find_binary(named).map(drop).map_err(|message| {
                (
                    message,
                    "the component is a folder of `*.tf` files, which hub deploys with Terraform; a `deploy.sh` or a Makefile in it would run instead".into(),
                )
            })
        }
        Implementation::Script { path } => executable(path, "its implementation"),
        Implementation::Extension { program, .. } => executable(program, "its implementation"),
        Implementation::Make { .. } => match implementation.command() {
            Some((make, _)) if make.is_file() => Ok(()),
            _ => Err((
                "its implementation is a Makefile target, but `make` is not on PATH".into(),
                "install `make`, or put it on the PATH hub runs with".into(),
            )),
        },
        Implementation::Bare => Ok(()),
    }
}

/// A program hub starts directly: it must be a file this user may
/// execute. `what` names it in the message.
pub(crate) fn executable(path: &Path, what: &str) -> Result<(), (String, String)> {
    use std::os::unix::fs::PermissionsExt;
    let shown = path.display();
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) => {
            return Err((
                format!("{what} `{shown}` cannot be read: {error}"),
                "check that the file exists and that its folder can be entered".into(),
            ))
        }
    };
    let mode = metadata.permissions().mode() & 0o7777;
    if metadata.is_file() && may_execute(path) {
        return Ok(());
    }
    Err((
        format!(
            "{what} `{shown}` is not executable (mode {mode:04o}): starting it would fail with \"Permission denied\""
        ),
        format!(
            "make it executable with `chmod +x {shown}`; hub runs it as a program, so its first line names its interpreter (`#!/bin/sh`)"
        ),
    ))
}

/// `access(path, X_OK)`: the system's own answer for this user.
fn may_execute(path: &Path) -> bool {
    may_access(path, libc::X_OK)
}

/// `access(path, mode)`.
fn may_access(path: &Path, mode: libc::c_int) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(text) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: `text` is a NUL-terminated string that outlives the call;
    // access only reads it.
    unsafe { libc::access(text.as_ptr(), mode) == 0 }
}

/// Each local state location's folder exists and can be written (the
/// lock, the journal and the state are created there): otherwise the
/// run's first step, taking the lock, fails, and the problem says what
/// that step would say.
fn state_folders(states: &[PathBuf], findings: &mut Findings) {
    let mut problems = Vec::new();
    for state in states.iter().filter(|s| !hub_state::is_remote(s)) {
        let folder = match state.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let kind = match folder.is_dir() {
            false => std::io::ErrorKind::NotFound,
            true if !may_access(&folder, libc::W_OK | libc::X_OK) => {
                std::io::ErrorKind::PermissionDenied
            }
            true => continue,
        };
        let mut lock = state.clone().into_os_string();
        lock.push(".lock");
        let error = hub_state::StateError::LockFile {
            lock: PathBuf::from(lock),
            action: "create",
            source: std::io::Error::from(kind),
        };
        problems.push(PreflightProblem {
            component: None,
            message: error.to_string(),
            hint: error.hint().unwrap_or_default(),
        });
    }
    // With several locations, the run leaves out one it cannot lock as
    // long as another one it can.
    match problems.len() == states.len() {
        true => findings.problems.extend(problems),
        false => findings.warnings.extend(problems.into_iter().map(|p| {
            format!(
                "{}; this state location would be left out of the run",
                p.message
            )
        })),
    }
}

/// Marks each component a problem names as `fail`, the problem as its
/// reason (`hub plan`); the run's own problems are kept on the plan.
pub fn apply(plan: &mut Plan, findings: Findings, warnings: &mut hub_manifest::diag::Warnings) {
    let by_name: HashMap<String, usize> = plan
        .components
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.clone(), i))
        .collect();
    for (name, implementation) in findings.implementations {
        if let Some(&i) = by_name.get(&name) {
            plan.components[i].implementation = Some(implementation);
        }
    }
    for warning in findings.warnings {
        warnings.warn(None, warning);
    }
    for problem in findings.problems {
        let index = problem
            .component
            .as_deref()
            .and_then(|name| by_name.get(name));
        match index {
            Some(&i) => {
                let component = &mut plan.components[i];
                if component.action != Action::Fail {
                    component.action = Action::Fail;
                    component.reasons.clear();
                }
                component.reasons.push(one_line(&problem.message));
            }
            None => plan.problems.push(problem),
        }
    }
}

/// A message of several lines (a head and its bullets) as one line, for
/// a plan's reasons: `head: first; second`.
fn one_line(message: &str) -> String {
    let mut lines = message.lines().map(str::trim).filter(|l| !l.is_empty());
    let head = lines.next().unwrap_or_default().to_string();
    let rest: Vec<&str> = lines.map(|l| l.strip_prefix("- ").unwrap_or(l)).collect();
    match rest.is_empty() {
        true => head,
        false => format!("{head} {}", rest.join("; ")),
    }
}

/// The preflight's problems and, after them, every mandatory component
/// the plan says would `fail` whatever the run does before it (its
/// parameters cannot be expanded, a requirement nobody provides, a
/// dependency that would fail): a deploy refuses them all at once before
/// the first component starts, instead of running the others first.
/// Components whose fate depends on what the run produces are left to
/// the run; `goes_on` says which failures do not stop it (optional
/// components, `--force`).
pub fn with_predicted(
    mut problems: Vec<PreflightProblem>,
    plan: &Plan,
    goes_on: impl Fn(&str) -> bool,
) -> Vec<PreflightProblem> {
    if plan.verb != crate::order::schedule::Verb::Deploy {
        return problems;
    }
    let predicted: Vec<PreflightProblem> = plan
        .components
        .iter()
        .filter(|c| c.action == Action::Fail)
        .filter(|c| c.certain_failure.is_some() || c.conditions.is_empty())
        .filter(|c| !goes_on(&c.name))
        .map(|c| PreflightProblem {
            component: Some(c.name.clone()),
            message: match &c.certain_failure {
                Some(said) => format!("would fail: {said}"),
                None => format!("would fail: {}", c.reasons.join("; ")),
            },
            hint: "`hub plan` shows each component that would fail and why; fix the stack or its parameters, or add `--force` to run the others anyway".into(),
        })
        .collect();
    problems.extend(predicted);
    problems
}

#[cfg(test)]
mod tests;
