//! Issue 42, items 3 and 4: a deploy of a plan made with `--plan-steps`
//! plans again, just before it starts, a component the plan deferred (its
//! inputs were unknown) and one whose read outputs changed since the
//! plan, with the outputs its upstreams really applied. What differs from
//! the reviewed plan refuses the component ([`Refusal`]) unless the deploy
//! accepts re-planned parts (`--replan`), which the stack's policies then
//! check again ([`ReplanPolicies`]) on the plan with that component as
//! re-planned ([`with_replanned`]).

use super::{saved_digest, text_digest, ParameterChange, ParameterPlan, Plan};
use hub_manifest::redact::Redactor;
use hub_params::format::substitution_text;
use hub_params::ExpandedParam;

/// Why a component of a saved plan is not run: what would run is not what
/// was reviewed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// An output it reads is not the value its upstream's plan step planned.
    #[error(
        "refused: what it reads changed since the plan: {}; plan again (`hub plan --plan-steps --out`) to review the new values, or deploy with `--replan` to accept them (the policies are checked again)",
        listed(.0)
    )]
    ReadsChanged(Vec<ChangedInput>),
    /// Deferred in the plan; planned again with the real outputs, a
    /// parameter the plan showed differs.
    #[error(
        "refused: planned again with the outputs its upstreams applied, it differs from the plan: {}; deploy with `--replan` to accept it (the policies are checked again)",
        listed(.0)
    )]
    Replanned(Vec<ChangedInput>),
    /// Planned again, its plan step failed: it would `fail`, not run as
    /// planned.
    #[error(
        "refused: planned again with the outputs its upstreams applied, its plan step failed: {0}"
    )]
    PlanStepFailed(String),
    /// A rule denies the plan with the component as planned again (its
    /// values known now, or accepted by `--replan`).
    #[error("refused: planned again with the outputs its upstreams applied, {0}")]
    PolicyDenied(String),
    /// The state moved since the plan and the component's own entry is
    /// not the one the plan read: another run applied, undeployed or
    /// otherwise wrote it. The stale plan would overwrite an apply nobody
    /// reviewed it against; its dependents keep what that run applied.
    #[error(
        "refused: changed by another run since the plan (the state moved from serial {from} to {to} and its entry is not the one planned against); plan again (`hub plan --out`) to review it against what that run applied"
    )]
    ChangedSincePlan { from: u64, to: u64 },
}

/// One input of a component that differs from the plan, as shown (secrets
/// `(masked)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangedInput {
    pub input: Input,
    /// As the plan showed it.
    pub planned: String,
    /// As it is now; `(none)` when there is none.
    pub now: String,
}

/// What a differing input is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// An upstream's output the component reads.
    Output { component: String, output: String },
    /// One of the component's own parameters.
    Parameter(String),
}

impl std::fmt::Display for ChangedInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.input {
            Input::Output { component, output } => write!(f, "`{component}`'s output `{output}`")?,
            Input::Parameter(name) => write!(f, "parameter `{name}`")?,
        }
        write!(f, " (planned `{}`, now `{}`)", self.planned, self.now)
    }
}

fn listed(inputs: &[ChangedInput]) -> String {
    let each: Vec<String> = inputs.iter().map(ToString::to_string).collect();
    each.join(", ")
}

/// The stack's policies (and the policy files of the apply), evaluated on
/// a plan with a component re-planned: `Err` with the denials' text.
pub trait ReplanPolicies {
    fn check(&self, plan: &Plan) -> Result<(), String>;
}

