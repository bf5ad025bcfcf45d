//! The run's loop: the scheduler hands out components, their processes
//! run on threads, each one's end is settled here; then `--prune`, the
//! failures, the end of the run and the state's writes.

use super::turns::Turns;
use super::{quiet, record_phase, Changed, Run, Step, Stop};
use crate::run::error::EngineError;
use crate::run::outputs::stack_outputs;
use crate::run::prune;
use crate::run::recorder::Recorder;
use hub_params::format::substitution_text;
use hub_plan::decide::records::refresh_stack_outputs;
use hub_plan::order::scheduler::Scheduler;
use hub_plan::outcome::{finish_line, Outcome};
use hub_plan::plan::Action;
use hub_plan::Verb;
use hub_state::{self as state, OperationStatus, StackStatus};
use indexmap::IndexMap;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

impl<'a> Run<'a> {
    /// Runs the selected components through the scheduler: up to
    /// `concurrency` component processes at once, each on a thread of its
    /// own; everything else (parameters, state, outputs) happens here, one
    /// component at a time, as each starts and ends.
    pub(super) fn execute(&mut self) -> Result<(), EngineError> {
        let sink = Recorder::new(self.host.sink, self.parallel());
        let logs_ahead = self.logs_ahead();
        let turns = self.run_components(&sink, logs_ahead.as_ref());
        if let Some(logs) = logs_ahead {
            logs.finish();
        }
        self.put_in_order(&sink, &turns);
        self.after_components(turns.stop)
    }

    /// The failures, what did not run and the summary's table in the
    /// run's order, not the order they came in.
    fn put_in_order(&mut self, sink: &Recorder, turns: &Turns<'a>) {
        let positions = &self.setup.positions;
        let position = |name: &String| positions.get(name).copied().unwrap_or(usize::MAX);
        self.tally.failed.sort_by_key(position);
        self.tally
            .mandatory_failures
            .sort_by_key(|(name, _)| position(name));
        self.summary.failed_logs = sink.failed_logs(&self.tally.failed);
        let why_not_run = self.why_not_run(turns.stop.as_ref());
        self.not_run(&turns.scheduler, why_not_run);
        // The table and the report follow the order, not the timing.
        let positions = &self.setup.positions;
        self.summary
            .entries
            .sort_by_key(|e| positions.get(&e.component).copied().unwrap_or(usize::MAX));
    }

    /// Once no component runs: the run stops as `stop` says, or on a
    /// signal or a failure left for the end; else the stack is ready and
    /// `--prune` runs.
    fn after_components(&mut self, stop: Option<Stop>) -> Result<(), EngineError> {
        match stop {
            Some(Stop::Interrupted(component, signal)) => {
                return self.stop_interrupted(component.as_deref(), signal)
            }
            Some(Stop::Fatal(error)) => {
                self.tally.stopped = true;
                self.record_fatal(&error);
                return Err(error);
            }
            Some(Stop::Failed(error)) => return self.stop_failed(error),
            Some(Stop::Draining) => {
                if let Some(error) = self.first_failure() {
                    return self.stop_failed(error);
                }
            }
            None => {}
        }
        if let Some(signal) = self.interrupt_signal() {
            return self.stop_interrupted(None, signal);
        }
        if let Some(error) = self.deferred_failure() {
            return self.stop_failed(error);
        }
        self.stack_ready()?;
        self.prune()
    }

    /// `--prune`: undeploys the removed components, dependents first, and
    /// forgets each one whose undeploy succeeded (written at once). A
    /// failure keeps the entry and fails the run once the others are done.
    pub(super) fn prune(&mut self) -> Result<(), EngineError> {
        if !self.options.scope.prune || self.setup.removed.is_empty() {
            return Ok(());
        }
        let removed = std::mem::take(&mut self.setup.removed);
        let verb = self.options.implementation_verb("undeploy");
        for index in 0..removed.len() {
            if let ControlFlow::Break(result) = self.prune_one(&removed, index, &verb) {
                return result;
            }
        }
        match self.tally.mandatory_failures.is_empty() {
            true => Ok(()),
            false => {
                let failed = self.tally.mandatory_failures.clone();
                let cancelled = self.tally.cancelled.clone();
                self.stop_failed(EngineError::PruneFailed { failed, cancelled })
            }
        }
    }

