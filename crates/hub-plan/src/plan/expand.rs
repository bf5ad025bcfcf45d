//! A component's parameters expanded for a plan, where some values cannot
//! be known: an output a component deploying earlier in the run would
//! produce stands in as a marker ([`stand_in`]), and a parameter that
//! cannot be expanded is set aside (its value replaced by a marker, then
//! the expansion is tried again), so that every other parameter still gets
//! its value. Markers are shown as `(known after X deploys)` and as the
//! expansion error.

use hub_manifest::diag::Warnings;
use hub_manifest::redact::Redactor;
use hub_params::format::substitution_text;
use hub_params::{expand_component, flatten, ComponentScope, ExpandedParam, Locked};
use hub_params::{ParamsError, Problem};
use yaml_serde::Value;

/// Delimits markers; no manifest value holds it.
const MARK: char = '\u{1}';
const AFTER: &str = "after:";
const BROKEN: &str = "broken:";

/// Between a stand-in's component and its output; no name holds it.
const OF: char = '\u{2}';

/// The value of `component`'s output `output`, known only after
/// `component` deploys.
pub(super) fn stand_in(component: &str, output: &str) -> Value {
    Value::String(format!("{MARK}{AFTER}{component}{OF}{output}{MARK}"))
}

/// `text` with its stand-ins as they were before they named their
/// output (`after:COMPONENT`): what a saved plan's digests are taken of,
/// so that a plan saved by an earlier hub still matches.
pub(super) fn digest_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(OF) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut skipping = false;
    for c in text.chars() {
        match c {
            OF => skipping = true,
            MARK => {
                skipping = false;
                out.push(c);
            }
            c if !skipping => out.push(c),
            _ => {}
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Whether `text` (an expanded value) reads an output known only after a
/// component deploys.
pub(super) fn unknown(text: &str) -> bool {
    !unknown_reads(text).is_empty()
}

/// Each output known only after its component deploys that `text` reads:
/// `(component, output)`, in the order read, without repeats.
pub(super) fn unknown_reads(text: &str) -> Vec<(String, String)> {
    let mut found: Vec<(String, String)> = Vec::new();
    let mut parts = text.split(MARK);
    parts.next();
    // Inside and outside markers alternate.
    while let Some(inside) = parts.next() {
        if let Some((component, output)) = inside.strip_prefix(AFTER).and_then(|n| n.split_once(OF))
        {
            let read = (component.to_string(), output.to_string());
            if !found.contains(&read) {
                found.push(read);
            }
        }
        parts.next();
    }
    found
}

fn broken(param: &str) -> Value {
    Value::String(format!("{MARK}{BROKEN}{param}{MARK}"))
}

/// The first marker in `text`.
fn marker(text: &str) -> Option<(&str, &str)> {
    let (_, rest) = text.split_once(MARK)?;
    let (inside, _) = rest.split_once(MARK)?;
    [AFTER, BROKEN]
        .into_iter()
        .find_map(|kind| inside.strip_prefix(kind).map(|name| (kind, name)))
}

/// The result of [`expand`].
#[derive(Debug, Default)]
pub(super) struct Expanded {
    /// The parameters; those set aside hold a marker.
    pub params: Vec<ExpandedParam>,
    /// The parameters set aside, and why.
    pub problems: Vec<(String, String)>,
    /// An error no parameter can be set aside for (a reference cycle…):
    /// then `params` is empty.
    pub error: Option<String>,
    /// The names the problems looked for and nothing gave (`${name}`
    /// references, parameters found neither among stack parameters nor
    /// outputs), when every problem is of that kind; `None` when another
    /// kind of problem (a CEL error, a file) may depend on values only
    /// the run knows.
    pub unresolved: Option<Vec<String>>,
}

impl Expanded {
    /// The parameters, when all of them could be expanded.
    pub fn complete(&self) -> Option<&[ExpandedParam]> {
        (self.problems.is_empty() && self.error.is_none()).then_some(self.params.as_slice())
    }

    /// Why the component would fail, when some parameter cannot be
    /// expanded.
    pub fn failure(&self) -> Option<String> {
        if let Some(error) = &self.error {
            return Some(error.clone());
        }
        match self.problems.as_slice() {
            [] => None,
            problems => {
                let names: Vec<String> = problems.iter().map(|(n, _)| format!("`{n}`")).collect();
                Some(format!("cannot expand {}", names.join(", ")))
            }
        }
    }

    /// The value as printed: secrets masked, markers explained.
    pub fn shown(&self, param: &ExpandedParam, redactor: &Redactor) -> String {
        let text = substitution_text(param.value.as_ref());
        match marker(&text) {
            Some((AFTER, read)) => {
                let component = read.split_once(OF).map_or(read, |(c, _)| c);
                format!("(known after {component} deploys)")
            }
            Some((_, name)) if name == param.name => match self.problem(name) {
                Some(problem) => format!("(error: {problem})"),
                None => "(error)".to_string(),
            },
            Some((_, name)) => format!("(error: uses `{name}`, which cannot be expanded)"),
            None => redactor
                .text(&param.name, "", param.secret, &text)
                .into_owned(),
        }
    }

    fn problem(&self, name: &str) -> Option<&str> {
        self.problems
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, p)| p.as_str())
    }
}

