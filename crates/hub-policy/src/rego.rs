//! Rego modules beside the CEL rules, evaluated in process by `regorus`.
//!
//! A module is parsed when it is read (a syntax error stops the command
//! before anything is planned, naming the module's line and column where it
//! is written); it is evaluated over the same document as the CEL rules,
//! as `input` (`input.plan`, `input.change`, `input.stack`, `input.now`).
//! The results are conftest's: in the module's package, every rule named
//! `deny`, `violation` or `warn` (or `deny_…`, `violation_…`, `warn_…`)
//! gives one result per message: a string, or an object's `msg`.
//!
//! A module comes from a pull request as much as a CEL rule does: its
//! evaluation stops at the processor-time budget of the CEL rules
//! (`HUB_CEL_MAX_TIME`, regorus's execution timer, which counts
//! wall-clock time), and what it says is a message like a CEL rule's,
//! escaped where it is written.

use super::watch::within_memory;
use hub_manifest::diag::Location;
use hub_params::{Budget, BUDGET_MEMORY_VARIABLE};
use serde_json::Value as Json;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

/// A Rego module, parsed.
#[derive(Debug, Clone)]
pub(crate) struct Module {
    /// The module's text.
    pub(crate) text: String,
    /// The name regorus knows it by: its file, or the rule of a stack.
    pub(crate) label: String,
    /// The name of the rule that gives it (shown with its results).
    pub(crate) name: String,
    /// Where its lines are written.
    pub(crate) origin: Origin,
    /// `data.main`: where its rules are read.
    pub(crate) package: String,
    /// Written in Rego v0 (rules without `if` and `contains`).
    pub(crate) v0: bool,
}

/// Where a module's line 1 is: the first line of its own file, or a line of
/// the stack file that holds it inline (a block scalar under `rego:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Origin {
    pub(crate) file: PathBuf,
    /// The file's line of the module's line 1, less one.
    pub(crate) lines_before: usize,
    /// The columns before the module's text on each line.
    pub(crate) indent: usize,
    /// `false` when the module's lines cannot be told apart in the file
    /// (a quoted or plain scalar): every line is the `rego:` key's.
    pub(crate) exact: bool,
}

impl Origin {
    /// A module that is a whole file.
    pub(crate) fn file(file: PathBuf) -> Self {
        Origin {
            file,
            lines_before: 0,
            indent: 0,
            exact: true,
        }
    }

    /// Where the module's `line` and `column` are written.
    pub(crate) fn at(&self, line: usize, column: usize) -> Location {
        match self.exact {
            true => Location::at(&self.file, self.lines_before + line, self.indent + column),
            false if self.lines_before == 0 => Location::file(&self.file),
            false => Location::at(&self.file, self.lines_before, self.indent),
        }
    }

    /// The module's first line.
    pub(crate) fn start(&self) -> Location {
        match self.exact {
            true => self.at(1, 1),
            false => self.at(0, 0),
        }
    }
}

/// Why a module does not parse: regorus's message and where it points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Syntax {
    /// `LINE:COLUMN: MESSAGE` in the module.
    pub(crate) message: String,
    /// The module's line and column, when regorus names them.
    pub(crate) at: Option<(usize, usize)>,
}

impl Module {
    /// Parses `text` as Rego v1 (OPA 1.0's); as v0 when v1 finds a rule
    /// written without `if` or `contains`, as v0 writes them.
    pub(crate) fn parse(text: &str, label: &str, origin: Origin) -> Result<Module, Syntax> {
        let attempt = |v0: bool| {
            let mut engine = regorus::Engine::new();
            engine.set_rego_v0(v0);
            let package = engine
                .add_policy(label.to_string(), text.to_string())
                .map_err(|e| e.to_string())?;
            // A trivial query makes regorus analyse the module (the order
            // of its statements, its unsafe variables) before any plan.
            engine
                .eval_query("true".into(), false)
                .map_err(|e| e.to_string())?;
            Ok::<String, String>(package)
        };
        let (package, v0) = match attempt(false) {
            Ok(package) => (package, false),
            Err(v1) if v1.contains("keyword is required") => match attempt(true) {
                Ok(package) => (package, true),
                Err(v0) => return Err(syntax(&v0)),
            },
            Err(v1) => return Err(syntax(&v1)),
        };
        Ok(Module {
            text: text.to_string(),
            label: label.to_string(),
            name: String::new(),
            origin,
            package,
            v0,
        })
    }

