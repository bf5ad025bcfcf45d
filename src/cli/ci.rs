//! The flags of `hub ci`.

use super::run::{LockTimeoutArgs, StackArgs};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "\
Reads the event of the CI system it runs in and does what it asks:
  GitHub Actions (GITHUB_EVENT_NAME, GITHUB_EVENT_PATH):
    pull_request opened, synchronize, reopened   plan the components changed since the base
    pull_request closed                           merged or closed
    issue_comment created on a pull request       its first line: `hub plan [-c a,b]`,
                                                  `hub apply` or `hub unlock`
    pull_request_review submitted, dismissed      an approval, a request for changes or a
                                                  dismissal, recorded for the change
  GitLab CI: a merge-request pipeline (CI_PIPELINE_SOURCE=merge_request_event,
    CI_MERGE_REQUEST_IID, CI_COMMIT_SHA, CI_MERGE_REQUEST_DIFF_BASE_SHA) is planned; a pipeline
    a relay started (trigger, api) for a comment passes HUB_CI_COMMAND (the comment),
    HUB_CI_AUTHOR and HUB_CI_ASSOCIATION (its author's role); for a merge or a close,
    HUB_CI_EVENT=merged|closed|approved|unapproved; with HUB_CI_MR_STATE, HUB_CI_RELAY_TIME and
    HUB_CI_RELAY_SIGNATURE (HMAC-SHA256 with HUB_CI_RELAY_KEY, see the guide's Security model)

Each runs in this process as its command does: a plan as `hub plan --change ID --sha SHA` \
(recorded for the change), an apply as `hub deploy --change ID` (the change's latest plan, \
under the stack's apply lock), merged, closed and unlock as `hub change merged|closed|unlock ID`. The comment \
(markdown) goes to --comment FILE, or to stdout before the status line; nothing is posted: \
the README shows the lines of a workflow that post it. The stack's `ci.apply` may require \
approvals of the commit applied, a mergeable or undiverged change, or a plan made for a trusted \
author (`requires`), and apply on merge instead of on a comment (`on: merge`). Exit status: 0 done (or nothing to do), \
1 the plan or the apply failed, 3 refused (an author who may not plan or apply, a fork, a \
comment hub does not understand, a relay whose signature does not hold, a requirement of `ci.apply` not met).

Examples:
  hub ci hub.yaml params.yaml -s s3://bucket/demo.state --comment comment.md
  hub ci hub.yaml.elaborate -s demo.state --allow-association OWNER,MEMBER --allow-user deploy-bot")]
pub struct CiArgs {
    #[command(flatten)]
    pub stack: StackArgs,
    /// The state file; several separated by commas: the newest is read, all are written
    #[arg(
        short = 's',
        long = "state",
        value_name = "LIST",
        default_value = "hub.yaml.state"
    )]
    pub state: String,
    #[command(flatten)]
    pub lock: LockTimeoutArgs,
    #[command(flatten)]
    pub policy: super::PolicyArgs,
    /// Write the comment (markdown) to this file instead of stdout; not
    /// written when there is nothing to do
    #[arg(long, value_name = "FILE")]
    pub comment: Option<PathBuf>,
    /// The associations of a comment's author that may apply and unlock
    /// (comma-separated; GitHub's OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, …)
    #[arg(
        long = "allow-association",
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "OWNER,MEMBER,COLLABORATOR"
    )]
    pub allow_association: Vec<String>,
    /// Users (logins) who may apply and unlock whatever their association
    /// (comma-separated)
    #[arg(long = "allow-user", value_name = "LIST", value_delimiter = ',')]
    pub allow_user: Vec<String>,
    /// Whose plans run (`hub plan` comments, autoplans of the pull
    /// requests they open): `trusted`, those who may apply
    /// (--allow-association, --allow-user); `anyone`
    #[arg(long = "plan-from", value_name = "WHO", default_value = "trusted", value_parser = ["trusted", "anyone"])]
    pub plan_from: String,
    /// Plan pull requests that come from forks (and those whose event does
    /// not say): their code is another repository's
    #[arg(long = "plan-forks")]
    pub plan_forks: bool,
    /// Run the components' plan steps in a plan (as `hub plan
    /// --plan-steps`) when the event's author may apply and the pull
    /// request is not a fork's: plan steps run the pull request's code
    #[arg(long = "plan-steps")]
    pub plan_steps: bool,
    /// How old a GitLab relay's signed request may be (`15m`, `1h`)
    #[arg(long = "relay-max-age", value_name = "DURATION", default_value = "15m", value_parser = hub_plan::timeout::parse)]
    pub relay_max_age: std::time::Duration,
    /// Components run at once during an apply; 0 = the number of CPUs
    #[arg(short = 'j', long = "jobs", value_name = "N", default_value = "1")]
    pub jobs: usize,
    /// Stop a component still running after this long during an apply
    /// (`15m`, `1h`; `0`: no limit)
    #[arg(long, value_name = "DURATION", value_parser = hub_plan::timeout::parse)]
    pub timeout: Option<std::time::Duration>,
}
