//! The flags of `hub explain`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(
    group(clap::ArgGroup::new("format").args(["json", "yaml", "kv", "sh"])),
    after_help = "\
Without -c, the stack and every component are shown; -c shows one component, -g the stack \
only (with -c: both). Secret values print as `(masked)` unless --reveal. The text view is \
coloured on a terminal unless NO_COLOR is set.

Examples:
  hub explain -s hub.yaml.state
  hub explain -m hub.yaml.elaborate -s hub.yaml.state -c app --json
  eval \"$(hub explain -g --sh)\"

`hub explain [ELABORATED] STATE` (the Hub CLI's spelling) still works, with a warning.",
    after_long_help = "\
Without -c, the stack and every component are shown; -c shows one component, -g the stack \
only (with -c: both). Secret values print as `(masked)` unless --reveal. The text view is \
coloured on a terminal unless NO_COLOR is set.

Which view of a state: `hub explain` shows everything it records; `hub state list` one line \
per component; `hub state show NAME` one component whole; `hub state pull` the file as hub \
reads it (with its journal folded in).

The Hub CLI's `-l` (--op-log) is accepted and not listed. `hub explain [ELABORATED] STATE` \
(the Hub CLI's spelling) still works, with a warning.

Examples:
  hub explain -s hub.yaml.state
  hub explain -m hub.yaml.elaborate -s hub.yaml.state -c app --json
  eval \"$(hub explain -g --sh)\""
)]
pub struct ExplainArgs {
    /// The state; several separated by commas: the newest is read
    #[arg(
        short = 's',
        long = "state",
        value_name = "LIST",
        default_value = "hub.yaml.state"
    )]
    pub state: String,
    /// The elaborated file (optional: the order of the components)
    #[arg(short = 'm', long = "elaborate", value_name = "PATH")]
    pub elaborate: Option<PathBuf>,
    /// Deprecated: `[ELABORATED] STATE` as arguments (the Hub CLI's
    /// spelling); warns and reads them as `-m` and `-s`
    #[arg(value_name = "FILE", num_args = 0..=2, hide = true, conflicts_with_all = ["state", "elaborate"])]
    pub files: Vec<String>,
    /// Only this component
    #[arg(short = 'c', long = "component", value_name = "COMPONENT", value_parser = hub_manifest::names::component_arg)]
    pub component: Option<String>,
    /// The stack's parameters, outputs and capabilities (with -c: as well)
    #[arg(short = 'g', long = "global")]
    pub global: bool,
    /// Each component's `Outputs:` lines as it printed them
    #[arg(short = 'r', long = "raw-outputs")]
    pub raw_outputs: bool,
    /// The operation log instead (text only)
    #[arg(long = "op-log", short_alias = 'l', conflicts_with = "format")]
    pub op_log: bool,
    /// One JSON document, with the keys of the Hub CLI's `explain --json`
    #[arg(long)]
    pub json: bool,
    /// The JSON document as YAML
    #[arg(long)]
    pub yaml: bool,
    /// `path.to.key=value` lines (newlines in values written `\n`)
    #[arg(long)]
    pub kv: bool,
    /// `name='value'` shell assignments, safe to `eval`
    #[arg(long)]
    pub sh: bool,
    /// Print secret values instead of `(masked)`
    #[arg(long)]
    pub reveal: bool,
}
