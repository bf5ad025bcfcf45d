//! Checks and reads done once before a run's first component, shared by
//! `hub plan`'s preparation ([`crate::plan::prepare`]) and the engine: the
//! locked parameters, the state's consistency with the stack, every
//! selected component's implementation, the schedule with the undeploy
//! guess, the selection, the provides map and the removed components.
//! Reading the state (and keeping an unreadable one aside) is the
//! engine's.

use crate::decide::prune;
use crate::error::PlanningError;
use crate::options::RunOptions;
use crate::order::requirements;
use crate::order::schedule::{Schedule, ScheduleError, Verb};
use crate::source::discover::{self, Implementation};
use crate::source::stack::Stack;
use hub_manifest::declared::Declarations;
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::parallel;
use hub_params::drift::{self, Drift, DriftUse};
use hub_params::format::substitution_text;
use hub_params::{self as params, LockOptions, Locked, Prompter};
use hub_state::{self as state, State};
use indexmap::IndexMap;
use std::collections::HashMap;
use std::path::Path;

pub fn lock_parameters(
    stack: &Stack,
    options: &RunOptions,
    variables: &[(String, String)],
    prompter: Option<&mut dyn Prompter>,
    state_path: Option<&Path>,
    loaded: Option<&hub_state::State>,
    warnings: &mut Warnings,
) -> Result<Locked, PlanningError> {
    let source = (state_path, loaded);
    let scanned = stack.scan_declarations();
    with_lock_options(
        stack,
        options,
        variables,
        (prompter, scanned.as_ref()),
        source,
        |lock_options| params::lock(&stack.elaborated.stack, lock_options, warnings),
    )
}

/// [`lock_parameters`] with the lock taking the stack-level parameter
/// list (each value moved, not copied, and the list gone before the
/// templates are expanded): what a run needs of it is in the locked
/// parameters. The list is empty afterwards, locked or not.
pub fn lock_releasing_parameters(
    stack: &mut Stack,
    options: &RunOptions,
    variables: &[(String, String)],
    prompter: Option<&mut dyn Prompter>,
    state_path: Option<&Path>,
    loaded: Option<&hub_state::State>,
    warnings: &mut Warnings,
) -> Result<Locked, PlanningError> {
    let parameters = std::mem::take(&mut stack.elaborated.stack.parameters);
    // Where the elaborated file declares each parameter is all the lock
    // reads of its text: the text is kept deflated, not held through the
    // lock and the plan (read again only to point at something reported,
    // see `Stack::pack_source`).
    let scanned = stack.scan_declarations();
    stack.pack_source();
    let stack: &Stack = stack;
    let source = (state_path, loaded);
    with_lock_options(
        stack,
        options,
        variables,
        (prompter, scanned.as_ref()),
        source,
        |lock_options| {
            params::lock_owned(&stack.elaborated.stack, parameters, lock_options, warnings)
        },
    )
}

/// Calls `lock` with the lock's options: hub's environment `variables`,
/// the prompter, where the elaborated file declares each parameter
/// (`scanned`, [`Stack::scan_declarations`]), and the state read from
/// `state_path` (`loaded`).
fn with_lock_options(
    stack: &Stack,
    options: &RunOptions,
    variables: &[(String, String)],
    (prompter, scanned): (Option<&mut dyn Prompter>, Option<&Declarations>),
    (state_path, loaded): (Option<&Path>, Option<&hub_state::State>),
    lock: impl FnOnce(LockOptions<'_>) -> Result<Locked, params::ParamsError>,
) -> Result<Locked, PlanningError> {
    let state = params_state(state_path, loaded);
    let environment = environment_of(variables);
    let prompter = prompter.map(|p| p as &mut dyn Prompter);
    let mut lock_options = lock_options(stack, options, &environment, prompter, state.as_ref());
    lock_options.scanned = scanned;
    Ok(lock(lock_options)?)
}

/// The state the run already read, not a second parse of its file.
fn params_state<'s>(
    state_path: Option<&'s Path>,
    loaded: Option<&'s hub_state::State>,
) -> Option<params::state::StateView<'s>> {
    match (state_path, loaded) {
        (Some(path), Some(state)) => Some(params::state::StateView::from_read(path, state)),
        _ => None,
    }
}

