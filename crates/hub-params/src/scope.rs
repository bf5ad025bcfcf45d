//! Parameters and declared outputs of one component, expanded in its own
//! scope: the locked stack parameters, the outputs captured so far, and the
//! component's earlier parameters, top to bottom.

use super::captured::CapturedOutput;
use super::cel::Cel;
use super::error::{ParamsError, Problem};
use super::expr::{self, needs_expansion, Piece};
use super::format::substitution_text;
use super::graph::{self, Node};
use super::lock::{describe, flatten};
use super::table::{Scope, Table};
use super::{template_names, Locked, Origin};
use hub_manifest::declared::Declarations;
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::secrets::looks_secret;
use hub_manifest::{value_is_empty, Manifest, Output, Parameter, SourceFile};
use indexmap::IndexMap;
use std::collections::HashSet;
use yaml_serde::Value;

/// The component being expanded.
pub struct ComponentScope<'a> {
    /// Its reference name in the stack.
    pub name: &'a str,
    /// Its `depends` list in the stack.
    pub depends: &'a [String],
    /// Its manifest (from the elaborated file).
    pub manifest: &'a Manifest,
    /// Outputs captured so far, oldest first: for a plain name the latest
    /// producer wins.
    pub outputs: &'a [CapturedOutput],
    /// The value of `hub.provides` (space-separated capabilities).
    pub provides: String,
    /// The elaborated file and the component's document number in it, to
    /// point at declarations.
    pub source: Option<(&'a SourceFile, usize)>,
}

/// A component parameter with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandedParam {
    pub name: String,
    pub value: Option<Value>,
    pub env: String,
    pub origin: Origin,
    /// The template the value was expanded from, if any.
    pub expression: Option<String>,
    pub declared: Option<Location>,
    pub secret: bool,
}

/// A declared output with its value.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpandedOutput {
    pub name: String,
    pub value: Option<Value>,
    pub kind: String,
    pub secret: bool,
}

/// Expands the component's parameters: each is looked up as
/// `name|component`, `dep:name` for each dependency, then plain `name`; the
/// value found wins over the component's own `value`, which is a fallback,
/// then `default`, then `empty: allow`. Expressions use the same lookup.
/// The list starts with `hub.componentName` and ends with `hub.provides`.
pub fn expand_component(
    locked: &Locked,
    scope: &ComponentScope<'_>,
    warnings: &mut Warnings,
) -> Result<Vec<ExpandedParam>, ParamsError> {
    let declarations = match scope.source {
        Some((source, _)) => Declarations::scan(&source.path, &source.text),
        None => Declarations::default(),
    };
    let document = scope.source.map(|(_, d)| d).unwrap_or_default();
    let (table, secret) = initial_table(locked, scope);
    let mut expander = Expander {
        lookup: Scope {
            qualifier: scope.name.to_string(),
            depends: scope.depends.to_vec(),
        },
        lazy: Lazy::of(&table),
        cel: Cel::shared(),
        table,
        secret,
        problems: Vec::new(),
    };
    let mut out = vec![ExpandedParam {
        name: "hub.componentName".into(),
        value: Some(Value::String(scope.name.to_string())),
        env: String::new(),
        origin: Origin::Implicit,
        expression: None,
        declared: None,
        secret: false,
    }];
    let mut provides_declared = false;
    for (p, index) in flatten(&scope.manifest.parameters) {
        let p = p.into_owned();
        let declared = declarations.parameter(document, index);
        if p.name == "hub.componentName" {
            continue;
        }
        if p.name == "hub.provides" {
            provides_declared = true;
            out.push(provides(scope, p.env.clone()));
            continue;
        }
        out.push(expander.parameter(p, declared, scope, warnings));
    }
    if !provides_declared {
        out.push(provides(scope, "HUB_PROVIDES".into()));
    }
    if expander.problems.is_empty() {
        Ok(out)
    } else {
        Err(ParamsError::Component {
            component: scope.name.to_string(),
            problems: expander.problems,
        })
    }
}

