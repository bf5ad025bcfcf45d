//! Output snapshots shared between component entries.
//!
//! Every component entry of a state holds the captured outputs of the
//! whole stack known right after the component ran (§11.3). Held as full
//! lists, N entries of a stack whose every component adds an output make
//! N²/2 outputs, in memory and on disk. A [`Snapshot`] is instead an
//! immutable node: the outputs it sets or changes against a base snapshot,
//! and the names of the base's outputs it drops. Entries recorded one after
//! the other share everything but their differences; cloning a snapshot
//! copies a pointer; the full list is reconstructed when a reader asks for
//! it ([`Snapshot::to_vec`]).
//!
//! How snapshots are written (full lists, or differences against the
//! previous entry of `lifecycle.order`) is the renderer's choice and does
//! not depend on how they are chained here: see [`Snapshot::delta_from`].

use super::captured::CapturedOutput;
use std::borrow::Borrow;
use std::cmp::Ordering;
use std::collections::btree_map::Entry;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// The captured outputs of a stack at one moment, sorted by qualified name
/// (`component:name`).
#[derive(Clone, Default)]
pub struct Snapshot(Option<Arc<Node>>);

struct Node {
    base: Snapshot,
    /// Outputs added or changed against `base`, sorted by qualified name;
    /// shared with the run that produced them and with the other nodes
    /// that set the same output (see [`Snapshot::changed_shared`]).
    set: Vec<Shared>,
    /// Qualified names of `base`'s outputs this snapshot does not hold.
    removed: Vec<String>,
    /// Place in the chain of bases: 1 for a node without a base.
    depth: u32,
    /// For a lookup by name, what this node and the few below it decide,
    /// merged; `None` when it would cover this node alone.
    ladder: Option<Ladder>,
}

/// An output held by one or more nodes (and the run that produced it).
pub type Shared = Arc<CapturedOutput>;

/// What the nodes from one node down to `skip` (excluded) decide, the
/// newest decision of each name kept. A node at depth `d` covers the
/// lowest set bit of `d` many nodes (as a Fenwick tree does), so a lookup
/// in a chain of `n` nodes visits at most log2(n) ladders instead of every
/// node, and the ladders of a chain hold n·log2(n) decisions at most.
struct Ladder {
    skip: Snapshot,
    /// Where the outputs it sets are held, sorted by qualified name: the
    /// outputs stay in the nodes that set them, not copied here.
    set: Vec<Held>,
    removed: Vec<String>,
}

/// An output a ladder sets: the node whose `set` holds it (`None`: the
/// ladder's own node) and its place there.
#[derive(Clone)]
struct Held {
    node: Option<Arc<Node>>,
    at: u32,
}

/// The outputs a node decides for a lookup: its own `set`, or its
/// ladder's, held in the nodes below.
#[derive(Clone, Copy)]
enum Outputs<'a> {
    Own(&'a [Shared]),
    Held(&'a Node, &'a [Held]),
}

impl<'a> Outputs<'a> {
    fn len(self) -> usize {
        match self {
            Outputs::Own(set) => set.len(),
            Outputs::Held(_, held) => held.len(),
        }
    }

    fn get(self, at: usize) -> &'a CapturedOutput {
        match self {
            Outputs::Own(set) => &set[at],
            Outputs::Held(owner, held) => {
                let held = &held[at];
                &held.node.as_deref().unwrap_or(owner).set[held.at as usize]
            }
        }
    }

    /// The first place whose output's qualified name is not below `key`.
    fn lower_bound(self, key: &str) -> usize {
        let (mut low, mut high) = (0, self.len());
        while low < high {
            let middle = low + (high - low) / 2;
            match qualified_bytes(self.get(middle)).lt(key.bytes()) {
                true => low = middle + 1,
                false => high = middle,
            }
        }
        low
    }

    /// Where the output at `at` is held, for a ladder over the node of
    /// `owner` (this node, as an `Arc`).
    fn held(self, owner: &Arc<Node>, at: usize) -> Held {
        match self {
            Outputs::Own(_) => Held {
                node: Some(owner.clone()),
                at: at as u32,
            },
            Outputs::Held(_, held) => Held {
                node: Some(held[at].node.clone().unwrap_or_else(|| owner.clone())),
                at: held[at].at,
            },
        }
    }
}

