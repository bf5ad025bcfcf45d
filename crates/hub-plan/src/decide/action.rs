//! What a deploy does with a component, in Terraform's words: the one
//! decision `hub plan` shows and `hub deploy` follows, so that the two
//! cannot disagree.
//!
//! The planner ([`crate::plan::make`]) checks conditions, requirements and
//! failed dependencies first (a `skip` or a `fail`); for a component that
//! gets past them, [`deploy_action`] says whether it runs and why. Only the
//! planner calls it: the engine executes the plan.

use super::fingerprint::Change;
use hub_state::{ComponentState, ComponentStatus, Recorded};

use serde::Serialize;

/// What happens to one component. The names are those written into plans
/// (text, JSON, markdown and saved plan files): see [`Action::as_str`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Action {
    /// Never deployed (no entry, or an entry left `undeployed`).
    #[serde(rename = "create")]
    Create,
    /// Deployed, and it runs again.
    #[serde(rename = "update")]
    Update,
    /// `--changed` only: nothing changed, it does not run.
    #[serde(rename = "no-op")]
    NoOp,
    /// Undeployed, then deployed, in one turn: `lifecycle.replaceTriggeredBy`
    /// (a component it names deploys first, or a parameter it names changed).
    #[serde(rename = "replace")]
    Replace,
    /// Deployed again, nothing undeployed first: its last run failed or was
    /// interrupted, or `--replace` names it. It runs even with `--changed`.
    #[serde(rename = "rerun")]
    Rerun,
    /// Undeployed: by an undeploy, or by `deploy --prune` for a component
    /// no longer in the stack.
    #[serde(rename = "delete")]
    Delete,
    /// An optional component that does not run (a condition is off, an
    /// optional requirement is not provided).
    #[serde(rename = "skip")]
    Skip,
    /// It would fail before running (a requirement nobody provides, a
    /// dependency that would fail, parameters that cannot be expanded).
    #[serde(rename = "fail")]
    Fail,
}

impl Action {
    pub const ALL: [Action; 8] = [
        Action::Create,
        Action::Update,
        Action::Replace,
        Action::Rerun,
        Action::Delete,
        Action::NoOp,
        Action::Skip,
        Action::Fail,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::NoOp => "no-op",
            Action::Replace => "replace",
            Action::Rerun => "rerun",
            Action::Delete => "delete",
            Action::Skip => "skip",
            Action::Fail => "fail",
        }
    }

    /// The component's implementation runs (deploy or undeploy).
    pub fn runs(self) -> bool {
        matches!(
            self,
            Action::Create | Action::Update | Action::Replace | Action::Rerun | Action::Delete
        )
    }

    /// After this action the component's outputs and capabilities are
    /// there for the components after it (it deployed, or kept what it had).
    pub fn keeps_outputs(self) -> bool {
        matches!(
            self,
            Action::Create | Action::Update | Action::Replace | Action::Rerun | Action::NoOp
        )
    }
}

/// A decision and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decided {
    pub action: Action,
    pub reasons: Vec<String>,
}

impl Decided {
    fn new(action: Action, reason: impl Into<String>) -> Decided {
        Decided {
            action,
            reasons: vec![reason.into()],
        }
    }
}

/// Why a deployed component runs again when nothing changed.
pub const RUNS_AGAIN: &str = "runs again: no --changed";
/// Why a component named by `--replace` runs.
pub(crate) const REPLACED: &str = "`--replace`: runs even if unchanged";

/// What the decision for one component is asked, by the run's flags.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ActionOptions {
    /// `--changed`'s rules decide it: unchanged, it does not run.
    pub changed: bool,
    /// `--replace` names it: it runs even if unchanged.
    pub replace: bool,
    /// Say what changed even when it runs anyway (the plan does; the
    /// engine does not read a folder it runs anyway).
    pub describe: bool,
}

