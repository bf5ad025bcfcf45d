//! `hub plan`'s preparation: the engine's checks and reads before its
//! first component (the same functions, [`crate::checks`]) without
//! the lock, the clock, prompts or anything written; then the planner.

use super::make::{self, Inputs, Purpose};
use super::planned::PlanSteps;
use super::preflight;
use super::Plan;
use crate::checks::{
    check_consistency, check_implementations, check_selection, initial_provides, lock_parameters,
    lock_releasing_parameters, partial_flag, plan_for, require_state,
};
use crate::decide::prune;
use crate::error::PlanningError;
use crate::options::RunOptions;
use crate::order::schedule::{Schedule, Verb};
use crate::source::stack::Stack;
use hub_manifest::diag::Warnings;
use hub_params::Locked;
use hub_state::{self as state, State};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};

/// Works out what `options` would do to `stack`. `environment` is hub's
/// environment (for `fromEnv` parameters and the `PATH` of well-known
/// requirements). Nothing is prompted: `kind: user` parameters without a
/// value (and none in the state) are an error.
pub fn plan(
    stack: &Stack,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    warnings: &mut Warnings,
) -> Result<Plan, PlanningError> {
    plan_with(stack, options, environment, None, warnings)
}

/// [`plan`], emptying the stack's own parameter list once the parameters
/// are locked, as a run does ([`crate::checks::lock_releasing_parameters`]): what the plan
/// reads from there on is in the locked parameters. For callers that read
/// nothing of that list afterwards (no saved plan, whose digest covers the
/// whole document; no plan steps, which lock again).
pub fn plan_releasing(
    stack: &mut Stack,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    warnings: &mut Warnings,
) -> Result<Plan, PlanningError> {
    plan_held(Held::Released(stack), options, environment, None, warnings)
}

/// The stack a plan is made of: kept whole, or its stack-level parameter
/// list released once locked.
enum Held<'s> {
    Kept(&'s Stack),
    Released(&'s mut Stack),
}

/// [`plan`], with `steps` running each component's plan step when
/// `options.plan_steps` asks for them (`hub plan --plan-steps`).
pub fn plan_with(
    stack: &Stack,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    steps: Option<&dyn PlanSteps>,
    warnings: &mut Warnings,
) -> Result<Plan, PlanningError> {
    plan_held(Held::Kept(stack), options, environment, steps, warnings)
}

fn plan_held(
    held: Held<'_>,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    steps: Option<&dyn PlanSteps>,
    warnings: &mut Warnings,
) -> Result<Plan, PlanningError> {
    let base_env = crate::env::base(
        options.os_environment,
        &environment,
        &crate::env::Nested::default(),
    );
    let (stack, prepared) = prepare(held, options, environment, warnings)?;
    let Prepared {
        plan: schedule,
        locked,
        read_path,
        state,
        provides,
        removed,
        implementations,
        moved,
    } = prepared;
    let inputs = Inputs {
        stack,
        options,
        schedule: &schedule,
        locked: &locked,
        state: state.as_ref(),
        read_path: read_path.as_deref(),
        provides: &provides,
        removed: &removed,
        steps: steps.filter(|_| options.plan_steps),
    };
    let mut plan = make::make(&inputs, Purpose::Show, warnings);
    plan.moved = moved;
    let retries = &stack.elaborated.stack.lifecycle.retry;
    for component in plan.components.iter_mut().filter(|c| c.action.runs()) {
        component.retry = crate::decide::retry::describe(retries, &component.name);
    }
    super::guard::check(stack, &plan, &options.scope.replace)?;
    let findings = preflight::check(&preflight::Inputs {
        stack,
        options,
        plan: &plan,
        implementations: &implementations.found,
        base_env: &base_env,
        state_folders: true,
    });
    let mut findings = findings;
    let found = std::mem::take(&mut findings.problems);
    findings.problems = implementations.missing;
    findings.problems.extend(found);
    preflight::apply(&mut plan, findings, warnings);
    Ok(plan)
}

/// What the engine checks and reads before its first component.
struct Prepared {
    plan: Schedule,
    locked: Locked,
    /// The location read (or that would be), `None` with `-n`.
    read_path: Option<PathBuf>,
    state: Option<State>,
    provides: IndexMap<String, Vec<String>>,
    removed: Vec<prune::Removed>,
    implementations: crate::checks::Implementations,
    /// The renames `moved` made in the state read.
    moved: Vec<super::moved::Renamed>,
}

/// The engine's preparation (`Run::prepare`) without the lock, the clock
/// and anything written.
fn prepare<'s>(
    held: Held<'s>,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    warnings: &mut Warnings,
) -> Result<(&'s Stack, Prepared), PlanningError> {
    let verb = options.verb.unwrap_or(Verb::Deploy);
    let path_variable = environment
        .iter()
        .find(|(name, _)| name == "PATH")
        .map(|(_, value)| value.clone());
    let (
        stack,
        Locking {
            plan,
            locked,
            read_path,
            state,
            moved,
        },
    ) = lock_held(held, options, environment, warnings)?;
    let mut state = state;
    if let (Some(state), Some(path)) = (&mut state, &read_path) {
        check_consistency(stack, state, &locked, path, options, true, warnings)?;
        // A plan reads the state's stack parameters only to lock and to
        // check them against the stack: one per stack parameter, no longer
        // held beside the locked ones while the plan is made and shown.
        state.stack_parameters = Vec::new();
    }
    let provides = initial_provides(stack, &plan, state.as_ref(), path_variable)?;
    let implementations = check_implementations(stack, &plan, options)?;
    let removed = match state.as_ref().filter(|_| verb == Verb::Deploy) {
        Some(state) => prune::removed(state, &|name| stack.reference(name).is_some()),
        None => Vec::new(),
    };
    if options.scope.prune {
        prune::check_folders(&removed)?;
    }
    let prepared = Prepared {
        plan,
        locked,
        read_path,
        state,
        provides,
        removed,
        implementations,
        moved,
    };
    Ok((stack, prepared))
}

