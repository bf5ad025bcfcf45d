//! The schedule of a run, decided before anything runs: the structural checks
//! of an elaborated stack, the effective order and the selection (`-c`
//! and `--affected`, resolved in [`super::select`], `-o`, `-l`, the
//! undeploy guess, the deployed dependents an undeploy would strand),
//! optional/mandatory components, the tuning of
//! `lifecycle.requires.optional`, requirement checks against the provides
//! map, and the scheduler that hands out components.
//!
//! The graph the scheduler ([`super::scheduler`]) works on: a component runs
//! after its `depends` and after the earlier providers of what it
//! `requires` ([`Schedule::after`]).

use super::edges::{Reason, Upstream};
use super::scheduler::Scheduler;
use super::select::{requested, resolve};
pub use super::select::{Added, Chosen, Pick, Relation, Selection};
pub use super::verb::Verb;
use crate::timeout::Timeouts;
use hub_manifest::Elaborated;
use indexmap::IndexMap;
use std::collections::{BTreeSet, HashMap, HashSet};

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
pub enum ScheduleError {
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
    #[error("`-c/--components` and `--offset` cannot be used together")]
    ComponentsAndOffset,
    #[error("`--affected` and `--offset` cannot be used together")]
    AffectedAndOffset,
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

impl ScheduleError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            ScheduleError::BadName(_) => {
                "rename the component in the stack and elaborate it again: its name becomes file names (its log is `STATE.logs/NAME.log`)".into()
            }
            ScheduleError::MissingDocument(_) | ScheduleError::ExtraDocument(_) => {
                "elaborate the stack again: `hub elaborate hub.yaml params.yaml`".into()
            }
            ScheduleError::Order { .. } => {
                "list every component exactly once in `lifecycle.order`, or remove it to derive it from `depends`".into()
            }
            ScheduleError::UnknownListed { suggestion: Some(known), .. }
            | ScheduleError::UnknownDependency { suggestion: Some(known), .. } => {
                format!("did you mean `{known}`? Use a name from the stack's `components:` list")
            }
            ScheduleError::UnknownSelected { name, available, .. } => {
                match hub_manifest::keys::suggest(name, available) {
                    Some(known) => format!("did you mean `{}`? Use a name from the stack's `components:` list", known.key),
                    None => "use a name from the stack's `components:` list".into(),
                }
            }
            ScheduleError::UnknownListed { .. } | ScheduleError::UnknownDependency { .. } => {
                "use a name from the stack's `components:` list".into()
            }
            ScheduleError::BadTimeout { component, .. } => format!(
                "for example `{component}: 15m` or `{component}: 1h30m`; `0` means no limit"
            ),
            ScheduleError::LimitBeforeOffset { .. } => {
                "undeploy runs in reverse order: the offset is the first component to run".into()
            }
            ScheduleError::ComponentsAndOffset => "use either `-c a,b` or `--offset a [--limit b]`".into(),
            ScheduleError::AffectedAndOffset => {
                "use either `--affected` (with `-c`, `--limit`) or `--offset a [--limit b]`".into()
            }
            ScheduleError::WideningWithoutComponents => {
                "name the components: `-c app --with-deps`; without `-c` every component runs".into()
            }
            ScheduleError::DependentsDeployed { widened, .. } => {
                format!(
                    "take the dependents down first, in the same run: `-c {}`; or add `-f/--force` to undeploy anyway",
                    widened.join(",")
                )
            }
        })
    }
}

/// The selection's flags go together, and name components of `order`.
fn check_selection(order: &[String], selection: &Selection) -> Result<(), ScheduleError> {
    if !selection.components.is_empty() && selection.offset.is_some() {
        return Err(ScheduleError::ComponentsAndOffset);
    }
    if selection.affected.is_some() && selection.offset.is_some() {
        return Err(ScheduleError::AffectedAndOffset);
    }
    if !selection.restricts() && (selection.with_deps || selection.with_dependents) {
        return Err(ScheduleError::WideningWithoutComponents);
    }
    check_selected(order, selection)
}

