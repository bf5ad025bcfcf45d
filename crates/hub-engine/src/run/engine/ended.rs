//! A component's end: its outputs captured and recorded (or preloaded
//! from the state), and the run told it succeeded, failed or was
//! interrupted.

use super::{output_in, record_phase, Run, Step};
use crate::child::capture::{self, RawOutputs};
use crate::run::error::EngineError;
use crate::run::outputs::stack_outputs;
use crate::run::ready;
use hub_manifest::Manifest;
use hub_params::format::substitution_text;
use hub_params::{self as params, expand_outputs, ExpandedParam, OutputsContext};
use hub_plan::decide::records::{component_meta, component_parameters, raw_outputs};
use hub_plan::Verb;
use hub_state::{self as state, ComponentRun, ComponentStatus, OperationStatus, StackStatus};
use std::path::Path;
use yaml_serde::Value;

impl<'a> Run<'a> {
    /// §6.11–6.15 for a deploy that exited 0: capture, provides, state.
    pub(super) fn deployed(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        stdout: &str,
        pad: &[u8],
    ) -> Step {
        let printed = capture::component_outputs(name, stdout, dir, pad, self.warnings);
        let raw = &printed.raw;
        let (captured, problems) = self.capture(name, manifest, params, dir, &printed);
        self.mask_secret_outputs(&captured);
        self.mask_secret_raw_outputs(manifest, raw);
        let dynamic = capture::dynamic_provides(raw);
        let capabilities = manifest.provides.iter().chain(&dynamic).cloned().collect();
        let after = self.record_produced(name, captured, capabilities);
        let now = self.clock.now();
        let provides = state::provides_for_state(&self.known.provides);
        let stack_outputs_declared = &self.stack.elaborated.stack.outputs;
        let conditions = &manifest.lifecycle.ready_conditions;
        // The whole list only where it is looked through.
        let snapshot = match stack_outputs_declared.is_empty() && conditions.is_empty() {
            true => Vec::new(),
            false => self.known.all(&after),
        };
        let at = self.setup.positions.get(name).copied();
        if let Some(state) = self.ledger.state.as_mut() {
            let run = ComponentRun {
                meta: component_meta(manifest),
                parameters: component_parameters(params),
                raw_outputs: raw_outputs(raw),
                snapshot: Vec::new(),
            };
            let running = state
                .components
                .get(name)
                .map(|e| e.captured_outputs.clone());
            let known = &mut self.known;
            let shared = |base: &state::Snapshot| known.snapshot_on(&after, running.as_ref(), base);
            state.record_component_run_at(name, at, run, shared, &now);
            state.provides = provides;
            state.stack_outputs = stack_outputs(
                stack_outputs_declared,
                &snapshot,
                &self.setup.locked,
                &state.stack_outputs,
                false,
                self.warnings,
            );
        }
        if !problems.is_empty() {
            return self.fail(name, &problems.join("\n"), None);
        }
        if !conditions.is_empty() {
            let lookup = |key: &str| {
                params
                    .iter()
                    .find(|p| p.name == key)
                    .map(|p| p.value.as_ref())
                    .or_else(|| output_in(&snapshot, key).map(Some))
                    .map(substitution_text)
            };
            let resolved = match ready::resolve(conditions, &lookup) {
                Ok(resolved) => resolved,
                Err(reason) => return self.fail(name, &reason, None),
            };
            if self.parallel() {
                return Step::AwaitReady(resolved);
            }
            if let Err(reason) = ready::wait_resolved(&resolved, self.host.interrupts) {
                return self.fail(name, &reason, None);
            }
        }
        self.succeeded(name)
    }

    /// The latest output named `comp:name`, or plain `name`.
    pub(super) fn output_value(&self, key: &str) -> Option<Value> {
        output_in(&self.known.outputs(), key).cloned()
    }

