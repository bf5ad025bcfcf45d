//! `hub elaborate`: merges a stack, its parameters files, its `fromStack`
//! parents and every component manifest into one elaborated document.

mod application;
mod error;
pub mod order;
mod params;
pub mod paths;
mod stack;
mod state_fill;
pub mod tuning;
mod unread;

pub use error::ElaborateError;
pub use stack::{elaborate, elaborate_with_provenance};
pub use state_fill::StateSource;
pub use unread::{unread_in, Unread};

use indexmap::IndexMap;
use std::path::PathBuf;

/// What to elaborate, already validated by the command line.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The stack (or application) manifest, as given.
    pub stack: PathBuf,
    /// Parameters files, in the order they override each other.
    pub params: Vec<PathBuf>,
    /// `-e K=V`: values for parameters that name `K` in `fromEnv`.
    pub overrides: IndexMap<String, String>,
    /// `-b`: where git-sourced components are checked out.
    pub base_dir: Option<PathBuf>,
    /// `-p`: capabilities an underlying platform provides.
    pub platform_provides: Vec<String>,
    /// The `ENV` environment variable: a parent stack's `params-$ENV.yaml`
    /// is read when it exists.
    pub env_name: Option<String>,
    /// `-s`: the state of a deployed platform stack that fills empty parameters.
    pub state: Option<StateSource>,
}

/// Requirements that the environment itself satisfies; `-p` never removes them.
pub const ENVIRONMENT_PROVIDED: [&str; 8] = [
    "aws",
    "gcp",
    "gcs",
    "azure",
    "kubectl",
    "kubernetes",
    "helm",
    "vault",
];
