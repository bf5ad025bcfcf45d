//! The flags of each command as plain data: what the command line parsed,
//! handed to the workflows without clap (the CLI's `src/cli/` turns its
//! definitions into these, field for field). Long by design: one plain
//! type per clap type, each field with its meaning, and no code.

pub use crate::format::{CheckFormat, GraphFormat, OutputFormat, ParamsFormat};

use std::path::PathBuf;

/// `--change ID [--sha SHA] [--author NAME]`.
#[derive(Debug, Default, Clone)]
pub struct ChangeArgs {
    /// The change (pull or merge request) this belongs to: a plan is
    /// recorded for it in the registry beside the state (`STATE.changes/`);
    /// a deploy or undeploy applies its latest plan, under the stack's
    /// apply lock (see `hub change --help`)
    pub change: Option<String>,
    /// With --change: the commit the change is at (7 to 64 hexadecimal
    /// digits), recorded with the plan or the apply
    pub sha: Option<String>,
    /// With --change: who plans or applies, a login [default:
    /// $GITHUB_ACTOR, $GITLAB_USER_LOGIN or $USER]
    pub author: Option<String>,
    /// With --change: the head commit of the branch the change merges
    /// into, for `ci.apply.requires: [undiverged]`
    pub base_sha: Option<String>,
    /// With --change: whether the platform says the change can be
    /// merged, for `ci.apply.requires: [mergeable]` and policies
    pub mergeable: Option<bool>,
    /// `hub ci`: the author's association, as the event says it.
    pub association: Option<String>,
    /// `hub ci`: whose approvals and plans count as trusted
    /// (`--allow-association`, `--allow-user`); `None`: the default
    /// associations.
    pub trusted: Option<Trusted>,
    /// `hub ci` applies the merged commit of a merged change (`ci.apply.on:
    /// merge`): the change's head that was merged, whose approvals count.
    pub merged_head: Option<Option<String>>,
    /// `hub ci` plans and applies the commit of a merge queue's or merge
    /// train's entry for the change: that commit, recorded with the plan.
    pub queue: Option<String>,
}

/// The associations that may apply unless `--allow-association` says
/// otherwise, and whose approvals count.
pub(crate) const DEFAULT_ASSOCIATIONS: [&str; 3] = ["OWNER", "MEMBER", "COLLABORATOR"];

/// Who is trusted: these associations, and these logins whatever their
/// association.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trusted {
    pub associations: Vec<String>,
    pub users: Vec<String>,
}

impl Trusted {
    /// Whether `login` with `association` is trusted.
    pub fn trusts(&self, login: Option<&str>, association: Option<&str>) -> bool {
        let login = login.unwrap_or_default();
        if !login.is_empty() && self.users.iter().any(|u| u.eq_ignore_ascii_case(login)) {
            return true;
        }
        association.is_some_and(|association| {
            self.associations
                .iter()
                .any(|a| a.eq_ignore_ascii_case(association))
        })
    }

    /// In words, for a refusal.
    pub fn describe(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if !self.associations.is_empty() {
            parts.push(self.associations.join(", "));
        }
        if !self.users.is_empty() {
            parts.push(format!("the users {}", self.users.join(", ")));
        }
        match parts.is_empty() {
            true => "nobody".into(),
            false => parts.join(" or "),
        }
    }
}

impl Default for Trusted {
    fn default() -> Self {
        Trusted {
            associations: DEFAULT_ASSOCIATIONS.map(String::from).to_vec(),
            users: Vec::new(),
        }
    }
}

/// `--ignore-change-lock` of a plain `deploy` and `undeploy`.
#[derive(Debug, Default, Clone)]
pub struct ChangeLockArgs {
    /// Run even while a change holds the stack's apply lock (without it, a
    /// deploy or undeploy that is not `--change ID` is refused then: the
    /// stack holds that change's unmerged work, which this run would
    /// overwrite)
    pub ignore_change_lock: bool,
}

#[derive(Debug)]
pub struct ChangeCommandArgs {
    pub command: ChangeCommand,
}

#[derive(Debug)]
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
#[derive(Debug)]
pub struct ChangeStateArgs {
    /// The state (a file, or `s3://BUCKET/KEY`, `gs://…`, `az://…`) whose
    /// registry to use
    pub state: std::path::PathBuf,
}