/// What expanding one component's parameters works with: its table of
/// names in scope (growing as its parameters are set), which entries are
/// secret, and the problems found so far.
struct Expander<'l> {
    table: Table<'l>,
    secret: Secrets<'l>,
    lookup: Scope,
    lazy: Lazy,
    cel: std::rc::Rc<Cel>,
    problems: Vec<Problem>,
}

impl Expander<'_> {
    /// One parameter of the component: looked up, else its fallback; its
    /// template expanded; then set in the table for the parameters below.
    fn parameter(
        &mut self,
        p: Parameter,
        declared: Option<Location>,
        scope: &ComponentScope<'_>,
        warnings: &mut Warnings,
    ) -> ExpandedParam {
        let found = self.table.find(&p.name, &self.lookup);
        let (mut value, mut origin, mut is_secret) = match found {
            Some(entry) => (
                self.table.value(entry).cloned(),
                Origin::Found {
                    key: self.table.key(entry).to_string(),
                },
                self.secret.contains(entry),
            ),
            None => {
                let (value, origin) = self.not_found(&p, &declared, scope, warnings);
                (value, origin, false)
            }
        };
        let mut expression = None;
        if let Some(Value::String(template)) = &value {
            if needs_expansion(template) {
                let this = format!("{}|{}", p.name, scope.name);
                let (text, tainted) = self.expand(template, &this, &declared);
                expression = Some(template.clone());
                value = text.map(Value::String);
                is_secret |= tainted;
                if value.is_none() {
                    origin = Origin::Unset;
                }
            }
        }
        is_secret |= looks_secret(&p.name);
        let entry = self.table.set(&p.name, value.clone());
        self.secret.mark(entry, is_secret);
        ExpandedParam {
            name: p.name,
            value,
            env: p.env,
            origin,
            expression,
            declared,
            secret: is_secret,
        }
    }

    /// A parameter no scope has: the component's own value, default or
    /// `empty: allow`, else a problem; a `kind: user` one is warned about.
    fn not_found(
        &mut self,
        p: &Parameter,
        declared: &Option<Location>,
        scope: &ComponentScope<'_>,
        warnings: &mut Warnings,
    ) -> (Option<Value>, Origin) {
        if p.kind == "user" {
            warnings.warn(
                declared.clone(),
                format!(
                    "`kind: user` parameter `{}` of component `{}` should have been lifted to the stack by elaborate",
                    p.name, scope.name
                ),
            );
        }
        // `hub.*` parameters are hub's own: always derivable.
        let empty = if p.name.starts_with("hub.") {
            "allow"
        } else {
            p.empty()
        };
        let (value, origin) = fallback(&p.value, p.default_value(), empty);
        if origin.is_none() {
            self.problems.push(Problem::Underivable {
                param: format!("{}|{}", p.name, scope.name),
                declared: declared.clone(),
            });
        }
        (value, origin.unwrap_or(Origin::Unset))
    }

    /// The text of `template`, the value of parameter `this`, and whether
    /// a secret went into it; its problems are kept, named after `this`.
    fn expand(
        &mut self,
        template: &str,
        this: &str,
        declared: &Option<Location>,
    ) -> (Option<String>, bool) {
        let (text, tainted, found_problems) = expand_in_scope(
            &mut self.table,
            &self.lazy,
            &self.lookup,
            template,
            &self.cel,
            &self.secret,
        );
        let location = |_: usize| declared.clone();
        self.problems.extend(
            describe(&found_problems, &self.table, &location)
                .into_iter()
                .map(|problem| rename(problem, PENDING, this)),
        );
        (text, tainted)
    }
}

/// The component's own value, else its default, else `""` with
/// `empty: allow`; `None` as origin when there is nothing.
fn fallback(
    value: &Option<Value>,
    default: &Option<Value>,
    empty: &str,
) -> (Option<Value>, Option<Origin>) {
    if !value_is_empty(value) {
        return (value.clone(), Some(Origin::Value));
    }
    if !value_is_empty(default) {
        return (default.clone(), Some(Origin::Default));
    }
    if empty == "allow" {
        return (
            Some(Value::String(String::new())),
            Some(Origin::EmptyAllowed),
        );
    }
    (value.clone(), None)
}