    /// `--prune`: the `index`th removed component, unless a dependent of
    /// it failed to undeploy; breaks with the run's result when it stops.
    fn prune_one(
        &mut self,
        removed: &[hub_plan::decide::prune::Removed],
        index: usize,
        verb: &str,
    ) -> ControlFlow<Result<(), EngineError>> {
        let gone = &removed[index];
        let name = gone.name.as_str();
        let total = removed.len();
        (self.host.log)(&format!(
            "hub: prune {name} ({}/{total}): removed from the stack",
            index + 1
        ));
        let started = Instant::now();
        let failed_dependents: Vec<&str> = removed[..index]
            .iter()
            .filter(|r| r.depends.iter().any(|d| d == name))
            .map(|r| r.name.as_str())
            .filter(|r| self.tally.mandatory_failures.iter().any(|(f, _)| f == r))
            .collect();
        if let Some(dependent) = failed_dependents.first() {
            let reason = format!("`{dependent}` depends on it and was not undeployed");
            self.summary
                .push(name, Outcome::Cancelled(reason), Duration::ZERO);
            self.tally.cancelled.push(name.to_string());
            return ControlFlow::Continue(());
        }
        let ended = self.undeploy_removed(gone, verb);
        self.record_pruned(name, ended, started.elapsed())
    }

    /// Runs a removed component's undeploy, when it has one to run and
    /// the state an entry for it.
    fn undeploy_removed(
        &mut self,
        gone: &hub_plan::decide::prune::Removed,
        verb: &str,
    ) -> prune::Ended {
        let name = gone.name.as_str();
        let entry = self
            .ledger
            .state
            .as_ref()
            .and_then(|s| s.components.get(name));
        match (gone.runs(), entry.cloned()) {
            (true, Some(entry)) => {
                let run = prune::Undeploy {
                    verb,
                    base_env: &self.setup.base_env,
                    base_dir: &self.stack.base_dir,
                    sink: self.host.sink,
                    interrupts: self.host.interrupts,
                    reveal: self.options.reveal,
                    log_file: self.log_file(name),
                    limit: self.setup.timeouts.limit(name),
                };
                prune::undeploy(gone, &entry, &run, self.warnings)
            }
            _ => prune::Ended::Undeployed,
        }
    }

    /// Records how a removed component's undeploy ended: undeployed, it
    /// is forgotten (written at once).
    fn record_pruned(
        &mut self,
        name: &str,
        ended: prune::Ended,
        elapsed: Duration,
    ) -> ControlFlow<Result<(), EngineError>> {
        let now = self.clock.now();
        let phase = match ended {
            prune::Ended::Undeployed => OperationStatus::Success,
            _ => OperationStatus::Error,
        };
        let positions = self.parallel().then_some(&self.setup.positions);
        if let (Some(state), Some(op)) = (self.ledger.state.as_mut(), self.ledger.operation) {
            record_phase(state, op, name, phase, &now, positions);
        }
        match ended {
            prune::Ended::Undeployed => {
                if let Some(state) = self.ledger.state.as_mut() {
                    prune::forget(state, name);
                }
                state::remove_provider(&mut self.known.provides, name);
                self.summary.push(name, Outcome::Undeployed, elapsed);
                if let Err(error) = self.save() {
                    return ControlFlow::Break(Err(error));
                }
            }
            prune::Ended::Failed(reason) => {
                self.summary
                    .push(name, Outcome::Failed(reason.clone()), elapsed);
                self.tally
                    .mandatory_failures
                    .push((name.to_string(), reason));
            }
            prune::Ended::Interrupted(signal) => {
                self.summary.push(name, Outcome::Interrupted, elapsed);
                return ControlFlow::Break(self.stop_interrupted(Some(name), signal));
            }
        }
        ControlFlow::Continue(())
    }

