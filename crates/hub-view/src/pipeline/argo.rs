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
//! A container's command is a list, one word an item: a component name
//! is one item. Each `-e NAME` is the container's variable `NAME`, from
//! the key `NAME` of the Kubernetes secret `hub-variables`.

use super::model::{check_names, distinct_names, job_name, Pipeline, PipelineError, Runner};
use super::tree::{document, list, Header, Map};
use yaml_serde::Value;

const PLAN_TASK: &str = "hub-plan";
const FINISH: &str = "hub-finish";
const ARTIFACT: &str = "plan";
const GLOBAL: &str = "hub-plan";
/// The Kubernetes secret whose keys are the `-e` names.
pub(crate) const VARIABLES_SECRET: &str = "hub-variables";

const HEADER: Header =
    &["Written by `hub pipeline --target argo`: write it again rather than edit it."];

pub fn render(pipeline: &Pipeline) -> Result<String, PipelineError> {
    check_names(pipeline)?;
    distinct_names(pipeline, |c| job_name(pipeline.verb, c))?;
    let images = std::iter::once(&pipeline.runner).chain(pipeline.jobs.iter().map(|j| &j.runner));
    if images.into_iter().any(|r| r.image.is_none()) {
        return Err(PipelineError::NoImage);
    }
    let plan_task = pipeline.plan_command().is_some();
    let finish = pipeline.finish_command();
    let mut spec = Map::new().with("entrypoint", "main");
    if finish.is_some() {
        spec.set("onExit", FINISH);
    }
    let mut templates = vec![Map::new()
        .with("name", "main")
        .with(
            "dag",
            Map::new()
                .with("failFast", false)
                .with("tasks", list(tasks(pipeline, plan_task))),
        )
        .into()];
    if let Some(command) = pipeline.plan_command() {
        let mut template = Map::new().with("name", PLAN_TASK);
        template.set(
            "container",
            container(pipeline, &pipeline.runner, &command, true),
        );
        template.set(
            "outputs",
            Map::new().with(
                "artifacts",
                list([Map::new()
                    .with("name", ARTIFACT)
                    .with("path", pipeline.settings.plan_file.as_str())
                    .with("globalName", GLOBAL)]),
            ),
        );
        templates.push(template.into());
    }
    for job in &pipeline.jobs {
        let mut template = Map::new().with("name", job_name(pipeline.verb, &job.component));
        inputs(&mut template, pipeline, plan_task);
        let command = pipeline.component_command(&job.component);
        template.set(
            "container",
            container(pipeline, &job.runner, &command, true),
        );
        templates.push(template.into());
    }
    if let Some(finish) = finish {
        templates.extend(finish_templates(pipeline, plan_task, &finish));
    }
    spec.set("templates", list(templates));
    let file = Map::new()
        .with("apiVersion", "argoproj.io/v1alpha1")
        .with("kind", "Workflow")
        .with(
            "metadata",
            Map::new().with(
                "generateName",
                format!(
                    "hub-{}-{}-",
                    pipeline.verb.as_str(),
                    dns_name(&pipeline.stack)
                ),
            ),
        )
        .with("spec", spec);
    Ok(document(HEADER, pipeline.provenance(), file))
}

/// The DAG's tasks: the plan task, then one per component job.
fn tasks(pipeline: &Pipeline, plan_task: bool) -> Vec<Value> {
    let mut tasks = Vec::new();
    if plan_task {
        tasks.push(
            Map::new()
                .with("name", PLAN_TASK)
                .with("template", PLAN_TASK)
                .into(),
        );
    }
    for job in &pipeline.jobs {
        let name = job_name(pipeline.verb, &job.component);
        let mut task = Map::new()
            .with("name", name.as_str())
            .with("template", name);
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
            task.set("depends", depends.join(" && "));
        }
        if plan_task {
            task.set(
                "arguments",
                artifacts(format!(
                    "{{{{tasks.{PLAN_TASK}.outputs.artifacts.{ARTIFACT}}}}}"
                )),
            );
        }
        tasks.push(task.into());
    }
    tasks
}

/// `artifacts: [{name: plan, from: FROM}]`.
fn artifacts(from: String) -> Map {
    Map::new().with(
        "artifacts",
        list([Map::new().with("name", ARTIFACT).with("from", from)]),
    )
}

/// The exit handler: it always runs, closes the run and says which
/// component failed or never ran; with a plan task, through a step that
/// hands it the plan's global artifact.
fn finish_templates(pipeline: &Pipeline, plan_task: bool, finish: &[String]) -> Vec<Value> {
    let run = container(pipeline, &pipeline.runner, finish, false);
    if !plan_task {
        return vec![Map::new()
            .with("name", FINISH)
            .with("container", run)
            .into()];
    }
    let step = Map::new()
        .with("name", "finish")
        .with("template", format!("{FINISH}-run"))
        .with(
            "arguments",
            artifacts(format!("{{{{workflow.outputs.artifacts.{GLOBAL}}}}}")),
        );
    let mut inner = Map::new().with("name", format!("{FINISH}-run"));
    inputs(&mut inner, pipeline, plan_task);
    inner.set("container", run);
    vec![
        Map::new()
            .with("name", FINISH)
            .with("steps", list([list([step])]))
            .into(),
        inner.into(),
    ]
}

/// The plan file as the template's input artifact.
fn inputs(template: &mut Map, pipeline: &Pipeline, plan_task: bool) {
    if plan_task {
        template.set(
            "inputs",
            Map::new().with(
                "artifacts",
                list([Map::new()
                    .with("name", ARTIFACT)
                    .with("path", pipeline.settings.plan_file.as_str())]),
            ),
        );
    }
}

/// The container of a job: its image, its command as a list of words,
/// the runner's environment and, with `variables`, the `-e` names from
/// the secret [`VARIABLES_SECRET`].
fn container(pipeline: &Pipeline, runner: &Runner, command: &[String], variables: bool) -> Map {
    let mut container = Map::new();
    if let Some(image) = &runner.image {
        container.set("image", image.as_str());
    }
    container.set("command", list(command.iter().map(String::as_str)));
    let mut env: Vec<Value> = runner
        .env
        .iter()
        .map(|(name, value)| {
            Map::new()
                .with("name", name.as_str())
                .with("value", value.as_str())
                .into()
        })
        .collect();
    if variables {
        env.extend(pipeline.settings.variables.iter().map(|name| {
            let key = Map::new()
                .with("name", VARIABLES_SECRET)
                .with("key", name.as_str());
            Map::new()
                .with("name", name.as_str())
                .with("valueFrom", Map::new().with("secretKeyRef", key))
                .into()
        }));
    }
    if !env.is_empty() {
        container.set("env", list(env));
    }
    container
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
