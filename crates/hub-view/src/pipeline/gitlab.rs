//! The pipeline as GitLab CI YAML, meant to run as a dynamic child
//! pipeline: the job that writes it keeps it as an artifact and a trigger
//! job includes it (`trigger: include: - artifact: … job: …`).
//!
//! Jobs need the jobs of what they wait for (`needs:`), so a component
//! starts as soon as its dependencies succeeded, and a failure stops its
//! dependents only. GitLab takes at most 50 `needs` per job: a job that
//! would need more is refused, and `--group waves` writes one stage per
//! wave instead (no `needs:`; a stage starts when the one before it
//! succeeded). The plan file goes from the plan job to the others as an
//! artifact; the finish job, in the last stage, always runs.
//!
//! `-e` names are not written: GitLab gives every job its CI variables
//! as environment variables, where the jobs' hub reads them.

use super::model::{
    check_names, distinct_names, job_name, shell_line, Grouping, Job, Pipeline, PipelineError,
    Runner,
};
use super::tree::{document, list, Header, Map};

/// GitLab's limit of `needs` per job.
pub(crate) const NEEDS_LIMIT: usize = 50;

const PLAN_JOB: &str = "hub-plan";
const FINISH_JOB: &str = "hub-finish";

const HEADER: Header = &[
    "Written by `hub pipeline --target gitlab`: write it again rather than edit it.",
    "Run it as a child pipeline: trigger: {include: [{artifact: FILE, job: JOB}], strategy: depend}",
];

pub fn render(pipeline: &Pipeline) -> Result<String, PipelineError> {
    check_names(pipeline)?;
    distinct_names(pipeline, |c| job_name(pipeline.verb, c))?;
    let plan_job = pipeline.plan_command().is_some();
    let waves = pipeline.settings.grouping == Grouping::Waves;
    let mut stages = Vec::new();
    if plan_job {
        stages.push("plan".to_string());
    }
    match waves {
        true => stages.extend((1..=pipeline.waves).map(|w| format!("wave-{w}"))),
        false => stages.push(pipeline.verb.as_str().to_string()),
    }
    let finish = pipeline.finish_command();
    if finish.is_some() {
        stages.push("finish".to_string());
    }
    let mut file = Map::new().with("stages", list(stages));
    if let Some(command) = pipeline.plan_command() {
        let mut job = Map::new().with("stage", "plan");
        runner(&mut job, &pipeline.runner);
        job.set("script", list([shell_line(&command)]));
        job.set(
            "artifacts",
            Map::new().with("paths", list([pipeline.settings.plan_file.as_str()])),
        );
        file.set(PLAN_JOB, job);
    }
    for job in &pipeline.jobs {
        let name = job_name(pipeline.verb, &job.component);
        file.set(&name, component_job(pipeline, job, plan_job, waves)?);
    }
    if let Some(finish) = finish {
        let mut job = Map::new().with("stage", "finish").with("when", "always");
        runner(&mut job, &pipeline.runner);
        job.set("script", list([shell_line(&finish)]));
        file.set(FINISH_JOB, job);
    }
    Ok(document(HEADER, pipeline.provenance(), file))
}

fn component_job(
    pipeline: &Pipeline,
    job: &Job,
    plan_job: bool,
    waves: bool,
) -> Result<Map, PipelineError> {
    let mut out = Map::new();
    match waves {
        true => out.set("stage", format!("wave-{}", job.wave + 1)),
        false => out.set("stage", pipeline.verb.as_str()),
    }
    if !waves {
        let count = job.needs.len() + usize::from(plan_job);
        if count > NEEDS_LIMIT {
            return Err(PipelineError::TooManyNeeds {
                component: job.component.clone(),
                count,
                limit: NEEDS_LIMIT,
                target: "GitLab",
            });
        }
        let mut needs = Vec::new();
        if plan_job {
            needs.push(Map::new().with("job", PLAN_JOB).with("artifacts", true));
        }
        for need in &job.needs {
            let needed = job_name(pipeline.verb, &need.component);
            needs.push(Map::new().with("job", needed).with("artifacts", false));
        }
        out.set("needs", list(needs));
    }
    runner(&mut out, &job.runner);
    out.set(
        "script",
        list([shell_line(&pipeline.component_command(&job.component))]),
    );
    Ok(out)
}

fn runner(job: &mut Map, runner: &Runner) {
    if let Some(image) = &runner.image {
        job.set("image", image.as_str());
    }
    if !runner.tags.is_empty() {
        job.set("tags", list(runner.tags.iter().map(String::as_str)));
    }
    if !runner.env.is_empty() {
        let mut variables = Map::new();
        for (name, value) in &runner.env {
            variables.set(name, value.as_str());
        }
        job.set("variables", variables);
    }
}