/// What a snapshot changes against another one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delta {
    /// Outputs added or changed, sorted by qualified name.
    pub set: Vec<CapturedOutput>,
    /// Qualified names of outputs dropped, sorted.
    pub removed: Vec<String>,
}

impl Snapshot {
    /// A snapshot holding `outputs` (sorted here; no base).
    pub fn from_outputs(outputs: Vec<CapturedOutput>) -> Snapshot {
        Snapshot::from_shared(shared(outputs))
    }

    /// [`Snapshot::from_outputs`] of outputs held elsewhere too.
    pub fn from_shared(mut outputs: Vec<Shared>) -> Snapshot {
        if outputs.is_empty() {
            return Snapshot::default();
        }
        outputs.sort_by(|a, b| qualified_cmp(a, b));
        Snapshot::node(Snapshot::default(), outputs, Vec::new())
    }

    /// A snapshot holding `outputs`, sharing with `base` what the two have
    /// in common. Costs one pass over `outputs` and `base`.
    pub fn derive(base: &Snapshot, outputs: Vec<CapturedOutput>) -> Snapshot {
        Snapshot::derive_shared(base, shared(outputs))
    }

    /// [`Snapshot::derive`] of outputs already shared (those of a
    /// snapshot read from a file: see [`Snapshot::into_shared`]), moved
    /// into the new node rather than copied.
    pub(crate) fn derive_shared(base: &Snapshot, mut outputs: Vec<Shared>) -> Snapshot {
        if base.is_empty() || outputs.is_empty() {
            return Snapshot::from_shared(outputs);
        }
        outputs.sort_by(|a, b| qualified_cmp(a, b));
        let (set, removed) = diff_parts(&base.refs(), &outputs);
        // A base shared with little is not worth following on every read.
        if set.len() + removed.len() >= outputs.len() {
            return Snapshot::node(Snapshot::default(), outputs, Vec::new());
        }
        Snapshot::node(base.clone(), set, removed)
    }

    /// `base` changed by `delta` (as read from a file: see
    /// [`Snapshot::delta_from`]).
    pub fn apply(base: &Snapshot, delta: Delta) -> Snapshot {
        Snapshot::apply_shared(base, shared(delta.set), delta.removed)
    }

    /// [`Snapshot::apply`] of outputs already shared (see
    /// [`Snapshot::derive_shared`]).
    pub(crate) fn apply_shared(
        base: &Snapshot,
        mut set: Vec<Shared>,
        mut removed: Vec<String>,
    ) -> Snapshot {
        if base.is_empty() {
            return Snapshot::from_shared(set);
        }
        set.sort_by(|a, b| qualified_cmp(a, b));
        removed.sort();
        removed.dedup();
        let removes_only = set.is_empty() && !removed.is_empty();
        let snapshot = Snapshot::node(base.clone(), set, removed);
        // Never written so (an empty snapshot is written as none), but a
        // file may say it: an empty snapshot has no node.
        match removes_only && snapshot.to_vec().is_empty() {
            true => Snapshot::default(),
            false => snapshot,
        }
    }

    /// `base` changed by `delta`, which is already what [`diff`] would
    /// give against `base` (sorted, nothing unchanged) and leaves at least
    /// one output: for a caller that worked the difference out without
    /// reconstructing either list.
    pub fn changed(base: &Snapshot, delta: Delta) -> Snapshot {
        let set = shared(delta.set);
        Snapshot::changed_shared(base, set, delta.removed)
    }

