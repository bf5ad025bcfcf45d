//! What `deploy`, `undeploy` and `plan` share: the stack, the state, the
//! selection of components and how they run; durations and booleans as
//! the flags read them.

use super::headings::{COMPATIBILITY, MORE};
use clap::Args;
use std::path::PathBuf;

/// Seconds, whole or fractional: `30`, `0.5`.
pub fn parse_seconds(text: &str) -> Result<std::time::Duration, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("`{text}` is not a number of seconds"))?;
    std::time::Duration::try_from_secs_f64(seconds)
        .map_err(|_| format!("`{text}` is not a duration"))
}

/// A duration: numbers with `ms`, `s`, `m` or `h` (`30s`, `1.5m`, `1h30m`),
/// or a plain number of seconds (`0`); read as `--timeout` reads it.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    hub_plan::timeout::parse(text)
}

/// A boolean flag written `--flag`, `--flag=true` or `--flag=false`.
pub(super) const BOOL: &str = "BOOL";

/// What `deploy`, `undeploy` and `plan` share.
#[derive(Debug, Args)]
pub struct CommonRunArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    #[command(flatten)]
    pub state: StateArgs,
    #[command(flatten)]
    pub selection: SelectionArgs,
    #[command(flatten)]
    pub run: RunArgs,
    #[command(flatten)]
    pub policy: super::policy::PolicyArgs,
}

/// What `deploy`, `undeploy` and `plan` work on: the stack and how it is
/// read.
#[derive(Debug, Args)]
pub struct StackArgs {
    /// The elaborated file, or a stack manifest followed by parameters files
    ///
    /// Relative component folders (`source.dir`) resolve against the folder
    /// of the elaborated file (above any `.hub` folder), as the Hub CLI does;
    /// a component that is not there is looked up in the stack folder `hub
    /// elaborate` recorded in the file, so an elaborated file written
    /// elsewhere (`-o /tmp/x.elaborate`) deploys from any folder. Git-sourced
    /// components resolve against `-b`, else the same folder. A warning says
    /// when a file it was elaborated from changed after it.
    #[arg(value_name = "MANIFEST", required = true)]
    pub manifest: Vec<PathBuf>,
    /// Values for `fromEnv` parameters, as NAME=value[,NAME=value] (not exported to components)
    #[arg(short = 'e', long = "environment", value_name = "K=V,...")]
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    #[arg(short = 'b', long = "base-dir", alias = "baseDir", value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Unknown keys that look like typos of known keys (`paramters`,
    /// `fromenv`) are warnings, also in the stack's own files (by default
    /// they are errors there and warnings in component manifests)
    #[arg(long, help_heading = MORE, hide_short_help = true)]
    pub lenient: bool,
    /// Unknown keys that look like typos of known keys are errors, also in
    /// component manifests
    #[arg(long, conflicts_with = "lenient", help_heading = MORE, hide_short_help = true)]
    pub strict: bool,
    /// Clouds whose requirements are checked (aws, azure, gcp; comma-separated):
    /// the requirements `aws`, `azure`, `gcp` and `gcs` of the other clouds are
    /// dropped from the stack and its components. Without it, the clouds whose
    /// variables are set are checked (AWS_PROFILE, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID;
    /// AZURE_AUTH_LOCATION, AZURE_TENANT_ID, AZURE_RESOURCE_GROUP_NAME;
    /// GOOGLE_APPLICATION_CREDENTIALS); with none set, every requirement is (with a warning)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = ["aws", "azure", "gcp"], help_heading = MORE, hide_short_help = true)]
    pub clouds: Vec<String>,
}

/// The state of a run.
#[derive(Debug, Args)]
pub struct StateArgs {
    /// The state file; several separated by commas: the newest is read, all are written
    #[arg(
        short = 's',
        long = "state",
        value_name = "LIST",
        default_value = "hub.yaml.state"
    )]
    pub state: String,
    /// Use no state: nothing is read and nothing is written
    #[arg(short = 'n', long = "no-state")]
    pub no_state: bool,
    #[command(flatten)]
    pub lock: LockTimeoutArgs,
}

/// `--lock-timeout` of the commands that take (or, for a plan, wait for)
/// the state's lock.
#[derive(Debug, Args)]
pub struct LockTimeoutArgs {
    /// Wait this long for the state's lock when another run holds it
    /// (`30s`, `5m`, `1h`; `0`: fail at once)
    #[arg(long = "lock-timeout", value_name = "DURATION", default_value = "0", value_parser = parse_duration, help_heading = MORE, hide_short_help = true)]
    pub lock_timeout: std::time::Duration,
}