#[derive(Debug)]
pub struct ChangeListArgs {
    pub state: ChangeStateArgs,
}

#[derive(Debug)]
pub struct ChangeIdArgs {
    /// The change id (the pull or merge request's number)
    pub id: String,
    pub state: ChangeStateArgs,
    /// Who says so [default: $GITHUB_ACTOR, $GITLAB_USER_LOGIN or $USER]
    pub author: Option<String>,
}

#[derive(Debug)]
pub struct ChangeShowArgs {
    /// The change id
    pub id: String,
    pub state: ChangeStateArgs,
}

#[derive(Debug)]
pub struct ChangeUnlockArgs {
    pub change: ChangeIdArgs,
    /// Do not ask (needed when standard input is not a terminal)
    pub yes: bool,
}

#[derive(Debug)]
pub struct CheckArgs {
    pub stack: StackArgs,
    /// The state file; several separated by commas: the newest is read, all are written
    pub state: String,
    pub lock: LockTimeoutArgs,
    pub selection: SelectionArgs,
    /// Checks run at once; 0 = the number of CPUs
    pub jobs: usize,
    /// How much of hub's environment the checks see
    pub os_environment: String,
    /// Stop a check still running after this long (`90s`, `15m`; `0`: no limit); it then failed
    pub timeout: Option<std::time::Duration>,
    /// Show secret values in the output instead of masking them
    pub reveal: bool,
    /// How the results are printed: `text` or `markdown` (an issue's body)
    pub format: CheckFormat,
    /// Exit 2 when a component drifted (and no check failed)
    pub detailed_exitcode: bool,
}

#[derive(Debug)]
pub struct CiArgs {
    pub stack: StackArgs,
    /// The state file; several separated by commas: the newest is read, all are written
    pub state: String,
    pub lock: LockTimeoutArgs,
    pub policy: PolicyArgs,
    /// Write the comment (markdown) to this file instead of stdout; not
    /// written when there is nothing to do
    pub comment: Option<PathBuf>,
    /// The associations of a comment's author that may apply and unlock
    /// (comma-separated; GitHub's OWNER, MEMBER, COLLABORATOR, CONTRIBUTOR, …)
    pub allow_association: Vec<String>,
    /// Users (logins) who may apply and unlock whatever their association
    /// (comma-separated)
    pub allow_user: Vec<String>,
    /// Whose plans run (`hub plan` comments, autoplans of the pull
    /// requests they open): `trusted`, those who may apply
    /// (--allow-association, --allow-user); `anyone`
    pub plan_from: String,
    /// Plan pull requests that come from forks (and those whose event does
    /// not say): their code is another repository's
    pub plan_forks: bool,
    /// Run the components' plan steps in a plan (as `hub plan
    /// --plan-steps`) when the event's author may apply and the pull
    /// request is not a fork's: plan steps run the pull request's code
    pub plan_steps: bool,
    /// How old a GitLab relay's signed request may be (`15m`, `1h`)
    pub relay_max_age: std::time::Duration,
    /// Components run at once during an apply; 0 = the number of CPUs
    pub jobs: usize,
    /// Stop a component still running after this long during an apply
    /// (`15m`, `1h`; `0`: no limit)
    pub timeout: Option<std::time::Duration>,
}

#[derive(Debug)]
pub struct DeployArgs {
    pub common: CommonRunArgs,
    pub execute: ExecuteArgs,
    /// Skip components whose folder, parameters and upstream outputs are
    /// the same as at their last successful deploy
    pub changed: bool,
    pub replace: ReplaceArgs,
    /// After the deploy, undeploy the components the state holds and the
    /// stack no longer lists, dependents first, and forget them
    pub prune: bool,
    /// Apply a plan saved by `hub plan --out`: exactly its components,
    /// refused when stale; it names its stack and state (MANIFEST and -s
    /// may repeat them). With `-c NAME`: one component of the plan, as a
    /// job of a pipeline (`--job`)
    pub plan: Option<PathBuf>,
    /// Run as one job of a pipeline: with `--plan PLAN -c NAME`, deploy
    /// exactly the component NAME of the plan's run, holding a lease on it
    /// alone while other jobs deploy other components (see `hub run finish`)
    pub job: bool,
    /// With `--plan` or `--change`: a component planned again during the
    /// deploy (deferred by the plan, or an output it reads changed since)
    /// that differs from the plan runs with the new values if the
    /// policies pass on it, instead of being refused
    pub replan: bool,
    pub change: ChangeArgs,
    pub change_lock: ChangeLockArgs,
    pub compatibility: CompatibilityArgs,
}

