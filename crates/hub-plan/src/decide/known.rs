//! What a run knows of the stack's outputs and capabilities, and what each
//! component is shown of it.
//!
//! One at a time (`-j 1`), a component sees every output and capability
//! known so far, in the order they came. In a parallel run that would
//! depend on which components happened to finish first, so a component
//! sees what was known when the run started (or was preloaded for it),
//! with what its upstream components produced in this run on top; and the
//! totals (for the state) are replayed in the run's order, not the order
//! components ended in.

use super::upstream::Bits;
use hub_state::{self as state, CapturedOutput, SharedOutput, Snapshot};
use indexmap::IndexMap;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

/// What a run knows. Nothing here is a list of every output per
/// component: the outputs a component sees are a [`View`] (a list of
/// outputs to start from and which components' outputs go on top), looked
/// up by name through indexes; the snapshot the state records for a view
/// is built from the difference with the one it is written against,
/// worked out from which components the two views hold.
pub struct Known {
    parallel: bool,
    /// The lists views start from: the outputs known when the run
    /// started, then those preloaded (`-c`, `-o`).
    bases: Vec<Base>,
    /// Parallel runs: the base preloaded for a component.
    preloaded: HashMap<String, usize>,
    /// One at a time: the base now, and the position from which what
    /// components produce goes on top of it.
    current: (usize, usize),
    /// Capability → providers.
    pub provides: IndexMap<String, Vec<String>>,
    initial_provides: IndexMap<String, Vec<String>>,
    /// What each component produced in this run, by position in the run.
    produced: BTreeMap<usize, Produced>,
    /// The positions of the components that produced capabilities.
    capable: BTreeSet<usize>,
    /// Output name → the positions of the components that produced one.
    producers: HashMap<String, BTreeSet<usize>>,
    /// Component → its position, for those that produced.
    positions: HashMap<String, usize>,
    /// An output of a component other than the one that produced it:
    /// snapshots are then built by comparing whole lists.
    foreign: bool,
    /// Parallel undeploys: the components undeployed, by position.
    undeployed: BTreeMap<usize, String>,
    /// The snapshots handed out, by [`Snapshot::id`], with what they hold.
    snapshots: HashMap<usize, Recorded>,
}

struct Produced {
    name: String,
    /// As the run listed them (for the summary).
    names: Vec<String>,
    /// Without repeats: the last of each name, in the order of the lasts;
    /// shared with the snapshots that hold them.
    outputs: Vec<SharedOutput>,
    capabilities: Vec<String>,
}

/// A list of outputs with indexes.
struct Base {
    outputs: Vec<CapturedOutput>,
    by_name: HashMap<String, Vec<usize>>,
    by_key: HashMap<(String, String), Vec<usize>>,
    /// Two outputs with the same qualified name: their snapshot is built
    /// by comparing whole lists.
    repeats: bool,
}

impl Base {
    fn new(outputs: Vec<CapturedOutput>) -> Base {
        let mut by_name: HashMap<String, Vec<usize>> = HashMap::new();
        let mut by_key: HashMap<(String, String), Vec<usize>> = HashMap::new();
        let mut qualified = HashSet::new();
        let mut repeats = false;
        for (i, output) in outputs.iter().enumerate() {
            by_name.entry(output.name.clone()).or_default().push(i);
            let key = (output.component.clone(), output.name.clone());
            by_key.entry(key).or_default().push(i);
            repeats |= !qualified.insert(output.qualified_name());
        }
        Base {
            outputs,
            by_name,
            by_key,
            repeats,
        }
    }

    /// The one output of `component` named `name` (there are no repeats).
    fn get(&self, component: &str, name: &str) -> Option<&CapturedOutput> {
        let key = (component.to_string(), name.to_string());
        let at = self.by_key.get(&key)?.first()?;
        self.outputs.get(*at)
    }
}

/// The outputs a component sees (or holds once it ran): those of a base,
/// with what some components produced in this run on top, in the order of
/// their positions.
#[derive(Clone)]
pub struct View {
    base: usize,
    /// The component's position.
    at: usize,
    /// Its own outputs are on top too (after it ran).
    with_self: bool,
    scope: Scope,
}

