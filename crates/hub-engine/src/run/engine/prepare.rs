//! A run's preparation, before its first component: the state locked and
//! read, `moved` applied, the schedule, the locked parameters, the checks,
//! the plan, the preflight and the masker; then the operation's start.

use super::{Ledger, Run, Setup, Tally};
use crate::options::Host;
use crate::run::error::EngineError;
use crate::run::setup::{lock_parameters, read_state};
use hub_manifest::diag::Warnings;
use hub_manifest::redact::SecretMasker;
use hub_params::format::substitution_text;
use hub_params::Locked;
use hub_plan::checks::{
    check_consistency, check_implementations, check_selection, initial_provides, plan_for,
    removed_components, require_state, Implementations,
};
use hub_plan::decide::known::initial_outputs;
use hub_plan::decide::known::Known;
use hub_plan::decide::records::{log_dir, same_state_parameters, state_parameters};
use hub_plan::decide::retry::Retries;
use hub_plan::decide::upstream::Ancestry;
use hub_plan::env::{self, Nested};
use hub_plan::error::PlanningError;
use hub_plan::options::RunOptions;
use hub_plan::order::schedule::{self, Schedule};
use hub_plan::outcome::Summary;
use hub_plan::plan::make::{self as planner, Inputs, Purpose};
use hub_plan::plan::moved::Renamed;
use hub_plan::plan::preflight;
use hub_plan::plan::Plan as ActionPlan;
use hub_plan::source::discover::Implementation;
use hub_plan::source::stack::{absolute, Stack};
use hub_plan::timeout::Timeouts;
use hub_plan::Verb;
use hub_state::{self as state, Clock, Locations, OperationStart, StackMeta, State};
use indexmap::IndexMap;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

/// The log folder of the state at `state`, when there is one, is a folder
/// of the user's (see [`state::beside`]): its logs are never written
/// through a planted link.
fn check_log_folder(state: &Path) -> Result<(), state::StateError> {
    let folder = log_dir(state);
    match state::beside::check_folder(&folder) {
        Ok(_) => Ok(()),
        Err(source) => Err(state::StateError::Beside {
            path: folder,
            source,
        }),
    }
}

/// What is read from the stack before the state is locked.
struct Basics {
    /// The stack's order, checked.
    order: Vec<String>,
    timeouts: Timeouts,
    retries: Retries,
    clock: Clock,
}

/// The state's locations, locked, and the state read from them.
struct Opened {
    /// `None` without a state (`-n`).
    locations: Option<Locations>,
    /// The location the state is read from (or would have been).
    read_path: Option<PathBuf>,
    /// `HUB_STATE` for the components.
    exported_state: Option<PathBuf>,
    /// The state as read, `moved` applied.
    loaded: Option<State>,
    /// `deploy --plan`: the serial the plan read, when the state moved
    /// since (same lineage) and the plan can be applied per component.
    moved_from: Option<u64>,
}

/// What the run found to work with before it makes the plan.
struct Found {
    provides: IndexMap<String, Vec<String>>,
    implementations: Implementations,
    removed: Vec<hub_plan::decide::prune::Removed>,
}