/// A `-c` entry: a component name with its `+` signs, or a folder (an
/// entry with a `/`, or `.`/`..`) whose components it selects.
pub fn selection_entry(value: &str) -> Result<String, String> {
    if hub_plan::is_folder(value) {
        return Ok(value.to_string());
    }
    hub_manifest::names::selection_arg(value).map_err(|e| e.to_string())
}

/// Which components run.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// Only these components (comma-separated), in lifecycle order;
    /// `app+` adds what app depends on, `+app` what depends on app; an
    /// entry with a `/` (or `.`) selects the components in that folder
    ///
    /// "Depends" follows `depends`, capabilities required from a provider
    /// and outputs read, transitively; not the written `lifecycle.order`.
    /// A folder entry is relative to the current folder and selects every
    /// component whose folder is at or under it (`-c .`, `-c components/`).
    /// The stack's `lifecycle.wants` adds what a selected component wants.
    /// The resolved list is printed before anything runs.
    #[arg(
        short = 'c',
        long = "components",
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = selection_entry
    )]
    pub components: Vec<String>,
    /// Only the components whose inputs differ between BASE and the work
    /// tree (default: the merge-base of HEAD with the remote's default
    /// branch, or `HUB_GIT_BASE`)
    ///
    /// Inputs are a component's folder, the `lifecycle.watch` globs of the
    /// stack, its entry in `components:` and the parameters it reads from
    /// the stack and parameters files; uncommitted and untracked files
    /// count, ignored ones do not. Adds to `-c`; `--with-deps` and
    /// `--with-dependents` widen it. Reads git through the `git` program.
    #[arg(long, value_name = "BASE", num_args = 0..=1, require_equals = true, default_missing_value = "", help_heading = MORE, hide_short_help = true)]
    pub affected: Option<String>,
    /// Every `-c` component with what it depends on, as if written `app+`
    #[arg(long = "with-deps", help_heading = MORE, hide_short_help = true)]
    pub with_deps: bool,
    /// Every `-c` component with what depends on it, as if written `+app`
    #[arg(long = "with-dependents", help_heading = MORE, hide_short_help = true)]
    pub with_dependents: bool,
    /// Start at this component (resume a run that stopped there)
    #[arg(long = "offset", value_name = "COMPONENT", value_parser = hub_manifest::names::component_arg)]
    pub offset: Option<String>,
    /// Stop after this component
    #[arg(long = "limit", value_name = "COMPONENT", value_parser = hub_manifest::names::component_arg)]
    pub limit: Option<String>,
    /// Only the components whose health, as the last `hub check` recorded
    /// it, is one of these (comma-separated): healthy, drifted, failed,
    /// unverifiable
    #[arg(
        long = "status",
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = ["healthy", "drifted", "failed", "unverifiable"],
        conflicts_with_all = ["components", "with_deps", "with_dependents", "offset", "limit"],
        help_heading = MORE,
        hide_short_help = true
    )]
    pub status: Vec<String>,
}

/// How components are run.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// Go on after failures of mandatory components, use a state that does
    /// not match, undeploy `-c` components that deployed ones depend on
    #[arg(short = 'f', long = "force", env = "HUB_FORCE", value_parser = clap::builder::FalseyValueParser::new())]
    pub force: bool,
    /// Show secret values in the output instead of masking them
    #[arg(long)]
    pub reveal: bool,
    /// Components run at once: a component starts when everything it
    /// depends on has finished; 0 = the number of CPUs
    #[arg(
        short = 'j',
        long = "jobs",
        value_name = "N",
        default_value = "1",
        env = "HUB_JOBS"
    )]
    pub jobs: usize,
    /// Write a report: JSON (per component: status, times, reason,
    /// outputs), or with a `.html` name a page with a timeline, the
    /// dependency graph and each component's details
    #[arg(long, value_name = "FILE", help_heading = MORE, hide_short_help = true)]
    pub report: Option<PathBuf>,
}

