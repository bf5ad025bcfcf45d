//! One component's pipeline (§6): what the plan says, its parameters,
//! the checkpoint, its process, its outputs and its end.

use super::words::{describe, or_none, quoted};
use super::{record_phase, Job, Prepared, Run, StartUndo, Step};
use crate::child::otp;
use crate::child::process::{Exit, Invocation};
use crate::run::error::EngineError;
use crate::run::hooks;
use crate::run::logs_ahead::LogsAhead;
use hub_manifest::diag::Warnings;
use hub_manifest::Manifest;
use hub_params::format::substitution_text;
use hub_params::{self as params, expand_component, ComponentScope, ExpandedParam};
use hub_plan::decide::known::View;
use hub_plan::decide::records::{
    component_meta, component_parameters, scope_outputs, to_scope_output,
};
use hub_plan::env::{self, ComponentVariables};
use hub_plan::order::requirements::provides_text;
use hub_plan::order::schedule;
use hub_plan::outcome::log_marks::RunMarks;
use hub_plan::source::discover::{self, Implementation};
use hub_plan::source::stack::absolute;
use hub_plan::Verb;
use hub_state::{self as state, ComponentRun, ComponentStatus, OperationStatus, StackStatus};
use indexmap::IndexMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
        if self.setup.plan.per_component || self.setup.plan.offset.as_deref() == Some(name) {
            self.preload(name);
        }
        self.no_failed_dependency(name, &reference.depends)?;
        self.not_written_since_plan(name, manifest)?;
        let visible = self.visible_outputs(name);
        let stale = self.reads_unchanged(name, &visible)?;
        let provides = self.known.provides_for(&visible);
        let params =
            self.expanded_params(name, &reference.depends, manifest, &visible, &provides)?;
        let stale = self.parameters_since_plan(name, &params, stale)?;
        self.note_last_successful_reads(name, &params);
        self.requirements_met(name, manifest, &provides)?;
        for param in params.iter().filter(|p| p.secret) {
            self.masker.add(&substitution_text(param.value.as_ref()));
        }
        let dir = self
            .component_dir(name)
            .map_err(|error| self.fail(name, &error.to_string(), None))?;
        self.replanned(name, manifest, &dir, &params, stale)?;
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

    /// A deploy: a component whose dependency failed in this run fails.
    fn no_failed_dependency(&mut self, name: &str, depends: &[String]) -> Result<(), Step> {
        if self.verb == Verb::Deploy {
            let failed: Vec<&String> = depends
                .iter()
                .filter(|d| self.tally.failed.contains(d))
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
        Ok(())
    }

    /// The component's parameters, expanded: its conditions may skip it;
    /// a parameter that cannot be expanded fails it (naming the failed
    /// upstream it reads, if any).
    fn expanded_params(
        &mut self,
        name: &str,
        depends: &[String],
        manifest: &Manifest,
        visible: &View,
        provides: &IndexMap<String, Vec<String>>,
    ) -> Result<Vec<ExpandedParam>, Step> {
        let expanded = self.expand(name, depends, manifest, visible, provides);
        if let Some(why) = self.condition_skip(name, expanded.as_ref().ok()) {
            return Err(self.skip(name, why));
        }
        match expanded {
            Ok(params) => Ok(params),
            Err(error) => {
                let reason = match self.failed_upstream(&error) {
                    Some(read) => format!("{read}:\n{error}"),
                    None => error.to_string(),
                };
                Err(self.fail(name, &reason, None))
            }
        }
    }

    /// The component's requirements are provided: an optional one missing
    /// skips it; a hard one fails a deploy (an undeploy warns).
    fn requirements_met(
        &mut self,
        name: &str,
        manifest: &Manifest,
        provides: &IndexMap<String, Vec<String>>,
    ) -> Result<(), Step> {
        let unmet = schedule::unmet_requirements(
            &manifest.requires,
            name,
            provides,
            &self.setup.plan.tuning,
        );
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
                or_none(&provides_text(provides))
            );
            match self.verb {
                Verb::Deploy => return Err(self.fail(name, &reason, None)),
                Verb::Undeploy => self
                    .warnings
                    .warn(None, format!("component `{name}`: {reason}")),
            }
        }
        Ok(())
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
        let outputs: Vec<params::CapturedOutput> = match self.setup.plan.reads(name) {
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
        let mut quiet = Warnings::new();
        match expand_component(&self.setup.locked, &scope, &mut quiet) {
            Ok(params) if quiet.is_empty() => Ok(params),
            _ => {
                scope.source = self.stack.declarations(name);
                expand_component(&self.setup.locked, &scope, self.warnings)
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
            &self.setup.plan.tuning,
            name,
            params.map(Vec::as_slice),
            &self.setup.locked,
        );
        if let Some(warning) = outcome.wildcard_warning() {
            self.warnings.warn(None, warning);
        }
        outcome.skip_reason()
    }

    /// A skipped component leaves no entry that never ran (§6.4, §6.6).
    pub(super) fn skip(&mut self, name: &str, why: String) -> Step {
        if let Some(state) = self.ledger.state.as_mut() {
            if state
                .components
                .get(name)
                .is_some_and(|e| e.status.is_empty())
            {
                state.components.shift_remove(name);
                self.ledger.quiet = false;
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
        let positions = parallel.then_some(&self.setup.positions);
        let at = self.setup.positions.get(name).copied();
        let Some(state) = self.ledger.state.as_mut() else {
            return Ok(());
        };
        let undo = StartUndo::before(state, name, self.ledger.operation);
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
        if let Some(op) = self.ledger.operation {
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
            self.ledger.unsaved_checkpoints.push(name.to_string());
            return Ok(());
        }
        let saved = self.save_component(name);
        if saved.is_err() {
            // The component does not start: the state must not say it did.
            if let Some(state) = self.ledger.state.as_mut() {
                undo.apply(state, name, self.ledger.operation);
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
        let environment = self.component_environment(name, &params, &random, &dir);
        let verb = self.options.implementation_verb(self.verb.as_str());
        let implementation = self.implementation(name, manifest, &dir, &verb)?;
        let environment = match implementation {
            Implementation::Terraform { .. } => {
                hub_plan::terraform::environment(environment, &params)
            }
            _ => environment,
        };
        let hooks = self.plan_hooks(name, &verb, &dir, &environment);
        let Some((program, args)) = implementation.command() else {
            return Err(self.hooks_alone(name, manifest, &hooks, &params, &dir, &pad));
        };
        // The system refuses an environment over its limits with an error
        // that names nothing; said here with the variable and its size.
        if let Err(too_large) =
            hub_plan::plan::preflight::environment_fits(&environment, &program, &args)
        {
            self.tally.fixes.insert(name.to_string(), too_large.hint());
            return Err(self.fail(name, &too_large.to_string(), None));
        }
        let invocation = Invocation {
            label: name.to_string(),
            program,
            args,
            cwd: dir.clone(),
            env: environment,
            log_file: self.log_path(name),
            timeout: None,
        };
        let fingerprint_folder = self.fingerprint_folder(name, &dir);
        Ok(Job {
            log_marks: invocation.log_file.as_ref().and_then(|_| self.log_marks()),
            invocation,
            limit: self.setup.timeouts.limit(name),
            hooks,
            masker: self.component_masker(manifest),
            manifest,
            params,
            dir,
            pad,
            implementation: describe(&implementation),
            retry: self.setup.retries.policy(name).cloned(),
            attempts: Default::default(),
            fingerprint_folder,
            folder_digest: None,
        })
    }

    /// The component's environment: hub's, its parameters, `$HUB_RANDOM`
    /// and its folder, with the trace's parent.
    fn component_environment(
        &mut self,
        name: &str,
        params: &[ExpandedParam],
        random: &str,
        dir: &Path,
    ) -> Vec<(String, String)> {
        let vars = ComponentVariables {
            component: name,
            params,
            random,
            component_dir: dir,
            base_dir: &self.stack.base_dir,
        };
        let environment = env::component(&self.setup.base_env, &vars, self.warnings);
        crate::trace::with_traceparent(name, environment)
    }

    /// What implements `verb`: as found before the run, or looked for
    /// again once the component's templates are rendered.
    fn implementation(
        &mut self,
        name: &str,
        manifest: &Manifest,
        dir: &Path,
        verb: &str,
    ) -> Result<Implementation, Step> {
        let bare = manifest.lifecycle.bare == "allow";
        let found = match manifest.templates.is_empty() {
            true => self.setup.implementations.remove(name),
            false => None,
        };
        match found.map_or_else(|| discover::discover(dir, verb, bare), Ok) {
            Ok(implementation) => Ok(implementation),
            Err(error) => Err(self.fail(name, &error.to_string(), None)),
        }
    }

    /// A component with no program to run (only hooks): its hooks run
    /// here, then it ends as any other.
    fn hooks_alone(
        &mut self,
        name: &str,
        manifest: &Manifest,
        hooks: &hooks::Planned,
        params: &[ExpandedParam],
        dir: &Path,
        pad: &[u8],
    ) -> Step {
        let around = hooks::run_around(
            hooks,
            None,
            self.setup.timeouts.limit(name),
            &self.masker,
            self.host.sink,
            self.host.interrupts,
        );
        self.report_ignored_hooks(name, &around.ignored);
        match (around.pre, around.post) {
            (Err(stopped), _) | (_, Err(stopped)) => self.hook_stopped(name, stopped),
            _ => self.conclude(name, manifest, params, dir, "", pad),
        }
    }

    /// Records what a component's process (and its hooks) did.
    pub(super) fn ran(&mut self, name: &str, mut job: Box<Job<'a>>, around: hooks::Around) -> Step {
        if let Some(digest) = job.folder_digest.take() {
            self.tally.folder_digests.insert(name.to_string(), digest);
        }
        self.report_ignored_hooks(name, &around.ignored);
        crate::trace::component_exit(name, &around.main);
        let attempt = job.attempts.suffix();
        if job.attempts.allowed > 1 {
            self.tally
                .attempts
                .insert(name.to_string(), job.attempts.clone());
        }
        if let Err(stopped) = around.pre {
            return self.hook_stopped(name, stopped);
        }
        let stdout = match around.main {
            None => String::new(),
            Some(Err(error)) => {
                if let Some(fix) = error.hint().filter(|_| error.planted()) {
                    self.tally.fixes.insert(name.to_string(), fix);
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
                    self.tally.fixes.insert(name.to_string(), limit.fix(name));
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
                self.tally.hook_failures.push(name.to_string());
                self.fail(name, &reason, None)
            }
            hooks::Stopped::TimedOut(reason, limit) => {
                self.tally.fixes.insert(name.to_string(), limit.fix(name));
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
                    available: self.setup.plan.order.clone(),
                })?;
        Ok(self
            .stack
            .component_dir(reference, self.options.components_base_dir.as_deref())?)
    }

    /// Log files made ahead of the components, when the run keeps logs;
    /// not for `--changed`, whose components mostly do not run (and whose
    /// earlier deploy left their files).
    pub(super) fn logs_ahead(&self) -> Option<LogsAhead> {
        if self.options.scope.changed {
            return None;
        }
        let folder = self.ledger.log_folder.as_ref()?;
        Some(LogsAhead::start(folder, &self.setup.plan.selected))
    }

    /// The log file of `name`, given to a process that writes to it: the
    /// first time in a run, this run's mark is appended to it (see
    /// [`hub_plan::outcome::log_marks`]).
    pub(super) fn log_file(&self, name: &str) -> Option<PathBuf> {
        let path = self.log_path(name)?;
        if let Some(marks) = self.log_marks() {
            marks.mark(name, &path);
        }
        Some(path)
    }

    /// The log file of `name`, for a job that marks it on its own thread
    /// before its process starts ([`Job::mark_log`]).
    fn log_path(&self, name: &str) -> Option<PathBuf> {
        let folder = self.ledger.log_folder.as_ref()?;
        Some(folder.join(format!("{name}.log")))
    }

    /// This run's marks, made at the first use; `None` without an
    /// operation to mark.
    fn log_marks(&self) -> Option<Arc<RunMarks>> {
        let operation = self.ledger.state.as_ref()?.operations.last()?;
        let at = &self.summary.started;
        let verb = self.verb.as_str();
        let marks = self
            .ledger
            .log_marks
            .get_or_init(|| Arc::new(RunMarks::new(&operation.id, verb, at)));
        Some(Arc::clone(marks))
    }
}