#[derive(Clone)]
enum Scope {
    /// Parallel: the positions of the component's upstream.
    Upstream(Rc<Bits>),
    /// One at a time: every position from this one up to the component.
    From(usize),
}

impl View {
    /// Whether the outputs the component at `position` produced are part
    /// of the view.
    fn holds(&self, position: usize) -> bool {
        if position == self.at {
            return self.with_self;
        }
        match &self.scope {
            Scope::Upstream(bits) => bits.contains(position),
            Scope::From(first) => *first <= position && position < self.at,
        }
    }
}

/// Where an output is in a view's list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Place {
    Base(usize),
    Produced(usize, usize),
}

/// A snapshot handed out: the view it holds and how many outputs.
struct Recorded {
    snapshot: Snapshot,
    view: View,
    count: usize,
}

impl Known {
    pub fn new(
        outputs: Vec<CapturedOutput>,
        provides: IndexMap<String, Vec<String>>,
        parallel: bool,
    ) -> Known {
        Known {
            parallel,
            bases: vec![Base::new(outputs)],
            preloaded: HashMap::new(),
            current: (0, 0),
            initial_provides: provides.clone(),
            provides,
            produced: BTreeMap::new(),
            capable: BTreeSet::new(),
            producers: HashMap::new(),
            positions: HashMap::new(),
            foreign: false,
            undeployed: BTreeMap::new(),
            snapshots: HashMap::new(),
        }
    }

    /// The outputs a run starting at `name` (at `position`) sees (§4.3):
    /// from now on (one at a time), or for `name` alone (parallel).
    pub fn preload(&mut self, name: &str, position: usize, outputs: Vec<CapturedOutput>) {
        self.bases.push(Base::new(outputs));
        let base = self.bases.len() - 1;
        match self.parallel {
            true => {
                self.preloaded.insert(name.to_string(), base);
            }
            false => self.current = (base, position),
        }
    }

    /// The outputs the component `name` at `position` is expanded with;
    /// `upstream`: the positions of the components it runs after, directly
    /// or not (parallel runs only).
    pub fn visible(&self, name: &str, position: usize, upstream: Option<Rc<Bits>>) -> View {
        match (self.parallel, upstream) {
            (true, Some(upstream)) => View {
                base: self.preloaded.get(name).copied().unwrap_or(0),
                at: position,
                with_self: false,
                scope: Scope::Upstream(upstream),
            },
            _ => View {
                base: self.current.0,
                at: position,
                with_self: false,
                scope: Scope::From(self.current.1),
            },
        }
    }

    /// Every output known, oldest first (in a parallel run: in the run's
    /// order).
    pub fn outputs(&self) -> Vec<CapturedOutput> {
        let (base, first) = match self.parallel {
            true => (0, 0),
            false => self.current,
        };
        let all = View {
            base,
            at: usize::MAX,
            with_self: false,
            scope: Scope::From(first),
        };
        self.all(&all)
    }

    /// The capabilities a component's requirements are checked against.
    pub fn provides_for(&self, view: &View) -> IndexMap<String, Vec<String>> {
        if !self.parallel {
            return self.provides.clone();
        }
        self.replay_provides(&|position| view.holds(position))
    }

    /// Records what the component at `position` produced; returns the
    /// view of the outputs known right after it ran (its snapshot in the
    /// state).
    pub fn produced(
        &mut self,
        position: usize,
        name: &str,
        outputs: Vec<CapturedOutput>,
        capabilities: Vec<String>,
        upstream: Option<Rc<Bits>>,
    ) -> View {
        let mut view = self.visible(name, position, upstream);
        view.with_self = true;
        if !self.parallel {
            for capability in &capabilities {
                state::add_provider(&mut self.provides, capability, name);
            }
        }
        self.foreign |= outputs.iter().any(|o| o.component != name);
        let names = outputs.iter().map(|o| o.name.clone()).collect();
        let outputs = last_of_each(outputs);
        for output in &outputs {
            self.producers
                .entry(output.name.clone())
                .or_default()
                .insert(position);
        }
        self.positions.insert(name.to_string(), position);
        if !capabilities.is_empty() {
            self.capable.insert(position);
        }
        let produced = Produced {
            name: name.to_string(),
            names,
            outputs,
            capabilities,
        };
        self.produced.insert(position, produced);
        if self.parallel {
            self.provides = self.replay_provides(&|_| true);
        }
        view
    }

