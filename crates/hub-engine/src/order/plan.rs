//! What a run will do, decided before anything runs: the structural checks
//! of an elaborated stack, the effective order and the selection (`-c`
//! with `app+`/`+app` widened along the deploy graph, `-o`, `-l`, the
//! undeploy guess, the deployed dependents an undeploy would strand),
//! optional/mandatory components, the tuning of
//! `lifecycle.requires.optional`, requirement checks against the provides
//! map, and the scheduler that hands out components.
//!
//! The graph the scheduler ([`super::schedule`]) works on: a component runs
//! after its `depends` and after the earlier providers of what it
//! `requires` ([`Plan::after`]).

use super::edges::{Reason, Upstream};
use super::schedule::Scheduler;
pub use super::verb::Verb;
use crate::run::timeout::Timeouts;
use hub_manifest::Elaborated;
use indexmap::IndexMap;
use std::collections::{BTreeSet, HashMap, HashSet};

/// `-c`, `-o`, `-l`, `--with-deps` and `--with-dependents` as given.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    /// `-c` entries as written: `app`, `app+`, `+app` or `+app+`.
    pub components: Vec<String>,
    pub offset: Option<String>,
    pub limit: Option<String>,
    /// `--with-deps`: every `-c` entry as if written `app+`.
    pub with_deps: bool,
    /// `--with-dependents`: every `-c` entry as if written `+app`.
    pub with_dependents: bool,
}

impl Selection {
    /// `-c` or `-o`: a run that needs a state.
    pub fn is_partial(&self) -> bool {
        !self.components.is_empty() || self.offset.is_some()
    }

    /// The `-c` entries, parsed, with the list-wide flags applied.
    pub fn picks(&self) -> impl Iterator<Item = Pick<'_>> + '_ {
        self.components.iter().map(|entry| {
            let pick = Pick::parse(entry);
            Pick {
                dependencies: pick.dependencies || self.with_deps,
                dependents: pick.dependents || self.with_dependents,
                ..pick
            }
        })
    }

    /// The `-c` entries with those naming one of `taken` widened to
    /// `+name`: what takes their dependents down in the same run.
    pub fn widened_to_dependents(&self, taken: &[&str]) -> Vec<String> {
        self.components
            .iter()
            .map(|entry| {
                let pick = Pick::parse(entry);
                match !pick.dependents && taken.contains(&pick.name) {
                    true => format!("+{entry}"),
                    false => entry.clone(),
                }
            })
            .collect()
    }

    /// Some `-c` entry pulls in more components than it names.
    fn widens(&self) -> bool {
        self.picks().any(|p| p.dependencies || p.dependents)
    }
}

/// One `-c` entry: `app` (only it), `app+` (and what it depends on),
/// `+app` (and what depends on it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pick<'a> {
    pub name: &'a str,
    pub dependencies: bool,
    pub dependents: bool,
}

impl<'a> Pick<'a> {
    pub fn parse(entry: &'a str) -> Pick<'a> {
        let after = entry.strip_prefix('+');
        let name = after.unwrap_or(entry);
        let before = name.strip_suffix('+');
        Pick {
            name: before.unwrap_or(name),
            dependencies: before.is_some(),
            dependents: after.is_some(),
        }
    }
}

/// The entry as `+app+` would be written.
impl std::fmt::Display for Pick<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let plus = |on: bool| if on { "+" } else { "" };
        write!(
            f,
            "{}{}{}",
            plus(self.dependents),
            self.name,
            plus(self.dependencies)
        )
    }
}

/// A component a `-c` entry pulled in besides the one it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    pub name: String,
    /// The named component it was reached from.
    pub from: String,
    /// `true`: `from` depends on it (`from+`); `false`: it depends on
    /// `from` (`+from`).
    pub dependency: bool,
}

impl std::fmt::Display for Added {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.dependency {
            true => write!(f, "{} (`{}` depends on it)", self.name, self.from),
            false => write!(f, "{} (it depends on `{}`)", self.name, self.from),
        }
    }
}

/// A component still deployed that depends on one an undeploy would take
/// down.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dependent {
    pub name: String,
    /// The selected component it depends on.
    pub on: String,
    /// `` `depends` `` or `` provides `X` ``.
    pub reasons: Vec<String>,
}