/// hub's environment as the lock reads it.
fn environment_of(variables: &[(String, String)]) -> impl Fn(&str) -> Option<String> + '_ {
    move |name: &str| {
        variables
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

fn lock_options<'a>(
    stack: &'a Stack,
    options: &'a RunOptions,
    environment: &'a dyn Fn(&str) -> Option<String>,
    prompter: Option<&'a mut dyn Prompter>,
    state: Option<&'a params::state::StateView<'a>>,
) -> LockOptions<'a> {
    LockOptions {
        source: None,
        scanned: None,
        declared: stack.provenance.as_ref(),
        overrides: &options.overrides,
        environment,
        prompter,
        state,
        deployment_id: environment("HUB_DEPLOYMENT_ID").filter(|id| !id.is_empty()),
        stack_name: environment("HUB_STACK_NAME"),
    }
}

/// §4.4, and the stack parameters that changed since the state was
/// written: one warning each, except those on the consistency list, which
/// stop the run (unless `--force`) with the way back to the recorded value.
/// `planning`: for `hub plan`, which says what a run would do.
pub fn check_consistency(
    stack: &Stack,
    state: &State,
    locked: &Locked,
    path: &Path,
    options: &RunOptions,
    planning: bool,
    warnings: &mut Warnings,
) -> Result<(), PlanningError> {
    let names: Vec<String> = stack
        .elaborated
        .stack
        .components
        .iter()
        .map(|c| c.name.clone())
        .collect();
    let value = |name: &str| locked.value(name).map(|v| substitution_text(Some(v)));
    let problems =
        state::consistency_problems(state, &stack.elaborated.stack.meta.name, &value, &names);
    let verb = options.verb.unwrap_or(Verb::Deploy);
    let usage = DriftUse::of_run(verb == Verb::Deploy, planning);
    let inconsistent = |d: &Drift| d.is_plain() && mismatched(&problems).any(|(n, _)| n == d.name);
    let at = Some(Location::file(path));
    drift::warn(&locked.drift, usage, at.clone(), &inconsistent, warnings);
    if problems.is_empty() {
        return Ok(());
    }
    if options.force {
        for problem in &problems {
            warnings.warn(at.clone(), format!("{problem} (--force)"));
        }
        return Ok(());
    }
    Err(PlanningError::StateMismatch {
        path: path.to_path_buf(),
        fix: restore_fix(&problems, locked, verb),
        problems,
    })
}

/// The consistency-list parameters whose values differ, with the state's
/// value.
fn mismatched(problems: &[state::Inconsistency]) -> impl Iterator<Item = (&str, &str)> {
    problems.iter().filter_map(|p| match p {
        state::Inconsistency::Parameter { name, state, .. } => {
            Some((name.as_str(), state.as_str()))
        }
        _ => None,
    })
}

/// How to give the changed consistency-list parameters their recorded
/// values again, by where the new values came from.
fn restore_fix(problems: &[state::Inconsistency], locked: &Locked, verb: Verb) -> Option<String> {
    let ways: Vec<String> = mismatched(problems)
        .map(|(name, recorded)| {
            let origin = locked.get(name).map(|p| (p.origin(), p.declared()));
            match origin {
                Some((params::Origin::FromEnv { variable, .. }, _)) => format!(
                    "set `{variable}={recorded}` in the environment (or pass `-e {variable}={recorded}`)"
                ),
                Some((_, Some(ref declared))) => {
                    format!("give `{name}` the value `{recorded}` again at {declared}")
                }
                _ => format!("give `{name}` the value `{recorded}` again"),
            }
        })
        .collect();
    if ways.is_empty() {
        return None;
    }
    Some(format!(
        "the state was written with other values: {} to {} what it records, or add `--force` to {} with the current values (or check the `-s` path)",
        ways.join("; "),
        verb.as_str(),
        verb.as_str()
    ))
}

