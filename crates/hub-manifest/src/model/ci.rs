//! `ci:` of a stack: what `hub ci` and `hub deploy --change` require of a
//! change before its plan is applied, when `hub ci` applies it, and what a
//! merge queue or merge train may do with it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `ci:` (stack only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct Ci {
    /// What an apply of a change needs, and when `hub ci` applies.
    #[serde(skip_serializing_if = "CiApply::is_empty")]
    pub apply: CiApply,
    /// What `hub ci` does in a merge queue (GitHub) or merge train (GitLab).
    #[serde(skip_serializing_if = "CiQueue::is_empty")]
    pub queue: CiQueue,
}

impl Ci {
    pub fn is_empty(&self) -> bool {
        self.apply.is_empty() && self.queue.is_empty()
    }
}

/// `ci.queue`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct CiQueue {
    /// Whether the plan of the queue's commit may differ from the plan
    /// approved for the change: `refused` (the default: the change leaves
    /// the queue, naming each component and input that differs) or
    /// `allowed` (the queue's plan is applied when its policies pass).
    #[serde(skip_serializing_if = "Replan::is_default")]
    pub replan: Replan,
}

impl CiQueue {
    pub fn is_empty(&self) -> bool {
        self.replan.is_default()
    }
}

/// `ci.queue.replan`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Replan {
    /// A queue commit whose plan differs from the approved one is refused.
    #[default]
    Refused,
    /// A queue commit whose plan differs is applied when its policies pass.
    Allowed,
}

impl Replan {
    pub fn is_default(&self) -> bool {
        *self == Replan::Refused
    }
}

/// `ci.apply`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(default)]
pub struct CiApply {
    /// Checked before `hub deploy --change` and `hub ci`'s apply, each
    /// refused with the requirement it misses.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub requires: Vec<ApplyRequirement>,
    /// How many approvals `approved` needs (default 1): of the commit the
    /// plan was made at, by reviewers with a trusted association (or
    /// `--allow-user`), never the change's author.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approvals: Option<u32>,
    /// When `hub ci` applies: `comment` (a `hub apply` comment, the
    /// default), `merge` (when the change is merged) or `queue` (when the
    /// change's entry of a merge queue or merge train is checked).
    #[serde(skip_serializing_if = "ApplyOn::is_default")]
    pub on: ApplyOn,
}

impl CiApply {
    pub fn is_empty(&self) -> bool {
        self.requires.is_empty() && self.approvals.is_none() && self.on.is_default()
    }

    /// How many approvals an apply needs: `approvals` (at least 1) when
    /// `approved` is required or `approvals` is given, else none.
    pub fn approvals_needed(&self) -> u32 {
        let required = self.requires.contains(&ApplyRequirement::Approved);
        match (self.approvals, required) {
            (Some(n), _) => n.max(u32::from(required)),
            (None, true) => 1,
            (None, false) => 0,
        }
    }
}

/// One entry of `ci.apply.requires`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApplyRequirement {
    /// Approved by reviewers of the commit applied (`ci.apply.approvals`).
    Approved,
    /// The platform says the change can be merged.
    Mergeable,
    /// The change's head contains the head of its base branch.
    Undiverged,
    /// The plan applied was made for a trusted author.
    PlannedByTrusted,
}

impl ApplyRequirement {
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyRequirement::Approved => "approved",
            ApplyRequirement::Mergeable => "mergeable",
            ApplyRequirement::Undiverged => "undiverged",
            ApplyRequirement::PlannedByTrusted => "planned-by-trusted",
        }
    }
}

/// `ci.apply.on`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum ApplyOn {
    /// A `hub apply` comment applies.
    #[default]
    Comment,
    /// The merge of the change applies its plan.
    Merge,
    /// The change's entry of a merge queue (GitHub `merge_group`) or merge
    /// train (GitLab) applies the plan of the queue's commit.
    Queue,
}

impl ApplyOn {
    pub fn as_str(self) -> &'static str {
        match self {
            ApplyOn::Comment => "comment",
            ApplyOn::Merge => "merge",
            ApplyOn::Queue => "queue",
        }
    }

    pub fn is_default(&self) -> bool {
        *self == ApplyOn::Comment
    }
}
