//! Errors of the parameter engine: every problem found in one pass is kept,
//! each with the place its parameter was declared.

use super::cel::CelFailure;
use hub_manifest::diag::Location;
use hub_state::StateError;
use std::fmt;
use std::path::PathBuf;

/// A `kind: user` parameter that got no value.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingValue {
    pub qualified_name: String,
    pub brief: String,
    pub from_env: String,
    pub declared: Option<Location>,
    /// The run elaborated the stack itself: a parameters file given after
    /// the stack takes effect at once, without `hub elaborate`.
    pub from_stack: bool,
}

impl MissingValue {
    /// How the user can supply the value, for the way they ran: a stack,
    /// or an elaborated file (made again after the fix).
    pub fn how(&self) -> String {
        let value = if self.from_stack {
            "give it a `value` in a parameters file given after the stack"
        } else {
            "give it a `value` in a parameters file and elaborate again"
        };
        if self.from_env.is_empty() {
            format!("add `fromEnv: VAR` to its declaration, or {value}")
        } else {
            format!(
                "pass `-e {var}=...`, set the environment variable {var}, or {value}",
                var = self.from_env
            )
        }
    }
}

/// One thing wrong with a parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// `kind: user` parameters without a value and no terminal to ask on.
    Missing(Vec<MissingValue>),
    /// `${name}` references that no lookup found.
    Unknown {
        param: String,
        names: Vec<String>,
        declared: Option<Location>,
    },
    /// Parameters that reference each other in a circle, in reference
    /// order (the first follows the last).
    Cycle {
        path: Vec<(String, Option<Location>)>,
    },
    Cel {
        param: String,
        source: String,
        failure: CelFailure,
        declared: Option<Location>,
    },
    FromFile {
        param: String,
        path: String,
        reason: String,
        declared: Option<Location>,
    },
    Prompt {
        param: String,
        reason: String,
    },
    /// A component parameter found neither among stack parameters nor
    /// outputs, without default or `empty: allow`.
    Underivable {
        param: String,
        declared: Option<Location>,
    },
    /// A declared output whose substituted value still holds an expression.
    Unexpanded {
        param: String,
        declared: Option<Location>,
    },
    /// A declared output with neither `fromTfVar` nor `value`, whose name
    /// is not a parameter of its component (§7.6). `printed`: the
    /// component printed that key in its `Outputs:` block.
    Unforwarded {
        output: String,
        name: String,
        printed: bool,
        declared: Option<Location>,
    },
}

impl Problem {
    /// Points the problem at its declaration, for those that have one.
    pub fn set_declared(&mut self, location: Option<Location>) {
        if let Problem::Cel {
            source, declared, ..
        } = self
        {
            *declared = expression_location(location, source);
            return;
        }
        match self {
            Problem::Unknown { declared, .. }
            | Problem::Cel { declared, .. }
            | Problem::FromFile { declared, .. }
            | Problem::Underivable { declared, .. }
            | Problem::Unexpanded { declared, .. }
            | Problem::Unforwarded { declared, .. } => *declared = location,
            Problem::Missing(_) | Problem::Cycle { .. } | Problem::Prompt { .. } => {}
        }
    }
}

/// The line of the expression `#{source}` itself, searched from the line
/// of its declaration on (a parameter's `value:` may be many lines below
/// its `- name:`); the declaration when the file or the text is not found.
pub fn expression_location(declared: Option<Location>, source: &str) -> Option<Location> {
    let location = declared?;
    let (Some(from), Some(first)) = (location.line, source.lines().next()) else {
        return Some(location);
    };
    let wanted = format!("#{{{}", first.trim_end());
    let Ok(text) = std::fs::read_to_string(&location.file) else {
        return Some(location);
    };
    let found = text
        .lines()
        .enumerate()
        .skip(from.saturating_sub(1))
        .find(|(_, line)| line.contains(&wanted));
    match found {
        Some((index, line)) => Some(Location {
            line: Some(index + 1),
            column: line.find(&wanted).map(|c| c + 1),
            ..location
        }),
        None => Some(location),
    }
}

