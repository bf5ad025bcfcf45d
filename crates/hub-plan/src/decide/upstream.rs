//! The upstream of each component of a parallel run: the selected
//! components it runs after, directly or not, as a set of positions in the
//! selection.
//!
//! A component's upstream is the union of its direct predecessors' with
//! the predecessors themselves, so each set is computed once from sets
//! already known; a set is a bit per selected component. Searching the
//! graph again for every component, and holding the names, cost the
//! square of the stack in time and in strings (3.5 GB at 10,000
//! components); the bits cost N²/8 bytes in all (12 MB at 10,000).

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A set of positions below a fixed size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bits {
    words: Vec<u64>,
}

impl Bits {
    pub fn new(size: usize) -> Bits {
        Bits {
            words: vec![0; size.div_ceil(64)],
        }
    }

    pub fn insert(&mut self, at: usize) {
        if let Some(word) = self.words.get_mut(at / 64) {
            *word |= 1 << (at % 64);
        }
    }

    pub fn contains(&self, at: usize) -> bool {
        self.words
            .get(at / 64)
            .is_some_and(|word| word & (1 << (at % 64)) != 0)
    }

    fn union_with(&mut self, other: &Bits) {
        for (mine, theirs) in self.words.iter_mut().zip(&other.words) {
            *mine |= theirs;
        }
    }

    /// The positions held, in increasing order.
    pub fn ones(&self) -> impl Iterator<Item = usize> + '_ {
        ones_of(self.words.iter().copied())
    }

    /// The positions held by exactly one of the two sets, in increasing
    /// order.
    pub fn differing<'b>(&'b self, other: &'b Bits) -> impl Iterator<Item = usize> + 'b {
        let length = self.words.len().max(other.words.len());
        let word = |bits: &Bits, i: usize| bits.words.get(i).copied().unwrap_or(0);
        ones_of((0..length).map(move |i| word(self, i) ^ word(other, i)))
    }
}

fn ones_of(words: impl Iterator<Item = u64>) -> impl Iterator<Item = usize> {
    words.enumerate().flat_map(|(i, mut word)| {
        std::iter::from_fn(move || {
            if word == 0 {
                return None;
            }
            let bit = word.trailing_zeros() as usize;
            word &= word - 1;
            Some(i * 64 + bit)
        })
    })
}

/// Each component's upstream, worked out when first asked for.
pub struct Ancestry {
    /// Positions in the selection.
    positions: HashMap<String, usize>,
    size: usize,
    known: HashMap<String, Rc<Bits>>,
}

impl Ancestry {
    pub fn new(selected: &[String]) -> Ancestry {
        Ancestry {
            positions: selected
                .iter()
                .enumerate()
                .map(|(i, name)| (name.clone(), i))
                .collect(),
            size: selected.len(),
            known: HashMap::new(),
        }
    }

    /// The position of `name` in the selection.
    pub fn position(&self, name: &str) -> Option<usize> {
        self.positions.get(name).copied()
    }

    /// The positions of the selected components `name` runs after through
    /// `after` edges, directly or not (through components outside the
    /// selection too).
    pub fn upstream<'g>(&mut self, name: &str, after: &dyn Fn(&str) -> &'g [String]) -> Rc<Bits> {
        // Depth first, each set once its predecessors' are known; without
        // recursion, as a chain of 10,000 components is 10,000 deep.
        let mut entered: HashSet<String> = HashSet::new();
        let mut stack: Vec<(&str, bool)> = vec![(name, false)];
        while let Some((next, expanded)) = stack.pop() {
            if self.known.contains_key(next) {
                continue;
            }
            if !expanded {
                if !entered.insert(next.to_string()) {
                    continue; // a cycle: the order's validation reports it
                }
                stack.push((next, true));
                for before in after(next) {
                    if !self.known.contains_key(before.as_str()) {
                        stack.push((before.as_str(), false));
                    }
                }
                continue;
            }
            let mut bits = Bits::new(self.size);
            for before in after(next) {
                if let Some(&at) = self.positions.get(before) {
                    bits.insert(at);
                }
                if let Some(theirs) = self.known.get(before.as_str()) {
                    bits.union_with(theirs);
                }
            }
            self.known.insert(next.to_string(), Rc::new(bits));
        }
        self.known
            .get(name)
            .cloned()
            .unwrap_or_else(|| Rc::new(Bits::new(self.size)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::order::scheduler::reachable;
    use hub_state::test_support::Dice;
    use std::collections::BTreeSet;

    #[test]
    fn bits_hold_iterate_and_compare() {
        let mut a = Bits::new(130);
        let mut b = Bits::new(130);
        for at in [0, 63, 64, 129] {
            a.insert(at);
        }
        for at in [63, 100] {
            b.insert(at);
        }
        assert!(a.contains(129) && !a.contains(128) && !a.contains(500));
        assert_eq!(a.ones().collect::<Vec<_>>(), [0, 63, 64, 129]);
        assert_eq!(a.differing(&b).collect::<Vec<_>>(), [0, 64, 100, 129]);
        assert_eq!(a.differing(&a).count(), 0);
    }

    /// A pseudo-random DAG: each node waits for up to three earlier ones.
    fn graph(size: usize, seed: u64) -> HashMap<String, Vec<String>> {
        let mut dice = Dice(seed);
        (0..size)
            .map(|i| {
                let before = match i {
                    0 => Vec::new(),
                    _ => (0..dice.roll(4))
                        .map(|_| format!("n{}", dice.roll(i)))
                        .collect(),
                };
                (format!("n{i}"), before)
            })
            .collect()
    }

    #[test]
    fn upstream_bits_are_the_selected_names_a_search_reaches() {
        for seed in 0..20 {
            let edges = graph(60, seed);
            let after = |name: &str| edges.get(name).map(Vec::as_slice).unwrap_or_default();
            // Every third node is outside the selection.
            let selected: Vec<String> = (0..60)
                .filter(|i| i % 3 != 1)
                .map(|i| format!("n{i}"))
                .collect();
            let mut ancestry = Ancestry::new(&selected);
            for i in (0..60).rev() {
                let name = format!("n{i}");
                let searched: BTreeSet<String> = reachable(&name, &after);
                let expected: Vec<usize> = selected
                    .iter()
                    .enumerate()
                    .filter(|(_, n)| searched.contains(*n))
                    .map(|(at, _)| at)
                    .collect();
                let bits = ancestry.upstream(&name, &after);
                assert_eq!(
                    bits.ones().collect::<Vec<_>>(),
                    expected,
                    "seed {seed}, {name}"
                );
            }
        }
    }
}
