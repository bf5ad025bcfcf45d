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

use super::model::{
    comment, distinct_names, flow_list, job_name, need_comment, scalar, shell_line, Grouping, Job,
    Pipeline, PipelineError, Runner,
};

/// GitLab's limit of `needs` per job.
pub const NEEDS_LIMIT: usize = 50;

const PLAN_JOB: &str = "hub-plan";
const FINISH_JOB: &str = "hub-finish";

pub fn render(pipeline: &Pipeline) -> Result<String, PipelineError> {
    distinct_names(pipeline, |c| job_name(pipeline.verb, c))?;
    let mut out = String::new();
    comment(&mut out, 0, &pipeline.headline());
    comment(
        &mut out,
        0,
        "Run it as a child pipeline: trigger: {include: [{artifact: FILE, job: JOB}], strategy: depend}",
    );
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
    out.push_str("stages:\n");
    for stage in &stages {
        out.push_str(&format!("  - {}\n", scalar(stage)));
    }
    if let Some(command) = pipeline.plan_command() {
        out.push_str(&format!("\n{PLAN_JOB}:\n  stage: plan\n"));
        runner(&mut out, &pipeline.runner);
        script(&mut out, &shell_line(&command));
        out.push_str("  artifacts:\n    paths:\n");
        out.push_str(&format!(
            "      - {}\n",
            scalar(&pipeline.settings.plan_file)
        ));
    }
    for job in &pipeline.jobs {
        component_job(&mut out, pipeline, job, plan_job, waves)?;
    }
    if let Some(finish) = finish {
        out.push_str(&format!("\n{FINISH_JOB}:\n  stage: finish\n"));
        comment(
            &mut out,
            2,
            "Always: it closes the run and says which component failed or never ran.",
        );
        out.push_str("  when: always\n");
        runner(&mut out, &pipeline.runner);
        script(&mut out, &shell_line(&finish));
    }
    Ok(out)
}

fn component_job(
    out: &mut String,
    pipeline: &Pipeline,
    job: &Job,
    plan_job: bool,
    waves: bool,
) -> Result<(), PipelineError> {
    let name = job_name(pipeline.verb, &job.component);
    out.push_str(&format!("\n{}:\n", scalar(&name)));
    if let Some(reason) = &job.reason {
        comment(out, 2, &format!("{}: {reason}", job.action.as_str()));
    }
    match waves {
        true => out.push_str(&format!("  stage: wave-{}\n", job.wave + 1)),
        false => out.push_str(&format!("  stage: {}\n", pipeline.verb.as_str())),
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
        match count {
            0 => out.push_str("  needs: []\n"),
            _ => {
                out.push_str("  needs:\n");
                if plan_job {
                    out.push_str(&format!("    - job: {PLAN_JOB}\n      artifacts: true\n"));
                }
                for need in &job.needs {
                    comment(out, 4, &need_comment(need));
                    let needed = job_name(pipeline.verb, &need.component);
                    out.push_str(&format!(
                        "    - job: {}\n      artifacts: false\n",
                        scalar(&needed)
                    ));
                }
            }
        }
    }
    runner(out, &job.runner);
    script(
        out,
        &shell_line(&pipeline.component_command(&job.component)),
    );
    Ok(())
}

fn runner(out: &mut String, runner: &Runner) {
    if let Some(image) = &runner.image {
        out.push_str(&format!("  image: {}\n", scalar(image)));
    }
    if !runner.tags.is_empty() {
        out.push_str(&format!("  tags: {}\n", flow_list(&runner.tags)));
    }
    if !runner.env.is_empty() {
        out.push_str("  variables:\n");
        for (name, value) in &runner.env {
            out.push_str(&format!("    {}: {}\n", scalar(name), scalar(value)));
        }
    }
}

fn script(out: &mut String, line: &str) {
    out.push_str("  script:\n");
    out.push_str(&format!("    - {}\n", scalar(line)));
}
