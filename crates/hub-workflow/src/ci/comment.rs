//! What `hub ci` says: the pull-request comment (markdown) and the
//! one-line status, from the event, the operation and what it did. A plan
//! is shown by the markdown plan renderer of `hub plan --format markdown`
//! (secrets masked); an apply by each component's result and the last
//! lines of the logs of those that failed (masked when they were written).
//! Every text from the event or the stack is made inert markdown
//! ([`hub_view::inert`]): names as code spans, reasons as escaped prose,
//! logs and errors in blocks fenced longer than any backtick run in them.

use super::{Event, Operation};
use hub_plan::outcome::{Outcome as ComponentOutcome, Summary};
use hub_policy::PolicyResults;
use hub_view::inert::{code, fence, html, prose, rich, rich_line};
use hub_view::preview::{render_markdown, Action, Detail, Preview};
use std::fmt::Write;

/// What the operation did.
#[derive(Debug)]
pub enum Done {
    /// A plan was made, and the policies' results on it.
    Planned(Box<Preview>, PolicyResults),
    /// An apply ran (`error`: why it failed, when it did).
    Applied {
        summary: Box<Summary>,
        error: Option<String>,
        /// The last lines of each failed component's log.
        tails: Vec<LogTail>,
        /// What the comment says before the results (a merge queue's
        /// entry applied a plan made again there), when anything.
        note: Option<String>,
    },
    /// The operation stopped on an error before it could report more.
    Failed(String),
    /// Refused before anything ran by what the stack requires of an
    /// apply (`ci.apply.requires`), or a merge queue's entry whose plan
    /// is not the one approved: the refusal, with how to meet it.
    Refused(String),
    /// The operation was done; what it did, in one sentence.
    Said(String),
    /// Refused, or nothing to do (the operation says why).
    NotRun,
}

/// The last lines of a component's log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogTail {
    pub component: String,
    pub lines: Vec<String>,
    /// Lines before them that are left out.
    pub omitted: usize,
}

/// Everything the comment and the status line are made of.
#[derive(Debug)]
pub struct Report<'a> {
    pub event: &'a Event,
    pub operation: &'a Operation,
    pub done: Done,
    /// Which change holds the stack's apply lock, and why, when one does.
    pub lock: Option<String>,
}

impl Report<'_> {
    /// `pull request #42`.
    fn change(&self) -> String {
        let noun = self.event.platform.change_noun();
        match &self.event.change {
            Some(id) => format!("{noun} #{id}"),
            None => format!("no {noun}"),
        }
    }

    /// Whether the operation failed (for the exit code and the headline).
    pub fn failed(&self) -> bool {
        match &self.done {
            Done::Planned(plan, policies) => {
                plan.count(Action::Fail) > 0 || !plan.problems.is_empty() || policies.denied()
            }
            Done::Applied { error, .. } => error.is_some(),
            Done::Failed(_) => true,
            Done::Refused(_) | Done::Said(_) | Done::NotRun => false,
        }
    }

    /// 0 when the operation did what was asked (or there was nothing to
    /// do), 1 when it failed, 3 when it was refused.
    pub fn exit_code(&self) -> i32 {
        if matches!(self.done, Done::Refused(_)) {
            return 3;
        }
        match (self.operation, self.failed()) {
            (Operation::Refused { .. }, _) => 3,
            (_, true) => 1,
            (_, false) => 0,
        }
    }

    /// Whether there is a comment to post: not when hub had nothing to do.
    pub fn has_comment(&self) -> bool {
        !matches!(self.operation, Operation::Nothing { .. })
    }

    /// `hub ci: plan of pull request #42: 1 to create, …`.
    pub fn status_line(&self) -> String {
        let what = format!("{} of {}", self.operation.name(), self.change());
        match (self.operation, &self.done) {
            (Operation::Nothing { reason }, _) => format!("hub ci: nothing to do: {reason}"),
            (Operation::Refused { reason, .. }, _) => format!("hub ci: {what} refused: {reason}"),
            (_, Done::Planned(plan, _)) => {
                let state = match self.failed() {
                    true => "fails",
                    false => "succeeded",
                };
                format!("hub ci: {what} {state}: {}", counts(plan))
            }
            (_, Done::Applied { summary, error, .. }) => {
                let failed = failed_components(summary);
                match (error, failed.is_empty()) {
                    (None, _) => format!("hub ci: {what} succeeded: {}", results(summary)),
                    (Some(_), false) => {
                        format!("hub ci: {what} failed: `{}` failed", failed.join("`, `"))
                    }
                    (Some(error), true) => format!("hub ci: {what} failed: {}", first_line(error)),
                }
            }
            (_, Done::Failed(error)) => format!("hub ci: {what} failed: {}", first_line(error)),
            (_, Done::Refused(error)) => format!("hub ci: {what} refused: {}", first_line(error)),
            (_, Done::Said(said)) => format!("hub ci: {what}: {said}"),
            (_, Done::NotRun) => format!("hub ci: {what}"),
        }
    }

    /// The comment, in markdown.
    pub fn comment(&self) -> String {
        let headline = match (self.operation, self.failed()) {
            _ if matches!(self.done, Done::Refused(_)) => "refused",
            (Operation::Refused { .. }, _) => "refused",
            (_, true) => "failed",
            (Operation::Nothing { .. }, _) => "nothing to do",
            (_, false) => "succeeded",
        };
        let mut out = format!(
            "## hub {} of {}: {headline}\n\n",
            self.operation.name(),
            self.change()
        );
        let _ = writeln!(out, "{}\n", self.context_line());
        if let Some(lock) = &self.lock {
            let _ = writeln!(out, "Apply lock: {}\n", rich(lock));
        }
        match (self.operation, &self.done) {
            (Operation::Refused { reason, .. } | Operation::Nothing { reason }, _) => {
                let _ = writeln!(out, "{}", rich_line(reason));
            }
            (_, Done::Planned(plan, policies)) => {
                out.push_str(&render_markdown(plan, Detail::Changes));
                out.push_str(&hub_policy::render_markdown(policies));
            }
            (
                _,
                Done::Applied {
                    summary,
                    error,
                    tails,
                    note,
                },
            ) => {
                if let Some(note) = note {
                    let _ = writeln!(out, "{}\n", rich_line(note));
                }
                out.push_str(&applied(summary, error.as_deref(), tails));
            }
            (_, Done::Failed(error) | Done::Refused(error)) => {
                let fence = fence(error);
                let _ = writeln!(out, "{fence}text\n{}\n{fence}", error.trim_end());
            }
            (_, Done::Said(said)) => {
                let _ = writeln!(out, "{}", rich_line(said));
            }
            (_, Done::NotRun) => {}
        }
        out
    }

    /// `Event: `issue_comment.created` · commit `abc1234` · by `alice` (MEMBER)`.
    fn context_line(&self) -> String {
        let event = self.event;
        let mut line = format!("Event: {} ({})", code(&event.name), event.platform.as_str());
        if let Some(sha) = &event.sha {
            let short: String = sha.chars().take(12).collect();
            let _ = write!(line, " · commit {}", code(&short));
        }
        if let Some(author) = &event.author {
            let _ = write!(line, " · by {}", code(author));
            if let Some(association) = &event.association {
                let _ = write!(line, " ({})", prose(association));
            }
        }
        match self.operation {
            Operation::Autoplan { base: Some(base) } => {
                let short: String = base.chars().take(12).collect();
                let _ = write!(line, " · components changed since {}", code(&short));
            }
            Operation::Plan { components } if !components.is_empty() => {
                let _ = write!(line, " · {}", code(&format!("-c {}", components.join(","))));
            }
            _ => {}
        }
        line
    }
}

