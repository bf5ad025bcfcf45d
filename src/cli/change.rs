//! The flags of `hub change …` and the `--change` flags of `plan`,
//! `deploy` and `undeploy`.

use clap::{Args, Subcommand};

/// `--change ID [--sha SHA] [--author NAME]`.
#[derive(Debug, Args, Default, Clone)]
pub struct ChangeArgs {
    /// The change (pull or merge request) this belongs to: a plan is
    /// recorded for it in the registry beside the state (`STATE.changes/`);
    /// a deploy or undeploy applies its latest plan, under the stack's
    /// apply lock (see `hub change --help`)
    #[arg(long, value_name = "ID", help_heading = super::headings::PLANS, hide_short_help = true)]
    pub change: Option<String>,
    /// With --change: the commit the change is at (7 to 64 hexadecimal
    /// digits), recorded with the plan or the apply
    #[arg(long, value_name = "SHA", requires = "change", help_heading = super::headings::PLANS, hide_short_help = true)]
    pub sha: Option<String>,
    /// With --change: who plans or applies, a login [default:
    /// $GITHUB_ACTOR, $GITLAB_USER_LOGIN or $USER]
    #[arg(long, value_name = "NAME", requires = "change", help_heading = super::headings::PLANS, hide_short_help = true)]
    pub author: Option<String>,
    /// With --change: the head commit of the branch the change merges
    /// into; `ci.apply.requires: [undiverged]` checks that the change's
    /// commit contains it (git)
    #[arg(long = "base-sha", value_name = "SHA", requires = "change", help_heading = super::headings::PLANS, hide_short_help = true)]
    pub base_sha: Option<String>,
    /// With --change: whether the platform says the change can be merged
    /// (`true` or `false`), for `ci.apply.requires: [mergeable]` and the
    /// policies' `change.mergeable`
    #[arg(long, value_name = "BOOL", requires = "change", help_heading = super::headings::PLANS, hide_short_help = true)]
    pub mergeable: Option<bool>,
}

/// `--ignore-change-lock` of a plain `deploy` and `undeploy`.
#[derive(Debug, Args, Default, Clone)]
pub struct ChangeLockArgs {
    /// Run even while a change holds the stack's apply lock (without it, a
    /// deploy or undeploy that is not `--change ID` is refused then: the
    /// stack holds that change's unmerged work, which this run would
    /// overwrite)
    #[arg(long, conflicts_with = "change", help_heading = super::headings::PLANS, hide_short_help = true)]
    pub ignore_change_lock: bool,
}

pub(super) const CHANGE_HELP: &str = "\
A change is a pull or merge request. `hub plan … --change ID` records each plan of it, \
succeeded or failed, in the registry beside the state (`STATE.changes/`, or `KEY.changes/` \
objects beside a remote state). `hub deploy --change ID` applies its latest plan, as \
`deploy --plan` would, and refuses before running anything when ID has no plan, when its \
latest plan failed or is stale, or when another change holds the apply lock. An apply takes \
the apply lock for ID and keeps it, after a success until ID is merged, after a failure so \
that only ID can apply until it succeeds.

Examples:
  hub change list -s hub.yaml.state
  hub change show 42 -s hub.yaml.state
  hub change merged 42 -s hub.yaml.state     42 is merged: release its lock, other plans are stale
  hub change closed 43 -s hub.yaml.state     43 was closed unmerged (refused if it applied)
  hub change unlock 42 -s hub.yaml.state --yes";

#[derive(Debug, Args)]
#[command(after_help = CHANGE_HELP)]
pub struct ChangeCommandArgs {
    #[command(subcommand)]
    pub command: ChangeCommand,
}

#[derive(Debug, Subcommand)]
pub enum ChangeCommand {
    /// List the changes with their latest plan, their applies, and which
    /// holds the apply lock
    List(ChangeListArgs),
    /// Show every plan and apply recorded for a change
    Show(ChangeShowArgs),
    /// The change is merged into the default branch: release its apply
    /// lock and mark the plans of every other change stale
    Merged(ChangeIdArgs),
    /// The change was closed without merging: release its apply lock,
    /// refused when it applied anything (the stack holds its work)
    Closed(ChangeIdArgs),
    /// Release the apply lock a change holds, whatever it applied (asks on
    /// a terminal; scripts pass --yes)
    Unlock(ChangeUnlockArgs),
}

/// `-s STATE` of the change commands.
#[derive(Debug, Args)]
pub struct ChangeStateArgs {
    /// The state (a file, or `s3://BUCKET/KEY`, `gs://…`, `az://…`) whose
    /// registry to use
    #[arg(
        short = 's',
        long = "state",
        value_name = "STATE",
        default_value = "hub.yaml.state"
    )]
    pub state: std::path::PathBuf,
}

#[derive(Debug, Args)]
pub struct ChangeListArgs {
    #[command(flatten)]
    pub state: ChangeStateArgs,
}

#[derive(Debug, Args)]
pub struct ChangeIdArgs {
    /// The change id (the pull or merge request's number)
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub state: ChangeStateArgs,
    /// Who says so [default: $GITHUB_ACTOR, $GITLAB_USER_LOGIN or $USER]
    #[arg(long, value_name = "NAME")]
    pub author: Option<String>,
}

#[derive(Debug, Args)]
pub struct ChangeShowArgs {
    /// The change id
    #[arg(value_name = "ID")]
    pub id: String,
    #[command(flatten)]
    pub state: ChangeStateArgs,
}

#[derive(Debug, Args)]
pub struct ChangeUnlockArgs {
    #[command(flatten)]
    pub change: ChangeIdArgs,
    /// Do not ask (needed when standard input is not a terminal)
    #[arg(short = 'y', long)]
    pub yes: bool,
}