/// The structural checks of §2 step 3. Returns `lifecycle.order`.
pub fn validate(elaborated: &Elaborated) -> Result<Vec<String>, ScheduleError> {
    let stack = &elaborated.stack;
    let names: Vec<String> = stack.components.iter().map(|c| c.name.clone()).collect();
    check_documents(elaborated, &names)?;
    let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
    let order = effective_lifecycle_order(elaborated)?;
    let known = |name: &str| listed.contains(name);
    let suggestion =
        |name: &str| hub_manifest::keys::suggest(name, &names).map(|s| s.key.to_string());
    check_lifecycle_lists(&stack.lifecycle, &known, &suggestion)?;
    if let Err(bad) = Timeouts::new(&stack.lifecycle.timeouts, None) {
        return Err(ScheduleError::BadTimeout {
            component: bad.component,
            value: bad.value,
            reason: bad.reason,
        });
    }
    for term in Tuning::parse(&stack.lifecycle.requires.optional).terms {
        if let Some(component) = term.component.filter(|c| !known(c)) {
            return Err(ScheduleError::UnknownListed {
                list: "lifecycle.requires.optional",
                suggestion: suggestion(&component),
                name: component,
            });
        }
    }
    for reference in &stack.components {
        if let Some(dep) = reference.depends.iter().find(|d| !known(d)) {
            return Err(ScheduleError::UnknownDependency {
                component: reference.name.clone(),
                name: dep.clone(),
                suggestion: suggestion(dep),
            });
        }
    }
    Ok(order)
}

/// Every component has a valid name and a document, and every document
/// is a component's.
fn check_documents(elaborated: &Elaborated, names: &[String]) -> Result<(), ScheduleError> {
    for name in names {
        hub_manifest::names::check_component_name(name).map_err(ScheduleError::BadName)?;
        if elaborated.component(name).is_none() {
            return Err(ScheduleError::MissingDocument(name.clone()));
        }
    }
    let listed: HashSet<&str> = names.iter().map(String::as_str).collect();
    for document in &elaborated.components {
        if !listed.contains(document.meta.name.as_str()) {
            return Err(ScheduleError::ExtraDocument(document.meta.name.clone()));
        }
    }
    Ok(())
}

/// Every component the lifecycle's lists and maps name is one of the
/// stack's (`mandatory`, `optional`, `timeouts`, `watch`, `wants`,
/// `triggerAlways`, `ignoreChanges`, `replaceTriggeredBy`).
fn check_lifecycle_lists(
    lifecycle: &hub_manifest::Lifecycle,
    known: &dyn Fn(&str) -> bool,
    suggestion: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ScheduleError> {
    for (list, entries) in [
        ("lifecycle.mandatory", &lifecycle.mandatory),
        ("lifecycle.optional", &lifecycle.optional),
    ] {
        if let Some(name) = entries.iter().find(|n| !known(n)) {
            return Err(ScheduleError::UnknownListed {
                list,
                name: name.clone(),
                suggestion: suggestion(name),
            });
        }
    }
    if let Some(name) = lifecycle.timeouts.keys().find(|n| !known(n)) {
        return Err(ScheduleError::UnknownListed {
            list: "lifecycle.timeouts",
            name: name.clone(),
            suggestion: suggestion(name),
        });
    }
    let watched = lifecycle.watch.keys();
    let wanting = lifecycle.wants.keys();
    let wanted = lifecycle.wants.values().flatten();
    // Issue 26, items 4, 6 and 7 (see `plan/triggers.rs`).
    let named = watched
        .map(|n| ("lifecycle.watch", n))
        .chain(wanting.chain(wanted).map(|n| ("lifecycle.wants", n)))
        .chain(
            lifecycle
                .trigger_always
                .iter()
                .map(|n| ("lifecycle.triggerAlways", n)),
        )
        .chain(
            lifecycle
                .ignore_changes
                .keys()
                .map(|n| ("lifecycle.ignoreChanges", n)),
        )
        .chain(
            lifecycle
                .replace_triggered_by
                .keys()
                .map(|n| ("lifecycle.replaceTriggeredBy", n)),
        );
    for (list, name) in named {
        if !known(name) {
            return Err(ScheduleError::UnknownListed {
                list,
                name: name.clone(),
                suggestion: suggestion(name),
            });
        }
    }
    Ok(())
}

/// `lifecycle.order`, or, when it is empty, the order derived from
/// `depends` as elaborate derives it.
fn effective_lifecycle_order(elaborated: &Elaborated) -> Result<Vec<String>, ScheduleError> {
    let stack = &elaborated.stack;
    let names: Vec<String> = stack.components.iter().map(|c| c.name.clone()).collect();
    if stack.lifecycle.order.is_empty() {
        let graph: Vec<(String, Vec<String>)> = stack
            .components
            .iter()
            .map(|c| (c.name.clone(), c.depends.to_vec()))
            .collect();
        return hub_elaborate::order::generate(&graph, &Default::default()).map_err(|_| {
            ScheduleError::Order {
                order: Vec::new(),
                components: names.clone(),
            }
        });
    }
    hub_elaborate::order::validate(&names, &stack.lifecycle.order).map_err(|_| {
        ScheduleError::Order {
            order: stack.lifecycle.order.clone(),
            components: names,
        }
    })?;
    Ok(stack.lifecycle.order.clone())
}

/// The components of a run, in the order and selection it uses: which
/// are selected, in which order and waves. Not the action plan
/// ([`crate::plan::Schedule`]), which says what each of them will do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Schedule {
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
    /// `--affected`: the components it selected, each with why; `None`
    /// without the flag.
    pub affected: Option<Vec<Chosen>>,
    /// Who waits for whom.
    graph: Graph,
    mandatory: Vec<String>,
    optional: Vec<String>,
    pub tuning: Tuning,
}