    /// [`Snapshot::changed`] by outputs held elsewhere too (`set`, sorted
    /// by qualified name, and `removed`, sorted): the node shares them
    /// instead of holding copies. A run hands each output it produced to
    /// every snapshot that sets it (a component's, and those of the
    /// components that see it), which would otherwise copy it each time.
    pub fn changed_shared(base: &Snapshot, set: Vec<Shared>, removed: Vec<String>) -> Snapshot {
        if set.is_empty() && removed.is_empty() {
            return base.clone();
        }
        match base.is_empty() {
            true => Snapshot::from_shared(set),
            false => Snapshot::node(base.clone(), set, removed),
        }
    }

    /// Tells this node from others (the same for clones of it); `None`
    /// for an empty snapshot.
    pub fn id(&self) -> Option<usize> {
        self.0.as_ref().map(|node| Arc::as_ptr(node) as usize)
    }

    fn node(base: Snapshot, set: Vec<Shared>, removed: Vec<String>) -> Snapshot {
        let depth = base.depth() + 1;
        let ladder = Ladder::build(&base, &set, &removed, depth);
        Snapshot(Some(Arc::new(Node {
            base,
            set,
            removed,
            depth,
            ladder,
        })))
    }

    fn depth(&self) -> u32 {
        self.0.as_ref().map_or(0, |node| node.depth)
    }

    /// No outputs: every node holds at least one.
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// The same node (not only equal outputs).
    pub fn same(&self, other: &Snapshot) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// The outputs, sorted by qualified name, as shared ones: moved out of
    /// a node that holds them all and that nothing else holds (a snapshot
    /// as read from a file), else copied. Reading a state turns each
    /// entry's snapshot into one chained to the previous entry's without
    /// copying a value.
    pub(crate) fn into_shared(self) -> Vec<Shared> {
        let Some(node) = self.0 else {
            return Vec::new();
        };
        match Arc::try_unwrap(node) {
            Ok(node) if node.base.is_empty() && node.removed.is_empty() => node.set,
            Ok(node) => shared(Snapshot(Some(Arc::new(node))).to_vec()),
            Err(node) => shared(Snapshot(Some(node)).to_vec()),
        }
    }

    /// The outputs, sorted by qualified name.
    pub fn to_vec(&self) -> Vec<CapturedOutput> {
        self.refs().into_iter().cloned().collect()
    }

    /// The outputs, sorted by qualified name, without copying them.
    fn refs(&self) -> Vec<&CapturedOutput> {
        let chain = self.chain();
        if let [root] = chain[..] {
            return root.set.iter().map(|o| &**o).collect();
        }
        // The newest node that sets or removes a name decides it.
        let mut set: HashSet<(&str, &str)> = HashSet::new();
        let mut removed: HashSet<&str> = HashSet::new();
        let mut outputs: Vec<&CapturedOutput> = Vec::new();
        for node in &chain {
            for output in node.set.iter().map(|o| &**o) {
                let key = (output.component.as_str(), output.name.as_str());
                let decided = !set.insert(key)
                    || (!removed.is_empty() && removed.contains(output.qualified_name().as_str()));
                if !decided {
                    outputs.push(output);
                }
            }
            removed.extend(node.removed.iter().map(String::as_str));
        }
        outputs.sort_by(|a, b| qualified_cmp(a, b));
        outputs
    }

    /// The outputs, sorted by qualified name (reconstructed: see
    /// [`Snapshot::to_vec`]).
    pub fn iter(&self) -> std::vec::IntoIter<CapturedOutput> {
        self.to_vec().into_iter()
    }

    /// The outputs of `component` only, sorted by name. Only that
    /// component's outputs are looked at (through the ladders, as
    /// [`Snapshot::find`] looks one up), and only they are copied.
    pub fn outputs_of(&self, component: &str) -> Vec<CapturedOutput> {
        if component.is_empty() {
            let mut outputs = self.to_vec();
            outputs.retain(|o| o.component.is_empty());
            return outputs;
        }
        self.outputs_through_ladders(component)
            .into_iter()
            .cloned()
            .collect()
    }