/// `--replace` of a deploy (and of `plan`).
#[derive(Debug)]
pub struct ReplaceArgs {
    /// Deploy these components (comma-separated) again (`rerun`: nothing
    /// is undeployed) even where `--changed` would skip them as unchanged
    pub replace: Vec<String>,
}

#[derive(Debug)]
pub struct UndeployArgs {
    pub common: CommonRunArgs,
    pub execute: ExecuteArgs,
    pub guess: GuessArgs,
    pub change: ChangeArgs,
    pub change_lock: ChangeLockArgs,
    pub compatibility: CompatibilityArgs,
}

#[derive(Debug)]
pub struct PlanArgs {
    pub common: CommonRunArgs,
    pub guess: GuessArgs,
    pub replace: ReplaceArgs,
    /// Plan as `deploy --changed` runs: components whose folder,
    /// parameters and upstream outputs are unchanged are `no-op`
    pub changed: bool,
    /// Plan as `deploy --prune` runs: the components the state holds and
    /// the stack no longer lists count as `delete`
    pub prune: bool,
    /// Plan an undeploy instead of a deploy
    pub undeploy: bool,
    /// Also save the plan to this file (JSON), for `hub deploy --plan`
    pub out: Option<PathBuf>,
    /// Output format; `markdown` is a pull-request comment (secrets always
    /// masked)
    pub format: OutputFormat,
    /// Exit status 0 when nothing would be deployed or undeployed, 2 when
    /// something would, 1 on an error or when a component would fail
    pub detailed_exitcode: bool,
    /// Text and markdown: show every component whole, with all its
    /// parameters (without it, only the parameters that differ from the
    /// state, and one line for a component that does not change)
    pub verbose: bool,
    /// Run each component's plan step (`plan.sh`, `make plan`, `terraform
    /// plan` of built-in Terraform) and plan the components after it with
    /// the outputs it plans; a component whose parameters read an output
    /// known only after an upstream applies is `deferred`. Plan steps run
    /// the component's code: off unless asked
    pub plan_steps: bool,
    pub change: ChangeArgs,
}

#[derive(Debug)]
pub struct ElaborateArgs {
    /// The stack manifest (hub.yaml) or application manifest
    pub stack: PathBuf,
    /// Parameters files, later ones override earlier ones
    pub params: Vec<PathBuf>,
    /// Output file(s), comma-separated; `-` writes to stdout
    ///
    /// A `# hub:` comment header at the top records the stack's folder
    /// (relative component folders resolve against it when the file is
    /// deployed from elsewhere), the files read, and the command to make the
    /// file again.
    pub output: String,
    /// Values for parameters with `fromEnv: NAME`, as NAME=value[,NAME=value]
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    pub base_dir: Option<PathBuf>,
    /// Capabilities provided by the underlying platform, comma-separated
    pub platform_provides: Vec<String>,
    /// State file of a deployed platform stack: fills empty parameters;
    /// several separated by commas: the newest is read
    pub state: Option<String>,
    /// Unknown keys that look like typos of known keys (`paramters`,
    /// `fromenv`) are warnings, also in the stack's own files (by default
    /// they are errors there and warnings in component manifests)
    pub lenient: bool,
    /// Unknown keys that look like typos of known keys are errors, also in
    /// component manifests
    pub strict: bool,
    /// With -s: take values from the state's stack parameters too, not only its outputs
    pub state_stack_parameters: bool,
    /// Write the output files gzip-compressed (`-o -` is always plain YAML)
    pub compressed: bool,
}

