//! What makes a component run under `--changed`, beyond its own folder
//! and parameters, and what makes it run again from scratch: the stack's
//! `lifecycle.triggerAlways`, `lifecycle.ignoreChanges` and
//! `lifecycle.replaceTriggeredBy` (issue 26, items 4, 6 and 7).
//!
//! * A dependent runs because an output it *reads* changed, as Spacelift
//!   runs a stack only when a referenced output was created or changed.
//!   Outputs reach a component only through its parameters, so a changed
//!   output it reads is a changed parameter; the outputs of a dependency
//!   that it does not read do not make it run. A dependency added to its
//!   `depends` does (a new reference); one removed does not.
//! * `triggerAlways` lists the components that run whenever a component
//!   they depend on runs in the same deploy.
//! * `ignoreChanges` names, per component, the parameters (or `all`)
//!   whose changes alone do not make it run; the plan lists them.
//! * `replaceTriggeredBy` names, per component, the components whose
//!   deploy in the same run, or the parameters whose change, plans it as
//!   `replace`.
//!
//! Pure decisions over the stack's `lifecycle`: the planner
//! (`plan/make.rs`) and the engine (`run/engine/changed.rs`) both ask
//! here, so that the plan and the deploy cannot disagree.

use crate::decide::fingerprint::Change;
use hub_manifest::Lifecycle;
use indexmap::IndexMap;

/// The stack's trigger rules.
#[derive(Debug, Clone, Copy)]
pub struct Triggers<'a> {
    lifecycle: &'a Lifecycle,
}

/// What `--changed` makes of a component's changes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    /// It runs: one of its changes counts.
    pub runs: bool,
    /// Its changes as shown, without the ignored parameters.
    pub shown: Vec<Change>,
    /// The parameters whose changes `lifecycle.ignoreChanges` ignores.
    pub ignored: Vec<String>,
}

impl<'a> Triggers<'a> {
    pub fn new(lifecycle: &'a Lifecycle) -> Self {
        Triggers { lifecycle }
    }

    /// `name` is in `lifecycle.triggerAlways`.
    pub fn always(&self, name: &str) -> bool {
        self.lifecycle.trigger_always.iter().any(|n| n == name)
    }

    /// A change of `parameter` alone does not make `name` run.
    pub fn ignores(&self, name: &str, parameter: &str) -> bool {
        self.lifecycle
            .ignore_changes
            .get(name)
            .is_some_and(|ignored| ignored.covers(parameter))
    }

    /// What plans `name` as `replace`: components and parameters.
    pub fn replace_triggers(&self, name: &str) -> &'a [String] {
        self.lifecycle
            .replace_triggered_by
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// Which of `changes` (against the state entry's fingerprint, whose
    /// upstream digests are `recorded`) make `name` run.
    pub fn judge(
        &self,
        name: &str,
        changes: Vec<Change>,
        recorded: Option<&IndexMap<String, String>>,
    ) -> Judged {
        let mut judged = Judged::default();
        for change in changes {
            match change {
                Change::Parameters { names } if !names.is_empty() => {
                    let (ignored, counted): (Vec<String>, Vec<String>) =
                        names.into_iter().partition(|p| self.ignores(name, p));
                    judged.ignored.extend(ignored);
                    if !counted.is_empty() {
                        judged.runs = true;
                        judged.shown.push(Change::Parameters { names: counted });
                    }
                }
                Change::Upstream { components } => {
                    // A dependency new to its fingerprint is a new
                    // reference; other upstream changes reach it through
                    // its parameters, or do not reach it.
                    let added = |c: &String| recorded.is_some_and(|r| !r.contains_key(c));
                    if self.always(name) || components.iter().any(added) {
                        judged.runs = true;
                    }
                    judged.shown.push(Change::Upstream { components });
                }
                other => {
                    judged.runs = true;
                    judged.shown.push(other);
                }
            }
        }
        judged
    }
}

/// The reason the plan gives for ignored changes.
pub fn ignored_reason(ignored: &[String]) -> String {
    format!(
        "changes ignored by `lifecycle.ignoreChanges`: {}",
        ignored.join(", ")
    )
}

/// `if db's host or net's subnet changes`: the condition of a dependent
/// whose dependencies run first, over the outputs it reads
/// (`producer's output`).
pub fn condition(compared: &[String]) -> String {
    let listed = match compared {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    };
    format!("if {listed} changes")
}

/// What a deploy reports for a dependent that did not run.
pub fn skipped_line(name: &str, compared: &[String]) -> String {
    format!(
        "hub: {name} skipped: no output it reads changed (compared: {})",
        compared.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_manifest::{AllParameters, IgnoreChanges};

    fn lifecycle() -> Lifecycle {
        let mut l = Lifecycle {
            trigger_always: vec!["audit".into()],
            ..Lifecycle::default()
        };
        l.ignore_changes.insert(
            "app".into(),
            IgnoreChanges::Parameters(vec!["app.tag".into()]),
        );
        l.ignore_changes
            .insert("web".into(), IgnoreChanges::All(AllParameters::All));
        l
    }

    fn recorded() -> IndexMap<String, String> {
        IndexMap::from([("db".to_string(), "sha256:1".to_string())])
    }

    #[test]
    fn outputs_a_component_does_not_read_do_not_make_it_run() {
        let l = lifecycle();
        let t = Triggers::new(&l);
        let upstream = vec![Change::Upstream {
            components: vec!["db".into()],
        }];
        assert!(!t.judge("app", upstream.clone(), Some(&recorded())).runs);
        assert!(t.judge("audit", upstream, Some(&recorded())).runs);
        let added = vec![Change::Upstream {
            components: vec!["cache".into()],
        }];
        assert!(t.judge("app", added, Some(&recorded())).runs);
    }

    #[test]
    fn ignored_parameters_alone_do_not_count_and_are_listed() {
        let l = lifecycle();
        let t = Triggers::new(&l);
        let tag = vec![Change::Parameters {
            names: vec!["app.tag".into()],
        }];
        let judged = t.judge("app", tag, None);
        assert_eq!(
            (judged.runs, judged.ignored),
            (false, vec!["app.tag".to_string()])
        );
        let both = vec![Change::Parameters {
            names: vec!["app.tag".into(), "app.size".into()],
        }];
        let judged = t.judge("app", both, None);
        assert!(judged.runs);
        assert_eq!(judged.shown[0].to_string(), "parameters changed: app.size");
        let any = vec![Change::Parameters {
            names: vec!["web.x".into()],
        }];
        assert!(!t.judge("web", any, None).runs);
        assert!(t.judge("web", vec![Change::Folder], None).runs);
    }

    #[test]
    fn the_condition_lists_the_outputs_compared() {
        assert_eq!(condition(&["db's host".into()]), "if db's host changes");
        assert_eq!(
            condition(&["db's host".into(), "db's port".into(), "net's id".into()]),
            "if db's host, db's port or net's id changes"
        );
    }
}
