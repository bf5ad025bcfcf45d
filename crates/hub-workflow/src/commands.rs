//! The edge between the command line and the library: turns parsed
//! arguments into validated options, runs the step, writes the result.

use crate::error::Error;
use hub_manifest::diag::Warnings;
use indexmap::IndexMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

pub(crate) mod change;
mod change_show;
pub(crate) mod check;
pub(crate) mod common;
pub(crate) mod deploy;
mod elaborate;
mod explain;
mod graph;
mod invoke;
mod output;
mod params;
pub(crate) mod params_report;
mod pipeline;
pub(crate) mod plan;
pub(crate) mod policy;
pub(crate) mod report;
pub(crate) mod requirements;
mod results;
pub(crate) mod reviewed;
pub(crate) mod runs;
pub(crate) mod selection;
pub(crate) mod state;
mod util;
mod validate;

pub use crate::ci::ci;
pub use change::change;
pub use check::check;
pub use common::parse_overrides;
pub use deploy::deploy;
pub use elaborate::elaborate;
pub use explain::explain;
pub use graph::graph;
pub use invoke::{invoke, render_templates};
pub use output::render_error;
pub use output::write_stdout;
pub use params::{cel, params};
pub use pipeline::pipeline;
pub use plan::{make_plan, plan};
pub use policy::policy;
pub use report::report;
pub use results::{Applied, PlanMade};
pub use runs::run;
pub use state::{state, unlock};
pub use util::util;
pub use validate::validate;

use common::{
    hub_executable, install_interrupts, parse_os_environment, refuse_near_typos, split_list,
};

/// The flags of a deploy, undeploy or plan, by group.
pub(crate) struct RunRequest<'a> {
    pub common: &'a crate::request::CommonRunArgs,
    /// `None` for a plan, which executes nothing.
    pub execute: Option<&'a crate::request::ExecuteArgs>,
    pub guess: bool,
    pub changed: bool,
    /// `--replace` (deploy and plan).
    pub replace: &'a [String],
    /// `--prune` (deploy and plan).
    pub prune: bool,
}

/// `hub undeploy`.
pub fn undeploy(args: crate::request::UndeployArgs, warnings: &mut Warnings) -> Result<(), Error> {
    runs::refuse_open_runs_of(&args.common.state)?;
    if args.change.change.is_some() {
        let manifest = &args.common.stack.manifest;
        return hub_engine::trace::traced_run("undeploy", manifest, || {
            change::undeploy(&args, &mut |check| undeploy_checked(&args, check, warnings))
        });
    }
    change::refuse_while_a_change_holds(
        "undeploy",
        &args.common.stack.manifest,
        &args.common.state,
        args.change_lock.ignore_change_lock,
    )?;
    let request = RunRequest {
        common: &args.common,
        execute: Some(&args.execute),
        guess: args.guess.guess,
        changed: false,
        replace: &[],
        prune: false,
    };
    run_stack(&request, hub_plan::Verb::Undeploy, warnings)
}

/// `undeploy --change ID`: the undeploy, once `check` accepts its plan
/// made now.
fn undeploy_checked(
    args: &crate::request::UndeployArgs,
    check: &mut dyn FnMut(&hub_view::preview::Preview) -> Result<(), Error>,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use hub_plan::Verb;
    let request = RunRequest {
        common: &args.common,
        execute: Some(&args.execute),
        guess: args.guess.guess,
        changed: false,
        replace: &[],
        prune: false,
    };
    let (mut stack, options) = load_run(&request, Verb::Undeploy, warnings)?;
    let environment = std::env::vars().collect();
    // The run below makes the plan again and says what it warns about.
    let mut quiet = Warnings::already_reported();
    let now = hub_plan::plan::prepare::plan(&stack, &options, environment, &mut quiet)?;
    check(&now)?;
    let change = change::context(&args.change, &args.common.state)?;
    policy::refuse_denied_files(
        &args.common.policy.policies,
        &stack,
        &now,
        &change,
        warnings,
    )?;
    run_loaded(&request, &mut stack, &options, warnings).result
}

