//! Policies on plans: rules in CEL that deny or warn, and Rego modules
//! (conftest's `deny`, `violation` and `warn` rules), read from the stack's
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
mod rego;
mod render;
mod watch;

pub use input::{plan_document, read_plan_document, PlanDocument, PolicyInput, StackFacts};
pub use render::{json_with_results, render_markdown, render_text};

use hub_manifest::diag::Location;
use hub_params::{Budget, CelFailure, Predicate, Predicates};
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
    /// The CEL text of `deny` or `warn`; a Rego module's text.
    pub expression: String,
    /// What a CEL rule shows when it fires; empty for a Rego module, whose
    /// rules give their messages.
    pub message: String,
    /// Where the rule is written (the line of its `deny` or `warn`, of its
    /// `rego` or `file`; a `--policy` Rego file).
    pub location: Location,
    kind: Kind,
}

impl Rule {
    /// The rule is a Rego module.
    pub fn is_rego(&self) -> bool {
        matches!(self.kind, Kind::Rego(_))
    }
}

/// What evaluates a rule.
#[derive(Debug, Clone)]
enum Kind {
    Cel(Predicate),
    Rego(Box<rego::Module>),
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
            kind: Kind::Cel(predicate),
        });
        Ok(())
    }

    /// Adds a parsed Rego module named `name`, written at `location`.
    fn push_rego(&mut self, name: &str, module: rego::Module, location: Location) {
        self.rules.push(Rule {
            name: name.to_string(),
            effect: Effect::Deny,
            expression: module.text.clone(),
            message: String::new(),
            location,
            kind: Kind::Rego(Box::new(module)),
        });
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
    /// What the rule is written in (its failures get a hint in its terms).
    #[serde(skip)]
    pub language: Language,
}

/// The language a rule is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Cel,
    Rego,
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
                language: r.language,
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

/// Evaluates every rule of `set` over `input`: a CEL rule gives one
/// result; a Rego module one per message of its `deny`, `violation` and
/// `warn` rules, or one `pass` when they give none.
pub fn evaluate(set: &PolicySet, input: &PolicyInput) -> PolicyResults {
    let documents = input.documents();
    let variables: Vec<(&str, &serde_json::Value)> = documents
        .iter()
        .map(|(name, value)| (*name, value))
        .collect();
    let mut outcomes = rego_outcomes(set, &variables).into_iter();
    let mut results = Vec::new();
    for rule in &set.rules {
        match &rule.kind {
            Kind::Cel(predicate) => results.push(cel_result(set, rule, predicate, &variables)),
            Kind::Rego(module) => {
                let outcome = outcomes.next().flatten();
                results.extend(rego_results(rule, module, outcome));
            }
        }
    }
    PolicyResults { results }
}

/// Every Rego module's outcome, in order, evaluated over the document of
/// the CEL rules (`input.plan`, `input.change`, `input.stack`,
/// `input.now`) within the time of the budget.
fn rego_outcomes(set: &PolicySet, variables: &[(&str, &serde_json::Value)]) -> Vec<rego::Outcome> {
    let modules: Vec<&rego::Module> = set
        .rules
        .iter()
        .filter_map(|rule| match &rule.kind {
            Kind::Rego(module) => Some(&**module),
            Kind::Cel(_) => None,
        })
        .collect();
    if modules.is_empty() {
        return Vec::new();
    }
    let budget = match Budget::current() {
        Ok(budget) => budget,
        Err(problem) => {
            let failure = rego::Failure::Eval(problem);
            return modules.iter().map(|_| Some(Err(failure.clone()))).collect();
        }
    };
    let input: serde_json::Map<String, serde_json::Value> = variables
        .iter()
        .map(|(name, value)| (name.to_string(), (*value).clone()))
        .collect();
    rego::evaluate(&modules, &serde_json::Value::Object(input), budget)
}

