//! `hub pipeline` (issue 28, branch `pipeline`): the plan of a deploy or
//! undeploy, made here as `hub plan` makes it, written as a CI pipeline
//! by [`hub_view::pipeline`].

use super::output::write_stdout;
use super::plan::preview_between_runs;
use super::reviewed::planned_run_args;
use super::{load_run, parse_overrides, policy, RunRequest};
use crate::error::Error;
use crate::request::{CommonRunArgs, PipelineArgs, RunArgs};
use hub_manifest::diag::Warnings;
use hub_plan::Verb;
use hub_view::pipeline::{self, Grouping, Pipeline, Settings, Target};

/// `hub pipeline`.
pub fn pipeline(args: PipelineArgs, warnings: &mut Warnings) -> Result<(), Error> {
    if args.state.no_state {
        return Err(Error::Usage {
            flag: "-n",
            value: String::new(),
            reason: "the jobs of a pipeline share a state: give it with `-s LOCATION`".into(),
        });
    }
    let verb = match args.undeploy {
        true => Verb::Undeploy,
        false => Verb::Deploy,
    };
    let settings = settings(&args)?;
    let output = args.output.clone();
    let changed = args.changed;
    let allow_local_state = args.allow_local_state;
    let given_plan = args.plan.clone();
    let policies = args.policy.policies.clone();
    let common = plan_job_args(args, &policies);
    // `--plan`: the components, selection and state of the saved plan.
    let planned = match &given_plan {
        Some(path) => Some(hub_plan::plan::saved::read(path)?),
        None => None,
    };
    if let (Some(path), Some(planned)) = (&given_plan, &planned) {
        refuse_unrecorded_policies(path, planned, &policies)?;
    }
    let common = match &planned {
        Some(planned) => planned_run_args(planned, &common),
        None => common,
    };
    let state = common.state.state.clone();
    refuse_local_state(&state, allow_local_state)?;
    let request = RunRequest {
        common: &common,
        execute: None,
        guess: true,
        changed: planned.as_ref().map_or(changed, |p| p.arguments.changed),
        replace: planned.as_ref().map_or(&[], |p| &p.arguments.replace),
        prune: planned.as_ref().is_some_and(|p| p.arguments.prune),
    };
    let (stack, options) = load_run(&request, verb, warnings)?;
    let plan = preview_between_runs(&stack, &options, warnings)?;
    refuse_denied(&stack, &plan, &policies, planned.as_ref())?;
    // The plan job saves this plan: one that would fail cannot be saved,
    // and the pipeline says so now rather than in its first job.
    refuse_failing(&plan)?;
    let settings = Settings { state, ..settings };
    let runners = &stack.elaborated.stack.lifecycle.runners;
    let written = pipeline::render(&Pipeline::new(&plan, runners, settings))?;
    match output {
        Some(path) => hub_state::write_atomically(&path, written.as_bytes())
            .map_err(|source| Error::Write { path, source }),
        None => write_stdout(written.as_bytes()),
    }
}

/// What the pipeline is written with, from the arguments: the CI system,
/// the grouping of jobs, the plan file, the arguments of every job.
fn settings(args: &PipelineArgs) -> Result<Settings, Error> {
    let target = match args.target.as_str() {
        "github" => Target::Github,
        "argo" => Target::Argo,
        _ => Target::Gitlab,
    };
    let variables = variable_names(&args.stack.environment)?;
    let stack_arguments = stack_arguments(args);
    let plan_arguments = plan_job_arguments(args, &stack_arguments);
    Ok(Settings {
        target,
        grouping: match args.group.as_str() {
            "waves" => Grouping::Waves,
            _ => Grouping::Components,
        },
        hub: args.hub.clone(),
        state: String::new(),
        plan_file: match (&args.plan, &args.plan_file, target) {
            (Some(given), _, _) => given.display().to_string(),
            (None, Some(file), _) => file.clone(),
            (None, None, Target::Argo) => "/tmp/hub.plan".into(),
            (None, None, _) => "hub.plan".into(),
        },
        plan_arguments: args.plan.is_none().then_some(plan_arguments),
        stack_arguments,
        tags: args.tags.clone(),
        image: args.image.clone(),
        variables,
    })
}

/// The arguments the plan job's `hub plan` is run with.
fn plan_job_args(args: PipelineArgs, policies: &[std::path::PathBuf]) -> CommonRunArgs {
    CommonRunArgs {
        stack: args.stack,
        state: args.state,
        selection: args.selection,
        run: RunArgs {
            force: false,
            reveal: false,
            jobs: 1,
            report: None,
        },
        // The plan job's `hub plan` evaluates the stack's rules and the
        // `--policy` files, records the files in the plan, and refuses to
        // save a plan one of them denies; every job evaluates them again.
        policy: crate::request::PolicyArgs {
            policies: policies.to_vec(),
        },
    }
}

/// A plan with a component that would fail cannot be saved by the plan
/// job: the pipeline refuses it now rather than in its first job.
fn refuse_failing(plan: &hub_plan::plan::Plan) -> Result<(), Error> {
    let failing: Vec<String> = plan
        .components
        .iter()
        .filter(|c| c.action == hub_plan::plan::Action::Fail)
        .map(|c| c.name.clone())
        .collect();
    if !failing.is_empty() {
        return Err(pipeline::PipelineError::WouldFail {
            components: failing,
        }
        .into());
    }
    Ok(())
}