/// Loads the stack and runs it ([`run_loaded`]).
fn run_stack(
    args: &RunRequest<'_>,
    verb: hub_plan::Verb,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    hub_engine::trace::traced_run(verb.as_str(), &args.common.stack.manifest, || {
        let (mut stack, mut options) = match load_run(args, verb, warnings) {
            Err(Error::NoneWithHealth(healths)) => return check::nothing_with_health(&healths),
            loaded => loaded?,
        };
        policy::guard_run(&args.common.policy.policies, &stack, &mut options, warnings)?;
        run_loaded(args, &mut stack, &options, warnings).result
    })
}

/// Runs a loaded stack, then prints the summary (also after a failure) on
/// stderr.
fn run_loaded(
    args: &RunRequest<'_>,
    stack: &mut hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    warnings: &mut Warnings,
) -> Applied {
    run_loaded_inner(args, stack, options, None, warnings).unwrap_or_else(Applied::refused)
}

/// [`run_loaded`] of a saved plan with `--replan`: a component planned
/// again during the run is checked by `replan`'s policies.
fn run_loaded_with(
    args: &RunRequest<'_>,
    stack: &mut hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    replan: Option<&dyn hub_plan::plan::replan::ReplanPolicies>,
    warnings: &mut Warnings,
) -> Applied {
    run_loaded_inner(args, stack, options, replan, warnings).unwrap_or_else(Applied::refused)
}

fn run_loaded_inner(
    args: &RunRequest<'_>,
    stack: &mut hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    replan: Option<&dyn hub_plan::plan::replan::ReplanPolicies>,
    warnings: &mut Warnings,
) -> Result<Applied, Error> {
    use hub_engine::options::Host;
    use hub_engine::run::engine;
    let interrupts = install_interrupts()?;
    let mut terminal = hub_params::TerminalPrompter;
    let prompter: Option<&mut dyn hub_params::Prompter> = if hub_params::interactive() {
        Some(&mut terminal)
    } else {
        None
    };
    // A live status line per running component when several run at once
    // on a terminal; plain lines otherwise.
    let live = (options.concurrency > 1 && std::io::stderr().is_terminal())
        .then(hub_view::progress::TerminalProgress::default);
    let log = |line: &str| match &live {
        Some(live) => live.println(line),
        None => hub_manifest::console::err_line(line),
    };
    let sink: &dyn hub_plan::outcome::lines::LineSink = match &live {
        Some(live) => live,
        None => &hub_plan::outcome::lines::ConsoleSink,
    };
    let host = Host {
        environment: std::env::vars().collect(),
        hub: hub_executable(),
        sink,
        interrupts: &interrupts,
        log: &log,
        prompter,
        progress: live.as_ref().map(|l| l as &dyn hub_plan::outcome::Progress),
        replan_policies: replan,
    };
    let finished = engine::run(stack, options, host, warnings);
    save_digest_cache(options, warnings);
    if let Some(summary) = &finished.summary {
        hub_manifest::console::err(&hub_view::summary::render(summary));
    }
    let reported = match (&args.common.run.report, &finished.summary) {
        (Some(path), Some(summary)) => write_run_report(
            path,
            summary,
            stack,
            options,
            finished.result.as_ref().err(),
            finished.plan.as_deref(),
            warnings,
        ),
        _ => Ok(()),
    };
    let report = args
        .common
        .run
        .report
        .as_deref()
        .filter(|_| reported.is_ok());
    shown_warnings(warnings, finished.warnings_shown, report);
    let result = match (finished.result, reported) {
        (Err(error), Err(report)) => {
            warnings.warn(None, report.to_string());
            Err(Error::from(error))
        }
        (Err(error), Ok(())) => Err(Error::from(error)),
        (Ok(()), reported) => reported,
    };
    Ok(Applied {
        result,
        summary: finished.summary.map(Box::new),
    })
}

/// Saves the digests of the files fingerprinted. Only a hint for the next
/// run: a cache that cannot be written is left as it was; a planted one is
/// said.
fn save_digest_cache(options: &hub_plan::options::RunOptions, warnings: &mut Warnings) {
    if let Some(cache) = &options.digest_cache {
        if let Err(error) = cache.save() {
            if hub_state::beside::Planted::of(&error).is_some() {
                warnings.warn(
                    Some(hub_manifest::diag::Location::file(cache.path())),
                    format!("the fingerprint cache was not written: {error}"),
                );
            }
        }
    }
}

