//! Policies in the commands: the stack's `policies:` and `--policy` files
//! evaluated on the plan `hub plan` shows and on the plan a deploy or
//! undeploy is about to execute; `hub policy test` on a plan in a file.

use crate::error::Error;
use crate::request::OutputFormat;
use hub_manifest::diag::Warnings;
use hub_plan::change::ChangeContext;
use hub_plan::source::stack::Stack;
use hub_policy::{self as policy, PolicyInput, PolicyResults, PolicySet, StackFacts};
use hub_view::preview::{Detail, Preview};
use std::path::PathBuf;

/// The stack's rules, then each file's, compiled.
pub(crate) fn load(stack: &Stack, files: &[PathBuf]) -> Result<PolicySet, Error> {
    let mut set = PolicySet::default();
    set.add_stack(stack)?;
    for file in files {
        set.add_file(file)?;
    }
    Ok(set)
}

/// The time rules see as `now`: `HUB_NOW` when set.
fn now() -> Result<String, Error> {
    Ok(super::common::clock()?.now())
}

/// Every rule's result on `plan`.
pub(crate) fn evaluate(
    set: &PolicySet,
    plan: &Preview,
    stack: &Stack,
    change: &ChangeContext,
) -> Result<PolicyResults, Error> {
    evaluate_with(set, plan, StackFacts::of(&stack.elaborated), change)
}

/// [`evaluate`] with the stack's facts read before (by a plan that lets
/// the stack's parameter list go once locked).
pub(crate) fn evaluate_with(
    set: &PolicySet,
    plan: &Preview,
    facts: StackFacts,
    change: &ChangeContext,
) -> Result<PolicyResults, Error> {
    if set.is_empty() {
        return Ok(PolicyResults::default());
    }
    let input = PolicyInput {
        plan: policy::plan_document(plan),
        change: change.clone(),
        stack: facts,
        now: now()?,
    };
    Ok(policy::evaluate(set, &input))
}

/// The plan as `--format` shows it (text and markdown with `detail`), with
/// the policies' results.
pub(crate) fn render(
    format: OutputFormat,
    detail: Detail,
    plan: &Preview,
    results: &PolicyResults,
) -> String {
    use hub_view::preview as view;
    match format {
        OutputFormat::Json if results.results.is_empty() => view::render_json(plan),
        OutputFormat::Json => policy::json_with_results(&view::render_json(plan), results),
        OutputFormat::Markdown => {
            view::render_markdown(plan, detail) + &policy::render_markdown(results)
        }
        OutputFormat::Text => {
            let policies = policy::render_text(results);
            match policies.is_empty() {
                true => view::render_text(plan, detail),
                false => view::render_text(plan, detail) + "\n" + &policies,
            }
        }
    }
}

/// The warn rules that fired, as warnings of the run.
fn warn(results: &PolicyResults, warnings: &mut Warnings) {
    for result in results.fired() {
        if result.verdict == policy::Verdict::Warn {
            warnings.warn(
                Some(result.rule.clone()),
                format!("policy `{}`: {}", result.name, result.message),
            );
        }
    }
}

/// A deploy or undeploy with rules: the plan is made, evaluated, refused
/// when a rule denies, and otherwise given to the engine, which executes
/// exactly it once the state read under the lock is found unchanged.
pub(crate) fn guard_run(
    files: &[PathBuf],
    stack: &Stack,
    options: &mut hub_plan::options::RunOptions,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let set = load(stack, files)?;
    if set.is_empty() {
        return Ok(());
    }
    let environment = std::env::vars().collect();
    let plan = hub_plan::plan::prepare::plan(stack, options, environment, warnings)?;
    refuse_denied(&set, stack, &plan, &ChangeContext::default(), warnings)?;
    options.running.expected_state = Some(hub_plan::options::ExpectedState {
        lineage: plan.state.as_ref().and_then(|s| s.lineage.clone()),
        serial: plan.state.as_ref().and_then(|s| s.serial),
    });
    options.running.planned = Some(std::sync::Arc::new(plan));
    Ok(())
}

