//! Locking the stack parameters (the stack document's `parameters:`).
//!
//! 1. Parameters with a value keep it. `kind: user` parameters without one
//!    go through the ask chain: `fromEnv` (`-e` first, then the process
//!    environment), `fromFile`, the state's value, a prompt, `default`,
//!    `empty: allow`. Whatever is still missing is reported at once.
//! 2. The implicit `hub.deploymentId` and `hub.stackName` join the table.
//! 3. Every string value holding `${}` or `#{}` (except `kind: link`) is
//!    expanded in dependency order; cycles, unknown names and CEL errors are
//!    collected and reported together.

use super::cel::Cel;
use super::error::{MissingValue, ParamsError, Problem};
use super::expr::needs_expansion;
use super::graph::{self, Node};
use super::prompt::{PromptRequest, Prompter};
use super::state::StateView;
use super::table::{FastMap, Scope, Table};
use super::{format::substitution_text, Locked, LockedParam, Origin};
use hub_manifest::declared::{Declarations, ParameterSources};
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::secrets::looks_secret;
use hub_manifest::{leaves, value_is_empty, Manifest, Parameter, SourceFile};
use indexmap::IndexMap;
use kept::{flattened, flattened_owned, take_kind_and_env, take_value, Kept, KeptRare};
use std::borrow::Cow;
use std::sync::Arc;
use yaml_serde::Value;

/// Everything locking reads besides the stack itself.
pub struct LockOptions<'a> {
    /// The elaborated file's text, to point at declarations.
    pub source: Option<&'a SourceFile>,
    /// Where that text declares each stack parameter, scanned beforehand
    /// by a caller that no longer holds the text while it locks (then
    /// `source` is `None`); read instead of scanning `source`.
    pub scanned: Option<&'a Declarations>,
    /// For a stack elaborated in memory (no `source`): the original files,
    /// to point at declarations.
    pub declared: Option<&'a ParameterSources>,
    /// `-e K=V`, consulted before the process environment.
    pub overrides: &'a IndexMap<String, String>,
    /// The process environment (a function so tests can pin it).
    pub environment: &'a dyn Fn(&str) -> Option<String>,
    /// `None` when nobody can answer.
    pub prompter: Option<&'a mut dyn Prompter>,
    /// A state whose stack parameters fill `kind: user` parameters before
    /// prompting, and are merged in afterwards.
    pub state: Option<&'a StateView<'a>>,
    /// Used for `hub.deploymentId` when the state has none; a new UUID
    /// otherwise.
    pub deployment_id: Option<String>,
    /// `HUB_STACK_NAME`, for `hub.stackName` when the state has none.
    pub stack_name: Option<String>,
}

impl<'a> LockOptions<'a> {
    /// The declarations are pointed at in the elaborated file's text
    /// (`source`, or what was `scanned` of it), not in the files a stack
    /// elaborated in memory was read from.
    fn points_into_elaborated_text(&self) -> bool {
        self.source.is_some() || self.scanned.is_some()
    }

    /// No terminal, no state, the given environment.
    pub fn new(
        overrides: &'a IndexMap<String, String>,
        environment: &'a dyn Fn(&str) -> Option<String>,
    ) -> Self {
        LockOptions {
            source: None,
            scanned: None,
            declared: None,
            overrides,
            environment,
            prompter: None,
            state: None,
            deployment_id: None,
            stack_name: None,
        }
    }
}

/// A flattened parameter and the index of the top-level declaration it
/// came from.
pub fn flatten(params: &[Parameter]) -> Vec<(Cow<'_, Parameter>, usize)> {
    let mut out = Vec::with_capacity(params.len());
    for (index, param) in params.iter().enumerate() {
        if param.parameters().is_empty() {
            out.push((Cow::Borrowed(param), index));
        } else {
            let group = leaves(param, |_| {});
            out.extend(group.into_iter().map(|leaf| (Cow::Owned(leaf), index)));
        }
    }
    out
}

