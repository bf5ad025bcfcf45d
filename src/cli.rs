//! Command-line definitions (clap derive). Nothing here does any work.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// `0.1.0 (commit 1a2b3c4d5e6f)`: the version and the git commit hub was
/// built from (`unknown` when it was built outside a git checkout).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("HUB_GIT_COMMIT"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "hub",
    version = VERSION,
    about = "Deploy stacks of components described by Hub manifests"
)]
pub struct Cli {
    /// Trace every call to an object store on stderr (operation, object,
    /// outcome, time); credentials and signed URLs are never printed.
    #[arg(long, short = 'd', global = true, env = "HUB_DEBUG", value_parser = clap::builder::BoolishValueParser::new())]
    pub debug: bool,
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
    /// Evaluate a `#{...}` CEL expression (or, with -y, a value mixing
    /// `${...}` and `#{...}`) with string bindings, to try expressions out.
    Cel(CelArgs),
    /// Lock the stack parameters of an elaborated file and print them, or
    /// one component's expanded parameters, each with where its value came
    /// from.
    Params(ParamsArgs),
    /// Remove the lock file (`STATE.lock`) left on a state by a run that
    /// did not finish: only when its process is gone, or with --force
    /// whatever holds it.
    Unlock(UnlockArgs),
    /// Work with state files: `hub state list`, `show`, `rm`, `mv`, `pull`, `push`.
    State(StateCommandArgs),
    /// Helpers for component scripts and for trying hub out.
    Util(UtilArgs),
    /// Deploy the components of a stack in lifecycle order, recording what
    /// happened in the state file.
    Deploy(DeployArgs),
    /// Undeploy the components of a stack in reverse lifecycle order.
    Undeploy(UndeployArgs),
    /// Run one verb of one component with its parameters, from inside
    /// another component's script (uses $HUB_ELABORATE and $HUB_STATE).
    Invoke(InvokeArgs),
    /// Render templates in the current folder with a component's parameters
    /// and outputs (from inside its script: uses $HUB_ELABORATE, $HUB_STATE
    /// and $HUB_COMPONENT).
    Render(RenderArgs),
    /// Show what a deploy (or undeploy) would do, running and changing
    /// nothing: waves, parameters and their changes, requirements, skips.
    Plan(PlanArgs),
    /// Print the dependency graph of a stack (Graphviz dot or Mermaid).
    Graph(GraphArgs),
    /// Show what a state file records: stack parameters, outputs and
    /// capabilities, each component's parameters, outputs and status, the
    /// operation log.
    Explain(ExplainArgs),
    /// Print the version and the git commit hub was built from.
    Version,
    /// Print a completion script for a shell.
    Completions(CompletionsArgs),
    /// Write man pages: `hub.1` and one page per subcommand
    /// (`hub-deploy.1`, `hub-state-pull.1`, …), made from this help.
    Man(ManArgs),
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  hub man target/man && man -l target/man/hub-deploy.1
  sudo hub man /usr/local/share/man/man1")]
pub struct ManArgs {
    /// The folder to write the pages into (created if missing)
    #[arg(value_name = "DIR")]
    pub folder: std::path::PathBuf,
}

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  hub completions bash > /etc/bash_completion.d/hub
  hub completions zsh > \"${fpath[1]}/_hub\"
  hub completions fish > ~/.config/fish/completions/hub.fish
  hub completions powershell >> $PROFILE")]
pub struct CompletionsArgs {
    /// The shell
    #[arg(value_name = "SHELL", value_enum)]
    pub shell: clap_complete::Shell,
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
    #[arg(short = 'b', long = "baseDir", alias = "base-dir", value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Capabilities provided by the underlying platform, comma-separated
    #[arg(short = 'p', long = "platform-provides", value_name = "LIST")]
    pub platform_provides: Vec<String>,
    /// State file of a deployed platform stack: fills empty parameters;
    /// several separated by commas: the newest is read
    #[arg(short = 's', long = "state", value_name = "LIST")]
    pub state: Option<String>,
    /// Unknown keys that look like typos of known keys (`paramters`,
    /// `fromenv`) are warnings instead of errors
    #[arg(long)]
    pub lenient: bool,
    /// With -s: take values from the state's stack parameters too, not only its outputs
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_value = "true", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub state_stack_parameters: bool,
    /// Write the output files gzip-compressed (`-o -` is always plain YAML)
    #[arg(long, value_name = "BOOL", num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub compressed: bool,
}

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

#[derive(Debug, Args)]
#[command(after_help = "\
Examples:
  hub cel -- '3 - int({\"prime\": \"7\"}[prime])' prime=prime
  hub cel 'cloud.kind == \"gcp\" ? \"pd-ssd\" : \"gp2\"' cloud.kind=aws
  hub cel -y 'https://${host}/#{env == \"prod\" ? \"live\" : \"stage\"}' host=h,env=dev

Bindings are strings. Put `--` before an expression that starts with `-`.")]
pub struct CelArgs {
    /// The expression (without `#{` `}`), or with -y the value
    #[arg(value_name = "EXPR", allow_hyphen_values = true)]
    pub expression: String,
    /// Bindings as name=value[,name=value]; the value may contain `=`
    #[arg(value_name = "BINDINGS")]
    pub bindings: Vec<String>,
    /// Treat EXPR as a value mixing `${...}` and `#{...}`; the text inside
    /// `${...}` is evaluated as CEL too
    #[arg(short = 'y', long = "yaml")]
    pub yaml: bool,
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
    #[arg(long, value_name = "FORMAT", default_value = "yaml", value_parser = ["yaml", "json"])]
    pub format: String,
    /// Print secret values instead of `(masked)`
    #[arg(long)]
    pub reveal: bool,
}

#[derive(Debug, Args)]
#[command(after_help = "\
A deploy, undeploy, invoke, `state rm` or `state mv` holds `STATE.lock` while it works on STATE. A lock whose \
process ran on this host and is gone is stale and is removed. A lock of a running process, \
of a process on another host (which cannot be checked from here) or a lock file that does \
not say who holds it is removed only with --force. When that process still runs on this \
host, --force names it and asks on a terminal, and refuses in a script unless --yes is given: \
the run whose lock is removed starts no new component and writes nothing more to the state.

A remote state (`s3://BUCKET/KEY`, `gs://…`, `az://…`) has the lock object `KEY.lock`, whose \
lease its run renews; a lock whose lease expired is stale and is removed, any other only \
with --force. --id ID removes the lock only if it is that one (the id a refused run shows).")]
pub struct UnlockArgs {
    /// The state file whose lock to remove (its `.lock` file is accepted
    /// too), or a remote state `s3://BUCKET/KEY`
    #[arg(value_name = "STATE")]
    pub state: PathBuf,
    /// Remove the lock even if its holder may still be running
    #[arg(short, long)]
    pub force: bool,
    /// With --force: remove a lock whose holder still runs on this host
    /// without asking (a terminal is asked; a script is refused)
    #[arg(short, long)]
    pub yes: bool,
    /// Remove the lock of a remote state only if its id is ID
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
}

#[derive(Debug, Args)]
pub struct StateCommandArgs {
    #[command(subcommand)]
    pub command: StateCommand,
}

#[derive(Debug, Subcommand)]
pub enum StateCommand {
    /// Print the state as hub reads it (the file with its journal folded
    /// in), or write it to FILE; takes no lock and changes nothing
    #[command(after_help = "\
A run appends its checkpoints to `STATE.journal` and folds them into STATE now and then; \
after a run that was killed, STATE alone is the state as of the last fold. `hub state pull` \
shows the state every hub command sees: STATE with the journal's records applied. A damaged \
journal is an error naming the record. FILE is replaced atomically (created readable by its \
owner only).

Example:
  hub state pull hub.yaml.state recovered.state")]
    Pull(StatePullArgs),
    /// List the components the state records: name, status, when, and the
    /// operation that last ran it; takes no lock and changes nothing
    #[command(after_help = STATE_READ_HELP)]
    List(StateListArgs),
    /// Show one component of the state: its status, parameters and
    /// outputs (secrets masked); takes no lock and changes nothing
    #[command(after_help = STATE_READ_HELP)]
    Show(StateShowArgs),
    /// Forget components: remove their entries from the state without
    /// running anything (their resources stay where they are)
    #[command(after_help = "\
The entries, their place in `lifecycle.order`, the capabilities they provide and their \
outputs among the stack's captured outputs are removed; nothing is undeployed. On a \
terminal hub asks first; in scripts pass --yes (without it hub refuses when standard input \
is not a terminal).

The command takes the state's lock (--lock-timeout waits for a run that holds it), keeps \
the previous state as `STATE.backup` and writes the next serial.

Example:
  hub state rm monitoring -s hub.yaml.state --yes")]
    Rm(StateRmArgs),
    /// Rename a component in the state: it keeps its status, parameters
    /// and outputs, so a deploy of the renamed stack finds it deployed
    #[command(after_help = "\
Every place of the state that names OLD is changed: its entry, `lifecycle.order`, the \
capabilities it provides, its outputs in every snapshot, qualified stack parameters and \
outputs, the phases of recorded operations, and the upstream of the fingerprints of the \
components that depend on it (its own fingerprint too, so that `deploy --changed` sees it \
unchanged when only the name changed). Refused when OLD is not in the state or NEW is.

The command takes the state's lock (--lock-timeout waits for a run that holds it), keeps \
the previous state as `STATE.backup` and writes the next serial.

Example:
  hub state mv db database -s hub.yaml.state")]
    Mv(StateMvArgs),
    /// Upload a state file to a location (a remote key or a local file),
    /// under its lock
    #[command(after_help = "\
The state at LOCATION is replaced by FILE's, with a serial above both. FILE must be of the \
same lineage as the state at LOCATION, not older (a lower serial), and hold the last operation \
recorded there (else its history diverged: another run went on from a common ancestor) unless \
--force is given. This is how the state a failed upload left (`BASENAME.errored`) is put back.

Example:
  hub state push hub.state.errored s3://team-states/dev/hub.state")]
    Push(StatePushArgs),
}

const STATE_READ_HELP: &str = "\
The state is read as every command reads it: with its journal folded in, so a running deploy's \
progress shows. With several locations (`-s a,b`) the newest is read.";

/// The state the state commands work on.
#[derive(Debug, Args)]
pub struct StateLocationArgs {
    /// The state file; several separated by commas: the newest is read, a change is written to all
    #[arg(short, long, value_name = "LIST", default_value = "hub.yaml.state")]
    pub state: String,
}

/// What the state commands that change the state share.
#[derive(Debug, Args)]
pub struct StateChangeArgs {
    #[command(flatten)]
    pub location: StateLocationArgs,
    #[command(flatten)]
    pub lock: LockTimeoutArgs,
    /// How the state lays out component snapshots
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "linear")]
    pub state_format: hub_state::StateFormat,
}

