//! What stops reading the stack a run works on, with where to look and how
//! to fix it. Planning's error wraps it (`PlanningError::Source`).

use crate::order::schedule::ScheduleError;
use hub_elaborate::ElaborateError;
use hub_manifest::diag::Location;
use hub_manifest::ManifestError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error(transparent)]
    Elaborate(Box<ElaborateError>),
    #[error(transparent)]
    Plan(#[from] ScheduleError),
    /// A structural error located at its entry.
    #[error("{}", .0 .0)]
    PlanEntry(Box<(ScheduleError, Location)>),
    #[error("component `{component}` has no source directory (`source.dir` or `source.git`)")]
    NoSource { component: String },
    /// A component's `moved` entry that renames no output it can.
    #[error("{}", .0 .0)]
    OutputMoved(Box<(super::renamed::RenameProblem, Option<Location>)>),
    #[error("`{}` is an elaborated file: it takes no parameters files (got {})", path.display(), extra.join(", "))]
    ExtraArguments { path: PathBuf, extra: Vec<String> },
}

impl From<ElaborateError> for SourceError {
    fn from(error: ElaborateError) -> Self {
        SourceError::Elaborate(Box::new(error))
    }
}

impl SourceError {
    pub fn location(&self) -> Option<Location> {
        match self {
            SourceError::Manifest(e) => e.location(),
            SourceError::Elaborate(e) => e.location(),
            SourceError::PlanEntry(entry) => Some(entry.1.clone()),
            SourceError::OutputMoved(moved) => moved.1.clone(),
            SourceError::ExtraArguments { path, .. } => Some(Location::file(path)),
            SourceError::Plan(_) | SourceError::NoSource { .. } => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            SourceError::Manifest(e) => e.hint(),
            SourceError::Elaborate(e) => e.hint(),
            SourceError::Plan(e) => e.hint(),
            SourceError::PlanEntry(entry) => entry.0.hint(),
            SourceError::OutputMoved(moved) => Some(moved.0.hint()),
            SourceError::NoSource { .. } => {
                Some("give the component a `source: {dir: ...}` in the stack".into())
            }
            SourceError::ExtraArguments { .. } => Some(
                "give the stack manifest (hub.yaml) with its parameters files, or the elaborated file alone".into(),
            ),
        }
    }
}