impl<'a> Run<'a> {
    /// Prepares a run, step by step (see the module's list), and records
    /// its start.
    pub(super) fn prepare(
        stack: &'a mut Stack,
        options: &'a RunOptions,
        mut host: Host<'a>,
        warnings: &'a mut Warnings,
    ) -> Result<Run<'a>, EngineError> {
        let verb = options.verb.unwrap_or(Verb::Deploy);
        crate::trace::stack_name(verb.as_str(), &stack.elaborated.stack.meta.name);
        let basics = basics(stack, options, &host)?;
        let mut opened = open_state(options, verb, &basics.clock, &host, warnings)?;
        let moved = apply_moved(stack, opened.loaded.as_mut(), &host)?;
        let since_plan = since_plan(options, &opened)?;
        let quiet = moved.is_empty() && opened.loaded.is_some();
        let plan = schedule(stack, basics.order, verb, options, &opened, &host, warnings)?;
        // Locked: from here on the run reads the locked parameters only,
        // so the lock takes the stack's own list (half of the elaborated
        // document at scale), which is not held for the rest of the run.
        let locked = lock(stack, options, &mut host, &opened, warnings)?;
        // Its file's text is read again only to point at something
        // reported: it is kept deflated from here on.
        stack.pack_source();
        let stack: &'a Stack = stack;
        check_against_state(stack, verb, options, &plan, &locked, &opened, warnings)?;
        let found = find(stack, verb, options, &plan, &opened, &host, warnings)?;
        let mut planned = action_plan(stack, options, &plan, &locked, &opened, &found)?;
        let base_env = base_env(stack, options, &host, opened.exported_state.take());
        let implementations = preflight_checks(
            stack,
            options,
            &plan,
            &planned,
            found.implementations,
            &base_env,
            warnings,
        )?;
        release_plan_parts(&mut planned, options.running.report_plan);
        let masker = masker(options, &locked, &base_env, &host, opened.loaded.as_ref());
        let loaded = opened.loaded.as_ref();
        let outputs = initial_outputs(&plan, loaded);
        let deployed_before = deployed_names(loaded);
        let recorded_outputs = recorded_outputs(options, &plan, loaded);
        let ledger = ledger(opened, verb, quiet);
        let positions = plan_positions(&plan);
        let ancestry = Ancestry::new(&plan.selected);
        let parallel = options.concurrency > 1;
        let mut run = Run {
            stack,
            options,
            verb,
            host,
            warnings,
            warnings_shown: 0,
            clock: basics.clock,
            setup: Setup {
                plan,
                planned,
                locked,
                timeouts: basics.timeouts,
                retries: basics.retries,
                positions,
                base_env,
                parallel,
                deployed_before,
                recorded_outputs,
                implementations,
                removed: found.removed,
                since_plan,
            },
            ledger,
            tally: Tally::default(),
            known: Known::new(outputs, found.provides, parallel),
            ancestry,
            masker,
            summary: Summary {
                verb,
                ..Summary::default()
            },
        };
        run.preload_all();
        run.begin()?;
        Ok(run)
    }

    /// Records the operation `in-progress` and the stack's identity.
    fn begin(&mut self) -> Result<(), EngineError> {
        let now = self.clock.now();
        self.summary.started = now.clone();
        let start = OperationStart {
            id: state::operation_id(&|name| self.host.var(name)),
            operation: self.verb.as_str().to_string(),
            args: self.options.running.args.clone(),
            initiator: self.host.var("USER").unwrap_or_default(),
        };
        let stack = &self.stack.elaborated.stack;
        // The state's list is kept when it is the locked one (its text is
        // the same): one list of every stack parameter, not two.
        let same_parameters = self.ledger.state.as_ref().is_some_and(|state| {
            same_state_parameters(&self.setup.locked, &state.stack_parameters)
        });
        let order = self.setup.plan.order.clone();
        self.ledger.quiet = self.starts_quiet(same_parameters, &order);
        let lineage = |host: &Host| state::new_lineage(&|name| host.var(name));
        let Some(state) = self.ledger.state.as_mut() else {
            return Ok(());
        };
        if state.lineage.is_empty() {
            state.lineage = lineage(&self.host);
        }
        state.meta = StackMeta {
            kind: stack.kind.clone(),
            name: stack.meta.name.clone(),
        };
        state.lifecycle.order = order;
        // An undeploy keeps the record of what was deployed (§10.4).
        if self.verb == Verb::Deploy && !same_parameters {
            state.stack_parameters = Vec::new();
            state.stack_parameters = state_parameters(&self.setup.locked);
        }
        self.ledger.operation = Some(state.begin_operation(start, &now));
        match self.ledger.quiet {
            true => Ok(()),
            false => self.save(),
        }
    }
}

/// The limits of a run: the stack's `lifecycle.timeouts` over `--timeout`.
fn run_timeouts(stack: &Stack, default: Option<Duration>) -> Result<Timeouts, EngineError> {
    Timeouts::new(&stack.elaborated.stack.lifecycle.timeouts, default).map_err(|bad| {
        EngineError::Planning(PlanningError::Plan(schedule::ScheduleError::BadTimeout {
            component: bad.component,
            value: bad.value,
            reason: bad.reason,
        }))
    })
}