    /// §2 step 17: the stack's ready conditions after the last component.
    pub(super) fn stack_ready(&mut self) -> Result<(), EngineError> {
        let conditions = &self.stack.elaborated.stack.lifecycle.ready_conditions;
        if self.verb != Verb::Deploy || conditions.is_empty() {
            return Ok(());
        }
        let lookup = |key: &str| {
            self.output_value(key)
                .or_else(|| self.setup.locked.value(key).cloned())
                .map(|v| substitution_text(Some(&v)))
        };
        let Err(reason) = ready::wait_ready(conditions, &lookup, self.host.interrupts) else {
            return Ok(());
        };
        if self.options.force {
            self.warnings
                .warn(None, format!("the stack is not ready (--force): {reason}"));
            return Ok(());
        }
        self.tally.stopped = true;
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.ledger.state.as_mut(), self.ledger.operation) {
            state.set_status(StackStatus::Incomplete, &reason, &now);
            state.finish_operation(op, OperationStatus::Error, &now);
        }
        self.save()?;
        Err(EngineError::NotReady { reason })
    }

    /// The declared outputs of a component that ran, and the problems.
    pub(super) fn capture(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        outputs: &capture::Printed,
    ) -> (Vec<state::CapturedOutput>, Vec<String>) {
        let raw: &RawOutputs = &outputs.raw;
        let (decoded, errors) =
            capture::decode_printed(&manifest.outputs, outputs, dir, self.warnings);
        let mut problems: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        let printed: Vec<String> = raw.keys().cloned().collect();
        let mut context = OutputsContext {
            source: None,
            printed: &printed,
        };
        // Pointing at the declarations reads the elaborated file's text
        // (kept deflated during the run): done again only on a problem.
        let expanded = match expand_outputs(name, params, &manifest.outputs, &decoded, context)
            .or_else(|_| {
                context.source = self.stack.declarations(name);
                expand_outputs(name, params, &manifest.outputs, &decoded, context)
            }) {
            Ok(expanded) => expanded,
            Err(error) => {
                if let Some(fix) = error.hint() {
                    self.tally.fixes.insert(name.to_string(), fix);
                }
                problems.push(error.to_string());
                decoded
                    .iter()
                    .map(|(output, value)| params::ExpandedOutput {
                        name: output.clone(),
                        value: Some(value.clone()),
                        kind: String::new(),
                        secret: false,
                    })
                    .collect()
            }
        };
        let captured = expanded
            .into_iter()
            .map(|output| {
                let declared = manifest.outputs.iter().find(|o| o.name == output.name);
                state::CapturedOutput {
                    component: name.to_string(),
                    component_origin: manifest.meta.origin.clone(),
                    component_kind: manifest.meta.kind.clone(),
                    name: output.name,
                    value: output.value.unwrap_or(Value::Null),
                    brief: declared.map(|d| d.brief.clone()).unwrap_or_default(),
                    kind: match declared {
                        Some(d) if outputs.reads_secret(d) => "secret".into(),
                        Some(d) => d.kind.clone(),
                        None => String::new(),
                    },
                }
            })
            .collect();
        (captured, problems)
    }

    pub(super) fn undeployed(&mut self, name: &str) -> Step {
        self.known.undeployed(self.position(name), name);
        let provides = state::provides_for_state(&self.known.provides);
        if let Some(state) = self.ledger.state.as_mut() {
            state.provides = provides;
        }
        self.succeeded(name)
    }

    /// §6.15: `deployed`/`undeployed`, phase `success`, written.
    pub(super) fn succeeded(&mut self, name: &str) -> Step {
        if self.verb == Verb::Deploy {
            self.record_fingerprint(name);
        }
        let now = self.clock.now();
        let status = match self.verb {
            Verb::Deploy => ComponentStatus::Deployed,
            Verb::Undeploy => ComponentStatus::Undeployed,
        };
        let positions = self.parallel().then_some(&self.setup.positions);
        let message = self
            .tally
            .attempts
            .get(name)
            .filter(|a| a.made > 1)
            .map(|a| a.record())
            .unwrap_or_default();
        if let Some(state) = self.ledger.state.as_mut() {
            state.set_component_status(name, status, &message, &now);
            if let Some(op) = self.ledger.operation {
                record_phase(state, op, name, OperationStatus::Success, &now, positions);
            }
        }
        match self.save_component(name) {
            Ok(()) => Step::Done,
            Err(error) => Step::Fatal(error),
        }
    }

    /// §9.2: the component's entry says `error` with the reason; the
    /// operation log gets the reason and the (masked) output.
    pub(super) fn fail(&mut self, name: &str, reason: &str, stdout: Option<&str>) -> Step {
        let now = self.clock.now();
        let mut log = format!("{name}: {reason}\n");
        if let Some(stdout) = stdout.filter(|s| !s.is_empty()) {
            log.push_str("--- stdout:\n");
            log.push_str(&self.masker.mask(stdout));
            if !log.ends_with('\n') {
                log.push('\n');
            }
        }
        let positions = self.parallel().then_some(&self.setup.positions);
        if let Some(state) = self.ledger.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, reason, &now);
            if let Some(op) = self.ledger.operation {
                record_phase(state, op, name, OperationStatus::Error, &now, positions);
                // Appended as the failures come (a checkpoint records only
                // what was appended); a parallel run puts them in the run's
                // order when it ends.
                state.append_log(op, &log, &now);
                if self.setup.parallel {
                    let position = self
                        .setup
                        .positions
                        .get(name)
                        .copied()
                        .unwrap_or(usize::MAX);
                    self.tally.failure_logs.insert(position, log);
                }
            }
        }
        if let Err(error) = self.save_component(name) {
            return Step::Fatal(error);
        }
        Step::Failed(reason.to_string())
    }

    pub(super) fn interrupted(&mut self, name: &str, signal: i32) -> Step {
        let now = self.clock.now();
        let message = format!(
            "interrupted by {}",
            crate::child::interrupt::signal_name(signal)
        );
        let positions = self.parallel().then_some(&self.setup.positions);
        if let Some(state) = self.ledger.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, &message, &now);
            if let Some(op) = self.ledger.operation {
                record_phase(state, op, name, OperationStatus::Error, &now, positions);
            }
        }
        Step::Interrupted(signal)
    }

    /// §4.3: the outputs a component sees when the run starts at it (one
    /// at a time: taken when it starts).
    pub(super) fn preload(&mut self, name: &str) {
        if self.parallel() {
            // Taken when the run started: what a component sees must not
            // depend on which others happened to finish first.
            return;
        }
        if let Some(outputs) = self.preloaded_outputs(name) {
            let position = self.position(name);
            self.known.preload(name, position, outputs);
        }
    }

    pub(super) fn preloaded_outputs(&mut self, name: &str) -> Option<Vec<state::CapturedOutput>> {
        let state = self.ledger.state.as_ref()?;
        let order = &self.setup.plan.order;
        let mut outputs = match self.verb {
            Verb::Deploy => state.outputs_before(order, name).to_vec(),
            Verb::Undeploy => state.outputs_at(order, name).to_vec(),
        };
        state.merge_dependency_outputs(&mut outputs, self.setup.plan.depends(name), self.warnings);
        Some(outputs)
    }

    /// A parallel run takes every preload when it starts.
    pub(super) fn preload_all(&mut self) {
        if !self.parallel() {
            return;
        }
        let names: Vec<String> = self
            .setup
            .plan
            .selected
            .iter()
            .filter(|n| {
                self.setup.plan.per_component || self.setup.plan.offset.as_deref() == Some(n)
            })
            .cloned()
            .collect();
        for name in names {
            if let Some(outputs) = self.preloaded_outputs(&name) {
                let position = self.position(&name);
                self.known.preload(&name, position, outputs);
            }
        }
    }
}