/// A declaration while it is settled.
struct Declared<'a> {
    param: Cow<'a, Parameter>,
    qualified_name: String,
    location: Option<Location>,
    origin: Origin,
}

/// Where a stack parameter is declared: a line of the elaborated file, or
/// (for a stack elaborated in memory) of the original files.
struct Locator<'o> {
    declarations: Cow<'o, Declarations>,
    provenance: Option<&'o ParameterSources>,
}

impl<'o> Locator<'o> {
    fn new(options: &LockOptions<'o>) -> Self {
        Locator {
            declarations: match (options.scanned, options.source) {
                (Some(scanned), _) => Cow::Borrowed(scanned),
                (None, Some(source)) => Cow::Owned(Declarations::scan(&source.path, &source.text)),
                (None, None) => Cow::Owned(Declarations::default()),
            },
            provenance: options
                .declared
                .filter(|_| !options.points_into_elaborated_text()),
        }
    }

    fn at(&self, index: usize, qualified_name: &str) -> Option<Location> {
        match self.provenance {
            Some(provenance) => provenance.stack_parameter(qualified_name),
            None => self.declarations.parameter(0, index),
        }
    }
}

pub fn lock(
    stack: &Manifest,
    options: LockOptions<'_>,
    warnings: &mut Warnings,
) -> Result<Locked, ParamsError> {
    let count = stack.parameters.len();
    lock_from(
        stack,
        (flattened(&stack.parameters), count),
        options,
        warnings,
    )
}

/// [`lock`] with the stack's parameter list given apart (`parameters`,
/// taken out of `stack`, whose own list is not read): each declaration's
/// value moves into the table instead of being copied, and the list is
/// gone before the templates are expanded (the largest moment of the
/// lock). For a caller that reads nothing of the list afterwards.
pub fn lock_owned(
    stack: &Manifest,
    parameters: Vec<Parameter>,
    options: LockOptions<'_>,
    warnings: &mut Warnings,
) -> Result<Locked, ParamsError> {
    let count = parameters.len();
    lock_from(
        stack,
        (flattened_owned(parameters), count),
        options,
        warnings,
    )
}

