//! The flags of `hub elaborate`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ElaborateArgs {
    /// The stack manifest (hub.yaml) or application manifest
    #[arg(value_name = "STACK")]
    pub stack: PathBuf,
    /// Parameters files, later ones override earlier ones
    #[arg(value_name = "PARAMS")]
    pub params: Vec<PathBuf>,
    /// Output file(s), comma-separated; `-` writes to stdout
    ///
    /// A `# hub:` comment header at the top records the stack's folder
    /// (relative component folders resolve against it when the file is
    /// deployed from elsewhere), the files read, and the command to make the
    /// file again.
    #[arg(
        short,
        long,
        value_name = "PATHS",
        default_value = "hub.yaml.elaborate"
    )]
    pub output: String,
    /// Values for parameters with `fromEnv: NAME`, as NAME=value[,NAME=value]
    #[arg(short = 'e', long = "environment", value_name = "K=V,...")]
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    #[arg(short = 'b', long = "base-dir", alias = "baseDir", value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Capabilities provided by the underlying platform, comma-separated
    #[arg(short = 'p', long = "platform-provides", value_name = "LIST")]
    pub platform_provides: Vec<String>,
    /// State file of a deployed platform stack: fills empty parameters;
    /// several separated by commas: the newest is read
    #[arg(short = 's', long = "state", value_name = "LIST")]
    pub state: Option<String>,
    /// Unknown keys that look like typos of known keys (`paramters`,
    /// `fromenv`) are warnings, also in the stack's own files (by default
    /// they are errors there and warnings in component manifests)
    #[arg(long)]
    pub lenient: bool,
    /// Unknown keys that look like typos of known keys are errors, also in
    /// component manifests
    #[arg(long, conflicts_with = "lenient")]
    pub strict: bool,
    /// With -s: take values from the state's stack parameters too, not only its outputs
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_value = "true", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub state_stack_parameters: bool,
    /// Write the output files gzip-compressed (`-o -` is always plain YAML)
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub compressed: bool,
}