    /// The names of the outputs of `component`, sorted: what
    /// [`Snapshot::outputs_of`] gives, without copying the values.
    pub fn output_names_of(&self, component: &str) -> Vec<String> {
        if component.is_empty() {
            return self
                .outputs_of(component)
                .into_iter()
                .map(|o| o.name)
                .collect();
        }
        self.outputs_through_ladders(component)
            .into_iter()
            .map(|o| o.name.clone())
            .collect()
    }

    /// From this node to its root, newest first.
    fn chain(&self) -> Vec<&Node> {
        let mut chain = Vec::new();
        let mut at = self.0.as_deref();
        while let Some(node) = at {
            chain.push(node);
            at = node.base.0.as_deref();
        }
        chain
    }

    /// What this snapshot changes against `base`: the smallest delta, the
    /// same whichever way the two were chained in memory, so that a state
    /// written, read and written again gives the same text.
    pub fn delta_from(&self, base: &Snapshot) -> Delta {
        if self.same(base) {
            return Delta::default();
        }
        if let Some(node) = &self.0 {
            // Derived nodes hold the smallest delta; nodes read from a file
            // hold what `delta_from` wrote.
            if node.base.same(base) {
                return Delta {
                    set: node.set.iter().map(|o| (**o).clone()).collect(),
                    removed: node.removed.clone(),
                };
            }
        }
        if let Some(delta) = self.delta_near(base) {
            return delta;
        }
        diff(&base.refs(), &self.refs())
    }

    /// The delta against `base` through their nearest common ancestor:
    /// only the names set or removed on the way down to it from either
    /// side are compared, each looked up through the ladders. `None` when
    /// the way is long enough that comparing the two lists whole costs
    /// less (snapshots of unrelated runs, or a component that ran while
    /// most of the stack did).
    fn delta_near(&self, base: &Snapshot) -> Option<Delta> {
        let budget = NEAR.max((self.depth() as usize + base.depth() as usize) / 4);
        let (mine, theirs) = paths_to_common(self, base, budget)?;
        // A name held twice is compared one output at a time by the whole
        // comparison; a lookup by name would see only the first.
        if mine.iter().chain(&theirs).any(|node| node.repeats_a_name()) {
            return None;
        }
        let mut keys: Vec<String> = mine
            .iter()
            .chain(&theirs)
            .flat_map(|node| {
                let set = node.set.iter().map(|o| o.qualified_name());
                set.chain(node.removed.iter().cloned())
            })
            .collect();
        keys.sort();
        keys.dedup();
        let mut delta = Delta::default();
        for key in keys {
            let now = self.find(&key);
            let before = base.find(&key);
            match now {
                Some(output) if Some(output) != before => delta.set.push(output.clone()),
                None if before.is_some() => delta.removed.push(key),
                _ => {}
            }
        }
        Some(delta)
    }

    /// The output named `key` (`component:name`), if the snapshot holds it.
    pub fn find(&self, key: &str) -> Option<&CapturedOutput> {
        let mut at = self.0.as_deref();
        while let Some(node) = at {
            let (set, removed, below) = node.covers();
            if let Some(decided) = decision(set, removed, key) {
                return decided;
            }
            at = below.0.as_deref();
        }
        None
    }