#[derive(Debug, Args)]
pub struct StateListArgs {
    #[command(flatten)]
    pub location: StateLocationArgs,
    /// One JSON array, an object per component
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct StateShowArgs {
    /// The component, by its name in the state
    #[arg(value_name = "COMPONENT")]
    pub component: String,
    #[command(flatten)]
    pub location: StateLocationArgs,
    /// One JSON object
    #[arg(long)]
    pub json: bool,
    /// Print secret values instead of `(masked)`
    #[arg(long)]
    pub reveal: bool,
}

#[derive(Debug, Args)]
pub struct StateRmArgs {
    /// The components to forget
    #[arg(value_name = "COMPONENT", required = true, value_parser = hub_manifest::names::component_arg)]
    pub components: Vec<String>,
    #[command(flatten)]
    pub change: StateChangeArgs,
    /// Do not ask (needed when standard input is not a terminal)
    #[arg(short = 'y', long)]
    pub yes: bool,
}

#[derive(Debug, Args)]
pub struct StateMvArgs {
    /// The component's name in the state
    #[arg(value_name = "OLD", value_parser = hub_manifest::names::component_arg)]
    pub old: String,
    /// Its new name
    #[arg(value_name = "NEW", value_parser = hub_manifest::names::component_arg)]
    pub new: String,
    #[command(flatten)]
    pub change: StateChangeArgs,
}

#[derive(Debug, Args)]
pub struct StatePushArgs {
    /// The state file to upload
    #[arg(value_name = "FILE")]
    pub file: PathBuf,
    /// Where to upload it: `s3://BUCKET/KEY`, `gs://…`, `az://…` or a file
    #[arg(value_name = "LOCATION")]
    pub location: PathBuf,
    /// Replace a state of another lineage or a newer serial
    #[arg(short, long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct StatePullArgs {
    /// The state file, or a remote state `s3://BUCKET/KEY` (`gs://`, `az://`)
    #[arg(value_name = "STATE")]
    pub state: PathBuf,
    /// Write the state to this file instead of standard output
    #[arg(value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// How component snapshots are laid out in the output
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "linear")]
    pub state_format: hub_state::StateFormat,
}

