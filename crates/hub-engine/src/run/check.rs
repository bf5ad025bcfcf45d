//! `hub check`: each deployed component's `check` verb, run read-only
//! with the parameters the state recorded for it, its result kept in the
//! state as the component's health.
//!
//! * What runs: the component's own `check` (a Makefile target `check:`,
//!   a `check.sh` script or an extension, as any verb is found); for a
//!   folder of `*.tf` files without one, hub's built-in Terraform runs
//!   `terraform plan -detailed-exitcode`. A component with neither is
//!   `unverifiable`.
//! * What the exit says: 0 in sync (`healthy`), 2 drifted (`drifted`),
//!   anything else (or a check that cannot start) `failed`.
//! * Evidence: every line the check prints is masked (the recorded secret
//!   parameters and outputs, credentials in the environment) and appended
//!   to `STATE.logs/<component>.check.log`; the state keeps the time and
//!   the `sha256:` of those lines.
//! * Checks run `concurrency` at a time. The state is read without the
//!   lock; the lock is taken only for the short read-modify-write of the
//!   results at the end (`write_health`), so a check never holds a
//!   deploy back for longer than that write.

use super::error::EngineError;
use crate::child::interrupt::Interrupts;
use crate::child::otp;
use crate::child::process::{self, Exit, Invocation};
use hub_manifest::diag::Warnings;
use hub_manifest::redact::SecretMasker;
use hub_params::{ExpandedParam, Origin};
use hub_plan::env::{self, ComponentVariables, Nested, OsEnvironment};
use hub_plan::error::PlanningError;
use hub_plan::order::schedule::{self as planning, Schedule, Selection, Verb};
use hub_plan::outcome::lines::{LineSink, Stream};
use hub_plan::source::discover::{self, Implementation};
use hub_plan::source::stack::{absolute, Stack};
use hub_state::{self as state, Clock, ComponentStatus, HealthStatus, Locations, LockWait, State};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// The last lines of a drifted or failed check kept for the report.
const EVIDENCE_LINES: usize = 10;

pub struct CheckOptions {
    /// The state locations: the newest is read, all are written.
    pub state: Vec<PathBuf>,
    pub selection: Selection,
    pub components_base_dir: Option<PathBuf>,
    pub os_environment: OsEnvironment,
    pub reveal: bool,
    /// `-j`: how many checks run at once (at least one).
    pub concurrency: usize,
    /// Stop a check that runs longer than this.
    pub timeout: Option<Duration>,
    /// How long to wait for the state's lock before writing the results.
    pub lock_timeout: Duration,
    pub state_format: state::StateFormat,
}

/// One component's check.
#[derive(Debug, Clone)]
pub struct Checked {
    pub component: String,
    pub health: HealthStatus,
    /// What ran (`make check (in …)`, a script, hub's Terraform), or why
    /// nothing did.
    pub by: String,
    /// The last lines of a drifted or failed check, masked; for
    /// Terraform, its summary of the changes.
    pub evidence: Vec<String>,
    /// `sha256:<hex>` of every line logged; empty when nothing ran.
    pub digest: String,
}

impl Checked {
    /// A check that could not run, or whose component is not there.
    fn failed(name: &str, by: String, why: String) -> Checked {
        Checked {
            component: name.to_string(),
            health: HealthStatus::Failed,
            by,
            evidence: vec![why],
            digest: String::new(),
        }
    }

    /// A check's result from the (masked) lines it printed: their last
    /// ones as evidence unless it is healthy, and their digest.
    fn from_lines(component: &str, by: String, health: HealthStatus, lines: &[String]) -> Checked {
        Checked {
            component: component.to_string(),
            health,
            by,
            evidence: match health {
                HealthStatus::Healthy => Vec::new(),
                _ => lines[lines.len().saturating_sub(EVIDENCE_LINES)..].to_vec(),
            },
            digest: digest(lines),
        }
    }
}

/// The result of `hub check`.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// In the stack's order.
    pub checked: Vec<Checked>,
    /// Selected components the state does not record as deployed.
    pub not_deployed: Vec<String>,
    /// When the results were recorded.
    pub time: String,
    /// The state locations written.
    pub written: Vec<PathBuf>,
}

