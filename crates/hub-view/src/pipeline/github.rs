//! The pipeline as a GitHub Actions workflow (`on: workflow_dispatch`):
//! one job per component with `needs:` the jobs of what it waits for, so
//! a failure skips its dependents only. The plan file goes from the plan
//! job to the others as an artifact (`actions/upload-artifact`,
//! `actions/download-artifact`); the finish job runs `if: always()`.
//!
//! GitHub runs at most 256 jobs in one workflow run: a bigger pipeline is
//! refused, and `--group waves` writes one job per wave of the plan, its
//! components one step each, a wave starting when the one before it
//! succeeded.
//!
//! GitHub evaluates `${{ … }}` anywhere in a workflow: names holding it
//! are refused, and so is a `run:` line holding it. The only expressions
//! written are hub's own: `${{ secrets.NAME }}` for each `-e NAME`, in
//! the `env:` of the jobs that read the stack.

use super::model::{
    check_names, distinct_names, job_name, shell_line, Grouping, Pipeline, PipelineError, Runner,
};
use super::tree::{document, list, Header, Map};
use yaml_serde::Value;

/// GitHub's limit of jobs in one workflow run.
pub(crate) const JOBS_LIMIT: usize = 256;

const PLAN_JOB: &str = "hub-plan";
const FINISH_JOB: &str = "hub-finish";
const ARTIFACT: &str = "hub-plan";

const HEADER: Header =
    &["Written by `hub pipeline --target github`: write it again rather than edit it."];

pub fn render(pipeline: &Pipeline) -> Result<String, PipelineError> {
    check_names(pipeline)?;
    distinct_names(pipeline, |c| job_name(pipeline.verb, c))?;
    let plan_job = pipeline.plan_command().is_some();
    let waves = pipeline.settings.grouping == Grouping::Waves;
    let middle = match waves {
        true => pipeline.waves,
        false => pipeline.jobs.len(),
    };
    let finish = pipeline.finish_command();
    let count = middle + usize::from(finish.is_some()) + usize::from(plan_job);
    if count > JOBS_LIMIT {
        return Err(PipelineError::TooManyJobs {
            count,
            limit: JOBS_LIMIT,
            target: "GitHub Actions",
        });
    }
    let mut jobs = Map::new();
    let mut all = Vec::new();
    if let Some(command) = pipeline.plan_command() {
        let mut job = Map::new();
        runner(&mut job, pipeline, &pipeline.runner, true);
        let upload = Map::new().with("uses", "actions/upload-artifact@v4").with(
            "with",
            Map::new()
                .with("name", ARTIFACT)
                .with("path", pipeline.settings.plan_file.as_str()),
        );
        job.set(
            "steps",
            list([checkout(), run_step(None, &command)?, upload.into()]),
        );
        jobs.set(PLAN_JOB, job);
        all.push(PLAN_JOB.to_string());
    }
    match waves {
        true => wave_jobs(&mut jobs, pipeline, plan_job, &mut all)?,
        false => component_jobs(&mut jobs, pipeline, plan_job, &mut all)?,
    }
    if let Some(finish) = finish {
        let mut job = Map::new().with("if", "always()");
        if !all.is_empty() {
            job.set("needs", list(all));
        }
        runner(&mut job, pipeline, &pipeline.runner, false);
        let mut steps = steps_start(pipeline, plan_job);
        steps.push(run_step(None, &finish)?);
        job.set("steps", list(steps));
        jobs.set(FINISH_JOB, job);
    }
    let file = Map::new()
        .with(
            "name",
            format!("hub {} {}", pipeline.verb.as_str(), pipeline.stack),
        )
        .with("on", Map::new().with("workflow_dispatch", Map::new()))
        .with("jobs", jobs);
    Ok(document(HEADER, pipeline.provenance(), file))
}