#[derive(Debug)]
pub struct ExplainArgs {
    /// The state; several separated by commas: the newest is read
    pub state: String,
    /// The elaborated file (optional: the order of the components)
    pub elaborate: Option<PathBuf>,
    /// Deprecated: `[ELABORATED] STATE` as arguments (the Hub CLI's
    /// spelling); warns and reads them as `-m` and `-s`
    pub files: Vec<String>,
    /// Only this component
    pub component: Option<String>,
    /// The stack's parameters, outputs and capabilities (with -c: as well)
    pub global: bool,
    /// Each component's `Outputs:` lines as it printed them
    pub raw_outputs: bool,
    /// The operation log instead (text only)
    pub op_log: bool,
    /// One JSON document, with the keys of the Hub CLI's `explain --json`
    pub json: bool,
    /// The JSON document as YAML
    pub yaml: bool,
    /// `path.to.key=value` lines (newlines in values written `\n`)
    pub kv: bool,
    /// `name='value'` shell assignments, safe to `eval`
    pub sh: bool,
    /// Print secret values instead of `(masked)`
    pub reveal: bool,
}

#[derive(Debug)]
pub struct GraphArgs {
    /// The elaborated file, or a stack manifest followed by parameters files
    pub manifest: Vec<PathBuf>,
    /// A state file: each component is shown with its status there
    pub state: Option<PathBuf>,
    /// Values for `fromEnv` parameters, as NAME=value[,NAME=value]
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    pub base_dir: Option<PathBuf>,
    /// Output format
    pub format: GraphFormat,
    /// Draw only the components whose inputs differ between BASE and the
    /// work tree (as `hub plan --affected` selects them), and what they want
    pub affected: Option<String>,
    /// Plan through the graph (`hub plan --plan-steps`) and mark the
    /// components deferred until an upstream applies
    pub plan_steps: bool,
}

#[derive(Debug)]
pub struct InvokeArgs {
    /// The component, by its name in the stack
    pub component: String,
    /// The verb to run (it must be listed in the component's `lifecycle.verbs`)
    pub verb: String,
    /// The elaborated file [default: $HUB_ELABORATE]
    pub elaborate: Option<PathBuf>,
    /// The state file [default: $HUB_STATE]
    pub state: Option<PathBuf>,
    /// Base directory of git-sourced components
    pub base_dir: Option<PathBuf>,
    /// How much of hub's environment the component sees
    pub os_environment: String,
    /// Variables exported to the component, as NAME=value[,NAME=value]
    pub environment: Vec<String>,
    /// Run a verb the component does not list
    pub force: bool,
    /// Show secret values in the output instead of masking them
    pub reveal: bool,
    /// Stop the component when it runs longer than this (`90s`, `15m`,
    /// `1h30m`; `0`: no limit) unless the stack's `lifecycle.timeouts` gives
    /// it its own limit
    pub timeout: Option<std::time::Duration>,
}

#[derive(Debug)]
pub struct RenderArgs {
    /// Templates to render: files or globs, relative to the current folder
    pub globs: Vec<String>,
    /// Template kind
    pub kind: String,
    /// Additional values, as NAME=value[,NAME=value]
    pub additional: Vec<String>,
    /// The elaborated file [default: $HUB_ELABORATE] (optional: without it
    /// the state alone gives the values)
    pub elaborate: Option<PathBuf>,
    /// The state file [default: $HUB_STATE]; several separated by commas:
    /// the newest is read
    pub state: Option<PathBuf>,
    /// The component whose parameters and outputs the templates see
    /// [default: $HUB_COMPONENT] (without one: the stack's)
    pub component: Option<String>,
    /// Base directory of git-sourced components
    pub base_dir: Option<PathBuf>,
}

#[derive(Debug)]
pub struct CelArgs {
    /// The expression (without `#{` `}`), or with --yaml the value
    pub expression: String,
    /// Bindings as name=value[,name=value]; the value may contain `=`
    pub bindings: Vec<String>,
    /// Treat EXPR as a value mixing `${...}` and `#{...}`; the text inside
    /// `${...}` is evaluated as CEL too
    pub yaml: bool,
    /// Deprecated spelling of --yaml (`-y` is `--yes` elsewhere): warns
    pub yaml_short: bool,
}

