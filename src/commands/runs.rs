//! `hub deploy --plan PLAN -c NAME` as one job of a pipeline, and
//! `hub run finish`: the run of a saved plan deployed by many writers.

use crate::error::Error;
use hub_manifest::diag::Warnings;

/// `hub run …`.
pub fn run(args: crate::cli::RunCommandArgs, warnings: &mut Warnings) -> Result<(), Error> {
    match args.command {
        crate::cli::RunCommand::Finish(args) => finish(args, warnings),
    }
}

/// `hub run finish`.
fn finish(args: crate::cli::RunFinishArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    Err(Error::Usage {
        flag: "finish",
        value: args.plan.display().to_string(),
        reason: "not built yet on this branch".into(),
    })
}

/// `hub deploy --plan PLAN -c NAME`.
pub fn deploy_job(args: &crate::cli::DeployArgs, _warnings: &mut Warnings) -> Result<(), Error> {
    Err(Error::Usage {
        flag: "--job",
        value: args.common.selection.components.join(","),
        reason: "not built yet on this branch".into(),
    })
}