/// What a deploy does with a component that passed its conditions and
/// requirements, given its state entry. `changes` compares its fingerprint
/// with the entry's; it is called only when the answer matters: with
/// `--changed` (`asked.changed`), or when the caller wants to `describe`
/// what changed. An `Err` from it (a folder that cannot be read) makes the
/// component run, with the error as its reason.
pub(crate) fn deploy_action(
    entry: Option<&ComponentState>,
    asked: ActionOptions,
    changes: impl FnOnce() -> Result<Vec<Change>, String>,
) -> Decided {
    let ActionOptions {
        changed,
        replace,
        describe,
    } = asked;
    let Some(entry) = entry else {
        return Decided::new(Action::Create, Change::NeverDeployed.to_string());
    };
    match &entry.status {
        Recorded::Empty => return Decided::new(Action::Create, Change::NeverDeployed.to_string()),
        Recorded::Known(ComponentStatus::Undeployed) => {
            return Decided::new(Action::Create, format!("last status `{}`", entry.status))
        }
        Recorded::Known(ComponentStatus::Deployed) => {}
        status => {
            let status = status.clone();
            return Decided::new(Action::Rerun, Change::NotDeployed { status }.to_string());
        }
    }
    if replace {
        return Decided::new(Action::Rerun, REPLACED);
    }
    if !changed && !describe {
        return Decided::new(Action::Update, RUNS_AGAIN);
    }
    match changes() {
        Err(error) => Decided::new(Action::Update, error),
        Ok(found) if !found.is_empty() => Decided {
            action: Action::Update,
            reasons: found.iter().map(ToString::to_string).collect(),
        },
        Ok(_) if changed => Decided {
            action: Action::NoOp,
            reasons: Vec::new(),
        },
        Ok(_) => Decided::new(Action::Update, RUNS_AGAIN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(status: &str) -> ComponentState {
        ComponentState {
            status: status.into(),
            ..ComponentState::default()
        }
    }

    fn none() -> Result<Vec<Change>, String> {
        Ok(Vec::new())
    }

    #[test]
    fn a_component_never_deployed_or_undeployed_is_created() {
        assert_eq!(
            deploy_action(
                None,
                ActionOptions {
                    changed: true,
                    describe: true,
                    ..ActionOptions::default()
                },
                none
            )
            .action,
            Action::Create
        );
        let undeployed = entry("undeployed");
        let decided = deploy_action(
            Some(&undeployed),
            ActionOptions {
                changed: true,
                describe: true,
                ..ActionOptions::default()
            },
            none,
        );
        assert_eq!(decided.action, Action::Create);
        assert_eq!(decided.reasons, ["last status `undeployed`"]);
    }

    #[test]
    fn a_failed_or_interrupted_last_run_is_rerun_even_with_changed() {
        for (status, said) in [
            ("error", "its last run failed (`error`)"),
            ("deploying", "its last run was interrupted (`deploying`)"),
            (
                "undeploying",
                "its last run was interrupted (`undeploying`)",
            ),
        ] {
            let decided = deploy_action(
                Some(&entry(status)),
                ActionOptions {
                    changed: true,
                    describe: true,
                    ..ActionOptions::default()
                },
                none,
            );
            assert_eq!(decided.action, Action::Rerun, "{status}");
            assert_eq!(decided.reasons, [said]);
        }
    }

    #[test]
    fn the_replace_flag_reruns_over_an_unchanged_fingerprint() {
        let decided = deploy_action(
            Some(&entry("deployed")),
            ActionOptions {
                changed: true,
                replace: true,
                describe: true,
            },
            none,
        );
        assert_eq!(
            (decided.action, decided.reasons),
            (Action::Rerun, vec![REPLACED.to_string()])
        );
    }

    #[test]
    fn nothing_changed_is_a_no_op_only_with_changed() {
        let deployed = entry("deployed");
        assert_eq!(
            deploy_action(
                Some(&deployed),
                ActionOptions {
                    changed: true,
                    describe: true,
                    ..ActionOptions::default()
                },
                none
            )
            .action,
            Action::NoOp
        );
        let again = deploy_action(
            Some(&deployed),
            ActionOptions {
                describe: true,
                ..ActionOptions::default()
            },
            none,
        );
        assert_eq!(
            (again.action, again.reasons),
            (Action::Update, vec![RUNS_AGAIN.to_string()])
        );
    }

    #[test]
    fn the_fingerprint_is_compared_only_when_it_matters() {
        let deployed = entry("deployed");
        let decided = deploy_action(Some(&deployed), ActionOptions::default(), || {
            panic!("compared without --changed")
        });
        assert_eq!(decided.action, Action::Update);
        let changed = deploy_action(
            Some(&deployed),
            ActionOptions {
                changed: true,
                ..ActionOptions::default()
            },
            || Ok(vec![Change::Folder]),
        );
        assert_eq!(
            (changed.action, changed.reasons),
            (Action::Update, vec!["folder content changed".to_string()])
        );
        let unreadable = deploy_action(
            Some(&deployed),
            ActionOptions {
                changed: true,
                ..ActionOptions::default()
            },
            || Err("cannot read".to_string()),
        );
        assert_eq!(unreadable.action, Action::Update);
    }

    #[test]
    fn action_names_are_terraform_s() {
        let names: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
        assert_eq!(
            names,
            ["create", "update", "replace", "rerun", "delete", "no-op", "skip", "fail"]
        );
        let json = serde_json::to_string(&Action::NoOp).unwrap();
        assert_eq!(json, "\"no-op\"");
    }
}
