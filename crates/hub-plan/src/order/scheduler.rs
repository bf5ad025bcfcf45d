//! Scheduling a run over the component graph.
//!
//! A deploy runs a component after everything in [`Schedule::after`]
//! (its `depends` and the earlier providers of its `requires`); an undeploy
//! runs the other way round, a component after everything that runs after
//! it. Only the selected components run: a wait through a component that
//! is not selected is kept (with `a → b → c` and `-c a,c`, `c` still waits
//! for `a`).
//!
//! [`Scheduler`] hands out ready components, lowest position in the
//! effective order first, at most `concurrency` at a time. With one slot
//! that is exactly the effective order. A failed component cancels the
//! components that wait for it, directly or not ([`Scheduler::cancel_after`]).
//!
//! [`Schedule::after`]: super::schedule::Schedule::after

use super::verb::Verb;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};

/// For each of `selected` (in effective order), the positions in
/// `selected` it waits for: the nearest selected components on its
/// upstream (deploy) or downstream (undeploy) paths.
pub fn waits_for<'g>(
    selected: &[String],
    verb: Verb,
    after: &dyn Fn(&str) -> &'g [String],
) -> Vec<BTreeSet<usize>> {
    let position: HashMap<&str, usize> = selected
        .iter()
        .enumerate()
        .map(|(i, n)| (n.as_str(), i))
        .collect();
    let nearest_upstream: Vec<BTreeSet<usize>> = selected
        .iter()
        .map(|name| nearest_selected(name, after, &position))
        .collect();
    match verb {
        Verb::Deploy => nearest_upstream,
        Verb::Undeploy => {
            let mut reversed = vec![BTreeSet::new(); selected.len()];
            for (i, upstream) in nearest_upstream.iter().enumerate() {
                for &u in upstream {
                    reversed[u].insert(i);
                }
            }
            reversed
        }
    }
}

/// The selected components reached from `name` through `after` edges
/// without passing through another selected one.
fn nearest_selected<'g>(
    name: &str,
    after: &dyn Fn(&str) -> &'g [String],
    position: &HashMap<&str, usize>,
) -> BTreeSet<usize> {
    let mut found = BTreeSet::new();
    let mut seen: HashSet<&'g str> = HashSet::new();
    let mut stack: Vec<&'g str> = after(name).iter().map(String::as_str).collect();
    while let Some(next) = stack.pop() {
        if !seen.insert(next) {
            continue;
        }
        match position.get(next) {
            Some(&p) => {
                found.insert(p);
            }
            None => stack.extend(after(next).iter().map(String::as_str)),
        }
    }
    found
}

/// Every component reachable from `name` through `edges`.
pub fn reachable<'g>(name: &str, edges: &dyn Fn(&str) -> &'g [String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut stack: Vec<&'g str> = edges(name).iter().map(String::as_str).collect();
    while let Some(next) = stack.pop() {
        if found.insert(next.to_string()) {
            stack.extend(edges(next).iter().map(String::as_str));
        }
    }
    found
}

/// Groups `names` into waves: wave 0 waits for nothing, wave k for
/// something in wave k-1 at the latest.
pub fn waves(names: &[String], waits_for: &[BTreeSet<usize>]) -> Vec<Vec<String>> {
    let mut level = vec![0usize; names.len()];
    // Positions follow a topological order: waits point backwards.
    for i in 0..names.len() {
        level[i] = waits_for[i]
            .iter()
            .filter(|&&w| w < i)
            .map(|&w| level[w] + 1)
            .max()
            .unwrap_or(0);
    }
    let count = level.iter().max().map_or(0, |m| m + 1);
    let mut waves = vec![Vec::new(); count];
    for (i, name) in names.iter().enumerate() {
        waves[level[i]].push(name.clone());
    }
    waves
}

/// Hands out components whose predecessors are done, lowest position
/// first, at most `concurrency` at a time. Each component's count of
/// predecessors not done yet, and a queue of the ready ones, keep every
/// step's cost independent of the number of components.
#[derive(Debug, Clone)]
pub struct Scheduler {
    names: Vec<String>,
    position: HashMap<String, usize>,
    /// `dependents[i]`: the positions that wait for `i`.
    dependents: Vec<Vec<usize>>,
    /// How many of its predecessors are not done yet.
    waiting: Vec<usize>,
    /// Positions whose predecessors are all done, lowest first; some may
    /// have been cancelled since (they are skipped).
    ready: BinaryHeap<Reverse<usize>>,
    started: Vec<bool>,
    done: Vec<bool>,
    cancelled: Vec<bool>,
    running: usize,
    concurrency: usize,
}

