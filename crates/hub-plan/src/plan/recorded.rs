//! The outputs the state says a deploy's component would see, for
//! `hub plan`, without a list of every output per component.
//!
//! A component sees the snapshot of the nearest earlier entry of the order
//! with one ([`State::outputs_before`]), with the snapshots of its
//! dependencies merged in ([`State::merge_dependency_outputs`]). The walk
//! goes through the order once, so the snapshot is kept whole in an index
//! and moved from one entry's snapshot to the next by their difference;
//! each output changed or removed on the way is noted with where. A
//! dependency's snapshot differs from the one in the index only by outputs
//! noted since that dependency's entry, so only those are compared.
//! Whatever does not fit (no earlier snapshot, a dependency later in the
//! order, two outputs of the same name in a snapshot) is done as before,
//! on whole lists.

use crate::decide::known::{read_closure, Wanted};
use hub_state::{CapturedOutput, Snapshot, SnapshotIndex as Current, State};
use indexmap::IndexMap;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The state's snapshots along the order, one at a time.
pub(crate) struct Recorded<'s> {
    state: &'s State,
    /// The entries of the order with a non-empty snapshot: position in the
    /// order, snapshot.
    chain: Vec<(usize, &'s Snapshot)>,
    /// Entry → its place in `chain`.
    places: HashMap<&'s str, usize>,
    /// Positions in the order.
    positions: HashMap<&'s str, usize>,
    /// The place in `chain` whose snapshot `current` holds.
    at: Option<usize>,
    current: Current,
    /// Every output changed or removed from one place to the next: the
    /// place, the output's qualified name (in increasing places).
    changes: Vec<(usize, String)>,
    /// Each output's values up to `at`: from which place it held which
    /// (none: removed), borrowed from the snapshot that set it.
    history: HashMap<String, Vec<(usize, Option<Kept<'s>>)>>,
    /// A snapshot held two outputs of the same qualified name.
    irregular: bool,
}

/// An output as the history keeps it: the snapshot's own, borrowed (16
/// bytes a step where a copy was 232, plus its strings: in a deep graph
/// the outputs that change from one entry to the next are many), or a
/// copy should the snapshot not give back what its difference said.
enum Kept<'s> {
    Borrowed(&'s CapturedOutput),
    Copied(Box<CapturedOutput>),
}

impl Kept<'_> {
    fn output(&self) -> &CapturedOutput {
        match self {
            Kept::Borrowed(output) => output,
            Kept::Copied(output) => output,
        }
    }
}

/// What a component sees: the index's snapshot with what its dependencies'
/// snapshots change, then outputs added after it.
pub struct Seen<'r> {
    current: &'r Current,
    /// Outputs of `current` replaced, by qualified name.
    replaced: HashMap<String, CapturedOutput>,
    /// Outputs `current` does not hold, in the order they were added.
    added: IndexMap<String, CapturedOutput>,
}

/// Where an output is in the list a component sees.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Place<'k> {
    Snapshot(&'k str),
    Added(usize),
}

impl<'s> Recorded<'s> {
    pub fn new(state: &'s State, order: &'s [String]) -> Recorded<'s> {
        let mut chain = Vec::new();
        let mut places = HashMap::new();
        for (position, name) in order.iter().enumerate() {
            let Some(entry) = state.components.get(name) else {
                continue;
            };
            if !entry.captured_outputs.is_empty() {
                places.insert(name.as_str(), chain.len());
                chain.push((position, &entry.captured_outputs));
            }
        }
        Recorded {
            state,
            chain,
            places,
            positions: order
                .iter()
                .enumerate()
                .map(|(i, name)| (name.as_str(), i))
                .collect(),
            at: None,
            current: Current::default(),
            changes: Vec::new(),
            history: HashMap::new(),
            irregular: false,
        }
    }

    /// What the component `name`, depending on `depends`, sees; `None`
    /// where the whole lists are needed (see the module's comment).
    pub fn seen(&mut self, name: &str, depends: &[String]) -> Option<Seen<'_>> {
        let position = *self.positions.get(name)?;
        // The nearest earlier entry with a snapshot.
        let place = self.chain.partition_point(|(at, _)| *at < position);
        let place = place.checked_sub(1)?;
        if self.at.is_some_and(|at| at > place) {
            self.restart();
        }
        self.advance(place);
        if self.irregular {
            return None;
        }
        let mut seen = Seen {
            current: &self.current,
            replaced: HashMap::new(),
            added: IndexMap::new(),
        };
        for dependency in depends.iter().rev() {
            let Some(entry) = self.state.components.get(dependency) else {
                continue;
            };
            let snapshot = &entry.captured_outputs;
            if snapshot.is_empty() {
                continue;
            }
            // A dependency later in the order: whole lists.
            let from = *self
                .places
                .get(dependency.as_str())
                .filter(|&&p| p <= place)?;
            // Changed since the dependency's entry, or by a dependency
            // merged before it.
            let first = self.changes.partition_point(|(at, _)| *at <= from);
            let mut keys: BTreeSet<&str> = self.changes[first..]
                .iter()
                .map(|(_, key)| key.as_str())
                .collect();
            let merged: Vec<String> = seen
                .replaced
                .keys()
                .chain(seen.added.keys())
                .cloned()
                .collect();
            keys.extend(merged.iter().map(String::as_str));
            for key in keys {
                if let Some(output) = value_at(&self.history, key, from) {
                    seen.merge(key, output);
                }
            }
        }
        Some(seen)
    }

    /// Back to before the first snapshot (the walk went back).
    fn restart(&mut self) {
        self.at = None;
        self.current = Current::default();
        self.changes.clear();
        self.history.clear();
        self.irregular = false;
    }

    /// Moves the index to the snapshot at `place` in the chain.
    fn advance(&mut self, place: usize) {
        while self.at.is_none_or(|at| at < place) {
            let next = self.at.map_or(0, |at| at + 1);
            let snapshot: &'s Snapshot = self.chain[next].1;
            let delta = match self.at {
                None => snapshot.delta_from(&Snapshot::default()),
                Some(at) => snapshot.delta_from(self.chain[at].1),
            };
            let mut keys = HashSet::new();
            for output in delta.set {
                let key = output.qualified_name();
                self.irregular |= !keys.insert(key.clone());
                let values = self.history.entry(key.clone()).or_default();
                let kept = match snapshot.find(&key) {
                    Some(found) if *found == output => Kept::Borrowed(found),
                    _ => Kept::Copied(Box::new(output.clone())),
                };
                values.push((next, Some(kept)));
                if self.current.set(output).is_some() {
                    self.changes.push((next, key));
                }
            }
            for key in delta.removed {
                self.current.remove(&key);
                let values = self.history.entry(key.clone()).or_default();
                values.push((next, None));
                self.changes.push((next, key));
            }
            self.at = Some(next);
        }
    }
}