    /// Records how a component's turn ended; returns why the run must stop
    /// handing out components, if it must.
    pub(super) fn settle(
        &mut self,
        name: &str,
        step: Step,
        took: Duration,
        scheduler: &mut Scheduler,
    ) -> Option<Stop> {
        if !matches!(step, Step::Unchanged) {
            self.announce_quiet_start(name);
        }
        let outcome = match &step {
            Step::Done => match self.verb {
                Verb::Deploy => Outcome::Deployed,
                Verb::Undeploy => Outcome::Undeployed,
            },
            Step::Unchanged => Outcome::Unchanged,
            Step::AwaitReady(_) => Outcome::NotRun(None),
            Step::Skipped(why) => Outcome::Skipped(why.clone()),
            Step::Interrupted(_) => Outcome::Interrupted,
            Step::Fatal(error) => Outcome::Failed(error.to_string()),
            Step::Failed(_) if self.interrupt_signal().is_some() => Outcome::Interrupted,
            Step::Failed(reason) => Outcome::Failed(reason.clone()),
        };
        self.record_outcome(name, &outcome, took);
        match step {
            Step::Done | Step::Unchanged | Step::AwaitReady(_) => None,
            Step::Skipped(why) => {
                if !self.parallel() {
                    (self.host.log)(&format!("hub: {name} skipped: {why}"));
                }
                self.tally.skipped.push(name.to_string());
                None
            }
            Step::Interrupted(signal) => Some(Stop::Interrupted(Some(name.to_string()), signal)),
            Step::Fatal(error) => Some(Stop::Fatal(error)),
            Step::Failed(_) if outcome == Outcome::Interrupted => {
                let signal = self.interrupt_signal().unwrap_or(libc::SIGINT);
                Some(Stop::Interrupted(Some(name.to_string()), signal))
            }
            Step::Failed(reason) => self.after_failure(name, &reason, scheduler),
        }
    }

    /// Puts a component's outcome in the summary and tells the console.
    pub(super) fn record_outcome(&mut self, name: &str, outcome: &Outcome, took: Duration) {
        self.summary.push(name, outcome.clone(), took);
        crate::trace::component_end(name, outcome);
        let outputs = self.known.output_names(self.position(name));
        let started = self.tally.started_at.remove(name).unwrap_or_default();
        let ended = self.clock.now();
        if let Some(entry) = self.summary.entry_mut(name) {
            entry.started = started;
            entry.ended = ended;
            entry.outputs = outputs;
            entry.attempt = self
                .tally
                .attempts
                .get(name)
                // A failure's reason says the attempt already.
                .filter(|a| a.made > 1 && !matches!(outcome, Outcome::Failed(_)))
                .map(|a| (a.made, a.allowed));
        }
        match (self.host.progress, self.parallel()) {
            (Some(progress), _) => progress.ended(name, outcome, took),
            (None, true) => (self.host.log)(&finish_line(name, outcome, took)),
            (None, false) => {}
        }
    }

    pub(super) fn announce_start(&mut self, name: &str, index: usize, total: usize) {
        self.tally
            .started_at
            .insert(name.to_string(), self.clock.now());
        if let Some(progress) = self.host.progress {
            progress.started(name);
        }
        let line = format!("hub: {} {name} ({index}/{total})", self.verb.as_str());
        // A component the plan leaves unchanged shows as such in the
        // summary; its start is said only if it runs after all.
        match self.execution(name).action == Action::NoOp && self.verb == Verb::Deploy {
            true => {
                self.tally.quiet_starts.insert(name.to_string(), line);
            }
            false => (self.host.log)(&line),
        }
        if self.options.running.why {
            let waits: Vec<String> = hub_plan::plan::waits_of(&self.setup.plan, name)
                .iter()
                .map(ToString::to_string)
                .collect();
            if !waits.is_empty() {
                (self.host.log)(&format!("hub: {name} waited for {}", waits.join("; ")));
            }
        }
    }