/// Refuses a deploy whose parameters alone would write a state larger
/// than every command reads (see [`crate::run::size`]).
fn check_state_size(stack: &Stack, plan: &Schedule, locked: &Locked) -> Result<(), EngineError> {
    let components = || {
        plan.selected
            .iter()
            .filter_map(|name| Some((name.as_str(), stack.elaborated.component(name)?)))
    };
    let limit = state::max_state_bytes() as u64;
    // The sum alone first: the weights are named only to be reported.
    if crate::run::size::total(locked, components()) <= limit {
        return Ok(());
    }
    let (estimate, weights) = crate::run::size::estimate(locked, components());
    match crate::run::size::over_limit(estimate, limit, weights) {
        None => Ok(()),
        Some(heaviest) => Err(EngineError::StateTooLarge {
            estimate,
            limit,
            heaviest,
        }),
    }
}

fn plan_positions(plan: &Schedule) -> HashMap<String, usize> {
    plan.selected
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect()
}

/// The stack's order, the run's limits and its clock; the selection and
/// the need for a state checked.
fn basics(stack: &Stack, options: &RunOptions, host: &Host) -> Result<Basics, EngineError> {
    let order = stack.validated_order()?;
    let timeouts = run_timeouts(stack, options.running.timeout)?;
    let retries = Retries::new(&stack.elaborated.stack.lifecycle.retry)?;
    let clock = Clock::from_env(&|name| host.var(name))?;
    hub_plan::order::schedule::check_selected(&order, &options.selection)?;
    require_state(options)?;
    Ok(Basics {
        order,
        timeouts,
        retries,
        clock,
    })
}

/// Locks the state's locations for the whole run and reads the state;
/// `deploy --plan`: the state must still be the one the plan was checked
/// against.
fn open_state(
    options: &RunOptions,
    verb: Verb,
    clock: &Clock,
    host: &Host,
    warnings: &mut Warnings,
) -> Result<Opened, EngineError> {
    let locations = match options.state.is_empty() {
        true => None,
        false => Some(crate::trace::lock(|| {
            Locations::lock_waiting(
                &options.state,
                verb.as_str(),
                clock,
                &state::LockWait::new(options.running.lock_timeout, Some(host.log)),
                warnings,
            )
        })?),
    };
    if let Some(locations) = &locations {
        check_log_folder(locations.first())?;
    }
    let read_path = locations
        .as_ref()
        .map(|l| l.to_read().unwrap_or(l.first()).to_path_buf());
    let exported_state = locations.as_ref().map(exported_state);
    let loaded = read_state(read_path.as_deref(), verb, options, warnings)?;
    let mut moved_from = None;
    if let (Some(expected), Some(path)) = (&options.running.expected_state, &read_path) {
        if !expected.holds(loaded.as_ref()) {
            moved_from = expected.moved_serial(loaded.as_ref());
            if moved_from.is_none() || options.running.saved.is_none() {
                return Err(EngineError::StateMoved { path: path.clone() });
            }
        }
    }
    Ok(Opened {
        locations,
        read_path,
        exported_state,
        loaded,
        moved_from,
    })
}

/// `deploy --plan` on a state that moved since the plan (same lineage):
/// which components another run wrote, decided from the state read under
/// the lock, `moved` applied as the plan applied it; the whole plan
/// refused when it cannot be applied per component.
fn since_plan(
    options: &RunOptions,
    opened: &Opened,
) -> Result<Option<super::moved_state::SincePlan>, EngineError> {
    let (Some(from), Some(saved), Some(loaded)) = (
        opened.moved_from,
        options.running.saved.as_deref(),
        opened.loaded.as_ref(),
    ) else {
        return Ok(None);
    };
    match super::moved_state::since_plan(saved, loaded, from) {
        Some(since) => Ok(Some(since)),
        None => Err(EngineError::StateMoved {
            path: opened.read_path.clone().unwrap_or_default(),
        }),
    }
}

/// `HUB_STATE` (§6.9.3): the first location holding a state file.
fn exported_state(locations: &Locations) -> PathBuf {
    let (paths, given) = (locations.paths(), locations.given());
    let first_file = paths.iter().position(|p| p.is_file()).unwrap_or(0);
    let exported = &given[first_file];
    match state::is_remote(exported) {
        true => exported.clone(),
        false => absolute(exported),
    }
}

/// Applies the stack's `moved` renames to the state read, and says each.
fn apply_moved(
    stack: &Stack,
    loaded: Option<&mut State>,
    host: &Host,
) -> Result<Vec<Renamed>, EngineError> {
    let moved = hub_plan::plan::moved::apply(stack, loaded)?;
    for renamed in &moved {
        let (from, to) = (&renamed.from, &renamed.to);
        (host.log)(&format!(
            "hub: moved `{from}` → `{to}` in the state (`moved`)"
        ));
    }
    Ok(moved)
}