/// The output named `key` in the snapshot at `place` of the chain.
fn value_at<'h>(
    history: &'h HashMap<String, Vec<(usize, Option<Kept<'_>>)>>,
    key: &str,
    place: usize,
) -> Option<&'h CapturedOutput> {
    let values = history.get(key)?;
    let upto = values.partition_point(|(at, _)| *at <= place);
    values
        .get(upto.checked_sub(1)?)?
        .1
        .as_ref()
        .map(Kept::output)
}

impl Seen<'_> {
    /// A dependency's output, as [`State::merge_dependency_outputs`]
    /// merges it: added when new, replacing one of a different value.
    fn merge(&mut self, key: &str, output: &CapturedOutput) {
        if let Some(added) = self.added.get_mut(key) {
            if added.value != output.value {
                *added = output.clone();
            }
            return;
        }
        let now = self
            .replaced
            .get(key)
            .or_else(|| self.current.outputs.get(key));
        match now {
            None => {
                self.added.insert(key.to_string(), output.clone());
            }
            Some(now) if now.value == output.value => {}
            Some(_) => {
                self.replaced.insert(key.to_string(), output.clone());
            }
        }
    }

    /// Adds outputs after those seen (stand-ins for outputs only known
    /// after a deploy).
    pub fn extend(&mut self, outputs: Vec<CapturedOutput>) {
        for output in outputs {
            let key = format!("\u{0}{}", self.added.len());
            self.added.insert(key, output);
        }
    }

    /// Whether an output of `component` named `name` is seen.
    pub fn holds(&self, component: &str, name: &str) -> bool {
        let mut found = BTreeMap::new();
        self.qualified(component, Some(name), &mut found);
        !found.is_empty()
    }

    fn output<'k>(&'k self, key: &'k str) -> Option<&'k CapturedOutput> {
        self.replaced
            .get(key)
            .or_else(|| self.current.outputs.get(key))
    }

    fn named<'k>(&'k self, name: &str, found: &mut BTreeMap<Place<'k>, &'k CapturedOutput>) {
        for key in self.current.by_name.get(name).into_iter().flatten() {
            if let Some(output) = self.output(key) {
                found.insert(Place::Snapshot(key), output);
            }
        }
        for (i, (_, output)) in self.added.iter().enumerate() {
            if output.name == name {
                found.insert(Place::Added(i), output);
            }
        }
    }

    fn qualified<'k>(
        &'k self,
        component: &str,
        name: Option<&str>,
        found: &mut BTreeMap<Place<'k>, &'k CapturedOutput>,
    ) {
        let wanted =
            |o: &CapturedOutput| o.component == component && name.is_none_or(|n| o.name == n);
        for key in self
            .current
            .by_component
            .get(component)
            .into_iter()
            .flatten()
        {
            if let Some(output) = self.output(key).filter(|o| wanted(o)) {
                found.insert(Place::Snapshot(key), output);
            }
        }
        for (i, (_, output)) in self.added.iter().enumerate() {
            if wanted(output) {
                found.insert(Place::Added(i), output);
            }
        }
    }

    /// The outputs a component whose parameters look up `reads` can see
    /// (see [`crate::decide::known::outputs_read`]), in order.
    pub fn read(&self, reads: &HashSet<String>) -> Vec<CapturedOutput> {
        let found = read_closure(reads, |wanted: &Wanted| {
            let mut found = BTreeMap::new();
            for name in &wanted.plain {
                self.named(name, &mut found);
            }
            for (component, names) in &wanted.qualified {
                for name in names {
                    self.qualified(component, Some(name), &mut found);
                }
            }
            found.into_values().collect()
        });
        found.into_iter().cloned().collect()
    }

    /// The outputs of `components`, in order.
    pub fn of_components(&self, components: &[String]) -> Vec<CapturedOutput> {
        let mut found = BTreeMap::new();
        for component in components {
            self.qualified(component, None, &mut found);
        }
        found.into_values().cloned().collect()
    }

    /// Every output seen, in order.
    #[cfg(test)]
    fn all(&self) -> Vec<CapturedOutput> {
        let snapshot = self
            .current
            .outputs
            .keys()
            .filter_map(|key| self.output(key));
        snapshot.chain(self.added.values()).cloned().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::known::outputs_read;
    use hub_manifest::diag::Warnings;
    use hub_state::test_support::text_output as output;
    use hub_state::test_support::{keys, Dice};
    use hub_state::Delta;

    /// A state whose entries' snapshots are chained as a file's are: each
    /// the previous one with outputs added, changed and removed; now and
    /// then an entry without a snapshot or without an entry.
    fn state(dice: &mut Dice, order: &[String]) -> State {
        let mut state = State::default();
        let mut previous = Snapshot::default();
        for name in order {
            if dice.roll(8) == 0 {
                continue;
            }
            let entry = state.component_mut(name);
            if dice.roll(6) == 0 {
                continue;
            }
            let mut delta = Delta::default();
            for _ in 0..dice.roll(4) {
                let owner = &order[dice.roll(order.len())];
                let value = match dice.roll(4) {
                    0 => format!("${{{}.out}}", order[dice.roll(order.len())]),
                    _ => format!("v{}", dice.roll(3)),
                };
                let output_name = match dice.roll(3) {
                    0 => "shared".to_string(),
                    _ => format!("{owner}.out"),
                };
                delta.set.push(output(owner, &output_name, &value));
            }
            let held = previous.to_vec();
            if !held.is_empty() && dice.roll(3) == 0 {
                delta
                    .removed
                    .push(held[dice.roll(held.len())].qualified_name());
            }
            delta.set.sort_by(hub_state::qualified_cmp);
            delta
                .set
                .dedup_by(|a, b| a.qualified_name() == b.qualified_name());
            delta
                .removed
                .retain(|r| delta.set.iter().all(|o| &o.qualified_name() != r));
            let snapshot = Snapshot::apply(&previous, delta);
            entry.captured_outputs = snapshot.clone();
            if !snapshot.is_empty() {
                previous = snapshot;
            }
        }
        state
    }

    /// On random chains, what a component sees equals the whole list the
    /// state builds for it (the nearest earlier snapshot with its
    /// dependencies' merged in), and so do the outputs read from it and
    /// those of its dependencies.
    #[test]
    fn the_index_along_the_order_sees_what_the_whole_lists_hold() {
        let mut fast = 0;
        for seed in 0..300u64 {
            let mut dice = Dice(seed);
            let size = 2 + dice.roll(12);
            let order: Vec<String> = (0..size).map(|i| format!("c{i}")).collect();
            let state = state(&mut dice, &order);
            let mut recorded = Recorded::new(&state, &order);
            let mut position = 0;
            for _ in 0..size + 3 {
                // Mostly forwards, now and then back.
                position = match dice.roll(6) {
                    0 => dice.roll(size),
                    _ => (position + 1).min(size - 1),
                };
                let name = &order[position];
                let depends: Vec<String> = (0..dice.roll(3))
                    .map(|_| order[dice.roll(size)].clone())
                    .collect();
                let mut whole = state.outputs_before(&order, name);
                state.merge_dependency_outputs(&mut whole, &depends, &mut Warnings::default());
                let Some(seen) = recorded.seen(name, &depends) else {
                    continue;
                };
                fast += 1;
                let context = format!("seed {seed}, {name} after {depends:?}");
                assert_eq!(keys(&seen.all()), keys(&whole), "{context}");
                let reads: HashSet<String> = (0..dice.roll(4))
                    .map(|_| match dice.roll(3) {
                        0 => "shared".to_string(),
                        1 => format!("c{}:shared", dice.roll(size)),
                        _ => format!("c{}.out", dice.roll(size)),
                    })
                    .collect();
                let read: Vec<CapturedOutput> =
                    outputs_read(&whole, &reads).into_iter().cloned().collect();
                assert_eq!(keys(&seen.read(&reads)), keys(&read), "{context}");
                let mut of_depends = whole.clone();
                of_depends.retain(|o| depends.contains(&o.component));
                assert_eq!(
                    keys(&seen.of_components(&depends)),
                    keys(&of_depends),
                    "{context}"
                );
            }
        }
        assert!(fast > 1000, "the index answered {fast} times");
    }
}