fn at(location: &Option<Location>) -> String {
    match location {
        Some(location) => format!(" (declared at {location})"),
        None => String::new(),
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::Missing(missing) => {
                write!(f, "{} `kind: user` parameter(s) have no value:", missing.len())?;
                for m in missing {
                    let brief = if m.brief.is_empty() { String::new() } else { format!(" ({})", m.brief) };
                    write!(f, "\n      `{}`{brief}{}: {}", m.qualified_name, at(&m.declared), m.how())?;
                }
                Ok(())
            }
            Problem::Unknown { param, names, declared } => {
                let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                write!(f, "`{param}` references unknown {}{}", names.join(", "), at(declared))
            }
            Problem::Cycle { path } => {
                let mut names: Vec<&str> = path.iter().map(|(n, _)| n.as_str()).collect();
                if let Some(first) = names.first().copied() {
                    names.push(first);
                }
                write!(f, "reference cycle: {}", names.join(" → "))?;
                for (name, declared) in path {
                    if let Some(location) = declared {
                        write!(f, "\n      `{name}` declared at {location}")?;
                    }
                }
                Ok(())
            }
            Problem::Cel { param, source, failure, declared } => {
                write!(f, "`{param}`: #{{{source}}}: {failure}{}", at(declared))
            }
            Problem::FromFile { param, path, reason, declared } => {
                write!(f, "`{param}`: cannot read `fromFile` `{path}`: {reason}{}", at(declared))
            }
            Problem::Prompt { param, reason } => write!(f, "`{param}`: cannot read an answer: {reason}"),
            Problem::Underivable { param, declared } => write!(
                f,
                "the value of `{param}` can be found neither among stack parameters nor among outputs{}",
                at(declared)
            ),
            Problem::Unexpanded { param, declared } => write!(
                f,
                "`{param}`: a substituted value still holds an expression{}",
                at(declared)
            ),
            Problem::Unforwarded { output, name, declared, .. } => write!(
                f,
                "`{output}` has neither `fromTfVar` nor `value`, so it takes the component's parameter `{name}`, which the component does not declare{}",
                at(declared)
            ),
        }
    }
}

fn bullets(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(|p| format!("  - {p}"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[derive(Debug, thiserror::Error)]
pub enum ParamsError {
    #[error("stack parameters cannot be locked:\n{}", bullets(problems))]
    Lock {
        problems: Vec<Problem>,
        /// The run elaborated a stack itself (no elaborated file): the
        /// hints then say to fix the stack, not to elaborate again.
        from_stack: bool,
    },
    #[error(
        "parameters of component `{component}` cannot be expanded:\n{}",
        bullets(problems)
    )]
    Component {
        component: String,
        problems: Vec<Problem>,
    },
    #[error(
        "outputs of component `{component}` cannot be computed:\n{}",
        bullets(problems)
    )]
    Outputs {
        component: String,
        problems: Vec<Problem>,
    },
    #[error("component `{name}` is not in the stack (components: {})", available.join(", "))]
    UnknownComponent {
        name: String,
        available: Vec<String>,
    },
    #[error("{0}")]
    Cel(#[from] CelFailure),
    #[error("binding `{item}` has no `=`")]
    Binding { item: String },
    #[error("cannot read the state `{}`: {}", path.display(), state_reason(error))]
    State {
        path: PathBuf,
        error: Box<StateError>,
    },
}

