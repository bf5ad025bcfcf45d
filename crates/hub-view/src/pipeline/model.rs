//! The pipeline a plan becomes, before it is written for one CI engine:
//! its jobs (one per component the plan runs), what each job needs (the
//! plan's waits, with their reasons), and where each job runs (the
//! stack's `lifecycle.runners`, then `--tag`/`--image`).
//!
//! Components the plan does not run (`no-op`, `skip`) get no job: a job
//! that needs one of them needs what that component waited for instead,
//! so the order the plan holds is kept through it.

use hub_manifest::Runner as RunnerEntry;
use hub_plan::plan::{Action, Plan};
use hub_plan::Verb;
use indexmap::IndexMap;
use std::collections::BTreeSet;

pub use super::tree::JobOrigin;

/// How long an undeploy job waits for the state's lock, held by the other
/// undeploy jobs one at a time.
pub(crate) const UNDEPLOY_LOCK_WAIT: &str = "1h";

/// The CI engine a pipeline is written for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    Gitlab,
    Github,
    Argo,
}

impl Target {
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Gitlab => "gitlab",
            Target::Github => "github",
            Target::Argo => "argo",
        }
    }
}

/// How jobs wait for each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Grouping {
    /// One job per component, each needing the jobs of what it waits for.
    Components,
    /// `--group waves`: GitLab stages or GitHub jobs per wave of the plan;
    /// a wave starts when the whole wave before it succeeded.
    Waves,
}

/// What `hub pipeline` was asked for, besides the plan.
#[derive(Debug, Clone)]
pub struct Settings {
    pub target: Target,
    pub grouping: Grouping,
    /// The command the jobs run hub with (`hub`).
    pub hub: String,
    /// The state location every job reads and writes (`-s`).
    pub state: String,
    /// Where the jobs find the plan file.
    pub plan_file: String,
    /// The plan job's arguments after `hub plan` (stack files, `-s`,
    /// selection flags); `None` with `--plan`: the plan file is given and
    /// no job makes it.
    pub plan_arguments: Option<Vec<String>>,
    /// The stack as the jobs of an undeploy name it (files, `-e`, `-b`,
    /// `--clouds`, `--lenient`/`--strict`).
    pub stack_arguments: Vec<String>,
    /// `--tag`: the runner tags of a component without its own.
    pub tags: Vec<String>,
    /// `--image`: the image of a component without its own.
    pub image: Option<String>,
    /// The names given with `-e`: the jobs read their values from the CI
    /// engine's variables, never from the pipeline's file.
    pub variables: Vec<String>,
}

/// Where a job runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Runner {
    pub tags: Vec<String>,
    pub image: Option<String>,
    pub env: IndexMap<String, String>,
}

/// A job another job needs, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Need {
    pub component: String,
    /// The plan's reasons (`` `depends` ``, `provides kubernetes`), and
    /// `through x (no-op)` when the wait passes a component without a job.
    pub reasons: Vec<String>,
}

/// One component's job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub component: String,
    pub action: Action,
    /// The plan's first reason for the action.
    pub reason: Option<String>,
    pub needs: Vec<Need>,
    pub runner: Runner,
    /// The plan's wave it is in, from 0.
    pub wave: usize,
}

/// A component of the plan that gets no job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    pub component: String,
    pub action: Action,
}

/// The pipeline of one plan.
#[derive(Debug, Clone)]
pub struct Pipeline {
    pub stack: String,
    pub verb: Verb,
    pub settings: Settings,
    /// In the plan's order.
    pub jobs: Vec<Job>,
    pub left_out: Vec<LeftOut>,
    /// The runner of the plan and finish jobs (`lifecycle.runners`'s
    /// `default`, then the flags).
    pub runner: Runner,
    /// How many waves the jobs form.
    pub waves: usize,
    /// The serial of the state the plan was made from; `None` when there
    /// was none yet.
    pub serial: Option<u64>,
}