#[derive(Debug)]
pub struct ParamsArgs {
    /// The elaborated file (hub.yaml.elaborate)
    pub elaborated: PathBuf,
    /// State file: its stack parameters fill `kind: user` parameters before
    /// prompting and are merged in; with -c its outputs are visible
    pub state: Option<PathBuf>,
    /// Values for `fromEnv` parameters, as NAME=value[,NAME=value]
    pub environment: Vec<String>,
    /// Print this component's expanded parameters instead
    pub component: Option<String>,
    /// Output format
    pub format: ParamsFormat,
    /// Print secret values instead of `(masked)`
    pub reveal: bool,
}

#[derive(Debug)]
pub struct PipelineArgs {
    /// The CI engine the pipeline is written for
    pub target: String,
    pub stack: StackArgs,
    pub state: StateArgs,
    /// Accept a local state file: the runners of every job share the
    /// folder it is in (one machine, or a shared mount)
    pub allow_local_state: bool,
    pub selection: SelectionArgs,
    /// Plan as `deploy --changed` runs: components whose inputs did not
    /// change are no-ops and get no job
    pub changed: bool,
    /// An undeploy pipeline: the plan's waits, which reverse the deploy's
    pub undeploy: bool,
    /// A plan saved by `hub plan --out`: the jobs are its components, and
    /// no job makes the plan (the jobs read PLAN as given)
    pub plan: Option<PathBuf>,
    /// Write the pipeline to FILE instead of stdout
    pub output: Option<PathBuf>,
    /// The image of the jobs whose component has none in
    /// `lifecycle.runners`
    pub image: Option<String>,
    /// Runner tags of the jobs whose component has none in
    /// `lifecycle.runners` (comma-separated)
    pub tags: Vec<String>,
    /// `components`: a job per component, needing what it waits for;
    /// `waves`: the plan's waves one after the other (a GitLab stage or a
    /// GitHub job per wave), for pipelines over the engine's limits
    pub group: String,
    /// The command the jobs run hub with
    pub hub: String,
    /// Where the jobs keep the plan the first job saves (default
    /// `hub.plan`; `/tmp/hub.plan` for Argo, whose artifacts have
    /// absolute paths)
    pub plan_file: Option<String>,
    pub policy: PolicyArgs,
}

/// `--policy FILE` (plan, deploy, undeploy).
#[derive(Debug, Clone, Default)]
pub struct PolicyArgs {
    /// Also evaluate the rules of this policy file (a YAML list of rules,
    /// each `name`, `deny` or `warn`, `message`); may be repeated. The
    /// stack's `policies:` are always evaluated
    pub policies: Vec<PathBuf>,
}

#[derive(Debug)]
pub struct PolicyCommandArgs {
    pub command: PolicyCommand,
}

#[derive(Debug)]
pub enum PolicyCommand {
    /// Evaluate policies against a plan: one saved by `hub plan --out`, or
    /// the output of `hub plan --format json`.
    Test(PolicyTestArgs),
}

#[derive(Debug)]
pub struct PolicyTestArgs {
    /// The plan: saved by `hub plan --out`, or printed by `hub plan --format json`
    pub plan: PathBuf,
    /// A policy file; may be repeated (a saved plan's stack gives its own
    /// `policies:` too)
    pub policies: Vec<PathBuf>,
    /// Output format
    pub format: OutputFormat,
}

#[derive(Debug)]
pub struct ReportArgs {
    /// Deprecated: the state or JSON report as an argument; warns and
    /// reads it as `-s` or `--from`
    pub input: Option<PathBuf>,
    /// The run of a JSON report written by `--report FILE.json`, instead of
    /// the last run the state records
    pub from: Option<PathBuf>,
    /// The HTML file to write
    pub output: PathBuf,
    /// The state whose last run, outputs and logs the page shows
    /// [default: hub.yaml.state; with --from, the state the report names]
    pub state: Option<PathBuf>,
}

/// What `deploy`, `undeploy` and `plan` share.
#[derive(Debug)]
pub struct CommonRunArgs {
    pub stack: StackArgs,
    pub state: StateArgs,
    pub selection: SelectionArgs,
    pub run: RunArgs,
    pub policy: PolicyArgs,
}

