//! Running components: the deploy, undeploy and invoke lifecycle.
//!
//! Data flows one way: the elaborated stack and the locked parameters give
//! a [`plan::Plan`]; the engine walks it with a scheduler, running each
//! component's implementation in its folder with the environment of
//! [`env`](mod@env), and records every step in the state.
//!
//! * [`stack`] — the stack of a run: an elaborated file, or `hub.yaml` and
//!   parameters files elaborated in memory; component folders;
//!   [`stale`] — an elaborated file older than what it was made from.
//! * [`plan`] — structural checks, order, selection (`-c`, `-o`, `-l`, the
//!   undeploy guess), optional components, requirement tuning;
//!   [`schedule`] — who waits for whom, waves, the scheduler (`-j`).
//! * [`requirements`] — the stack's `requires` against the environment;
//!   [`clouds`] — `--clouds`: the cloud requirements that are checked.
//! * [`engine`] — a deploy or undeploy run and each component's pipeline;
//!   [`known`] — the outputs and capabilities each component sees;
//!   [`progress`] — live status lines, failed components' output again;
//!   [`setup`] — what is checked and read before the first component;
//!   [`records`] — what a run writes into the state.
//! * [`outputs`] — stack outputs; [`summary`] — the end-of-run table.
//! * [`ready`] — ready conditions (`lifecycle.readyConditions`).
//! * [`invoke`] — `hub invoke`; [`error`] — what stops a run.
//! * [`fingerprint`] — what a component's deploy was made of, for
//!   `--changed`.
//! * [`graph`] — `hub graph`: the dependency graph as dot or Mermaid.
//! * [`report`] — the JSON run report (`--report FILE.json`).
//! * [`preview`] — `hub plan`: what a deploy or undeploy would do, with
//!   nothing run or written.

pub mod capture;
pub mod clouds;
pub mod discover;
pub mod edges;
pub mod engine;
pub mod env;
pub mod error;
pub mod fingerprint;
pub mod graph;
pub mod interrupt;
pub mod invoke;
pub mod known;
pub mod otp;
pub mod outputs;
pub mod plan;
pub mod preview;
pub mod process;
pub mod progress;
pub mod ready;
pub mod records;
pub mod report;
pub mod requirements;
pub mod schedule;
pub mod setup;
pub mod stack;
pub mod stale;
pub mod summary;
pub mod templates;
