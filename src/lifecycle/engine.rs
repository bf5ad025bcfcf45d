//! A deploy or undeploy run (§2) and the pipeline of each component (§6).
//!
//! # A run
//!
//! 1. Structural checks and the plan (order, selection).
//! 2. The state's lock (`STATE.lock`) is taken for the whole run; the state
//!    is read (a damaged state is fatal, also on a full deploy, unless
//!    `--force`).
//! 3. Stack parameters are locked (the state fills `kind: user` ones and is
//!    merged in), the state is checked against the stack (§4.4), the
//!    provides map starts from the environment, the platform and the state.
//! 4. Every selected component's folder and implementation must exist.
//! 5. The operation is recorded `in-progress`; the scheduler hands out the
//!    components one at a time; the state is written (atomically) at each
//!    component's start, failure and end.
//! 6. The stack status, the stack-level outputs (refreshed at the end of
//!    every deploy), the stack outputs and the operation status are
//!    written; a summary is returned.
//!
//! # Files
//!
//! Each component's output lines (masked) are appended to
//! `STATE.logs/<component>.log` beside the state; no log files are written
//! without a state (`-n`).

use super::capture::{self, RawOutputs};
use super::discover::{self, Implementation};
use super::env::{self, ComponentVariables, Nested, OsEnvironment};
use super::error::EngineError;
use super::interrupt::Interrupts;
use super::otp;
use super::outputs::stack_outputs;
use super::plan::{self, ConditionOutcome, Plan, Selection, Verb};
use super::process::{self, Exit, Invocation, LineSink};
use super::requirements::{self, provides_text};
use super::stack::{absolute, Stack};
use super::summary::{Outcome, Summary};
use crate::diag::{Location, Warnings};
use crate::manifest::Manifest;
use crate::params::format::substitution_text;
use crate::params::{
    self, expand_component, expand_outputs, ComponentScope, ExpandedParam, LockOptions, Locked,
    Prompter,
};
use crate::redact::SecretMasker;
use crate::state::{
    self, Clock, ComponentMeta, ComponentRun, ComponentStatus, OperationIndex, OperationStart,
    OperationStatus, RawOutput, StackMeta, StackStatus, State, StateLock, StateParameter,
};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use yaml_serde::Value;

/// What the command line asked for.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub verb: Option<Verb>,
    pub selection: Selection,
    /// `None` with `-n`.
    pub state: Option<PathBuf>,
    /// `-e`: for `fromEnv`/`fromFile: $VAR` lookups only.
    pub overrides: IndexMap<String, String>,
    pub os_environment: OsEnvironment,
    /// `-b`.
    pub components_base_dir: Option<PathBuf>,
    pub force: bool,
    pub compressed: bool,
    /// Undeploy: skip trailing components without a state entry.
    pub guess: bool,
    /// Show secrets in output instead of masking them.
    pub reveal: bool,
    /// The full command line, recorded in the operation.
    pub args: Vec<String>,
    /// How many components may run at once (1 today).
    pub concurrency: usize,
}

/// What the run gets from the process it runs in.
pub struct Host<'a> {
    /// Hub's environment.
    pub environment: Vec<(String, String)>,
    /// The hub executable (`$HUB` for components).
    pub hub: PathBuf,
    pub sink: &'a dyn LineSink,
    pub interrupts: &'a Interrupts,
    /// Hub's own progress lines.
    pub log: &'a dyn Fn(&str),
    /// Asks for missing `kind: user` parameters; `None` without a terminal.
    pub prompter: Option<&'a mut dyn Prompter>,
}

impl Host<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.environment
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    }
}

/// The result of a run that got as far as running components: its summary,
/// and the error that ended it, if any.
pub struct Finished {
    pub summary: Option<Summary>,
    pub result: Result<(), EngineError>,
}

/// Deploys or undeploys `stack`.
pub fn run<'a>(
    stack: &'a Stack,
    options: &'a RunOptions,
    host: Host<'a>,
    warnings: &'a mut Warnings,
) -> Finished {
    let started = Instant::now();
    let mut run = match Run::prepare(stack, options, host, warnings) {
        Ok(run) => run,
        Err(error) => {
            return Finished {
                summary: None,
                result: Err(error),
            }
        }
    };
    let result = run.execute();
    let result = match (result, run.finish()) {
        (Err(error), _) | (Ok(()), Err(error)) => Err(error),
        (Ok(()), Ok(())) => Ok(()),
    };
    run.summary.total = started.elapsed();
    Finished {
        summary: Some(run.summary),
        result,
    }
}