/// The schedule (selection, order, waves), its selection checked and
/// said (with `--why`, why each component is selected).
fn schedule(
    stack: &Stack,
    order: Vec<String>,
    verb: Verb,
    options: &RunOptions,
    opened: &Opened,
    host: &Host,
    warnings: &mut Warnings,
) -> Result<Schedule, EngineError> {
    let loaded = opened.loaded.as_ref();
    let plan = plan_for(stack, order, verb, options, loaded)?;
    check_selection(&plan, options, loaded, warnings)?;
    if let Some(selection) = plan.selection_text() {
        (host.log)(&format!("hub: selection {selection}"));
    }
    if options.running.why {
        let reasons = plan.selection_reasons();
        for name in &plan.selected {
            if let Some(why) = reasons.get(name.as_str()) {
                (host.log)(&format!("hub: {name}: selected: {why}"));
            }
        }
    }
    Ok(plan)
}

/// The stack's parameters, locked (the state fills `kind: user` ones),
/// the stack's own list taken by the lock.
fn lock(
    stack: &mut Stack,
    options: &RunOptions,
    host: &mut Host,
    opened: &Opened,
    warnings: &mut Warnings,
) -> Result<Locked, EngineError> {
    crate::trace::in_span("parameters", || {
        lock_parameters(
            stack,
            options,
            host,
            opened.read_path.as_deref(),
            opened.loaded.as_ref(),
            warnings,
        )
    })
}

/// A deploy's state stays readable; the state read agrees with the stack
/// (§4.4).
fn check_against_state(
    stack: &Stack,
    verb: Verb,
    options: &RunOptions,
    plan: &Schedule,
    locked: &Locked,
    opened: &Opened,
    warnings: &mut Warnings,
) -> Result<(), EngineError> {
    if verb == Verb::Deploy && opened.locations.is_some() {
        check_state_size(stack, plan, locked)?;
    }
    if let (Some(state), Some(path)) = (&opened.loaded, &opened.read_path) {
        check_consistency(stack, state, locked, path, options, false, warnings)?;
    }
    Ok(())
}

/// The capabilities provided at the start, each selected component's
/// implementation, and the components the stack no longer lists.
fn find(
    stack: &Stack,
    verb: Verb,
    options: &RunOptions,
    plan: &Schedule,
    opened: &Opened,
    host: &Host,
    warnings: &mut Warnings,
) -> Result<Found, EngineError> {
    let loaded = opened.loaded.as_ref();
    let provides = initial_provides(stack, plan, loaded, host.var("PATH"))?;
    let implementations = check_implementations(stack, plan, options)?;
    let removed = removed_components(stack, verb, loaded, options, warnings)?;
    Ok(Found {
        provides,
        implementations,
        removed,
    })
}

/// The plan, made once from what was just read (the planner's warnings
/// come from the checks before, or again as each component runs): a saved
/// one was made again from the same inputs and found equal before the
/// run, from the state read under the lock. Its guards are checked.
fn action_plan(
    stack: &Stack,
    options: &RunOptions,
    plan: &Schedule,
    locked: &Locked,
    opened: &Opened,
    found: &Found,
) -> Result<Arc<ActionPlan>, EngineError> {
    let planned = match &options.running.planned {
        Some(planned) => planned.clone(),
        None => {
            let _span = crate::trace::span("plan");
            let inputs = Inputs {
                stack,
                options,
                schedule: plan,
                locked,
                state: opened.loaded.as_ref(),
                read_path: opened.read_path.as_deref(),
                provides: &found.provides,
                removed: &found.removed,
                steps: None,
            };
            // The run says what the plan would (a component's
            // parameters and conditions) as it reaches each component.
            let mut quiet = Warnings::already_reported();
            Arc::new(planner::make(&inputs, Purpose::Execute, &mut quiet))
        }
    };
    hub_plan::plan::guard::check(stack, &planned, &options.scope.replace)?;
    Ok(planned)
}

/// The environment every component starts from.
fn base_env(
    stack: &Stack,
    options: &RunOptions,
    host: &Host,
    exported_state: Option<PathBuf>,
) -> Vec<(String, String)> {
    let nested = Nested {
        hub: host.hub.clone(),
        elaborate: stack.file.clone(),
        state: exported_state,
        components_base_dir: options.components_base_dir.as_deref().map(absolute),
    };
    env::base(options.os_environment, &host.environment, &nested)
}

