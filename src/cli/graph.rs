//! The flags of `hub graph`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The elaborated file, or a stack manifest followed by parameters files
    #[arg(value_name = "MANIFEST", required = true)]
    pub manifest: Vec<PathBuf>,
    /// A state file: each component is shown with its status there
    #[arg(short = 's', long = "state", value_name = "PATH")]
    pub state: Option<PathBuf>,
    /// Values for `fromEnv` parameters, as NAME=value[,NAME=value]
    #[arg(short = 'e', long = "environment", value_name = "K=V,...")]
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    #[arg(short = 'b', long = "base-dir", alias = "baseDir", value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Output format
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "dot")]
    pub format: super::GraphFormat,
    /// Draw only the components whose inputs differ between BASE and the
    /// work tree (as `hub plan --affected` selects them), and what they want
    #[arg(long, value_name = "BASE", num_args = 0..=1, require_equals = true, default_missing_value = "")]
    pub affected: Option<String>,
    /// Plan through the graph as `hub plan --plan-steps` does (running
    /// each component's plan step) and mark the components deferred until
    /// an upstream applies
    #[arg(long = "plan-steps")]
    pub plan_steps: bool,
}