/// The parameters the plan showed as known whose value is another now
/// (a secret, or a value from the environment, compared by digest; a
/// parameter gone or new counts too). Unknown ones were expected to
/// change.
pub fn known_parameters_changed(
    planned: &[ParameterPlan],
    now: &[ExpandedParam],
    reveal: bool,
) -> Vec<ChangedInput> {
    let redactor = Redactor::new(reveal);
    let mut changed = Vec::new();
    for shown in planned.iter().filter(|p| p.known) {
        let Some(planned_value) = &shown.value else {
            continue;
        };
        let current = now.iter().find(|p| p.name == shown.name);
        let text = current.map(|p| substitution_text(p.value.as_ref()));
        let same = match (&text, &shown.digest) {
            (Some(text), Some(digest)) => &text_digest(text) == digest,
            (Some(text), None) => text == planned_value,
            (None, _) => false,
        };
        if same {
            continue;
        }
        let secret = current.is_some_and(|p| p.secret) || shown.digest.is_some();
        changed.push(ChangedInput {
            input: Input::Parameter(shown.name.clone()),
            planned: planned_value.clone(),
            now: match &text {
                Some(text) => redactor.text(&shown.name, "", secret, text).into_owned(),
                None => "(none)".to_string(),
            },
        });
    }
    changed
}

/// A saved plan's parameters of a component (`saved`) that differ from
/// its parameters expanded now: what a deploy of the plan checks a
/// component against when the state moved since the plan. A value the
/// plan did not know (`(known after C deploys)`) is left to the deferred
/// component's own check, unless `written` (the components another run
/// wrote since the plan, which this run does not apply) holds `C`: the
/// value then comes from a run nobody reviewed. A secret is compared by
/// its digest and shown masked.
pub fn saved_parameters_changed(
    saved: &[super::saved::PlannedParameter],
    now: &[ExpandedParam],
    written: &std::collections::HashSet<String>,
    reveal: bool,
) -> Vec<ChangedInput> {
    let redactor = Redactor::new(reveal);
    let mut changed = Vec::new();
    for planned in saved
        .iter()
        .filter(|p| !unknown_until_applied(&p.value, written))
    {
        let current = now.iter().find(|p| p.name == planned.name);
        let text = current.map(|p| substitution_text(p.value.as_ref()));
        let same = match &text {
            Some(text) if planned.secret => text_digest(text) == planned.value,
            Some(text) => *text == planned.value,
            None => false,
        };
        if same {
            continue;
        }
        let secret = planned.secret || current.is_some_and(|p| p.secret);
        changed.push(ChangedInput {
            input: Input::Parameter(planned.name.clone()),
            planned: match planned.secret {
                true => hub_manifest::redact::MASK.to_string(),
                false => planned.value.clone(),
            },
            now: match &text {
                Some(text) => redactor.text(&planned.name, "", secret, text).into_owned(),
                None => "(none)".to_string(),
            },
        });
    }
    changed
}

/// The value holds `(known after C deploys)` for some `C`, and none of
/// them is in `written`.
fn unknown_until_applied(value: &str, written: &std::collections::HashSet<String>) -> bool {
    let waits: Vec<&str> = value
        .split("(known after ")
        .skip(1)
        .filter_map(|rest| rest.split_once(" deploys)").map(|(name, _)| name))
        .collect();
    !waits.is_empty() && !waits.iter().any(|name| written.contains(*name))
}