impl CheckReport {
    /// The count of each health, in [`HealthStatus`] order.
    pub fn counts(&self) -> [(HealthStatus, usize); 4] {
        [
            HealthStatus::Healthy,
            HealthStatus::Drifted,
            HealthStatus::Failed,
            HealthStatus::Unverifiable,
        ]
        .map(|h| (h, self.checked.iter().filter(|c| c.health == h).count()))
    }
}

/// Runs the checks of the selected deployed components and records their
/// health in the state.
pub fn check(
    stack: &Stack,
    options: &CheckOptions,
    environment: &[(String, String)],
    hub: PathBuf,
    interrupts: &Interrupts,
    warnings: &mut Warnings,
) -> Result<CheckReport, EngineError> {
    let order = planning::validate(&stack.elaborated)?;
    let plan = Schedule::new(
        &stack.elaborated,
        order,
        Verb::Deploy,
        &options.selection,
        None,
    )?;
    let read_path = state::locations::to_read(&options.state)
        .or(options.state.first().map(PathBuf::as_path))
        .map(Path::to_path_buf)
        .ok_or(EngineError::Planning(PlanningError::StateRequired {
            flag: "check",
            path: None,
        }))?;
    let stored = state::read(&read_path, warnings)?.ok_or(EngineError::Planning(
        PlanningError::StateRequired {
            flag: "check",
            path: Some(read_path.clone()),
        },
    ))?;
    let deployed = ComponentStatus::Deployed.as_str();
    let (targets, not_deployed): (Vec<String>, Vec<String>) =
        plan.selected.iter().cloned().partition(|name| {
            stored
                .components
                .get(name)
                .is_some_and(|entry| entry.status == deployed)
        });
    let context = Context {
        stack,
        options,
        stored: &stored,
        read_path: &read_path,
        environment,
        hub,
        interrupts,
    };
    let checked = context.check_all(&targets, warnings);
    if let Some(signal) = interrupts.last_signal() {
        return Err(EngineError::Interrupted {
            component: None,
            signal,
        });
    }
    let (time, written) = write_health(options, &checked, warnings)?;
    Ok(CheckReport {
        checked,
        not_deployed,
        time,
        written,
    })
}

impl Context<'_> {
    /// Checks `targets`, `concurrency` at a time; the results (and each
    /// check's warnings) in the order of `targets`.
    fn check_all(&self, targets: &[String], warnings: &mut Warnings) -> Vec<Checked> {
        let results: Mutex<Vec<Option<(Checked, Warnings)>>> =
            Mutex::new(targets.iter().map(|_| None).collect());
        let next = AtomicUsize::new(0);
        let workers = self.options.concurrency.clamp(1, targets.len().max(1));
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(|| loop {
                    let at = next.fetch_add(1, Ordering::SeqCst);
                    let Some(name) = targets.get(at) else {
                        break;
                    };
                    let mut own = Warnings::new();
                    let checked = self.check_one(name, &mut own);
                    results
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)[at] =
                        Some((checked, own));
                });
            }
        });
        let mut checked = Vec::with_capacity(targets.len());
        let results = results
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (one, own) in results.into_iter().flatten() {
            own.into_warnings().for_each(|w| warnings.push(w));
            checked.push(one);
        }
        checked
    }
}

struct Context<'a> {
    stack: &'a Stack,
    options: &'a CheckOptions,
    stored: &'a State,
    read_path: &'a Path,
    environment: &'a [(String, String)],
    hub: PathBuf,
    interrupts: &'a Interrupts,
}

