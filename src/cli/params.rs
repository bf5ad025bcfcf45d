//! The flags of `hub cel` and `hub params`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  hub cel -- '3 - int({\"prime\": \"7\"}[prime])' prime=prime
  hub cel 'cloud.kind == \"gcp\" ? \"pd-ssd\" : \"gp2\"' cloud.kind=aws
  hub cel --yaml 'https://${host}/#{env == \"prod\" ? \"live\" : \"stage\"}' host=h,env=dev

Bindings are strings. Put `--` before an expression that starts with `-`.")]
pub struct CelArgs {
    /// The expression (without `#{` `}`), or with --yaml the value
    #[arg(value_name = "EXPR", allow_hyphen_values = true)]
    pub expression: String,
    /// Bindings as name=value[,name=value]; the value may contain `=`
    #[arg(value_name = "BINDINGS")]
    pub bindings: Vec<String>,
    /// Treat EXPR as a value mixing `${...}` and `#{...}`; the text inside
    /// `${...}` is evaluated as CEL too
    #[arg(long = "yaml")]
    pub yaml: bool,
    /// Deprecated spelling of --yaml (`-y` is `--yes` elsewhere): warns
    #[arg(short = 'y', hide = true)]
    pub yaml_short: bool,
}

#[derive(Debug, Args)]
pub struct ParamsArgs {
    /// The elaborated file (hub.yaml.elaborate)
    #[arg(value_name = "ELABORATED")]
    pub elaborated: PathBuf,
    /// State file: its stack parameters fill `kind: user` parameters before
    /// prompting and are merged in; with -c its outputs are visible
    #[arg(short = 's', long = "state", value_name = "PATH")]
    pub state: Option<PathBuf>,
    /// Values for `fromEnv` parameters, as NAME=value[,NAME=value]
    #[arg(short = 'e', long = "environment", value_name = "K=V,...")]
    pub environment: Vec<String>,
    /// Print this component's expanded parameters instead
    #[arg(short = 'c', long = "component", value_name = "COMPONENT", value_parser = hub_manifest::names::component_arg)]
    pub component: Option<String>,
    /// Output format
    #[arg(long, value_name = "FORMAT", value_enum, default_value = "yaml")]
    pub format: super::ParamsFormat,
    /// Print secret values instead of `(masked)`
    #[arg(long)]
    pub reveal: bool,
}