#[derive(Debug, Args)]
pub struct UtilArgs {
    #[command(subcommand)]
    pub command: UtilCommand,
}

#[derive(Debug, Subcommand)]
pub enum UtilCommand {
    /// Run one program the way `hub deploy` runs a component
    #[command(
        hide = true,
        after_help = "\
Runs PROGRAM in its own process group with stdin on /dev/null. Each line it writes to \
stdout or stderr is shown on hub's stdout or stderr as `LABEL | line`, with every secret \
value replaced by `(masked)`; with --log the masked lines are appended to FILE too. Secret \
values are those of --mask-env variables, the lines of stdin with --mask-stdin, --mask \
values, and the credentials hub knows (AWS_SECRET_ACCESS_KEY, HUB_CRYPTO_PASSWORD, ...). \
Values shorter than 4 characters are not masked. A --mask value is in hub's command line, \
which other users of the machine can read (/proc/PID/cmdline): prefer --mask-env.

The first SIGINT or SIGTERM hub receives is passed on to the program's process group; \
the group is killed when it is still running --grace seconds later, or at once on a \
second signal.

Exit status: the program's, 128 + N when it was killed by signal N, 130 or 143 when hub was \
interrupted by SIGINT or SIGTERM, 124 after --timeout, 126/127 when it cannot be started.

Example:
  hub util run --label app --mask-env DB_PASSWORD --log app.log -- ./deploy.sh"
    )]
    Run(UtilRunArgs),
    /// Encrypt secret outputs with the one-time pad in $HUB_RANDOM
    #[command(after_help = "\