    /// The component at `position` was undeployed: it provides nothing.
    pub fn undeployed(&mut self, position: usize, name: &str) {
        match self.parallel {
            true => {
                self.undeployed.insert(position, name.to_string());
                self.provides = self.replay_provides(&|_| true);
            }
            false => state::remove_provider(&mut self.provides, name),
        }
    }

    /// The names of the outputs the component at `position` produced.
    pub fn output_names(&self, position: usize) -> Vec<String> {
        self.produced
            .get(&position)
            .map(|p| p.names.clone())
            .unwrap_or_default()
    }

    /// The capabilities at the start with what this run did, in its order.
    fn replay_provides(&self, include: &dyn Fn(usize) -> bool) -> IndexMap<String, Vec<String>> {
        let mut provides = self.initial_provides.clone();
        let capable = self.capable.iter().filter(|at| include(**at));
        for produced in capable.filter_map(|at| self.produced.get(at)) {
            for capability in &produced.capabilities {
                state::add_provider(&mut provides, capability, &produced.name);
            }
        }
        for name in self.undeployed.values() {
            state::remove_provider(&mut provides, name);
        }
        provides
    }

    // ---- a view's outputs ----------------------------------------------

    /// The view's outputs in order.
    pub fn all(&self, view: &View) -> Vec<CapturedOutput> {
        let base = &self.bases[view.base];
        let mut outputs: Vec<CapturedOutput> = base
            .outputs
            .iter()
            .filter(|o| !self.overridden(view, o))
            .cloned()
            .collect();
        for (_, produced) in self.held(view) {
            outputs.extend(produced.outputs.iter().map(|o| CapturedOutput::clone(o)));
        }
        outputs
    }

