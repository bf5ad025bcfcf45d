//! One component's pipeline (§6): what the plan says, its parameters,
//! the checkpoint, its process, its outputs and its end.

use super::*;
use crate::child::log_marks::RunMarks;

impl<'a> Run<'a> {
    // ---- one component -------------------------------------------------

    /// Everything before a component's process starts; a component that
    /// needs no process (skipped, failed early, bare) ends here.
    pub(super) fn component(&mut self, name: &str) -> Prepared<'a> {
        match self.prepare_component(name) {
            Ok(job) => Prepared::Run(Box::new(job)),
            Err(step) => Prepared::Ended(step),
        }
    }

    pub(super) fn prepare_component(&mut self, name: &str) -> Result<Job<'a>, Step> {
        let (Some(reference), Some(manifest)) = (
            self.stack.reference(name),
            self.stack.elaborated.component(name),
        ) else {
            return Err(Step::Failed(format!("`{name}` has no component document")));
        };
        self.trace_planned(name);
        crate::trace::component_start(name, self.planned(name).map(|p| p.action.as_str()));
        if self.plan.per_component || self.plan.offset.as_deref() == Some(name) {
            self.preload(name);
        }
        if self.verb == Verb::Deploy {
            let failed: Vec<&String> = reference
                .depends
                .iter()
                .filter(|d| self.failed.contains(d))
                .collect();
            if !failed.is_empty() {
                let list = failed
                    .iter()
                    .map(|d| format!("`{d}`"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let reason = format!("it depends on {list}, which failed in this run");
                return Err(self.fail(name, &reason, None));
            }
        }
        let visible = self.visible_outputs(name);
        let provides = self.known.provides_for(&visible);
        let expanded = self.expand(name, &reference.depends, manifest, &visible, &provides);
        if let Some(why) = self.condition_skip(name, expanded.as_ref().ok()) {
            return Err(self.skip(name, why));
        }
        let params = match expanded {
            Ok(params) => params,
            Err(error) => {
                let reason = match self.failed_upstream(&error) {
                    Some(read) => format!("{read}:\n{error}"),
                    None => error.to_string(),
                };
                return Err(self.fail(name, &reason, None));
            }
        };
        self.note_last_successful_reads(name, &params);
        let unmet =
            schedule::unmet_requirements(&manifest.requires, name, &provides, &self.plan.tuning);
        if !unmet.optional.is_empty() {
            return Err(self.skip(
                name,
                format!(
                    "optional requirement {} not provided",
                    quoted(&unmet.optional)
                ),
            ));
        }
        if !unmet.hard.is_empty() {
            let reason = format!(
                "requirement {} not provided (provided: {})",
                quoted(&unmet.hard),
                or_none(&provides_text(&provides))
            );
            match self.verb {
                Verb::Deploy => return Err(self.fail(name, &reason, None)),
                Verb::Undeploy => self
                    .warnings
                    .warn(None, format!("component `{name}`: {reason}")),
            }
        }
        for param in params.iter().filter(|p| p.secret) {
            self.masker.add(&substitution_text(param.value.as_ref()));
        }
        let dir = self
            .component_dir(name)
            .map_err(|error| self.fail(name, &error.to_string(), None))?;
        if let Some(step) = self.unchanged(name, manifest, &reference.depends, &params, &visible) {
            return Err(step);
        }
        self.announce_quiet_start(name);
        self.undeploy_before_replace(name)?;
        let ran_from = (dir.as_path(), reference.depends.as_slice());
        if let Err(error) = self.checkpoint(name, manifest, &params, visible, ran_from) {
            return Err(Step::Fatal(error));
        }
        self.invocation(name, manifest, params, dir)
    }

    /// §6.3 with the outputs known now.
    pub(super) fn expand(
        &mut self,
        name: &str,
        depends: &[String],
        manifest: &Manifest,
        visible: &View,
        provides: &IndexMap<String, Vec<String>>,
    ) -> Result<Vec<ExpandedParam>, params::ParamsError> {
        let outputs: Vec<params::CapturedOutput> = match self.plan.reads(name) {
            Some(reads) => self
                .known
                .read(visible, reads)
                .into_iter()
                .map(to_scope_output)
                .collect(),
            None => scope_outputs(&self.known.all(visible), None),
        };
        let mut scope = ComponentScope {
            name,
            depends,
            manifest,
            outputs: &outputs,
            provides: provides_text(provides),
            source: None,
        };
        // Pointing at declarations scans the whole elaborated file: that is
        // done again only when there is something to report.
        let mut quiet = Warnings::default();
        match expand_component(&self.locked, &scope, &mut quiet) {
            Ok(params) if quiet.is_empty() => Ok(params),
            _ => {
                scope.source = self.stack.declarations(name);
                expand_component(&self.locked, &scope, self.warnings)
            }
        }
    }

    /// §6.4: the component's parameter conditions.
    pub(super) fn condition_skip(
        &mut self,
        name: &str,
        params: Option<&Vec<ExpandedParam>>,
    ) -> Option<String> {
        let outcome = schedule::component_conditions(
            &self.plan.tuning,
            name,
            params.map(Vec::as_slice),
            &self.locked,
        );
        if let Some(warning) = outcome.wildcard_warning() {
            self.warnings.warn(None, warning);
        }
        outcome.skip_reason()
    }

    /// A skipped component leaves no entry that never ran (§6.4, §6.6).
    pub(super) fn skip(&mut self, name: &str, why: String) -> Step {
        if let Some(state) = self.state.as_mut() {
            if state
                .components
                .get(name)
                .is_some_and(|e| e.status.is_empty())
            {
                state.components.shift_remove(name);
                self.quiet = false;
            }
        }
        Step::Skipped(why)
    }

    /// §6.7: the state says what is running before it starts.
    pub(super) fn checkpoint(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        visible: View,
        (dir, depends): (&Path, &[String]),
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        let (component_status, stack_status) = match self.verb {
            Verb::Deploy => (ComponentStatus::Deploying, StackStatus::Deploying),
            Verb::Undeploy => (ComponentStatus::Undeploying, StackStatus::Undeploying),
        };
        let verb = self.verb;
        let parallel = self.parallel();
        let positions = parallel.then_some(&self.positions);
        let at = self.positions.get(name).copied();
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        let undo = StartUndo::before(state, name, self.operation);
        if verb == Verb::Deploy {
            let run = ComponentRun {
                meta: component_meta(manifest),
                parameters: component_parameters(params),
                raw_outputs: Vec::new(),
                snapshot: Vec::new(),
            };
            let known = &mut self.known;
            let snapshot = |base: &state::Snapshot| known.snapshot(&visible, base);
            state.record_component_run_at(name, at, run, snapshot, &now);
            let entry = state.component_mut(name);
            entry.fingerprint = None;
            entry.dir = absolute(dir).display().to_string();
            entry.depends = depends.to_vec();
        }
        state.set_component_status(name, component_status, "", &now);
        state.set_status(stack_status, "", &now);
        if let Some(op) = self.operation {
            record_phase(
                state,
                op,
                name,
                OperationStatus::InProgress,
                &now,
                positions,
            );
        }
        if self.parallel() {
            // Written once for all the components that start together,
            // before any of them starts.
            self.unsaved_checkpoints.push(name.to_string());
            return Ok(());
        }
        let saved = self.save_component(name);
        if saved.is_err() {
            // The component does not start: the state must not say it did.
            if let Some(state) = self.state.as_mut() {
                undo.apply(state, name, self.operation);
            }
        }
        saved
    }

    /// Renders templates, builds the environment and finds the
    /// implementation; a bare component ends here.
    pub(super) fn invocation(
        &mut self,
        name: &str,
        manifest: &'a Manifest,
        params: Vec<ExpandedParam>,
        dir: PathBuf,
    ) -> Result<Job<'a>, Step> {
        if let Err(reason) = self.render_templates(name, manifest, &params, &dir) {
            return Err(self.fail(name, &reason, None));
        }
        let bytes = otp::pad_bytes(manifest.lifecycle.options.random.bytes);
        let pad = otp::random_pad(bytes);
        let random = otp::pad_to_env(&pad);
        let vars = ComponentVariables {
            component: name,
            params: &params,
            random: &random,
            component_dir: &dir,
            base_dir: &self.stack.base_dir,
        };
        let environment = env::component(&self.base_env, &vars, self.warnings);
        let environment = crate::trace::with_traceparent(name, environment);
        let bare = manifest.lifecycle.bare == "allow";
        let verb = self.options.implementation_verb(self.verb.as_str());
        let found = match manifest.templates.is_empty() {
            true => self.implementations.remove(name),
            false => None,
        };
        let implementation = match found.map_or_else(|| discover::discover(&dir, &verb, bare), Ok) {
            Ok(implementation) => implementation,
            Err(error) => return Err(self.fail(name, &error.to_string(), None)),
        };
        let environment = match implementation {
            Implementation::Terraform { .. } => {
                hub_plan::terraform::environment(environment, &params)
            }
            _ => environment,
        };
        let hooks = self.plan_hooks(name, &verb, &dir, &environment);
        let Some((program, args)) = implementation.command() else {
            let around = hooks::run_around(
                &hooks,
                None,
                self.timeouts.limit(name),
                &self.masker,
                self.host.sink,
                self.host.interrupts,
            );
            self.report_ignored_hooks(name, &around.ignored);
            return Err(match (around.pre, around.post) {
                (Err(stopped), _) | (_, Err(stopped)) => self.hook_stopped(name, stopped),
                _ => self.conclude(name, manifest, &params, &dir, "", &pad),
            });
        };
        // The system refuses an environment over its limits with an error
        // that names nothing; said here with the variable and its size.
        if let Err(too_large) =
            crate::plan::preflight::environment_fits(&environment, &program, &args)
        {
            self.fixes.insert(name.to_string(), too_large.hint());
            return Err(self.fail(name, &too_large.to_string(), None));
        }
        let invocation = Invocation {
            label: name.to_string(),
            program,
            args,
            cwd: dir.clone(),
            env: environment,
            log_file: self.log_file(name),
            timeout: None,
        };
        Ok(Job {
            invocation,
            limit: self.timeouts.limit(name),
            hooks,
            masker: self.component_masker(manifest),
            manifest,
            params,
            dir,
            pad,
            implementation: describe(&implementation),
            retry: self.retries.policy(name).cloned(),
            attempts: Default::default(),
        })
    }

    /// Records what a component's process (and its hooks) did.
    pub(super) fn ran(&mut self, name: &str, job: Box<Job<'a>>, around: hooks::Around) -> Step {
        self.report_ignored_hooks(name, &around.ignored);
        crate::trace::component_exit(name, &around.main);
        let attempt = job.attempts.suffix();
        if job.attempts.allowed > 1 {
            self.attempts.insert(name.to_string(), job.attempts.clone());
        }
        if let Err(stopped) = around.pre {
            return self.hook_stopped(name, stopped);
        }
        let stdout = match around.main {
            None => String::new(),
            Some(Err(error)) => {
                if let Some(fix) = error.hint().filter(|_| error.planted()) {
                    self.fixes.insert(name.to_string(), fix);
                }
                return self.fail(name, &error.to_string(), None);
            }
            Some(Ok(finished)) => match finished.exit {
                Exit::Code(0) => finished.stdout,
                Exit::Interrupted { signal } => return self.interrupted(name, signal),
                Exit::TimedOut => {
                    let Some(limit) = job.limit else {
                        let reason = format!("{} timed out", job.implementation);
                        return self.fail(name, &reason, Some(&finished.tail));
                    };
                    let reason = format!("{} {limit}", job.implementation);
                    self.fixes.insert(name.to_string(), limit.fix(name));
                    return self.fail(name, &reason, Some(&finished.tail));
                }
                exit => {
                    let reason = format!("{} {exit}{attempt}", job.implementation);
                    return self.fail(name, &reason, Some(&finished.tail));
                }
            },
        };
        if let Err(stopped) = around.post {
            return self.hook_stopped(name, stopped);
        }
        self.conclude(name, job.manifest, &job.params, &job.dir, &stdout, &job.pad)
    }

    /// The component's hooks that this verb triggers (§12.1).
    pub(super) fn plan_hooks(
        &mut self,
        name: &str,
        verb: &str,
        dir: &Path,
        environment: &[(String, String)],
    ) -> hooks::Planned {
        let Some(reference) = self.stack.reference(name) else {
            return hooks::Planned::default();
        };
        if reference.hooks.is_empty() {
            return hooks::Planned::default();
        }
        let context = hooks::Context {
            component: name,
            verb,
            component_dir: dir,
            stack_dir: &self.stack.base_dir,
            env: environment,
            log_file: self.log_file(name),
        };
        let (planned, warnings) = hooks::plan(&reference.hooks, &context);
        for warning in warnings {
            self.warnings.warn(None, warning);
        }
        planned
    }

    pub(super) fn report_ignored_hooks(&mut self, name: &str, ignored: &[String]) {
        for message in ignored {
            self.warnings
                .warn(None, format!("component `{name}`: {message}"));
        }
    }

    /// A hook failed (the component fails, optional or not) or was
    /// interrupted.
    pub(super) fn hook_stopped(&mut self, name: &str, stopped: hooks::Stopped) -> Step {
        match stopped {
            hooks::Stopped::Interrupted(signal) => self.interrupted(name, signal),
            hooks::Stopped::Failed(reason) => {
                self.hook_failures.push(name.to_string());
                self.fail(name, &reason, None)
            }
            hooks::Stopped::TimedOut(reason, limit) => {
                self.fixes.insert(name.to_string(), limit.fix(name));
                self.fail(name, &reason, None)
            }
        }
    }

    pub(super) fn conclude(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        stdout: &str,
        pad: &[u8],
    ) -> Step {
        match self.verb {
            Verb::Deploy => self.deployed(name, manifest, params, dir, stdout, pad),
            Verb::Undeploy => self.undeployed(name),
        }
    }

    pub(super) fn render_templates(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
    ) -> Result<(), String> {
        if manifest.templates.is_empty() {
            return Ok(());
        }
        crate::child::templates::render(dir, &manifest.templates, params, name, self.warnings)
            .map(|_| ())
            .map_err(|errors| errors.with_hints())
    }

    pub(super) fn component_dir(&self, name: &str) -> Result<PathBuf, EngineError> {
        let reference =
            self.stack
                .reference(name)
                .ok_or_else(|| EngineError::UnknownComponent {
                    component: name.to_string(),
                    available: self.plan.order.clone(),
                })?;
        Ok(self
            .stack
            .component_dir(reference, self.options.components_base_dir.as_deref())?)
    }

    /// Log files made ahead of the components, when the run keeps logs;
    /// not for `--changed`, whose components mostly do not run (and whose
    /// earlier deploy left their files).
    pub(super) fn logs_ahead(&self) -> Option<LogsAhead> {
        if self.options.changed {
            return None;
        }
        let folder = self.log_folder.as_ref()?;
        Some(LogsAhead::start(folder, &self.plan.selected))
    }

    /// The log file of `name`, given to a process that writes to it: the
    /// first time in a run, this run's mark is appended to it (see
    /// [`crate::child::log_marks`]).
    pub(super) fn log_file(&self, name: &str) -> Option<PathBuf> {
        let path = self
            .log_folder
            .as_ref()
            .map(|folder| folder.join(format!("{name}.log")))?;
        let operation = self.state.as_ref().and_then(|s| s.operations.last());
        if let Some(operation) = operation {
            let at = &self.summary.started;
            let verb = self.verb.as_str();
            let marks = self
                .log_marks
                .get_or_init(|| RunMarks::new(&operation.id, verb, at));
            marks.mark(name, &path);
        }
        Some(path)
    }

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
        let at = self.positions.get(name).copied();
        if let Some(state) = self.state.as_mut() {
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
                &self.locked,
                &state.stack_outputs,
                false,
                &mut Warnings::default(),
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
                .or_else(|| self.locked.value(key).cloned())
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
        self.stopped = true;
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
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
        let context = OutputsContext {
            source: self.stack.declarations(name),
            printed: &printed,
        };
        let expanded = match expand_outputs(name, params, &manifest.outputs, &decoded, context) {
            Ok(expanded) => expanded,
            Err(error) => {
                if let Some(fix) = error.hint() {
                    self.fixes.insert(name.to_string(), fix);
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
        if let Some(state) = self.state.as_mut() {
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
        let positions = self.parallel().then_some(&self.positions);
        let message = self
            .attempts
            .get(name)
            .filter(|a| a.made > 1)
            .map(|a| a.record())
            .unwrap_or_default();
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, status, &message, &now);
            if let Some(op) = self.operation {
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
        let positions = self.parallel().then_some(&self.positions);
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, reason, &now);
            if let Some(op) = self.operation {
                record_phase(state, op, name, OperationStatus::Error, &now, positions);
                // Appended as the failures come (a checkpoint records only
                // what was appended); a parallel run puts them in the run's
                // order when it ends.
                state.append_log(op, &log, &now);
                if self.parallel {
                    let position = self.positions.get(name).copied().unwrap_or(usize::MAX);
                    self.failure_logs.insert(position, log);
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
        let positions = self.parallel().then_some(&self.positions);
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, &message, &now);
            if let Some(op) = self.operation {
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
        let state = self.state.as_ref()?;
        let order = &self.plan.order;
        let mut outputs = match self.verb {
            Verb::Deploy => state.outputs_before(order, name).to_vec(),
            Verb::Undeploy => state.outputs_at(order, name).to_vec(),
        };
        state.merge_dependency_outputs(&mut outputs, self.plan.depends(name), self.warnings);
        Some(outputs)
    }

    /// A parallel run takes every preload when it starts.
    pub(super) fn preload_all(&mut self) {
        if !self.parallel() {
            return;
        }
        let names: Vec<String> = self
            .plan
            .selected
            .iter()
            .filter(|n| self.plan.per_component || self.plan.offset.as_deref() == Some(n))
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