Reads `key = value` lines on stdin and prints one line `secrets = <base64>`: the input, \
zero-padded to the pad's length, XORed with the pad that `hub deploy` exports to the \
component as HUB_RANDOM. Hub decodes it after the run and stores each key as a raw output, \
so the values never appear in logs. Print it inside the `Outputs:` block, once per run.

Blank input prints nothing. Input longer than the pad is an error: raise \
`lifecycle.options.random.bytes` in the component manifest (default 128).

Example (in a component's deploy script):
  echo; echo Outputs:; printf 'password = %s\\n' \"$PW\" | \"$HUB\" util otp; echo")]
    Otp(UtilOtpArgs),
}

#[derive(Debug, Args)]
pub struct UtilOtpArgs {
    /// The only mode: encode (the default)
    #[arg(value_name = "MODE", value_parser = ["encode"])]
    pub mode: Option<String>,
}

#[derive(Debug, Args)]
pub struct UtilRunArgs {
    /// Shown before every line (default: the program's file name)
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Seconds between the passed-on signal and the kill
    #[arg(long, value_name = "SECS", default_value = "30", value_parser = parse_seconds)]
    pub grace: std::time::Duration,
    /// Stop the program after this many seconds (SIGTERM, then SIGKILL after --grace)
    #[arg(long, value_name = "SECS", value_parser = parse_seconds)]
    pub timeout: Option<std::time::Duration>,
    /// Append the masked output lines to this file
    #[arg(long, value_name = "FILE")]
    pub log: Option<PathBuf>,
    /// Mask the value of this variable of hub's environment (repeatable)
    #[arg(long, value_name = "NAME")]
    pub mask_env: Vec<String>,
    /// Mask each line read from stdin (the program's stdin is /dev/null)
    #[arg(long)]
    pub mask_stdin: bool,
    /// A secret value to mask; visible to other users in the command line: prefer --mask-env
    #[arg(long, value_name = "VALUE")]
    pub mask: Vec<String>,
    /// Start the program with an empty environment instead of hub's
    #[arg(long)]
    pub clear_env: bool,
    /// Set a variable for the program (repeatable)
    #[arg(short = 'e', long = "env", value_name = "NAME=VALUE")]
    pub env: Vec<String>,
    /// Working directory of the program (default: the current one)
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// The program and its arguments
    #[arg(
        value_name = "PROGRAM",
        required = true,
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

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
    hub_engine::run::timeout::parse(text)
}

