//! Command-line definitions (clap derive). Nothing here does any work.

use clap::{Args, Parser, Subcommand};

mod change;
mod check;
mod ci;
mod deploy;
mod elaborate;
mod explain;
mod format;
mod graph;
mod headings;
mod invoke;
mod params;
mod pipeline;
mod policy;
mod report;
mod request;
mod run;
mod runs;
#[cfg(test)]
mod short_flags;
mod state;
mod util;
mod validate;

pub use change::*;
pub use check::*;
pub use ci::*;
pub use deploy::*;
pub use elaborate::*;
pub use explain::*;
pub use format::*;
pub use graph::*;
pub use invoke::*;
pub use params::*;
pub use pipeline::*;
pub use policy::*;
pub use report::*;
pub use run::*;
pub use runs::*;
pub use state::*;
pub use util::*;
pub use validate::*;

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
    about = "Deploy stacks of components described by Hub manifests",
    after_help = "\
A day with hub: elaborate the stack, plan, deploy; explain the state it left; undeploy.
Which view of a state: `hub explain` everything it records (parameters, outputs, the \
operation log); `hub state list` one line per component; `hub state show NAME` one \
component whole; `hub state pull` the raw file with its journal folded in.
Every command takes the state as -s STATE (default hub.yaml.state)."
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
    // In the order of a user's day: write and read a stack, plan,
    // deploy, undeploy, look at what a run left; then what a team and CI
    // use (changes, pipelines, policies, locks); then the helpers component
    // scripts call; then hub itself. `hub --help` lists them in this order.
    /// Merge a stack, its parameters files, its parents and its component
    /// manifests into one elaborated file. Nothing is executed.
    Elaborate(ElaborateArgs),
    /// Show what a deploy (or undeploy) would do, running and changing
    /// nothing: waves, parameters and their changes, requirements, skips.
    Plan(PlanArgs),
    /// Deploy the components of a stack in lifecycle order, recording what
    /// happened in the state file.
    Deploy(DeployArgs),
    /// Undeploy the components of a stack in reverse lifecycle order.
    Undeploy(UndeployArgs),
    /// Show everything a state records: stack parameters, outputs and
    /// capabilities, each component's parameters, outputs and status, the
    /// operation log (`hub state list` is one line per component).
    Explain(ExplainArgs),
    /// Work with state files: `hub state list` (a line per component),
    /// `show` (one component), `pull` (the file as hub reads it), `rm`, `mv`, `push`.
    State(StateCommandArgs),
    /// Write the HTML report of a past run, from its state or its JSON
    /// report: timeline, critical path, dependencies, logs.
    Report(ReportArgs),
    /// Run each deployed component's `check` verb, read-only, and record
    /// its health in the state: healthy, drifted, failed or unverifiable.
    Check(CheckArgs),
    /// Print the dependency graph of a stack (Graphviz dot or Mermaid).
    Graph(GraphArgs),
    /// Lock the stack parameters of an elaborated file and print them, or
    /// one component's expanded parameters, each with where its value came
    /// from.
    Params(ParamsArgs),
    /// Check stack, component and parameters manifests against the JSON
    /// Schemas in `schemas/`.
    Validate(ValidateArgs),
    /// Work with the changes (pull or merge requests) planned and applied
    /// on a state: `hub change list`, `show`, `merged`, `closed`, `unlock`.
    Change(ChangeCommandArgs),
    /// Run in CI: read the pull-request event, plan or apply as it asks,
    /// write the comment to post and a one-line status.
    Ci(CiArgs),
    /// Write a CI pipeline (GitLab, GitHub Actions, Argo Workflows) that
    /// deploys or undeploys a stack one job per component, in the plan's
    /// order, on a shared state.
    Pipeline(PipelineArgs),
    /// The last job of a pipeline: `hub run finish` closes the run whose
    /// components its jobs deployed (`hub deploy --plan PLAN -c NAME --job`).
    Run(RunCommandArgs),
    /// Evaluate policies on plans: `hub policy test PLAN --policy FILE`.
    Policy(PolicyCommandArgs),
    /// Remove the lock file (`STATE.lock`) left on a state by a run that
    /// did not finish: only when its process is gone, or with --force
    /// whatever holds it.
    Unlock(UnlockArgs),
    /// Run one verb of one component with its parameters, from inside
    /// another component's script (uses $HUB_ELABORATE and $HUB_STATE).
    Invoke(InvokeArgs),
    /// Render templates in the current folder with a component's parameters
    /// and outputs (from inside its script: uses $HUB_ELABORATE, $HUB_STATE
    /// and $HUB_COMPONENT).
    Render(RenderArgs),
    /// For component scripts: `hub util otp` encrypts secret outputs
    /// (scripts call it as `$HUB util otp`, so it stays where it is).
    Util(UtilArgs),
    /// Evaluate a `#{...}` CEL expression (or, with --yaml, a value mixing
    /// `${...}` and `#{...}`) with string bindings, to try expressions out.
    Cel(CelArgs),
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