    /// The producers a view holds, in position order.
    fn held<'k>(&'k self, view: &'k View) -> Box<dyn Iterator<Item = (usize, &'k Produced)> + 'k> {
        match &view.scope {
            Scope::From(first) => {
                let upto = match view.with_self {
                    true => view.at.saturating_add(1),
                    false => view.at,
                };
                Box::new(
                    self.produced
                        .range(*first..upto.max(*first))
                        .map(|(&at, p)| (at, p)),
                )
            }
            Scope::Upstream(bits) => {
                let mut positions: Vec<usize> = bits.ones().collect();
                if view.with_self {
                    positions.push(view.at);
                    positions.sort_unstable();
                }
                Box::new(
                    positions
                        .into_iter()
                        .filter_map(|at| self.produced.get(&at).map(|p| (at, p))),
                )
            }
        }
    }

    /// A produced output of the same component and name hides this one.
    fn overridden(&self, view: &View, output: &CapturedOutput) -> bool {
        let Some(&position) = self.positions.get(&output.component) else {
            return self.foreign && self.produced_anywhere(view, output);
        };
        if self.foreign {
            return self.produced_anywhere(view, output);
        }
        view.holds(position)
            && self.produced[&position]
                .outputs
                .iter()
                .any(|o| o.name == output.name)
    }

    /// Slow: any producer in the view with this component and name.
    fn produced_anywhere(&self, view: &View, output: &CapturedOutput) -> bool {
        self.held(view).any(|(_, produced)| {
            produced
                .outputs
                .iter()
                .any(|o| o.component == output.component && o.name == output.name)
        })
    }

    /// The view's outputs named `name`, by place.
    fn named<'k>(
        &'k self,
        view: &View,
        name: &str,
        found: &mut BTreeMap<Place, &'k CapturedOutput>,
    ) {
        let base = &self.bases[view.base];
        for &at in base.by_name.get(name).into_iter().flatten() {
            let output = &base.outputs[at];
            if !self.overridden(view, output) {
                found.insert(Place::Base(at), output);
            }
        }
        for &position in self.producers.get(name).into_iter().flatten() {
            if view.holds(position) {
                let outputs = &self.produced[&position].outputs;
                for (i, output) in outputs.iter().enumerate().filter(|(_, o)| o.name == name) {
                    found.insert(Place::Produced(position, i), &**output);
                }
            }
        }
    }

    /// The view's outputs of `component` named `name`, by place.
    fn qualified<'k>(
        &'k self,
        view: &View,
        component: &str,
        name: Option<&str>,
        found: &mut BTreeMap<Place, &'k CapturedOutput>,
    ) {
        let base = &self.bases[view.base];
        let wanted =
            |o: &CapturedOutput| o.component == component && name.is_none_or(|n| o.name == n);
        let in_base: Box<dyn Iterator<Item = usize>> = match name {
            Some(name) => {
                let key = (component.to_string(), name.to_string());
                Box::new(
                    base.by_key
                        .get(&key)
                        .cloned()
                        .unwrap_or_default()
                        .into_iter(),
                )
            }
            None => Box::new(
                (0..base.outputs.len()).filter(|&at| base.outputs[at].component == component),
            ),
        };
        for at in in_base {
            let output = &base.outputs[at];
            if !self.overridden(view, output) {
                found.insert(Place::Base(at), output);
            }
        }
        let producers: Vec<usize> = match (self.foreign, self.positions.get(component)) {
            (false, Some(&position)) => vec![position],
            (false, None) => Vec::new(),
            (true, _) => self.held(view).map(|(at, _)| at).collect(),
        };
        for position in producers.into_iter().filter(|&at| view.holds(at)) {
            let outputs = &self.produced[&position].outputs;
            for (i, output) in outputs.iter().enumerate().filter(|(_, o)| wanted(o)) {
                found.insert(Place::Produced(position, i), &**output);
            }
        }
    }

    /// The outputs of the view a component whose parameters look up
    /// `reads` can see (see [`outputs_read`]), in the view's order; looked
    /// up by name, so the cost does not grow with the stack.
    pub fn read(&self, view: &View, reads: &HashSet<String>) -> Vec<&CapturedOutput> {
        read_closure(reads, |wanted| {
            let mut found = BTreeMap::new();
            for name in &wanted.plain {
                self.named(view, name, &mut found);
            }
            for (component, names) in &wanted.qualified {
                for name in names {
                    self.qualified(view, component, Some(name), &mut found);
                }
            }
            found.into_values().collect()
        })
    }

    /// The view's outputs of the components `components`, in its order.
    pub fn of_components(&self, view: &View, components: &[String]) -> Vec<CapturedOutput> {
        let mut found = BTreeMap::new();
        for component in components {
            self.qualified(view, component, None, &mut found);
        }
        found.into_values().cloned().collect()
    }

    // ---- snapshots ---------------------------------------------------------

    /// The snapshot of `view`, for a state entry written against
    /// `against`. When `against` is one this run handed out, only the
    /// components one of the two views holds and the other does not are
    /// compared; otherwise the whole lists are.
    pub fn snapshot(&mut self, view: &View, against: &Snapshot) -> Snapshot {
        self.snapshot_on(view, None, against)
    }

    /// [`Known::snapshot`], built on `preferred` when this run handed it
    /// out: a component's snapshot after it ran is best built on the one
    /// it had while running, as the entries written against either share
    /// it, and writing them then compares a few nodes, not whole lists.
    pub fn snapshot_on(
        &mut self,
        view: &View,
        preferred: Option<&Snapshot>,
        against: &Snapshot,
    ) -> Snapshot {
        let handed = |snapshot: &Snapshot| {
            let recorded = snapshot.id().and_then(|id| self.snapshots.get(&id));
            recorded.filter(|r| self.comparable(view, &r.view))
        };
        let recorded = preferred.and_then(handed).or_else(|| handed(against));
        let (snapshot, count) = match recorded {
            Some(recorded) => {
                let (set, removed, added) = self.delta(view, &recorded.view);
                let count = (recorded.count + added).saturating_sub(removed.len());
                match count {
                    0 => (Snapshot::default(), 0),
                    _ => (
                        Snapshot::changed_shared(&recorded.snapshot, set, removed),
                        count,
                    ),
                }
            }
            _ => {
                let outputs = self.all(view);
                let count = outputs.len();
                (Snapshot::derive(against, outputs), count)
            }
        };
        if let Some(id) = snapshot.id() {
            let recorded = Recorded {
                snapshot: snapshot.clone(),
                view: view.clone(),
                count,
            };
            self.snapshots.entry(id).or_insert(recorded);
        }
        snapshot
    }

    /// Whether the difference of two views can be worked out from the
    /// components they hold.
    fn comparable(&self, a: &View, b: &View) -> bool {
        a.base == b.base && !self.foreign && !self.bases[a.base].repeats
    }

    /// What `view` changes against `other` (same base): the outputs it
    /// sets (those this run produced shared, not copied) and the names it
    /// removes, both sorted; and how many of the outputs it sets `other`
    /// does not hold.
    fn delta(&self, view: &View, other: &View) -> (Vec<SharedOutput>, Vec<String>, usize) {
        let base = &self.bases[view.base];
        let (mut set, mut removed) = (Vec::new(), Vec::new());
        let mut added = 0;
        for position in self.differing(view, other) {
            let (mine, theirs) = (view.holds(position), other.holds(position));
            let Some(produced) = self.produced.get(&position).filter(|_| mine != theirs) else {
                continue;
            };
            for shared in &produced.outputs {
                let output: &CapturedOutput = shared;
                let before = base.get(&output.component, &output.name);
                let now = if mine { Some(output) } else { before };
                let then = if theirs { Some(output) } else { before };
                match (now, then) {
                    (Some(now), then) if then != Some(now) => {
                        added += usize::from(then.is_none());
                        set.push(match mine {
                            true => Arc::clone(shared),
                            false => Arc::new(now.clone()),
                        });
                    }
                    (None, Some(then)) => removed.push(then.qualified_name()),
                    _ => {}
                }
            }
        }
        set.sort_by(|a, b| state::qualified_cmp(a, b));
        removed.sort();
        (set, removed, added)
    }

    /// The positions one of two views may hold and the other not.
    fn differing(&self, a: &View, b: &View) -> BTreeSet<usize> {
        let mut positions: BTreeSet<usize> = match (&a.scope, &b.scope) {
            (Scope::Upstream(x), Scope::Upstream(y)) if Rc::ptr_eq(x, y) => BTreeSet::new(),
            (Scope::Upstream(x), Scope::Upstream(y)) => x.differing(y).collect(),
            (Scope::From(x), Scope::From(y)) => {
                let (low, high) = match x == y {
                    true => (a.at.min(b.at), a.at.max(b.at)),
                    false => (*x.min(y), a.at.max(b.at)),
                };
                self.produced
                    .range(low..high.max(low))
                    .map(|(&at, _)| at)
                    .collect()
            }
            _ => self.produced.keys().copied().collect(),
        };
        positions.extend([a.at, b.at]);
        positions
    }
}

