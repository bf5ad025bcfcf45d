//! `hub pipeline`: a plan written as a CI pipeline, one job per component
//! the plan runs, for GitLab CI ([`gitlab`]), GitHub Actions ([`github`])
//! or Argo Workflows ([`argo`]). The pipeline is a view of the plan
//! ([`model`]): its jobs, their `needs:` (the plan's waits), a first job
//! that makes and saves the plan, and a last job that always runs and
//! closes the run (`hub run finish`). Each file is built as data and
//! written by hub's YAML writer ([`tree`]): no text of the stack reaches
//! it unescaped.
//!
//! The output is deterministic: the same plan and settings write the same
//! bytes.

pub(crate) mod argo;
pub(crate) mod github;
pub(crate) mod gitlab;
pub(crate) mod model;
mod tree;

#[cfg(test)]
mod tests;

pub use model::{Grouping, JobOrigin, Pipeline, PipelineError, Settings, Target};

/// The pipeline written for its target.
pub fn render(pipeline: &Pipeline) -> Result<String, PipelineError> {
    match pipeline.settings.target {
        Target::Gitlab => gitlab::render(pipeline),
        Target::Github => github::render(pipeline),
        Target::Argo => argo::render(pipeline),
    }
}
