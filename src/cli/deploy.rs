//! The flags of `hub deploy`, `hub undeploy` and `hub plan`.

use super::change::{ChangeArgs, ChangeLockArgs};
use super::headings::PLANS;
use super::run::{CommonRunArgs, CompatibilityArgs, ExecuteArgs, GuessArgs};
use clap::Args;
use std::path::PathBuf;

pub(super) const RUN_HELP: &str = "\
MANIFEST is an elaborated file (hub.yaml.elaborate), or a stack manifest (hub.yaml) followed \
by its parameters files, which is then elaborated in memory.

The state (-s) is locked for the whole run (STATE.lock); each component's start and end are \
appended to STATE.journal, which is folded into STATE at the end of the run (and now and \
then during it); `hub state pull STATE` shows the state with the journal applied. \
Each component's output is shown prefixed with its name, masked, and appended to \
STATE.logs/COMPONENT.log. Exit status: 0 when the run finished (optional components may \
have failed), 1 when it failed (a component that ran longer than --timeout or its \
`lifecycle.timeouts` entry fails), 2 when the state could not be written, 130 when \
interrupted by SIGINT, 143 by SIGTERM.";

#[derive(Debug, Args)]
#[command(
    after_help = DEPLOY_EXAMPLES,
    after_long_help = deploy_help(),
    mut_arg("offset", |a| a.short_alias('o')),
    mut_arg("limit", |a| a.short_alias('l')),
    mut_arg("manifest", |a| a.required(false).required_unless_present_any(["plan", "change"])),
    mut_arg("state", |a| a.default_value_if("plan", clap::builder::ArgPredicate::IsPresent, Some(""))),
    mut_arg("change", |a| a.conflicts_with_all(["plan", "components", "affected", "with_deps", "with_dependents", "offset", "limit", "status", "changed", "replace", "prune", "no_state"])),
)]
pub struct DeployArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,
    #[command(flatten)]
    pub execute: ExecuteArgs,
    /// Skip components whose folder, parameters and upstream outputs are
    /// the same as at their last successful deploy
    #[arg(long)]
    pub changed: bool,
    #[command(flatten)]
    pub replace: ReplaceArgs,
    /// After the deploy, undeploy the components the state holds and the
    /// stack no longer lists, dependents first, and forget them
    #[arg(long)]
    pub prune: bool,
    /// Apply a plan saved by `hub plan --out`: exactly its components,
    /// refused when stale; it names its stack and state (MANIFEST and -s
    /// may repeat them). With `-c NAME`: one component of the plan, as a
    /// job of a pipeline (`--job`)
    #[arg(
        long,
        value_name = "PLAN",
        conflicts_with_all = ["affected", "with_deps", "with_dependents", "offset", "limit", "status", "changed", "prune", "no_state"],
        help_heading = PLANS,
        hide_short_help = true
    )]
    pub plan: Option<PathBuf>,
    /// Run as one job of a pipeline: with `--plan PLAN -c NAME`, deploy
    /// exactly the component NAME of the plan's run, holding a lease on it
    /// alone while other jobs deploy other components (see `hub run finish`)
    #[arg(long, requires_all = ["plan", "components"], help_heading = PLANS, hide_short_help = true)]
    pub job: bool,
    /// With `--plan` or `--change`: a component planned again during the
    /// deploy (deferred by the plan, or an output it reads changed since)
    /// that differs from the plan runs with the new values if the
    /// policies pass on it, instead of being refused
    #[arg(long, help_heading = PLANS, hide_short_help = true)]
    pub replan: bool,
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub change_lock: ChangeLockArgs,
    #[command(flatten)]
    pub compatibility: CompatibilityArgs,
}

/// `--replace` of a deploy (and of `plan`).
#[derive(Debug, Args)]
pub struct ReplaceArgs {
    /// Deploy these components (comma-separated) again (`rerun`: nothing
    /// is undeployed) even where `--changed` would skip them as unchanged
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = hub_manifest::names::component_arg)]
    pub replace: Vec<String>,
}

#[derive(Debug, Args)]
#[command(
    after_help = UNDEPLOY_EXAMPLES,
    after_long_help = undeploy_help(),
    mut_arg("offset", |a| a.short_alias('o')),
    mut_arg("limit", |a| a.short_alias('l')),
)]
pub struct UndeployArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,
    #[command(flatten)]
    pub execute: ExecuteArgs,
    #[command(flatten)]
    pub guess: GuessArgs,
    #[command(flatten)]
    pub change: ChangeArgs,
    #[command(flatten)]
    pub change_lock: ChangeLockArgs,
    #[command(flatten)]
    pub compatibility: CompatibilityArgs,
}

/// The examples `deploy -h` shows.
const DEPLOY_EXAMPLES: &str = "\
Examples:
  hub deploy hub.yaml params.yaml -s demo.state
  hub deploy hub.yaml.elaborate -c ingress,dns       redeploy two components
  hub deploy hub.yaml.elaborate -c app+              app and everything it depends on
  hub deploy hub.yaml.elaborate --offset app         resume at app

More options, saved plans and the Hub CLI's flags: hub deploy --help";