/// Expands the component's parameters, setting aside those that cannot
/// be expanded. Warnings are those of the last attempt.
pub(super) fn expand(
    locked: &Locked,
    scope: &ComponentScope<'_>,
    warnings: &mut Warnings,
) -> Expanded {
    // Most components expand at the first attempt: without a group of
    // parameters, from their manifest as it is (flattening changes
    // nothing), not a copy. A problem starts again from the copy below.
    if scope
        .manifest
        .parameters
        .iter()
        .all(|p| p.parameters().is_empty())
    {
        let mut quiet = Warnings::new();
        if let Ok(params) = expand_component(locked, scope, &mut quiet) {
            warnings.append(quiet);
            return Expanded {
                params,
                unresolved: Some(Vec::new()),
                ..Expanded::default()
            };
        }
    }
    let mut manifest = scope.manifest.clone();
    manifest.parameters = flatten(&scope.manifest.parameters)
        .into_iter()
        .map(|(param, _)| param.into_owned())
        .collect();
    let mut expanded = Expanded {
        unresolved: Some(Vec::new()),
        ..Expanded::default()
    };
    loop {
        let attempt = ComponentScope {
            name: scope.name,
            depends: scope.depends,
            manifest: &manifest,
            outputs: scope.outputs,
            provides: scope.provides.clone(),
            source: scope.source,
        };
        let mut quiet = Warnings::new();
        let problems = match expand_component(locked, &attempt, &mut quiet) {
            Ok(params) => {
                warnings.append(quiet);
                expanded.params = params;
                return expanded;
            }
            Err(ParamsError::Component { problems, .. }) => problems,
            Err(other) => {
                expanded.error = Some(other.to_string());
                return expanded;
            }
        };
        let mut progress = false;
        for problem in &problems {
            note_unresolved(&mut expanded.unresolved, problem);
            let Some(name) = culprit(problem, scope.name) else {
                continue;
            };
            let Some(declared) = manifest.parameters.iter_mut().find(|p| p.name == name) else {
                continue;
            };
            if expanded.problems.iter().any(|(n, _)| *n == name) {
                continue;
            }
            declared.value = Some(broken(&name));
            expanded.problems.push((name, problem.to_string()));
            progress = true;
        }
        if !progress {
            let texts: Vec<String> = problems.iter().map(ToString::to_string).collect();
            expanded.error = Some(texts.join("; "));
            expanded.params.clear();
            return expanded;
        }
    }
}

/// Adds the names `problem` looked for to `unresolved`, or gives up on
/// knowing them (`None`) for a problem of another kind.
fn note_unresolved(unresolved: &mut Option<Vec<String>>, problem: &Problem) {
    let names = match problem {
        Problem::Unknown { names, .. } => names.clone(),
        Problem::Underivable { param, .. } => {
            let name = param.split_once('|').map_or(param.as_str(), |(n, _)| n);
            vec![name.to_string()]
        }
        _ => {
            *unresolved = None;
            return;
        }
    };
    if let Some(list) = unresolved {
        list.extend(names);
    }
}

/// The parameter of the component a problem is about.
fn culprit(problem: &Problem, component: &str) -> Option<String> {
    let param = match problem {
        Problem::Unknown { param, .. }
        | Problem::Cel { param, .. }
        | Problem::FromFile { param, .. }
        | Problem::Underivable { param, .. }
        | Problem::Unexpanded { param, .. } => param,
        _ => return None,
    };
    let suffix = format!("|{component}");
    Some(param.strip_suffix(&suffix).unwrap_or(param).to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_name_what_they_stand_for() {
        let Value::String(text) = stand_in("network", "id") else {
            panic!("a string");
        };
        assert_eq!(
            marker(&format!("db.{text}")),
            Some((AFTER, "network\u{2}id"))
        );
        let Value::String(other) = stand_in("dns", "zone") else {
            panic!("a string");
        };
        let both = format!("a{text}b{other}c{text}");
        assert!(unknown(&both));
        assert_eq!(
            unknown_reads(&both),
            [
                ("network".into(), "id".into()),
                ("dns".into(), "zone".into())
            ]
        );
        assert!(!unknown("plain"));
        assert_eq!(
            digest_text(&both),
            format!(
                "a{MARK}{AFTER}network{MARK}b{MARK}{AFTER}dns{MARK}c{MARK}{AFTER}network{MARK}"
            )
        );
        assert_eq!(digest_text("plain"), "plain");
        let Value::String(text) = broken("x.y") else {
            panic!("a string");
        };
        assert_eq!(marker(&text), Some((BROKEN, "x.y")));
        assert_eq!(marker("plain"), None);
    }

    #[test]
    fn the_culprit_is_the_parameter_without_its_qualifier() {
        let problem = Problem::Underivable {
            param: "component.network.subnet|database".into(),
            declared: None,
        };
        assert_eq!(
            culprit(&problem, "database").as_deref(),
            Some("component.network.subnet")
        );
        assert_eq!(culprit(&Problem::Cycle { path: Vec::new() }, "x"), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(128))]

        /// A stand-in inside any text is found with its component and
        /// output, and its digest text is the marker of before.
        #[test]
        fn stand_ins_are_found_in_any_text(
            before in "[ -~]{0,20}",
            after in "[ -~]{0,20}",
            component in "[a-z][a-z0-9-]{0,10}",
            output in "[a-z][a-z0-9_.]{0,10}",
        ) {
            let Value::String(marker) = stand_in(&component, &output) else {
                panic!("a string");
            };
            let text = format!("{before}{marker}{after}");
            proptest::prop_assert_eq!(unknown_reads(&text), vec![(component.clone(), output)]);
            proptest::prop_assert!(unknown(&text));
            let old = format!("{before}{MARK}{AFTER}{component}{MARK}{after}");
            proptest::prop_assert_eq!(digest_text(&text).into_owned(), old);
            let plain = format!("{before}{after}");
            proptest::prop_assert!(!unknown(&plain));
        }
    }
}