impl Scheduler {
    /// `waits_for[i]`: positions that must be done before `names[i]` starts.
    pub fn new(names: Vec<String>, waits_for: Vec<BTreeSet<usize>>, concurrency: usize) -> Self {
        let count = names.len();
        let mut dependents = vec![Vec::new(); count];
        for (i, waits) in waits_for.iter().enumerate() {
            for &w in waits {
                dependents[w].push(i);
            }
        }
        let waiting: Vec<usize> = waits_for.iter().map(BTreeSet::len).collect();
        let ready = (0..count)
            .filter(|&i| waiting[i] == 0)
            .map(Reverse)
            .collect();
        let position = names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), i))
            .collect();
        Scheduler {
            names,
            position,
            dependents,
            waiting,
            ready,
            started: vec![false; count],
            done: vec![false; count],
            cancelled: vec![false; count],
            running: 0,
            concurrency: concurrency.max(1),
        }
    }

    /// The next component to start, if one is ready and a slot is free.
    pub fn next_ready(&mut self) -> Option<String> {
        if self.running >= self.concurrency {
            return None;
        }
        while let Some(Reverse(next)) = self.ready.pop() {
            if self.started[next] || self.cancelled[next] {
                continue;
            }
            self.started[next] = true;
            self.running += 1;
            return Some(self.names[next].clone());
        }
        None
    }

    /// Marks a started component as finished (whatever its outcome).
    pub fn finish(&mut self, name: &str) {
        let Some(i) = self.position(name) else {
            return;
        };
        if !self.started[i] || self.done[i] {
            return;
        }
        self.done[i] = true;
        self.running -= 1;
        for &dependent in &self.dependents[i] {
            self.waiting[dependent] -= 1;
            if self.waiting[dependent] == 0 {
                self.ready.push(Reverse(dependent));
            }
        }
    }

    /// Cancels every component not started yet that waits for `name`,
    /// directly or not; returns them in order.
    pub fn cancel_after(&mut self, name: &str) -> Vec<String> {
        let Some(failed) = self.position(name) else {
            return Vec::new();
        };
        let mut blocked = vec![false; self.names.len()];
        let mut stack = vec![failed];
        let mut cancelled = Vec::new();
        while let Some(at) = stack.pop() {
            for &dependent in &self.dependents[at] {
                if blocked[dependent] {
                    continue;
                }
                blocked[dependent] = true;
                stack.push(dependent);
                if !self.started[dependent] && !self.cancelled[dependent] {
                    self.cancelled[dependent] = true;
                    cancelled.push(dependent);
                }
            }
        }
        cancelled.sort_unstable();
        cancelled
            .into_iter()
            .map(|i| self.names[i].clone())
            .collect()
    }

    /// How many components are running.
    pub fn running(&self) -> usize {
        self.running
    }

    /// Components never started (the run stopped early), cancelled ones
    /// excluded.
    pub fn pending(&self) -> Vec<String> {
        (0..self.names.len())
            .filter(|&i| !self.started[i] && !self.cancelled[i])
            .map(|i| self.names[i].clone())
            .collect()
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.position.get(name).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(edges: &[(&str, &[&str])]) -> HashMap<String, Vec<String>> {
        edges
            .iter()
            .map(|(n, a)| (n.to_string(), a.iter().map(|s| s.to_string()).collect()))
            .collect()
    }

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn scheduler(
        selected: &[&str],
        edges: &[(&str, &[&str])],
        verb: Verb,
        slots: usize,
    ) -> Scheduler {
        let g = graph(edges);
        let after = |n: &str| g.get(n).map(Vec::as_slice).unwrap_or_default();
        let selected = names(selected);
        let waits = waits_for(&selected, verb, &after);
        Scheduler::new(selected, waits, slots)
    }

    #[test]
    fn a_wait_through_an_unselected_component_is_kept() {
        let g = graph(&[("b", &["a"]), ("c", &["b"])]);
        let after = |n: &str| g.get(n).map(Vec::as_slice).unwrap_or_default();
        let waits = waits_for(&names(&["a", "c"]), Verb::Deploy, &after);
        assert_eq!(waits, vec![BTreeSet::new(), BTreeSet::from([0])]);
        let waits = waits_for(&names(&["c", "a"]), Verb::Undeploy, &after);
        assert_eq!(waits, vec![BTreeSet::new(), BTreeSet::from([0])]);
    }

    #[test]
    fn waves_of_a_diamond() {
        let g = graph(&[("b", &["a"]), ("c", &["a"]), ("d", &["b", "c"])]);
        let after = |n: &str| g.get(n).map(Vec::as_slice).unwrap_or_default();
        let selected = names(&["a", "b", "c", "d"]);
        let waits = waits_for(&selected, Verb::Deploy, &after);
        assert_eq!(
            waves(&selected, &waits),
            vec![names(&["a"]), names(&["b", "c"]), names(&["d"])]
        );
    }

    #[test]
    fn a_fan_out_runs_at_once_up_to_the_slots() {
        let edges: &[(&str, &[&str])] = &[("b", &["a"]), ("c", &["a"]), ("d", &["a"])];
        let mut s = scheduler(&["a", "b", "c", "d"], edges, Verb::Deploy, 2);
        assert_eq!(s.next_ready().as_deref(), Some("a"));
        assert_eq!(s.next_ready(), None);
        s.finish("a");
        assert_eq!(s.next_ready().as_deref(), Some("b"));
        assert_eq!(s.next_ready().as_deref(), Some("c"));
        assert_eq!(s.next_ready(), None, "two slots");
        s.finish("c");
        assert_eq!(s.next_ready().as_deref(), Some("d"));
    }

    #[test]
    fn a_failure_cancels_its_dependents_only() {
        let edges: &[(&str, &[&str])] = &[("b", &["a"]), ("d", &["b"]), ("e", &["d", "c"])];
        let mut s = scheduler(&["a", "b", "c", "d", "e"], edges, Verb::Deploy, 4);
        assert_eq!(s.next_ready().as_deref(), Some("a"));
        assert_eq!(s.next_ready().as_deref(), Some("c"));
        s.finish("a");
        assert_eq!(s.next_ready().as_deref(), Some("b"));
        s.finish("b");
        assert_eq!(s.cancel_after("b"), names(&["d", "e"]));
        s.finish("c");
        assert_eq!(s.next_ready(), None);
        assert_eq!(s.running(), 0);
        assert!(s.pending().is_empty());
    }

    /// The scheduler as first written: a scan from the lowest position for
    /// a component whose predecessors are all done.
    struct Naive {
        waits: Vec<BTreeSet<usize>>,
        started: Vec<bool>,
        done: Vec<bool>,
        cancelled: Vec<bool>,
        running: usize,
        slots: usize,
    }

    impl Naive {
        fn next_ready(&mut self) -> Option<usize> {
            if self.running >= self.slots {
                return None;
            }
            let i = (0..self.waits.len()).find(|&i| {
                !self.started[i]
                    && !self.cancelled[i]
                    && self.waits[i].iter().all(|&w| self.done[w])
            })?;
            self.started[i] = true;
            self.running += 1;
            Some(i)
        }

        fn cancel_after(&mut self, failed: usize) -> Vec<usize> {
            let mut blocked = vec![false; self.waits.len()];
            blocked[failed] = true;
            let mut out = Vec::new();
            for i in failed + 1..self.waits.len() {
                if self.waits[i].iter().any(|&w| blocked[w]) {
                    blocked[i] = true;
                    if !self.started[i] && !self.cancelled[i] {
                        self.cancelled[i] = true;
                        out.push(i);
                    }
                }
            }
            out
        }
    }

    proptest::proptest! {
        #[test]
        fn hands_out_what_a_scan_would(
            edges in proptest::collection::vec((0usize..30, 0usize..30), 0..60),
            size in 1usize..30,
            slots in 1usize..5,
            choices in proptest::collection::vec((0usize..8, proptest::bool::weighted(0.15)), 0..80),
        ) {
            let mut waits = vec![BTreeSet::new(); size];
            for (a, b) in edges {
                let (a, b) = (a % size, b % size);
                if a < b {
                    waits[b].insert(a);
                }
            }
            let names: Vec<String> = (0..size).map(|i| format!("c{i}")).collect();
            let mut fast = Scheduler::new(names.clone(), waits.clone(), slots);
            let mut naive = Naive {
                waits,
                started: vec![false; size],
                done: vec![false; size],
                cancelled: vec![false; size],
                running: 0,
                slots,
            };
            let mut running: Vec<usize> = Vec::new();
            let mut choices = choices.into_iter();
            loop {
                loop {
                    let expected = naive.next_ready();
                    proptest::prop_assert_eq!(fast.next_ready(), expected.map(|i| names[i].clone()));
                    match expected {
                        Some(i) => running.push(i),
                        None => break,
                    }
                }
                if running.is_empty() {
                    break;
                }
                let (pick, fails) = choices.next().unwrap_or((0, false));
                let i = running.remove(pick % running.len());
                fast.finish(&names[i]);
                naive.done[i] = true;
                naive.running -= 1;
                if fails {
                    let expected: Vec<String> = naive.cancel_after(i).into_iter().map(|c| names[c].clone()).collect();
                    proptest::prop_assert_eq!(fast.cancel_after(&names[i]), expected);
                }
            }
            let pending: Vec<String> = (0..size)
                .filter(|&i| !naive.started[i] && !naive.cancelled[i])
                .map(|i| names[i].clone())
                .collect();
            proptest::prop_assert_eq!(fast.pending(), pending);
        }
    }

    #[test]
    fn undeploy_waits_for_dependents() {
        let edges: &[(&str, &[&str])] = &[("b", &["a"]), ("c", &["a"])];
        let mut s = scheduler(&["c", "b", "a"], edges, Verb::Undeploy, 3);
        assert_eq!(s.next_ready().as_deref(), Some("c"));
        assert_eq!(s.next_ready().as_deref(), Some("b"));
        assert_eq!(s.next_ready(), None, "a waits for b and c");
        s.finish("b");
        assert_eq!(s.next_ready(), None);
        s.finish("c");
        assert_eq!(s.next_ready().as_deref(), Some("a"));
    }
}