/// `deploy --plan`, `deploy --change` and `undeploy --change`: the rules on
/// the plan made again, before it runs, with the change they are for.
pub(crate) fn refuse_denied_files(
    files: &[PathBuf],
    stack: &Stack,
    plan: &Preview,
    change: &ChangeContext,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let set = load(stack, files)?;
    refuse_denied(&set, stack, plan, change, warnings)
}

fn refuse_denied(
    set: &PolicySet,
    stack: &Stack,
    plan: &Preview,
    change: &ChangeContext,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    let results = evaluate(set, plan, stack, change)?;
    warn(&results, warnings);
    match results.refusal() {
        Some(refusal) => Err(refusal.into()),
        None => Ok(()),
    }
}

/// `deploy --replan`: the rules `deploy --plan` evaluated before the run
/// (the stack's, the plan's policy files and the `--policy` files given),
/// evaluated again on the plan with a component re-planned during it.
pub(crate) struct ReplanCheck {
    set: PolicySet,
    facts: StackFacts,
    change: ChangeContext,
}

impl ReplanCheck {
    pub(crate) fn new(
        files: &[PathBuf],
        stack: &Stack,
        change: ChangeContext,
    ) -> Result<Self, Error> {
        Ok(ReplanCheck {
            set: load(stack, files)?,
            facts: StackFacts::of(&stack.elaborated),
            change,
        })
    }
}

impl hub_plan::plan::replan::ReplanPolicies for ReplanCheck {
    fn check(&self, plan: &Preview) -> Result<(), String> {
        if self.set.is_empty() {
            return Ok(());
        }
        let input = PolicyInput {
            plan: policy::plan_document(plan),
            change: self.change.clone(),
            stack: self.facts.clone(),
            now: now().map_err(|error| error.to_string())?,
        };
        match policy::evaluate(&self.set, &input).refusal() {
            Some(refusal) => Err(refusal.to_string()),
            None => Ok(()),
        }
    }
}

/// `hub policy`.
pub fn policy(
    args: crate::request::PolicyCommandArgs,
    warnings: &mut Warnings,
) -> Result<(), Error> {
    match args.command {
        crate::request::PolicyCommand::Test(args) => test(&args, warnings),
    }
}

/// `hub policy test PLAN [--policy FILE]…`: a saved plan's stack gives its
/// rules and what rules know of it, when its files are still there.
fn test(args: &crate::request::PolicyTestArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let document = policy::read_plan_document(&args.plan)?;
    let mut set = PolicySet::default();
    let mut facts = document.stack;
    let here = document
        .stack_files
        .split_first()
        .filter(|(first, _)| std::path::Path::new(first).exists());
    if let (Some(first), None) = (document.stack_files.first(), here) {
        warnings.warn(
            Some(hub_manifest::diag::Location::file(&args.plan)),
            format!("the plan's stack `{first}` is not here: only the rules of the --policy files are evaluated"),
        );
    }
    if let Some((first, params)) = here {
        let params: Vec<PathBuf> = params.iter().map(PathBuf::from).collect();
        let base_dir = document.base_dir.as_ref().map(PathBuf::from);
        let stack = Stack::load(
            std::path::Path::new(first),
            &params,
            base_dir.as_deref(),
            &indexmap::IndexMap::new(),
            warnings,
        )?;
        set.add_stack(&stack)?;
        facts = StackFacts::of(&stack.elaborated);
    }
    for file in &args.policies {
        set.add_file(file)?;
    }
    if set.is_empty() {
        return Err(Error::Usage {
            flag: "--policy",
            value: String::new(),
            reason: "there is no rule to evaluate: the plan's stack has no `policies:`; give a policy file".into(),
        });
    }
    let input = PolicyInput {
        plan: document.plan,
        change: ChangeContext::default(),
        stack: facts,
        now: now()?,
    };
    let results = policy::evaluate(&set, &input);
    let text = match args.format {
        OutputFormat::Json => {
            let mut text = serde_json::to_string_pretty(&results).unwrap_or_default();
            text.push('\n');
            text
        }
        OutputFormat::Markdown => policy::render_markdown(&results).trim_start().to_string(),
        OutputFormat::Text => policy::render_text(&results),
    };
    super::write_stdout(text.as_bytes())?;
    match results.refusal() {
        Some(refusal) => Err(refusal.into()),
        None => Ok(()),
    }
}