fn provides(scope: &ComponentScope<'_>, env: String) -> ExpandedParam {
    ExpandedParam {
        name: "hub.provides".into(),
        value: Some(Value::String(scope.provides.clone())),
        env: if env.is_empty() {
            "HUB_PROVIDES".into()
        } else {
            env
        },
        origin: Origin::Implicit,
        expression: None,
        declared: None,
        secret: false,
    }
}

/// The table a component's templates read: the locked stack parameters
/// as its base (shared, not copied), then outputs by `component:name` and
/// plain name (outputs of components of the same kind are invisible),
/// then `hub.componentName`.
fn initial_table<'l>(locked: &'l Locked, scope: &ComponentScope<'_>) -> (Table<'l>, Secrets<'l>) {
    let mut table = Table::on(&locked.params, 2 * scope.outputs.len() + 1);
    let mut secret = Secrets::on(locked);
    let kind = &scope.manifest.meta.kind;
    for output in scope.outputs {
        if !kind.is_empty() && &output.component_kind == kind {
            continue;
        }
        let is_secret = output.kind.starts_with("secret") || looks_secret(&output.name);
        for key in [
            format!("{}:{}", output.component, output.name),
            output.name.clone(),
        ] {
            let entry = table.set(&key, output.value.clone());
            secret.mark(entry, is_secret);
        }
    }
    table.set(
        "hub.componentName",
        Some(Value::String(scope.name.to_string())),
    );
    (table, secret)
}

/// Which entries of a component's table hold secrets: the locked stack
/// parameters say so themselves, the component's own entries are marked.
struct Secrets<'l> {
    locked: &'l Locked,
    own: HashSet<usize>,
}

impl<'l> Secrets<'l> {
    fn on(locked: &'l Locked) -> Self {
        Secrets {
            locked,
            own: HashSet::new(),
        }
    }

    fn contains(&self, entry: usize) -> bool {
        match self.locked.params.get_index(entry) {
            Some((_, p)) => p.secret,
            None => self.own.contains(&entry),
        }
    }

    /// Marks an own entry (never a base one: setting a key gives an own
    /// entry).
    fn mark(&mut self, entry: usize, secret: bool) {
        if secret {
            self.own.insert(entry);
        } else {
            self.own.remove(&entry);
        }
    }
}

/// Entries whose value was a template when the component's expansion
/// began (`kind: link` stack parameters, outputs holding `${...}`): they
/// are expanded in the component's scope when one of its templates reads
/// them, directly or not. The stack's are found by looking at the value
/// of each entry reached; the component's own, few, are listed.
struct Lazy {
    own: HashSet<usize>,
}

impl Lazy {
    fn of(table: &Table<'_>) -> Self {
        let own = (table.base_len()..table.len())
            .filter(|&e| is_template(table.value(e)))
            .collect();
        Lazy { own }
    }

    fn contains(&self, table: &Table<'_>, entry: usize) -> bool {
        if entry < table.base_len() {
            is_template(table.value(entry))
        } else {
            self.own.contains(&entry)
        }
    }

    /// The lazy entries `template` reaches through the names it reads,
    /// directly or through other lazy entries, in table order (the order
    /// cycles are reported in).
    fn reached(&self, table: &Table<'_>, lookup: &Scope, template: &str, cel: &Cel) -> Vec<usize> {
        let mut found = Vec::new();
        let mut seen = HashSet::new();
        let mut pending = vec![template.to_string()];
        while let Some(text) = pending.pop() {
            for name in template_names(cel, &text) {
                let Some(entry) = table.find(&name, lookup) else {
                    continue;
                };
                if self.contains(table, entry) && seen.insert(entry) {
                    found.push(entry);
                    if let Some(Value::String(inner)) = table.value(entry) {
                        pending.push(inner.clone());
                    }
                }
            }
        }
        found.sort_unstable_by_key(|&entry| table.position(entry));
        found
    }
}

fn is_template(value: Option<&Value>) -> bool {
    matches!(value, Some(Value::String(s)) if needs_expansion(s))
}

