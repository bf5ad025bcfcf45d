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

use super::model::{
    comment, distinct_names, flow_list, job_name, need_comment, scalar, shell_line, Grouping,
    Pipeline, PipelineError, Runner,
};

/// GitHub's limit of jobs in one workflow run.
pub const JOBS_LIMIT: usize = 256;

const PLAN_JOB: &str = "hub-plan";
const FINISH_JOB: &str = "hub-finish";
const ARTIFACT: &str = "hub-plan";

pub fn render(pipeline: &Pipeline) -> Result<String, PipelineError> {
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
    let mut out = String::new();
    comment(&mut out, 0, &pipeline.headline());
    out.push_str(&format!(
        "name: {}\non:\n  workflow_dispatch: {{}}\njobs:\n",
        scalar(&format!(
            "hub {} {}",
            pipeline.verb.as_str(),
            pipeline.stack
        ))
    ));
    let mut all = Vec::new();
    if let Some(command) = pipeline.plan_command() {
        out.push_str(&format!("  {PLAN_JOB}:\n"));
        runner(&mut out, &pipeline.runner);
        out.push_str("    steps:\n      - uses: actions/checkout@v4\n");
        run_step(&mut out, None, &shell_line(&command));
        out.push_str(&format!(
            "      - uses: actions/upload-artifact@v4\n        with:\n          name: {ARTIFACT}\n          path: {}\n",
            scalar(&pipeline.settings.plan_file)
        ));
        all.push(PLAN_JOB.to_string());
    }
    match waves {
        true => wave_jobs(&mut out, pipeline, plan_job, &mut all),
        false => component_jobs(&mut out, pipeline, plan_job, &mut all),
    }
    if let Some(finish) = finish {
        out.push_str(&format!("  {FINISH_JOB}:\n"));
        comment(
            &mut out,
            4,
            "Always: it closes the run and says which component failed or never ran.",
        );
        out.push_str("    if: ${{ always() }}\n");
        if !all.is_empty() {
            out.push_str(&format!("    needs: {}\n", flow_list(&all)));
        }
        runner(&mut out, &pipeline.runner);
        steps_start(&mut out, pipeline, plan_job);
        run_step(&mut out, None, &shell_line(&finish));
    }
    Ok(out)
}

fn component_jobs(out: &mut String, pipeline: &Pipeline, plan_job: bool, all: &mut Vec<String>) {
    for job in &pipeline.jobs {
        let name = job_name(pipeline.verb, &job.component);
        out.push_str(&format!("  {name}:\n"));
        if let Some(reason) = &job.reason {
            comment(out, 4, &format!("{}: {reason}", job.action.as_str()));
        }
        if plan_job || !job.needs.is_empty() {
            out.push_str("    needs:\n");
            if plan_job {
                out.push_str(&format!("      - {PLAN_JOB}\n"));
            }
            for need in &job.needs {
                comment(out, 6, &need_comment(need));
                out.push_str(&format!(
                    "      - {}\n",
                    job_name(pipeline.verb, &need.component)
                ));
            }
        }
        runner(out, &job.runner);
        steps_start(out, pipeline, plan_job);
        run_step(
            out,
            None,
            &shell_line(&pipeline.component_command(&job.component)),
        );
        all.push(name);
    }
}

/// `--group waves`: a job per wave, a step per component; each wave
/// needs the one before. A wave's runner is the plan's (`default`).
fn wave_jobs(out: &mut String, pipeline: &Pipeline, plan_job: bool, all: &mut Vec<String>) {
    let verb = pipeline.verb.as_str();
    for wave in 0..pipeline.waves {
        let name = format!("{verb}-wave-{}", wave + 1);
        out.push_str(&format!("  {name}:\n"));
        let before = match wave {
            0 => plan_job.then(|| PLAN_JOB.to_string()),
            _ => Some(format!("{verb}-wave-{wave}")),
        };
        if let Some(before) = before {
            out.push_str(&format!("    needs: [{before}]\n"));
        }
        runner(out, &pipeline.runner);
        steps_start(out, pipeline, plan_job);
        for job in pipeline.wave(wave) {
            let label = format!("{} {}", job.action.as_str(), job.component);
            run_step(
                out,
                Some(&label),
                &shell_line(&pipeline.component_command(&job.component)),
            );
        }
        all.push(name);
    }
}

fn runner(out: &mut String, runner: &Runner) {
    match runner.tags.is_empty() {
        true => out.push_str("    runs-on: ubuntu-latest\n"),
        false => out.push_str(&format!("    runs-on: {}\n", flow_list(&runner.tags))),
    }
    if let Some(image) = &runner.image {
        out.push_str(&format!("    container: {}\n", scalar(image)));
    }
    if !runner.env.is_empty() {
        out.push_str("    env:\n");
        for (name, value) in &runner.env {
            out.push_str(&format!("      {}: {}\n", scalar(name), scalar(value)));
        }
    }
}

/// The checkout, and the plan file from the plan job's artifact.
fn steps_start(out: &mut String, pipeline: &Pipeline, plan_job: bool) {
    out.push_str("    steps:\n      - uses: actions/checkout@v4\n");
    if plan_job {
        let folder = std::path::Path::new(&pipeline.settings.plan_file)
            .parent()
            .map(|p| p.display().to_string())
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| ".".to_string());
        out.push_str(&format!(
            "      - uses: actions/download-artifact@v4\n        with:\n          name: {ARTIFACT}\n          path: {}\n",
            scalar(&folder)
        ));
    }
}

fn run_step(out: &mut String, name: Option<&str>, line: &str) {
    match name {
        Some(name) => out.push_str(&format!(
            "      - name: {}\n        run: {}\n",
            scalar(name),
            scalar(line)
        )),
        None => out.push_str(&format!("      - run: {}\n", scalar(line))),
    }
}
