//! A run's preparation, before its first component: the state locked and
//! read, `moved` applied, the schedule, the locked parameters, the checks,
//! the plan, the preflight and the masker; then the operation's start.

use super::{Ledger, Run, Setup, Tally};
use crate::options::{Host, RunOptions};
use crate::outcome::Summary;
use crate::plan::make::{self as planner, Inputs, Purpose};
use crate::plan::preflight;
use crate::run::error::EngineError;
use crate::run::known::Known;
use crate::run::records::{log_dir, state_parameters};
use crate::run::setup::{
    check_consistency, check_implementations, check_selection, initial_outputs, initial_provides,
    lock_parameters, plan_for, read_state, release_stack_parameters, removed_components,
    require_state, Implementations,
};
use crate::run::upstream::Ancestry;
use hub_manifest::diag::Warnings;
use hub_manifest::redact::SecretMasker;
use hub_params::format::substitution_text;
use hub_params::Locked;
use hub_plan::env::{self, Nested};
use hub_plan::order::plan::{self, Plan, Verb};
use hub_plan::source::stack::{absolute, Stack};
use hub_plan::timeout::Timeouts;
use hub_state::{self as state, Clock, Locations, OperationStart, StackMeta, State};
use std::collections::HashMap;
use std::path::Path;
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