/// The preflight: its warnings reported, its problems (and the missing
/// implementations) fatal where the plan says they would stop the run.
/// Returns the implementations found.
fn preflight_checks(
    stack: &Stack,
    options: &RunOptions,
    plan: &Schedule,
    planned: &ActionPlan,
    implementations: Implementations,
    base_env: &[(String, String)],
    warnings: &mut Warnings,
) -> Result<HashMap<String, Implementation>, EngineError> {
    let Implementations { found, missing } = implementations;
    let findings = preflight::check(&preflight::Inputs {
        stack,
        options,
        plan: planned,
        implementations: &found,
        base_env,
        state_folders: false,
    });
    for warning in findings.warnings {
        warnings.warn(None, warning);
    }
    let goes_on = |name: &str| plan.is_optional(name) || options.force;
    let mut problems = missing;
    problems.extend(findings.problems);
    let problems = preflight::with_predicted(problems, planned, goes_on);
    if !problems.is_empty() {
        return Err(EngineError::Preflight { problems });
    }
    Ok(found)
}

/// What the run no longer reads of a plan it made, dropped before the
/// first component: the environment each component's parameters set (the
/// preflight was the last to read it) and, unless the report shows them
/// after the run (`report_parameters`), the parameters (a plan the run
/// made has no deferred component, the one thing that reads them again).
/// A plan given to the run is shared with its caller and kept whole.
fn release_plan_parts(planned: &mut Arc<ActionPlan>, report_parameters: bool) {
    let Some(plan) = Arc::get_mut(planned) else {
        return;
    };
    for component in &mut plan.components {
        component.environment = Vec::new();
        if !report_parameters {
            component.parameters = Vec::new();
        }
    }
}

/// The secrets the run masks: the secret parameters, the credentials of
/// the environment and those the state records.
fn masker(
    options: &RunOptions,
    locked: &Locked,
    base_env: &[(String, String)],
    host: &Host,
    loaded: Option<&State>,
) -> SecretMasker {
    let mut masker = SecretMasker::new(options.reveal);
    for param in locked.params.values().filter(|p| p.secret) {
        masker.add(&substitution_text(param.value.as_ref()));
    }
    masker.add_credentials_in(base_env);
    masker.add_credentials(|name| host.var(name));
    if let Some(state) = loaded {
        hub_plan::decide::records::mask_recorded_secrets(&mut masker, state);
    }
    masker
}

/// The components the state read records as deployed.
fn deployed_names(loaded: Option<&State>) -> Vec<String> {
    loaded
        .map(|state| {
            let deployed = state::ComponentStatus::Deployed.as_str();
            state
                .components
                .iter()
                .filter(|(_, e)| e.status == deployed)
                .map(|(name, _)| name.clone())
                .collect()
        })
        .unwrap_or_default()
}

/// `--changed` (or an affected selection): each component's outputs as
/// the state read records them.
fn recorded_outputs(
    options: &RunOptions,
    plan: &Schedule,
    loaded: Option<&State>,
) -> HashMap<String, Vec<state::CapturedOutput>> {
    match (options.scope.changed || plan.affected.is_some(), loaded) {
        (true, Some(state)) => state.own_outputs(&state.lifecycle.order),
        _ => HashMap::new(),
    }
}

/// The state the run writes: the one read, or a new one for a deploy
/// with a location; `None` without one.
fn state_to_write(loaded: Option<State>, has_locations: bool, verb: Verb) -> Option<State> {
    match (loaded, has_locations, verb) {
        (Some(state), _, _) => Some(state),
        (None, true, Verb::Deploy) => Some(State::new(StackMeta::default(), Vec::new())),
        _ => None,
    }
}

/// The state the run writes, where, and what it read.
fn ledger(opened: Opened, verb: Verb, quiet: bool) -> Ledger {
    let Opened {
        locations,
        read_path,
        loaded,
        ..
    } = opened;
    let read_serial = loaded.as_ref().map(|state| state.serial);
    let state = state_to_write(loaded, locations.is_some(), verb);
    Ledger {
        state,
        log_folder: locations.as_ref().map(|l| log_dir(l.first())),
        log_marks: std::sync::OnceLock::new(),
        locations,
        read_path,
        read_serial,
        operation: None,
        writer: None,
        unsaved_checkpoints: Vec::new(),
        flush: None,
        quiet,
    }
}
