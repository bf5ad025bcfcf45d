//! The flags of `hub check`.

use super::{LockTimeoutArgs, SelectionArgs, StackArgs};
use clap::Args;

#[derive(Debug, Args)]
#[command(
    mut_arg("offset", |a| a.short_alias('o')),
    mut_arg("limit", |a| a.short_alias('l')),
    after_help = "\
Each selected component the state records as deployed runs its `check` verb (a Makefile \
target `check:`, a `check.sh` script; for a folder of *.tf files, `terraform plan \
-detailed-exitcode`) with the parameters the state recorded for it. The check must only \
read: exit 0 means in sync (healthy), 2 drifted, anything else failed; a component without \
a check is unverifiable. Each result is kept in the state as the component's health (see \
`hub state list`, `hub explain`, and `--status` of plan and deploy); the check's output is \
appended, masked, to STATE.logs/NAME.check.log. The state's lock is taken only to write the \
results.

Exit status: 1 when a check failed, else 0; with --detailed-exitcode, 2 when a component \
drifted and none failed.

Examples:
  hub check hub.yaml.elaborate -s hub.yaml.state
  hub check hub.yaml.elaborate -j 4 --format markdown --detailed-exitcode > drift.md"
)]
pub struct CheckArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// The state file; several separated by commas: the newest is read, all are written
    #[arg(
        short = 's',
        long = "state",
        value_name = "LIST",
        default_value = "hub.yaml.state"
    )]
    pub state: String,
    #[command(flatten)]
    pub lock: LockTimeoutArgs,
    #[command(flatten)]
    pub selection: SelectionArgs,
    /// Checks run at once; 0 = the number of CPUs
    #[arg(
        short = 'j',
        long = "jobs",
        value_name = "N",
        default_value = "1",
        env = "HUB_JOBS"
    )]
    pub jobs: usize,
    /// How much of hub's environment the checks see
    #[arg(long = "os-environment", value_name = "MODE", default_value = "no-tfvars", value_parser = ["everything", "no-tfvars", "strict"])]
    pub os_environment: String,
    /// Stop a check still running after this long (`90s`, `15m`; `0`: no limit); it then failed
    #[arg(long, value_name = "DURATION", env = "HUB_TIMEOUT", value_parser = hub_plan::timeout::parse)]
    pub timeout: Option<std::time::Duration>,
    /// Show secret values in the output instead of masking them
    #[arg(long)]
    pub reveal: bool,
    /// How the results are printed: `text` or `markdown` (an issue's body)
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "text")]
    pub format: super::CheckFormat,
    /// Exit 2 when a component drifted (and no check failed)
    #[arg(long = "detailed-exitcode")]
    pub detailed_exitcode: bool,
}