/// A boolean flag written `--flag`, `--flag=true` or `--flag=false`.
const BOOL: &str = "BOOL";

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
    /// `fromenv`) are warnings instead of errors
    #[arg(long)]
    pub lenient: bool,
    /// Clouds whose requirements are checked (aws, azure, gcp; comma-separated):
    /// the requirements `aws`, `azure`, `gcp` and `gcs` of the other clouds are
    /// dropped from the stack and its components. Without it, the clouds whose
    /// variables are set are checked (AWS_PROFILE, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID;
    /// AZURE_AUTH_LOCATION, AZURE_TENANT_ID, AZURE_RESOURCE_GROUP_NAME;
    /// GOOGLE_APPLICATION_CREDENTIALS); with none set, every requirement is (with a warning)
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = ["aws", "azure", "gcp"])]
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
    #[arg(long = "lock-timeout", value_name = "DURATION", default_value = "0", value_parser = parse_duration)]
    pub lock_timeout: std::time::Duration,
}

/// Which components run.
#[derive(Debug, Args)]
pub struct SelectionArgs {
    /// Only these components (comma-separated), in lifecycle order;
    /// `app+` adds what app depends on, `+app` what depends on app
    ///
    /// "Depends" follows `depends`, capabilities required from a provider
    /// and outputs read, transitively; not the written `lifecycle.order`.
    /// The resolved list is printed before anything runs.
    #[arg(
        short = 'c',
        long = "components",
        value_name = "LIST",
        value_delimiter = ',',
        value_parser = hub_manifest::names::selection_arg
    )]
    pub components: Vec<String>,
    /// Every `-c` component with what it depends on, as if written `app+`
    #[arg(long = "with-deps")]
    pub with_deps: bool,
    /// Every `-c` component with what depends on it, as if written `+app`
    #[arg(long = "with-dependents")]
    pub with_dependents: bool,
    /// Start at this component
    #[arg(short = 'o', long = "offset", value_name = "COMPONENT", value_parser = hub_manifest::names::component_arg)]
    pub offset: Option<String>,
    /// Stop after this component
    #[arg(short = 'l', long = "limit", value_name = "COMPONENT", value_parser = hub_manifest::names::component_arg)]
    pub limit: Option<String>,
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
    /// Write a JSON report (per component: status, times, reason, outputs)
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
}

/// What only a run that executes components has: the state it writes,
/// the environment of the components, dry runs, `--why`.
#[derive(Debug, Args)]
pub struct ExecuteArgs {
    /// How much of hub's environment components see
    #[arg(long = "os-environment", value_name = "MODE", default_value = "no-tfvars", value_parser = ["everything", "no-tfvars", "strict"])]
    pub os_environment: String,
    /// Write the state gzip-compressed
    #[arg(long, value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub compressed: bool,
    /// Encrypt remote state copies (s3://, gs://, az://) with
    /// HUB_CRYPTO_PASSWORD, on by default when it is set; local files are
    /// written plain, and encrypted states are read whatever the flag
    #[arg(long, value_name = BOOL, num_args = 0..=1, default_missing_value = "true", action = clap::ArgAction::Set)]
    pub encrypted: Option<bool>,
    /// How the state lays out component snapshots: `linear` (each as a difference against the previous one) or `reference` (each whole, as the Hub CLI writes them)
    #[arg(
        long = "state-format",
        value_name = "FORMAT",
        value_enum,
        default_value = "linear"
    )]
    pub state_format: hub_state::StateFormat,
    /// Dry run: run the `deploy-test`/`undeploy-test` implementations; the state is not written
    #[arg(short = 'y', long = "dry")]
    pub dry: bool,
    /// Stop a component still running after this long (`90s`, `15m`,
    /// `1h30m`; `0`: no limit), its hooks included: SIGTERM to its
    /// processes, SIGKILL 30s later, and it fails. The stack's
    /// `lifecycle.timeouts` gives components their own limits
    #[arg(long, value_name = "DURATION", env = "HUB_TIMEOUT", value_parser = hub_engine::run::timeout::parse)]
    pub timeout: Option<std::time::Duration>,
    /// Print, for each component, why it runs or is skipped
    #[arg(long)]
    pub why: bool,
}

