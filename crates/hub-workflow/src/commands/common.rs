//! What the commands share: `NAME=value` flags and lists, flags with an
//! environment fallback, the interrupt handler, the running hub's path,
//! the refusal of near typos, and the plan made with the components'
//! plan steps when asked.

use crate::error::Error;
use hub_manifest::diag::Warnings;
use indexmap::IndexMap;
use std::path::PathBuf;

/// Near typos of known keys stop `elaborate`, `deploy`, `undeploy` and
/// `plan` before anything is written where [`hub_manifest::typos`] decides
/// so (the user's own files by default, everywhere with `--strict`,
/// nowhere with `--lenient`); the others stay warnings.
pub(crate) fn refuse_near_typos(
    warnings: &mut Warnings,
    strict: bool,
    lenient: bool,
) -> Result<(), Error> {
    let policy = hub_manifest::typos::TypoPolicy::from_flags(strict, lenient);
    Ok(hub_manifest::typos::refuse(warnings, policy)?)
}

/// A spelling of the command line that still works and is going away:
/// "`hub explain s.state` is deprecated: write `hub explain -s s.state`".
pub(crate) fn deprecated(warnings: &mut Warnings, old: &str, new: &str) {
    warnings.warn(None, format!("`{old}` is deprecated: write `{new}`"));
}

/// `K=V,K=V` (the flag may also be repeated); the value may contain `=`.
pub fn parse_overrides(flags: &[String]) -> Result<IndexMap<String, String>, Error> {
    parse_pairs("-e", flags)
}

/// `NAME=value[,NAME=value]` flags, in order.
pub(crate) fn parse_pairs(
    flag: &'static str,
    flags: &[String],
) -> Result<IndexMap<String, String>, Error> {
    let mut out = IndexMap::new();
    for pair in flags
        .iter()
        .flat_map(|f| f.split(','))
        .filter(|p| !p.is_empty())
    {
        let (key, value) = pair.split_once('=').ok_or_else(|| Error::Usage {
            flag,
            value: pair.to_string(),
            reason: "expected NAME=value".into(),
        })?;
        out.insert(key.to_string(), value.to_string());
    }
    Ok(out)
}

pub(crate) fn split_list(flags: &[String]) -> Vec<String> {
    flags
        .iter()
        .flat_map(|f| f.split(','))
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// The value of `variable` unless it is unset or empty.
pub(crate) fn non_empty_env(variable: &str) -> Option<String> {
    std::env::var(variable).ok().filter(|v| !v.is_empty())
}

/// A path given with `flag`, else the value of `variable`.
pub(crate) fn flag_or_env(
    given: Option<PathBuf>,
    flag: &'static str,
    variable: &str,
) -> Result<PathBuf, Error> {
    given
        .or_else(|| non_empty_env(variable).map(PathBuf::from))
        .ok_or_else(|| Error::Usage {
            flag,
            value: String::new(),
            reason: format!("give it, or set {variable} (a deploy sets it for its components)"),
        })
}

pub(crate) fn parse_os_environment(text: &str) -> Result<hub_plan::env::OsEnvironment, Error> {
    text.parse().map_err(|reason| Error::Usage {
        flag: "--os-environment",
        value: text.to_string(),
        reason,
    })
}

pub(crate) fn install_interrupts(
) -> Result<std::sync::Arc<hub_engine::child::interrupt::Interrupts>, Error> {
    use hub_engine::child::interrupt::{Interrupts, DEFAULT_GRACE};
    Interrupts::install(DEFAULT_GRACE)
        .map_err(|e| Error::from(hub_engine::run::error::EngineError::Signals(e)))
}

/// The running hub, for components that call it back (`$HUB`).
pub(crate) fn hub_executable() -> PathBuf {
    std::env::current_exe().unwrap_or_else(|_| PathBuf::from("hub"))
}

/// Asks `question` on the terminal, "no" unless answered; a prompt that
/// fails (no terminal, an interrupt) gives its error, with the cursor shown
/// again.
pub(crate) fn confirm(question: String) -> Result<bool, String> {
    dialoguer::Confirm::new()
        .with_prompt(question)
        .default(false)
        .interact()
        .map_err(|error| {
            let _ = dialoguer::console::Term::stderr().show_cursor();
            error.to_string()
        })
}

/// The clock of this process: `HUB_NOW` when set (tests pin time with it),
/// else the system's.
pub(crate) fn clock() -> Result<hub_state::Clock, Error> {
    Ok(hub_state::Clock::from_env(&|name| {
        std::env::var(name).ok()
    })?)
}

/// The plan between runs, with the components' plan steps run when
/// `options.plan_steps` asks (`--plan-steps`).
pub(crate) fn plan_with_steps(
    stack: &hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    environment: Vec<(String, String)>,
    warnings: &mut Warnings,
) -> Result<hub_view::preview::Preview, hub_plan::error::PlanningError> {
    let hub = hub_executable();
    let runner = hub_engine::plan_step::Runner::new(stack, options, &environment, hub);
    let steps = options
        .plan_steps
        .then_some(&runner as &dyn hub_plan::plan::planned::PlanSteps);
    hub_plan::plan::prepare::plan_with(stack, options, environment, steps, warnings)
}
