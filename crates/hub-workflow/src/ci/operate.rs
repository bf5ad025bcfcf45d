//! `hub ci`: the CI event read ([`crate::ci`]), the operation it asks
//! for run in this process through the code of `hub plan --change`, `hub
//! deploy --change` and `hub change`, then the comment written and the
//! status line printed.

use super::comment::{Done, Report};
use super::steps::{apply, apply_lock_holder, change_args, closed, merged, plan, unlock, Asked};
use crate::ci::{self, Access, Event, Operation, PlanFrom, ReadContext};
use crate::error::Error;
use crate::request::CiArgs;
use hub_manifest::diag::Warnings;

/// `hub ci`.
pub fn ci(args: CiArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let lookup = |name: &str| std::env::var(name).ok();
    let now = crate::commands::common::clock()?.now();
    let context = ReadContext {
        now: hub_state::rfc3339_to_unix(&now).map_or(0, |(seconds, _)| seconds),
        relay_max_age: args.relay_max_age,
    };
    let event = ci::read(&lookup, &|path| std::fs::read_to_string(path), &context)?;
    let access = Access {
        associations: args
            .allow_association
            .iter()
            .map(|a| a.trim().to_ascii_uppercase())
            .filter(|a| !a.is_empty())
            .collect(),
        users: args.allow_user.clone(),
        plan_from: PlanFrom::parse(&args.plan_from).unwrap_or_default(),
        plan_forks: args.plan_forks,
    };
    let operation = ci::decide(&event, &access);
    let steps = args.plan_steps && access.runs_plan_steps(&event);
    let done = run(&args, &event, &access, &operation, steps, warnings);
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
                // The checkout is the pull request's: a link planted at
                // the comment's path is replaced, never followed.
                hub_manifest::write_private_output(path, comment.as_bytes()).map_err(|source| {
                    Error::Write {
                        path: path.clone(),
                        source,
                    }
                })?
            }
            None => crate::commands::write_stdout(comment.as_bytes())?,
        }
    }
    crate::commands::write_stdout(format!("{}\n", report.status_line()).as_bytes())?;
    match report.exit_code() {
        0 => Ok(()),
        code => Err(Error::CiStatus(u8::try_from(code).unwrap_or(1))),
    }
}

/// Runs the operation: one function per operation. `steps`: plans run
/// the components' plan steps.
fn run(
    args: &CiArgs,
    event: &Event,
    access: &Access,
    operation: &Operation,
    steps: bool,
    warnings: &mut Warnings,
) -> Done {
    let failed = |error: Error| Done::Failed(crate::commands::render_error(&error));
    let change = change_args(event, access);
    match operation {
        // `--affected BASE` needs the base commit in the clone; without a
        // base the whole stack is planned.
        Operation::Autoplan { base } => {
            let asked = Asked {
                components: Vec::new(),
                affected: base.clone(),
                steps,
            };
            plan(args, change, asked, warnings).unwrap_or_else(failed)
        }
        Operation::Plan { components } => {
            let asked = Asked {
                components: components.clone(),
                affected: None,
                steps,
            };
            plan(args, change, asked, warnings).unwrap_or_else(failed)
        }
        Operation::Apply => apply(args, change, warnings),
        Operation::Review(review) => {
            super::review::record(args, event, review, access).unwrap_or_else(failed)
        }
        Operation::Unlock => unlock(args, event).unwrap_or_else(failed),
        Operation::Merged => match super::on_merge::applies_on_merge(args) {
            Ok(true) => super::on_merge::apply_merged(args, event, change, warnings),
            Ok(false) => merged(args, event).unwrap_or_else(failed),
            Err(error) => failed(error),
        },
        Operation::Closed => closed(args, event).unwrap_or_else(failed),
        Operation::Queue(queued) => super::queue::run(args, event, queued, access, warnings),
        Operation::Nothing { .. } | Operation::Refused { .. } => Done::NotRun,
    }
}
