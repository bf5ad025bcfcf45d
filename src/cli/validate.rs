//! The flags of `hub validate`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Which schema applies: a file's `kind:` decides (stack or application: the stack schema; \
component: the component schema). Without one, the file name does: `hub-component.yaml` \
is a component, `params*.yaml` a parameters file, anything else a stack.

Unknown keys that look like typos of known keys (`paramters`) are errors in stack and \
parameters files and warnings in component manifests, as `elaborate`, `plan` and `deploy` \
decide (`--strict`: errors everywhere; `--lenient`: warnings everywhere). Other unknown keys, \
values read as text (`version: 1.0` under `meta`), unknown values of \
enumerations (`kind`, `empty`, `lifecycle.bare`, `templates.kind`) and extra YAML \
documents are warnings. Malformed YAML, values of the wrong type and entries without \
their required `name` are errors.

Each file gets a summary line (`ok: FILE` or `invalid: FILE`); all messages go to stderr. \
Exit status: 0 when no file has errors (warnings allowed), 1 otherwise.")]
pub struct ValidateArgs {
    /// Manifests to check: hub.yaml, hub-component.yaml, params*.yaml
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
    /// Unknown keys that look like typos of known keys are warnings, also
    /// in stack and parameters files (by default they are errors there and
    /// warnings in component manifests, as in `elaborate`, `plan`, `deploy`)
    #[arg(long)]
    pub lenient: bool,
    /// Unknown keys that look like typos of known keys are errors, also in
    /// component manifests
    #[arg(long, conflicts_with = "lenient")]
    pub strict: bool,
}
