//! The flags of `hub report`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  hub report -s hub.yaml.state -o run.html
  hub deploy hub.yaml.elaborate --report run.json; hub report --from run.json -o run.html

`hub report STATE|REPORT.json -o FILE.html` (an argument) still works, with a warning.")]
pub struct ReportArgs {
    /// Deprecated: the state or JSON report as an argument; warns and
    /// reads it as `-s` or `--from`
    #[arg(value_name = "STATE|REPORT.json", hide = true, conflicts_with = "from")]
    pub input: Option<PathBuf>,
    /// The run of a JSON report written by `--report FILE.json`, instead of
    /// the last run the state records
    #[arg(long = "from", value_name = "REPORT.json")]
    pub from: Option<PathBuf>,
    /// The HTML file to write
    #[arg(short = 'o', long = "output", value_name = "FILE.html")]
    pub output: PathBuf,
    /// The state whose last run, outputs and logs the page shows
    /// [default: hub.yaml.state; with --from, the state the report names]
    #[arg(short = 's', long = "state", value_name = "PATH")]
    pub state: Option<PathBuf>,
}
