//! The flags of `hub invoke` and `hub render`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Parameters come from the state's stack parameters (no prompting) and the outputs recorded \
for the component; -e values are exported to the component. No templates are rendered, no \
outputs are captured and the state is not written. Exit status: the component's.")]
pub struct InvokeArgs {
    /// The component, by its name in the stack
    #[arg(value_name = "COMPONENT", value_parser = hub_manifest::names::component_arg)]
    pub component: String,
    /// The verb to run (it must be listed in the component's `lifecycle.verbs`)
    #[arg(value_name = "VERB")]
    pub verb: String,
    /// The elaborated file [default: $HUB_ELABORATE]
    #[arg(short = 'm', long = "elaborate", value_name = "PATH")]
    pub elaborate: Option<PathBuf>,
    /// The state file [default: $HUB_STATE]
    #[arg(short = 's', long = "state", value_name = "PATH")]
    pub state: Option<PathBuf>,
    /// Base directory of git-sourced components
    #[arg(
        short = 'b',
        long = "base-dir",
        value_name = "DIR",
        env = "HUB_COMPONENTS_BASEDIR"
    )]
    pub base_dir: Option<PathBuf>,
    /// How much of hub's environment the component sees
    #[arg(long = "os-environment", value_name = "MODE", default_value = "no-tfvars", value_parser = ["everything", "no-tfvars", "strict"])]
    pub os_environment: String,
    /// Variables exported to the component, as NAME=value[,NAME=value]
    #[arg(short = 'e', long = "environment", value_name = "K=V,...")]
    pub environment: Vec<String>,
    /// Run a verb the component does not list
    #[arg(short = 'f', long = "force", env = "HUB_FORCE", value_parser = clap::builder::FalseyValueParser::new())]
    pub force: bool,
    /// Show secret values in the output instead of masking them
    #[arg(long)]
    pub reveal: bool,
    /// Stop the component when it runs longer than this (`90s`, `15m`,
    /// `1h30m`; `0`: no limit) unless the stack's `lifecycle.timeouts` gives
    /// it its own limit
    #[arg(long, value_name = "DURATION", env = "HUB_TIMEOUT", value_parser = hub_plan::timeout::parse)]
    pub timeout: Option<std::time::Duration>,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Each template is written next to itself without its `.template`/`.gotemplate` suffix (in \
place when it has none). With -m and -c the bindings are the stack parameters locked against \
the state, the component's recorded outputs and its expanded parameters; without them, the \
parameters and outputs the state recorded for the component (or for the stack). -a values \
come last. Nothing is written when any template fails.")]
pub struct RenderArgs {
    /// Templates to render: files or globs, relative to the current folder
    #[arg(value_name = "GLOB", required = true)]
    pub globs: Vec<String>,
    /// Template kind
    #[arg(short = 'k', long = "kind", value_name = "KIND", default_value = "curly", value_parser = ["curly", "mustache", "_mustache", "go"])]
    pub kind: String,
    /// Additional values, as NAME=value[,NAME=value]
    #[arg(short = 'a', long = "additional-parameters", value_name = "K=V,...")]
    pub additional: Vec<String>,
    /// The elaborated file [default: $HUB_ELABORATE] (optional: without it
    /// the state alone gives the values)
    #[arg(short = 'm', long = "elaborate", value_name = "PATH")]
    pub elaborate: Option<PathBuf>,
    /// The state file [default: $HUB_STATE]; several separated by commas:
    /// the newest is read
    #[arg(short = 's', long = "state", value_name = "PATH")]
    pub state: Option<PathBuf>,
    /// The component whose parameters and outputs the templates see
    /// [default: $HUB_COMPONENT] (without one: the stack's)
    #[arg(short = 'c', long = "component", value_name = "NAME", value_parser = hub_manifest::names::component_arg)]
    pub component: Option<String>,
    /// Base directory of git-sourced components
    #[arg(
        short = 'b',
        long = "base-dir",
        value_name = "DIR",
        env = "HUB_COMPONENTS_BASEDIR"
    )]
    pub base_dir: Option<PathBuf>,
}