/// The Hub CLI's short spellings a deploy and an undeploy accept.
const HUB_CLI_SHORTS: &str = "\
The Hub CLI's short flags are accepted and not listed: -o (--offset), -l (--limit), \
-y (--dry), -g (--load-global-state).";

pub(super) fn deploy_help() -> String {
    format!(
        "{RUN_HELP}

{HUB_CLI_SHORTS}

Examples:
  hub deploy hub.yaml params.yaml -s demo.state
  hub deploy hub.yaml.elaborate -c ingress,dns       redeploy two components
  hub deploy hub.yaml.elaborate -c app+              app and everything it depends on
  hub deploy hub.yaml.elaborate --prune              also undeploy components removed from the stack
  hub deploy hub.yaml.elaborate --offset app --limit web   resume at app, stop after web
  hub deploy --plan plan.json                        apply a plan saved by `hub plan --out`
  hub deploy --plan plan.json -c dns --job           one pipeline job: the component dns of the plan's run
  hub deploy --plan plan.json --replan               accept components planned again with the applied outputs, policies permitting
  hub deploy --change 42 -s prod.state               apply the latest plan of change 42 (`hub change --help`)"
    )
}

/// The examples `undeploy -h` shows.
const UNDEPLOY_EXAMPLES: &str = "\
Examples:
  hub undeploy hub.yaml.elaborate -s demo.state
  hub undeploy hub.yaml.elaborate --guess=false -f   undeploy all, failures as warnings
  hub undeploy hub.yaml.elaborate -c +database       database and what depends on it

More options and the Hub CLI's flags: hub undeploy --help";

pub(super) fn undeploy_help() -> String {
    format!(
        "{RUN_HELP}

{HUB_CLI_SHORTS}

Examples:
  hub undeploy hub.yaml.elaborate -s demo.state
  hub undeploy hub.yaml.elaborate --guess=false -f   undeploy all, failures as warnings
  hub undeploy hub.yaml.elaborate -c +database       database and what depends on it

`-c X` refuses, before running anything, when a component outside the selection that \
depends on X (`depends`, or a capability it requires from X) is still deployed; `-c +X` \
takes those down first, `-f` goes on anyway."
    )
}

#[derive(Debug, Args)]
#[command(
    mut_arg("offset", |a| a.short_alias('o')),
    mut_arg("limit", |a| a.short_alias('l')),
    mut_arg("state", |a| a.help("The state to compare with (only read); several separated by commas: the newest")),
    mut_arg("no_state", |a| a.help("Plan without a state, as for a first deploy")),
    mut_arg("force", |a| a.help("Plan as `--force` would run: go on after mandatory failures, accept a state that does not match")),
    mut_arg("reveal", |a| a.help("Show secret values instead of masking them")),
    mut_arg("jobs", |a| a.help("Plan the waves for this many components at once; 0 = the number of CPUs")),
    mut_arg("report", |a| a.help("Write the plan as a report: JSON (per component: what would happen and why), or HTML with a `.html` name")),
    mut_arg("guess", |a| a.help("With --undeploy: skip trailing components that never got a state entry")),
    mut_arg("replace", |a| a.help("Plan these components (comma-separated) as `rerun`: they deploy again, nothing undeployed, even where `--changed` would skip them")),
    mut_arg("lock_timeout", |a| a.help("Wait this long for a run that holds the state's lock to end (`30s`, `5m`, `1h`; `0`: refuse at once)")),
)]
pub struct PlanArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,
    #[command(flatten)]
    pub guess: GuessArgs,
    #[command(flatten)]
    pub replace: ReplaceArgs,
    /// Plan as `deploy --changed` runs: components whose folder,
    /// parameters and upstream outputs are unchanged are `no-op`
    #[arg(long)]
    pub changed: bool,
    /// Plan as `deploy --prune` runs: the components the state holds and
    /// the stack no longer lists count as `delete`
    #[arg(long)]
    pub prune: bool,
    /// Plan an undeploy instead of a deploy
    #[arg(long)]
    pub undeploy: bool,
    /// Also save the plan to this file (JSON), for `hub deploy --plan`
    #[arg(long, value_name = "PLAN", conflicts_with = "undeploy")]
    pub out: Option<PathBuf>,
    /// Output format; `markdown` is a pull-request comment (secrets always
    /// masked)
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "text")]
    pub format: super::OutputFormat,
    /// Exit status 0 when nothing would be deployed or undeployed, 2 when
    /// something would, 1 on an error or when a component would fail
    #[arg(long = "detailed-exitcode")]
    pub detailed_exitcode: bool,
    /// Text and markdown: show every component whole, with all its
    /// parameters (without it, only the parameters that differ from the
    /// state, and one line for a component that does not change)
    #[arg(long)]
    pub verbose: bool,
    /// Run each component's plan step (`plan.sh`, `make plan`, `terraform
    /// plan` of built-in Terraform) and plan the components after it with
    /// the outputs it plans; a component whose parameters read an output
    /// known only after an upstream applies is `deferred`. Plan steps run
    /// the component's code: off unless asked
    #[arg(
        long = "plan-steps",
        conflicts_with = "undeploy",
        hide_short_help = true
    )]
    pub plan_steps: bool,
    #[command(flatten)]
    pub change: ChangeArgs,
}