/// The names the values of `outputs` holding `${...}` or `#{...}` look up.
fn names_in_values(
    outputs: &[&CapturedOutput],
    cel: &mut Option<Rc<hub_params::Cel>>,
) -> Vec<String> {
    let mut names = Vec::new();
    for output in outputs {
        if let yaml_serde::Value::String(text) = &output.value {
            if hub_params::expr::needs_expansion(text) {
                let cel = cel.get_or_insert_with(hub_params::Cel::shared);
                names.extend(hub_params::template_names(cel, text));
            }
        }
    }
    names
}

/// The outputs among `outputs` that a component whose parameters look up
/// `reads` can see: those named in `reads`, plainly or as
/// `component:name`, and, since a value holding `${...}` or `#{...}` is
/// expanded again where it is used, the outputs such values name in turn.
/// Expanding with these alone gives the same values as with all of
/// `outputs`, and the table the expansion builds no longer grows with the
/// stack.
pub(crate) fn outputs_read<'o>(
    outputs: &'o [CapturedOutput],
    reads: &HashSet<String>,
) -> Vec<&'o CapturedOutput> {
    read_closure(reads, |wanted| {
        outputs.iter().filter(|o| wanted.sees(o)).collect()
    })
}

/// [`outputs_read`] with the outputs a [`Wanted`] sees found by `find`
/// (in the list's order): `reads`, then the names the values found name,
/// until no new name comes up.
pub(crate) fn read_closure<'o>(
    reads: &HashSet<String>,
    find: impl Fn(&Wanted) -> Vec<&'o CapturedOutput>,
) -> Vec<&'o CapturedOutput> {
    let mut wanted = Wanted::new(reads.iter().cloned());
    let mut cel = None;
    loop {
        let seen = find(&wanted);
        if !wanted.add(names_in_values(&seen, &mut cel)) {
            return seen;
        }
    }
}

