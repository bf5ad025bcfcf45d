//! `hub invoke COMPONENT VERB`: one verb of one component, run from inside
//! another component's script while a deploy holds the state's lock. The
//! state is read, never locked or written.
//!
//! Parameters: the stack parameters locked against the state (no prompts),
//! the outputs the state recorded for the component (its own snapshot,
//! then its `depends`), then the component's expansion as in a deploy.
//! `-e` values are exported to the component.

use super::error::EngineError;
use crate::child::interrupt::Interrupts;
use crate::child::otp;
use crate::child::process::{self, Exit, Invocation};
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::redact::SecretMasker;
use hub_manifest::Manifest;
use hub_params::drift::DriftUse;
use hub_params::format::substitution_text;
use hub_params::{self as params, expand_component, ComponentScope, ExpandedParam, LockOptions};
use hub_plan::env::{self, ComponentVariables, Nested, OsEnvironment};
use hub_plan::error::PlanningError;
use hub_plan::order::requirements::provides_text;
use hub_plan::outcome::lines::LineSink;
use hub_plan::source::discover;
use hub_plan::source::stack::{absolute, Stack};
use hub_plan::timeout::{Limit, Timeouts};
use hub_state::{self as state, State};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};

pub struct InvokeOptions {
    pub component: String,
    pub verb: String,
    pub state: PathBuf,
    pub components_base_dir: Option<PathBuf>,
    pub os_environment: OsEnvironment,
    /// `-e`: exported to the component (and used by `fromEnv`).
    pub exported: IndexMap<String, String>,
    pub force: bool,
    pub reveal: bool,
    /// `--timeout`: the limit unless the stack's `lifecycle.timeouts`
    /// gives the component its own.
    pub timeout: Option<std::time::Duration>,
}

/// The component's time limit: its `lifecycle.timeouts` entry, else
/// `default`.
fn component_limit(
    stack: &Stack,
    name: &str,
    default: Option<std::time::Duration>,
) -> Result<Option<Limit>, EngineError> {
    let timeouts =
        Timeouts::new(&stack.elaborated.stack.lifecycle.timeouts, default).map_err(|bad| {
            EngineError::Planning(PlanningError::Plan(
                hub_plan::order::ScheduleError::BadTimeout {
                    component: bad.component,
                    value: bad.value,
                    reason: bad.reason,
                },
            ))
        })?;
    Ok(timeouts.limit(name))
}

/// Runs the verb; an exit other than 0 is [`EngineError::InvokeFailed`]
/// ([`EngineError::InvokeTimedOut`] when its time limit ran out).
pub fn invoke(
    stack: &Stack,
    options: &InvokeOptions,
    environment: &[(String, String)],
    hub: PathBuf,
    sink: &dyn LineSink,
    interrupts: &Interrupts,
    warnings: &mut Warnings,
) -> Result<(), EngineError> {
    let name = options.component.as_str();
    let (reference, manifest) = component_of(stack, name)?;
    let limit = component_limit(stack, name, options.timeout)?;
    check_verb_listed(manifest, options, warnings)?;
    let stored = state::read(&options.state, warnings)?;
    if stored.is_none() && !options.force {
        return Err(EngineError::Planning(PlanningError::StateRequired {
            flag: "invoke",
            path: Some(options.state.clone()),
        }));
    }
    let CurrentParameters { expanded, .. } = current_parameters(
        stack,
        name,
        &options.state,
        stored.as_ref(),
        &options.exported,
        environment,
        warnings,
    )?;
    let dir = stack.component_dir(reference, options.components_base_dir.as_deref())?;
    let implementation = discover::discover(&dir, &options.verb, false).map_err(|source| {
        EngineError::Implementation {
            component: name.to_string(),
            source,
        }
    })?;
    let Some((program, args)) = implementation.command() else {
        return Ok(());
    };
    let child_env = ChildEnv {
        stack,
        options,
        manifest,
        params: &expanded,
        dir: &dir,
    }
    .environment(environment, hub, warnings);
    let child_env = match implementation {
        discover::Implementation::Terraform { .. } => {
            hub_plan::terraform::environment(child_env, &expanded)
        }
        _ => child_env,
    };
    let masker = invoke_masker(options, manifest, &expanded, &child_env, stored.as_ref());
    let invocation = Invocation {
        label: name.to_string(),
        program,
        args,
        cwd: dir,
        env: child_env,
        log_file: None,
        timeout: limit.map(|limit| limit.duration),
    };
    let finished = process::run(&invocation, &masker, sink, interrupts)?;
    exit_result(options, finished.exit, limit)
}

/// The verb is one the component lists (`lifecycle.verbs`; `deploy` and
/// `undeploy` when it lists none), or `--force` makes it a warning.
fn check_verb_listed(
    manifest: &Manifest,
    options: &InvokeOptions,
    warnings: &mut Warnings,
) -> Result<(), EngineError> {
    let verbs = match &manifest.lifecycle.verbs {
        listed if listed.is_empty() => vec!["deploy".to_string(), "undeploy".to_string()],
        listed => listed.clone(),
    };
    if !verbs.contains(&options.verb) {
        let error = EngineError::VerbNotListed {
            component: options.component.clone(),
            verb: options.verb.clone(),
            verbs,
        };
        if !options.force {
            return Err(error);
        }
        warnings.warn(None, format!("{error} (--force)"));
    }
    Ok(())
}

