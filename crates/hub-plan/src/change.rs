//! The change (pull or merge request) an operation belongs to.

use serde::Serialize;

/// The change a plan or an apply is made for: its id, the commit it is
/// at, who made it and the CI event that started it; the approvals in
/// effect and whether the platform says it can be merged.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChangeContext {
    pub id: String,
    pub sha: Option<String>,
    pub author: Option<String>,
    pub event: Option<String>,
    /// Each reviewer's approval still in effect (of any commit: compare
    /// `commit` with `sha`).
    pub approvals: Vec<Approval>,
    /// `None` when nothing said.
    pub mergeable: Option<bool>,
}

/// An approval of a change, as recorded from the CI event.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Approval {
    pub login: String,
    /// `OWNER`, `MEMBER`, …; empty when the event did not say.
    pub association: String,
    /// The commit approved.
    pub commit: String,
}
