//! `hub plan`: the plan made without running anything, shown in the
//! format asked for with the policies' results, saved by `--out`, and
//! recorded for its change by `--change`.

use super::results::PlanMade;
use super::{change, check, load_run, policy, report, runs, write_stdout, RunRequest};
use crate::error::Error;
use crate::request::OutputFormat;
use hub_manifest::diag::Warnings;
use std::io::Write;

/// `hub plan`: what a deploy or undeploy would do.
pub fn plan(args: crate::request::PlanArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let detailed = args.detailed_exitcode;
    let registry = change::before_plan(&args)?;
    let planned = runs::refuse_open_runs_of(&args.common.state)
        .and_then(|()| plan_and_print(&args, registry.is_some(), warnings));
    if let Some(registry) = &registry {
        change::record_plan(registry, &args, &planned)?;
    }
    match planned {
        Err(Error::NoneWithHealth(healths)) => check::nothing_with_health(&healths),
        Err(error) if detailed => Err(Error::Detailed(Box::new(error))),
        Err(error) => Err(error),
        Ok(made) => plan_status(&made.preview, &made.policies, detailed),
    }
}

/// How a plan that was made ends: exit 1 when a component would fail or
/// a rule denies (a script must not take that plan for a success), and
/// with `--detailed-exitcode` 2 when something would change.
fn plan_status(
    preview: &hub_view::preview::Preview,
    policies: &hub_policy::PolicyResults,
    detailed: bool,
) -> Result<(), Error> {
    let failing = preview.count(hub_view::preview::Action::Fail);
    if failing > 0 {
        return Err(Error::PlanFailures(failing));
    }
    if let Some(denied) = policies.refusal() {
        return Err(Error::Detailed(Box::new(denied.into())));
    }
    match detailed && preview.would_change() {
        true => Err(Error::PlanChanges),
        false => Ok(()),
    }
}

/// The plan, printed; with `save` (`--change`), the saved plan too
/// (`None` for an undeploy), for the registry.
fn plan_and_print(
    args: &crate::request::PlanArgs,
    save: bool,
    warnings: &mut Warnings,
) -> change::Planned {
    // The text of the changes reads nothing of the parameters of a
    // component that changes nothing but how many there are.
    let text_of_changes = args.format == OutputFormat::Text && !args.verbose;
    let made = make_plan_shown(args, save, text_of_changes, warnings)?;
    let detail = hub_view::preview::Detail::of(args.verbose);
    let text = policy::render(args.format, detail, &made.preview, &made.policies);
    write_stdout(text.as_bytes())?;
    // A plan a rule denies is not saved: nothing could apply it.
    if let (Some(_), Some(denied)) = (&args.out, made.policies.refusal()) {
        return Err(denied.into());
    }
    // Written after the plan is shown, so that a refusal comes with it.
    let saved = match (&args.out, made.saved) {
        (Some(path), Some(saved)) => {
            let saved = saved?;
            hub_plan::plan::saved::write(path, &saved)?;
            Some(Ok(saved))
        }
        (_, saved) => saved,
    };
    if let Some(failure) = made.policies.failure() {
        return Err(failure.into());
    }
    Ok(PlanMade { saved, ..made })
}

/// The plan a `hub plan` request asks for, made without running anything
/// or printing: the stack and the state loaded, the plan made between
/// runs, the policies evaluated, the report written (`--report`), and the
/// saved form made (not written) when `--out` or `save` (a change's plan)
/// asks for it. `hub plan` prints it; `hub ci` puts it in its comment.
pub fn make_plan(
    args: &crate::request::PlanArgs,
    save: bool,
    warnings: &mut Warnings,
) -> Result<PlanMade, Error> {
    make_plan_shown(args, save, false, warnings)
}

