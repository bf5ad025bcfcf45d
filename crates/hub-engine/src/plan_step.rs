//! `hub plan --plan-steps`: each component's plan step run for the
//! planner ([`hub_plan::plan::planned::PlanSteps`]). The planner decides
//! which components are planned and with which parameters; this only
//! starts the step's process, as a deploy starts a verb's (its
//! environment, `TF_VAR_*` for hub's built-in Terraform, secrets masked
//! in its lines), and reads the outputs it plans: `terraform show -json`
//! of the plan for built-in Terraform, the `Outputs:` block of a script's
//! or Makefile's stdout otherwise ([`crate::child::planned`]).
//!
//! A plan step runs the component's code. Its lines go to hub's stderr,
//! labelled `NAME (plan)`, never to the plan on stdout.

use crate::child::interrupt::Interrupts;
use crate::child::otp;
use crate::child::planned::parse_planned;
use crate::child::process::{self, Exit, Invocation};
use hub_manifest::diag::Warnings;
use hub_manifest::redact::SecretMasker;
use hub_params::format::substitution_text;
use hub_plan::env::{self, ComponentVariables, Nested};
use hub_plan::options::RunOptions;
use hub_plan::outcome::lines::{console_line, LineSink, Stream};
use hub_plan::plan::planned::{PlanSteps, PlannedOutput, StepRequest};
use hub_plan::source::discover::Implementation;
use hub_plan::source::stack::{absolute, Stack};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Runs plan steps with hub's environment, as the stack's components.
pub struct Runner<'s> {
    stack: &'s Stack,
    base: Vec<(String, String)>,
    reveal: bool,
    timeout: Option<std::time::Duration>,
    interrupts: Arc<Interrupts>,
}

impl<'s> Runner<'s> {
    /// `environment`: hub's own; `hub`: the running executable.
    pub fn new(
        stack: &'s Stack,
        options: &RunOptions,
        environment: &[(String, String)],
        hub: PathBuf,
    ) -> Self {
        let nested = Nested {
            hub,
            elaborate: stack.file.clone(),
            state: options.state.first().map(|s| absolute(s)),
            components_base_dir: options.components_base_dir.as_deref().map(absolute),
        };
        Runner {
            stack,
            base: env::base(options.os_environment, environment, &nested),
            reveal: options.reveal,
            timeout: options.running.timeout,
            interrupts: Interrupts::unwatched(),
        }
    }

    fn environment(&self, request: &StepRequest<'_>) -> Vec<(String, String)> {
        let bytes = otp::pad_bytes(request.manifest.lifecycle.options.random.bytes);
        let random = otp::pad_to_env(&otp::random_pad(bytes));
        let vars = ComponentVariables {
            component: request.component,
            params: request.params,
            random: &random,
            component_dir: request.dir,
            base_dir: &self.stack.base_dir,
        };
        // Said by the plan already, which expanded the same parameters.
        let env = env::component(&self.base, &vars, &mut Warnings::already_reported());
        match request.implementation {
            Implementation::Terraform { .. } => {
                hub_plan::terraform::environment(env, request.params)
            }
            _ => env,
        }
    }

    fn masker(&self, request: &StepRequest<'_>, env: &[(String, String)]) -> SecretMasker {
        let mut masker = SecretMasker::new(self.reveal);
        for param in request.params.iter().filter(|p| p.secret) {
            masker.add(&substitution_text(param.value.as_ref()));
        }
        masker.add_credentials_in(env);
        masker.add_secret_outputs(&request.manifest.outputs);
        masker
    }
}

impl PlanSteps for Runner<'_> {
    fn plan(&self, request: &StepRequest<'_>) -> Result<Vec<PlannedOutput>, String> {
        let Some((program, args)) = request.implementation.command() else {
            return Ok(Vec::new());
        };
        let env = self.environment(request);
        let masker = self.masker(request, &env);
        let invocation = Invocation {
            label: format!("{} (plan)", request.component),
            program,
            args,
            cwd: request.dir.to_path_buf(),
            env,
            log_file: None,
            timeout: self.timeout,
        };
        let finished = process::run(&invocation, &masker, &StderrSink, &self.interrupts)
            .map_err(|error| error.to_string())?;
        match finished.exit {
            Exit::Code(0) => {}
            exit => {
                let short = request.implementation.short(request.dir);
                return Err(format!("`{short}` ended with {exit}"));
            }
        }
        let planned = match request.implementation {
            Implementation::Terraform { .. } => {
                hub_plan::plan::planned::take_terraform_planned(request.dir)
                    .unwrap_or(Ok(Vec::new()))?
            }
            _ => parse_planned(&finished.stdout),
        };
        for output in planned.iter().filter(|o| o.secret) {
            if let Some(value) = &output.value {
                hub_manifest::masked::learn(&substitution_text(Some(value)));
            }
        }
        Ok(planned)
    }
}

/// Every line of a plan step to hub's stderr: stdout holds the plan.
struct StderrSink;

impl LineSink for StderrSink {
    fn line(&self, label: &str, _stream: Stream, line: &str) {
        let _ = std::io::stderr()
            .lock()
            .write_all(console_line(label, line).as_bytes());
    }

    fn note(&self, label: &str, message: &str) {
        let _ = writeln!(std::io::stderr().lock(), "hub: {label}: {message}");
    }
}