    /// The start line of a component the plan left unchanged, now that
    /// it does something after all.
    pub(super) fn announce_quiet_start(&mut self, name: &str) {
        if let Some(line) = self.tally.quiet_starts.remove(name) {
            (self.host.log)(&line);
        }
    }

    /// Prints the warnings not printed yet, each once, as `warning: …`.
    pub(super) fn show_warnings(&mut self) {
        let fresh: Vec<&hub_manifest::diag::Warning> =
            self.warnings.iter().skip(self.warnings_shown).collect();
        let lines: Vec<String> = grouped_by_file(fresh)
            .into_iter()
            .map(|warning| format!("warning: {warning}"))
            .collect();
        self.warnings_shown += lines.len();
        for line in lines {
            (self.host.log)(&line);
        }
    }

    /// A plain line every [`HEARTBEAT`] while components run.
    pub(super) fn heartbeat(&self, running: &IndexMap<String, Instant>) {
        let list: Vec<String> = running
            .iter()
            .map(|(name, since)| format!("{name} ({}s)", since.elapsed().as_secs()))
            .collect();
        (self.host.log)(&format!("hub: running: {}", list.join(", ")));
    }

    /// Whether components may run at once (`-j` above 1).
    pub(super) fn parallel(&self) -> bool {
        self.setup.parallel
    }

    pub(super) fn not_run(&mut self, scheduler: &Scheduler, why: Option<String>) {
        for name in scheduler.pending() {
            if let (true, Some(why)) = (self.options.running.why, &why) {
                (self.host.log)(&format!("hub: {name}: not run: {why}"));
            }
            self.summary
                .push(&name, Outcome::NotRun(why.clone()), Duration::ZERO);
        }
    }

    /// Why the components still pending when the run ended did not run.
    fn why_not_run(&self, stop: Option<&Stop>) -> Option<String> {
        let after = match self.verb {
            Verb::Deploy => "deploy",
            Verb::Undeploy => "undeploy",
        };
        match stop {
            Some(Stop::Interrupted(..)) => Some("the run was interrupted before it".into()),
            Some(Stop::Fatal(_)) => Some("the run stopped: the state could not be written".into()),
            Some(Stop::Failed(_) | Stop::Draining) => {
                let (first, _) = self.tally.mandatory_failures.first()?;
                Some(format!(
                    "the run stopped when `{first}` failed to {after} (`--fail-fast`)"
                ))
            }
            None => None,
        }
    }

    /// The first mandatory failure, as the error a run ends with when it
    /// stopped there.
    fn first_failure(&self) -> Option<EngineError> {
        let (component, reason) = self.tally.mandatory_failures.first()?;
        Some(EngineError::ComponentFailed {
            component: component.clone(),
            reason: reason.clone(),
            fix: self.tally.fixes.get(component).cloned(),
        })
    }

    pub(super) fn interrupt_signal(&self) -> Option<i32> {
        self.host
            .interrupts
            .requested()
            .then(|| self.host.interrupts.last_signal().unwrap_or(libc::SIGINT))
    }