/// What the invoked component's environment is made of.
struct ChildEnv<'i> {
    stack: &'i Stack,
    options: &'i InvokeOptions,
    manifest: &'i Manifest,
    params: &'i [ExpandedParam],
    dir: &'i Path,
}

impl ChildEnv<'_> {
    /// Hub's environment, the exported variables, the parameters and
    /// `$HUB_RANDOM`.
    fn environment(
        &self,
        environment: &[(String, String)],
        hub: PathBuf,
        warnings: &mut Warnings,
    ) -> Vec<(String, String)> {
        let options = self.options;
        let nested = Nested {
            hub,
            elaborate: self.stack.file.clone(),
            state: Some(absolute(&options.state)),
            components_base_dir: options.components_base_dir.as_deref().map(absolute),
        };
        let mut base = env::base(options.os_environment, environment, &nested);
        base.extend(options.exported.iter().map(|(k, v)| (k.clone(), v.clone())));
        let bytes = otp::pad_bytes(self.manifest.lifecycle.options.random.bytes);
        let random = otp::pad_to_env(&otp::random_pad(bytes));
        let vars = ComponentVariables {
            component: &options.component,
            params: self.params,
            random: &random,
            component_dir: self.dir,
            base_dir: &self.stack.base_dir,
        };
        env::component(&base, &vars, warnings)
    }
}

/// What the invoked component's lines are masked with.
fn invoke_masker(
    options: &InvokeOptions,
    manifest: &Manifest,
    expanded: &[ExpandedParam],
    child_env: &[(String, String)],
    stored: Option<&State>,
) -> SecretMasker {
    let mut masker = SecretMasker::new(options.reveal);
    for param in expanded.iter().filter(|p| p.secret) {
        masker.add(&substitution_text(param.value.as_ref()));
    }
    masker.add_credentials_in(child_env);
    masker.add_secret_outputs(&manifest.outputs);
    if let Some(state) = stored {
        hub_plan::decide::records::mask_recorded_secrets(&mut masker, state);
    }
    masker
}

/// What the invoked verb's exit means.
fn exit_result(
    options: &InvokeOptions,
    exit: Exit,
    limit: Option<Limit>,
) -> Result<(), EngineError> {
    let name = options.component.as_str();
    match (exit, limit) {
        (Exit::Code(0), _) => Ok(()),
        (Exit::TimedOut, Some(limit)) => Err(EngineError::InvokeTimedOut {
            component: name.to_string(),
            verb: options.verb.clone(),
            limit,
        }),
        (Exit::Interrupted { signal }, _) => Err(EngineError::Interrupted {
            component: Some(name.to_string()),
            signal,
        }),
        (exit, _) => Err(EngineError::InvokeFailed {
            component: name.to_string(),
            verb: options.verb.clone(),
            exit,
        }),
    }
}

/// A component's parameters as they stand between runs: the stack
/// parameters locked against the state (no prompts), the outputs the state
/// recorded for the component (its own snapshot, then its `depends`), and
/// the component's expansion as in a deploy. Shared by `invoke` and
/// `render`.
pub struct CurrentParameters {
    pub locked: params::Locked,
    pub outputs: Vec<state::CapturedOutput>,
    pub expanded: Vec<params::ExpandedParam>,
}

pub fn current_parameters(
    stack: &Stack,
    name: &str,
    state_path: &std::path::Path,
    stored: Option<&state::State>,
    exported: &IndexMap<String, String>,
    environment: &[(String, String)],
    warnings: &mut Warnings,
) -> Result<CurrentParameters, EngineError> {
    let (reference, manifest) = component_of(stack, name)?;
    let params_state = stored.map(|file| params::state::StateView::from_read(state_path, file));
    let lookup = |key: &str| {
        environment
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    let mut lock_options = LockOptions::new(exported, &lookup);
    lock_options.source = stack.source();
    lock_options.declared = stack.provenance.as_ref();
    lock_options.state = params_state.as_ref();
    let locked = params::lock(&stack.elaborated.stack, lock_options, warnings)?;
    let at = Some(Location::file(state_path));
    params::drift::warn(&locked.drift, DriftUse::Read, at, &|_| false, warnings);
    let (outputs, provides) = match stored {
        Some(state) => {
            let mut outputs = state.outputs_at(&state.lifecycle.order, name).to_vec();
            state.merge_dependency_outputs(&mut outputs, &reference.depends, warnings);
            (outputs, provides_text(&state.provides))
        }
        None => (Vec::new(), String::new()),
    };
    let scope_outputs: Vec<params::CapturedOutput> = outputs
        .iter()
        .map(hub_plan::decide::records::to_scope_output)
        .collect();
    let scope = ComponentScope {
        name,
        depends: &reference.depends,
        manifest,
        outputs: &scope_outputs,
        provides,
        source: stack.declarations(name),
    };
    let expanded = expand_component(&locked, &scope, warnings)?;
    Ok(CurrentParameters {
        locked,
        outputs,
        expanded,
    })
}

/// The component's reference and manifest in the stack.
fn component_of<'s>(
    stack: &'s Stack,
    name: &str,
) -> Result<(&'s hub_manifest::ComponentRef, &'s hub_manifest::Manifest), EngineError> {
    let elaborated = &stack.elaborated;
    let (Some(reference), Some(manifest)) = (stack.reference(name), elaborated.component(name))
    else {
        return Err(EngineError::UnknownComponent {
            component: name.to_string(),
            available: elaborated
                .stack
                .components
                .iter()
                .map(|c| c.name.clone())
                .collect(),
        });
    };
    Ok((reference, manifest))
}