/// A Rego module's results: one per message, one `pass` when there is
/// none, one `error` when it could not be evaluated, nothing when an
/// earlier module of its package gave them.
fn rego_results(
    rule: &Rule,
    module: &rego::Module,
    outcome: Option<Result<Vec<rego::Finding>, rego::Failure>>,
) -> Vec<PolicyResult> {
    let result = |effect, verdict, message: String, location: Location| PolicyResult {
        name: rule.name.clone(),
        effect,
        verdict,
        message,
        rule: location,
        language: Language::Rego,
    };
    let findings = match outcome {
        None => return Vec::new(),
        Some(Ok(findings)) => findings,
        Some(Err(rego::Failure::Budget(limit))) => {
            let message = format!(
                "it ran over its budget of {} ms ({}): loop over fewer or smaller lists",
                limit.as_millis(),
                hub_params::BUDGET_TIME_VARIABLE
            );
            return vec![result(
                Effect::Deny,
                Verdict::Error,
                message,
                rule.location.clone(),
            )];
        }
        Some(Err(rego::Failure::Eval(message))) => {
            return vec![result(
                Effect::Deny,
                Verdict::Error,
                message,
                rule.location.clone(),
            )];
        }
    };
    if findings.is_empty() {
        return vec![result(
            Effect::Deny,
            Verdict::Pass,
            String::new(),
            rule.location.clone(),
        )];
    }
    findings
        .into_iter()
        .map(|finding| {
            let (effect, verdict) = match finding.severity {
                rego::Severity::Deny => (Effect::Deny, Verdict::Deny),
                rego::Severity::Warn => (Effect::Warn, Verdict::Warn),
            };
            let message = match finding.message.is_empty() {
                true => format!("`{}` holds", finding.rule),
                false => finding.message,
            };
            let location = module.rule_location(&finding.rule);
            result(effect, verdict, message, location)
        })
        .collect()
}

/// A CEL rule's result.
fn cel_result(
    set: &PolicySet,
    rule: &Rule,
    predicate: &Predicate,
    variables: &[(&str, &serde_json::Value)],
) -> PolicyResult {
    let (verdict, message) = match set.predicates.evaluate(predicate, variables) {
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
        language: Language::Cel,
    }
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
        language: Language,
    },
    #[error("denied by policy {}: {message}", quoted(rules))]
    Denied {
        rules: Vec<String>,
        message: String,
        location: Location,
    },
    #[error("`{}` is not a plan: {reason}", path.display())]
    NotAPlan { path: PathBuf, reason: String },
    #[error("the policy `{name}` is not valid Rego: {message}")]
    Rego {
        name: String,
        message: String,
        location: Location,
    },
    /// `problem`: the path as written, then why (`` `x.rego`: … ``).
    #[error("the policy `{name}` cannot use the Rego file {problem}")]
    RegoFile {
        name: String,
        problem: String,
        location: Location,
    },
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
            | PolicyError::Denied { location, .. }
            | PolicyError::Rego { location, .. }
            | PolicyError::RegoFile { location, .. } => Some(location.clone()),
            PolicyError::Read { path, .. } | PolicyError::NotAPlan { path, .. } => {
                Some(Location::file(path))
            }
        }
    }

    pub fn hint(&self) -> Option<String> {
        Some(match self {
            PolicyError::Read { .. } => "check the path given to `--policy`".into(),
            PolicyError::Yaml { .. } | PolicyError::Shape { .. } => {
                "a rule is `name`, one of `deny` or `warn` (a CEL expression that is true when the rule fires) and `message`, or `name` and one of `rego` (a Rego module) or `file` (a `.rego` file); a policy file holds a list of rules, or a mapping with the list under `policies`".into()
            }
            PolicyError::Compile { .. } => {
                "write the rule in CEL over `plan`, `change`, `stack` and `now`, e.g. `plan.components.exists(c, c.action == 'delete')`; quote the YAML value when it holds `: ` or starts with a quote".into()
            }
            PolicyError::Evaluate {
                language: Language::Rego,
                ..
            } => {
                "a Rego module must finish, within its budget and without an error, on every plan: read fields that may be missing with `object.get(x, KEY, DEFAULT)`, loop over fewer items, and try it on a saved plan with `hub policy test PLAN --policy FILE.rego`".into()
            }
            PolicyError::Evaluate { .. } => {
                "a rule must give true or false for every plan: test a field with `has(x.f)` before reading it, and compare values of the same type".into()
            }
            PolicyError::Denied { .. } => {
                "`hub plan` shows every policy's result; change the stack or the selection so that no `deny` rule holds".into()
            }
            PolicyError::Rego { .. } => {
                "write the module in Rego v1 (`deny contains msg if { ... }`) or v0 (`deny[msg] { ... }`), with a `package` line; `opa check FILE.rego` shows the same error".into()
            }
            PolicyError::RegoFile { .. } => {
                "write the path relative to the folder of the stack file that declares the rule, to a file inside that folder (no absolute path, no `..` out of it, no symbolic link out of it)".into()
            }
            PolicyError::NotAPlan { .. } => {
                "give a plan saved by `hub plan --out FILE`, or the output of `hub plan --format json`".into()
            }
        })
    }
}

#[cfg(test)]
mod tests;
