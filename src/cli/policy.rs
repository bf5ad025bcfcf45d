//! The flags of `hub policy` and `--policy` of plan, deploy and undeploy.

use clap::{Args, Subcommand};
use std::path::PathBuf;

/// `--policy FILE` (plan, deploy, undeploy).
#[derive(Debug, Args, Clone, Default)]
pub struct PolicyArgs {
    /// Also evaluate the rules of this policy file (a YAML list of rules,
    /// each `name`, `deny` or `warn`, `message`; or a Rego module,
    /// `FILE.rego`, with conftest's `deny`, `violation` and `warn` rules);
    /// may be repeated. The stack's `policies:` are always evaluated
    #[arg(long = "policy", value_name = "FILE", help_heading = super::headings::MORE, hide_short_help = true)]
    pub policies: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub struct PolicyCommandArgs {
    #[command(subcommand)]
    pub command: PolicyCommand,
}

#[derive(Debug, Subcommand)]
pub enum PolicyCommand {
    /// Evaluate policies against a plan: one saved by `hub plan --out`, or
    /// the output of `hub plan --format json`.
    Test(PolicyTestArgs),
}

#[derive(Debug, Args)]
#[command(after_help = "\
The rules are the `--policy` files' and, for a plan saved by `hub plan --out`, the `policies:` \
of the stack it names (read again from its files). They read `plan` (a saved plan is turned \
into the shape of `hub plan --format json`: each component's name, action, reasons and \
parameters), `change` (empty), `stack` (of a saved plan, from its stack; of a JSON plan, only \
its name) and `now` (the time, or HUB_NOW). Exit status: 0 when no rule denies, 1 when one \
denies or cannot be evaluated.

Examples:
  hub plan hub.yaml.elaborate -s demo.state --out plan.json
  hub policy test plan.json --policy policies.yaml
  hub plan hub.yaml.elaborate -s demo.state --format json > plan.json && hub policy test plan.json --policy policies.yaml")]
pub struct PolicyTestArgs {
    /// The plan: saved by `hub plan --out`, or printed by `hub plan --format json`
    #[arg(value_name = "PLAN")]
    pub plan: PathBuf,
    /// A policy file (YAML rules in CEL, or a Rego module `FILE.rego`); may
    /// be repeated (a saved plan's stack gives its own `policies:` too)
    #[arg(long = "policy", value_name = "FILE")]
    pub policies: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "text")]
    pub format: super::OutputFormat,
}