    /// [`Snapshot::outputs_of`] for a named component: the component's
    /// outputs are a run of each sorted set, found through the ladders,
    /// so the cost is what the component holds times log2 of the chain.
    fn outputs_through_ladders(&self, component: &str) -> Vec<&CapturedOutput> {
        let prefix = format!("{component}:");
        // The newest decision of each name wins: `Some` set, `None` removed.
        let mut decided: BTreeMap<&str, Option<&CapturedOutput>> = BTreeMap::new();
        let mut at = self.0.as_deref();
        while let Some(node) = at {
            let (set, removed, below) = node.covers();
            let from = set.lower_bound(&prefix);
            for output in (from..set.len()).map(|i| set.get(i)) {
                if !qualified_bytes(output)
                    .take(prefix.len())
                    .eq(prefix.bytes())
                {
                    break;
                }
                if output.component == component {
                    decided.entry(output.name.as_str()).or_insert(Some(output));
                }
            }
            let from = removed.partition_point(|r| r.as_str() < prefix.as_str());
            for name in removed[from..]
                .iter()
                .map_while(|r| r.strip_prefix(&prefix))
            {
                decided.entry(name).or_insert(None);
            }
            at = below.0.as_deref();
        }
        decided.into_values().flatten().collect()
    }
}

/// One snapshot's outputs held whole, by qualified name, with indexes by
/// name and by component: for a walk that moves from one snapshot to
/// the next by their difference instead of reconstructing each.
#[derive(Default)]
pub struct Index {
    /// By qualified name: the snapshot's order.
    pub outputs: std::collections::BTreeMap<String, CapturedOutput>,
    pub by_name: std::collections::HashMap<String, std::collections::BTreeSet<String>>,
    pub by_component: std::collections::HashMap<String, std::collections::BTreeSet<String>>,
}

impl Index {
    /// Sets an output; the one it replaced.
    pub fn set(&mut self, output: CapturedOutput) -> Option<CapturedOutput> {
        let key = output.qualified_name();
        let names = self.by_name.entry(output.name.clone()).or_default();
        names.insert(key.clone());
        let of_component = self.by_component.entry(output.component.clone());
        of_component.or_default().insert(key.clone());
        self.outputs.insert(key, output)
    }

    pub fn remove(&mut self, key: &str) {
        if let Some(output) = self.outputs.remove(key) {
            if let Some(keys) = self.by_name.get_mut(&output.name) {
                keys.remove(key);
            }
            if let Some(keys) = self.by_component.get_mut(&output.component) {
                keys.remove(key);
            }
        }
    }

    /// The outputs of `component`, sorted by name (as
    /// [`Snapshot::outputs_of`] gives them).
    pub fn of_component(&self, component: &str) -> Vec<CapturedOutput> {
        let keys = self.by_component.get(component).into_iter().flatten();
        keys.filter_map(|key| self.outputs.get(key))
            .cloned()
            .collect()
    }
}

/// For each of `snapshots` (in a walk's order), the outputs of its
/// component in it, as [`Snapshot::outputs_of`] gives them; `None` when a
/// snapshot's own node sets two outputs of the same qualified name (ask
/// each). Each costs what its component holds (see
/// [`Snapshot::outputs_of`]), not the whole snapshot.
pub fn outputs_of_each(snapshots: &[(&str, &Snapshot)]) -> Option<Vec<Vec<CapturedOutput>>> {
    let repeats = |snapshot: &Snapshot| {
        let set = snapshot.0.as_deref().map_or(&[][..], |node| &node.set[..]);
        set.windows(2)
            .any(|pair| qualified_cmp(&pair[0], &pair[1]) == Ordering::Equal)
    };
    if snapshots.iter().any(|(_, snapshot)| repeats(snapshot)) {
        return None;
    }
    let each = snapshots.iter();
    Some(each.map(|(component, s)| s.outputs_of(component)).collect())
}

/// The fewest steps down the chains a common ancestor is looked for in
/// (more for long chains: see [`Snapshot::delta_near`]).
const NEAR: usize = 64;

