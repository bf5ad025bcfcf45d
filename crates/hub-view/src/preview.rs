//! `hub plan`: what a deploy or undeploy would do, with nothing run,
//! locked, rendered or written. The plan itself is made by the planner
//! ([`hub_plan::plan`]); this view renders it (text, JSON, markdown) and
//! makes its run report.
//!
//! Components the state holds and the stack no longer lists are listed
//! apart ([`Preview::removed`]); with `--prune` they count as `delete`.

mod markdown;
mod render;

pub use markdown::render_markdown;
pub use render::{render_json, render_text};

use super::report::{ReportContext, RunReport};
use hub_plan::outcome::{Outcome, Summary};
pub use hub_plan::plan::{
    waits_of, Action, AddedSeen, ComponentPlan as ComponentPreview, ParameterChange,
    ParameterPlan as ParameterPreview, Plan as Preview, RemovedPlan as RemovedPreview, Requirement,
    SelectionSeen, StateSeen, Wait,
};
use hub_plan::Verb;

/// How much of each component a text or markdown plan shows; the JSON
/// plan always has everything.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// The change: each component's action and why; for one that changes
    /// (see [`ComponentPreview::changes`]) what runs it, what it waits for
    /// and requires, and only the parameters that differ from the state,
    /// with how many do not. A component that does not change is one line.
    #[default]
    Changes,
    /// Everything, every parameter included (`--verbose`).
    All,
}

impl Detail {
    /// `--verbose` given or not.
    pub fn of(verbose: bool) -> Detail {
        match verbose {
            true => Detail::All,
            false => Detail::Changes,
        }
    }

    /// Whether `component` is shown past its action line.
    pub(crate) fn expands(self, component: &ComponentPreview) -> bool {
        self == Detail::All || component.changes()
    }

    /// The parameters of `component` shown.
    pub(crate) fn parameters(self, component: &ComponentPreview) -> Vec<&ParameterPreview> {
        match self {
            Detail::All => component.parameters.iter().collect(),
            Detail::Changes => component.differences().collect(),
        }
    }

    /// How many parameters of `component` are left out, as unchanged.
    pub(crate) fn hidden(self, component: &ComponentPreview) -> usize {
        match self {
            Detail::All => 0,
            Detail::Changes => component.unchanged_parameters(),
        }
    }
}

/// The run report (`--report FILE.json`) of a plan made at `now`: each
/// component with its action as status and its reasons.
pub fn report(preview: &Preview, now: &str) -> RunReport {
    let mut summary = Summary {
        verb: preview.verb,
        ..Summary::default()
    };
    for component in &preview.components {
        let reasons = component.reasons.join("; ");
        let outcome = match component.action {
            Action::Create | Action::Update | Action::Replace | Action::Rerun | Action::Delete => {
                Outcome::NotRun(None)
            }
            Action::NoOp => Outcome::Unchanged,
            Action::Skip => Outcome::Skipped(reasons),
            Action::Fail => Outcome::Failed(reasons),
        };
        summary.push(&component.name, outcome, std::time::Duration::ZERO);
    }
    // A pruned component is undeployed by the deploy planned.
    for removed in preview.pruned() {
        summary.push(
            &removed.name,
            Outcome::Undeployed,
            std::time::Duration::ZERO,
        );
    }
    let context = ReportContext {
        kind: "plan".into(),
        stack: preview.stack.clone(),
        state: preview.state.as_ref().map(|s| s.path.clone()),
        jobs: preview.jobs,
        started: now.to_string(),
        ended: now.to_string(),
        result: "success".into(),
        error: None,
    };
    let mut report = RunReport::from_summary(&summary, context);
    let reasons = preview
        .components
        .iter()
        .map(|c| &c.reasons)
        .chain(preview.pruned().map(|r| &r.reasons));
    for (entry, reasons) in report.components.iter_mut().zip(reasons) {
        if entry.reason.is_none() && !reasons.is_empty() {
            entry.reason = Some(reasons.join("; "));
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn component(name: &str, action: Action, reason: &str) -> ComponentPreview {
        ComponentPreview {
            name: name.into(),
            action,
            reasons: [reason]
                .iter()
                .filter(|r| !r.is_empty())
                .map(|r| r.to_string())
                .collect(),
            requires: Vec::new(),
            waits_for: Vec::new(),
            needs_nothing: false,
            implementation: None,
            parameters: Vec::new(),
            unchanged_left_out: 0,
            timeout: None,
            retry: None,
            conditions: Vec::new(),
            certain_failure: None,
            execution: None,
            environment: Vec::new(),
            through: Default::default(),
        }
    }

    /// A removed component as the planner shows it.
    fn removed(name: &str) -> RemovedPreview {
        RemovedPreview {
            name: name.into(),
            action: Action::Delete,
            reasons: vec![format!(
                "removed from the stack; implementation in `/stack/{name}`"
            )],
            dir: Some(format!("/stack/{name}")),
            depends: Vec::new(),
            status: "deployed".into(),
            parameters: Vec::new(),
        }
    }

    #[test]
    fn the_report_gives_each_component_its_action_and_reasons() {
        let preview = Preview {
            stack: "s".into(),
            verb: Verb::Deploy,
            state: None,
            jobs: 1,
            selection: None,
            waves: Vec::new(),
            problems: Vec::new(),
            prune: true,
            removed: vec![removed("old")],
            moved: Vec::new(),
            components: vec![
                component("a", Action::Update, "folder content changed"),
                component("b", Action::NoOp, ""),
                component("c", Action::Skip, "`x` is off"),
                component("d", Action::Fail, "requirement `dns` not provided"),
            ],
        };
        assert_eq!(
            (
                preview.count(Action::Update),
                preview.count(Action::Delete),
                preview.count(Action::Fail)
            ),
            (1, 1, 1)
        );
        let report = report(&preview, "2026-01-01T00:00:00Z");
        let seen: Vec<(&str, Option<&str>)> = report
            .components
            .iter()
            .map(|c| (c.status.as_str(), c.reason.as_deref()))
            .collect();
        assert_eq!(
            seen,
            [
                ("deploy", Some("folder content changed")),
                ("unchanged", None),
                ("skipped", Some("`x` is off")),
                ("error", Some("requirement `dns` not provided")),
                (
                    "undeploy",
                    Some("removed from the stack; implementation in `/stack/old`")
                ),
            ]
        );
        assert_eq!(
            (report.kind.as_str(), report.status.as_str()),
            ("plan", "planned")
        );
    }
}