/// `plan` with the component `name` as re-planned: its parameters with
/// the values they have now (known, masked as the plan masks), and no
/// longer deferred. What the policies see of a re-planned component.
pub fn with_replanned(plan: &Plan, name: &str, now: &[ExpandedParam], reveal: bool) -> Plan {
    let mut plan = plan.clone();
    let redactor = Redactor::new(reveal);
    if let Some(component) = plan.components.iter_mut().find(|c| c.name == name) {
        component.parameters = now
            .iter()
            .map(|param| {
                let text = substitution_text(param.value.as_ref());
                let before = component.parameters.iter().find(|p| p.name == param.name);
                let previous = before.and_then(|p| p.previous.clone());
                ParameterPlan {
                    name: param.name.clone(),
                    value: Some(
                        redactor
                            .text(&param.name, "", param.secret, &text)
                            .into_owned(),
                    ),
                    change: match (&previous, before) {
                        (None, _) => ParameterChange::Added,
                        (Some(_), Some(b)) if b.change == ParameterChange::Unchanged => {
                            ParameterChange::Unchanged
                        }
                        _ => ParameterChange::Changed,
                    },
                    previous,
                    known: true,
                    digest: saved_digest(&param.name, param.secret, &text),
                }
            })
            .collect();
        component.through.deferred = None;
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now(name: &str, value: &str, secret: bool) -> ExpandedParam {
        ExpandedParam {
            name: name.into(),
            value: Some(yaml_serde::Value::String(value.into())),
            env: String::new(),
            origin: hub_params::Origin::Value,
            expression: None,
            declared: None,
            secret,
        }
    }

    fn shown(name: &str, value: &str, known: bool, digest: Option<String>) -> ParameterPlan {
        ParameterPlan {
            name: name.into(),
            value: Some(value.into()),
            previous: None,
            change: ParameterChange::Added,
            known,
            digest,
        }
    }

    #[test]
    fn only_known_parameters_that_differ_are_named_and_secrets_stay_masked() {
        let planned = [
            shown("same", "v1", true, None),
            shown("moved", "v1", true, None),
            shown("unknown", "(known after a deploys)", false, None),
            shown("secret", "(masked)", true, Some(text_digest("s1"))),
            shown("gone", "v1", true, None),
        ];
        let params = [
            now("same", "v1", false),
            now("moved", "v2", false),
            now("unknown", "anything", false),
            now("secret", "s2", true),
        ];
        let changed = known_parameters_changed(&planned, &params, false);
        let text: Vec<String> = changed.iter().map(ToString::to_string).collect();
        assert_eq!(
            text,
            [
                "parameter `moved` (planned `v1`, now `v2`)",
                "parameter `secret` (planned `(masked)`, now `(masked)`)",
                "parameter `gone` (planned `v1`, now `(none)`)",
            ]
        );
        // The same secret value is no change.
        let same = [now("secret", "s1", true)];
        assert!(known_parameters_changed(&planned[3..4], &same, false).is_empty());
    }

    #[test]
    fn a_refusal_names_each_input_planned_and_now() {
        let refusal = Refusal::Replanned(vec![
            ChangedInput {
                input: Input::Parameter("c.mode".into()),
                planned: "a".into(),
                now: "b".into(),
            },
            ChangedInput {
                input: Input::Output {
                    component: "a".into(),
                    output: "a.val".into(),
                },
                planned: "v2".into(),
                now: "v3".into(),
            },
        ]);
        let text = refusal.to_string();
        assert!(
            text.contains("parameter `c.mode` (planned `a`, now `b`), `a`'s output `a.val` (planned `v2`, now `v3`)"),
            "{text}"
        );
        assert!(text.contains("`--replan`"), "{text}");
    }

    #[test]
    fn saved_parameters_are_compared_and_an_unknown_one_only_when_its_upstream_was_written() {
        let saved = |name: &str, value: &str, secret: bool| super::super::saved::PlannedParameter {
            name: name.into(),
            value: value.into(),
            secret,
        };
        let planned = [
            saved("same", "v1", false),
            saved("moved", "v2", false),
            saved("pass", &text_digest("old"), true),
            saved("later", "(known after e deploys)", false),
            saved("stale", "(known after a deploys)", false),
            saved("inside", "id (known after a deploys)", false),
            saved("waits", "id (known after e deploys)", false),
        ];
        let current = [
            now("same", "v1", false),
            now("moved", "v3", false),
            now("pass", "new", true),
            now("later", "x", false),
            now("stale", "v3", false),
            now("inside", "id 42", false),
            now("waits", "id 43", false),
        ];
        let written = ["a".to_string()].into_iter().collect();
        let shown: Vec<String> = saved_parameters_changed(&planned, &current, &written, false)
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            shown,
            [
                "parameter `moved` (planned `v2`, now `v3`)",
                "parameter `pass` (planned `(masked)`, now `(masked)`)",
                "parameter `stale` (planned `(known after a deploys)`, now `v3`)",
                "parameter `inside` (planned `id (known after a deploys)`, now `id 42`)",
            ]
        );
    }
}
