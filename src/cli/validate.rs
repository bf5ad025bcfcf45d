//! The flags of `hub validate`.

use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Which schema applies: a file's `kind:` decides (stack or application: the stack schema; \
component: the component schema). Without one, the file name does: `hub-component.yaml` \
is a component, `params*.yaml` a parameters file, anything else a stack.

Unknown keys, values read as text (`version: 1.0` under `meta`), unknown values of \
enumerations (`kind`, `empty`, `lifecycle.bare`, `templates.kind`) and extra YAML \
documents are warnings. Malformed YAML, values of the wrong type and entries without \
their required `name` are errors.

Each file gets a summary line (`ok: FILE` or `invalid: FILE`); all messages go to stderr. \
Exit status: 0 when no file has errors (warnings allowed), 1 otherwise.")]
pub struct ValidateArgs {
    /// Manifests to check: hub.yaml, hub-component.yaml, params*.yaml
    #[arg(value_name = "FILE", required = true)]
    pub files: Vec<PathBuf>,
}