fn component_jobs(
    jobs: &mut Map,
    pipeline: &Pipeline,
    plan_job: bool,
    all: &mut Vec<String>,
) -> Result<(), PipelineError> {
    for job in &pipeline.jobs {
        let name = job_name(pipeline.verb, &job.component);
        let mut out = Map::new();
        let mut needs: Vec<String> = Vec::new();
        if plan_job {
            needs.push(PLAN_JOB.to_string());
        }
        needs.extend(
            job.needs
                .iter()
                .map(|n| job_name(pipeline.verb, &n.component)),
        );
        if !needs.is_empty() {
            out.set("needs", list(needs));
        }
        runner(&mut out, pipeline, &job.runner, true);
        let mut steps = steps_start(pipeline, plan_job);
        steps.push(run_step(None, &pipeline.component_command(&job.component))?);
        out.set("steps", list(steps));
        jobs.set(&name, out);
        all.push(name);
    }
    Ok(())
}

/// `--group waves`: a job per wave, a step per component; each wave
/// needs the one before. A wave's runner is the plan's (`default`).
fn wave_jobs(
    jobs: &mut Map,
    pipeline: &Pipeline,
    plan_job: bool,
    all: &mut Vec<String>,
) -> Result<(), PipelineError> {
    let verb = pipeline.verb.as_str();
    for wave in 0..pipeline.waves {
        let name = format!("{verb}-wave-{}", wave + 1);
        let mut out = Map::new();
        let before = match wave {
            0 => plan_job.then(|| PLAN_JOB.to_string()),
            _ => Some(format!("{verb}-wave-{wave}")),
        };
        if let Some(before) = before {
            out.set("needs", list([before]));
        }
        runner(&mut out, pipeline, &pipeline.runner, true);
        let mut steps = steps_start(pipeline, plan_job);
        for job in pipeline.wave(wave) {
            let label = format!("{} {}", job.action.as_str(), job.component);
            steps.push(run_step(
                Some(&label),
                &pipeline.component_command(&job.component),
            )?);
        }
        out.set("steps", list(steps));
        jobs.set(&name, out);
        all.push(name);
    }
    Ok(())
}

/// `runs-on`, `container` and `env`; with `variables`, the `-e` names
/// as `NAME: ${{ secrets.NAME }}` after the runner's environment.
fn runner(job: &mut Map, pipeline: &Pipeline, runner: &Runner, variables: bool) {
    match runner.tags.is_empty() {
        true => job.set("runs-on", "ubuntu-latest"),
        false => job.set("runs-on", list(runner.tags.iter().map(String::as_str))),
    }
    if let Some(image) = &runner.image {
        job.set("container", image.as_str());
    }
    let mut env = Map::new();
    for (name, value) in &runner.env {
        env.set(name, value.as_str());
    }
    if variables {
        for name in &pipeline.settings.variables {
            env.set(name, format!("${{{{ secrets.{name} }}}}"));
        }
    }
    if !env.is_empty() {
        job.set("env", env);
    }
}

fn checkout() -> Value {
    Map::new().with("uses", "actions/checkout@v4").into()
}

/// The checkout, and the plan file from the plan job's artifact.
fn steps_start(pipeline: &Pipeline, plan_job: bool) -> Vec<Value> {
    let mut steps = vec![checkout()];
    if plan_job {
        let folder = std::path::Path::new(&pipeline.settings.plan_file)
            .parent()
            .map(|p| p.display().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| ".".to_string());
        steps.push(
            Map::new()
                .with("uses", "actions/download-artifact@v4")
                .with(
                    "with",
                    Map::new().with("name", ARTIFACT).with("path", folder),
                )
                .into(),
        );
    }
    steps
}

/// A `run:` step of `words` as one shell line; refused when the line
/// holds `${{`, which GitHub would evaluate.
fn run_step(name: Option<&str>, words: &[String]) -> Result<Value, PipelineError> {
    let line = shell_line(words);
    if line.contains("${{") {
        return Err(PipelineError::Expression { line });
    }
    let mut step = Map::new();
    if let Some(name) = name {
        step.set("name", name);
    }
    step.set("run", line);
    Ok(step.into())
}