/// Names looked up: plain, and `component:name` split in two.
pub struct Wanted {
    pub plain: HashSet<String>,
    pub qualified: HashMap<String, HashSet<String>>,
}

impl Wanted {
    fn new(names: impl IntoIterator<Item = String>) -> Wanted {
        let mut wanted = Wanted {
            plain: HashSet::new(),
            qualified: HashMap::new(),
        };
        wanted.add(names);
        wanted
    }

    /// Adds names; whether any was new.
    fn add(&mut self, names: impl IntoIterator<Item = String>) -> bool {
        let mut added = false;
        for name in names {
            if let Some((component, output)) = name.split_once(':') {
                added |= self
                    .qualified
                    .entry(component.to_string())
                    .or_default()
                    .insert(output.to_string());
            }
            added |= self.plain.insert(name);
        }
        added
    }

    fn sees(&self, output: &CapturedOutput) -> bool {
        self.plain.contains(&output.name)
            || self
                .qualified
                .get(&output.component)
                .is_some_and(|names| names.contains(&output.name))
    }
}

/// `base` with `new` on top: an output of the same component and name is
/// replaced, and goes to the end (as if each of `new` were taken out of
/// the list and pushed, in turn). Linear in the lengths of both. (What a
/// run keeps of each component's outputs, [`last_of_each`], is checked
/// against it.)
#[cfg(test)]
pub(crate) fn overlay<'o>(
    mut base: Vec<CapturedOutput>,
    new: impl IntoIterator<Item = &'o CapturedOutput>,
) -> Vec<CapturedOutput> {
    let new: Vec<&CapturedOutput> = new.into_iter().collect();
    if new.is_empty() {
        return base;
    }
    let key = |o: &'o CapturedOutput| (o.component.as_str(), o.name.as_str());
    // The last of `new` with each key is the one that stays.
    let mut last: HashMap<(&str, &str), usize> = HashMap::with_capacity(new.len());
    for (i, output) in new.iter().enumerate() {
        last.insert(key(output), i);
    }
    base.retain(|o| !last.contains_key(&(o.component.as_str(), o.name.as_str())));
    base.extend(
        new.iter()
            .enumerate()
            .filter(|(i, output)| last.get(&key(output)) == Some(i))
            .map(|(_, output)| (*output).clone()),
    );
    base
}

/// `outputs` without repeats: the last of each component and name, in the
/// order of the lasts (what [`overlay`] on an empty list keeps), moved
/// into shared outputs rather than copied.
fn last_of_each(outputs: Vec<CapturedOutput>) -> Vec<SharedOutput> {
    let mut last: HashMap<(&str, &str), usize> = HashMap::with_capacity(outputs.len());
    for (i, output) in outputs.iter().enumerate() {
        last.insert((output.component.as_str(), output.name.as_str()), i);
    }
    let kept: HashSet<usize> = last.into_values().collect();
    // Into a list of its own: collected in place, the pointers would keep
    // the room of the outputs.
    let mut shared = Vec::with_capacity(kept.len());
    let each = outputs.into_iter().enumerate();
    shared.extend(
        each.filter(|(i, _)| kept.contains(i))
            .map(|(_, o)| Arc::new(o)),
    );
    shared
}

/// The outputs a run starts with: for a full undeploy the stack-level
/// ones (or the latest snapshot); otherwise none until components run or
/// are preloaded.
pub fn initial_outputs(
    plan: &crate::order::schedule::Schedule,
    state: Option<&hub_state::State>,
) -> Vec<state::CapturedOutput> {
    match (
        plan.verb,
        state,
        plan.offset.is_none() && !plan.per_component,
    ) {
        (crate::order::schedule::Verb::Undeploy, Some(state), true) => {
            state.outputs_for_full_undeploy(&plan.order).to_vec()
        }
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests;
