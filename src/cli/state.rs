//! The flags of `hub unlock` and `hub state ...`.

use super::run::{LockTimeoutArgs, StateFormatArg};
use clap::{Args, Subcommand};
use std::path::PathBuf;

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
with --force. --id ID removes the lock only if it is that one (the id a refused run shows).

`hub unlock STATE` (an argument) still works, with a warning.")]
pub struct UnlockArgs {
    /// The state whose lock to remove (its `.lock` file is accepted
    /// too), or a remote state `s3://BUCKET/KEY`
    #[arg(
        short = 's',
        long = "state",
        value_name = "STATE",
        default_value = "hub.yaml.state"
    )]
    pub state: PathBuf,
    /// Deprecated: the state as an argument; warns and reads it as `-s`
    #[arg(value_name = "STATE", hide = true, conflicts_with = "state")]
    pub legacy_state: Option<PathBuf>,
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
  hub state pull -s hub.yaml.state -o recovered.state

`hub state pull STATE [FILE]` (arguments) still works, with a warning.")]
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
is not a terminal). With the stack (-m, or $HUB_ELABORATE), a component its \
`lifecycle.protected` lists is refused, whatever the flags.

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

pub(super) const STATE_READ_HELP: &str = "\
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
    pub state_format: StateFormatArg,
}

#[derive(Debug, Args)]
pub struct StateListArgs {
    #[command(flatten)]
    pub location: StateLocationArgs,
    /// Deprecated: the state as an argument; warns and reads it as `-s`
    #[arg(value_name = "STATE", hide = true, conflicts_with = "state")]
    pub legacy_state: Option<String>,
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
    /// The stack (elaborated file or `hub.yaml`) [default: $HUB_ELABORATE]:
    /// a component its `lifecycle.protected` lists is not forgotten
    #[arg(short = 'm', long = "elaborate", value_name = "PATH")]
    pub elaborate: Option<PathBuf>,
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
    #[arg(
        short = 's',
        long = "state",
        value_name = "STATE",
        default_value = "hub.yaml.state"
    )]
    pub state: PathBuf,
    /// Write the state to this file instead of standard output
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Deprecated: `STATE [FILE]` as arguments; warns and reads them as
    /// `-s` and `-o`
    #[arg(value_name = "STATE", num_args = 0..=2, hide = true, conflicts_with_all = ["state", "output"])]
    pub legacy: Vec<PathBuf>,
    /// How component snapshots are laid out in the output
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "linear")]
    pub state_format: StateFormatArg,
}