impl Pipeline {
    /// The pipeline of `plan`, with the stack's `lifecycle.runners`.
    pub fn new(
        plan: &Plan,
        runners: &IndexMap<String, RunnerEntry>,
        settings: Settings,
    ) -> Pipeline {
        let wave_of: IndexMap<&str, usize> = plan
            .waves
            .iter()
            .enumerate()
            .flat_map(|(i, wave)| wave.iter().map(move |name| (name.as_str(), i)))
            .collect();
        let with_job: BTreeSet<&str> = plan
            .components
            .iter()
            .filter(|c| has_job(c.action))
            .map(|c| c.name.as_str())
            .collect();
        let waits: IndexMap<&str, &[hub_plan::plan::Wait]> = plan
            .components
            .iter()
            .map(|c| (c.name.as_str(), c.waits_for.as_slice()))
            .collect();
        let mut jobs = Vec::new();
        let mut left_out = Vec::new();
        for component in &plan.components {
            if !has_job(component.action) {
                left_out.push(LeftOut {
                    component: component.name.clone(),
                    action: component.action,
                });
                continue;
            }
            jobs.push(Job {
                component: component.name.clone(),
                action: component.action,
                reason: component.reasons.first().cloned(),
                needs: needs_of(&component.name, &waits, &with_job),
                runner: runner_of(&component.name, runners, &settings),
                wave: wave_of.get(component.name.as_str()).copied().unwrap_or(0),
            });
        }
        // Waves of the jobs alone, in order, without gaps.
        let used: BTreeSet<usize> = jobs.iter().map(|j| j.wave).collect();
        let renumber: IndexMap<usize, usize> =
            used.iter().enumerate().map(|(i, w)| (*w, i)).collect();
        for job in &mut jobs {
            job.wave = renumber[&job.wave];
        }
        Pipeline {
            stack: plan.stack.clone(),
            verb: plan.verb,
            runner: runner_of("", runners, &settings),
            settings,
            waves: used.len(),
            jobs,
            left_out,
            serial: plan.state.as_ref().and_then(|s| s.serial),
        }
    }

    /// Where the jobs come from, as the file's comment says it.
    pub fn provenance(&self) -> JobOrigin {
        let serial = self.serial;
        match (self.verb, self.plan_command().is_some()) {
            (Verb::Undeploy, _) => JobOrigin::Undeploy { serial },
            (_, true) => JobOrigin::Replanned { serial },
            (_, false) => JobOrigin::Saved { serial },
        }
    }

    /// The jobs of wave `index`.
    pub fn wave(&self, index: usize) -> impl Iterator<Item = &Job> {
        self.jobs.iter().filter(move |j| j.wave == index)
    }

    /// The command of a component's job, as words. A deploy's job
    /// deploys its component of the saved plan's run:
    /// `hub deploy --plan PLAN -c NAME -s STATE --job`. An undeploy is not
    /// saved as a plan: its job undeploys its component of the stack,
    /// waiting for the state's lock while another job holds it:
    /// `hub undeploy STACK… -s STATE -c NAME --lock-timeout 1h`.
    pub fn component_command(&self, component: &str) -> Vec<String> {
        let s = &self.settings;
        let mut words = vec![s.hub.clone(), self.verb.as_str().to_string()];
        match self.verb {
            Verb::Deploy => words.extend(["--plan".to_string(), s.plan_file.clone()]),
            Verb::Undeploy => words.extend(s.stack_arguments.iter().cloned()),
        }
        words.extend([
            "-s".to_string(),
            s.state.clone(),
            "-c".to_string(),
            component.to_string(),
        ]);
        match self.verb {
            Verb::Deploy => words.push("--job".to_string()),
            Verb::Undeploy => {
                words.extend(["--lock-timeout".to_string(), UNDEPLOY_LOCK_WAIT.to_string()])
            }
        }
        words
    }

    /// `hub plan … --out PLAN`: the first job's command; `None` when the
    /// plan is given (`--plan`), and for an undeploy.
    pub fn plan_command(&self) -> Option<Vec<String>> {
        let s = &self.settings;
        let arguments = s
            .plan_arguments
            .as_ref()
            .filter(|_| self.verb == Verb::Deploy)?;
        let mut words = vec![s.hub.clone(), "plan".to_string()];
        words.extend(arguments.iter().cloned());
        words.extend(["--out".to_string(), s.plan_file.clone()]);
        Some(words)
    }