/// [`make_plan`] for a caller that shows the plan only as the text of its
/// changes when `text_of_changes`: unless something else reads the whole
/// plan (policies, `--report`, a saved plan), it keeps only how many
/// parameters a component that changes nothing has
/// ([`hub_plan::options::RunOptions::changes_only`]).
fn make_plan_shown(
    args: &crate::request::PlanArgs,
    save: bool,
    text_of_changes: bool,
    warnings: &mut Warnings,
) -> Result<PlanMade, Error> {
    use hub_plan::Verb;
    use hub_view::preview;
    let verb = match args.undeploy {
        true => Verb::Undeploy,
        false => Verb::Deploy,
    };
    refuse_plan_flags(args)?;
    let request = RunRequest {
        common: &args.common,
        execute: None,
        guess: args.guess.guess,
        changed: args.changed,
        replace: &args.replace.replace,
        prune: args.prune,
    };
    let (mut stack, mut options) = load_run(&request, verb, warnings)?;
    options.plan_steps = args.plan_steps;
    let policies = policy::load(&stack, &args.common.policy.policies)?;
    let facts = hub_policy::StackFacts::of(&stack.elaborated);
    let saving = args.out.is_some() || (save && !args.undeploy);
    options.entry_digests = saving;
    options.changes_only =
        text_of_changes && !saving && policies.is_empty() && args.common.run.report.is_none();
    // A saved plan's digest covers the whole stack document, and plan
    // steps lock the parameters again: only a plan that does neither lets
    // the stack's parameter list go once locked.
    let plan = match saving || options.plan_steps {
        true => preview_between_runs(&stack, &options, warnings)?,
        false => preview_releasing(&mut stack, &options, warnings)?,
    };
    let change = change::context(&args.change, &args.common.state)?;
    let results = policy::evaluate_with(&policies, &plan, facts, &change)?;
    let clock = super::common::clock()?;
    if let Some(path) = &args.common.run.report {
        let report = preview::report(&plan, &clock.now());
        match hub_view::html::is_html(path) {
            true => report::write_html(path, &report, Some(&plan), warnings)?,
            false => hub_view::report::write(path, &report)?,
        }
    }
    let saved = saving.then(|| save_plan(&plan, &stack, &options, args, clock.now()));
    Ok(PlanMade {
        preview: plan,
        saved,
        policies: results,
    })
}

/// The preview, refused (or, with `--lock-timeout`, delayed) while a run
/// holds the lock of a state location: what it read would be stale at
/// once. A run that took the lock while the plan read is caught by a
/// second look. Plans take no lock, so they run side by side.
pub(crate) fn preview_between_runs(
    stack: &hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    warnings: &mut Warnings,
) -> Result<hub_view::preview::Preview, Error> {
    between_runs(options, || {
        super::common::plan_with_steps(stack, options, std::env::vars().collect(), warnings)
    })
}

/// [`preview_between_runs`] without plan steps, the stack's parameter
/// list released once the parameters are locked (see
/// [`hub_plan::plan::prepare::plan_releasing`]).
fn preview_releasing(
    stack: &mut hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    warnings: &mut Warnings,
) -> Result<hub_view::preview::Preview, Error> {
    between_runs(options, || {
        hub_plan::plan::prepare::plan_releasing(
            stack,
            options,
            std::env::vars().collect(),
            warnings,
        )
    })
}

/// What `make` gives, made while no run holds the lock of a state location.
fn between_runs(
    options: &hub_plan::options::RunOptions,
    make: impl FnOnce() -> Result<hub_view::preview::Preview, hub_plan::error::PlanningError>,
) -> Result<hub_view::preview::Preview, Error> {
    use hub_state::lock::await_unheld;
    let notify = |line: &str| {
        let _ = writeln!(std::io::stderr().lock(), "{line}");
    };
    let wait = hub_state::LockWait::new(options.running.lock_timeout, Some(&notify));
    await_unheld(&options.state, &wait)?;
    let plan = make()?;
    await_unheld(&options.state, &hub_state::LockWait::default())?;
    Ok(plan)
}

/// The plan of `plan --out` (and of `--change`): what it decided, the
/// commit and every file it read, the policy files it was checked with.
pub(crate) fn save_plan(
    plan: &hub_view::preview::Preview,
    stack: &hub_plan::source::stack::Stack,
    options: &hub_plan::options::RunOptions,
    args: &crate::request::PlanArgs,
    created: String,
) -> Result<hub_plan::plan::saved::SavedPlan, hub_plan::plan::saved::SavedPlanError> {
    use hub_plan::plan::saved::{Made, SavedPlan};
    let made = Made {
        files: &args.common.stack.manifest,
        clouds: &args.common.stack.clouds,
        created,
        commit: super::reviewed::commit_here(args.change.sha.as_deref(), stack),
        policies: &args.common.policy.policies,
        change: args.change.change.clone(),
    };
    SavedPlan::new(plan, stack, options, &made)
}

/// Flags of `plan` that do not go together.
fn refuse_plan_flags(args: &crate::request::PlanArgs) -> Result<(), Error> {
    if args.format == OutputFormat::Markdown && args.common.run.reveal {
        return Err(Error::Usage {
            flag: "--reveal",
            value: String::new(),
            reason: "a markdown plan is meant to be posted where others read it: its secrets stay masked; use `--format text --reveal` to see them".into(),
        });
    }
    for (given, flag) in [(args.prune, "--prune"), (args.changed, "--changed")] {
        if args.undeploy && given {
            return Err(Error::Usage {
                flag,
                value: String::new(),
                reason: "it is a flag of a deploy; an undeploy takes down every selected component"
                    .into(),
            });
        }
    }
    if args.undeploy && !args.replace.replace.is_empty() {
        return Err(Error::Usage {
            flag: "--replace",
            value: args.replace.replace.join(","),
            reason: "an undeploy runs every selected component; `--replace` is for a deploy".into(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests;