/// §2 step 13: every selected component has a folder and implements the
/// stack's verbs (the run's verb when the stack lists none). Returns what
/// implements the run's verb, by component, for the engine to use rather
/// than looking again.
/// What implements each selected component, and a problem for each one
/// whose implementation is not found: every one of them at once, for the
/// preflight to report with the others.
pub fn check_implementations(
    stack: &Stack,
    plan: &Schedule,
    options: &RunOptions,
) -> Result<Implementations, PlanningError> {
    let listed: Vec<&str> = stack
        .elaborated
        .stack
        .lifecycle
        .verbs
        .iter()
        .map(String::as_str)
        .filter(|v| *v != "backup")
        .collect();
    let verbs = if listed.is_empty() {
        vec![plan.verb.as_str()]
    } else {
        listed
    };
    // Each folder is looked at apart from the others, so several at once:
    // at 10,000 components these are tens of thousands of `stat`s.
    let looked = parallel::map(&plan.selected, DISCOVERY_SPREAD, |name| {
        discover_verbs(stack, name, &verbs, plan.verb.as_str(), options)
    });
    let mut found = Implementations::default();
    for (name, discovered) in plan.selected.iter().zip(looked) {
        let discovered = discovered?;
        if let Some(implementation) = discovered.found {
            found.found.insert(name.clone(), implementation);
        }
        found.missing.extend(discovered.missing);
    }
    Ok(found)
}

/// Folders per thread at least when looking for implementations, and
/// threads at most.
const DISCOVERY_SPREAD: parallel::Spread = parallel::Spread {
    smallest_share: 64,
    most_threads: 4,
};

/// What one selected component's folder holds for the verbs looked for.
#[derive(Default)]
struct Discovered {
    /// What implements the run's verb.
    found: Option<Implementation>,
    /// The first verb nothing implements (the verbs after it are not
    /// looked for).
    missing: Option<crate::plan::preflight::PreflightProblem>,
}

/// [`check_implementations`] of component `name`; nothing for a name
/// without a component document.
fn discover_verbs(
    stack: &Stack,
    name: &str,
    verbs: &[&str],
    run_verb: &str,
    options: &RunOptions,
) -> Result<Discovered, PlanningError> {
    let mut discovered = Discovered::default();
    let (Some(reference), Some(manifest)) =
        (stack.reference(name), stack.elaborated.component(name))
    else {
        return Ok(discovered);
    };
    let dir = stack.component_dir(reference, options.components_base_dir.as_deref())?;
    let bare = manifest.lifecycle.bare == "allow";
    for verb in verbs {
        match discover::discover(&dir, &options.implementation_verb(verb), bare) {
            Ok(implementation) if *verb == run_verb => discovered.found = Some(implementation),
            Ok(_) => {}
            Err(source) => {
                discovered.missing = Some(crate::plan::preflight::PreflightProblem {
                    component: Some(name.to_string()),
                    hint: source.hint().unwrap_or_default(),
                    message: source.to_string(),
                });
                break;
            }
        }
    }
    Ok(discovered)
}

/// What [`check_implementations`] found.
#[derive(Debug, Default)]
pub struct Implementations {
    /// What implements the run's verb, by component.
    pub found: HashMap<String, Implementation>,
    /// The components whose implementation of a verb is not found.
    pub missing: Vec<crate::plan::preflight::PreflightProblem>,
}

/// The plan of a run, with the undeploy guess (§10.2) from the state's
/// entries.
pub fn plan_for(
    stack: &Stack,
    order: Vec<String>,
    verb: Verb,
    options: &RunOptions,
    state: Option<&State>,
) -> Result<Schedule, PlanningError> {
    let has_entry = |name: &str| state.is_some_and(|s| s.components.contains_key(name));
    let guess: Option<&dyn Fn(&str) -> bool> =
        (verb == Verb::Undeploy && options.guess && state.is_some()).then_some(&has_entry);
    Ok(Schedule::new(
        &stack.elaborated,
        order,
        verb,
        &options.selection,
        guess,
    )?)
}