/// Expands `template` against the table, following values that are
/// themselves templates (`kind: link` stack parameters) in dependency
/// order. Returns the text (none when a cycle prevents it), whether a
/// secret was read, and the problems.
/// Problems name the template being expanded by its placeholder entry;
/// give them the parameter's name instead.
fn rename(problem: Problem, from: &str, to: &str) -> Problem {
    let swap = |name: String| if name == from { to.to_string() } else { name };
    match problem {
        Problem::Unknown {
            param,
            names,
            declared,
        } => Problem::Unknown {
            param: swap(param),
            names,
            declared,
        },
        Problem::Cel {
            param,
            source,
            failure,
            declared,
        } => Problem::Cel {
            param: swap(param),
            source,
            failure,
            declared,
        },
        Problem::Cycle { path } => Problem::Cycle {
            path: path.into_iter().map(|(n, l)| (swap(n), l)).collect(),
        },
        other => other,
    }
}

/// The table entry holding the template being expanded; no lookup can
/// reach it.
const PENDING: &str = "\u{0}expanding";

fn expand_in_scope(
    table: &mut Table<'_>,
    lazy: &Lazy,
    lookup: &Scope,
    template: &str,
    cel: &Cel,
    secret: &Secrets<'_>,
) -> (Option<String>, bool, Vec<graph::ExpandProblem>) {
    let reached = lazy.reached(table, lookup, template, cel);
    let entry = table.set(PENDING, Some(Value::String(template.to_string())));
    let mut nodes = vec![Node {
        entry,
        scope: lookup.clone(),
        lazy: false,
    }];
    nodes.extend(reached.into_iter().map(|e| Node {
        entry: e,
        scope: lookup.clone(),
        lazy: true,
    }));
    let evaluation = graph::evaluate(table, &nodes, cel);
    table.set(PENDING, None);
    let text = evaluation.result(entry).cloned();
    let tainted = evaluation.is_tainted(entry) || reads_secret(table, lookup, template, secret);
    (text, tainted, evaluation.problems)
}

fn reads_secret(table: &Table<'_>, lookup: &Scope, template: &str, secret: &Secrets<'_>) -> bool {
    expr::parse(template).iter().any(|piece| match piece {
        Piece::Reference(name) => table.find(name, lookup).is_some_and(|e| secret.contains(e)),
        _ => false,
    })
}

/// What the messages about a component's declared outputs can point at.
#[derive(Debug, Clone, Copy, Default)]
pub struct OutputsContext<'a> {
    /// The file declaring the component's outputs and its document there.
    pub source: Option<(&'a SourceFile, usize)>,
    /// The keys the component printed in its `Outputs:` block.
    pub printed: &'a [String],
}

/// Computes declared outputs whose value is given (or omitted, meaning
/// `${<name>}`): references read the component's parameters and its
/// outputs computed so far; a substituted value that still holds an
/// expression is an error. `from_tf_var` holds the values of outputs with
/// `fromTfVar`, already decoded by the caller.
pub fn expand_outputs(
    component: &str,
    params: &[super::ExpandedParam],
    outputs: &[Output],
    from_tf_var: &IndexMap<String, Value>,
    context: OutputsContext<'_>,
) -> Result<Vec<ExpandedOutput>, ParamsError> {
    let mut table = Table::with_capacity(params.len() + outputs.len());
    for p in params {
        table.set(&p.name, p.value.clone());
    }
    let lookup = Scope::qualified(component);
    let cel = Cel::shared();
    let mut problems = Vec::new();
    // Which output each problem is about, to point at its declaration.
    let mut problem_outputs = Vec::new();
    let mut out = Vec::new();
    for (index, output) in outputs.iter().enumerate() {
        let qualified_name = format!("{component}:{}", output.name);
        let forwarded =
            output.from_tf_var.is_empty() && matches!(output.value, None | Some(Value::Null));
        let value = if !output.from_tf_var.is_empty() {
            match from_tf_var.get(&output.name) {
                Some(value) => Some(value.clone()),
                None => continue,
            }
        } else if forwarded && table.find(&output.name, &lookup).is_none() {
            problems.push(Problem::Unforwarded {
                output: qualified_name.clone(),
                name: output.name.clone(),
                printed: context.printed.contains(&output.name),
                declared: None,
            });
            Some(Value::String("(unknown)".into()))
        } else if forwarded {
            Some(Value::String(format!("${{{}}}", output.name)))
        } else {
            output.value.clone()
        };
        let value = match value {
            Some(Value::String(template)) if needs_expansion(&template) => {
                Some(Value::String(substitute_once(
                    &table,
                    &lookup,
                    &template,
                    &cel,
                    &qualified_name,
                    &mut problems,
                )))
            }
            other => other,
        };
        problem_outputs.resize(problems.len(), index);
        table.set(&output.name, value.clone());
        out.push(ExpandedOutput {
            name: output.name.clone(),
            secret: output.kind.starts_with("secret") || looks_secret(&output.name),
            kind: output.kind.clone(),
            value,
        });
    }
    if problems.is_empty() {
        return Ok(out);
    }
    if let Some((source, document)) = context.source {
        let declarations = Declarations::scan(&source.path, &source.text);
        for (problem, index) in problems.iter_mut().zip(problem_outputs) {
            problem.set_declared(declarations.output(document, index));
        }
    }
    Err(ParamsError::Outputs {
        component: component.to_string(),
        problems,
    })
}

