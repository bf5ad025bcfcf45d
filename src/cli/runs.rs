//! The flags of `hub run`: the run of a saved plan whose components are
//! deployed by separate jobs (`hub deploy --plan PLAN -c NAME`).

use clap::{Args, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
A pipeline's run has three steps: `hub plan --out PLAN` saves the plan, one job per \
component runs `hub deploy --plan PLAN -c NAME --job`, and `hub run finish --plan PLAN` \
closes the run. `hub pipeline` writes all three; `run` holds the last.")]
pub struct RunCommandArgs {
    #[command(subcommand)]
    pub command: RunCommand,
}

#[derive(Debug, Subcommand)]
pub enum RunCommand {
    /// Close the run of a plan deployed by pipeline jobs: fold what each
    /// job recorded into the state, release the run, print the summary.
    /// Exit status 1 when a component failed or never ran
    Finish(RunFinishArgs),
}

#[derive(Debug, Args)]
#[command(after_help = "\
The jobs of a pipeline run `hub deploy --plan PLAN -c NAME -s STATE --job`, one per component; \
the first of them opens the plan's run on the state, which refuses other plans and deploys until \
`hub run finish` closes it. Run it as the pipeline's last job, also when jobs failed or the \
pipeline was cancelled.

Examples:
  hub run finish --plan plan.json -s s3://bucket/demo.state
  hub run finish --plan plan.json -s demo.state --report run.json")]
pub struct RunFinishArgs {
    /// The plan saved by `hub plan --out` whose run the jobs deployed
    #[arg(long, value_name = "PLAN")]
    pub plan: PathBuf,
    /// The state the jobs wrote (the plan's state when not given)
    #[arg(short = 's', long = "state", value_name = "STATE")]
    pub state: Option<String>,
    /// Also write the run's report: JSON, or HTML with a `.html` name
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}