/// The nodes from `a` and from `b` down to their nearest common ancestor
/// (excluded), newest first; `None` when reaching it takes more than
/// `budget` steps. The deeper side steps first, so both meet at the
/// ancestor's depth.
fn paths_to_common<'s>(
    a: &'s Snapshot,
    b: &'s Snapshot,
    budget: usize,
) -> Option<(Vec<&'s Node>, Vec<&'s Node>)> {
    let (mut a, mut b) = (a, b);
    let (mut from_a, mut from_b) = (Vec::new(), Vec::new());
    while !a.same(b) {
        if from_a.len() + from_b.len() >= budget {
            return None;
        }
        if a.depth() >= b.depth() {
            let node = a.0.as_deref()?;
            from_a.push(node);
            a = &node.base;
        } else {
            let node = b.0.as_deref()?;
            from_b.push(node);
            b = &node.base;
        }
    }
    Some((from_a, from_b))
}

impl Node {
    /// It sets, or removes, a qualified name twice.
    fn repeats_a_name(&self) -> bool {
        let sets_twice = self
            .set
            .windows(2)
            .any(|pair| qualified_cmp(&pair[0], &pair[1]) == Ordering::Equal);
        sets_twice || self.removed.windows(2).any(|pair| pair[0] == pair[1])
    }

    /// What this node decides for a lookup, with its ladder when it has
    /// one, and the snapshot below what that covers.
    fn covers(&self) -> (Outputs<'_>, &[String], &Snapshot) {
        match &self.ladder {
            Some(ladder) => (
                Outputs::Held(self, &ladder.set),
                &ladder.removed,
                &ladder.skip,
            ),
            None => (Outputs::Own(&self.set), &self.removed, &self.base),
        }
    }
}

impl Ladder {
    /// The ladder of a new node at `depth` over `base`; `None` when the
    /// node covers itself alone.
    fn build(base: &Snapshot, set: &[Shared], removed: &[String], depth: u32) -> Option<Ladder> {
        let span = depth & depth.wrapping_neg();
        if span <= 1 {
            return None;
        }
        // Newest first: the first decision of a name wins. The new node's
        // own outputs are held by it (`node: None`), the others by the
        // nodes below, which the new node keeps alive through its base.
        let mut decided: BTreeMap<String, Option<Held>> = BTreeMap::new();
        for (at, output) in set.iter().enumerate() {
            let held = Held {
                node: None,
                at: at as u32,
            };
            decided.entry(output.qualified_name()).or_insert(Some(held));
        }
        note_removals(&mut decided, removed);
        let mut covered = 1;
        let mut at = base;
        while covered < span {
            let owner = at.0.as_ref()?;
            let (set, removed, below) = owner.covers();
            for i in 0..set.len() {
                if let Entry::Vacant(vacant) = decided.entry(set.get(i).qualified_name()) {
                    vacant.insert(Some(set.held(owner, i)));
                }
            }
            note_removals(&mut decided, removed);
            covered += owner.depth & owner.depth.wrapping_neg();
            at = below;
        }
        let mut ladder = Ladder {
            skip: at.clone(),
            set: Vec::new(),
            removed: Vec::new(),
        };
        // In the order of the names: the order of `qualified_cmp`.
        for (name, held) in decided {
            match held {
                Some(held) => ladder.set.push(held),
                None => ladder.removed.push(name),
            }
        }
        ladder.set.shrink_to_fit();
        Some(ladder)
    }
}

/// `outputs`, each moved into a shared output. Into a list of its own:
/// collected in place, the pointers would keep the room of the outputs.
fn shared(outputs: Vec<CapturedOutput>) -> Vec<Shared> {
    let mut shared = Vec::with_capacity(outputs.len());
    shared.extend(outputs.into_iter().map(Arc::new));
    shared
}

/// Notes the removals of `removed` for names not decided yet.
fn note_removals(decided: &mut BTreeMap<String, Option<Held>>, removed: &[String]) {
    for name in removed {
        decided.entry(name.clone()).or_insert(None);
    }
}