/// What the selection asks beyond the plan itself: the components named
/// by `--replace` exist, and an undeploy `-c` leaves nothing deployed that
/// depends on what it takes down.
pub fn check_selection(
    plan: &Schedule,
    options: &RunOptions,
    state: Option<&State>,
    warnings: &mut Warnings,
) -> Result<(), PlanningError> {
    for name in &options.scope.replace {
        if !plan.order.contains(name) {
            return Err(ScheduleError::UnknownSelected {
                flag: "--replace",
                name: name.clone(),
                available: plan.order.clone(),
            }
            .into());
        }
        if !plan.selected.contains(name) {
            warnings.warn(
                None,
                format!("`--replace {name}`: `{name}` is not selected and does not run"),
            );
        }
    }
    guard_undeploy(plan, options, state, warnings)
}

/// `hub undeploy -c X` refuses when a component outside the selection
/// that depends on X is still deployed (any entry not `undeployed`: a
/// failed deploy or undeploy may have left resources); `--force` makes it
/// a warning.
fn guard_undeploy(
    plan: &Schedule,
    options: &RunOptions,
    state: Option<&State>,
    warnings: &mut Warnings,
) -> Result<(), PlanningError> {
    let Some(state) = state else {
        return Ok(());
    };
    if plan.verb != Verb::Undeploy || !options.selection.restricts() {
        return Ok(());
    }
    let is_deployed = |name: &str| {
        state
            .components
            .get(name)
            .is_some_and(|entry| !matches!(entry.status.as_str(), "" | "undeployed"))
    };
    let dependents = plan.deployed_dependents(&is_deployed);
    if dependents.is_empty() {
        return Ok(());
    }
    let taken: Vec<&str> = dependents.iter().map(|d| d.on.as_str()).collect();
    let widened = options.selection.widened_to_dependents(&taken);
    let error = ScheduleError::DependentsDeployed {
        widened,
        dependents,
    };
    if options.force {
        warnings.warn(None, format!("{error} (going on: `--force`)"));
        return Ok(());
    }
    Err(error.into())
}

/// `-c` and `-o` need a state, unless `--force`.
pub fn require_state(options: &RunOptions) -> Result<(), PlanningError> {
    if !options.selection.is_partial() || !options.state.is_empty() || options.force {
        return Ok(());
    }
    Err(PlanningError::StateRequired {
        flag: partial_flag(options),
        path: None,
    })
}

pub fn partial_flag(options: &RunOptions) -> &'static str {
    let selection = &options.selection;
    match (
        selection.components.is_empty(),
        selection.affected.is_some(),
    ) {
        (false, _) => "-c",
        (true, true) => "--affected",
        (true, false) => "--offset",
    }
}

/// The provides map before the first component: the stack's requirements
/// met by the environment, the platform's capabilities, then the state's.
pub fn initial_provides(
    stack: &Stack,
    plan: &Schedule,
    state: Option<&State>,
    path: Option<String>,
) -> Result<IndexMap<String, Vec<String>>, PlanningError> {
    let is_optional = |name: &str| plan.is_optional(name);
    let mut provides = requirements::initial_provides(
        &stack.elaborated,
        &plan.tuning,
        &is_optional,
        path.as_deref().map(std::ffi::OsStr::new),
    )?;
    if let Some(state) = state {
        state::merge_provides(&mut provides, &state.provides);
    }
    Ok(provides)
}

/// A deploy's removed components ([`prune::removed`]): with `--prune`
/// each one that has something to undeploy must have its folder, checked
/// before anything runs; without it, a warning names them.
pub fn removed_components(
    stack: &Stack,
    verb: Verb,
    state: Option<&State>,
    options: &RunOptions,
    warnings: &mut Warnings,
) -> Result<Vec<prune::Removed>, PlanningError> {
    let Some(state) = state.filter(|_| verb == Verb::Deploy) else {
        return Ok(Vec::new());
    };
    let removed = prune::removed(state, &|name| stack.reference(name).is_some());
    if options.scope.prune {
        prune::check_folders(&removed)?;
    } else if let Some(warning) = prune::warning(&removed) {
        warnings.warn(None, warning);
    }
    Ok(removed)
}