fn is_not_found(error: &StateError) -> bool {
    matches!(error, StateError::Read { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
}

/// What is wrong with the state, without repeating its path.
fn state_reason(error: &StateError) -> String {
    match error {
        StateError::WrongKind { kind, .. } => {
            format!("expected `kind: state`, found kind `{kind}`")
        }
        StateError::WrongVersion { version, .. } => {
            format!("expected `version: 1`, found version {version}")
        }
        StateError::Read { source, .. } => source.to_string(),
        StateError::Damaged { reason, .. } => format!("the file is damaged: {reason}"),
        StateError::Empty { .. } => "the file is empty".to_string(),
        StateError::Sealed { error, .. } => format!("cannot decrypt it: {error}"),
        other => other.to_string(),
    }
}

impl ParamsError {
    /// Where to look, when one place is to blame.
    pub fn location(&self) -> Option<Location> {
        match self {
            ParamsError::Lock { problems, .. }
            | ParamsError::Component { problems, .. }
            | ParamsError::Outputs { problems, .. }
                if problems.len() == 1 =>
            {
                match &problems[0] {
                    Problem::Unknown { declared, .. }
                    | Problem::Cel { declared, .. }
                    | Problem::FromFile { declared, .. }
                    | Problem::Underivable { declared, .. }
                    | Problem::Unexpanded { declared, .. }
                    | Problem::Unforwarded { declared, .. } => declared.clone(),
                    _ => None,
                }
            }
            ParamsError::State { path, error } => {
                Some(error.location().unwrap_or_else(|| Location::file(path)))
            }
            _ => None,
        }
    }

    pub fn hint(&self) -> Option<String> {
        let problems = match self {
            ParamsError::Outputs { problems, .. } => return outputs_hint(problems),
            ParamsError::Lock { problems, .. } | ParamsError::Component { problems, .. } => {
                problems
            }
            ParamsError::UnknownComponent { .. } => {
                return Some("use a name from the stack's `components:` list".into())
            }
            ParamsError::Cel(failure @ CelFailure::Parse(_)) => {
                return Some(cel_hint(failure).into())
            }
            ParamsError::Cel(failure @ CelFailure::Budget(_)) => {
                return Some(cel_hint(failure).into())
            }
            ParamsError::Cel(CelFailure::Eval(_)) => {
                return Some(
                    "bind every name the expression reads, as `name=value,other=value`".into(),
                )
            }
            ParamsError::State { error, .. } if is_not_found(error) => {
                return Some("give the state file written by `hub deploy` with `-s`".into())
            }
            ParamsError::State { error, .. } => return error.hint(),
            ParamsError::Binding { .. } => {
                return Some("write bindings as `name=value,other=value`".into())
            }
        };
        if problems.iter().any(|p| matches!(p, Problem::Cycle { .. })) {
            Some("break each cycle by giving one of its parameters a literal value".into())
        } else if problems.iter().any(|p| matches!(p, Problem::Missing(_))) {
            Some("values can also come from `-e NAME=value` for `fromEnv` parameters, or be typed at a terminal".into())
        } else if problems
            .iter()
            .any(|p| matches!(p, Problem::Unknown { .. } | Problem::Underivable { .. }))
        {
            let from_stack = matches!(
                self,
                ParamsError::Lock {
                    from_stack: true,
                    ..
                }
            );
            Some(if from_stack {
                "declare the missing parameters in the stack (hub.yaml or a parameters file given after it)".into()
            } else {
                "declare the missing parameters in the stack (hub.yaml or a parameters file) and elaborate again".into()
            })
        } else {
            problems.iter().find_map(|p| match p {
                Problem::Cel { failure, .. } => Some(cel_hint(failure).into()),
                _ => None,
            })
        }
    }
}

/// How to fix a `#{...}` expression that failed.
fn cel_hint(failure: &CelFailure) -> &'static str {
    match failure {
        CelFailure::Parse(_) => {
            "check the CEL syntax: quotes, parentheses and both branches of `? :`"
        }
        CelFailure::Eval(_) => "check the names and functions the `#{...}` expression uses",
        CelFailure::Budget(_) => {
            "loop over fewer or smaller lists, or raise the budget with HUB_CEL_MAX_STEPS, HUB_CEL_MAX_MEMORY or HUB_CEL_MAX_TIME where the expression is trusted"
        }
    }
}

/// How to fix declared outputs that cannot be computed (§7.5–§7.7): an
/// output takes a printed value only through `fromTfVar`; a `value` (or
/// its absence, which forwards the parameter of the output's name) reads
/// the component's own parameters and earlier outputs, never the stack's.
fn outputs_hint(problems: &[Problem]) -> Option<String> {
    let mut fixes: Vec<String> = Vec::new();
    for problem in problems {
        let fix = match problem {
            Problem::Unforwarded { name, printed, declared, .. } => {
                let place = declared.as_ref().map(|l| format!(" at {l}")).unwrap_or_default();
                if *printed {
                    format!("the component prints `{name} = …` in its Outputs block: add `fromTfVar: {name}` to the declaration of output `{name}`{place} to take that value, or give it a `value:`")
                } else {
                    format!("give output `{name}`{place} a `fromTfVar: KEY` (a key the component prints in its Outputs block) or a `value:`, or declare `{name}` among the component's parameters")
                }
            }
            Problem::Unknown { .. } => "an output's `value` reads only the component's own parameters and the outputs declared before it: declare the missing names among the component's `parameters:` (they then take the stack's values) or correct the reference".to_string(),
            Problem::Cel { .. } => "fix the expression; it reads the component's parameters and the outputs declared before it".to_string(),
            _ => continue,
        };
        if !fixes.contains(&fix) {
            fixes.push(fix);
        }
    }
    (!fixes.is_empty()).then(|| fixes.join("; "))
}