/// How one component's turn ended.
enum Step {
    Done,
    Skipped(String),
    Failed(String),
    Interrupted(i32),
    /// The state could not be written: the run stops.
    Fatal(EngineError),
}

struct Run<'a> {
    stack: &'a Stack,
    options: &'a RunOptions,
    verb: Verb,
    host: Host<'a>,
    warnings: &'a mut Warnings,
    plan: Plan,
    locked: Locked,
    clock: Clock,
    /// The state being written; `None` without one.
    state: Option<State>,
    state_path: Option<PathBuf>,
    operation: Option<OperationIndex>,
    _lock: Option<StateLock>,
    provides: IndexMap<String, Vec<String>>,
    /// Outputs known in this run, oldest first.
    outputs: Vec<state::CapturedOutput>,
    failed: Vec<String>,
    skipped: Vec<String>,
    base_env: Vec<(String, String)>,
    masker: SecretMasker,
    summary: Summary,
    /// The run stopped early (failure or interrupt).
    stopped: bool,
}

impl<'a> Run<'a> {
    fn prepare(
        stack: &'a Stack,
        options: &'a RunOptions,
        mut host: Host<'a>,
        warnings: &'a mut Warnings,
    ) -> Result<Run<'a>, EngineError> {
        let verb = options.verb.unwrap_or(Verb::Deploy);
        let order = plan::validate(&stack.elaborated)?;
        let clock = Clock::from_env(&|name| host.var(name))?;
        let state_path = options.state.clone();
        if options.selection.is_partial() && state_path.is_none() && !options.force {
            return Err(EngineError::StateRequired {
                flag: if options.selection.components.is_empty() {
                    "-o"
                } else {
                    "-c"
                },
                path: None,
            });
        }
        let lock = match &state_path {
            Some(path) => Some(StateLock::acquire(path, verb.as_str(), &clock)?),
            None => None,
        };
        let loaded = read_state(state_path.as_deref(), verb, options, warnings)?;
        let guess = |name: &str| {
            loaded
                .as_ref()
                .is_some_and(|s| s.components.contains_key(name))
        };
        let guess: Option<&dyn Fn(&str) -> bool> =
            (verb == Verb::Undeploy && options.guess && loaded.is_some()).then_some(&guess);
        let plan = Plan::new(&stack.elaborated, order, verb, &options.selection, guess)?;
        let locked = lock_parameters(
            stack,
            options,
            &mut host,
            state_path.as_deref(),
            loaded.is_some(),
            warnings,
        )?;
        if let (Some(state), Some(path)) = (&loaded, &state_path) {
            check_consistency(stack, state, &locked, path, options.force, warnings)?;
        }
        let path_var = host.var("PATH");
        let is_optional = |name: &str| plan.is_optional(name);
        let mut provides = requirements::initial_provides(
            &stack.elaborated,
            &plan.tuning,
            &is_optional,
            path_var.as_deref().map(std::ffi::OsStr::new),
        )?;
        if let Some(state) = &loaded {
            state::merge_provides(&mut provides, &state.provides);
        }
        check_implementations(stack, &plan, options)?;
        let nested = Nested {
            hub: host.hub.clone(),
            elaborate: stack.file.clone(),
            state: state_path.as_deref().map(absolute),
            components_base_dir: options.components_base_dir.as_deref().map(absolute),
        };
        let base_env = env::base(options.os_environment, &host.environment, &nested);
        let mut masker = SecretMasker::new(options.reveal);
        for param in locked.params.values().filter(|p| p.secret) {
            masker.add(&substitution_text(param.value.as_ref()));
        }
        let outputs = initial_outputs(&plan, loaded.as_ref());
        let state = match (loaded, &state_path, verb) {
            (Some(state), _, _) => Some(state),
            (None, Some(_), Verb::Deploy) => Some(State::new(StackMeta::default(), Vec::new())),
            _ => None,
        };
        let mut run = Run {
            stack,
            options,
            verb,
            host,
            warnings,
            plan,
            locked,
            clock,
            state,
            state_path,
            operation: None,
            _lock: lock,
            provides,
            outputs,
            failed: Vec::new(),
            skipped: Vec::new(),
            base_env,
            masker,
            summary: Summary {
                verb: verb.as_str().to_string(),
                ..Summary::default()
            },
            stopped: false,
        };
        run.begin()?;
        Ok(run)
    }

    /// Records the operation `in-progress` and the stack's identity.
    fn begin(&mut self) -> Result<(), EngineError> {
        let now = self.clock.now();
        let start = OperationStart {
            id: state::operation_id(&|name| self.host.var(name)),
            operation: self.verb.as_str().to_string(),
            args: self.options.args.clone(),
            initiator: self.host.var("USER").unwrap_or_default(),
        };
        let stack = &self.stack.elaborated.stack;
        let parameters = state_parameters(&self.locked);
        let order = self.plan.order.clone();
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        state.meta = StackMeta {
            kind: stack.kind.clone(),
            name: stack.meta.name.clone(),
        };
        state.lifecycle.order = order;
        state.stack_parameters = parameters;
        self.operation = Some(state.begin_operation(start, &now));
        self.save()
    }

    /// Runs the selected components through the scheduler.
    fn execute(&mut self) -> Result<(), EngineError> {
        let mut scheduler = self.plan.scheduler(self.options.concurrency.max(1));
        let total = self.plan.selected.len();
        let mut index = 0;
        while let Some(name) = scheduler.next_ready() {
            index += 1;
            if let Some(signal) = self.interrupt_signal() {
                scheduler.finish(&name);
                self.summary.push(&name, Outcome::NotRun, Duration::ZERO);
                self.not_run(&scheduler);
                return self.stop_interrupted(None, signal);
            }
            (self.host.log)(&format!(
                "hub: {} {name} ({index}/{total})",
                self.verb.as_str()
            ));
            let started = Instant::now();
            let step = self.component(&name);
            scheduler.finish(&name);
            let took = started.elapsed();
            match step {
                Step::Done => {
                    let outcome = match self.verb {
                        Verb::Deploy => Outcome::Deployed,
                        Verb::Undeploy => Outcome::Undeployed,
                    };
                    self.summary.push(&name, outcome, took);
                }
                Step::Skipped(why) => {
                    (self.host.log)(&format!("hub: {name} skipped: {why}"));
                    self.skipped.push(name.clone());
                    self.summary.push(&name, Outcome::Skipped(why), took);
                }
                Step::Interrupted(signal) => {
                    self.summary.push(&name, Outcome::Interrupted, took);
                    self.not_run(&scheduler);
                    return self.stop_interrupted(Some(&name), signal);
                }
                Step::Fatal(error) => {
                    self.summary
                        .push(&name, Outcome::Failed(error.to_string()), took);
                    self.not_run(&scheduler);
                    self.stopped = true;
                    return Err(error);
                }
                Step::Failed(reason) => {
                    self.summary
                        .push(&name, Outcome::Failed(reason.clone()), took);
                    if let Some(error) = self.after_failure(&name, &reason)? {
                        self.not_run(&scheduler);
                        return Err(error);
                    }
                }
            }
        }
        Ok(())
    }

    fn not_run(&mut self, scheduler: &plan::Scheduler) {
        for name in scheduler.pending() {
            self.summary.push(&name, Outcome::NotRun, Duration::ZERO);
        }
    }

    fn interrupt_signal(&self) -> Option<i32> {
        self.host
            .interrupts
            .requested()
            .then(|| self.host.interrupts.last_signal().unwrap_or(libc::SIGINT))
    }

    /// A failed component: optional ones and `--force` let the run go on;
    /// a mandatory one ends it (§9.2).
    fn after_failure(
        &mut self,
        name: &str,
        reason: &str,
    ) -> Result<Option<EngineError>, EngineError> {
        self.failed.push(name.to_string());
        let optional = self.plan.is_optional(name);
        if optional || self.options.force {
            let which = if optional {
                "optional component"
            } else {
                "component (--force)"
            };
            self.warnings
                .warn(None, format!("{which} `{name}` failed: {reason}"));
            return Ok(None);
        }
        self.stopped = true;
        let now = self.clock.now();
        let message = format!("component `{name}` failed");
        if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
            state.set_status(StackStatus::Incomplete, &message, &now);
            state.finish_operation(op, OperationStatus::Error, &now);
        }
        self.save()?;
        Ok(Some(EngineError::ComponentFailed {
            component: name.to_string(),
            reason: reason.to_string(),
        }))
    }

    fn stop_interrupted(
        &mut self,
        component: Option<&str>,
        signal: i32,
    ) -> Result<(), EngineError> {
        self.stopped = true;
        let now = self.clock.now();
        if let (Some(state), Some(op)) = (self.state.as_mut(), self.operation) {
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
    fn finish(&mut self) -> Result<(), EngineError> {
        let now = self.clock.now();
        let stopped = self.stopped;
        let final_outputs =
            !self.options.selection.is_partial() && self.options.selection.limit.is_none();
        let is_optional = |name: &str| self.plan.is_optional(name);
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        if self.verb == Verb::Deploy {
            refresh_stack_outputs(state, &self.outputs, final_outputs);
            state.stack_outputs = stack_outputs(
                &self.stack.elaborated.stack.outputs,
                &state.captured_outputs,
                &self.locked,
                &state.stack_outputs,
                true,
                self.warnings,
            );
        }
        state.provides = state::provides_for_state(&self.provides);
        if !stopped {
            let (status, message) =
                state::stack_status(state, &self.plan.order, &is_optional, &self.skipped);
            state.set_status(status, &message, &now);
            if let Some(op) = self.operation {
                state.finish_operation(op, OperationStatus::Success, &now);
            }
        }
        self.summary.stack_status = state.status.clone();
        let redactor = crate::redact::Redactor::new(self.options.reveal);
        self.summary.outputs = state
            .stack_outputs
            .iter()
            .map(|o| {
                let value = substitution_text(Some(&o.value));
                let shown = redactor.text(&o.name, &o.kind, false, &value);
                (o.name.clone(), self.masker.mask(&shown).into_owned())
            })
            .collect();
        self.save()
    }

    /// Writes the state, when there is one.
    fn save(&mut self) -> Result<(), EngineError> {
        let (Some(state), Some(path)) = (self.state.as_mut(), &self.state_path) else {
            return Ok(());
        };
        state.touch(&self.clock.now());
        let options = state::WriteOptions {
            compressed: self.options.compressed,
        };
        state::write(path, state, &options)?;
        Ok(())
    }

    // ---- one component -------------------------------------------------

    fn component(&mut self, name: &str) -> Step {
        let (Some(reference), Some(manifest)) = (
            self.stack.reference(name),
            self.stack.elaborated.component(name),
        ) else {
            return Step::Failed(format!("`{name}` has no component document"));
        };
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
                return self.fail(name, &reason, None);
            }
        }
        let expanded = self.expand(name, &reference.depends, manifest);
        if let Some(why) = self.condition_skip(name, expanded.as_ref().ok()) {
            return self.skip(name, why);
        }
        let params = match expanded {
            Ok(params) => params,
            Err(error) => return self.fail(name, &error.to_string(), None),
        };
        let unmet =
            plan::unmet_requirements(&manifest.requires, name, &self.provides, &self.plan.tuning);
        if !unmet.optional.is_empty() {
            return self.skip(
                name,
                format!(
                    "optional requirement {} not provided",
                    quoted(&unmet.optional)
                ),
            );
        }
        if !unmet.hard.is_empty() {
            let reason = format!(
                "requirement {} not provided (provided: {})",
                quoted(&unmet.hard),
                or_none(&provides_text(&self.provides))
            );
            match self.verb {
                Verb::Deploy => return self.fail(name, &reason, None),
                Verb::Undeploy => self
                    .warnings
                    .warn(None, format!("component `{name}`: {reason}")),
            }
        }
        for param in params.iter().filter(|p| p.secret) {
            self.masker.add(&substitution_text(param.value.as_ref()));
        }
        if let Err(error) = self.checkpoint(name, manifest, &params) {
            return Step::Fatal(error);
        }
        self.invoke(name, manifest, &params)
    }

    /// §6.3 with the outputs known now.
    fn expand(
        &mut self,
        name: &str,
        depends: &[String],
        manifest: &Manifest,
    ) -> Result<Vec<ExpandedParam>, params::ParamsError> {
        let outputs: Vec<params::CapturedOutput> =
            self.outputs.iter().map(to_scope_output).collect();
        let mut scope = ComponentScope {
            name,
            depends,
            manifest,
            outputs: &outputs,
            provides: provides_text(&self.provides),
            source: None,
        };
        // Pointing at declarations scans the whole elaborated file: that is
        // done again only when there is something to report.
        let mut quiet = Warnings::default();
        match expand_component(&self.locked, &scope, &mut quiet) {
            Ok(params) if quiet.is_empty() => Ok(params),
            _ => {
                scope.source = self.stack.source.as_ref().zip(self.stack.document(name));
                expand_component(&self.locked, &scope, self.warnings)
            }
        }
    }

    /// §6.4: the component's parameter conditions.
    fn condition_skip(
        &mut self,
        name: &str,
        params: Option<&Vec<ExpandedParam>>,
    ) -> Option<String> {
        let qualified = format!("|{name}");
        let value = |wanted: &str| -> Option<String> {
            if let Some(p) = params.and_then(|ps| ps.iter().find(|p| p.name == wanted)) {
                return Some(substitution_text(p.value.as_ref()));
            }
            [wanted.to_string(), format!("{wanted}{qualified}")]
                .iter()
                .rev()
                .find_map(|key| self.locked.get(key))
                .filter(|p| p.kind != "link")
                .map(|p| substitution_text(p.value.as_ref()))
        };
        match plan::evaluate_conditions(&self.plan.tuning, name, &value) {
            ConditionOutcome::Deploy => None,
            ConditionOutcome::Skip { term } => Some(format!("`{term}` is off")),
            ConditionOutcome::SkipWildcard { term } => {
                self.warnings.warn(
                    None,
                    format!("`{term}` in `lifecycle.requires.optional` is off and applies to every component; write `{term}:<component>` to switch one component"),
                );
                Some(format!("`{term}` is off"))
            }
        }
    }

    /// A skipped component leaves no entry that never ran (§6.4, §6.6).
    fn skip(&mut self, name: &str, why: String) -> Step {
        if let Some(state) = self.state.as_mut() {
            if state
                .components
                .get(name)
                .is_some_and(|e| e.status.is_empty())
            {
                state.components.shift_remove(name);
            }
        }
        Step::Skipped(why)
    }

    /// §6.7: the state says what is running before it starts.
    fn checkpoint(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
    ) -> Result<(), EngineError> {
        let now = self.clock.now();
        let (component_status, stack_status) = match self.verb {
            Verb::Deploy => (ComponentStatus::Deploying, StackStatus::Deploying),
            Verb::Undeploy => (ComponentStatus::Undeploying, StackStatus::Undeploying),
        };
        let verb = self.verb;
        let snapshot = self.outputs.clone();
        let Some(state) = self.state.as_mut() else {
            return Ok(());
        };
        if verb == Verb::Deploy {
            let run = ComponentRun {
                meta: component_meta(manifest),
                parameters: component_parameters(params),
                raw_outputs: Vec::new(),
                snapshot,
            };
            state.record_component_run(name, run, &now);
        }
        state.set_component_status(name, component_status, "", &now);
        state.set_status(stack_status, "", &now);
        if let Some(op) = self.operation {
            state.set_phase(op, name, OperationStatus::InProgress, &now);
        }
        self.save()
    }

    /// Renders templates, builds the environment, finds and runs the
    /// implementation, then records the result.
    fn invoke(&mut self, name: &str, manifest: &Manifest, params: &[ExpandedParam]) -> Step {
        let dir = match self.component_dir(name) {
            Ok(dir) => dir,
            Err(error) => return self.fail(name, &error.to_string(), None),
        };
        if let Err(reason) = self.render_templates(name, manifest, params, &dir) {
            return self.fail(name, &reason, None);
        }
        let bytes = match manifest.lifecycle.options.random.bytes {
            n if n > 0 => n as usize,
            _ => otp::DEFAULT_PAD_BYTES,
        };
        let pad = otp::random_pad(bytes);
        let random = otp::pad_to_env(&pad);
        let vars = ComponentVariables {
            component: name,
            params,
            random: &random,
            component_dir: &dir,
            base_dir: &self.stack.base_dir,
        };
        let environment = env::component(&self.base_env, &vars, self.warnings);
        let bare = manifest.lifecycle.bare == "allow";
        let implementation = match discover::discover(&dir, self.verb.as_str(), bare) {
            Ok(implementation) => implementation,
            Err(error) => return self.fail(name, &error.to_string(), None),
        };
        let stdout = match implementation.command() {
            None => String::new(),
            Some((program, args)) => {
                let invocation = Invocation {
                    label: name.to_string(),
                    program,
                    args,
                    cwd: dir.clone(),
                    env: environment,
                    log_file: self.log_file(name),
                    timeout: None,
                };
                match process::run(
                    &invocation,
                    &self.masker,
                    self.host.sink,
                    self.host.interrupts,
                ) {
                    Err(error) => return self.fail(name, &error.to_string(), None),
                    Ok(finished) => match finished.exit {
                        Exit::Code(0) => finished.stdout,
                        Exit::Interrupted { signal } => return self.interrupted(name, signal),
                        exit => {
                            let reason = format!("{} {exit}", describe(&implementation));
                            return self.fail(name, &reason, Some(&finished.stdout));
                        }
                    },
                }
            }
        };
        match self.verb {
            Verb::Deploy => self.deployed(name, manifest, params, &dir, &stdout, &pad),
            Verb::Undeploy => self.undeployed(name),
        }
    }

    fn render_templates(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
    ) -> Result<(), String> {
        if manifest.templates.is_empty() {
            return Ok(());
        }
        super::templates::render(dir, &manifest.templates, params, name, self.warnings)
            .map(|_| ())
            .map_err(|errors| errors.to_string())
    }

    fn component_dir(&self, name: &str) -> Result<PathBuf, EngineError> {
        let reference =
            self.stack
                .reference(name)
                .ok_or_else(|| EngineError::UnknownComponent {
                    component: name.to_string(),
                    available: self.plan.order.clone(),
                })?;
        self.stack
            .component_dir(reference, self.options.components_base_dir.as_deref())
    }

    fn log_file(&self, name: &str) -> Option<PathBuf> {
        self.state_path
            .as_deref()
            .map(|path| log_dir(path).join(format!("{name}.log")))
    }

    /// §6.11–6.15 for a deploy that exited 0: capture, provides, state.
    fn deployed(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        stdout: &str,
        pad: &[u8],
    ) -> Step {
        let mut raw = capture::parse_outputs(stdout);
        capture::decode_secrets(&mut raw, pad, self.warnings);
        let (captured, problems) = self.capture(name, manifest, params, dir, &raw);
        for output in &captured {
            if output.kind.starts_with("secret") || crate::redact::is_secret_name(&output.name) {
                self.masker.add(&substitution_text(Some(&output.value)));
            }
            let key = output.qualified_name();
            self.outputs.retain(|o| o.qualified_name() != key);
            self.outputs.push(output.clone());
        }
        let dynamic = capture::dynamic_provides(&raw);
        for capability in manifest.provides.iter().chain(&dynamic) {
            state::add_provider(&mut self.provides, capability, name);
        }
        let now = self.clock.now();
        let snapshot = self.outputs.clone();
        let provides = state::provides_for_state(&self.provides);
        let stack_outputs_declared = &self.stack.elaborated.stack.outputs;
        if let Some(state) = self.state.as_mut() {
            let run = ComponentRun {
                meta: component_meta(manifest),
                parameters: component_parameters(params),
                raw_outputs: raw_outputs(&raw),
                snapshot: snapshot.clone(),
            };
            state.record_component_run(name, run, &now);
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
        self.succeeded(name)
    }

    /// The declared outputs of a component that ran, and the problems.
    fn capture(
        &mut self,
        name: &str,
        manifest: &Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        raw: &RawOutputs,
    ) -> (Vec<state::CapturedOutput>, Vec<String>) {
        let (decoded, errors) =
            capture::decode_declared(&manifest.outputs, raw, dir, self.warnings);
        let mut problems: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        let expanded = match expand_outputs(name, params, &manifest.outputs, &decoded) {
            Ok(expanded) => expanded,
            Err(error) => {
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
                    kind: declared.map(|d| d.kind.clone()).unwrap_or_default(),
                }
            })
            .collect();
        (captured, problems)
    }

    fn undeployed(&mut self, name: &str) -> Step {
        state::remove_provider(&mut self.provides, name);
        let provides = state::provides_for_state(&self.provides);
        if let Some(state) = self.state.as_mut() {
            state.provides = provides;
        }
        self.succeeded(name)
    }

    /// §6.15: `deployed`/`undeployed`, phase `success`, written.
    fn succeeded(&mut self, name: &str) -> Step {
        let now = self.clock.now();
        let status = match self.verb {
            Verb::Deploy => ComponentStatus::Deployed,
            Verb::Undeploy => ComponentStatus::Undeployed,
        };
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, status, "", &now);
            if let Some(op) = self.operation {
                state.set_phase(op, name, OperationStatus::Success, &now);
            }
        }
        match self.save() {
            Ok(()) => Step::Done,
            Err(error) => Step::Fatal(error),
        }
    }

    /// §9.2: the component's entry says `error` with the reason; the
    /// operation log gets the reason and the (masked) output.
    fn fail(&mut self, name: &str, reason: &str, stdout: Option<&str>) -> Step {
        let now = self.clock.now();
        let mut log = format!("{name}: {reason}\n");
        if let Some(stdout) = stdout.filter(|s| !s.is_empty()) {
            log.push_str("--- stdout:\n");
            log.push_str(&self.masker.mask(stdout));
            if !log.ends_with('\n') {
                log.push('\n');
            }
        }
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, reason, &now);
            if let Some(op) = self.operation {
                state.set_phase(op, name, OperationStatus::Error, &now);
                state.append_log(op, &log, &now);
            }
        }
        if let Err(error) = self.save() {
            return Step::Fatal(error);
        }
        Step::Failed(reason.to_string())
    }

    fn interrupted(&mut self, name: &str, signal: i32) -> Step {
        let now = self.clock.now();
        let message = format!("interrupted by {}", super::interrupt::signal_name(signal));
        if let Some(state) = self.state.as_mut() {
            state.set_component_status(name, ComponentStatus::Error, &message, &now);
            if let Some(op) = self.operation {
                state.set_phase(op, name, OperationStatus::Error, &now);
            }
        }
        Step::Interrupted(signal)
    }

    /// §4.3: the outputs a component sees when the run starts at it.
    fn preload(&mut self, name: &str) {
        let Some(state) = self.state.as_ref() else {
            return;
        };
        let order = &self.plan.order;
        let mut outputs = match self.verb {
            Verb::Deploy => state.outputs_before(order, name).to_vec(),
            Verb::Undeploy => state.outputs_at(order, name).to_vec(),
        };
        state.merge_dependency_outputs(&mut outputs, self.plan.depends(name), self.warnings);
        self.outputs = outputs;
    }
}