/// The table of an apply's components, the failure, and the tails of the
/// failed components' logs.
fn applied(summary: &Summary, error: Option<&str>, tails: &[LogTail]) -> String {
    let mut out = format!("**{}**\n\n", results(summary));
    if !summary.entries.is_empty() {
        out.push_str("| Component | Result | Why |\n|---|---|---|\n");
        for entry in &summary.entries {
            let label = entry.outcome.label();
            let result = match entry.outcome {
                ComponentOutcome::Failed(_) | ComponentOutcome::Interrupted => {
                    format!("**{label}**")
                }
                _ => label.to_string(),
            };
            let why = entry
                .outcome
                .detail()
                .and_then(|d| d.lines().next())
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "| {} | {result} | {} |",
                code(&entry.component),
                rich(why)
            );
        }
        out.push('\n');
    }
    if let Some(error) = error {
        let _ = writeln!(out, "The apply failed: {}\n", rich(first_line(error)));
    }
    for tail in tails {
        let more = match tail.omitted {
            0 => String::new(),
            _ => format!(" (last {} lines)", tail.lines.len()),
        };
        let text = tail.lines.join("\n");
        let fence = fence(&text);
        let _ = writeln!(
            out,
            "<details><summary>Log of <code>{}</code>{more}</summary>\n\n{fence}text\n{text}\n{fence}\n\n</details>\n",
            html(&tail.component)
        );
    }
    out
}

/// `2 deployed, 1 failed, 1 skipped`.
fn results(summary: &Summary) -> String {
    let mut counts: Vec<(&'static str, usize)> = Vec::new();
    for entry in &summary.entries {
        let label = entry.outcome.label();
        match counts.iter_mut().find(|(l, _)| *l == label) {
            Some((_, n)) => *n += 1,
            None => counts.push((label, 1)),
        }
    }
    if counts.is_empty() {
        return "no component ran".into();
    }
    let parts: Vec<String> = counts.iter().map(|(l, n)| format!("{n} {l}")).collect();
    parts.join(", ")
}

fn failed_components(summary: &Summary) -> Vec<String> {
    summary
        .entries
        .iter()
        .filter(|e| matches!(e.outcome, ComponentOutcome::Failed(_)))
        .map(|e| e.component.clone())
        .collect()
}

/// `1 to create, 2 to update, …` of a plan.
fn counts(plan: &Preview) -> String {
    let mut parts = Vec::new();
    for (action, label) in [
        (Action::Create, "to create"),
        (Action::Update, "to update"),
        (Action::Replace, "to replace"),
        (Action::Rerun, "to rerun"),
        (Action::Delete, "to delete"),
        (Action::NoOp, "unchanged"),
        (Action::Skip, "skipped"),
        (Action::Fail, "would fail"),
    ] {
        parts.push(format!("{} {label}", plan.count(action)));
    }
    parts.join(", ")
}

/// The first line of an error, without its `error: `.
fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default();
    line.strip_prefix("error: ").unwrap_or(line)
}
