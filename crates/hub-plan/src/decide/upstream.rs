//! The upstream of each component of a parallel run: the selected
//! components it runs after, directly or not, as a set of positions in the
//! selection.
//!
//! A component's upstream is the union of its direct predecessors' with
//! the predecessors themselves, so each set is computed once from sets
//! already known. Searching the graph again for every component, and
//! holding the names, cost the square of the stack in time and in strings
//! (3.5 GB at 10,000 components). A set is the positions it holds while
//! they are few, else a bit per selected component: a bit each cost
//! N²/8 bytes in all (12.5 MB at 10,000, held by the plan and again by
//! the run), while a wide stack's upstreams are a few components each.

use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// A set of positions below a fixed size: the positions themselves while
/// they are few (most components of a wide stack have a small upstream),
/// else a bit per position, in chunks shared between sets.
///
/// A component's upstream is mostly its predecessors' (a chain adds one
/// position a component): a chunk is copied only when a bit in it changes,
/// so the sets of a deep graph hold one or two chunks of their own and
/// point at the others.
#[derive(Debug, Clone)]
pub struct Bits {
    size: usize,
    held: Held,
}

/// Positions a chunk holds, a bit each.
const CHUNK_BITS: usize = 512;

type Chunk = [u64; CHUNK_BITS / 64];

#[derive(Debug, Clone)]
enum Held {
    /// Sorted, each once.
    Few(Vec<u32>),
    /// A chunk per `CHUNK_BITS` positions below `size`; `None` when it
    /// holds none.
    Many(Vec<Option<Rc<Chunk>>>),
}

impl Bits {
    pub fn new(size: usize) -> Bits {
        Bits {
            size,
            held: Held::Few(Vec::new()),
        }
    }

    /// How many positions `Few` holds at most: beyond, the chunks take
    /// less room (4 bytes a position against a pointer per chunk and the
    /// chunks of its own).
    fn most_few(&self) -> usize {
        2 * self.size.div_ceil(64)
    }

    pub fn insert(&mut self, at: usize) {
        if at >= self.size {
            return;
        }
        match &mut self.held {
            Held::Few(few) => {
                // Below `size`, itself a count of names held in memory.
                let at = at as u32;
                if let Err(place) = few.binary_search(&at) {
                    few.insert(place, at);
                }
                self.spread_if_many();
            }
            Held::Many(chunks) => set_bit(chunks, at),
        }
    }

    pub fn contains(&self, at: usize) -> bool {
        match &self.held {
            Held::Few(few) => u32::try_from(at).is_ok_and(|at| few.binary_search(&at).is_ok()),
            Held::Many(chunks) => chunks
                .get(at / CHUNK_BITS)
                .and_then(Option::as_ref)
                .is_some_and(|chunk| chunk[at % CHUNK_BITS / 64] & (1 << (at % 64)) != 0),
        }
    }

    fn union_with(&mut self, other: &Bits) {
        match (&mut self.held, &other.held) {
            (Held::Few(mine), Held::Few(theirs)) => {
                *mine = merged(mine, theirs);
                self.spread_if_many();
            }
            (Held::Many(mine), Held::Many(theirs)) => {
                for (mine, theirs) in mine.iter_mut().zip(theirs) {
                    unite(mine, theirs);
                }
            }
            (Held::Many(_), Held::Few(theirs)) => {
                for &at in theirs {
                    self.insert(at as usize);
                }
            }
            (Held::Few(mine), Held::Many(theirs)) => {
                let few = std::mem::take(mine);
                // Their chunks, shared, with mine set in them.
                self.held = Held::Many(theirs.clone());
                for at in few {
                    self.insert(at as usize);
                }
            }
        }
    }

    /// `Many` once `Few` would take more room.
    fn spread_if_many(&mut self) {
        if matches!(&self.held, Held::Few(few) if few.len() > self.most_few()) {
            self.spread();
        }
    }

    fn spread(&mut self) {
        let Held::Few(few) = &self.held else {
            return;
        };
        let mut chunks = vec![None; self.size.div_ceil(CHUNK_BITS)];
        for &at in few {
            set_bit(&mut chunks, at as usize);
        }
        self.held = Held::Many(chunks);
    }

