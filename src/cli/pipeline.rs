//! The flags of `hub pipeline` (issue 28, branch `pipeline`).

use super::run::{SelectionArgs, StackArgs, StateArgs};
use clap::Args;
use std::path::PathBuf;

const PIPELINE_HELP: &str = "\
The pipeline has a first job that makes and saves the plan (`hub plan … --out PLAN`; none \
with --plan, whose file the jobs must find), one job per component the plan runs \
(`hub deploy --plan PLAN -c NAME -s STATE --job`, or `undeploy`), each needing the jobs of \
what the plan makes it wait for (`hub plan` says why), and a last job that always \
runs `hub run finish --plan PLAN -s STATE`. With --policy, the plan job is given the \
policy files too and records them, with their digests, in the plan: every job evaluates \
them again, as `deploy --plan` does, and refuses a plan they deny or that changed; a plan \
they deny writes no pipeline. Components the plan does not run (no-op, \
skip) get no job. Each job runs where the stack's `lifecycle.runners` says (its \
component's entry, else `default`), else on --tag and --image. The jobs share the state, so \
it must be one every runner reaches (s3://, gs://, az://): a local state is refused unless \
--allow-local-state says the runners share its folder. Write it from the folder \
the jobs start in: the stack's files are named as given. `-e NAME=value` makes this plan \
only: the pipeline names NAME, and its jobs read it from the CI's variables (GitLab's, the \
GitHub secret NAME, the key NAME of the Kubernetes secret `hub-variables` for Argo).

Examples:
  hub pipeline --target gitlab hub.yaml params.yaml -s s3://bucket/stack.state -o child.yml
  hub pipeline --target github hub.yaml -s s3://bucket/stack.state --tag self-hosted -o .github/workflows/stack.yml
  hub pipeline --target argo hub.yaml -s s3://bucket/stack.state --image registry/stack:1 -o workflow.yaml";

#[derive(Debug, Args)]
#[command(
    after_help = PIPELINE_HELP,
    mut_arg("manifest", |a| a.required(false).required_unless_present("plan")),
    mut_arg("limit", |a| a.short_alias('l')),
    mut_arg("no_state", |a| a.hide(true)),
    mut_arg("lock_timeout", |a| a.help("Wait this long for a run that holds the state's lock to end (`30s`, `5m`, `1h`; `0`: refuse at once)")),
)]
pub struct PipelineArgs {
    /// The CI engine the pipeline is written for
    #[arg(long, value_name = "TARGET", value_parser = ["gitlab", "github", "argo"])]
    pub target: String,
    #[command(flatten)]
    pub stack: StackArgs,
    #[command(flatten)]
    pub state: StateArgs,
    /// Accept a local state file: the runners of every job share the
    /// folder it is in (one machine, or a shared mount)
    #[arg(long = "allow-local-state")]
    pub allow_local_state: bool,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Plan as `deploy --changed` runs: components whose inputs did not
    /// change are no-ops and get no job
    #[arg(long)]
    pub changed: bool,
    /// An undeploy pipeline: the plan's waits, which reverse the deploy's
    #[arg(long, conflicts_with = "changed")]
    pub undeploy: bool,
    /// A plan saved by `hub plan --out`: the jobs are its components, and
    /// no job makes the plan (the jobs read PLAN as given)
    #[arg(
        long,
        value_name = "PLAN",
        conflicts_with_all = ["manifest", "components", "affected", "with_deps", "with_dependents", "offset", "limit", "status", "changed", "undeploy"]
    )]
    pub plan: Option<PathBuf>,
    /// Write the pipeline to FILE instead of stdout
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The image of the jobs whose component has none in
    /// `lifecycle.runners`
    #[arg(long, value_name = "IMAGE")]
    pub image: Option<String>,
    /// Runner tags of the jobs whose component has none in
    /// `lifecycle.runners` (comma-separated)
    #[arg(long = "tag", value_name = "LIST", value_delimiter = ',')]
    pub tags: Vec<String>,
    /// `components`: a job per component, needing what it waits for;
    /// `waves`: the plan's waves one after the other (a GitLab stage or a
    /// GitHub job per wave), for pipelines over the engine's limits
    #[arg(long, value_name = "GROUP", default_value = "components", value_parser = ["components", "waves"])]
    pub group: String,
    /// The command the jobs run hub with
    #[arg(long = "hub", value_name = "COMMAND", default_value = "hub")]
    pub hub: String,
    /// Where the jobs keep the plan the first job saves (default
    /// `hub.plan`; `/tmp/hub.plan` for Argo, whose artifacts have
    /// absolute paths)
    #[arg(long = "plan-file", value_name = "PATH", conflicts_with = "plan")]
    pub plan_file: Option<String>,
    #[command(flatten)]
    pub policy: super::policy::PolicyArgs,
}
