//! Policies on plans: rules in CEL that deny or warn, read from the stack's
//! `policies:` and from `--policy FILE`, evaluated over the plan a command
//! is about to show or execute.
//!
//! A rule is compiled when it is read ([`PolicySet::add_stack`],
//! [`PolicySet::add_file`]), so a rule that does not parse stops the
//! command before anything is planned; it is evaluated by [`evaluate`] over
//! a [`PolicyInput`]: `plan` (the JSON of `hub plan --format json`, secrets
//! masked), `change`, `stack` and `now`.

mod input;
mod load;
mod render;

pub use input::{plan_document, read_plan_document, PlanDocument, PolicyInput, StackFacts};
pub use render::{json_with_results, render_markdown, render_text};

use hub_manifest::diag::Location;
use hub_params::{CelFailure, Predicate, Predicates};
use serde::Serialize;
use std::path::PathBuf;

/// What a rule does when its expression is true.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Effect {
    Deny,
    Warn,
}

impl Effect {
    pub fn as_str(self) -> &'static str {
        match self {
            Effect::Deny => "deny",
            Effect::Warn => "warn",
        }
    }
}

/// One rule, compiled.
#[derive(Debug, Clone)]
pub struct Rule {
    pub name: String,
    pub effect: Effect,
    /// The CEL text of `deny` or `warn`.
    pub expression: String,
    pub message: String,
    /// Where the rule is written (the line of its `deny` or `warn`).
    pub location: Location,
    predicate: Predicate,
}

/// The rules a command evaluates: the stack's, then each `--policy` file's.
#[derive(Default)]
pub struct PolicySet {
    rules: Vec<Rule>,
    predicates: Predicates,
}

impl std::fmt::Debug for PolicySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicySet")
            .field("rules", &self.rules)
            .finish()
    }
}

impl PolicySet {
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// Compiles one rule written at `location`.
    fn push(
        &mut self,
        name: &str,
        deny: &str,
        warn: &str,
        message: &str,
        location: Location,
    ) -> Result<(), PolicyError> {
        let shape = |problem: &str| PolicyError::Shape {
            name: name.to_string(),
            problem: problem.to_string(),
            location: location.clone(),
        };
        if name.trim().is_empty() {
            return Err(shape("has no `name`"));
        }
        let (effect, expression) = match (deny.trim().is_empty(), warn.trim().is_empty()) {
            (false, true) => (Effect::Deny, deny),
            (true, false) => (Effect::Warn, warn),
            (false, false) => return Err(shape("has both `deny` and `warn`")),
            (true, true) => return Err(shape("has neither `deny` nor `warn`")),
        };
        let predicate =
            self.predicates
                .compile(expression)
                .map_err(|failure| PolicyError::Compile {
                    name: name.to_string(),
                    message: failure_text(&failure),
                    location: location.clone(),
                })?;
        self.rules.push(Rule {
            name: name.to_string(),
            effect,
            expression: expression.to_string(),
            message: message.to_string(),
            location,
            predicate,
        });
        Ok(())
    }
}

fn failure_text(failure: &CelFailure) -> String {
    match failure {
        CelFailure::Parse(message) | CelFailure::Eval(message) | CelFailure::Budget(message) => {
            message.clone()
        }
    }
}

/// What became of one rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// The expression is false.
    Pass,
    /// A `warn` rule's expression is true.
    Warn,
    /// A `deny` rule's expression is true.
    Deny,
    /// The expression failed or gave something else than true or false; it
    /// counts as a deny.
    Error,
}

impl Verdict {
    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Warn => "warn",
            Verdict::Deny => "deny",
            Verdict::Error => "error",
        }
    }
}

/// One rule's result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PolicyResult {
    pub name: String,
    pub effect: Effect,
    #[serde(rename = "result")]
    pub verdict: Verdict,
    /// The rule's message; for an error, why the rule could not be
    /// evaluated.
    pub message: String,
    /// `FILE:LINE` of the rule.
    #[serde(serialize_with = "location_text")]
    pub rule: Location,
}

fn location_text<S: serde::Serializer>(location: &Location, s: S) -> Result<S::Ok, S::Error> {
    let mut text = location.file.display().to_string();
    if let Some(line) = location.line {
        text.push_str(&format!(":{line}"));
    }
    s.serialize_str(&text)
}

/// Every rule's result, in the order the rules were read.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct PolicyResults {
    pub results: Vec<PolicyResult>,
}

impl PolicyResults {
    /// A `deny` rule fired, or a rule could not be evaluated.
    pub fn denied(&self) -> bool {
        self.results
            .iter()
            .any(|r| matches!(r.verdict, Verdict::Deny | Verdict::Error))
    }

    /// The rules that fired or failed, in order.
    pub fn fired(&self) -> impl Iterator<Item = &PolicyResult> {
        self.results.iter().filter(|r| r.verdict != Verdict::Pass)
    }

