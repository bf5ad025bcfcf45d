//! What a person or a script reads about a run.
//!
//! * [`progress`] — live status lines, failed components' output again.
//! * [`summary`] — the end-of-run table; [`report`] — the JSON run report
//!   (`--report FILE.json`); [`html`] — the HTML run report
//!   (`--report FILE.html`, `hub report`).
//! * [`graph`] — `hub graph`: the dependency graph as dot or Mermaid.
//! * [`preview`] — `hub plan`: what a deploy or undeploy would do, with
//!   nothing run or written; [`saved`] — that plan saved (`plan --out`)
//!   and checked before `deploy --plan` applies it.
//! * [`pipeline`] — `hub pipeline`: the plan as a CI pipeline (GitLab,
//!   GitHub Actions, Argo Workflows), one job per component.

pub mod graph;
pub mod html;
pub mod inert;
pub mod pipeline;
pub mod preview;
pub mod progress;
pub mod report;
pub mod saved;
pub mod summary;
