//! What a run did and is doing, as plain data and one trait: each
//! component's [`Outcome`], the run's [`Summary`] and the [`Progress`] a
//! view implements to hear components start and end; where output lines
//! go ([`lines`]) and where each run's part of a component's log begins
//! ([`log_marks`]). The running crate (`hub-engine`) produces these; the
//! views (`hub-view`) render them. Both depend on this crate, so neither
//! depends on the other.

pub mod lines;
pub mod log_marks;

use std::time::Duration;

/// What happened to one component in this run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Deployed,
    Undeployed,
    /// Failed, with the reason (its first line goes in the table, the
    /// rest below it).
    Failed(String),
    /// Skipped for an optional reason (condition, optional requirement).
    Skipped(String),
    /// Stopped by SIGINT/SIGTERM.
    Interrupted,
    /// Selected but never started: the run stopped before it (why, when
    /// the run knows), or a plan that would run it.
    NotRun(Option<String>),
    /// `--changed`: its fingerprint equals the one of its last deploy.
    Unchanged,
    /// Not run because a component it depends on failed (parallel runs).
    Cancelled(String),
}

impl Outcome {
    pub fn label(&self) -> &'static str {
        match self {
            Outcome::Deployed => "deployed",
            Outcome::Undeployed => "undeployed",
            Outcome::Failed(_) => "error",
            Outcome::Skipped(_) => "skipped",
            Outcome::Interrupted => "interrupted",
            Outcome::NotRun(_) => "not run",
            Outcome::Unchanged => "unchanged",
            Outcome::Cancelled(_) => "cancelled",
        }
    }

    pub fn detail(&self) -> Option<&str> {
        match self {
            Outcome::Failed(why) | Outcome::Skipped(why) | Outcome::Cancelled(why) => Some(why),
            Outcome::NotRun(why) => why.as_deref(),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub component: String,
    pub outcome: Outcome,
    pub duration: Duration,
    /// When it started and ended, as the run's clock tells (`HUB_NOW`
    /// pins it); empty for a component that never started.
    pub started: String,
    pub ended: String,
    /// The names of the outputs it produced.
    pub outputs: Vec<String>,
    /// `lifecycle.retry`: the attempt it ended on and the attempts it
    /// had, when it took more than one.
    pub attempt: Option<(u32, u32)>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub verb: crate::Verb,
    pub entries: Vec<Entry>,
    /// The stack status written to the state (empty without a state).
    pub stack_status: hub_state::Recorded<hub_state::StackStatus>,
    /// How many components the stack has, when the run did not take them
    /// all (a resume with `-o`, a selection): the stack's status is about
    /// them all. 0 when unknown or when every component is in `entries`.
    pub stack_components: usize,
    /// The stack outputs (`name`, value with secrets masked).
    pub outputs: Vec<(String, String)>,
    pub total: Duration,
    /// When the run started and ended, as its clock tells.
    pub started: String,
    pub ended: String,
    /// The id of the operation the run records in the state (it marks the
    /// run's part of each component's log); empty before it begins.
    pub operation: String,
    /// Parallel runs: the last output lines of each failed component,
    /// repeated before the table.
    pub failed_logs: Vec<FailedLog>,
    /// Where the state locations keep the version this run replaced
    /// (object storage: a backup object or the bucket's versioning).
    pub state_notes: Vec<String>,
}

impl Summary {
    pub fn push(&mut self, component: &str, outcome: Outcome, duration: Duration) {
        self.entries.push(Entry {
            component: component.to_string(),
            outcome,
            duration,
            started: String::new(),
            ended: String::new(),
            outputs: Vec::new(),
            attempt: None,
        });
    }

    /// The latest entry of `component`, when it has one.
    pub fn entry_mut(&mut self, component: &str) -> Option<&mut Entry> {
        self.entries
            .iter_mut()
            .rev()
            .find(|e| e.component == component)
    }
}

/// The end of a failed component's output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailedLog {
    pub component: String,
    /// Its last lines, masked, as `component | line`.
    pub lines: Vec<String>,
    /// Lines left out before them.
    pub omitted: usize,
}

/// Hears when components start and end.
pub trait Progress: Sync {
    fn started(&self, component: &str);
    fn ended(&self, component: &str, outcome: &Outcome, took: Duration);
}

/// `hub: app deployed (1.20s)`, with the reason of a failure or skip.
pub fn finish_line(name: &str, outcome: &Outcome, took: Duration) -> String {
    let mut line = format!(
        "hub: {name} {} ({:.2}s)",
        outcome.label(),
        took.as_secs_f64()
    );
    if let Some(detail) = outcome.detail() {
        line.push_str(": ");
        line.push_str(detail.lines().next().unwrap_or_default());
    }
    line
}
