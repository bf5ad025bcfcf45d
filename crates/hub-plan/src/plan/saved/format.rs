//! The saved plan's format: the types `hub plan --out` writes and
//! `hub deploy --plan` reads (see the parent module). Apart from the code
//! that makes and checks a plan, so that the run's options can hold a
//! plan as reviewed.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A plan saved by `hub plan --out`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct SavedPlan {
    /// The version of the plan format: 3 (a version 2 plan is read too,
    /// unless it has a `replace`).
    #[schemars(range(min = 2, max = 3))]
    pub version: u32,
    /// When the plan was made (RFC 3339, UTC).
    pub created: String,
    pub stack: PlannedStack,
    pub state: PlannedState,
    pub arguments: PlannedArguments,
    /// Every selected component, in the order a deploy takes them; then,
    /// with `--prune`, the removed components as `delete`, in the order
    /// they are undeployed.
    pub components: Vec<PlannedComponent>,
    /// The `--policy` files the plan was checked with, as given, with
    /// their digests: an apply (and each job of a pipeline) evaluates
    /// them again, and refuses when one changed.
    #[serde(default)]
    pub policies: Vec<PlannedFile>,
    /// The change (`--change ID`) the plan was made for: an apply of it
    /// goes ahead while that change holds the apply lock.
    #[serde(default)]
    pub change: Option<String>,
}

/// The stack a plan was made for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct PlannedStack {
    /// The stack's `meta.name`.
    pub name: String,
    /// The elaborated file, or the stack manifest and its parameters files,
    /// as given to `hub plan`.
    pub files: Vec<String>,
    /// `sha256:…` of the elaborated stack (every document, as read).
    pub digest: String,
    /// The commit the plan was made at: `--sha`, else the `HEAD` of the
    /// git work tree the stack is in; `null` outside git (the files'
    /// digests are then all an apply compares).
    #[serde(default)]
    pub commit: Option<String>,
    /// Every file the plan read besides the state and the component
    /// folders (see `components[].folder`): the stack's files, hooks,
    /// `lifecycle.watch` files and Terraform modules sourced from outside
    /// a component's folder; relative to the stack's folder, a folder's
    /// path ending in `/`.
    #[serde(default)]
    pub inputs: Vec<PlannedFile>,
}

/// A file (or folder) a plan read, and its digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct PlannedFile {
    pub path: String,
    /// `sha256:…` of its bytes (of a folder: the digest `--changed`
    /// compares); `absent` when it was not there.
    pub digest: String,
}

/// The state a plan read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct PlannedState {
    /// The `-s` locations as given; empty for a plan made with `-n`.
    pub locations: Vec<String>,
    /// The location read (the newest of several); `null` with `-n`.
    pub read: Option<String>,
    /// The state's lineage; `null` when there was no state yet.
    pub lineage: Option<String>,
    /// The state's serial; `null` when there was no state yet.
    pub serial: Option<u64>,
}

/// The arguments of `hub plan` that decide what a deploy runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct PlannedArguments {
    /// The `-c` entries as written.
    pub components: Vec<String>,
    /// What they resolved to: every selected component, in order.
    pub selected: Vec<String>,
    pub with_deps: bool,
    pub with_dependents: bool,
    /// `-o`.
    pub offset: Option<String>,
    /// `-l`.
    pub limit: Option<String>,
    /// `--changed`.
    pub changed: bool,
    /// `--replace`.
    pub replace: Vec<String>,
    /// `-f`.
    pub force: bool,
    /// `--prune`: the removed components are deleted. A file without it
    /// was made without.
    #[serde(default)]
    pub prune: bool,
    /// `-b`.
    pub base_dir: Option<String>,
    /// `--clouds` as given (empty: from the environment).
    pub clouds: Vec<String>,
    /// `-j` of the plan: which outputs a component sees before the run
    /// depends on it. The deploy checks the plan with it and runs with its
    /// own `-j`.
    pub jobs: usize,
    /// `--plan-steps`: the plan ran the components' plan steps, and an
    /// apply makes it again the same way. A file without it was made
    /// without.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub plan_steps: bool,
}

/// One component of a plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct PlannedComponent {
    pub name: String,
    pub action: PlanAction,
    /// Why it runs, or is skipped.
    pub reasons: Vec<String>,
    /// `sha256:…` of its folder (see `hub deploy --changed`); `null` for a
    /// skipped component.
    pub folder: Option<String>,
    /// Its expanded parameters, in order; empty for a skipped component.
    /// For a `delete`, the parameters its state entry records, which its
    /// undeploy gets.
    pub parameters: Vec<PlannedParameter>,
    /// For a `delete`: the folder its undeploy runs from, as the state
    /// records it; `folder` is its digest (`null` when it is gone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dir: Option<String>,
    /// `--plan-steps`: each planned output of a component the plan runs
    /// that its parameters read, with the digest of its planned value:
    /// the deploy refuses the component when the output it is about to
    /// read differs. A file without it records none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reads: Vec<crate::plan::planned::ReadOutput>,
    /// `sha256:…` of its state entry as the plan read it (see
    /// [`entry_digest`]); `absent` when the state had none. When the
    /// state moved before the apply (same lineage, another serial), a
    /// component whose entry changed is refused and the others are
    /// checked on what they read; a plan without these digests (made
    /// with `-n`, or by an older hub) is refused whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
}

/// An expanded parameter as planned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(extend("additionalProperties" = false))]
pub struct PlannedParameter {
    pub name: String,
    /// The value's text; for a secret, `sha256:…` of it.
    pub value: String,
    /// The value is a secret: `value` is its digest.
    pub secret: bool,
}

/// What a deploy does to a component, in Terraform's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum PlanAction {
    /// Never deployed.
    Create,
    /// Deployed; it runs again.
    Update,
    /// Unchanged: `--changed` skips it.
    NoOp,
    /// Undeployed, then deployed (`lifecycle.replaceTriggeredBy`).
    Replace,
    /// Deployed again, nothing undeployed: its last run failed or was
    /// interrupted, or `--replace` names it.
    Rerun,
    /// Undeployed and removed from the state.
    Delete,
    /// Not run: a condition is off or an optional requirement is missing.
    Skip,
}

impl PlanAction {
    pub fn as_str(self) -> &'static str {
        match self {
            PlanAction::Create => "create",
            PlanAction::Update => "update",
            PlanAction::NoOp => "no-op",
            PlanAction::Replace => "replace",
            PlanAction::Rerun => "rerun",
            PlanAction::Delete => "delete",
            PlanAction::Skip => "skip",
        }
    }

    /// The component's deploy runs.
    pub fn runs(self) -> bool {
        matches!(
            self,
            PlanAction::Create | PlanAction::Update | PlanAction::Replace | PlanAction::Rerun
        )
    }
}
