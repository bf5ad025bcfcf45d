//! The pipeline as an Argo Workflows `Workflow`: a DAG template whose
//! tasks are the plan job and one job per component, each depending on
//! the jobs of what it waits for; `failFast: false`, so a failure stops
//! its dependents only. The plan file is an artifact of the plan task
//! (also a global output, for the exit handler), given to every other
//! task; the exit handler (`onExit`) always runs `hub run finish`.
//!
//! Every job runs in a container, so an image is required (`--image`, or
//! `image` in `lifecycle.runners`): one holding hub and the stack's
//! files, in its working folder. Runner tags have no meaning here.

use super::model::{
    comment, distinct_names, flow_list, job_name, need_comment, scalar, Pipeline, PipelineError,
    Runner,
};

const PLAN_TASK: &str = "hub-plan";
const FINISH: &str = "hub-finish";
const ARTIFACT: &str = "plan";
const GLOBAL: &str = "hub-plan";

pub fn render(pipeline: &Pipeline) -> Result<String, PipelineError> {
    distinct_names(pipeline, |c| job_name(pipeline.verb, c))?;
    let images = std::iter::once(&pipeline.runner).chain(pipeline.jobs.iter().map(|j| &j.runner));
    if images.into_iter().any(|r| r.image.is_none()) {
        return Err(PipelineError::NoImage);
    }
    let plan_task = pipeline.plan_command().is_some();
    let mut out = String::new();
    comment(&mut out, 0, &pipeline.headline());
    out.push_str("apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n");
    out.push_str(&format!(
        "  generateName: {}\n",
        scalar(&format!(
            "hub-{}-{}-",
            pipeline.verb.as_str(),
            dns_name(&pipeline.stack)
        ))
    ));
    let finish = pipeline.finish_command();
    out.push_str("spec:\n  entrypoint: main\n");
    if finish.is_some() {
        out.push_str(&format!("  onExit: {FINISH}\n"));
    }
    out.push_str("  templates:\n");
    out.push_str("    - name: main\n      dag:\n        failFast: false\n        tasks:\n");
    if plan_task {
        out.push_str(&format!(
            "          - name: {PLAN_TASK}\n            template: {PLAN_TASK}\n"
        ));
    }
    for job in &pipeline.jobs {
        let name = job_name(pipeline.verb, &job.component);
        out.push_str(&format!("          - name: {name}\n"));
        if let Some(reason) = &job.reason {
            comment(&mut out, 12, &format!("{}: {reason}", job.action.as_str()));
        }
        for need in &job.needs {
            comment(&mut out, 12, &need_comment(need));
        }
        out.push_str(&format!("            template: {name}\n"));
        let mut depends: Vec<String> = Vec::new();
        if plan_task {
            depends.push(PLAN_TASK.to_string());
        }
        depends.extend(
            job.needs
                .iter()
                .map(|n| job_name(pipeline.verb, &n.component)),
        );
        if !depends.is_empty() {
            out.push_str(&format!(
                "            depends: {}\n",
                scalar(&depends.join(" && "))
            ));
        }
        if plan_task {
            out.push_str(&format!(
                "            arguments:\n              artifacts:\n                - name: {ARTIFACT}\n                  from: {}\n",
                scalar(&format!("{{{{tasks.{PLAN_TASK}.outputs.artifacts.{ARTIFACT}}}}}"))
            ));
        }
    }
    if let Some(command) = pipeline.plan_command() {
        out.push_str(&format!("    - name: {PLAN_TASK}\n"));
        container(&mut out, &pipeline.runner, &command);
        out.push_str(&format!(
            "      outputs:\n        artifacts:\n          - name: {ARTIFACT}\n            path: {}\n            globalName: {GLOBAL}\n",
            scalar(&pipeline.settings.plan_file)
        ));
    }
    for job in &pipeline.jobs {
        out.push_str(&format!(
            "    - name: {}\n",
            job_name(pipeline.verb, &job.component)
        ));
        inputs(&mut out, pipeline, plan_task);
        container(
            &mut out,
            &job.runner,
            &pipeline.component_command(&job.component),
        );
    }
    if let Some(finish) = finish {
        out.push_str(&format!("    - name: {FINISH}\n"));
        comment(&mut out, 6, "The exit handler: it always runs, closes the run and says which component failed or never ran.");
        match plan_task {
            true => {
                out.push_str(&format!(
                    "      steps:\n        - - name: finish\n            template: {FINISH}-run\n            arguments:\n              artifacts:\n                - name: {ARTIFACT}\n                  from: {}\n",
                    scalar(&format!("{{{{workflow.outputs.artifacts.{GLOBAL}}}}}"))
                ));
                out.push_str(&format!("    - name: {FINISH}-run\n"));
                inputs(&mut out, pipeline, plan_task);
                container(&mut out, &pipeline.runner, &finish);
            }
            false => container(&mut out, &pipeline.runner, &finish),
        }
    }
    Ok(out)
}

/// The plan file as the template's input artifact.
fn inputs(out: &mut String, pipeline: &Pipeline, plan_task: bool) {
    if plan_task {
        out.push_str(&format!(
            "      inputs:\n        artifacts:\n          - name: {ARTIFACT}\n            path: {}\n",
            scalar(&pipeline.settings.plan_file)
        ));
    }
}

fn container(out: &mut String, runner: &Runner, command: &[String]) {
    out.push_str("      container:\n");
    if let Some(image) = &runner.image {
        out.push_str(&format!("        image: {}\n", scalar(image)));
    }
    out.push_str(&format!("        command: {}\n", flow_list(command)));
    if !runner.env.is_empty() {
        out.push_str("        env:\n");
        for (name, value) in &runner.env {
            out.push_str(&format!(
                "          - name: {}\n            value: {}\n",
                scalar(name),
                scalar(value)
            ));
        }
    }
}

/// `name` in lower case, every character other than a letter, a digit
/// or `-` made `-`: a Kubernetes object name's prefix.
fn dns_name(name: &str) -> String {
    name.chars()
        .map(|c| match c.is_ascii_alphanumeric() || c == '-' {
            true => c.to_ascii_lowercase(),
            false => '-',
        })
        .collect()
}