    /// The positions held, in increasing order.
    pub fn ones(&self) -> Box<dyn Iterator<Item = usize> + '_> {
        match &self.held {
            Held::Few(few) => Box::new(few.iter().map(|&at| at as usize)),
            Held::Many(chunks) => Box::new(ones_of(chunks.iter().flat_map(words_of))),
        }
    }

    /// The positions held by exactly one of the two sets, in increasing
    /// order.
    pub fn differing<'b>(&'b self, other: &'b Bits) -> Box<dyn Iterator<Item = usize> + 'b> {
        if let (Held::Many(mine), Held::Many(theirs)) = (&self.held, &other.held) {
            let length = mine.len().max(theirs.len());
            let chunk =
                |chunks: &'b [Option<Rc<Chunk>>], i: usize| chunks.get(i).and_then(Option::as_ref);
            let xor = move |i: usize| -> Chunk {
                let (a, b) = (chunk(mine, i), chunk(theirs, i));
                let mut words = [0; CHUNK_BITS / 64];
                if !a.zip(b).is_some_and(|(a, b)| Rc::ptr_eq(a, b)) {
                    for (at, word) in words.iter_mut().enumerate() {
                        *word = a.map_or(0, |a| a[at]) ^ b.map_or(0, |b| b[at]);
                    }
                }
                words
            };
            return Box::new(ones_of((0..length).flat_map(xor)));
        }
        let mut mine = self.ones().peekable();
        let mut theirs = other.ones().peekable();
        Box::new(std::iter::from_fn(move || loop {
            match (mine.peek().copied(), theirs.peek().copied()) {
                (None, None) => return None,
                (Some(a), Some(b)) if a == b => {
                    mine.next();
                    theirs.next();
                }
                (Some(a), Some(b)) if a < b => return mine.next(),
                (Some(_), Some(_)) => return theirs.next(),
                (Some(_), None) => return mine.next(),
                (None, Some(_)) => return theirs.next(),
            }
        }))
    }
}

/// Sets the bit of `at`, copying its chunk first if another set shares it.
fn set_bit(chunks: &mut [Option<Rc<Chunk>>], at: usize) {
    let chunk = chunks[at / CHUNK_BITS].get_or_insert_with(|| Rc::new([0; CHUNK_BITS / 64]));
    let word = at % CHUNK_BITS / 64;
    if chunk[word] & (1 << (at % 64)) == 0 {
        Rc::make_mut(chunk)[word] |= 1 << (at % 64);
    }
}

/// `mine` becomes the union of both chunks, sharing `theirs` when that is
/// the union, copied only when both add bits.
fn unite(mine: &mut Option<Rc<Chunk>>, theirs: &Option<Rc<Chunk>>) {
    let Some(theirs) = theirs else {
        return;
    };
    let Some(held) = mine else {
        *mine = Some(Rc::clone(theirs));
        return;
    };
    if Rc::ptr_eq(held, theirs) {
        return;
    }
    let within = |a: &Chunk, b: &Chunk| a.iter().zip(b).all(|(a, b)| a & !b == 0);
    if within(theirs, held) {
        return;
    }
    if within(held, theirs) {
        *held = Rc::clone(theirs);
        return;
    }
    for (word, theirs) in Rc::make_mut(held).iter_mut().zip(theirs.iter()) {
        *word |= theirs;
    }
}

/// A chunk's words, none as zeros.
fn words_of(chunk: &Option<Rc<Chunk>>) -> Chunk {
    chunk.as_deref().copied().unwrap_or([0; CHUNK_BITS / 64])
}

/// Two sets compare by the positions they hold, however they hold them.
impl PartialEq for Bits {
    fn eq(&self, other: &Bits) -> bool {
        self.differing(other).next().is_none()
    }
}

impl Eq for Bits {}