/// The jobs of a pipeline run on runners of their own: a state they all
/// write must be one they all reach (an object store), unless
/// `--allow-local-state` says their runners share its folder. Every
/// location of `-s a,b` is written by every job, so each is checked.
fn refuse_local_state(locations: &str, allowed: bool) -> Result<(), Error> {
    if allowed {
        return Ok(());
    }
    let local = locations
        .split(',')
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .find(|l| !hub_state::is_remote(std::path::Path::new(l)));
    match local {
        Some(location) => Err(pipeline::PipelineError::LocalState {
            location: location.to_string(),
        }
        .into()),
        None => Ok(()),
    }
}

/// The names of `-e NAME=value`: the jobs read each from the CI
/// variable `NAME` (hub reads a `fromEnv` variable from its environment
/// when no `-e` gives it), so values never reach the pipeline's file or
/// its jobs' command lines. A name must be an environment variable's.
fn variable_names(flags: &[String]) -> Result<Vec<String>, Error> {
    let names: Vec<String> = parse_overrides(flags)?.into_keys().collect();
    for name in &names {
        let mut chars = name.chars();
        let variable = chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !variable {
            return Err(Error::Usage {
                flag: "-e",
                value: name.clone(),
                reason: "the jobs of a pipeline read `-e` values from CI variables of the same names: a name is letters, digits and `_`, not starting with a digit".into(),
            });
        }
    }
    Ok(names)
}

/// A pipeline whose plan the rules deny now is not written: its plan job
/// would refuse to save the plan (and its jobs to apply it). The rules
/// are the stack's, the `--policy` files and those a given plan records.
fn refuse_denied(
    stack: &hub_plan::source::stack::Stack,
    plan: &hub_view::preview::Preview,
    given: &[std::path::PathBuf],
    planned: Option<&hub_plan::plan::saved::SavedPlan>,
) -> Result<(), Error> {
    let mut files: Vec<std::path::PathBuf> = planned
        .map(|p| p.policies.iter().map(|f| f.path.clone().into()).collect())
        .unwrap_or_default();
    files.extend(
        given
            .iter()
            .filter(|g| !files.contains(g))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let set = policy::load(stack, &files)?;
    let change = hub_plan::change::ChangeContext::default();
    match policy::evaluate(&set, plan, stack, &change)?.refusal() {
        Some(denied) => Err(denied.into()),
        None => Ok(()),
    }
}

/// `--plan PLAN --policy FILE`: the jobs evaluate the policy files the
/// plan records, so each FILE must be one of them.
fn refuse_unrecorded_policies(
    path: &std::path::Path,
    planned: &hub_plan::plan::saved::SavedPlan,
    given: &[std::path::PathBuf],
) -> Result<(), Error> {
    let recorded = |file: &std::path::Path| {
        planned
            .policies
            .iter()
            .any(|p| std::path::Path::new(&p.path) == file)
    };
    match given.iter().find(|file| !recorded(file)) {
        None => Ok(()),
        Some(file) => Err(Error::Usage {
            flag: "--policy",
            value: file.display().to_string(),
            reason: format!(
                "the plan `{}` was not made with it, and its jobs evaluate the policy files it records: make the plan with `hub plan … --policy {} --out {}`",
                path.display(),
                file.display(),
                path.display()
            ),
        }),
    }
}

/// The stack as given here: its files, `-b`, `--clouds`, `--lenient`,
/// `--strict`, and the `--policy` files (the plan job records them in the
/// plan; an undeploy's jobs evaluate them). Not `-e`: its values stay out
/// of the pipeline, and the jobs read them from CI variables
/// ([`variable_names`]).
fn stack_arguments(args: &PipelineArgs) -> Vec<String> {
    let stack = &args.stack;
    let mut words: Vec<String> = stack
        .manifest
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if let Some(base) = &stack.base_dir {
        words.extend(["-b".into(), base.display().to_string()]);
    }
    if !stack.clouds.is_empty() {
        words.push(format!("--clouds={}", stack.clouds.join(",")));
    }
    if stack.lenient {
        words.push("--lenient".into());
    }
    if stack.strict {
        words.push("--strict".into());
    }
    for file in &args.policy.policies {
        words.extend(["--policy".into(), file.display().to_string()]);
    }
    words
}

/// The arguments the plan job gives `hub plan`: the stack and state, and
/// the flags that select and plan the components, as given here.
fn plan_job_arguments(args: &PipelineArgs, stack: &[String]) -> Vec<String> {
    let mut words: Vec<String> = stack.to_vec();
    words.extend(["-s".into(), args.state.state.clone()]);
    let selection = &args.selection;
    if !selection.components.is_empty() {
        words.extend(["-c".into(), selection.components.join(",")]);
    }
    if let Some(base) = &selection.affected {
        words.push(match base.is_empty() {
            true => "--affected".into(),
            false => format!("--affected={base}"),
        });
    }
    for (given, flag) in [
        (selection.with_deps, "--with-deps"),
        (selection.with_dependents, "--with-dependents"),
        (args.changed, "--changed"),
    ] {
        if given {
            words.push(flag.into());
        }
    }
    for (value, flag) in [
        (&selection.offset, "--offset"),
        (&selection.limit, "--limit"),
    ] {
        if let Some(value) = value {
            words.extend([flag.into(), value.clone()]);
        }
    }
    if !selection.status.is_empty() {
        let status: Vec<&str> = selection.status.iter().map(|h| h.as_str()).collect();
        words.push(format!("--status={}", status.join(",")));
    }
    words
}