/// The components' dependencies as the schedule reads them.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Graph {
    /// Each component's `depends`, as written.
    depends: HashMap<String, Vec<String>>,
    /// Components that say `depends: []` in a stack with a written order:
    /// they wait for nothing the order put before them.
    needs_nothing: HashSet<String>,
    after: HashMap<String, Upstream>,
    /// The reverse of `after`: who runs after each component.
    dependents: HashMap<String, Vec<String>>,
}

impl Graph {
    /// The graph of `stack`'s components, with the edges `after` and their
    /// reverse `dependents`; `written` when the stack's order is written.
    fn of(
        stack: &hub_manifest::Manifest,
        written: bool,
        after: HashMap<String, Upstream>,
        dependents: HashMap<String, Vec<String>>,
    ) -> Graph {
        Graph {
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
        }
    }
}

impl Schedule {
    /// The plan of a run. `has_entry` tells which components have a state
    /// entry (for the undeploy guess, §10.2); `None` without a state.
    pub fn new(
        elaborated: &Elaborated,
        order: Vec<String>,
        verb: Verb,
        selection: &Selection,
        guess: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<Schedule, ScheduleError> {
        check_selection(&order, selection)?;
        let stack = &elaborated.stack;
        let written = !stack.lifecycle.order.is_empty() && !elaborated.provenance.order_derived;
        let after = super::edges::upstream(elaborated, &order, written);
        let dependents = dependents_of(&order, &after);
        let (mut chosen, mut added) = resolve(selection, &after, &dependents);
        super::select::add_wanted(&stack.lifecycle.wants, &order, &mut chosen, &mut added);
        let mut effective = order.clone();
        if verb == Verb::Undeploy {
            effective.reverse();
        }
        let mut offset = selection.offset.clone();
        let mut guessed = false;
        if let (Verb::Undeploy, None, true, Some(has_entry)) =
            (verb, &offset, !selection.restricts(), guess)
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
                return Err(ScheduleError::LimitBeforeOffset {
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
                (!selection.restricts() || chosen.contains(name.as_str()))
                    && from.is_none_or(|f| *i >= f)
                    && to.is_none_or(|t| *i <= t)
            })
            .map(|(_, name)| name.clone())
            .collect();
        Ok(Schedule {
            verb,
            order,
            effective,
            selected,
            offset,
            per_component: selection.restricts(),
            requested: requested(selection, &added),
            added,
            affected: selection.affected.clone(),
            graph: Graph::of(stack, written, after, dependents),
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
        self.graph.needs_nothing.contains(name)
    }

    pub fn depends(&self, name: &str) -> &[String] {
        self.graph
            .depends
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }

    /// The dependents `--with-dependents` added to an `--affected`
    /// selection: as under `--changed`, each runs only if its own inputs
    /// changed or an output it reads does (issue 26, item 4).
    pub fn judged_dependents(&self) -> HashSet<String> {
        let Some(affected) = &self.affected else {
            return HashSet::new();
        };
        self.added
            .iter()
            .filter(|a| a.relation == Relation::Dependent)
            .filter(|a| !affected.iter().any(|c| c.name == a.name))
            .map(|a| a.name.clone())
            .collect()
    }

    /// The selection as resolved, when a `-c` entry pulled in more than
    /// it names: `` `app+`: network, database, app (network: `app` depends
    /// on it, …) ``.
    pub fn selection_text(&self) -> Option<String> {
        if self.requested.is_empty() {
            return None;
        }
        let mut details: Vec<String> = self
            .affected
            .iter()
            .flatten()
            .map(|c| format!("affected {} ({})", c.name, c.why))
            .collect();
        if self.affected.as_ref().is_some_and(Vec::is_empty) {
            details.push("nothing affected".into());
        }
        let added: Vec<String> = self.added.iter().map(ToString::to_string).collect();
        details.push(match added.is_empty() {
            true => "nothing added".to_string(),
            false => format!("added {}", added.join(", ")),
        });
        let selected = match self.selected.is_empty() {
            true => "nothing".to_string(),
            false => self.selected.join(", "),
        };
        Some(format!(
            "{} → {selected} ({})",
            self.requested.join(","),
            details.join("; ")
        ))
    }

    /// Why `name` is selected when no `-c` entry names it: `wanted by
    /// app`, `` affected: `app/main.tf` changed ``; `None` otherwise.
    pub fn selected_because(&self, name: &str) -> Option<String> {
        self.selection_reasons().remove(name)
    }

    /// [`Schedule::selected_because`] for every component it names, in
    /// one pass over the lists rather than a search per component.
    pub fn selection_reasons(&self) -> std::collections::HashMap<&str, String> {
        let mut reasons = std::collections::HashMap::new();
        for chosen in self.affected.iter().flatten() {
            reasons
                .entry(chosen.name.as_str())
                .or_insert_with(|| format!("affected: {}", chosen.why));
        }
        for added in &self.added {
            reasons
                .entry(added.name.as_str())
                .or_insert_with(|| added.why());
        }
        reasons
    }

    /// Undeploy: the components outside the selection that `is_deployed`
    /// and depend on a selected one through `depends` or a capability
    /// they require from it.
    pub fn deployed_dependents(&self, is_deployed: &dyn Fn(&str) -> bool) -> Vec<Dependent> {
        let selected: HashSet<&str> = self.selected.iter().map(String::as_str).collect();
        let mut found = Vec::new();
        for name in &self.selected {
            for dependent in self.graph.dependents.get(name).into_iter().flatten() {
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
        self.graph
            .after
            .get(name)
            .map(|u| u.names.as_slice())
            .unwrap_or_default()
    }

    /// Every name the parameters of `name` may look up (see
    /// [`super::edges::Upstream::reads`]); `None` for a component the plan
    /// does not know.
    pub fn reads(&self, name: &str) -> Option<&HashSet<String>> {
        self.graph.after.get(name).map(|u| &u.reads)
    }

    /// Why `name` runs after `before` in a deploy (empty when it does not
    /// directly).
    pub fn reasons(&self, name: &str, before: &str) -> &[Reason] {
        self.graph
            .after
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
                .graph
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
        super::scheduler::waits_for(&self.selected, self.verb, &|name| self.after(name))
    }

    /// The selected components in waves: a wave runs once the previous
    /// ones are done, and its components can all run at once.
    pub fn waves(&self) -> Vec<Vec<String>> {
        super::scheduler::waves(&self.selected, &self.waits_for())
    }

    /// Every component `name` runs after, directly or not (its upstream).
    pub fn upstream(&self, name: &str) -> BTreeSet<String> {
        super::scheduler::reachable(name, &|n| self.after(n))
    }
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

/// Every name `-c`, `-o` and `-l` give is a component of the stack:
/// checked first, before anything (a state) is required or read.
pub fn check_selected(order: &[String], selection: &Selection) -> Result<(), ScheduleError> {
    let named = selection
        .picks()
        .map(|p| ("-c", p.name))
        .chain(selection.offset.iter().map(|c| ("--offset", c.as_str())))
        .chain(selection.limit.iter().map(|c| ("--limit", c.as_str())));
    for (flag, name) in named {
        if !order.iter().any(|c| c == name) {
            return Err(ScheduleError::UnknownSelected {
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
