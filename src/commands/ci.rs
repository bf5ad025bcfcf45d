//! `hub ci`: the CI event read ([`hub_engine::ci`]), the operation it asks
//! for run in this process through the code of `hub plan` and `hub
//! deploy`, then the comment written and the status line printed.

use super::{load_run, preview_between_runs, run_loaded_keeping, RunRequest};
use crate::cli::{
    CiArgs, CommonRunArgs, ExecuteArgs, LockTimeoutArgs, RunArgs, SelectionArgs, StackArgs,
    StateArgs,
};
use crate::error::Error;
use hub_engine::ci::comment::{Done, LogTail, Report};
use hub_engine::ci::{self, Access, Event, Operation};
use hub_engine::order::plan::Verb;
use hub_engine::view::preview::Preview;
use hub_engine::view::summary::Summary;
use hub_manifest::diag::Warnings;
use std::path::Path;

/// How many lines of a failed component's log the comment shows.
const TAIL_LINES: usize = 20;

/// `hub ci`.
pub fn ci(args: CiArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let lookup = |name: &str| std::env::var(name).ok();
    let event = ci::read(&lookup, &|path| std::fs::read_to_string(path))?;
    let access = Access {
        associations: args
            .allow_association
            .iter()
            .map(|a| a.trim().to_ascii_uppercase())
            .filter(|a| !a.is_empty())
            .collect(),
        users: args.allow_user.clone(),
    };
    let operation = ci::decide(&event, &access);
    let ran = run(&args, &event, &operation, warnings);
    let done = match &ran {
        Ran::Planned(plan) => Done::Planned(plan),
        Ran::Applied {
            summary: Some(summary),
            error,
            tails,
        } => Done::Applied {
            summary,
            error: error.clone(),
            tails: tails.clone(),
        },
        Ran::Applied {
            summary: None,
            error,
            ..
        } => Done::Failed(error.clone().unwrap_or_default()),
        Ran::Failed(error) => Done::Failed(error.clone()),
        Ran::Said(said) => Done::Said(said.clone()),
        Ran::NotRun => Done::NotRun,
    };
    let report = Report {
        event: &event,
        operation: &operation,
        done,
        lock: apply_lock_holder(&args),
    };
    if report.has_comment() {
        let comment = report.comment();
        match &args.comment {
            Some(path) => {
                std::fs::write(path, comment.as_bytes()).map_err(|source| Error::Write {
                    path: path.clone(),
                    source,
                })?
            }
            None => super::write_stdout(comment.as_bytes())?,
        }
    }
    super::write_stdout(format!("{}\n", report.status_line()).as_bytes())?;
    match report.exit_code() {
        0 => Ok(()),
        code => Err(Error::CiStatus(u8::try_from(code).unwrap_or(1))),
    }
}

/// What the operation did, owned.
enum Ran {
    Planned(Box<Preview>),
    Applied {
        summary: Option<Box<Summary>>,
        error: Option<String>,
        tails: Vec<LogTail>,
    },
    Failed(String),
    Said(String),
    NotRun,
}

/// Runs the operation: one function per operation.
fn run(args: &CiArgs, event: &Event, operation: &Operation, warnings: &mut Warnings) -> Ran {
    let failed = |error: Error| Ran::Failed(super::render_error(&error));
    match operation {
        Operation::Autoplan { base } => {
            // `--affected BASE` needs the base commit in the clone; without a
            // base the whole stack is planned.
            let affected = base.clone();
            plan(args, event, Vec::new(), affected, warnings).unwrap_or_else(failed)
        }
        Operation::Plan { components } => {
            plan(args, event, components.clone(), None, warnings).unwrap_or_else(failed)
        }
        Operation::Apply { components } => apply(args, event, components.clone(), warnings),
        Operation::Unlock => unlock(args, event).unwrap_or_else(failed),
        Operation::Merged => merged(args, event).unwrap_or_else(failed),
        Operation::Closed => closed(args, event).unwrap_or_else(failed),
        Operation::Nothing { .. } | Operation::Refused { .. } => Ran::NotRun,
    }
}