/// What only a run that executes components has: the state it writes,
/// the environment of the components, dry runs, `--why`.
#[derive(Debug, Args)]
pub struct ExecuteArgs {
    /// How much of hub's environment components see
    #[arg(long = "os-environment", value_name = "MODE", default_value = "no-tfvars", value_parser = ["everything", "no-tfvars", "strict"], help_heading = MORE, hide_short_help = true)]
    pub os_environment: String,
    /// Write the state gzip-compressed
    #[arg(long, value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set, help_heading = MORE, hide_short_help = true)]
    pub compressed: bool,
    /// Encrypt remote state copies (s3://, gs://, az://) with
    /// HUB_CRYPTO_PASSWORD, on by default when it is set; local files are
    /// written plain, and encrypted states are read whatever the flag
    #[arg(long, value_name = BOOL, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set, help_heading = MORE, hide_short_help = true)]
    pub encrypted: Option<bool>,
    /// How the state lays out component snapshots: `linear` (each as a difference against the previous one) or `reference` (each whole, as the Hub CLI writes them)
    #[arg(
        long = "state-format",
        value_name = "FORMAT",
        value_enum,
        default_value = "linear",
        help_heading = MORE,
        hide_short_help = true
    )]
    pub state_format: StateFormatArg,
    /// Dry run: run the `deploy-test`/`undeploy-test` implementations; the state is not written
    #[arg(long = "dry", short_alias = 'y')]
    pub dry: bool,
    /// Stop a component still running after this long (`90s`, `15m`,
    /// `1h30m`; `0`: no limit), its hooks included: SIGTERM to its
    /// processes, SIGKILL 30s later, and it fails. The stack's
    /// `lifecycle.timeouts` gives components their own limits
    #[arg(long, value_name = "DURATION", env = "HUB_TIMEOUT", value_parser = hub_plan::timeout::parse, help_heading = MORE, hide_short_help = true)]
    pub timeout: Option<std::time::Duration>,
    /// Print, for each component, why it runs or is skipped
    #[arg(long)]
    pub why: bool,
    /// Start nothing more once a mandatory component failed (what is
    /// running finishes); without it every component that does not depend
    /// on the failure still runs, whatever `-j` is
    #[arg(long = "fail-fast", help_heading = MORE, hide_short_help = true)]
    pub fail_fast: bool,
}

/// Flags of the Hub CLI that are accepted and have no effect here: hidden
/// from `-h`, under their own heading in `--help`.
#[derive(Debug, Args)]
#[command(next_help_heading = COMPATIBILITY)]
pub struct CompatibilityArgs {
    /// Accepted for compatibility; no git outputs are added
    #[arg(long = "git-outputs", value_name = BOOL, num_args = 0..=1, default_value = "true", default_missing_value = "true", action = clap::ArgAction::Set, hide_short_help = true)]
    pub git_outputs: bool,
    /// Accepted for compatibility; no git outputs are added
    #[arg(long = "git-outputs-status", value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set, hide_short_help = true)]
    pub git_outputs_status: bool,
    /// Accepted for compatibility: the stack-level outputs are refreshed at the end of every deploy
    #[arg(long = "load-global-state", short_alias = 'g', hide_short_help = true)]
    pub load_global_state: bool,
    /// Accepted for compatibility: failure output always goes to the operation log
    #[arg(long = "write-oplog-to-state-on-error", value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set, hide_short_help = true)]
    pub write_oplog_to_state_on_error: bool,
    /// Accepted for compatibility; ignored
    #[arg(long = "switch-kube-context", value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set, hide_short_help = true)]
    pub switch_kube_context: bool,
}

/// `--guess` of an undeploy (and of `plan --undeploy`).
#[derive(Debug, Args)]
pub struct GuessArgs {
    /// Skip trailing components that never got a state entry
    #[arg(long, value_name = BOOL, num_args = 0..=1, default_value = "true", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub guess: bool,
}

/// `--state-format`: the layout a state is written in, as the command line
/// takes it ([`hub_state::StateFormat`], which knows nothing of clap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum StateFormatArg {
    /// Each snapshot as a difference against the previous one.
    #[default]
    Linear,
    /// Every snapshot whole, as the Hub CLI writes it.
    Reference,
}

impl From<StateFormatArg> for hub_state::StateFormat {
    fn from(format: StateFormatArg) -> Self {
        match format {
            StateFormatArg::Linear => hub_state::StateFormat::Linear,
            StateFormatArg::Reference => hub_state::StateFormat::Reference,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StateFormatArg;
    use hub_state::StateFormat;

    /// Every layout of the state has its value on the command line, and the
    /// default is the state's default.
    #[test]
    fn every_state_format_has_its_argument() {
        let argument = |format: StateFormat| match format {
            StateFormat::Linear => StateFormatArg::Linear,
            StateFormat::Reference => StateFormatArg::Reference,
        };
        for format in [StateFormat::Linear, StateFormat::Reference] {
            assert_eq!(StateFormat::from(argument(format)), format);
        }
        assert_eq!(
            StateFormat::from(StateFormatArg::default()),
            StateFormat::default()
        );
    }
}
