//! What the workflows return: a plan made ([`PlanMade`]) and a run done
//! ([`Applied`]), typed values the command line prints and `hub ci` puts
//! in its comment.

use crate::error::Error;
use hub_plan::plan::saved::{SavedPlan, SavedPlanError};

/// What a plan made: the plan, its saved form (when `--out` or a change
/// asks for one; never for an undeploy) and the policies' results.
#[derive(Debug)]
pub struct PlanMade {
    pub preview: hub_view::preview::Preview,
    pub saved: Option<Result<SavedPlan, SavedPlanError>>,
    pub policies: hub_policy::PolicyResults,
}

/// What a run did: its result, and the run's summary when it got as far
/// as one (also after a failure: `hub ci`'s comment is made of it).
#[derive(Debug)]
pub struct Applied {
    pub result: Result<(), Error>,
    pub summary: Option<Box<hub_plan::outcome::Summary>>,
}

impl Applied {
    /// A run refused, or stopped, before it made a summary.
    pub fn refused(error: Error) -> Self {
        Applied {
            result: Err(error),
            summary: None,
        }
    }
}

impl From<Result<(), Error>> for Applied {
    fn from(result: Result<(), Error>) -> Self {
        Applied {
            result,
            summary: None,
        }
    }
}