/// What `deploy`, `undeploy` and `plan` work on: the stack and how it is
/// read.
#[derive(Debug)]
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
    pub manifest: Vec<PathBuf>,
    /// Values for `fromEnv` parameters, as NAME=value[,NAME=value] (not exported to components)
    pub environment: Vec<String>,
    /// Base directory of git-sourced components
    pub base_dir: Option<PathBuf>,
    /// Unknown keys that look like typos of known keys (`paramters`,
    /// `fromenv`) are warnings, also in the stack's own files (by default
    /// they are errors there and warnings in component manifests)
    pub lenient: bool,
    /// Unknown keys that look like typos of known keys are errors, also in
    /// component manifests
    pub strict: bool,
    /// Clouds whose requirements are checked (aws, azure, gcp; comma-separated):
    /// the requirements `aws`, `azure`, `gcp` and `gcs` of the other clouds are
    /// dropped from the stack and its components. Without it, the clouds whose
    /// variables are set are checked (AWS_PROFILE, AWS_DEFAULT_REGION, AWS_ACCESS_KEY_ID;
    /// AZURE_AUTH_LOCATION, AZURE_TENANT_ID, AZURE_RESOURCE_GROUP_NAME;
    /// GOOGLE_APPLICATION_CREDENTIALS); with none set, every requirement is (with a warning)
    pub clouds: Vec<String>,
}

/// The state of a run.
#[derive(Debug)]
pub struct StateArgs {
    /// The state file; several separated by commas: the newest is read, all are written
    pub state: String,
    /// Use no state: nothing is read and nothing is written
    pub no_state: bool,
    pub lock: LockTimeoutArgs,
}

/// `--lock-timeout` of the commands that take (or, for a plan, wait for)
/// the state's lock.
#[derive(Debug)]
pub struct LockTimeoutArgs {
    /// Wait this long for the state's lock when another run holds it
    /// (`30s`, `5m`, `1h`; `0`: fail at once)
    pub lock_timeout: std::time::Duration,
}

/// Which components run.
#[derive(Debug)]
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
    pub affected: Option<String>,
    /// Every `-c` component with what it depends on, as if written `app+`
    pub with_deps: bool,
    /// Every `-c` component with what depends on it, as if written `+app`
    pub with_dependents: bool,
    /// Start at this component (resume a run that stopped there)
    pub offset: Option<String>,
    /// Stop after this component
    pub limit: Option<String>,
    /// Only the components whose health, as the last `hub check` recorded
    /// it, is one of these (comma-separated): healthy, drifted, failed,
    /// unverifiable
    pub status: Vec<hub_state::HealthStatus>,
}

/// How components are run.
#[derive(Debug)]
pub struct RunArgs {
    /// Go on after failures of mandatory components, use a state that does
    /// not match, undeploy `-c` components that deployed ones depend on
    pub force: bool,
    /// Show secret values in the output instead of masking them
    pub reveal: bool,
    /// Components run at once: a component starts when everything it
    /// depends on has finished; 0 = the number of CPUs
    pub jobs: usize,
    /// Write a report: JSON (per component: status, times, reason,
    /// outputs), or with a `.html` name a page with a timeline, the
    /// dependency graph and each component's details
    pub report: Option<PathBuf>,
}

/// What only a run that executes components has: the state it writes,
/// the environment of the components, dry runs, `--why`.
#[derive(Debug)]
pub struct ExecuteArgs {
    /// How much of hub's environment components see
    pub os_environment: String,
    /// Write the state gzip-compressed
    pub compressed: bool,
    /// Encrypt remote state copies (s3://, gs://, az://) with
    /// HUB_CRYPTO_PASSWORD, on by default when it is set; local files are
    /// written plain, and encrypted states are read whatever the flag
    pub encrypted: Option<bool>,
    /// How the state lays out component snapshots: `linear` (each as a difference against the previous one) or `reference` (each whole, as the Hub CLI writes them)
    pub state_format: hub_state::StateFormat,
    /// Dry run: run the `deploy-test`/`undeploy-test` implementations; the state is not written
    pub dry: bool,
    /// Stop a component still running after this long (`90s`, `15m`,
    /// `1h30m`; `0`: no limit), its hooks included: SIGTERM to its
    /// processes, SIGKILL 30s later, and it fails. The stack's
    /// `lifecycle.timeouts` gives components their own limits
    pub timeout: Option<std::time::Duration>,
    /// Print, for each component, why it runs or is skipped
    pub why: bool,
    /// Start nothing more once a mandatory component failed (what is
    /// running finishes); without it every component that does not depend
    /// on the failure still runs, whatever `-j` is
    pub fail_fast: bool,
}

