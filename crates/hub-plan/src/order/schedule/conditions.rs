//! Requirement tuning (`lifecycle.requires.optional`), parameter
//! conditions and unmet requirements.

use super::*;

/// One entry of `lifecycle.requires.optional`: a capability (no dot) or a
/// parameter condition (with a dot), for one component or for all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Term {
    pub name: String,
    pub component: Option<String>,
}

impl Term {
    pub fn is_condition(&self) -> bool {
        self.name.contains('.')
    }

    fn applies_to(&self, component: &str) -> bool {
        self.component.as_deref().is_none_or(|c| c == component)
    }
}

/// `lifecycle.requires.optional`, parsed (§8.5). Entries with a leading or
/// trailing colon are elaborate's merge directives and are ignored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tuning {
    pub terms: Vec<Term>,
}

impl Tuning {
    pub fn parse(entries: &[String]) -> Tuning {
        let terms = entries
            .iter()
            .filter_map(|entry| match entry.rsplit_once(':') {
                None => Some(Term {
                    name: entry.clone(),
                    component: None,
                }),
                Some((name, component)) if !name.is_empty() && !component.is_empty() => {
                    Some(Term {
                        name: name.to_string(),
                        component: Some(component.to_string()),
                    })
                }
                Some(_) => None,
            })
            .collect();
        Tuning { terms }
    }

    /// The requirement may be missing for this component.
    pub fn optional_requirement(&self, requirement: &str, component: &str) -> bool {
        self.terms
            .iter()
            .any(|t| !t.is_condition() && t.name == requirement && t.applies_to(component))
    }

    /// The requirement is tuned optional for some component or all.
    pub fn mentions(&self, requirement: &str) -> bool {
        self.terms.iter().any(|t| t.name == requirement)
    }

    /// The parameter conditions that apply to this component.
    pub fn conditions<'a>(&'a self, component: &'a str) -> impl Iterator<Item = &'a Term> + 'a {
        self.terms
            .iter()
            .filter(move |t| t.is_condition() && t.applies_to(component))
    }
}

/// §8.5: the values that switch a conditional component off.
pub(crate) fn is_falsy(text: &str) -> bool {
    matches!(text, "" | "false" | "0" | "no" | "(unknown)")
}

/// Why a conditional component is skipped, if it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConditionOutcome {
    Deploy,
    /// `p.q:X` with `p.q` absent or false.
    Skip {
        term: String,
    },
    /// `p.q` (all components) with a false value: skip, and suggest
    /// `p.q:component`.
    SkipWildcard {
        term: String,
    },
}

/// Evaluates the component's parameter conditions; `value` gives the
/// stringified value of a parameter (`None` when absent).
pub(crate) fn evaluate_conditions(
    tuning: &Tuning,
    component: &str,
    value: &dyn Fn(&str) -> Option<String>,
) -> ConditionOutcome {
    for term in tuning.conditions(component) {
        let found = value(&term.name);
        match (&term.component, found) {
            (Some(_), None) => {
                return ConditionOutcome::Skip {
                    term: term.name.clone(),
                }
            }
            (Some(_), Some(v)) if is_falsy(&v) => {
                return ConditionOutcome::Skip {
                    term: term.name.clone(),
                }
            }
            (None, Some(v)) if is_falsy(&v) => {
                return ConditionOutcome::SkipWildcard {
                    term: term.name.clone(),
                }
            }
            _ => {}
        }
    }
    ConditionOutcome::Deploy
}

/// The requirements of a component that the provides map lacks (§8.4).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Unmet {
    /// Not tuned optional: a failure (deploy) or a warning (undeploy).
    pub hard: Vec<String>,
    /// Tuned optional: the component is skipped.
    pub optional: Vec<String>,
}

pub fn unmet_requirements(
    requires: &[String],
    component: &str,
    provides: &IndexMap<String, Vec<String>>,
    tuning: &Tuning,
) -> Unmet {
    let mut unmet = Unmet::default();
    for requirement in requires {
        if provides.get(requirement).is_some_and(|p| !p.is_empty()) {
            continue;
        }
        if tuning.optional_requirement(requirement, component) {
            unmet.optional.push(requirement.clone());
        } else {
            unmet.hard.push(requirement.clone());
        }
    }
    unmet
}

/// §6.4 for one component: its parameter conditions, each looked up among
/// its expanded parameters (when expansion succeeded), else among the
/// locked stack parameters, `name|component` before `name` (`kind: link`
/// ones do not count).
pub fn component_conditions(
    tuning: &Tuning,
    component: &str,
    params: Option<&[hub_params::ExpandedParam]>,
    locked: &hub_params::Locked,
) -> ConditionOutcome {
    use hub_params::format::substitution_text;
    let value = |wanted: &str| -> Option<String> {
        if let Some(p) = params.and_then(|ps| ps.iter().find(|p| p.name == wanted)) {
            return Some(substitution_text(p.value.as_ref()));
        }
        [wanted.to_string(), format!("{wanted}|{component}")]
            .iter()
            .rev()
            .find_map(|key| locked.get(key))
            .filter(|p| p.kind() != "link")
            .map(|p| substitution_text(p.value.as_ref()))
    };
    evaluate_conditions(tuning, component, &value)
}

impl ConditionOutcome {
    /// Why the component is skipped (`` `p.q` is off ``); `None` when it
    /// deploys.
    pub fn skip_reason(&self) -> Option<String> {
        match self {
            ConditionOutcome::Deploy => None,
            ConditionOutcome::Skip { term } | ConditionOutcome::SkipWildcard { term } => {
                Some(format!("`{term}` is off"))
            }
        }
    }

    /// The warning a wildcard condition that switched a component off
    /// deserves.
    pub fn wildcard_warning(&self) -> Option<String> {
        match self {
            ConditionOutcome::SkipWildcard { term } => Some(format!(
                "`{term}` in `lifecycle.requires.optional` is off and applies to every component; write `{term}:<component>` to switch one component"
            )),
            _ => None,
        }
    }
}