    /// `hub run finish --plan PLAN -s STATE`: the last job's command, which
    /// closes the plan's run; `None` for an undeploy, which opens none.
    pub fn finish_command(&self) -> Option<Vec<String>> {
        let s = &self.settings;
        (self.verb == Verb::Deploy).then(|| {
            [
                s.hub.as_str(),
                "run",
                "finish",
                "--plan",
                &s.plan_file,
                "-s",
                &s.state,
            ]
            .map(String::from)
            .to_vec()
        })
    }
}

/// A component whose implementation runs gets a job; `no-op` and `skip`
/// do not. (`fail` never reaches here: a plan that would fail cannot be
/// saved, and the command refuses it first.)
fn has_job(action: Action) -> bool {
    action.runs() || action == Action::Fail
}

/// What `name`'s job needs: the jobs of the components it waits for,
/// through components without a job to what they waited for.
fn needs_of(
    name: &str,
    waits: &IndexMap<&str, &[hub_plan::plan::Wait]>,
    with_job: &BTreeSet<&str>,
) -> Vec<Need> {
    let mut needs: Vec<Need> = Vec::new();
    let mut seen = BTreeSet::new();
    let mut stack: Vec<(&str, Vec<String>)> = Vec::new();
    for wait in waits.get(name).copied().unwrap_or_default().iter().rev() {
        stack.push((wait.component.as_str(), wait.reasons.clone()));
    }
    while let Some((component, reasons)) = stack.pop() {
        if !seen.insert(component) {
            continue;
        }
        if with_job.contains(component) {
            needs.push(Need {
                component: component.to_string(),
                reasons,
            });
            continue;
        }
        for wait in waits
            .get(component)
            .copied()
            .unwrap_or_default()
            .iter()
            .rev()
        {
            let mut through = reasons.clone();
            through.push(format!("through `{component}`, which has no job"));
            stack.push((wait.component.as_str(), through));
        }
    }
    needs
}

/// `name`'s runner: its `lifecycle.runners` entry, else the `default`
/// entry, field by field over `--tag` and `--image`. `""` is the plan
/// and finish jobs' (the `default` entry).
fn runner_of(name: &str, runners: &IndexMap<String, RunnerEntry>, settings: &Settings) -> Runner {
    let own = runners.get(name);
    let default = runners.get("default");
    let pick =
        |field: fn(&RunnerEntry) -> bool| own.filter(|r| field(r)).or(default.filter(|r| field(r)));
    let tags = pick(|r| !r.tags.is_empty())
        .map(|r| r.tags.clone())
        .unwrap_or_else(|| settings.tags.clone());
    let image = pick(|r| !r.image.is_empty())
        .map(|r| r.image.clone())
        .or_else(|| settings.image.clone());
    let mut env = default.map(|r| r.env.clone()).unwrap_or_default();
    if let Some(own) = own {
        env.extend(own.env.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    Runner { tags, image, env }
}

/// Why a pipeline cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PipelineError {
    #[error(
        "the job of `{component}` would need {count} jobs; {target} allows {limit} `needs` per job"
    )]
    TooManyNeeds {
        component: String,
        count: usize,
        limit: usize,
        target: &'static str,
    },
    #[error(
        "the pipeline would have {count} jobs; {target} runs at most {limit} jobs in one workflow"
    )]
    TooManyJobs {
        count: usize,
        limit: usize,
        target: &'static str,
    },
    #[error("the components `{first}` and `{second}` would get the same job name `{job}`")]
    SameJobName {
        first: String,
        second: String,
        job: String,
    },
    #[error("`{}` cannot be written in a pipeline as {what}: {problem}", name.escape_debug())]
    BadName {
        what: &'static str,
        name: String,
        problem: hub_manifest::names::NameProblem,
    },
    #[error("the job line `{}` holds `${{{{`, which GitHub Actions would evaluate", line.escape_debug())]
    Expression { line: String },
    #[error("an Argo Workflow runs every job in a container, and no image is given")]
    NoImage,
    #[error("the plan would fail at `{}`: a pipeline runs a saved plan, and a plan that would fail is not saved", components.join("`, `"))]
    WouldFail { components: Vec<String> },
    #[error("the state `{location}` is a local file: the jobs of a pipeline run on runners of their own, which do not share it")]
    LocalState { location: String },
}