impl<'a> Run<'a> {
    pub(super) fn prepare(
        stack: &'a mut Stack,
        options: &'a RunOptions,
        mut host: Host<'a>,
        warnings: &'a mut Warnings,
    ) -> Result<Run<'a>, EngineError> {
        let verb = options.verb.unwrap_or(Verb::Deploy);
        crate::trace::stack_name(verb.as_str(), &stack.elaborated.stack.meta.name);
        let order = stack.validated_order()?;
        let timeouts = run_timeouts(stack, options.timeout)?;
        let retries = crate::run::retry::Retries::new(&stack.elaborated.stack.lifecycle.retry)?;
        let clock = Clock::from_env(&|name| host.var(name))?;
        hub_plan::order::plan::check_selected(&order, &options.selection)?;
        require_state(options)?;
        let locations = match options.state.is_empty() {
            true => None,
            false => Some(crate::trace::lock(|| {
                Locations::lock_waiting(
                    &options.state,
                    verb.as_str(),
                    &clock,
                    &state::LockWait::new(options.lock_timeout, Some(host.log)),
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
        // `HUB_STATE` (§6.9.3): the first location holding a state file.
        let exported_state = locations.as_ref().map(|l| {
            let (paths, given) = (l.paths(), l.given());
            let first_file = paths.iter().position(|p| p.is_file()).unwrap_or(0);
            let exported = &given[first_file];
            match state::is_remote(exported) {
                true => exported.clone(),
                false => absolute(exported),
            }
        });
        let loaded = read_state(read_path.as_deref(), verb, options, warnings)?;
        if let (Some(expected), Some(path)) = (&options.expected_state, &read_path) {
            if !expected.holds(loaded.as_ref()) {
                return Err(EngineError::StateMoved { path: path.clone() });
            }
        }
        let mut loaded = loaded;
        let moved = crate::plan::moved::apply(stack, loaded.as_mut())?;
        let quiet = moved.is_empty() && loaded.is_some();
        for renamed in moved {
            let (from, to) = (&renamed.from, &renamed.to);
            (host.log)(&format!(
                "hub: moved `{from}` → `{to}` in the state (`moved`)"
            ));
        }
        let plan = plan_for(stack, order, verb, options, loaded.as_ref())?;
        check_selection(&plan, options, loaded.as_ref(), warnings)?;
        if let Some(selection) = plan.selection_text() {
            (host.log)(&format!("hub: selection {selection}"));
        }
        if options.why {
            let reasons = plan.selection_reasons();
            for name in &plan.selected {
                if let Some(why) = reasons.get(name.as_str()) {
                    (host.log)(&format!("hub: {name}: selected: {why}"));
                }
            }
        }
        let locked = crate::trace::in_span("parameters", || {
            lock_parameters(
                stack,
                options,
                &mut host,
                read_path.as_deref(),
                loaded.as_ref(),
                warnings,
            )
        })?;
        // Locked: from here on the run reads the locked parameters only,
        // so the stack's own list (half of the elaborated document at
        // scale) is not held for the rest of the run.
        release_stack_parameters(stack);
        let stack: &'a Stack = stack;
        if verb == Verb::Deploy && locations.is_some() {
            check_state_size(stack, &plan, &locked)?;
        }
        if let (Some(state), Some(path)) = (&loaded, &read_path) {
            check_consistency(stack, state, &locked, path, options, false, warnings)?;
        }
        let provides = initial_provides(stack, &plan, loaded.as_ref(), host.var("PATH"))?;
        let Implementations {
            found: implementations,
            missing,
        } = check_implementations(stack, &plan, options)?;
        let removed = removed_components(stack, verb, loaded.as_ref(), options, warnings)?;
        // The plan, made once from what was just read (the planner's
        // warnings come from the checks above, or again as each component
        // runs): a saved one was made again from the same inputs and found
        // equal before the run, from the state read under the lock.
        let planned = match &options.planned {
            Some(planned) => planned.clone(),
            None => {
                let _span = crate::trace::span("plan");
                let inputs = Inputs {
                    stack,
                    options,
                    schedule: &plan,
                    locked: &locked,
                    state: loaded.as_ref(),
                    read_path: read_path.as_deref(),
                    provides: &provides,
                    removed: &removed,
                };
                let mut quiet = Warnings::default();
                std::sync::Arc::new(planner::make(&inputs, Purpose::Execute, &mut quiet))
            }
        };
        crate::plan::guard::check(stack, &planned, &options.replace)?;
        let nested = Nested {
            hub: host.hub.clone(),
            elaborate: stack.file.clone(),
            state: exported_state,
            components_base_dir: options.components_base_dir.as_deref().map(absolute),
        };
        let base_env = env::base(options.os_environment, &host.environment, &nested);
        let findings = preflight::check(&preflight::Inputs {
            stack,
            options,
            plan: &planned,
            implementations: &implementations,
            base_env: &base_env,
            state_folders: false,
        });
        for warning in findings.warnings {
            warnings.warn(None, warning);
        }
        let goes_on = |name: &str| plan.is_optional(name) || options.force;
        let mut problems = missing;
        problems.extend(findings.problems);
        let problems = preflight::with_predicted(problems, &planned, goes_on);
        if !problems.is_empty() {
            return Err(EngineError::Preflight { problems });
        }
        let mut masker = SecretMasker::new(options.reveal);
        for param in locked.params.values().filter(|p| p.secret) {
            masker.add(&substitution_text(param.value.as_ref()));
        }
        masker.add_credentials_in(&base_env);
        masker.add_credentials(|name| host.var(name));
        if let Some(state) = &loaded {
            crate::run::records::mask_recorded_secrets(&mut masker, state);
        }
        let outputs = initial_outputs(&plan, loaded.as_ref());
        let read_serial = loaded.as_ref().map(|state| state.serial);
        let deployed_before = loaded
            .as_ref()
            .map(|state| {
                let deployed = state::ComponentStatus::Deployed.as_str();
                state
                    .components
                    .iter()
                    .filter(|(_, e)| e.status == deployed)
                    .map(|(name, _)| name.clone())
                    .collect()
            })
            .unwrap_or_default();
        let recorded_outputs = match (options.changed || plan.affected.is_some(), &loaded) {
            (true, Some(state)) => state.own_outputs(&state.lifecycle.order),
            _ => HashMap::new(),
        };
        let state = match (loaded, &locations, verb) {
            (Some(state), _, _) => Some(state),
            (None, Some(_), Verb::Deploy) => Some(State::new(StackMeta::default(), Vec::new())),
            _ => None,
        };
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
            clock,
            setup: Setup {
                plan,
                planned,
                locked,
                timeouts,
                retries,
                positions,
                base_env,
                parallel,
                deployed_before,
                recorded_outputs,
                implementations,
                removed,
            },
            ledger: Ledger {
                state,
                log_folder: locations.as_ref().map(|l| log_dir(l.first())),
                log_marks: std::sync::OnceLock::new(),
                locations,
                read_path,
                read_serial,
                operation: None,
                writer: None,
                unsaved_checkpoints: Vec::new(),
                quiet,
            },
            tally: Tally::default(),
            known: Known::new(outputs, provides, parallel),
            ancestry,
            masker,
            summary: Summary {
                verb: verb.as_str().to_string(),
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
            args: self.options.args.clone(),
            initiator: self.host.var("USER").unwrap_or_default(),
        };
        let stack = &self.stack.elaborated.stack;
        let parameters = state_parameters(&self.setup.locked);
        let order = self.setup.plan.order.clone();
        self.ledger.quiet = self.starts_quiet(&parameters, &order);
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
        if self.verb == Verb::Deploy {
            state.stack_parameters = parameters;
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
        EngineError::Plan(plan::PlanError::BadTimeout {
            component: bad.component,
            value: bad.value,
            reason: bad.reason,
        })
    })
}

/// Refuses a deploy whose parameters alone would write a state larger
/// than every command reads (see [`crate::run::size`]).
fn check_state_size(stack: &Stack, plan: &Plan, locked: &Locked) -> Result<(), EngineError> {
    let components = plan
        .selected
        .iter()
        .filter_map(|name| Some((name.as_str(), stack.elaborated.component(name)?)));
    let (estimate, weights) = crate::run::size::estimate(locked, components);
    match crate::run::size::over_limit(estimate, weights) {
        None => Ok(()),
        Some(heaviest) => Err(EngineError::StateTooLarge {
            estimate,
            limit: hub_manifest::limits::MAX_FILE_BYTES as u64,
            heaviest,
        }),
    }
}

fn plan_positions(plan: &Plan) -> HashMap<String, usize> {
    plan.selected
        .iter()
        .enumerate()
        .map(|(i, n)| (n.clone(), i))
        .collect()
}