    /// Where the first rule named `rule` (`deny`, `warn_x`…) starts, else
    /// the module's first line.
    pub(crate) fn rule_location(&self, rule: &str) -> Location {
        let line = self.text.lines().position(|line| {
            line.strip_prefix(rule)
                .is_some_and(|rest| !rest.starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        });
        match line {
            Some(index) => self.origin.at(index + 1, 1),
            None => self.origin.start(),
        }
    }
}

/// regorus's parse error: `\n--> FILE:LINE:COL\n…\nerror: MESSAGE`, made
/// `LINE:COL: MESSAGE`.
pub(crate) fn syntax(text: &str) -> Syntax {
    let (_, at) = place(text);
    let last = text
        .lines()
        .rev()
        .find(|line| !line.trim().is_empty())
        .unwrap_or(text)
        .trim();
    let message = last.strip_prefix("error: ").unwrap_or(last);
    Syntax {
        message: match at {
            Some((line, column)) => format!("{line}:{column}: {message}"),
            None => message.to_string(),
        },
        at,
    }
}

/// The `FILE` and `(LINE, COLUMN)` of regorus's `--> FILE:LINE:COL`.
fn place(text: &str) -> (Option<&str>, Option<(usize, usize)>) {
    let Some(place) = text
        .lines()
        .find_map(|line| line.trim_start().strip_prefix("--> "))
    else {
        return (None, None);
    };
    let mut parts = place.rsplitn(3, ':');
    let column = parts.next().and_then(|c| c.trim().parse().ok());
    let line = parts.next().and_then(|l| l.trim().parse().ok());
    match (line, column, parts.next()) {
        (Some(line), Some(column), file) => (file, Some((line, column))),
        _ => (None, None),
    }
}

/// An error of evaluation, `FILE:LINE:COL: MESSAGE` (without regorus's
/// copy of the line), or on one line when it names no place.
pub(crate) fn evaluation_error(text: &str) -> String {
    let syntax = syntax(text);
    match (place(text), syntax.at) {
        ((Some(file), _), Some(_)) => format!("{file}:{}", syntax.message),
        _ => one_line(text),
    }
}

/// What a rule's messages do: `deny` and `violation` refuse, `warn` warns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Severity {
    Deny,
    Warn,
}

/// One message of a `deny`, `violation` or `warn` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    /// The rule that gave it: `deny`, `violation_x`…
    pub(crate) rule: String,
    pub(crate) severity: Severity,
    pub(crate) message: String,
}

/// Why a module could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Failure {
    /// Over the time budget.
    Budget(Duration),
    Eval(String),
}

/// What each module gave, in order: its findings, or `None` for a module
/// whose package an earlier module already gave (modules of one package
/// are one set of rules, as in OPA).
pub(crate) type Outcome = Option<Result<Vec<Finding>, Failure>>;