impl PipelineError {
    /// What to do about it.
    pub fn hint(&self) -> String {
        match self {
            PipelineError::TooManyNeeds { .. } | PipelineError::TooManyJobs { .. } => {
                "write it with `--group waves`: one stage (GitLab) or job (GitHub) per wave of the plan, each starting when the wave before it succeeded; or split the stack (`fromStack`)".into()
            }
            PipelineError::SameJobName { .. } => {
                "job names keep letters, digits, `-` and `_` of a component's name; rename one of the components".into()
            }
            PipelineError::WouldFail { .. } => {
                "`hub plan` says why for each of them; fix that, then write the pipeline again".into()
            }
            PipelineError::BadName { .. } => {
                "rename it in the stack: names reach job names, shell lines and runner tags, where a line break would start a line of its own and `${{` is a GitHub expression".into()
            }
            PipelineError::Expression { .. } => {
                "leave `${{` out of the stack's files, state and plan names given to `hub pipeline`".into()
            }
            PipelineError::LocalState { .. } => {
                "give a state every runner reaches (`-s s3://BUCKET/KEY`, `gs://BUCKET/KEY` or `az://CONTAINER/KEY`), or `--allow-local-state` when the runners share the folder it is in".into()
            }
            PipelineError::NoImage => {
                "give `--image IMAGE` (an image with hub and the stack's files), or set `image` in the stack's `lifecycle.runners` (`default` for all)".into()
            }
        }
    }
}

/// The job name of `component`: `deploy-NAME` (`undeploy-NAME`), with
/// every character other than a letter, a digit, `-` or `_` made `-`.
pub(crate) fn job_name(verb: Verb, component: &str) -> String {
    let kept: String = component
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '-',
            },
        )
        .collect();
    format!("{}-{kept}", verb.as_str())
}

/// Refuses names a pipeline would carry (the stack's, the components',
/// runner tags, images and environment names) that hold a line break,
/// a control character or `${{`; and component names holding `,`. An
/// elaborated stack checks them with their lines; this catches the ones
/// given another way (an elaborated file, a saved plan, `--tag`).
pub fn check_names(pipeline: &Pipeline) -> Result<(), PipelineError> {
    use hub_manifest::names::{check_component_name, check_name};
    let bad = |what: &'static str, name: &str, problem| PipelineError::BadName {
        what,
        name: name.to_string(),
        problem,
    };
    check_name(&pipeline.stack).map_err(|p| bad("the stack's name", &pipeline.stack, p))?;
    for job in &pipeline.jobs {
        check_component_name(&job.component)
            .map_err(|e| bad("a component name", &job.component, e.problem))?;
    }
    let runners = std::iter::once(&pipeline.runner).chain(pipeline.jobs.iter().map(|j| &j.runner));
    for runner in runners {
        for tag in &runner.tags {
            check_name(tag).map_err(|p| bad("a runner tag", tag, p))?;
        }
        if let Some(image) = &runner.image {
            check_name(image).map_err(|p| bad("an image", image, p))?;
        }
        for name in runner.env.keys() {
            check_name(name).map_err(|p| bad("an environment variable's name", name, p))?;
        }
    }
    Ok(())
}

/// Refuses two components whose job names are the same.
pub(crate) fn distinct_names(
    pipeline: &Pipeline,
    name: impl Fn(&str) -> String,
) -> Result<(), PipelineError> {
    let mut seen: IndexMap<String, &str> = IndexMap::new();
    for job in &pipeline.jobs {
        let id = name(&job.component);
        if let Some(first) = seen.insert(id.clone(), &job.component) {
            return Err(PipelineError::SameJobName {
                first: first.to_string(),
                second: job.component.clone(),
                job: id,
            });
        }
    }
    Ok(())
}

/// `words` as one POSIX shell line: a word of letters, digits and
/// `-_./:=,@%+` is written bare, any other single-quoted.
pub fn shell_line(words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|word| {
            let bare = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c));
            match bare {
                true => word.clone(),
                false => format!("'{}'", word.replace('\'', r"'\''")),
            }
        })
        .collect();
    quoted.join(" ")
}