/// The union of two sorted lists of distinct positions, sorted.
fn merged(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
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

    /// A set of up to `count` random positions below `size`, built by
    /// inserts and by unions with other such sets, and the same as a
    /// sorted set.
    fn random_set(dice: &mut Dice, size: usize, count: usize) -> (Bits, BTreeSet<usize>) {
        let mut bits = Bits::new(size);
        let mut model = BTreeSet::new();
        for _ in 0..dice.roll(count + 1) {
            let at = dice.roll(size + 3);
            bits.insert(at);
            if at < size {
                model.insert(at);
            }
            if dice.roll(8) == 0 {
                let (other, others) = random_set(dice, size, count / 4);
                bits.union_with(&other);
                model.extend(others);
            }
        }
        (bits, model)
    }

    /// Few positions and many, held either way, read and compare as the
    /// positions they hold.
    #[test]
    fn few_or_many_positions_hold_iterate_and_compare_alike() {
        let mut dice = Dice(44);
        for size in [1, 10, 64, 130, 1000] {
            for count in [0, 2, 8, 40, 400] {
                for _ in 0..20 {
                    let (a, in_a) = random_set(&mut dice, size, count);
                    let (b, in_b) = random_set(&mut dice, size, count);
                    let case = format!("size {size}, count {count}");
                    assert_eq!(a.ones().collect::<BTreeSet<_>>(), in_a, "{case}");
                    assert!(a.ones().zip(a.ones().skip(1)).all(|(x, y)| x < y), "{case}");
                    for at in 0..size + 2 {
                        assert_eq!(a.contains(at), in_a.contains(&at), "{case}: {at}");
                    }
                    let differing: BTreeSet<usize> =
                        in_a.symmetric_difference(&in_b).copied().collect();
                    assert_eq!(
                        a.differing(&b).collect::<BTreeSet<_>>(),
                        differing,
                        "{case}"
                    );
                    assert_eq!(a == b, in_a == in_b, "{case}");
                    let mut whole = a.clone();
                    whole.union_with(&b);
                    let union: BTreeSet<usize> = in_a.union(&in_b).copied().collect();
                    assert_eq!(whole.ones().collect::<BTreeSet<_>>(), union, "{case}");
                    let mut spread = a.clone();
                    spread.spread();
                    assert!(spread == a, "{case}");
                    assert!(a == spread, "{case}");
                }
            }
        }
        let mut few = Bits::new(10_000);
        for at in (0..10_000).step_by(100) {
            few.insert(at);
        }
        assert!(
            matches!(few.held, Held::Few(_)),
            "100 of 10,000 are kept as positions"
        );
        for at in 0..400 {
            few.insert(at);
        }
        assert!(
            matches!(few.held, Held::Many(_)),
            "496 of 10,000 are kept as bits"
        );
        // A chain: each set is its predecessor's and one more position.
        let mut chain = vec![few];
        for at in 400..1400 {
            let mut next = Bits::new(10_000);
            next.union_with(chain.last().expect("one at least"));
            next.insert(at);
            chain.push(next);
        }
        let last = chain.last().expect("the chain");
        // 400, 500, … 1300 were held already.
        assert_eq!(last.ones().count(), 496 + 1000 - 10);
        let Held::Many(chunks) = &last.held else {
            panic!("many positions")
        };
        let shared = chunks
            .iter()
            .flatten()
            .filter(|chunk| Rc::strong_count(chunk) > 1)
            .count();
        assert!(
            shared >= 18,
            "{shared} of 20 chunks shared with the set before"
        );
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
        // 60 nodes: one chunk; 1,500: three, shared between sets.
        for (size, seed) in (0..20)
            .map(|seed| (60, seed))
            .chain([(1500, 20), (1500, 21)])
        {
            let edges = graph(size, seed);
            let after = |name: &str| edges.get(name).map(Vec::as_slice).unwrap_or_default();
            // Every third node is outside the selection.
            let selected: Vec<String> = (0..size)
                .filter(|i| i % 3 != 1)
                .map(|i| format!("n{i}"))
                .collect();
            let mut ancestry = Ancestry::new(&selected);
            for i in (0..size).rev() {
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