/// What sorted `set` and `removed` say of `key`: `Some(Some(output))` set,
/// `Some(None)` removed, `None` nothing.
fn decision<'a>(
    set: Outputs<'a>,
    removed: &[String],
    key: &str,
) -> Option<Option<&'a CapturedOutput>> {
    let at = set.lower_bound(key);
    if at < set.len() && qualified_bytes(set.get(at)).eq(key.bytes()) {
        return Some(Some(set.get(at)));
    }
    let removed = removed.binary_search_by(|r| r.as_str().cmp(key));
    removed.is_ok().then_some(None)
}

/// Orders outputs as their qualified names (`component:name`) sort,
/// without building the names.
pub fn qualified_cmp(a: &CapturedOutput, b: &CapturedOutput) -> Ordering {
    qualified_bytes(a).cmp(qualified_bytes(b))
}

fn qualified_bytes(output: &CapturedOutput) -> impl Iterator<Item = u8> + '_ {
    let separator: &[u8] = match output.component.is_empty() {
        true => b"",
        false => b":",
    };
    output
        .component
        .bytes()
        .chain(separator.iter().copied())
        .chain(output.name.bytes())
}

/// The delta turning `before` into `after` (both sorted by qualified name).
fn diff<B: Borrow<CapturedOutput>, A: Borrow<CapturedOutput>>(before: &[B], after: &[A]) -> Delta {
    let after: Vec<&CapturedOutput> = after.iter().map(Borrow::borrow).collect();
    let (set, removed) = diff_parts(before, &after);
    Delta {
        set: set.into_iter().cloned().collect(),
        removed,
    }
}

/// [`diff`] as the outputs of `after` it sets (shared ones shared, not
/// copied) and the names it removes.
fn diff_parts<B: Borrow<CapturedOutput>, A: Borrow<CapturedOutput> + Clone>(
    before: &[B],
    after: &[A],
) -> (Vec<A>, Vec<String>) {
    let mut delta = (Vec::new(), Vec::new());
    let (mut i, mut j) = (0, 0);
    while i < before.len() || j < after.len() {
        let order = match (before.get(i), after.get(j)) {
            (Some(b), Some(a)) => qualified_cmp(b.borrow(), a.borrow()),
            (Some(_), None) => Ordering::Less,
            (None, _) => Ordering::Greater,
        };
        match order {
            Ordering::Less => {
                delta.1.push(before[i].borrow().qualified_name());
                i = past_repeats(before, i);
            }
            Ordering::Greater => {
                delta.0.push(after[j].clone());
                j += 1;
            }
            Ordering::Equal => {
                if before[i].borrow() != after[j].borrow() {
                    delta.0.push(after[j].clone());
                }
                i = past_repeats(before, i);
                j += 1;
            }
        }
    }
    delta
}

/// The index after `outputs[at]` and the outputs right behind it with the
/// same qualified name. A snapshot read from a file (or preloaded) may
/// hold a name twice; a node on top of it shows the first only, so the
/// repeats are neither compared nor removed: removing one would remove
/// the name.
fn past_repeats<B: Borrow<CapturedOutput>>(outputs: &[B], at: usize) -> usize {
    let first = outputs[at].borrow();
    let same = |o: &B| qualified_cmp(o.borrow(), first) == Ordering::Equal;
    at + 1 + outputs[at + 1..].iter().take_while(|o| same(o)).count()
}

impl PartialEq for Snapshot {
    fn eq(&self, other: &Snapshot) -> bool {
        self.same(other) || self.refs() == other.refs()
    }
}

impl fmt::Debug for Snapshot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.to_vec()).finish()
    }
}

impl From<Vec<CapturedOutput>> for Snapshot {
    fn from(outputs: Vec<CapturedOutput>) -> Snapshot {
        Snapshot::from_outputs(outputs)
    }
}

impl serde::Serialize for Snapshot {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_vec().serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Snapshot {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Snapshot, D::Error> {
        let outputs = Option::<Vec<CapturedOutput>>::deserialize(deserializer)?;
        Ok(Snapshot::from_outputs(outputs.unwrap_or_default()))
    }
}

#[cfg(test)]
mod tests;