    /// A failed component. After a mandatory failure what depends on it,
    /// directly or not, is cancelled whatever `-j` is (a component of a
    /// written `lifecycle.order` without `depends` runs after every one
    /// before it, so in such a stack that is the rest of the run, as in the
    /// Hub CLI), and the run fails once the independent components
    /// finished (§9.2); with `--fail-fast` nothing new starts, and what is
    /// running finishes. Optional ones and `--force` let the run go on.
    pub(super) fn after_failure(
        &mut self,
        name: &str,
        reason: &str,
        scheduler: &mut Scheduler,
    ) -> Option<Stop> {
        self.tally.failed.push(name.to_string());
        let optional = self.setup.plan.is_optional(name)
            && !self.tally.hook_failures.iter().any(|h| h == name);
        let goes_on = optional || self.options.force;
        // After an optional failure (or with `--force`) each dependent
        // fails at its turn (§6.2), whatever `-j` is: a mandatory one then
        // fails the run, and cancels what depends on it in turn.
        if !goes_on {
            let why = match self.verb {
                Verb::Deploy => format!("upstream `{name}` failed"),
                Verb::Undeploy => format!("`{name}`, which depends on it, failed to undeploy"),
            };
            for cancelled in scheduler.cancel_after(name) {
                if self.options.running.why {
                    (self.host.log)(&format!("hub: {cancelled}: cancelled: {why}"));
                }
                let why = why.clone();
                self.record_outcome(&cancelled, &Outcome::Cancelled(why), Duration::ZERO);
                self.tally.cancelled.push(cancelled);
            }
        }
        if goes_on {
            let which = if optional {
                "optional component"
            } else {
                "component (--force)"
            };
            self.warnings
                .warn(None, format!("{which} `{name}` failed: {reason}"));
            return None;
        }
        self.tally
            .mandatory_failures
            .push((name.to_string(), reason.to_string()));
        match (self.options.running.fail_fast, self.parallel()) {
            (false, _) => None,
            (true, true) => Some(Stop::Draining),
            (true, false) => Some(Stop::Failed(EngineError::ComponentFailed {
                component: name.to_string(),
                reason: reason.to_string(),
                fix: self.tally.fixes.get(name).cloned(),
            })),
        }
    }

    /// The error of a parallel run in which mandatory components failed.
    pub(super) fn deferred_failure(&self) -> Option<EngineError> {
        match &self.tally.mandatory_failures[..] {
            [] => None,
            // One at a time, a failure that cancelled what comes after it
            // reads as the Hub CLI's: the component failed, resume there.
            [(component, reason)] if self.tally.cancelled.is_empty() || !self.parallel() => {
                Some(EngineError::ComponentFailed {
                    component: component.clone(),
                    reason: reason.clone(),
                    fix: self.tally.fixes.get(component).cloned(),
                })
            }
            failures => Some(EngineError::Incomplete {
                failed: failures.to_vec(),
                cancelled: self.tally.cancelled.clone(),
                verb: self.verb.as_str(),
            }),
        }
    }