impl Context<'_> {
    fn check_one(&self, name: &str, warnings: &mut Warnings) -> Checked {
        let (Some(reference), Some(manifest)) = (
            self.stack.reference(name),
            self.stack.elaborated.component(name),
        ) else {
            return Checked::failed(name, "nothing".into(), "not in the stack".into());
        };
        let dir = match self
            .stack
            .component_dir(reference, self.options.components_base_dir.as_deref())
        {
            Ok(dir) => dir,
            Err(error) => return Checked::failed(name, "nothing".into(), error.to_string()),
        };
        let implementation = match find_check(name, &dir) {
            Ok(implementation) => implementation,
            Err(checked) => return checked,
        };
        let params = recorded_parameters(self.stored, name);
        let child_env = self.check_environment(name, manifest, &params, &dir, warnings);
        let masker = self.check_masker(manifest, &params, &child_env);
        let log_file =
            hub_plan::decide::records::log_dir(self.read_path).join(format!("{name}.check.log"));
        let Some(implementation) = implementation else {
            let step = TerraformStep {
                name,
                dir: &dir,
                masker: &masker,
                log_file: &log_file,
                interrupts: self.interrupts,
            };
            let deadline = self.options.timeout.filter(|limit| !limit.is_zero());
            return terraform_check(&step, &params, child_env, deadline);
        };
        let by = short_description(&implementation);
        let Some((program, args)) = implementation.command() else {
            return Checked {
                component: name.to_string(),
                health: HealthStatus::Unverifiable,
                by,
                evidence: Vec::new(),
                digest: String::new(),
            };
        };
        let child_env = match implementation {
            Implementation::Terraform { .. } => {
                hub_plan::terraform::environment(child_env, &params)
            }
            _ => child_env,
        };
        let invocation = Invocation {
            label: name.to_string(),
            program,
            args,
            cwd: dir,
            env: child_env,
            log_file: Some(log_file),
            timeout: self.options.timeout.filter(|limit| !limit.is_zero()),
        };
        self.run_check(name, &implementation, by, &invocation, &masker)
    }

    /// The environment a component's check runs with: hub's, with the
    /// parameters the state recorded for it.
    fn check_environment(
        &self,
        name: &str,
        manifest: &hub_manifest::Manifest,
        params: &[ExpandedParam],
        dir: &Path,
        warnings: &mut Warnings,
    ) -> Vec<(String, String)> {
        let nested = Nested {
            hub: self.hub.clone(),
            elaborate: self.stack.file.clone(),
            state: Some(absolute(self.read_path)),
            components_base_dir: self.options.components_base_dir.as_deref().map(absolute),
        };
        let base = env::base(self.options.os_environment, self.environment, &nested);
        let bytes = otp::pad_bytes(manifest.lifecycle.options.random.bytes);
        let random = otp::pad_to_env(&otp::random_pad(bytes));
        let vars = ComponentVariables {
            component: name,
            params,
            random: &random,
            component_dir: dir,
            base_dir: &self.stack.base_dir,
        };
        env::component(&base, &vars, warnings)
    }

    /// What a check's lines are masked with: the recorded secret
    /// parameters and outputs, and credentials in its environment.
    fn check_masker(
        &self,
        manifest: &hub_manifest::Manifest,
        params: &[ExpandedParam],
        child_env: &[(String, String)],
    ) -> SecretMasker {
        let mut masker = SecretMasker::new(self.options.reveal);
        for param in params.iter().filter(|p| p.secret) {
            masker.add(&hub_params::format::substitution_text(param.value.as_ref()));
        }
        masker.add_credentials_in(child_env);
        masker.add_secret_outputs(&manifest.outputs);
        hub_plan::decide::records::mask_recorded_secrets(&mut masker, self.stored);
        masker
    }

    /// Runs a check's process; its exit says the component's health.
    fn run_check(
        &self,
        name: &str,
        implementation: &Implementation,
        by: String,
        invocation: &Invocation,
        masker: &SecretMasker,
    ) -> Checked {
        let sink = CollectStreams::default();
        let finished = match process::run(invocation, masker, &sink, self.interrupts) {
            Ok(finished) => finished,
            Err(error) => return Checked::failed(name, by, error.to_string()),
        };
        let lines: Vec<String> = sink.take().into_iter().map(|(_, line)| line).collect();
        let exit = match (implementation, finished.exit) {
            // make exits 2 whatever its recipe's status: the recipe's is in
            // make's last words (`make: *** [Makefile:2: check] Error 2`).
            (Implementation::Make { .. }, Exit::Code(2)) => {
                Exit::Code(make_recipe_code(&lines).unwrap_or(1))
            }
            (_, exit) => exit,
        };
        let health = match exit {
            Exit::Code(0) => HealthStatus::Healthy,
            Exit::Code(2) => HealthStatus::Drifted,
            _ => HealthStatus::Failed,
        };
        let mut checked = Checked::from_lines(name, by, health, &lines);
        if health == HealthStatus::Failed {
            checked.evidence.push(format!("exit: {}", exit_text(exit)));
        }
        checked
    }
}

