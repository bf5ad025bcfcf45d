//! Issue "A pull request cannot take the runner": `hub ci`, the change
//! registry, policies and `hub pipeline` tried by someone who can open a
//! pull request (and so controls the stack files, component scripts,
//! names, comments and CI variables) while the job holds the runner's
//! secrets. One module per class of attack; every row runs the real
//! binary against a local state (and, where the class concerns remote
//! states, the S3 server of the test suite) and failed on `main` before
//! the fix.
//!
//! | module | class |
//! |---|---|
//! | [`secrets`] | values from the runner (environment, `-e`, CI tokens, secrets) quoted anywhere hub writes; comments that say what the commenter wrote |
//! | [`access`] | who may plan; GitLab relays that a merge request's own files could forge |
//! | [`reviewed`] | applying what was not reviewed; pipeline jobs skipping the checks of an apply |
//! | [`registry`] | the change registry's names, `--sha`/`--author`, concurrent applies, the apply lock and live holders |
//! | [`pipelines`] | jobs injected into generated pipelines; `-e` values in them |
//! | [`budget`] | policies that never end or eat the memory; OTLP headers and backend values |
//! | [`rego`] | Rego modules of the pull request: never ending, eating the memory, huge, reading runner files through `file:`, printing |
//! | [`queue`] | merge queues and merge trains: a forged `head_ref`, an entry of a change with no approved plan, train variables the relay did not sign, the pull request's names and markup in the comment |
//! | [`contracts`] | output and parameter names of an output contract the plan breaks, and of a component's `moved`, written to the comment: escaped |
//! | [`plan_steps`] | plan steps (`--plan-steps`) running an outsider's or a fork's code; planned values (the pull request's text) written to the comment: escaped, secrets masked |
//! | [`replan`] | values known only at apply (deferred components, `--replan`) that no policy saw; re-planned secrets written in refusals |

mod access;
mod approvals;
mod budget;
mod contracts;
mod pipelines;
mod plan_steps;
mod queue;
mod registry;
mod rego;
mod replan;
mod reviewed;
mod secrets;

/// A value only the runner holds: it must appear in nothing hub writes.
pub const RUNNER_SECRET: &str = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY";
