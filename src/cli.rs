//! Command-line definitions (clap derive). Nothing here does any work.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Debug, Parser)]
#[command(name = "hub", version, about = "Deploy stacks of components described by Hub manifests")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Merge a stack, its parameters files, its parents and its component
    /// manifests into one elaborated file. Nothing is executed.
    Elaborate(ElaborateArgs),
    /// Check stack, component and parameters manifests against the JSON
    /// Schemas in `schemas/`.
    Validate(ValidateArgs),
}

#[derive(Debug, Args)]
pub struct ElaborateArgs {
    /// The stack manifest (hub.yaml) or application manifest
    #[arg(value_name = "STACK")]
    pub stack: PathBuf,
    /// Parameters files, later ones override earlier ones
    #[arg(value_name = "PARAMS")]
    pub params: Vec<PathBuf>,
    /// Output file(s), comma-separated; `-` writes to stdout
    #[arg(short, long, value_name = "PATHS", default_value = "hub.yaml.elaborate")]
    pub output: String,
    /// Values for parameters with `fromEnv: NAME`, as NAME=value[,NAME=value]
    #[arg(short = 'e', long = "environment", value_name = "K=V,...")]
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    #[arg(short = 'b', long = "baseDir", alias = "base-dir", value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Capabilities provided by the underlying platform, comma-separated
    #[arg(short = 'p', long = "platform-provides", value_name = "LIST")]
    pub platform_provides: Vec<String>,
    /// Write the output gzip-compressed
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub compressed: bool,
}

#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Manifests to check: hub.yaml, hub-component.yaml, params*.yaml
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}
