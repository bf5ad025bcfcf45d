//! The flags of `hub explain`.

use clap::Args;

#[derive(Debug, Args)]
#[command(
    group(clap::ArgGroup::new("format").args(["json", "yaml", "kv", "sh"])),
    after_help = "\
Without -c, the stack and every component are shown; -c shows one component, -g the stack \
only (with -c: both). Secret values print as `(masked)` unless --reveal. The text view is \
coloured on a terminal unless NO_COLOR is set.

Examples:
  hub explain hub.yaml.state
  hub explain hub.yaml.elaborate hub.yaml.state -c app --json
  eval \"$(hub explain hub.yaml.state -g --sh)\""
)]
pub struct ExplainArgs {
    /// `[ELABORATED] STATE`: the elaborated file (optional: the order of
    /// the components) and the state; several state files separated by
    /// commas: the newest is read
    #[arg(value_name = "FILE", required = true, num_args = 1..=2)]
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
    #[arg(short = 'l', long = "op-log", conflicts_with = "format")]
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
