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

use super::model::CapturedOutput;
use std::collections::HashSet;
use std::fmt;
use std::sync::Arc;

/// The captured outputs of a stack at one moment, sorted by qualified name
/// (`component:name`).
#[derive(Clone, Default)]
pub struct Snapshot(Option<Arc<Node>>);

struct Node {
    base: Snapshot,
    /// Outputs added or changed against `base`, sorted by qualified name.
    set: Vec<CapturedOutput>,
    /// Qualified names of `base`'s outputs this snapshot does not hold.
    removed: Vec<String>,
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
    pub fn from_outputs(mut outputs: Vec<CapturedOutput>) -> Snapshot {
        if outputs.is_empty() {
            return Snapshot::default();
        }
        outputs.sort_by_cached_key(CapturedOutput::qualified_name);
        Snapshot::node(Snapshot::default(), outputs, Vec::new())
    }

    /// A snapshot holding `outputs`, sharing with `base` what the two have
    /// in common. Costs one pass over `outputs` and `base`.
    pub fn derive(base: &Snapshot, outputs: Vec<CapturedOutput>) -> Snapshot {
        if base.is_empty() || outputs.is_empty() {
            return Snapshot::from_outputs(outputs);
        }
        let count = outputs.len();
        let derived = Snapshot::from_outputs(outputs);
        let delta = derived.delta_from(base);
        // A base shared with little is not worth following on every read.
        if delta.set.len() + delta.removed.len() >= count {
            return derived;
        }
        Snapshot::node(base.clone(), delta.set, delta.removed)
    }

    /// `base` changed by `delta` (as read from a file: see
    /// [`Snapshot::delta_from`]).
    pub fn apply(base: &Snapshot, mut delta: Delta) -> Snapshot {
        if base.is_empty() {
            return Snapshot::from_outputs(delta.set);
        }
        delta.set.sort_by_cached_key(CapturedOutput::qualified_name);
        delta.removed.sort();
        delta.removed.dedup();
        let removes_only = delta.set.is_empty() && !delta.removed.is_empty();
        let snapshot = Snapshot::node(base.clone(), delta.set, delta.removed);
        // Never written so (an empty snapshot is written as none), but a
        // file may say it: an empty snapshot has no node.
        match removes_only && snapshot.to_vec().is_empty() {
            true => Snapshot::default(),
            false => snapshot,
        }
    }

    fn node(base: Snapshot, set: Vec<CapturedOutput>, removed: Vec<String>) -> Snapshot {
        Snapshot(Some(Arc::new(Node { base, set, removed })))
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

    /// The outputs, sorted by qualified name.
    pub fn to_vec(&self) -> Vec<CapturedOutput> {
        let chain = self.chain();
        if let [root] = chain[..] {
            return root.set.clone();
        }
        // The newest node that sets or removes a name decides it.
        let mut decided: HashSet<String> = HashSet::new();
        let mut outputs: Vec<&CapturedOutput> = Vec::new();
        for node in &chain {
            for output in &node.set {
                let key = output.qualified_name();
                if !decided.contains(&key) {
                    outputs.push(output);
                    decided.insert(key);
                }
            }
            decided.extend(node.removed.iter().cloned());
        }
        let mut outputs: Vec<CapturedOutput> = outputs.into_iter().cloned().collect();
        outputs.sort_by_cached_key(CapturedOutput::qualified_name);
        outputs
    }

    /// The outputs, sorted by qualified name (reconstructed: see
    /// [`Snapshot::to_vec`]).
    pub fn iter(&self) -> std::vec::IntoIter<CapturedOutput> {
        self.to_vec().into_iter()
    }

    /// The outputs of `component` only.
    pub fn outputs_of(&self, component: &str) -> Vec<CapturedOutput> {
        let mut outputs = self.to_vec();
        outputs.retain(|o| o.component == component);
        outputs
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
                    set: node.set.clone(),
                    removed: node.removed.clone(),
                };
            }
        }
        diff(&base.to_vec(), &self.to_vec())
    }
}

/// The delta turning `before` into `after` (both sorted by qualified name).
fn diff(before: &[CapturedOutput], after: &[CapturedOutput]) -> Delta {
    let mut delta = Delta::default();
    let (mut i, mut j) = (0, 0);
    while i < before.len() || j < after.len() {
        let order = match (before.get(i), after.get(j)) {
            (Some(b), Some(a)) => b.qualified_name().cmp(&a.qualified_name()),
            (Some(_), None) => std::cmp::Ordering::Less,
            (None, _) => std::cmp::Ordering::Greater,
        };
        match order {
            std::cmp::Ordering::Less => {
                delta.removed.push(before[i].qualified_name());
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                delta.set.push(after[j].clone());
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                if before[i] != after[j] {
                    delta.set.push(after[j].clone());
                }
                i += 1;
                j += 1;
            }
        }
    }
    delta
}

impl PartialEq for Snapshot {
    fn eq(&self, other: &Snapshot) -> bool {
        self.same(other) || self.to_vec() == other.to_vec()
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
mod tests {
    use super::*;
    use crate::state::merge::tests::output;

    fn names(snapshot: &Snapshot) -> Vec<String> {
        snapshot
            .to_vec()
            .iter()
            .map(|o| {
                format!(
                    "{}={}",
                    o.qualified_name(),
                    crate::state::scalar_text(&o.value)
                )
            })
            .collect()
    }

    #[test]
    fn a_derived_snapshot_holds_only_its_difference() {
        let a = Snapshot::from_outputs(vec![output("b", "x", "1"), output("a", "x", "1")]);
        let b = Snapshot::derive(
            &a,
            vec![
                output("a", "x", "1"),
                output("b", "x", "2"),
                output("c", "x", "3"),
            ],
        );
        assert_eq!(names(&b), ["a:x=1", "b:x=2", "c:x=3"]);
        let node = b.0.as_ref().expect("a node");
        assert!(node.base.same(&a));
        assert_eq!(node.set.len(), 2);
        let c = Snapshot::derive(&b, vec![output("c", "x", "3")]);
        assert_eq!(names(&c), ["c:x=3"]);
    }

    #[test]
    fn deltas_are_the_same_whichever_way_the_snapshots_were_built() {
        let a = Snapshot::from_outputs(vec![output("a", "x", "1"), output("b", "y", "2")]);
        let full = vec![output("a", "x", "9"), output("c", "z", "3")];
        let chained = Snapshot::derive(&a, full.clone());
        let alone = Snapshot::from_outputs(full);
        assert_eq!(chained.delta_from(&a), alone.delta_from(&a));
        let delta = alone.delta_from(&a);
        assert_eq!(delta.removed, ["b:y"]);
        assert_eq!(delta.set.len(), 2);
        assert_eq!(Snapshot::apply(&a, delta), alone);
    }

    #[test]
    fn removing_everything_leaves_an_empty_snapshot() {
        let a = Snapshot::from_outputs(vec![output("a", "x", "1")]);
        let empty = Snapshot::apply(
            &a,
            Delta {
                set: Vec::new(),
                removed: vec!["a:x".into()],
            },
        );
        assert!(empty.is_empty());
    }
}
