//! The change (pull request, merge request) a plan or an apply belongs to.

/// Which change a plan or an apply is made for, and what started it.
#[derive(serde::Serialize, Clone, Debug, Default)]
pub struct ChangeContext {
    pub id: String,
    pub sha: Option<String>,
    pub author: Option<String>,
    pub event: Option<String>,
}