/// The problems of a component's declared outputs that no run can
/// change, found before it runs: a `value` naming something that is
/// neither a parameter of the component nor an output declared before it,
/// and an output with neither `fromTfVar` nor `value` whose name is not a
/// parameter of the component. Every `fromTfVar` output is taken as
/// printed, and problems that depend on values (CEL, expressions left in
/// a value) are left to the run.
pub fn certain_output_problems(
    component: &str,
    params: &[super::ExpandedParam],
    outputs: &[Output],
    source: Option<(&SourceFile, usize)>,
) -> Option<ParamsError> {
    let printed: IndexMap<String, Value> = outputs
        .iter()
        .filter(|o| !o.from_tf_var.is_empty())
        .map(|o| (o.name.clone(), Value::String(String::new())))
        .collect();
    let context = OutputsContext {
        source,
        printed: &[],
    };
    let Err(ParamsError::Outputs {
        component,
        problems,
    }) = expand_outputs(component, params, outputs, &printed, context)
    else {
        return None;
    };
    let problems: Vec<Problem> = problems
        .into_iter()
        .filter(|p| matches!(p, Problem::Unknown { .. } | Problem::Unforwarded { .. }))
        .collect();
    (!problems.is_empty()).then_some(ParamsError::Outputs {
        component,
        problems,
    })
}

fn substitute_once(
    table: &Table,
    lookup: &Scope,
    template: &str,
    cel: &Cel,
    param: &str,
    problems: &mut Vec<Problem>,
) -> String {
    let mut text = String::new();
    let mut unknown = Vec::new();
    for piece in expr::parse(template) {
        match piece {
            Piece::Text(t) => text.push_str(t),
            Piece::Reference(name) => match table.find(name, lookup) {
                Some(entry) => {
                    let value = substitution_text(table.value(entry));
                    if needs_expansion(&value) {
                        problems.push(Problem::Unexpanded {
                            param: param.to_string(),
                            declared: None,
                        });
                        text.push_str("(bug)");
                    } else {
                        text.push_str(&value);
                    }
                }
                None => {
                    unknown.push(name.to_string());
                    text.push_str("(unknown)");
                }
            },
            Piece::Cel(source) => {
                let result = cel.compile(source).and_then(|program| {
                    cel.evaluate(&program, |name| {
                        table
                            .find(name, lookup)
                            .map(|e| table.value(e).cloned().unwrap_or(Value::Null))
                    })
                });
                match result {
                    Ok(t) => text.push_str(&t),
                    Err(failure) => {
                        problems.push(Problem::Cel {
                            param: param.to_string(),
                            source: source.to_string(),
                            failure,
                            declared: None,
                        });
                        text.push_str("(error)");
                    }
                }
            }
        }
    }
    if !unknown.is_empty() {
        problems.push(Problem::Unknown {
            param: param.to_string(),
            names: unknown,
            declared: None,
        });
    }
    text
}

#[cfg(test)]
mod tests;