/// Reads the state of a run: missing is fine except for `-c`/`-o` (unless
/// `--force`); unreadable is fatal unless `--force` on a full deploy.
fn read_state(
    path: Option<&Path>,
    verb: Verb,
    options: &RunOptions,
    warnings: &mut Warnings,
) -> Result<Option<State>, EngineError> {
    let Some(path) = path else {
        return Ok(None);
    };
    let partial = options.selection.is_partial();
    match state::read(path, warnings) {
        Ok(Some(state)) => Ok(Some(state)),
        Ok(None) if partial && !options.force => Err(EngineError::StateRequired {
            flag: if options.selection.components.is_empty() {
                "-o"
            } else {
                "-c"
            },
            path: Some(path.to_path_buf()),
        }),
        Ok(None) => Ok(None),
        Err(error) if options.force && verb == Verb::Deploy && !partial => {
            warnings.warn(
                Some(Location::file(path)),
                format!(
                    "{error}; starting a new state (--force); the old one is kept as the backup"
                ),
            );
            Ok(None)
        }
        Err(error) => Err(error.into()),
    }
}

fn lock_parameters(
    stack: &Stack,
    options: &RunOptions,
    host: &mut Host<'_>,
    state_path: Option<&Path>,
    state_loaded: bool,
    warnings: &mut Warnings,
) -> Result<Locked, EngineError> {
    let params_state = match (state_path, state_loaded) {
        (Some(path), true) => Some(params::state::State::read(path)?),
        _ => None,
    };
    let prompter = host.prompter.take();
    let variables = &host.environment;
    let environment = |name: &str| {
        variables
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let lock_options = LockOptions {
        source: stack.source.as_ref(),
        overrides: &options.overrides,
        environment: &environment,
        prompter: prompter.map(|p| p as &mut dyn Prompter),
        state: params_state.as_ref(),
        deployment_id: None,
        stack_name: host.var("HUB_STACK_NAME"),
    };
    Ok(params::lock(
        &stack.elaborated.stack,
        lock_options,
        warnings,
    )?)
}

fn check_consistency(
    stack: &Stack,
    state: &State,
    locked: &Locked,
    path: &Path,
    force: bool,
    warnings: &mut Warnings,
) -> Result<(), EngineError> {
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
    if problems.is_empty() {
        return Ok(());
    }
    if force {
        for problem in &problems {
            warnings.warn(Some(Location::file(path)), format!("{problem} (--force)"));
        }
        return Ok(());
    }
    Err(EngineError::StateMismatch {
        path: path.to_path_buf(),
        problems,
    })
}

/// §2 step 13: every selected component has a folder and implements the
/// stack's verbs (the run's verb when the stack lists none).
fn check_implementations(
    stack: &Stack,
    plan: &Plan,
    options: &RunOptions,
) -> Result<(), EngineError> {
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
    for name in &plan.selected {
        let (Some(reference), Some(manifest)) =
            (stack.reference(name), stack.elaborated.component(name))
        else {
            continue;
        };
        let dir = stack.component_dir(reference, options.components_base_dir.as_deref())?;
        let bare = manifest.lifecycle.bare == "allow";
        for verb in &verbs {
            discover::discover(&dir, verb, bare).map_err(|source| EngineError::Implementation {
                component: name.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

/// The outputs a run starts with: for a full undeploy the stack-level
/// ones (or the latest snapshot); otherwise none until components run or
/// are preloaded.
fn initial_outputs(plan: &Plan, state: Option<&State>) -> Vec<state::CapturedOutput> {
    match (
        plan.verb,
        state,
        plan.offset.is_none() && !plan.per_component,
    ) {
        (Verb::Undeploy, Some(state), true) => {
            state.outputs_for_full_undeploy(&plan.order).to_vec()
        }
        _ => Vec::new(),
    }
}

/// The stack-level `capturedOutputs` after a deploy: all outputs of a
/// complete run; otherwise the run's outputs merged into the old ones.
fn refresh_stack_outputs(state: &mut State, outputs: &[state::CapturedOutput], complete: bool) {
    if complete {
        state.captured_outputs = outputs.to_vec();
        return;
    }
    for output in outputs {
        let key = output.qualified_name();
        match state
            .captured_outputs
            .iter_mut()
            .find(|o| o.qualified_name() == key)
        {
            Some(existing) => *existing = output.clone(),
            None => state.captured_outputs.push(output.clone()),
        }
    }
}

/// `STATE.logs`: the folder of the per-component log files.
pub fn log_dir(state: &Path) -> PathBuf {
    let mut name = state.as_os_str().to_os_string();
    name.push(".logs");
    PathBuf::from(name)
}

fn state_parameters(locked: &Locked) -> Vec<StateParameter> {
    locked
        .params
        .values()
        .map(|p| StateParameter {
            component: p.component.clone(),
            name: p.name.clone(),
            value: p.value.clone().unwrap_or(Value::Null),
            env: p.env.clone(),
        })
        .collect()
}

fn component_parameters(params: &[ExpandedParam]) -> Vec<StateParameter> {
    params
        .iter()
        .map(|p| StateParameter {
            component: String::new(),
            name: p.name.clone(),
            value: p.value.clone().unwrap_or(Value::Null),
            env: p.env.clone(),
        })
        .collect()
}

fn component_meta(manifest: &Manifest) -> ComponentMeta {
    let meta = &manifest.meta;
    ComponentMeta {
        origin: meta.origin.clone(),
        kind: meta.kind.clone(),
        title: meta.title.clone(),
        brief: meta.brief.clone(),
        description: meta.description.clone(),
        version: meta.version.clone(),
        maturity: meta.maturity.clone(),
        icon: meta.icon.clone(),
    }
}

fn raw_outputs(raw: &RawOutputs) -> Vec<RawOutput> {
    let mut out: Vec<RawOutput> = raw
        .iter()
        .map(|(name, value)| RawOutput {
            name: name.clone(),
            value: value.clone(),
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

pub(crate) fn to_scope_output(output: &state::CapturedOutput) -> params::CapturedOutput {
    params::CapturedOutput {
        component: output.component.clone(),
        name: output.name.clone(),
        value: Some(output.value.clone()),
        kind: output.kind.clone(),
        component_kind: output.component_kind.clone(),
    }
}

fn describe(implementation: &Implementation) -> String {
    format!("`{implementation}`")
}

fn quoted(names: &[String]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn or_none(text: &str) -> &str {
    if text.is_empty() {
        "nothing"
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn output(component: &str, name: &str, value: &str) -> state::CapturedOutput {
        state::CapturedOutput {
            component: component.into(),
            name: name.into(),
            value: Value::String(value.into()),
            ..state::CapturedOutput::default()
        }
    }

    #[test]
    fn stack_level_outputs_are_replaced_after_a_complete_run_and_merged_otherwise() {
        let mut state = State {
            captured_outputs: vec![output("a", "x", "old"), output("gone", "y", "1")],
            ..State::default()
        };
        refresh_stack_outputs(&mut state, &[output("a", "x", "new")], false);
        let names: Vec<String> = state
            .captured_outputs
            .iter()
            .map(|o| o.qualified_name())
            .collect();
        assert_eq!(names, ["a:x", "gone:y"]);
        assert_eq!(state.captured_outputs[0].value, Value::String("new".into()));
        refresh_stack_outputs(&mut state, &[output("a", "x", "new")], true);
        assert_eq!(state.captured_outputs.len(), 1);
    }

    #[test]
    fn logs_live_beside_the_state() {
        assert_eq!(
            log_dir(Path::new("/s/hub.yaml.state")),
            PathBuf::from("/s/hub.yaml.state.logs")
        );
    }

    #[test]
    fn state_parameters_keep_qualifiers_and_nulls() {
        let mut locked = Locked::default();
        locked.params.insert(
            "x|a".into(),
            params::LockedParam {
                name: "x".into(),
                component: "a".into(),
                kind: String::new(),
                value: None,
                env: "X".into(),
                origin: params::Origin::Unset,
                expression: None,
                declared: None,
                secret: false,
            },
        );
        let written = state_parameters(&locked);
        assert_eq!(written[0].qualified_name(), "x|a");
        assert_eq!(written[0].value, Value::Null);
        assert_eq!(written[0].env, "X");
    }
}
