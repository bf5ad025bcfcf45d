//! The change (pull or merge request) an operation belongs to.

use serde::Serialize;

/// The change a plan or an apply is made for: its id, the commit it is
/// at, who made it and the CI event that started it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChangeContext {
    pub id: String,
    pub sha: Option<String>,
    pub author: Option<String>,
    pub event: Option<String>,
}