/// Locks the declarations `parameters` gives (about `count` of them).
fn lock_from<'a>(
    stack: &Manifest,
    (parameters, count): (impl Iterator<Item = (Cow<'a, Parameter>, usize)>, usize),
    mut options: LockOptions<'_>,
    warnings: &mut Warnings,
) -> Result<Locked, ParamsError> {
    let implicit = implicit_values(stack, &options);
    let locator = Locator::new(&options);
    let mut declared = declare(
        (parameters, count),
        &implicit,
        &locator,
        &mut options,
        warnings,
    );
    let evaluation = graph::evaluate(&declared.table, &declared.nodes, &Cel::default());
    // The templates are expanded: their list is not needed while the
    // parameters are locked (the largest moment of the lock).
    declared.nodes = Vec::new();
    check(&mut declared, &evaluation, &locator, &options)?;
    let mut locked = Locked {
        params: crate::LockedParams::with_capacity_and_hasher(
            declared.items.len() + implicit.len(),
            Default::default(),
        ),
        drift: Vec::new(),
    };
    lock_implicit(&mut locked, implicit, &declared);
    lock_declared(&mut locked, declared, evaluation, &locator);
    if let Some(state) = options.state {
        state.merge_into(&mut locked, warnings);
    }
    Ok(locked)
}

/// What the one pass over the declarations gives: each declaration
/// settled, the table of names and values, each declaration's entry in it,
/// the templates to expand, and the problems found so far.
struct DeclaredAll {
    items: Vec<Kept>,
    entries: Vec<usize>,
    table: Table<'static>,
    /// The value a declaration moved into the table, by entry, when a
    /// later declaration of the same name replaced it there (rare).
    displaced: FastMap<usize, Option<Value>>,
    nodes: Vec<Node>,
    problems: Vec<Problem>,
}

impl DeclaredAll {
    /// The value `item` (at `entry`) was declared with.
    fn declared_value<'s>(&'s self, item: &'s Kept, entry: usize) -> Option<&'s Value> {
        match item.own() {
            Some(own) => own.as_ref(),
            None => match self.displaced.get(&entry) {
                Some(displaced) => displaced.as_ref(),
                None => self.table.value(entry),
            },
        }
    }
}

/// One pass: each declaration is settled, enters the table and, when its
/// value is a template, the graph, while it is still in cache.
fn declare<'a>(
    (parameters, size): (impl Iterator<Item = (Cow<'a, Parameter>, usize)>, usize),
    implicit: &[(String, String)],
    locator: &Locator<'_>,
    options: &mut LockOptions<'_>,
    warnings: &mut Warnings,
) -> DeclaredAll {
    let mut problems = Vec::new();
    let mut missing = Vec::new();
    let mut table = Table::with_capacity(size + implicit.len());
    for (name, value) in implicit {
        table.set(name, Some(Value::String(value.clone())));
    }
    let mut items: Vec<Kept> = Vec::with_capacity(size);
    let mut entries: Vec<usize> = Vec::with_capacity(size);
    let mut nodes: Vec<Node> = Vec::with_capacity(size);
    let mut displaced = FastMap::default();
    for (param, index) in parameters {
        let qualified_name = param.qualified_name();
        let location = locator.at(index, &qualified_name);
        let mut item = Declared {
            qualified_name,
            origin: Origin::Value,
            location,
            param,
        };
        settle(&mut item, options, warnings, &mut problems, &mut missing);
        let template = matches!(&item.param.value, Some(Value::String(s)) if needs_expansion(s));
        let (entry, own) = enter(&mut table, &mut displaced, &mut item);
        if template {
            nodes.push(Node {
                entry,
                scope: Scope::qualified(&item.param.component),
                lazy: item.param.kind == "link",
            });
        }
        let name_len = item.param.name.len();
        let (kind, env) = take_kind_and_env(&mut item.param);
        entries.push(entry);
        let rare = KeptRare {
            kind,
            env,
            origin: item.origin,
            own,
        };
        items.push(Kept::new(index, name_len, rare));
    }
    if !missing.is_empty() {
        problems.insert(0, Problem::Missing(missing));
    }
    DeclaredAll {
        items,
        entries,
        table,
        displaced,
        nodes,
        problems,
    }
}

/// Puts the value of `item` in `table` under its name: its entry, and
/// the value when the table does not hold it ([`KeptRare::own`]).
fn enter(
    table: &mut Table<'static>,
    displaced: &mut FastMap<usize, Option<Value>>,
    item: &mut Declared<'_>,
) -> (usize, Option<Option<Value>>) {
    match table.entry(&item.qualified_name) {
        // An implicit parameter declared without a value keeps hub's.
        Some(entry) if value_is_empty(&item.param.value) => {
            (entry, Some(take_value(&mut item.param)))
        }
        // A name declared again: the table takes the new value; the one
        // it held goes back to whoever moved it there.
        Some(entry) => {
            let value = take_value(&mut item.param);
            let held = table.replace(entry, value.clone());
            displaced.entry(entry).or_insert(held);
            (entry, Some(value))
        }
        // The table keeps the name; it becomes the key of the locked
        // parameter.
        None => {
            let value = take_value(&mut item.param);
            let entry = table.set_owned(std::mem::take(&mut item.qualified_name), value);
            (entry, None)
        }
    }
}

/// Every problem of the declarations and of the expansion, reported
/// together, with where each name was declared.
fn check(
    declared: &mut DeclaredAll,
    evaluation: &graph::Evaluation,
    locator: &Locator<'_>,
    options: &LockOptions<'_>,
) -> Result<(), ParamsError> {
    let mut problems = std::mem::take(&mut declared.problems);
    if !evaluation.problems.is_empty() {
        // The declaration of each entry; a name declared twice, the last.
        let mut by_entry: Vec<Option<&Kept>> = vec![None; declared.table.len()];
        for (d, &entry) in declared.items.iter().zip(&declared.entries) {
            by_entry[entry] = Some(d);
        }
        let table = &declared.table;
        let location = |entry: usize| {
            by_entry
                .get(entry)
                .copied()
                .flatten()
                .and_then(|d| locator.at(d.index(), table.key(entry)))
        };
        problems.extend(describe(&evaluation.problems, table, &location));
    }
    if !problems.is_empty() {
        return Err(ParamsError::Lock {
            problems,
            from_stack: !options.points_into_elaborated_text() && options.declared.is_some(),
        });
    }
    Ok(())
}

/// `hub.deploymentId` and `hub.stackName`, unless declared with a value.
fn lock_implicit(locked: &mut Locked, implicit: Vec<(String, String)>, declared: &DeclaredAll) {
    for (name, value) in implicit {
        // Declarations of the same name share its table entry: comparing
        // entry numbers spares reading every declared name.
        let entry = declared.table.entry(&name);
        let mut same_name = declared
            .items
            .iter()
            .zip(&declared.entries)
            .filter(|&(_, &e)| Some(e) == entry);
        if same_name
            .clone()
            .any(|(d, &e)| !value_is_empty(&declared.declared_value(d, e).cloned()))
        {
            continue;
        }
        let env = if name == "hub.deploymentId" {
            "DEPLOYMENT_ID"
        } else {
            "STACK_NAME"
        };
        let existing_env = same_name
            .next()
            .map(|(d, _)| d.env().to_string())
            .filter(|e| !e.is_empty());
        let env = existing_env.as_deref().unwrap_or(env);
        locked.insert(
            LockedParam::new(&name, "", Some(Value::String(value)), Origin::Implicit).with_env(env),
        );
    }
}

/// The declared parameters with their expanded values, in declaration
/// order.
fn lock_declared(
    locked: &mut Locked,
    declared: DeclaredAll,
    mut evaluation: graph::Evaluation,
    locator: &Locator<'_>,
) {
    let DeclaredAll {
        items,
        entries,
        table,
        mut displaced,
        ..
    } = declared;
    // Names and values by entry, each moved out at most once: a second
    // declaration of a name finds its name gone or its slot taken.
    let mut table = table.into_entries();
    for (item, entry) in items.into_iter().zip(entries) {
        let Some(name) = table.take_key(entry) else {
            continue;
        };
        let location = locator.at(item.index(), &name);
        let name_len = item.name_len as usize;
        let KeptRare {
            kind,
            env,
            origin,
            own,
        } = item.rare.map_or_else(KeptRare::plain, |rare| *rare);
        let key: Arc<str> = Arc::from(name);
        let indexmap::map::Entry::Vacant(slot) = locked.params.entry(Arc::clone(&key)) else {
            continue;
        };
        let expanded = if &*kind == "link" {
            None
        } else {
            evaluation.take_result(entry)
        };
        let (value, expression) = match expanded {
            Some(text) => {
                let entered = table.take_value(entry);
                // The value the declaration was written with, where the
                // table's entry does not hold it.
                let written = match (own, displaced.remove(&entry)) {
                    (Some(own), _) => Some(own),
                    (None, displaced) => displaced,
                };
                let expression = match written {
                    Some(written) => written.map(|v| template_text(&v, entered)),
                    None => entered.map(|v| match v {
                        Value::String(text) => text,
                        v => substitution_text(Some(&v)),
                    }),
                };
                (Some(Value::String(text)), expression)
            }
            None => (table.take_value(entry), None),
        };
        let secret = looks_secret(&key[..name_len]) || evaluation.is_tainted(entry);
        slot.insert(
            LockedParam::keyed(key, name_len, value, origin)
                .with_kind(&kind)
                .with_env(&env)
                .with_expression(expression)
                .declared_at(location)
                .with_secret(secret),
        );
    }
}

/// The text of the template `declared`, moved out of the table's copy
/// of it (`entered`) when that is the same text, instead of copied again.
fn template_text(declared: &Value, entered: Option<Value>) -> String {
    match (declared, entered) {
        (Value::String(declared), Some(Value::String(entered))) if *declared == entered => entered,
        (declared, _) => substitution_text(Some(declared)),
    }
}

/// Gives `item` its value: its own, or one from the ask chain.
fn settle(
    item: &mut Declared,
    options: &mut LockOptions<'_>,
    warnings: &mut Warnings,
    problems: &mut Vec<Problem>,
    missing: &mut Vec<MissingValue>,
) {
    let p = &item.param;
    let is_user = p.kind == "user"
        || (p.kind.is_empty() && (!p.from_env().is_empty() || !p.from_file().is_empty()));
    if !value_is_empty(p.default_value()) && !is_user {
        warnings.warn(
            item.location.clone(),
            format!(
                "the default of stack parameter `{}` is not used: defaults apply only to `kind: user` stack parameters",
                item.qualified_name
            ),
        );
    }
    if !value_is_empty(&p.value) {
        return;
    }
    if !is_user {
        warnings.warn(
            item.location.clone(),
            format!(
                "stack parameter `{}` has no value; components that declare it get an empty value",
                item.qualified_name
            ),
        );
        item.origin = Origin::Unset;
        return;
    }
    match ask(item, options, warnings) {
        Ok(Some((value, origin))) => {
            item.param.to_mut().value = Some(value);
            item.origin = origin;
        }
        Ok(None) => missing.push(MissingValue {
            qualified_name: item.qualified_name.clone(),
            brief: item.param.brief().to_string(),
            from_env: item.param.from_env().to_string(),
            declared: item.location.clone(),
            from_stack: !options.points_into_elaborated_text() && options.declared.is_some(),
        }),
        Err(problem) => problems.push(*problem),
    }
}

fn lookup_variable(options: &LockOptions<'_>, variable: &str) -> Option<(String, bool)> {
    if let Some(value) = options.overrides.get(variable) {
        return Some((value.clone(), true));
    }
    (options.environment)(variable).map(|v| (v, false))
}

/// The ask chain of one `kind: user` parameter without a value.
fn ask(
    item: &Declared,
    options: &mut LockOptions<'_>,
    warnings: &mut Warnings,
) -> Result<Option<(Value, Origin)>, Box<Problem>> {
    let p = &item.param;
    if !p.from_env().is_empty() {
        if let Some((value, overridden)) = lookup_variable(options, p.from_env()) {
            if hub_manifest::masked::secret_variable(p.from_env()) || looks_secret(&p.name) {
                hub_manifest::masked::learn(&value);
            }
            let origin = Origin::FromEnv {
                variable: p.from_env().to_string(),
                overridden,
            };
            return Ok(Some((Value::String(value), origin)));
        }
    }
    if let Some(found) = from_file(item, options, warnings)? {
        return Ok(Some(found));
    }
    if let Some(value) = options
        .state
        .and_then(|s| s.stack_parameter(&item.qualified_name))
    {
        if !value_is_empty(&Some(value.clone())) {
            return Ok(Some((value.clone(), Origin::State)));
        }
    }
    let default =
        (!value_is_empty(p.default_value())).then(|| substitution_text(p.default_value().as_ref()));
    if p.empty() != "allow" {
        if let Some(prompter) = options.prompter.as_deref_mut() {
            let request = PromptRequest {
                qualified_name: item.qualified_name.clone(),
                brief: p.brief().to_string(),
                default: default.clone(),
                secret: looks_secret(&p.name),
            };
            match prompter.ask(&request) {
                Ok(Some(answer)) => return Ok(Some((Value::String(answer), Origin::Prompt))),
                Ok(None) => {}
                Err(reason) => {
                    return Err(Box::new(Problem::Prompt {
                        param: item.qualified_name.clone(),
                        reason,
                    }))
                }
            }
        }
    }
    if let Some(default) = p.default_value() {
        if !value_is_empty(p.default_value()) {
            return Ok(Some((default.clone(), Origin::Default)));
        }
    }
    if !p.env.is_empty() && p.from_env().is_empty() {
        warnings.warn(
            item.location.clone(),
            format!(
                "`{}` has `env: {}` but no `fromEnv`; add `fromEnv: {}` to read its value from the environment",
                item.qualified_name, p.env, p.env
            ),
        );
    }
    if p.empty() == "allow" {
        return Ok(Some((Value::String(String::new()), Origin::EmptyAllowed)));
    }
    Ok(None)
}

/// `fromFile: PATH` (relative to the working directory) or
/// `fromFile: $VAR`; the content is kept verbatim.
fn from_file(
    item: &Declared,
    options: &LockOptions<'_>,
    warnings: &mut Warnings,
) -> Result<Option<(Value, Origin)>, Box<Problem>> {
    let p = &item.param;
    if p.from_file().is_empty() {
        return Ok(None);
    }
    let path = match p.from_file().strip_prefix('$') {
        Some(variable) => match lookup_variable(options, variable) {
            Some((path, _)) if !path.is_empty() => path,
            _ => {
                warnings.warn(
                    item.location.clone(),
                    format!(
                        "`{}`: `fromFile: {}` is skipped: the variable {variable} is not set",
                        item.qualified_name,
                        p.from_file()
                    ),
                );
                return Ok(None);
            }
        },
        None => p.from_file().to_string(),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Ok(Some((Value::String(text), Origin::FromFile { path }))),
        Err(error) => Err(Box::new(Problem::FromFile {
            param: item.qualified_name.clone(),
            path,
            reason: error.to_string(),
            declared: item.location.clone(),
        })),
    }
}

/// `hub.deploymentId` and `hub.stackName`: from the state, else from the
/// options, else generated (a UUID v4; `meta.name` up to the first `:`).
fn implicit_values(stack: &Manifest, options: &LockOptions<'_>) -> Vec<(String, String)> {
    let from_state = |name: &str| {
        options
            .state
            .and_then(|s| s.stack_parameter(name))
            .filter(|v| !value_is_empty(&Some((*v).clone())))
            .map(|v| substitution_text(Some(v)))
    };
    let deployment_id = from_state("hub.deploymentId")
        .or_else(|| options.deployment_id.clone())
        .unwrap_or_else(hub_state::random_uuid);
    let stack_name = from_state("hub.stackName")
        .or_else(|| options.stack_name.clone().filter(|s| !s.is_empty()))
        .unwrap_or_else(|| {
            stack
                .meta
                .name
                .split(':')
                .next()
                .unwrap_or_default()
                .to_string()
        });
    vec![
        ("hub.deploymentId".to_string(), deployment_id),
        ("hub.stackName".to_string(), stack_name),
    ]
}

/// Turns graph problems into user-facing ones, with declarations.
pub(super) fn describe(
    problems: &[graph::ExpandProblem],
    table: &Table,
    location: &dyn Fn(usize) -> Option<Location>,
) -> Vec<Problem> {
    let mut unknown: IndexMap<usize, Vec<String>> = IndexMap::new();
    let mut out = Vec::new();
    for problem in problems {
        match problem {
            graph::ExpandProblem::Unknown { entry, name } => {
                let names = unknown.entry(*entry).or_default();
                if !names.contains(name) {
                    names.push(name.clone());
                }
            }
            graph::ExpandProblem::Cel {
                entry,
                source,
                failure,
            } => out.push(Problem::Cel {
                param: table.key(*entry).to_string(),
                source: source.clone(),
                failure: failure.clone(),
                declared: super::error::expression_location(location(*entry), source),
            }),
            graph::ExpandProblem::Cycle { path } => out.push(Problem::Cycle {
                path: path
                    .iter()
                    .map(|&e| (table.key(e).to_string(), location(e)))
                    .collect(),
            }),
        }
    }
    let mut all: Vec<Problem> = unknown
        .into_iter()
        .map(|(entry, names)| Problem::Unknown {
            param: table.key(entry).to_string(),
            names,
            declared: location(entry),
        })
        .collect();
    all.extend(out);
    all
}

mod kept;
#[cfg(test)]
mod tests;