/// Flags of the Hub CLI that are accepted and have no effect here: hidden
/// from `-h`, under their own heading in `--help`.
#[derive(Debug)]
pub struct CompatibilityArgs {
    /// Accepted for compatibility; no git outputs are added
    pub git_outputs: bool,
    /// Accepted for compatibility; no git outputs are added
    pub git_outputs_status: bool,
    /// Accepted for compatibility: the stack-level outputs are refreshed at the end of every deploy
    pub load_global_state: bool,
    /// Accepted for compatibility: failure output always goes to the operation log
    pub write_oplog_to_state_on_error: bool,
    /// Accepted for compatibility; ignored
    pub switch_kube_context: bool,
}

/// `--guess` of an undeploy (and of `plan --undeploy`).
#[derive(Debug)]
pub struct GuessArgs {
    /// Skip trailing components that never got a state entry
    pub guess: bool,
}

#[derive(Debug)]
pub struct RunCommandArgs {
    pub command: RunCommand,
}

#[derive(Debug)]
pub enum RunCommand {
    /// Close the run of a plan deployed by pipeline jobs: fold what each
    /// job recorded into the state, release the run, print the summary.
    /// Exit status 1 when a component failed or never ran
    Finish(RunFinishArgs),
}

#[derive(Debug)]
pub struct RunFinishArgs {
    /// The plan saved by `hub plan --out` whose run the jobs deployed
    pub plan: PathBuf,
    /// The state the jobs wrote (the plan's state when not given)
    pub state: Option<String>,
    /// Also write the run's report: JSON, or HTML with a `.html` name
    pub report: Option<PathBuf>,
}

#[derive(Debug)]
pub struct UnlockArgs {
    /// The state whose lock to remove (its `.lock` file is accepted
    /// too), or a remote state `s3://BUCKET/KEY`
    pub state: PathBuf,
    /// Deprecated: the state as an argument; warns and reads it as `-s`
    pub legacy_state: Option<PathBuf>,
    /// Remove the lock even if its holder may still be running
    pub force: bool,
    /// With --force: remove a lock whose holder still runs on this host
    /// without asking (a terminal is asked; a script is refused)
    pub yes: bool,
    /// Remove the lock of a remote state only if its id is ID
    pub id: Option<String>,
}

#[derive(Debug)]
pub struct StateCommandArgs {
    pub command: StateCommand,
}

#[derive(Debug)]
pub enum StateCommand {
    /// Print the state as hub reads it (the file with its journal folded
    /// in), or write it to FILE; takes no lock and changes nothing
    Pull(StatePullArgs),
    /// List the components the state records: name, status, when, and the
    /// operation that last ran it; takes no lock and changes nothing
    List(StateListArgs),
    /// Show one component of the state: its status, parameters and
    /// outputs (secrets masked); takes no lock and changes nothing
    Show(StateShowArgs),
    /// Forget components: remove their entries from the state without
    /// running anything (their resources stay where they are)
    Rm(StateRmArgs),
    /// Rename a component in the state: it keeps its status, parameters
    /// and outputs, so a deploy of the renamed stack finds it deployed
    Mv(StateMvArgs),
    /// Upload a state file to a location (a remote key or a local file),
    /// under its lock
    Push(StatePushArgs),
}

/// The state the state commands work on.
#[derive(Debug)]
pub struct StateLocationArgs {
    /// The state file; several separated by commas: the newest is read, a change is written to all
    pub state: String,
}

/// What the state commands that change the state share.
#[derive(Debug)]
pub struct StateChangeArgs {
    pub location: StateLocationArgs,
    pub lock: LockTimeoutArgs,
    /// How the state lays out component snapshots
    pub state_format: hub_state::StateFormat,
}