/// The flags `hub plan` and `hub deploy` would be given.
fn run_args(args: &CiArgs, components: Vec<String>, affected: Option<String>) -> CommonRunArgs {
    let stack = &args.stack;
    CommonRunArgs {
        stack: StackArgs {
            manifest: stack.manifest.clone(),
            environment: stack.environment.clone(),
            base_dir: stack.base_dir.clone(),
            lenient: stack.lenient,
            strict: stack.strict,
            clouds: stack.clouds.clone(),
        },
        state: StateArgs {
            state: args.state.clone(),
            no_state: false,
            lock: LockTimeoutArgs {
                lock_timeout: args.lock.lock_timeout,
            },
        },
        selection: SelectionArgs {
            components,
            affected,
            with_deps: false,
            with_dependents: false,
            offset: None,
            limit: None,
            status: Vec::new(),
        },
        run: RunArgs {
            force: false,
            reveal: false,
            jobs: args.jobs,
            report: None,
        },
    }
}

/// A plan, as `hub plan` makes it.
fn plan(
    args: &CiArgs,
    _event: &Event,
    components: Vec<String>,
    affected: Option<String>,
    warnings: &mut Warnings,
) -> Result<Ran, Error> {
    let common = run_args(args, components, affected);
    let request = RunRequest {
        common: &common,
        execute: None,
        guess: true,
        changed: false,
        replace: &[],
        prune: false,
    };
    let (stack, options) = load_run(&request, Verb::Deploy, warnings)?;
    let plan = preview_between_runs(&stack, &options, warnings)?;
    Ok(Ran::Planned(Box::new(plan)))
}

/// An apply, as `hub deploy` runs it.
fn apply(args: &CiArgs, _event: &Event, components: Vec<String>, warnings: &mut Warnings) -> Ran {
    let common = run_args(args, components, None);
    let execute = ExecuteArgs {
        os_environment: "no-tfvars".into(),
        compressed: false,
        encrypted: None,
        state_format: hub_state::StateFormat::default(),
        dry: false,
        timeout: args.timeout,
        why: false,
    };
    let request = RunRequest {
        common: &common,
        execute: Some(&execute),
        guess: true,
        changed: false,
        replace: &[],
        prune: false,
    };
    let (stack, options) = match load_run(&request, Verb::Deploy, warnings) {
        Ok(loaded) => loaded,
        Err(error) => return Ran::Failed(super::render_error(&error)),
    };
    let (result, summary) = run_loaded_keeping(&request, &stack, &options, warnings);
    let tails = summary
        .as_ref()
        .map(|summary| failed_tails(summary, options.state.first().map(|p| p.as_path())))
        .unwrap_or_default();
    Ran::Applied {
        summary: summary.map(Box::new),
        error: result.err().map(|error| super::render_error(&error)),
        tails,
    }
}

/// `hub unlock`: releases the change's apply lock.
fn unlock(_args: &CiArgs, event: &Event) -> Result<Ran, Error> {
    Ok(no_registry(event))
}

/// The change was merged: its apply lock is released.
fn merged(_args: &CiArgs, event: &Event) -> Result<Ran, Error> {
    Ok(no_registry(event))
}

/// The change was closed unmerged: its apply lock is released when it
/// applied nothing.
fn closed(_args: &CiArgs, event: &Event) -> Result<Ran, Error> {
    Ok(no_registry(event))
}

/// The answer of the operations on a change's apply lock while this build
/// keeps no change registry.
fn no_registry(event: &Event) -> Ran {
    let _ = event;
    Ran::Said(
        "this build of hub records no changes and holds no apply lock: nothing to release".into(),
    )
}

/// Which change holds the stack's apply lock, and why.
fn apply_lock_holder(_args: &CiArgs) -> Option<String> {
    None
}

/// The last lines of the log of each component that failed, from
/// `STATE.logs/NAME.log` (written masked).
fn failed_tails(summary: &Summary, state: Option<&Path>) -> Vec<LogTail> {
    let Some(state) = state else {
        return Vec::new();
    };
    let folder = hub_engine::run::records::log_dir(state);
    summary
        .entries
        .iter()
        .filter(|entry| matches!(entry.outcome, hub_engine::outcome::Outcome::Failed(_)))
        .filter_map(|entry| {
            let path = folder.join(format!("{}.log", entry.component));
            let text = read_log(&path)?;
            let lines: Vec<&str> = text.lines().collect();
            let kept = lines.len().min(TAIL_LINES);
            Some(LogTail {
                component: entry.component.clone(),
                lines: lines[lines.len() - kept..]
                    .iter()
                    .map(|l| l.to_string())
                    .collect(),
                omitted: lines.len() - kept,
            })
        })
        .collect()
}

/// A log beside the state, opened without following a link; `None` when
/// it cannot be read.
fn read_log(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file =
        hub_state::beside::open(path, std::fs::OpenOptions::new().read(true), 0o600).ok()?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}