/// What runs a component's check: its own `check`, `None` for hub's
/// built-in Terraform check (a Terraform folder without one), or the
/// result when there is nothing to run.
fn find_check(name: &str, dir: &Path) -> Result<Option<Implementation>, Checked> {
    match discover::discover(dir, "check", false) {
        Ok(found) => Ok(Some(found)),
        Err(discover::DiscoverError::NotFound { .. }) => {
            match discover::discover(dir, "deploy", false) {
                Ok(Implementation::Terraform { .. }) => Ok(None),
                _ => Err(Checked {
                    component: name.to_string(),
                    health: HealthStatus::Unverifiable,
                    by: "no check".into(),
                    evidence: Vec::new(),
                    digest: String::new(),
                }),
            }
        }
        Err(error) => Err(Checked::failed(name, "nothing".into(), error.to_string())),
    }
}

/// The status of the recipe that stopped make, from its
/// `make: *** [Makefile:2: check] Error N` line; `None` when make stopped
/// for another reason (no such target, a syntax error).
fn make_recipe_code(lines: &[String]) -> Option<i32> {
    lines.iter().rev().find_map(|line| {
        let rest = line.strip_prefix("make")?;
        let (_, after) = rest.split_once(": *** [")?;
        after.rsplit_once("] Error ")?.1.trim().parse().ok()
    })
}

/// Hub's built-in Terraform check: `terraform init`, then `terraform plan
/// -detailed-exitcode`, both within `timeout` (one limit for the two) and
/// stopped by an interrupt, their lines masked and logged as a check
/// script's are.
fn terraform_check(
    step: &TerraformStep<'_>,
    params: &[ExpandedParam],
    base: Vec<(String, String)>,
    timeout: Option<Duration>,
) -> Checked {
    let by = "terraform plan -detailed-exitcode".to_string();
    let check = match hub_plan::terraform::drift_check(params, &base) {
        Ok(check) => check,
        Err(reason) => {
            return step.checked(
                by,
                HealthStatus::Failed,
                reason.lines().map(String::from).collect(),
            )
        }
    };
    let started = std::time::Instant::now();
    let init = match step.run(&check, hub_plan::terraform::DRIFT_INIT, timeout) {
        Ok(init) => init,
        Err(reason) => return step.checked(by, HealthStatus::Failed, vec![reason]),
    };
    if init.exit != Exit::Code(0) {
        return step.checked(by, HealthStatus::Failed, init.failure("init", step.dir));
    }
    let left = timeout.map(|limit| {
        limit
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(1))
    });
    let plan = match step.run(&check, hub_plan::terraform::DRIFT_PLAN, left) {
        Ok(plan) => plan,
        Err(reason) => return step.checked(by, HealthStatus::Failed, vec![reason]),
    };
    match plan.exit {
        Exit::Code(0) => step.checked(by, HealthStatus::Healthy, vec!["No changes.".to_string()]),
        Exit::Code(2) => step.checked(
            by,
            HealthStatus::Drifted,
            hub_plan::terraform::plan_summary(&plan.stdout()),
        ),
        _ => step.checked(by, HealthStatus::Failed, plan.failure("plan", step.dir)),
    }
}

/// Where the steps of a built-in Terraform check run, and what they share.
struct TerraformStep<'a> {
    name: &'a str,
    dir: &'a Path,
    masker: &'a SecretMasker,
    log_file: &'a Path,
    interrupts: &'a Interrupts,
}

