//! The flags of `hub report`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  hub report hub.yaml.state -o run.html
  hub deploy hub.yaml.elaborate --report run.json; hub report run.json -o run.html")]
pub struct ReportArgs {
    /// A state (its last run) or a JSON report written by `--report FILE.json`
    #[arg(value_name = "STATE|REPORT.json")]
    pub input: PathBuf,
    /// The HTML file to write
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    pub output: PathBuf,
    /// The state whose outputs and logs the page shows (default: the one
    /// the report names, or STATE)
    #[arg(short = 's', long = "state", value_name = "PATH")]
    pub state: Option<PathBuf>,
}