/// Evaluates `modules` (loaded together, so that one may import another's
/// package) over `input`, each query within the time of `budget`, all of
/// them within its memory ([`super::watch`]).
pub(crate) fn evaluate(modules: &[&Module], input: &Json, budget: Budget) -> Vec<Outcome> {
    let limit = budget.time;
    let mut engine = regorus::Engine::new();
    // `print()` is kept, not written to the standard error: a module's
    // text never reaches the terminal unescaped.
    engine.set_gather_prints(true);
    for module in modules {
        engine.set_rego_v0(module.v0);
        if let Err(error) = engine.add_policy(module.label.clone(), module.text.clone()) {
            let failure = Failure::Eval(syntax(&error.to_string()).message);
            return modules.iter().map(|_| Some(Err(failure.clone()))).collect();
        }
    }
    let text = serde_json::to_string(input).unwrap_or_else(|_| "{}".into());
    match regorus::Value::from_json_str(&text) {
        Ok(value) => engine.set_input(value),
        Err(error) => {
            let failure = Failure::Eval(format!("the input is not a Rego value: {error}"));
            return modules.iter().map(|_| Some(Err(failure.clone()))).collect();
        }
    }
    engine.set_execution_timer_config(regorus::utils::limits::ExecutionTimerConfig {
        limit,
        check_interval: NonZeroU32::MIN,
    });
    let mut seen: Vec<&str> = Vec::new();
    within_memory(budget.memory, BUDGET_MEMORY_VARIABLE, |current| {
        modules
            .iter()
            .map(|module| {
                if seen.contains(&module.package.as_str()) {
                    return None;
                }
                seen.push(&module.package);
                current.set(format!(
                    "the policy `{}` (Rego, {})",
                    module.name,
                    module.origin.start().file.display()
                ));
                Some(query(&mut engine, &module.package, limit))
            })
            .collect()
    })
}

/// The findings of the rules of `package`.
fn query(
    engine: &mut regorus::Engine,
    package: &str,
    limit: Duration,
) -> Result<Vec<Finding>, Failure> {
    let results = engine
        .eval_query(package.to_string(), false)
        .map_err(|error| {
            let timed_out = matches!(
                error.downcast_ref::<regorus::utils::limits::LimitError>(),
                Some(regorus::utils::limits::LimitError::TimeLimitExceeded { .. })
            ) || error.to_string().contains("exceeded time limit");
            match timed_out {
                true => Failure::Budget(limit),
                false => Failure::Eval(evaluation_error(&error.to_string())),
            }
        })?;
    let value = results
        .result
        .first()
        .and_then(|r| r.expressions.first())
        .map(|e| serde_json::to_value(&e.value).unwrap_or(Json::Null))
        .unwrap_or(Json::Null);
    Ok(findings(&value))
}

/// The messages of the conftest rules of a package's document.
pub(crate) fn findings(package: &Json) -> Vec<Finding> {
    let Some(rules) = package.as_object() else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for (rule, value) in rules {
        let Some(severity) = effect_of(rule) else {
            continue;
        };
        for message in messages(value) {
            found.push(Finding {
                rule: rule.clone(),
                severity,
                message,
            });
        }
    }
    found
}

/// `deny`, `violation`, `warn`, each alone or followed by `_` and a name
/// (conftest's `^(deny|violation|warn)(_[a-zA-Z0-9]+)*$`).
pub(crate) fn effect_of(rule: &str) -> Option<Severity> {
    let (effect, rest) = [
        ("deny", Severity::Deny),
        ("violation", Severity::Deny),
        ("warn", Severity::Warn),
    ]
    .into_iter()
    .find_map(|(prefix, effect)| rule.strip_prefix(prefix).map(|rest| (effect, rest)))?;
    let named = rest.is_empty()
        || rest.strip_prefix('_').is_some_and(|name| {
            name.split('_')
                .all(|part| !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric()))
        });
    named.then_some(effect)
}

/// A rule's messages: each string of a set, or each object's `msg`; a
/// rule that is `true` gives one message naming nothing.
fn messages(value: &Json) -> Vec<String> {
    let one = |item: &Json| match item {
        Json::String(text) => text.clone(),
        Json::Object(map) => match map.get("msg") {
            Some(Json::String(text)) => text.clone(),
            _ => item.to_string(),
        },
        other => other.to_string(),
    };
    match value {
        Json::Array(items) => items.iter().map(one).collect(),
        Json::Bool(true) => vec![String::new()],
        Json::Bool(false) | Json::Null => Vec::new(),
        other => vec![one(other)],
    }
}

/// Text on one line, as results are shown.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
