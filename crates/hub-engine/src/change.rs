//! The change (pull request, merge request) a plan or an apply is made for.

use serde::Serialize;

/// A change: its id, and what the CI system says of it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ChangeContext {
    pub id: String,
    pub sha: Option<String>,
    pub author: Option<String>,
    pub event: Option<String>,
}