/// The warnings the run printed as they came are not printed again at
/// the end: only their count is, after the summary.
fn shown_warnings(warnings: &mut Warnings, shown: usize, report: Option<&Path>) {
    if shown == 0 {
        return;
    }
    let mut rest = Warnings::new();
    for warning in warnings.iter().skip(shown) {
        rest.push(warning.clone());
    }
    *warnings = rest;
    let plural = if shown == 1 { "" } else { "s" };
    let also = report.map_or(String::new(), |path| {
        format!("; also in `{}`", path.display())
    });
    hub_manifest::console::err_line(&format!(
        "hub: {shown} warning{plural}, printed above (before the first component, or with the component each concerns){also}"
    ));
}

/// An elaborated file, or a stack manifest and its parameters files
/// elaborated in memory.
fn load_stack(
    manifest: &[PathBuf],
    base_dir: Option<&Path>,
    overrides: &IndexMap<String, String>,
    warnings: &mut Warnings,
) -> Result<hub_plan::source::stack::Stack, Error> {
    let (first, params) = manifest.split_first().ok_or(Error::Usage {
        flag: "MANIFEST",
        value: String::new(),
        reason: "give the elaborated file, or the stack manifest and its parameters files".into(),
    })?;
    Ok(hub_plan::source::stack::Stack::load(
        first, params, base_dir, overrides, warnings,
    )?)
}

/// The stack and the run options of a deploy, undeploy or plan.
pub(crate) fn load_run(
    args: &RunRequest<'_>,
    verb: hub_plan::Verb,
    warnings: &mut Warnings,
) -> Result<
    (
        hub_plan::source::stack::Stack,
        hub_plan::options::RunOptions,
    ),
    Error,
> {
    use hub_plan::options::RunOptions;
    let overrides = parse_overrides(&args.common.stack.environment)?;
    let os_environment = match args.execute {
        Some(execute) => parse_os_environment(&execute.os_environment)?,
        None => hub_plan::env::OsEnvironment::default(),
    };
    let states = state_paths(args)?;
    if let Some(execute) = args.execute {
        check_encryption(execute.encrypted)?;
    }
    let digest_cache = open_digest_cache(&states, args.execute);
    let stack = load_run_stack(args, &overrides, warnings)?;
    let healthy_or_not =
        check::with_health(&args.common.selection.status, &states, &stack, warnings)?;
    let options = RunOptions {
        verb: Some(verb),
        selection: {
            let mut selection = selection::resolve(
                &stack,
                &args.common.selection,
                args.common.stack.base_dir.as_deref(),
            )?;
            if let Some(components) = healthy_or_not {
                selection.components = components;
            }
            selection
        },
        state: states,
        overrides,
        os_environment,
        components_base_dir: args.common.stack.base_dir.clone(),
        force: args.common.run.force,
        guess: args.guess,
        reveal: args.common.run.reveal,
        concurrency: match args.common.run.jobs {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n,
        },
        scope: hub_plan::options::RunScope {
            changed: args.changed,
            replace: args.replace.to_vec(),
            prune: args.prune,
        },
        dry: args.execute.is_some_and(|e| e.dry),
        digest_cache,
        plan_steps: false,
        entry_digests: false,
        changes_only: false,
        running: running_options(args),
    };
    Ok((stack, options))
}

/// The state files of `-s a,b`: every location is written, the newest is
/// read (§11.5); none with `-n`.
fn state_paths(args: &RunRequest<'_>) -> Result<Vec<PathBuf>, Error> {
    let states: Vec<PathBuf> = match args.common.state.no_state {
        true => Vec::new(),
        false => split_list(std::slice::from_ref(&args.common.state.state))
            .into_iter()
            .map(PathBuf::from)
            .collect(),
    };
    if states.is_empty() && !args.common.state.no_state {
        return Err(Error::Usage {
            flag: "-s",
            value: args.common.state.state.clone(),
            reason: "give a state file (several separated by commas), or -n for no state".into(),
        });
    }
    Ok(states)
}

