//! What a person or a script reads about a plan or a run. Views render the
//! values the planning crate (`hub_plan`) makes — the action plan, the
//! schedule, a run's [`Summary`](hub_plan::outcome::Summary) — and never
//! decide or run anything: this crate depends on planning alone, never on
//! the running crate (`hub-engine`).
//!
//! * [`progress`] — live status lines while components run
//!   ([`progress::TerminalProgress`]).
//! * [`summary`] — the end-of-run table ([`summary::render`]);
//!   [`report`] — the JSON run report (`--report FILE.json`); [`html`] —
//!   the HTML run report (`--report FILE.html`, `hub report`).
//! * [`graph`] — `hub graph`: the dependency graph as dot or Mermaid.
//! * [`preview`] — `hub plan`: what a deploy or undeploy would do, as
//!   text, JSON or markdown, and its run report.
//! * [`pipeline`] — `hub pipeline`: the plan as a CI pipeline (GitLab,
//!   GitHub Actions, Argo Workflows), one job per component.
//! * [`inert`] — text from stack files made inert in markdown and HTML
//!   (code spans, escaped prose), for every view that writes them.

pub mod graph;
pub mod html;
pub mod inert;
pub mod pipeline;
pub mod preview;
pub mod progress;
pub mod report;
pub mod summary;