/// Flags of the Hub CLI that are accepted and have no effect here.
#[derive(Debug, Args)]
pub struct CompatibilityArgs {
    /// Accepted for compatibility; no git outputs are added
    #[arg(long = "git-outputs", value_name = BOOL, num_args = 0..=1, default_value = "true", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub git_outputs: bool,
    /// Accepted for compatibility; no git outputs are added
    #[arg(long = "git-outputs-status", value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub git_outputs_status: bool,
    /// Accepted for compatibility: the stack-level outputs are refreshed at the end of every deploy
    #[arg(short = 'g', long = "load-global-state")]
    pub load_global_state: bool,
    /// Accepted for compatibility: failure output always goes to the operation log
    #[arg(long = "write-oplog-to-state-on-error", value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub write_oplog_to_state_on_error: bool,
    /// Accepted for compatibility; ignored
    #[arg(long = "switch-kube-context", value_name = BOOL, num_args = 0..=1, default_value = "false", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub switch_kube_context: bool,
}

/// `--guess` of an undeploy (and of `plan --undeploy`).
#[derive(Debug, Args)]
pub struct GuessArgs {
    /// Skip trailing components that never got a state entry
    #[arg(long, value_name = BOOL, num_args = 0..=1, default_value = "true", default_missing_value = "true", action = clap::ArgAction::Set)]
    pub guess: bool,
}

const RUN_HELP: &str = "\
MANIFEST is an elaborated file (hub.yaml.elaborate), or a stack manifest (hub.yaml) followed \
by its parameters files, which is then elaborated in memory.

The state (-s) is locked for the whole run (STATE.lock); each component's start and end are \
appended to STATE.journal, which is folded into STATE at the end of the run (and now and \
then during it); `hub state pull STATE` shows the state with the journal applied. \
Each component's output is shown prefixed with its name, masked, and appended to \
STATE.logs/COMPONENT.log. Exit status: 0 when the run finished (optional components may \
have failed), 1 when it failed (a component that ran longer than --timeout or its \
`lifecycle.timeouts` entry fails), 2 when the state could not be written, 130 when \
interrupted by SIGINT, 143 by SIGTERM.";

#[derive(Debug, Args)]
#[command(
    after_help = deploy_help(),
    mut_arg("manifest", |a| a.required(false).required_unless_present("plan")),
    mut_arg("state", |a| a.default_value_if("plan", clap::builder::ArgPredicate::IsPresent, Some(""))),
)]
pub struct DeployArgs {
    /// Apply a plan saved by `hub plan --out`: exactly its components,
    /// refused when stale; it names its stack and state (MANIFEST and -s
    /// may repeat them)
    #[arg(
        long,
        value_name = "PLAN",
        conflicts_with_all = ["components", "with_deps", "with_dependents", "offset", "limit", "changed", "replace", "prune", "no_state"]
    )]
    pub plan: Option<PathBuf>,
    #[command(flatten)]
    pub common: CommonRunArgs,
    #[command(flatten)]
    pub execute: ExecuteArgs,
    /// Skip components whose folder, parameters and upstream outputs are
    /// the same as at their last successful deploy
    #[arg(long)]
    pub changed: bool,
    #[command(flatten)]
    pub replace: ReplaceArgs,
    /// After the deploy, undeploy the components the state holds and the
    /// stack no longer lists, dependents first, and forget them
    #[arg(long)]
    pub prune: bool,
    #[command(flatten)]
    pub compatibility: CompatibilityArgs,
}

/// `--replace` of a deploy (and of `plan`).
#[derive(Debug, Args)]
pub struct ReplaceArgs {
    /// Run these components (comma-separated) even where `--changed` would
    /// skip them as unchanged
    #[arg(long, value_name = "LIST", value_delimiter = ',', value_parser = hub_manifest::names::component_arg)]
    pub replace: Vec<String>,
}

#[derive(Debug, Args)]
#[command(after_help = undeploy_help())]
pub struct UndeployArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,
    #[command(flatten)]
    pub execute: ExecuteArgs,
    #[command(flatten)]
    pub guess: GuessArgs,
    #[command(flatten)]
    pub compatibility: CompatibilityArgs,
}

fn deploy_help() -> String {
    format!(
        "{RUN_HELP}

Examples:
  hub deploy hub.yaml params.yaml -s demo.state
  hub deploy hub.yaml.elaborate -c ingress,dns       redeploy two components
  hub deploy hub.yaml.elaborate -c app+              app and everything it depends on
  hub deploy hub.yaml.elaborate --prune              also undeploy components removed from the stack
  hub deploy hub.yaml.elaborate -o app -l web        resume at app, stop after web
  hub deploy --plan plan.json                        apply a plan saved by `hub plan --out`"
    )
}