    /// The run's operation ends as `error`, its log saying why (the
    /// stack's status stays what the components' records make it); the
    /// state is written by [`Run::finish`].
    pub(super) fn record_fatal(&mut self, error: &EngineError) {
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.ledger.state.as_mut(), self.ledger.operation) {
            state.finish_operation(op, OperationStatus::Error, &now);
            state.append_log(op, &format!("the run stopped: {error}\n"), &now);
        }
    }

    /// Ends a run after a mandatory failure: the stack is `incomplete`.
    pub(super) fn stop_failed(&mut self, error: EngineError) -> Result<(), EngineError> {
        self.tally.stopped = true;
        let now = self.clock.now();
        let names: Vec<String> = self
            .tally
            .mandatory_failures
            .iter()
            .map(|(name, _)| format!("`{name}`"))
            .collect();
        let message = match names.len() {
            1 => format!("component {} failed", names[0]),
            _ => format!("components {} failed", names.join(", ")),
        };
        if let (Some(state), Some(op)) = (self.ledger.state.as_mut(), self.ledger.operation) {
            state.set_status(StackStatus::Incomplete, &message, &now);
            state.finish_operation(op, OperationStatus::Error, &now);
        }
        self.save()?;
        Err(error)
    }

    pub(super) fn stop_interrupted(
        &mut self,
        component: Option<&str>,
        signal: i32,
    ) -> Result<(), EngineError> {
        self.tally.stopped = true;
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.ledger.state.as_mut(), self.ledger.operation) {
            state.set_status(StackStatus::Incomplete, "interrupted", &now);
            state.finish_operation(op, OperationStatus::Error, &now);
        }
        self.save()?;
        Err(EngineError::Interrupted {
            component: component.map(String::from),
            signal,
        })
    }

    /// The end of a run that was not stopped: stack outputs, status,
    /// operation `success`.
    pub(super) fn finish(&mut self) -> Result<(), EngineError> {
        let now = self.clock.now();
        let stopped = self.tally.stopped;
        let final_outputs =
            !self.options.selection.is_partial() && self.options.selection.limit.is_none();
        let is_optional = |name: &str| self.setup.plan.is_optional(name);
        let Some(state) = self.ledger.state.as_mut() else {
            return Ok(());
        };
        self.summary.operation = state
            .operations
            .last()
            .map(|o| o.id.clone())
            .unwrap_or_default();
        let head = (self.ledger.quiet && !stopped).then(|| quiet::Head::of(state));
        if self.verb == Verb::Deploy {
            refresh_stack_outputs(state, &self.known.outputs(), final_outputs);
            state.stack_outputs = stack_outputs(
                &self.stack.elaborated.stack.outputs,
                &state.captured_outputs,
                &self.setup.locked,
                &state.stack_outputs,
                true,
                self.warnings,
            );
        }
        state.provides = state::provides_for_state(&self.known.provides);
        if let (Some(op), true) = (self.ledger.operation, self.tally.failure_logs.len() > 1) {
            let logs: String = self
                .tally
                .failure_logs
                .values()
                .map(String::as_str)
                .collect();
            state.set_log(op, &logs, &now);
        }
        if !stopped {
            let (status, message) = state::stack_status(
                state,
                &self.setup.plan.order,
                &is_optional,
                &self.tally.skipped,
            );
            state.set_status(status, &message, &now);
            if let Some(op) = self.ledger.operation {
                state.finish_operation(op, OperationStatus::Success, &now);
            }
        }
        self.summary.stack_status = state.status.clone();
        self.summary.stack_components = self.setup.plan.order.len();
        if self.verb == Verb::Undeploy && state.status == StackStatus::Undeployed.as_str() {
            // Nothing they describe is left.
            state.stack_outputs.clear();
        }
        let redactor = hub_manifest::redact::Redactor::new(self.options.reveal);
        // After an undeploy the recorded outputs describe nothing live.
        let shown_outputs = if self.verb == Verb::Deploy {
            &state.stack_outputs[..]
        } else {
            &[]
        };
        self.summary.outputs = shown_outputs
            .iter()
            .map(|o| {
                let value = substitution_text(Some(&o.value));
                let shown = redactor.text(&o.name, &o.kind, false, &value);
                (o.name.clone(), self.masker.mask(&shown).into_owned())
            })
            .collect();
        // A quiet run (see [`quiet`]) whose end changed nothing either.
        let state = self.ledger.state.as_ref();
        match head
            .zip(state)
            .is_some_and(|(head, state)| head.same_as(state))
        {
            true => Ok(()),
            false => self.write_state(Changed::Last),
        }
    }

    /// The checkpoints of the components about to start, in one write;
    /// their processes wait for the flush it gives.
    pub(super) fn write_checkpoints(&mut self) -> Result<state::Flush, EngineError> {
        if self.ledger.unsaved_checkpoints.is_empty() {
            return Ok(state::Flush::default());
        }
        self.write_state(Changed::Checkpoints)?;
        Ok(self.ledger.flush.take().unwrap_or_default())
    }

    /// Writes the state, when there is one (never on a dry run).
    pub(super) fn save(&mut self) -> Result<(), EngineError> {
        self.write_state(Changed::Any)
    }

    /// [`Run::save`] when, since the previous save, no component entry
    /// changed but `name`'s (the others are then not compared with what
    /// was last written).
    pub(super) fn save_component(&mut self, name: &str) -> Result<(), EngineError> {
        self.write_state(Changed::Component(name))
    }

    pub(super) fn write_state(&mut self, changed: Changed<'_>) -> Result<(), EngineError> {
        let (Some(state), Some(locations), false) = (
            self.ledger.state.as_mut(),
            &self.ledger.locations,
            self.options.dry,
        ) else {
            return Ok(());
        };
        self.ledger.quiet = false;
        state.touch(&self.clock.now());
        let span = crate::trace::span("state write");
        let writer = match &mut self.ledger.writer {
            Some(writer) => writer,
            None => {
                let options = self.options.running.write;
                let read = self
                    .ledger
                    .read_path
                    .as_deref()
                    .zip(self.ledger.read_serial);
                let writer = state::StateWriter::open_locked(locations, options, read)?;
                self.ledger.writer.insert(writer)
            }
        };
        let unsaved = &mut self.ledger.unsaved_checkpoints;
        let folds = writer.folds();
        let written = match changed {
            Changed::Any => writer.write(state),
            Changed::Last => writer.write_last(state),
            Changed::Component(name) if unsaved.is_empty() => writer.write_component(state, name),
            Changed::Component(name) => {
                unsaved.push(name.to_string());
                let written = writer.write_components(state, unsaved);
                unsaved.pop();
                written
            }
            Changed::Checkpoints => writer
                .write_starts(state, unsaved)
                .map(|flush| self.ledger.flush = Some(flush)),
        };
        if written.is_ok() {
            unsaved.clear();
        }
        crate::trace::state_written(span, folds, writer.folds());
        // §11.5: with several locations, one that cannot be written is a
        // warning while another was written.
        let failures = writer.take_failures();
        if !failures.is_empty() {
            let reached: Vec<String> = writer
                .written()
                .map(|p| format!("`{}`", p.display()))
                .collect();
            for failure in failures {
                let message = match reached.is_empty() {
                    true => failure.to_string(),
                    false => format!("{failure}; the state was written to {}", reached.join(", ")),
                };
                self.warnings.warn(None, message);
            }
        }
        written?;
        Ok(())
    }
}