/// One step's exit and masked lines, by stream.
struct StepOutcome {
    exit: Exit,
    lines: Vec<(Stream, String)>,
}

impl StepOutcome {
    fn stdout(&self) -> String {
        let out = self
            .lines
            .iter()
            .filter(|(stream, _)| *stream == Stream::Stdout);
        out.map(|(_, line)| format!("{line}\n")).collect()
    }

    /// Why the step failed: how it ended, and the last lines it wrote to
    /// stderr (stdout when it wrote none there).
    fn failure(&self, what: &str, dir: &Path) -> Vec<String> {
        let of = |wanted: Stream| -> Vec<&str> {
            let lines = self.lines.iter().filter(|(stream, _)| *stream == wanted);
            lines
                .map(|(_, line)| line.as_str())
                .filter(|l| !l.trim().is_empty())
                .collect()
        };
        let mut tail = of(Stream::Stderr);
        if tail.is_empty() {
            tail = of(Stream::Stdout);
        }
        let mut lines = vec![format!(
            "`terraform {what}` in `{}` ended: {}",
            dir.display(),
            exit_text(self.exit)
        )];
        lines.extend(
            tail[tail.len().saturating_sub(5)..]
                .iter()
                .map(|l| l.to_string()),
        );
        lines
    }
}

impl TerraformStep<'_> {
    fn run(
        &self,
        check: &hub_plan::terraform::DriftCheck,
        args: &[&str],
        timeout: Option<Duration>,
    ) -> Result<StepOutcome, String> {
        let invocation = Invocation {
            label: self.name.to_string(),
            program: check.binary.clone(),
            args: args.iter().map(|a| a.to_string()).collect(),
            cwd: self.dir.to_path_buf(),
            env: check.env.clone(),
            log_file: Some(self.log_file.to_path_buf()),
            timeout,
        };
        let sink = CollectStreams::default();
        let finished = process::run(&invocation, self.masker, &sink, self.interrupts)
            .map_err(|error| format!("cannot run `{}`: {error}", check.binary.display()))?;
        Ok(StepOutcome {
            exit: finished.exit,
            lines: sink.take(),
        })
    }

    fn checked(&self, by: String, health: HealthStatus, lines: Vec<String>) -> Checked {
        let lines: Vec<String> = lines
            .iter()
            .map(|l| self.masker.mask(l).into_owned())
            .collect();
        append_log(self.log_file, &lines);
        Checked::from_lines(self.name, by, health, &lines)
    }
}

/// Keeps the masked lines of one check (or step) with their stream, in
/// order.
#[derive(Default)]
struct CollectStreams(Mutex<Vec<(Stream, String)>>);