fn undeploy_help() -> String {
    format!(
        "{RUN_HELP}

Examples:
  hub undeploy hub.yaml.elaborate -s demo.state
  hub undeploy hub.yaml.elaborate --guess=false -f   undeploy all, failures as warnings
  hub undeploy hub.yaml.elaborate -c +database       database and what depends on it

`-c X` refuses, before running anything, when a component outside the selection that \
depends on X (`depends`, or a capability it requires from X) is still deployed; `-c +X` \
takes those down first, `-f` goes on anyway."
    )
}

#[derive(Debug, Args)]
#[command(
    mut_arg("state", |a| a.help("The state to compare with (only read); several separated by commas: the newest")),
    mut_arg("no_state", |a| a.help("Plan without a state, as for a first deploy")),
    mut_arg("force", |a| a.help("Plan as `--force` would run: go on after mandatory failures, accept a state that does not match")),
    mut_arg("reveal", |a| a.help("Show secret values instead of masking them")),
    mut_arg("jobs", |a| a.help("Plan the waves for this many components at once; 0 = the number of CPUs")),
    mut_arg("report", |a| a.help("Write the plan as a JSON report (per component: what would happen and why)")),
    mut_arg("guess", |a| a.help("With --undeploy: skip trailing components that never got a state entry")),
    mut_arg("replace", |a| a.help("Plan these components (comma-separated) as `replace`: they run even where `--changed` would skip them")),
    mut_arg("lock_timeout", |a| a.help("Wait this long for a run that holds the state's lock to end (`30s`, `5m`, `1h`; `0`: refuse at once)")),
)]
pub struct PlanArgs {
    #[command(flatten)]
    pub common: CommonRunArgs,
    #[command(flatten)]
    pub guess: GuessArgs,
    #[command(flatten)]
    pub replace: ReplaceArgs,
    /// Plan as `deploy --changed` runs: components whose folder,
    /// parameters and upstream outputs are unchanged are `no-op`
    #[arg(long)]
    pub changed: bool,
    /// Plan as `deploy --prune` runs: the components the state holds and
    /// the stack no longer lists count as `delete`
    #[arg(long)]
    pub prune: bool,
    /// Plan an undeploy instead of a deploy
    #[arg(long)]
    pub undeploy: bool,
    /// Also save the plan to this file (JSON), for `hub deploy --plan`
    #[arg(long, value_name = "PLAN", conflicts_with = "undeploy")]
    pub out: Option<PathBuf>,
    /// Output format; `markdown` is a pull-request comment (secrets always
    /// masked)
    #[arg(long, value_name = "FORMAT", default_value = "text", value_parser = ["text", "json", "markdown"])]
    pub format: String,
    /// Exit status 0 when nothing would be deployed or undeployed, 2 when
    /// something would, 1 on an error or when a component would fail
    #[arg(long = "detailed-exitcode")]
    pub detailed_exitcode: bool,
}

#[derive(Debug, Args)]
pub struct GraphArgs {
    /// The elaborated file, or a stack manifest followed by parameters files
    #[arg(value_name = "MANIFEST", required = true)]
    pub manifest: Vec<PathBuf>,
    /// A state file: each component is shown with its status there
    #[arg(short = 's', long = "state", value_name = "PATH")]
    pub state: Option<PathBuf>,
    /// Values for `fromEnv` parameters, as NAME=value[,NAME=value]
    #[arg(short = 'e', long = "environment", value_name = "K=V,...")]
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    #[arg(short = 'b', long = "base-dir", alias = "baseDir", value_name = "DIR")]
    pub base_dir: Option<PathBuf>,
    /// Output format
    #[arg(long, value_name = "FORMAT", default_value = "dot", value_parser = ["dot", "mermaid"])]
    pub format: String,
}

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
    #[arg(long, value_name = "DURATION", env = "HUB_TIMEOUT", value_parser = hub_engine::run::timeout::parse)]
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

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations_have_units_or_are_seconds() {
        let ok = |text| parse_duration(text).expect(text);
        assert_eq!(ok("0"), Duration::ZERO);
        assert_eq!(ok("30s"), Duration::from_secs(30));
        assert_eq!(ok("5m"), Duration::from_secs(300));
        assert_eq!(ok("1.5h"), Duration::from_secs(5400));
        assert_eq!(ok("250ms"), Duration::from_millis(250));
        assert_eq!(ok("2"), Duration::from_secs(2));
        for bad in ["", "s", "5 minutes", "-1s", "1d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