    pub fn count(&self, verdict: &Verdict) -> usize {
        self.results
            .iter()
            .filter(|r| &r.verdict == verdict)
            .count()
    }

    /// The first rule that could not be evaluated, as an error.
    pub fn failure(&self) -> Option<PolicyError> {
        self.results
            .iter()
            .find(|r| r.verdict == Verdict::Error)
            .map(|r| PolicyError::Evaluate {
                name: r.name.clone(),
                message: r.message.clone(),
                location: r.rule.clone(),
            })
    }

    /// The refusal of a command that would apply a denied plan; `None`
    /// when nothing denies.
    pub fn refusal(&self) -> Option<PolicyError> {
        if let Some(failure) = self.failure() {
            return Some(failure);
        }
        let denied: Vec<&PolicyResult> = self
            .results
            .iter()
            .filter(|r| r.verdict == Verdict::Deny)
            .collect();
        let first = denied.first()?;
        Some(PolicyError::Denied {
            rules: denied.iter().map(|r| r.name.clone()).collect(),
            message: first.message.clone(),
            location: first.rule.clone(),
        })
    }
}

/// Evaluates every rule of `set` over `input`.
pub fn evaluate(set: &PolicySet, input: &PolicyInput) -> PolicyResults {
    let documents = input.documents();
    let variables: Vec<(&str, &serde_json::Value)> = documents
        .iter()
        .map(|(name, value)| (*name, value))
        .collect();
    let results = set
        .rules
        .iter()
        .map(|rule| {
            let (verdict, message) = match set.predicates.evaluate(&rule.predicate, &variables) {
                Ok(false) => (Verdict::Pass, rule.message.clone()),
                Ok(true) => match rule.effect {
                    Effect::Deny => (Verdict::Deny, rule.message.clone()),
                    Effect::Warn => (Verdict::Warn, rule.message.clone()),
                },
                // Over its budget (see `hub_params::Budget`): an error,
                // which denies, never a pass.
                Err(CelFailure::Budget(spent)) => (
                    Verdict::Error,
                    format!("{spent}: loop over fewer or smaller lists"),
                ),
                Err(failure) => (Verdict::Error, failure_text(&failure)),
            };
            PolicyResult {
                name: rule.name.clone(),
                effect: rule.effect,
                verdict,
                message,
                rule: rule.location.clone(),
            }
        })
        .collect();
    PolicyResults { results }
}

/// Why policies could not be read or evaluated, or refuse a plan.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read the policy file `{}`: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("the policy file is not a list of rules: {message}")]
    Yaml { message: String, location: Location },
    #[error("the policy `{name}` {problem}")]
    Shape {
        name: String,
        problem: String,
        location: Location,
    },
    #[error("the policy `{name}` does not compile: {message}")]
    Compile {
        name: String,
        message: String,
        location: Location,
    },
    #[error("the policy `{name}` cannot be evaluated: {message}")]
    Evaluate {
        name: String,
        message: String,
        location: Location,
    },
    #[error("denied by policy {}: {message}", quoted(rules))]
    Denied {
        rules: Vec<String>,
        message: String,
        location: Location,
    },
    #[error("`{}` is not a plan: {reason}", path.display())]
    NotAPlan { path: PathBuf, reason: String },
}

fn quoted(names: &[String]) -> String {
    let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
    names.join(", ")
}

impl PolicyError {
    pub fn location(&self) -> Option<Location> {
        match self {
            PolicyError::Yaml { location, .. }
            | PolicyError::Shape { location, .. }
            | PolicyError::Compile { location, .. }
            | PolicyError::Evaluate { location, .. }
            | PolicyError::Denied { location, .. } => Some(location.clone()),
            PolicyError::Read { path, .. } | PolicyError::NotAPlan { path, .. } => {
                Some(Location::file(path))
            }
        }
    }

    pub fn hint(&self) -> Option<String> {
        Some(match self {
            PolicyError::Read { .. } => "check the path given to `--policy`".into(),
            PolicyError::Yaml { .. } | PolicyError::Shape { .. } => {
                "a rule is `name`, one of `deny` or `warn` (a CEL expression that is true when the rule fires) and `message`; a policy file holds a list of rules, or a mapping with the list under `policies`".into()
            }
            PolicyError::Compile { .. } => {
                "write the rule in CEL over `plan`, `change`, `stack` and `now`, e.g. `plan.components.exists(c, c.action == 'delete')`; quote the YAML value when it holds `: ` or starts with a quote".into()
            }
            PolicyError::Evaluate { .. } => {
                "a rule must give true or false for every plan: test a field with `has(x.f)` before reading it, and compare values of the same type".into()
            }
            PolicyError::Denied { .. } => {
                "`hub plan` shows every policy's result; change the stack or the selection so that no `deny` rule holds".into()
            }
            PolicyError::NotAPlan { .. } => {
                "give a plan saved by `hub plan --out FILE`, or the output of `hub plan --format json`".into()
            }
        })
    }
}

#[cfg(test)]
mod tests;