impl CollectStreams {
    fn take(&self) -> Vec<(Stream, String)> {
        std::mem::take(
            &mut *self
                .0
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl LineSink for CollectStreams {
    fn line(&self, _label: &str, stream: Stream, line: &str) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push((stream, line.to_string()));
    }
}

/// What runs the check, without the component's folder: `make check`,
/// `check.sh`.
fn short_description(implementation: &Implementation) -> String {
    let file = |path: &Path| {
        path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    };
    match implementation {
        Implementation::Make { target, .. } => format!("make {target}"),
        Implementation::Script { path } => file(path),
        Implementation::Extension { program, args } => std::iter::once(file(program))
            .chain(args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" "),
        Implementation::Terraform { verb, .. } => format!("terraform ({verb})"),
        Implementation::Bare => "nothing".into(),
    }
}

/// Appends to the check's log beside the state as a component's log is
/// (never through a link, never another user's file: see
/// `hub_state::beside`).
fn append_log(path: &Path, lines: &[String]) {
    use std::io::Write;
    if let Some(folder) = path.parent() {
        let _ = hub_manifest::private::create_folder(folder);
    }
    if let Ok(mut file) = hub_state::beside::open_append(path, hub_manifest::private::FILE_MODE) {
        for line in lines {
            let _ = writeln!(file, "{line}");
        }
    }
}

fn exit_text(exit: Exit) -> String {
    match exit {
        Exit::Code(code) => format!("code {code}"),
        Exit::Signal(signal) => format!("killed by signal {signal}"),
        Exit::Interrupted { signal } => format!("interrupted (signal {signal})"),
        Exit::TimedOut => "timed out".into(),
    }
}

/// `sha256:<hex>` of the lines, each ended by a line break.
fn digest(lines: &[String]) -> String {
    let mut hash = Sha256::new();
    for line in lines {
        hash.update(line.as_bytes());
        hash.update(b"\n");
    }
    format!("sha256:{}", hex(&hash.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The parameters the state recorded for the component, as the
/// environment of its check sees them.
fn recorded_parameters(stored: &State, name: &str) -> Vec<ExpandedParam> {
    let Some(entry) = stored.components.get(name) else {
        return Vec::new();
    };
    entry
        .parameters
        .iter()
        .map(|p| ExpandedParam {
            name: p.name().to_string(),
            value: p.non_null_value().cloned(),
            env: p.env().to_string(),
            origin: Origin::State,
            expression: None,
            declared: None,
            secret: hub_manifest::secrets::looks_secret(p.name()),
        })
        .collect()
}

/// Takes the lock, reads the newest state, sets each checked component's
/// health and writes every location: the lock is held for this write only.
fn write_health(
    options: &CheckOptions,
    checked: &[Checked],
    warnings: &mut Warnings,
) -> Result<(String, Vec<PathBuf>), EngineError> {
    let clock = Clock::from_env(&|name| std::env::var(name).ok())?;
    let wait = LockWait::new(options.lock_timeout, None);
    let locked = Locations::lock_waiting(&options.state, "check", &clock, &wait, warnings)?;
    let read_path = locked.to_read().unwrap_or(locked.first()).to_path_buf();
    let Some(mut state) = state::read(&read_path, warnings)? else {
        return Err(EngineError::Planning(PlanningError::StateRequired {
            flag: "check",
            path: Some(read_path),
        }));
    };
    let time = clock.now();
    for one in checked {
        if let Some(entry) = state.components.get_mut(&one.component) {
            entry.health = Some(state::Health {
                status: one.health.into(),
                time: time.clone(),
                digest: one.digest.clone(),
            });
        }
    }
    let read_serial = state.serial;
    let write = state::WriteOptions {
        compressed: is_compressed(&read_path),
        format: options.state_format,
        encrypted: None,
    };
    let mut writer =
        state::StateWriter::open_locked(&locked, write, Some((&read_path, read_serial)))?;
    writer.write(&mut state)?;
    for failure in writer.take_failures() {
        warnings.warn(None, failure.to_string());
    }
    let written = writer.written().map(Path::to_path_buf).collect();
    drop(writer);
    drop(locked);
    Ok((time, written))
}

fn is_compressed(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 2];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|_| magic == [0x1f, 0x8b])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_covers_every_line_and_its_break() {
        let one = digest(&["a".into(), "b".into()]);
        assert_eq!(one, digest(&["a".into(), "b".into()]));
        assert_ne!(one, digest(&["ab".into()]));
        assert!(one.starts_with("sha256:") && one.len() == 7 + 64);
    }

    #[test]
    fn the_recipe_status_is_read_from_make_s_last_words() {
        let lines = |last: &str| vec!["replicas: want 2".to_string(), last.to_string()];
        let code = |last: &str| make_recipe_code(&lines(last));
        assert_eq!(code("make: *** [Makefile:2: check] Error 2"), Some(2));
        assert_eq!(code("make[1]: *** [Makefile:4: check] Error 1"), Some(1));
        assert_eq!(
            code("make: *** No rule to make target 'check'.  Stop."),
            None
        );
        assert_eq!(code("want 2, found 3"), None);
    }

    #[test]
    fn health_names_are_those_the_state_keeps() {
        let names = [
            HealthStatus::Healthy,
            HealthStatus::Drifted,
            HealthStatus::Failed,
            HealthStatus::Unverifiable,
        ]
        .map(HealthStatus::as_str);
        assert_eq!(names, ["healthy", "drifted", "failed", "unverifiable"]);
    }
}