/// What the preparation has once the parameters are locked.
struct Locking {
    plan: Schedule,
    locked: Locked,
    read_path: Option<PathBuf>,
    state: Option<State>,
    moved: Vec<super::moved::Renamed>,
}

/// The preparation up to the locked parameters: the order, the state, the
/// schedule, the lock; then, for [`Held::Released`], the stack's own
/// parameter list released (what follows reads the locked ones).
fn lock_held<'s>(
    held: Held<'s>,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    warnings: &mut Warnings,
) -> Result<(&'s Stack, Locking), PlanningError> {
    let stack: &Stack = match &held {
        Held::Kept(stack) => stack,
        Held::Released(stack) => stack,
    };
    let verb = options.verb.unwrap_or(Verb::Deploy);
    let order = stack.validated_order()?;
    crate::order::schedule::check_selected(&order, &options.selection)?;
    require_state(options)?;
    // The location a run would read, without locking anything; the first
    // one when none holds a file.
    let read_path = state::locations::to_read(&options.state)
        .or(options.state.first().map(PathBuf::as_path))
        .map(Path::to_path_buf);
    let mut state = read_state(read_path.as_deref(), options, warnings)?;
    let moved = super::moved::apply(stack, state.as_mut())?;
    let plan = plan_for(stack, order, verb, options, state.as_ref())?;
    check_selection(&plan, options, state.as_ref(), warnings)?;
    let (stack, locked) =
        lock_without_prompts(held, options, environment, &read_path, &state, warnings)?;
    let locking = Locking {
        plan,
        locked,
        read_path,
        state,
        moved,
    };
    Ok((stack, locking))
}

/// The state, read only: missing is a first deploy (an error for `-c`/`-o`
/// unless `--force`), unreadable an error naming the file.
fn read_state(
    path: Option<&Path>,
    options: &RunOptions,
    warnings: &mut Warnings,
) -> Result<Option<State>, PlanningError> {
    let Some(path) = path else {
        return Ok(None);
    };
    match state::read(path, warnings)? {
        None if options.selection.is_partial() && !options.force => {
            Err(PlanningError::StateRequired {
                flag: partial_flag(options),
                path: Some(path.to_path_buf()),
            })
        }
        read => Ok(read),
    }
}

/// [`lock_parameters`] without a prompter: `kind: user` parameters
/// without a value are an error. For [`Held::Released`], the lock takes
/// the stack's own parameter list ([`lock_releasing_parameters`]).
fn lock_without_prompts<'s>(
    held: Held<'s>,
    options: &RunOptions,
    environment: Vec<(String, String)>,
    read_path: &Option<PathBuf>,
    loaded: &Option<State>,
    warnings: &mut Warnings,
) -> Result<(&'s Stack, Locked), PlanningError> {
    let (read_path, loaded) = (read_path.as_deref(), loaded.as_ref());
    match held {
        Held::Kept(stack) => {
            let locked = lock_parameters(
                stack,
                options,
                &environment,
                None,
                read_path,
                loaded,
                warnings,
            )?;
            Ok((stack, locked))
        }
        Held::Released(stack) => {
            let locked = lock_releasing_parameters(
                stack,
                options,
                &environment,
                None,
                read_path,
                loaded,
                warnings,
            )?;
            Ok((stack, locked))
        }
    }
}