impl std::fmt::Display for Dependent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` depends on `{}` ({})",
            self.name,
            self.on,
            self.reasons.join(", ")
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("{0}")]
    BadName(hub_manifest::names::BadComponentName),
    #[error("component `{0}` is listed in `components:` but has no component document")]
    MissingDocument(String),
    #[error("component document `{0}` is not listed in the stack's `components:`")]
    ExtraDocument(String),
    #[error("`lifecycle.order` ({}) is not a permutation of the components ({})", order.join(", "), components.join(", "))]
    Order {
        order: Vec<String>,
        components: Vec<String>,
    },
    #[error("`{list}` names `{name}`, which is not a component of the stack")]
    UnknownListed {
        list: &'static str,
        name: String,
        /// A component of the stack it may stand for.
        suggestion: Option<String>,
    },
    #[error("the `lifecycle.timeouts` entry of `{component}`: {reason}")]
    BadTimeout {
        component: String,
        value: String,
        reason: String,
    },
    #[error("component `{component}` depends on `{name}`, which is not a component of the stack")]
    UnknownDependency {
        component: String,
        name: String,
        suggestion: Option<String>,
    },
    #[error("`{flag}` names `{name}`, which is not a component of the stack (components: {})", available.join(", "))]
    UnknownSelected {
        flag: &'static str,
        name: String,
        available: Vec<String>,
    },
    #[error("the limit `{limit}` comes before the offset `{offset}` in the {verb} order")]
    LimitBeforeOffset {
        offset: String,
        limit: String,
        verb: &'static str,
    },
    #[error("`-c/--components` and `-o/--offset` cannot be used together")]
    ComponentsAndOffset,
    #[error("`--with-deps` and `--with-dependents` widen a `-c` list; no `-c` was given")]
    WideningWithoutComponents,
    #[error("{}", dependents_message(dependents))]
    DependentsDeployed {
        /// The `-c` list that takes the dependents down too (for the hint).
        widened: Vec<String>,
        dependents: Vec<Dependent>,
    },
}

/// "the undeploy would take down components that deployed ones depend
/// on: `app` depends on `db` (`depends`)".
fn dependents_message(dependents: &[Dependent]) -> String {
    let details: Vec<String> = dependents.iter().map(ToString::to_string).collect();
    format!(
        "the undeploy would take down components that deployed ones depend on: {}",
        details.join("; ")
    )
}

impl PlanError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            PlanError::BadName(_) => {
                "rename the component in the stack and elaborate it again: its name becomes file names (its log is `STATE.logs/NAME.log`)".into()
            }
            PlanError::MissingDocument(_) | PlanError::ExtraDocument(_) => {
                "elaborate the stack again: `hub elaborate hub.yaml params.yaml`".into()
            }
            PlanError::Order { .. } => {
                "list every component exactly once in `lifecycle.order`, or remove it to derive it from `depends`".into()
            }
            PlanError::UnknownListed { suggestion: Some(known), .. }
            | PlanError::UnknownDependency { suggestion: Some(known), .. } => {
                format!("did you mean `{known}`? Use a name from the stack's `components:` list")
            }
            PlanError::UnknownSelected { name, available, .. } => {
                match hub_manifest::keys::suggest(name, available) {
                    Some(known) => format!("did you mean `{}`? Use a name from the stack's `components:` list", known.key),
                    None => "use a name from the stack's `components:` list".into(),
                }
            }
            PlanError::UnknownListed { .. } | PlanError::UnknownDependency { .. } => {
                "use a name from the stack's `components:` list".into()
            }
            PlanError::BadTimeout { component, .. } => format!(
                "for example `{component}: 15m` or `{component}: 1h30m`; `0` means no limit"
            ),
            PlanError::LimitBeforeOffset { .. } => {
                "undeploy runs in reverse order: the offset is the first component to run".into()
            }
            PlanError::ComponentsAndOffset => "use either `-c a,b` or `-o a [-l b]`".into(),
            PlanError::WideningWithoutComponents => {
                "name the components: `-c app --with-deps`; without `-c` every component runs".into()
            }
            PlanError::DependentsDeployed { widened, .. } => {
                format!(
                    "take the dependents down first, in the same run: `-c {}`; or add `-f/--force` to undeploy anyway",
                    widened.join(",")
                )
            }
        })
    }
}

/// The structural checks of §2 step 3. Returns `lifecycle.order`.
pub fn validate(elaborated: &Elaborated) -> Result<Vec<String>, PlanError> {
    let stack = &elaborated.stack;
    let names: Vec<String> = stack.components.iter().map(|c| c.name.clone()).collect();
    for name in &names {
        hub_manifest::names::check_component_name(name).map_err(PlanError::BadName)?;
        if elaborated.component(name).is_none() {
            return Err(PlanError::MissingDocument(name.clone()));
        }
    }
    let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
    for document in &elaborated.components {
        if !listed.contains(document.meta.name.as_str()) {
            return Err(PlanError::ExtraDocument(document.meta.name.clone()));
        }
    }
    let order = effective_lifecycle_order(elaborated)?;
    let known = |name: &str| listed.contains(name);
    let suggestion =
        |name: &str| hub_manifest::keys::suggest(name, &names).map(|s| s.key.to_string());
    for (list, entries) in [
        ("lifecycle.mandatory", &stack.lifecycle.mandatory),
        ("lifecycle.optional", &stack.lifecycle.optional),
    ] {
        if let Some(name) = entries.iter().find(|n| !known(n)) {
            return Err(PlanError::UnknownListed {
                list,
                name: name.clone(),
                suggestion: suggestion(name),
            });
        }
    }
    if let Some(name) = stack.lifecycle.timeouts.keys().find(|n| !known(n)) {
        return Err(PlanError::UnknownListed {
            list: "lifecycle.timeouts",
            name: name.clone(),
            suggestion: suggestion(name),
        });
    }
    // Issue 26, items 4, 6 and 7 (see `plan/triggers.rs`).
    let lifecycle = &stack.lifecycle;
    for (list, entries) in [
        (
            "lifecycle.triggerAlways",
            lifecycle.trigger_always.iter().collect(),
        ),
        (
            "lifecycle.ignoreChanges",
            lifecycle.ignore_changes.keys().collect(),
        ),
        (
            "lifecycle.replaceTriggeredBy",
            lifecycle.replace_triggered_by.keys().collect::<Vec<_>>(),
        ),
    ] {
        if let Some(name) = entries.into_iter().find(|n| !known(n)) {
            return Err(PlanError::UnknownListed {
                list,
                name: name.clone(),
                suggestion: suggestion(name),
            });
        }
    }
    if let Err(bad) = Timeouts::new(&stack.lifecycle.timeouts, None) {
        return Err(PlanError::BadTimeout {
            component: bad.component,
            value: bad.value,
            reason: bad.reason,
        });
    }
    for term in Tuning::parse(&stack.lifecycle.requires.optional).terms {
        if let Some(component) = term.component.filter(|c| !known(c)) {
            return Err(PlanError::UnknownListed {
                list: "lifecycle.requires.optional",
                suggestion: suggestion(&component),
                name: component,
            });
        }
    }
    for reference in &stack.components {
        if let Some(dep) = reference.depends.iter().find(|d| !known(d)) {
            return Err(PlanError::UnknownDependency {
                component: reference.name.clone(),
                name: dep.clone(),
                suggestion: suggestion(dep),
            });
        }
    }
    Ok(order)
}

/// `lifecycle.order`, or, when it is empty, the order derived from
/// `depends` as elaborate derives it.
fn effective_lifecycle_order(elaborated: &Elaborated) -> Result<Vec<String>, PlanError> {
    let stack = &elaborated.stack;
    let names: Vec<String> = stack.components.iter().map(|c| c.name.clone()).collect();
    if stack.lifecycle.order.is_empty() {
        let graph: Vec<(String, Vec<String>)> = stack
            .components
            .iter()
            .map(|c| (c.name.clone(), c.depends.to_vec()))
            .collect();
        return hub_elaborate::order::generate(&graph, &Default::default()).map_err(|_| {
            PlanError::Order {
                order: Vec::new(),
                components: names.clone(),
            }
        });
    }
    hub_elaborate::order::validate(&names, &stack.lifecycle.order).map_err(|_| {
        PlanError::Order {
            order: stack.lifecycle.order.clone(),
            components: names,
        }
    })?;
    Ok(stack.lifecycle.order.clone())
}

/// The ordering of a run, as the action plan ([`crate::plan::Plan`])
/// calls it: which components are selected, in which order and waves.
pub type Schedule = Plan;

/// The components of a run, in the order and selection it uses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub verb: Verb,
    /// `lifecycle.order`.
    pub order: Vec<String>,
    /// The order of this run: `order`, reversed for undeploy.
    pub effective: Vec<String>,
    /// The components that run, in effective order.
    pub selected: Vec<String>,
    /// The first component of an offset run (given, or guessed for undeploy).
    pub offset: Option<String>,
    /// `-c` was given: outputs are preloaded before each component.
    pub per_component: bool,
    /// The `-c` entries (with `--with-deps`, `--with-dependents` applied:
    /// `app+`), when one of them pulls in more than it names; else empty.
    pub requested: Vec<String>,
    /// The components those entries pulled in, in the order found.
    pub added: Vec<Added>,
    depends: HashMap<String, Vec<String>>,
    /// Components that say `depends: []` in a stack with a written order:
    /// they wait for nothing the order put before them.
    needs_nothing: HashSet<String>,
    after: HashMap<String, Upstream>,
    /// The reverse of `after`: who runs after each component.
    dependents: HashMap<String, Vec<String>>,
    mandatory: Vec<String>,
    optional: Vec<String>,
    pub tuning: Tuning,
}

impl Plan {
    /// The plan of a run. `has_entry` tells which components have a state
    /// entry (for the undeploy guess, §10.2); `None` without a state.
    pub fn new(
        elaborated: &Elaborated,
        order: Vec<String>,
        verb: Verb,
        selection: &Selection,
        guess: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<Plan, PlanError> {
        if !selection.components.is_empty() && selection.offset.is_some() {
            return Err(PlanError::ComponentsAndOffset);
        }
        if selection.components.is_empty() && (selection.with_deps || selection.with_dependents) {
            return Err(PlanError::WideningWithoutComponents);
        }
        check_selected(&order, selection)?;
        let stack = &elaborated.stack;
        let written = !stack.lifecycle.order.is_empty() && !elaborated.provenance.order_derived;
        let after = super::edges::upstream(elaborated, &order, written);
        let dependents = dependents_of(&order, &after);
        let (chosen, added) = resolve(selection, &after, &dependents);
        let mut effective = order.clone();
        if verb == Verb::Undeploy {
            effective.reverse();
        }
        let mut offset = selection.offset.clone();
        let mut guessed = false;
        if let (Verb::Undeploy, None, true, Some(has_entry)) =
            (verb, &offset, selection.components.is_empty(), guess)
        {
            if let Some(first) = effective
                .iter()
                .position(|c| has_entry(c))
                .filter(|&i| i > 0)
            {
                offset = Some(effective[first].clone());
                guessed = true;
            }
        }
        let position = |name: &Option<String>| {
            name.as_ref()
                .and_then(|n| effective.iter().position(|c| c == n))
        };
        let (from, to) = (position(&offset), position(&selection.limit));
        if let (Some(from), Some(to), false) = (from, to, guessed) {
            if to < from {
                return Err(PlanError::LimitBeforeOffset {
                    offset: effective[from].clone(),
                    limit: effective[to].clone(),
                    verb: verb.as_str(),
                });
            }
        }
        let selected = effective
            .iter()
            .enumerate()
            .filter(|(i, name)| {
                (selection.components.is_empty() || chosen.contains(name.as_str()))
                    && from.is_none_or(|f| *i >= f)
                    && to.is_none_or(|t| *i <= t)
            })
            .map(|(_, name)| name.clone())
            .collect();
        Ok(Plan {
            verb,
            order,
            effective,
            selected,
            offset,
            per_component: !selection.components.is_empty(),
            requested: if selection.widens() {
                selection.picks().map(|p| p.to_string()).collect()
            } else {
                Vec::new()
            },
            added,
            depends: stack
                .components
                .iter()
                .map(|c| (c.name.clone(), c.depends.to_vec()))
                .collect(),
            needs_nothing: match written {
                true => stack
                    .components
                    .iter()
                    .filter(|c| c.depends.is_written_empty())
                    .map(|c| c.name.clone())
                    .collect(),
                false => HashSet::new(),
            },
            after,
            dependents,
            mandatory: stack.lifecycle.mandatory.clone(),
            optional: stack.lifecycle.optional.clone(),
            tuning: Tuning::parse(&stack.lifecycle.requires.optional),
        })
    }

    /// §9.1: optional when `lifecycle.mandatory` is set and lacks it, or
    /// `lifecycle.optional` lists it. Mandatory by default.
    pub fn is_optional(&self, name: &str) -> bool {
        (!self.mandatory.is_empty() && !self.mandatory.iter().any(|m| m == name))
            || self.optional.iter().any(|o| o == name)
    }

    /// The component says `depends: []` and the stack's order is written:
    /// it does not wait for the components before it.
    pub fn needs_nothing(&self, name: &str) -> bool {
        self.needs_nothing.contains(name)
    }

    pub fn depends(&self, name: &str) -> &[String] {
        self.depends
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The selection as resolved, when a `-c` entry pulled in more than
    /// it names: `` `app+`: network, database, app (network: `app` depends
    /// on it, …) ``.
    pub fn selection_text(&self) -> Option<String> {
        if self.requested.is_empty() {
            return None;
        }
        let added: Vec<String> = self.added.iter().map(ToString::to_string).collect();
        let added = match added.is_empty() {
            true => "nothing added".to_string(),
            false => format!("added {}", added.join(", ")),
        };
        Some(format!(
            "{} → {} ({added})",
            self.requested.join(","),
            self.selected.join(", ")
        ))
    }

    /// Undeploy: the components outside the selection that `is_deployed`
    /// and depend on a selected one through `depends` or a capability
    /// they require from it.
    pub fn deployed_dependents(&self, is_deployed: &dyn Fn(&str) -> bool) -> Vec<Dependent> {
        let selected: HashSet<&str> = self.selected.iter().map(String::as_str).collect();
        let mut found = Vec::new();
        for name in &self.selected {
            for dependent in self.dependents.get(name).into_iter().flatten() {
                if selected.contains(dependent.as_str()) || !is_deployed(dependent) {
                    continue;
                }
                let reasons: Vec<String> = self
                    .reasons(dependent, name)
                    .iter()
                    .filter(|r| matches!(r, Reason::Depends | Reason::Requires(_)))
                    .map(ToString::to_string)
                    .collect();
                if !reasons.is_empty() {
                    found.push(Dependent {
                        name: dependent.clone(),
                        on: name.clone(),
                        reasons,
                    });
                }
            }
        }
        found
    }

    /// The last component of `lifecycle.order`.
    pub fn is_last(&self, name: &str) -> bool {
        self.order.last().is_some_and(|l| l == name)
    }

    /// A scheduler over the selected components.
    pub fn scheduler(&self, concurrency: usize) -> Scheduler {
        Scheduler::new(self.selected.clone(), self.waits_for(), concurrency)
    }

    /// The components `name` runs after in a deploy (see
    /// [`super::edges`]).
    pub fn after(&self, name: &str) -> &[String] {
        self.after
            .get(name)
            .map(|u| u.names.as_slice())
            .unwrap_or_default()
    }

    /// Every name the parameters of `name` may look up (see
    /// [`super::edges::Upstream::reads`]); `None` for a component the plan
    /// does not know.
    pub fn reads(&self, name: &str) -> Option<&HashSet<String>> {
        self.after.get(name).map(|u| &u.reads)
    }

    /// Why `name` runs after `before` in a deploy (empty when it does not
    /// directly).
    pub fn reasons(&self, name: &str, before: &str) -> &[Reason] {
        self.after
            .get(name)
            .map(|u| u.reasons_for(before))
            .unwrap_or_default()
    }

    /// What `name` waits for in this run, each with why: in a deploy the
    /// components it runs after, in an undeploy those that run after it.
    pub fn waits(&self, name: &str) -> Vec<(&str, &[Reason])> {
        match self.verb {
            Verb::Deploy => self
                .after(name)
                .iter()
                .map(|before| (before.as_str(), self.reasons(name, before)))
                .collect(),
            Verb::Undeploy => self
                .dependents
                .get(name)
                .into_iter()
                .flatten()
                .map(|after| (after.as_str(), self.reasons(after, name)))
                .collect(),
        }
    }

    /// For each selected component, the positions in `selected` it waits
    /// for (see [`super::schedule`]).
    pub fn waits_for(&self) -> Vec<BTreeSet<usize>> {
        super::schedule::waits_for(&self.selected, self.verb, &|name| self.after(name))
    }

    /// The selected components in waves: a wave runs once the previous
    /// ones are done, and its components can all run at once.
    pub fn waves(&self) -> Vec<Vec<String>> {
        super::schedule::waves(&self.selected, &self.waits_for())
    }

    /// Every component `name` runs after, directly or not (its upstream).
    pub fn upstream(&self, name: &str) -> BTreeSet<String> {
        super::schedule::reachable(name, &|n| self.after(n))
    }
}

/// The components the `-c` entries name, with those `app+` and `+app`
/// pull in. "Depends" is every edge of the deploy graph except the
/// written order's: `depends`, a capability required from a provider, an
/// output read. An order edge only says "comes later in the list the
/// author wrote"; following it, `app+` would pull in every component
/// written before `app`, which is what `-l app` already says.
fn resolve(
    selection: &Selection,
    after: &HashMap<String, Upstream>,
    dependents: &HashMap<String, Vec<String>>,
) -> (HashSet<String>, Vec<Added>) {
    let mut chosen: HashSet<String> = selection.picks().map(|p| p.name.to_string()).collect();
    let mut found: HashSet<String> = HashSet::new();
    let mut added = Vec::new();
    let upstream = |name: &str| -> Vec<String> {
        let Some(up) = after.get(name) else {
            return Vec::new();
        };
        up.names
            .iter()
            .zip(&up.reasons)
            .filter(|(_, reasons)| reasons.iter().any(|r| *r != Reason::Order))
            .map(|(n, _)| n.clone())
            .collect()
    };
    let downstream = |name: &str| -> Vec<String> {
        dependents
            .get(name)
            .into_iter()
            .flatten()
            .filter(|d| upstream(d).iter().any(|u| u == name))
            .cloned()
            .collect()
    };
    for pick in selection.picks() {
        let walks: [(bool, bool, &Neighbours); 2] = [
            (pick.dependencies, true, &upstream),
            (pick.dependents, false, &downstream),
        ];
        for (wanted, dependency, next) in walks {
            if !wanted {
                continue;
            }
            for name in closure(pick.name, next) {
                if chosen.contains(name.as_str()) || !found.insert(name.clone()) {
                    continue;
                }
                added.push(Added {
                    name,
                    from: pick.name.to_string(),
                    dependency,
                });
            }
        }
    }
    chosen.extend(found);
    (chosen, added)
}

/// The components one step away from a component in some direction.
type Neighbours<'a> = dyn Fn(&str) -> Vec<String> + 'a;

/// Every component reachable from `start` through `next`, nearest first.
fn closure(start: &str, next: &Neighbours) -> Vec<String> {
    let mut seen: HashSet<String> = HashSet::from([start.to_string()]);
    let mut queue = std::collections::VecDeque::from([start.to_string()]);
    let mut found = Vec::new();
    while let Some(name) = queue.pop_front() {
        for neighbour in next(&name) {
            if seen.insert(neighbour.clone()) {
                found.push(neighbour.clone());
                queue.push_back(neighbour);
            }
        }
    }
    found
}

/// Who runs after each component, in the order.
fn dependents_of(
    order: &[String],
    after: &HashMap<String, Upstream>,
) -> HashMap<String, Vec<String>> {
    let mut dependents: HashMap<String, Vec<String>> = HashMap::new();
    for name in order {
        for before in after
            .get(name)
            .map(|u| u.names.as_slice())
            .unwrap_or_default()
        {
            dependents
                .entry(before.clone())
                .or_default()
                .push(name.clone());
        }
    }
    dependents
}

fn check_selected(order: &[String], selection: &Selection) -> Result<(), PlanError> {
    let named = selection
        .picks()
        .map(|p| ("-c", p.name))
        .chain(selection.offset.iter().map(|c| ("-o", c.as_str())))
        .chain(selection.limit.iter().map(|c| ("-l", c.as_str())));
    for (flag, name) in named {
        if !order.iter().any(|c| c == name) {
            return Err(PlanError::UnknownSelected {
                flag,
                name: name.to_string(),
                available: order.to_vec(),
            });
        }
    }
    Ok(())
}

mod conditions;
pub use conditions::*;

#[cfg(test)]
mod tests;