/// The stack of a run: loaded (elaborated when need be), near typos
/// refused, a stale elaborated file warned about, and the components of
/// clouds not enabled (`--clouds`) left out.
fn load_run_stack(
    args: &RunRequest<'_>,
    overrides: &IndexMap<String, String>,
    warnings: &mut Warnings,
) -> Result<hub_plan::source::stack::Stack, Error> {
    let enabled = hub_plan::order::clouds::Enabled::resolve(&args.common.stack.clouds, &|name| {
        std::env::var(name).ok()
    })
    .map_err(|error| Error::Usage {
        flag: "--clouds",
        value: error.0.clone(),
        reason: error.to_string(),
    })?;
    let mut stack = hub_engine::trace::in_span("elaborate", || {
        load_stack(
            &args.common.stack.manifest,
            args.common.stack.base_dir.as_deref(),
            overrides,
            warnings,
        )
    })?;
    refuse_near_typos(
        warnings,
        args.common.stack.strict,
        args.common.stack.lenient,
    )?;
    hub_plan::source::stale::warn_if_stale(&stack, warnings);
    if let Some(warning) = hub_plan::order::clouds::filter(&mut stack.elaborated, &enabled) {
        warnings.warn(None, warning);
    }
    // From here on the elaborated file's text is read only to point at
    // something reported: kept deflated before the state is read.
    stack.pack_source();
    Ok(stack)
}

/// What only the run needs of the request: how the state is written, the
/// recorded arguments, `--why`, `--fail-fast`, the timeouts.
fn running_options(args: &RunRequest<'_>) -> hub_plan::options::RunningOptions {
    hub_plan::options::RunningOptions {
        write: hub_state::WriteOptions {
            compressed: args.execute.is_some_and(|e| e.compressed),
            format: args
                .execute
                .map_or(hub_state::StateFormat::default(), |e| e.state_format),
            encrypted: args.execute.and_then(|e| e.encrypted),
        },
        args: hub_manifest::redact::recorded_args(std::env::args()),
        why: args.execute.is_some_and(|e| e.why),
        fail_fast: args.execute.is_some_and(|e| e.fail_fast),
        lock_timeout: args.common.state.lock.lock_timeout,
        timeout: args.execute.and_then(|e| e.timeout),
        expected_state: None,
        planned: None,
        // Set by `deploy --plan`/`--change` with its policies.
        replan: false,
        reviewed: None,
        saved: None,
        report_plan: args.common.run.report.is_some(),
    }
}

/// Fingerprints reuse the digests of unchanged files kept beside the
/// (first) state: runs that write the state also write the cache; plans
/// and dry runs only read it.
fn open_digest_cache(
    states: &[PathBuf],
    execute: Option<&crate::request::ExecuteArgs>,
) -> Option<std::sync::Arc<hub_plan::decide::digest_cache::DigestCache>> {
    use hub_plan::decide::digest_cache::{self, DigestCache};
    let state = states.first().filter(|s| !hub_state::is_remote(s))?;
    let writable = execute.is_some_and(|e| !e.dry);
    Some(std::sync::Arc::new(DigestCache::open(
        &digest_cache::path_beside(state),
        writable,
    )))
}

/// `--encrypted=true` needs `HUB_CRYPTO_PASSWORD`: refused before anything
/// runs. The password seals remote copies only; local files stay plain.
fn check_encryption(flag: Option<bool>) -> Result<(), Error> {
    hub_state::crypto::remote_password(flag)
        .map(drop)
        .map_err(|error| Error::Usage {
            flag: "--encrypted",
            value: "true".into(),
            reason: error.to_string(),
        })
}

/// `--report FILE.json` of a deploy or undeploy.
fn write_run_report(
    path: &Path,
    summary: &hub_plan::outcome::Summary,
    stack: &hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    error: Option<&hub_engine::run::error::EngineError>,
    plan: Option<&hub_plan::plan::Plan>,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    use hub_engine::run::error::EngineError;
    use hub_view::report::{self, ReportContext, RunReport};
    let result = match error {
        None => "success",
        Some(EngineError::Interrupted { .. }) => "interrupted",
        Some(_) => "failure",
    };
    let context = ReportContext {
        kind: summary.verb.as_str().to_string(),
        stack: stack.elaborated.stack.meta.name.clone(),
        state: options.state.first().map(|p| p.display().to_string()),
        jobs: options.concurrency,
        started: summary.started.clone(),
        ended: summary.ended.clone(),
        result: result.to_string(),
        error: error.map(ToString::to_string),
    };
    let mut run = RunReport::from_summary(summary, context);
    run.warnings = warnings.iter().map(ToString::to_string).collect();
    match hub_view::html::is_html(path) {
        true => self::report::write_html(path, &run, plan, warnings),
        false => Ok(report::write(path, &run)?),
    }
}