#[derive(Debug)]
pub struct StateListArgs {
    pub location: StateLocationArgs,
    /// Deprecated: the state as an argument; warns and reads it as `-s`
    pub legacy_state: Option<String>,
    /// One JSON array, an object per component
    pub json: bool,
}

#[derive(Debug)]
pub struct StateShowArgs {
    /// The component, by its name in the state
    pub component: String,
    pub location: StateLocationArgs,
    /// One JSON object
    pub json: bool,
    /// Print secret values instead of `(masked)`
    pub reveal: bool,
}

#[derive(Debug)]
pub struct StateRmArgs {
    /// The components to forget
    pub components: Vec<String>,
    pub change: StateChangeArgs,
    /// Do not ask (needed when standard input is not a terminal)
    pub yes: bool,
    /// The stack (elaborated file or `hub.yaml`) [default: $HUB_ELABORATE]:
    /// a component its `lifecycle.protected` lists is not forgotten
    pub elaborate: Option<PathBuf>,
}

#[derive(Debug)]
pub struct StateMvArgs {
    /// The component's name in the state
    pub old: String,
    /// Its new name
    pub new: String,
    pub change: StateChangeArgs,
}

#[derive(Debug)]
pub struct StatePushArgs {
    /// The state file to upload
    pub file: PathBuf,
    /// Where to upload it: `s3://BUCKET/KEY`, `gs://…`, `az://…` or a file
    pub location: PathBuf,
    /// Replace a state of another lineage or a newer serial
    pub force: bool,
}

#[derive(Debug)]
pub struct StatePullArgs {
    /// The state file, or a remote state `s3://BUCKET/KEY` (`gs://`, `az://`)
    pub state: PathBuf,
    /// Write the state to this file instead of standard output
    pub output: Option<PathBuf>,
    /// Deprecated: `STATE [FILE]` as arguments; warns and reads them as
    /// `-s` and `-o`
    pub legacy: Vec<PathBuf>,
    /// How component snapshots are laid out in the output
    pub state_format: hub_state::StateFormat,
}

#[derive(Debug)]
pub struct UtilArgs {
    pub command: UtilCommand,
}

#[derive(Debug)]
pub enum UtilCommand {
    /// Run one program the way `hub deploy` runs a component
    Run(UtilRunArgs),
    /// Encrypt secret outputs with the one-time pad in $HUB_RANDOM
    Otp(UtilOtpArgs),
}

#[derive(Debug)]
pub struct UtilOtpArgs {
    /// The only mode: encode (the default)
    pub mode: Option<String>,
}

#[derive(Debug)]
pub struct UtilRunArgs {
    /// Shown before every line (default: the program's file name)
    pub label: Option<String>,
    /// Seconds between the passed-on signal and the kill
    pub grace: std::time::Duration,
    /// Stop the program after this many seconds (SIGTERM, then SIGKILL after --grace)
    pub timeout: Option<std::time::Duration>,
    /// Append the masked output lines to this file
    pub log: Option<PathBuf>,
    /// Mask the value of this variable of hub's environment (repeatable)
    pub mask_env: Vec<String>,
    /// Mask each line read from stdin (the program's stdin is /dev/null)
    pub mask_stdin: bool,
    /// A secret value to mask; visible to other users in the command line: prefer --mask-env
    pub mask: Vec<String>,
    /// Start the program with an empty environment instead of hub's
    pub clear_env: bool,
    /// Set a variable for the program (repeatable)
    pub env: Vec<String>,
    /// Working directory of the program (default: the current one)
    pub cwd: Option<PathBuf>,
    /// The program and its arguments
    pub command: Vec<String>,
}

#[derive(Debug)]
pub struct ValidateArgs {
    /// Manifests to check: hub.yaml, hub-component.yaml, params*.yaml
    pub files: Vec<PathBuf>,
    /// Unknown keys that look like typos of known keys are warnings, also
    /// in stack and parameters files (by default they are errors there and
    /// warnings in component manifests, as in `elaborate`, `plan`, `deploy`)
    pub lenient: bool,
    /// Unknown keys that look like typos of known keys are errors, also in
    /// component manifests
    pub strict: bool,
}