/// `warnings` with those about one file together, in the order of the
/// file's first warning and then by line; warnings without a file keep
/// their order, after the others. The sink has already removed repeats.
fn grouped_by_file(
    warnings: Vec<&hub_manifest::diag::Warning>,
) -> Vec<&hub_manifest::diag::Warning> {
    let mut files: Vec<&std::path::Path> = Vec::new();
    for warning in &warnings {
        if let Some(location) = &warning.location {
            if !files.contains(&&*location.file) {
                files.push(&location.file);
            }
        }
    }
    let mut keyed: Vec<(usize, usize, usize, &hub_manifest::diag::Warning)> = warnings
        .into_iter()
        .enumerate()
        .map(|(raised, warning)| match &warning.location {
            Some(location) => {
                let file = files
                    .iter()
                    .position(|f| *f == &*location.file)
                    .unwrap_or(files.len());
                (file, location.line.unwrap_or(0), raised, warning)
            }
            None => (files.len(), 0, raised, warning),
        })
        .collect();
    keyed.sort_by_key(|&(file, line, raised, _)| (file, line, raised));
    keyed
        .into_iter()
        .map(|(_, _, _, warning)| warning)
        .collect()
}

#[cfg(test)]
mod grouping_tests {
    use super::grouped_by_file;
    use hub_manifest::diag::{Location, Warning};
    use std::path::PathBuf;

    fn at(file: &str, line: usize, message: &str) -> Warning {
        Warning {
            location: Some(Location {
                file: PathBuf::from(file).into(),
                line: Some(line),
                column: None,
            }),
            message: message.into(),
            near_typo: false,
            origin: Default::default(),
            topic: Default::default(),
        }
    }

    #[test]
    fn warnings_about_one_file_print_together_by_line() {
        let unplaced = Warning {
            location: None,
            message: "no cloud given".into(),
            near_typo: false,
            origin: Default::default(),
            topic: Default::default(),
        };
        let raised = [
            at("hub.yaml", 30, "c"),
            unplaced,
            at("params.yaml", 4, "p"),
            at("hub.yaml", 9, "a"),
        ];
        let shown: Vec<String> = grouped_by_file(raised.iter().collect())
            .into_iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            shown,
            [
                "hub.yaml:9: a",
                "hub.yaml:30: c",
                "params.yaml:4: p",
                "no cloud given"
            ]
        );
    }
}
