//! Expanding many templates that reference each other: the dependency
//! graph between table entries, every cycle with its full path, and
//! evaluation in dependency order with each value computed once.
//!
//! Nothing here recurses, so chains of any length resolve.

use super::cel::{Cel, CelFailure, Compiled};
use super::expr::{self, Piece};
use super::format::substitution_text;
use super::table::{FastMap, Scope, Table};
use hub_manifest::secrets::looks_secret;
use std::collections::{HashMap, HashSet, VecDeque};
use std::rc::Rc;
use yaml_serde::Value;

/// A table entry whose string value is a template to expand.
#[derive(Debug, Clone)]
pub struct Node {
    pub entry: usize,
    pub scope: Scope,
    /// Expanded only when a non-lazy node needs it (`kind: link` at stack
    /// level): its own problems are reported only then.
    pub lazy: bool,
}

/// What went wrong while expanding; `entry` is the parameter whose value
/// holds the expression.
#[derive(Debug, Clone, PartialEq)]
pub enum ExpandProblem {
    Unknown {
        entry: usize,
        name: String,
    },
    Cel {
        entry: usize,
        source: String,
        failure: CelFailure,
    },
    /// Entries in reference order; the first one follows the last.
    Cycle {
        path: Vec<usize>,
    },
}

#[derive(Debug, Default)]
pub struct Evaluation {
    /// Node number by table entry.
    node_of: NodeIndex,
    /// Expanded text by node.
    results: Vec<Option<String>>,
    /// Nodes whose expansion read a secret-looking name, directly or not.
    tainted: Vec<bool>,
    pub problems: Vec<ExpandProblem>,
}

impl Evaluation {
    /// The expanded text of a node's entry.
    pub fn result(&self, entry: usize) -> Option<&String> {
        self.node_of
            .get(entry)
            .and_then(|n| self.results[n].as_ref())
    }

    /// Moves the expanded text of a node's entry out; later calls give
    /// `None`.
    pub fn take_result(&mut self, entry: usize) -> Option<String> {
        self.node_of.get(entry).and_then(|n| self.results[n].take())
    }

    /// Whether the expansion of `entry` read a secret, directly or not.
    pub fn is_tainted(&self, entry: usize) -> bool {
        self.node_of.get(entry).is_some_and(|n| self.tainted[n])
    }

    #[cfg(test)]
    pub fn result_count(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }
}

/// Node number by table entry: a plain vector when most entries are
/// nodes (locking), a map when few are (a component expanding one
/// template against every stack parameter).
#[derive(Debug)]
enum NodeIndex {
    Dense(Vec<usize>),
    Sparse(FastMap<usize, usize>),
}

impl NodeIndex {
    const NONE: usize = usize::MAX;

    fn new(entries: usize, nodes: &[Node]) -> Self {
        if nodes.len() * 8 >= entries {
            let mut dense = vec![Self::NONE; entries];
            for (i, node) in nodes.iter().enumerate() {
                dense[node.entry] = i;
            }
            NodeIndex::Dense(dense)
        } else {
            NodeIndex::Sparse(
                nodes
                    .iter()
                    .enumerate()
                    .map(|(i, node)| (node.entry, i))
                    .collect(),
            )
        }
    }

    fn get(&self, entry: usize) -> Option<usize> {
        match self {
            NodeIndex::Dense(dense) => dense.get(entry).copied().filter(|&n| n != Self::NONE),
            NodeIndex::Sparse(map) => map.get(&entry).copied(),
        }
    }
}

impl Default for NodeIndex {
    fn default() -> Self {
        NodeIndex::Sparse(FastMap::default())
    }
}

enum Part<'a> {
    Text(&'a str),
    Reference(Option<usize>),
    Cel(&'a str, Rc<Result<Compiled, CelFailure>>),
}

/// One list per node, stored end to end: one allocation for all nodes
/// rather than one per node, read in one sweep.
#[derive(Debug)]
struct Lists<T> {
    items: Vec<T>,
    /// Where each list ends in `items`.
    ends: Vec<usize>,
}

impl<T> Lists<T> {
    fn with_capacity(lists: usize, items: usize) -> Self {
        Lists {
            items: Vec::with_capacity(items),
            ends: Vec::with_capacity(lists),
        }
    }

    /// Adds `item` to the list being built.
    fn push(&mut self, item: T) {
        self.items.push(item);
    }

    /// The list being built so far.
    fn open(&self) -> &[T] {
        &self.items[self.ends.last().copied().unwrap_or(0)..]
    }

    fn open_mut(&mut self) -> &mut [T] {
        let start = self.ends.last().copied().unwrap_or(0);
        &mut self.items[start..]
    }

    /// Ends the list being built; the next push starts a new one.
    fn close(&mut self) {
        self.ends.push(self.items.len());
    }

    /// The number of closed lists.
    fn len(&self) -> usize {
        self.ends.len()
    }

    fn iter(&self) -> impl Iterator<Item = &[T]> {
        (0..self.ends.len()).map(|n| &self[n])
    }
}

impl<T> std::ops::Index<usize> for Lists<T> {
    type Output = [T];

    fn index(&self, n: usize) -> &[T] {
        let start = if n == 0 { 0 } else { self.ends[n - 1] };
        &self.items[start..self.ends[n]]
    }
}

/// The templates of all nodes, split up.
struct Prepared<'a> {
    /// The parts of each node's template.
    parts: Lists<Part<'a>>,
    /// The entries each node reads, node or not, in order of first use.
    reads: Lists<usize>,
    /// Unknown names and parse errors, with their node, in node order.
    problems: Vec<(usize, ExpandProblem)>,
}

/// Expands every node of `nodes` against `table`.
pub fn evaluate(table: &Table, nodes: &[Node], cel: &Cel) -> Evaluation {
    let node_of = NodeIndex::new(table.len(), nodes);
    let mut compiled: FastMap<String, Rc<Result<Compiled, CelFailure>>> = FastMap::default();
    let mut prepared = Prepared {
        parts: Lists::with_capacity(nodes.len(), nodes.len() * 3),
        reads: Lists::with_capacity(nodes.len(), nodes.len() * 2),
        problems: Vec::new(),
    };
    let mut pieces = Vec::new();
    for (n, node) in nodes.iter().enumerate() {
        prepare(
            table,
            n,
            node,
            cel,
            &mut compiled,
            &mut pieces,
            &mut prepared,
        );
    }
    let mut edges = Lists::with_capacity(nodes.len(), prepared.reads.items.len());
    for reads in prepared.reads.iter() {
        for target in reads.iter().filter_map(|&e| node_of.get(e)) {
            // Repeated reads of one node in a row give one edge.
            if edges.open().last() != Some(&target) {
                edges.push(target);
            }
        }
        edges.close();
    }
    let active = reachable_from_eager(nodes, &edges);
    let mut out = Evaluation {
        node_of,
        results: vec![None; nodes.len()],
        tainted: vec![false; nodes.len()],
        problems: Vec::new(),
    };
    for (n, problem) in std::mem::take(&mut prepared.problems) {
        if active[n] {
            out.problems.push(problem);
        }
    }
    let components = strongly_connected(&edges, &active);
    let mut blocked = vec![false; nodes.len()];
    let mut problems = Vec::new();
    for component in components.iter() {
        let cyclic = component.len() > 1 || edges[component[0]].contains(&component[0]);
        if cyclic {
            for path in cycles_in(component, &edges) {
                out.problems.push(ExpandProblem::Cycle {
                    path: path.iter().map(|&n| nodes[n].entry).collect(),
                });
            }
            for &n in component {
                blocked[n] = true;
            }
            continue;
        }
        let n = component[0];
        if edges[n].iter().any(|&d| blocked[d]) {
            blocked[n] = true;
            continue;
        }
        let node = &nodes[n];
        let text = expand(table, node, &prepared.parts[n], cel, &out, &mut problems);
        let secret = prepared.reads[n]
            .iter()
            .any(|&e| out.is_tainted(e) || looks_secret(table.key(e)));
        out.tainted[n] = secret;
        out.results[n] = Some(text);
    }
    out.problems.extend(problems);
    out
}

/// Splits the template of node `n` into `prepared`.
fn prepare<'a>(
    table: &'a Table,
    n: usize,
    node: &Node,
    cel: &Cel,
    compiled: &mut FastMap<String, Rc<Result<Compiled, CelFailure>>>,
    pieces: &mut Vec<Piece<'a>>,
    prepared: &mut Prepared<'a>,
) {
    let text = match table.value(node.entry) {
        Some(Value::String(s)) => s.as_str(),
        _ => "",
    };
    expr::parse_into(text, pieces);
    for &piece in pieces.iter() {
        match piece {
            Piece::Text(t) => prepared.parts.push(Part::Text(t)),
            Piece::Reference(name) => {
                let found = table.find(name, &node.scope);
                match found {
                    Some(entry) => prepared.reads.push(entry),
                    None => prepared.problems.push((
                        n,
                        ExpandProblem::Unknown {
                            entry: node.entry,
                            name: name.to_string(),
                        },
                    )),
                }
                prepared.parts.push(Part::Reference(found));
            }
            Piece::Cel(source) => {
                let program = match compiled.get(source) {
                    Some(program) => Rc::clone(program),
                    None => {
                        let program = Rc::new(cel.compile(source));
                        compiled.insert(source.to_string(), Rc::clone(&program));
                        program
                    }
                };
                match program.as_ref() {
                    Ok(program) => {
                        for candidates in program.names() {
                            if let Some(entry) =
                                candidates.iter().find_map(|n| table.find(n, &node.scope))
                            {
                                prepared.reads.push(entry);
                            }
                        }
                    }
                    Err(failure) => prepared.problems.push((
                        n,
                        ExpandProblem::Cel {
                            entry: node.entry,
                            source: source.to_string(),
                            failure: failure.clone(),
                        },
                    )),
                }
                prepared.parts.push(Part::Cel(source, program));
            }
        }
    }
    prepared.parts.close();
    prepared.reads.close();
}

fn expand(
    table: &Table,
    node: &Node,
    parts: &[Part],
    cel: &Cel,
    done: &Evaluation,
    problems: &mut Vec<ExpandProblem>,
) -> String {
    let current = |entry: usize| -> Option<Value> {
        match done.result(entry) {
            Some(text) => Some(Value::String(text.clone())),
            None => table.value(entry).cloned(),
        }
    };
    // Sized for the text and the expanded references: one allocation in
    // most cases.
    let size: usize = parts
        .iter()
        .map(|part| match part {
            Part::Text(t) => t.len(),
            Part::Reference(Some(entry)) => done.result(*entry).map_or(8, String::len),
            Part::Reference(None) | Part::Cel(..) => 8,
        })
        .sum();
    let mut out = String::with_capacity(size);
    for part in parts {
        match part {
            Part::Text(t) => out.push_str(t),
            Part::Reference(Some(entry)) => match done.result(*entry) {
                Some(text) => out.push_str(text),
                None => match table.value(*entry) {
                    Some(Value::String(text)) => out.push_str(text),
                    other => out.push_str(&substitution_text(other)),
                },
            },
            Part::Reference(None) => out.push_str("(unknown)"),
            Part::Cel(source, program) => {
                let Ok(program) = program.as_ref() else {
                    out.push_str("(parse error)");
                    continue;
                };
                let lookup = |name: &str| {
                    table
                        .find(name, &node.scope)
                        .map(|e| current(e).unwrap_or(Value::Null))
                };
                match cel.evaluate(program, lookup) {
                    Ok(text) => out.push_str(&text),
                    Err(failure) => {
                        problems.push(ExpandProblem::Cel {
                            entry: node.entry,
                            source: source.to_string(),
                            failure,
                        });
                        out.push_str("(eval error)");
                    }
                }
            }
        }
    }
    out
}

/// Eager nodes and every lazy node they reach.
fn reachable_from_eager(nodes: &[Node], edges: &Lists<usize>) -> Vec<bool> {
    let mut active = vec![false; nodes.len()];
    let mut pending: Vec<usize> = (0..nodes.len()).filter(|&i| !nodes[i].lazy).collect();
    for &i in &pending {
        active[i] = true;
    }
    while let Some(n) = pending.pop() {
        for &d in &edges[n] {
            if !active[d] {
                active[d] = true;
                pending.push(d);
            }
        }
    }
    active
}

/// Tarjan's algorithm without recursion. Components come out dependencies
/// first (a component after every component it reaches), members in
/// discovery order.
fn strongly_connected(edges: &Lists<usize>, active: &[bool]) -> Lists<usize> {
    const UNSEEN: usize = usize::MAX;
    let count = edges.len();
    let mut index = vec![UNSEEN; count];
    let mut low = vec![0usize; count];
    let mut on_stack = vec![false; count];
    let mut stack: Vec<usize> = Vec::new();
    let mut components = Lists::with_capacity(count, count);
    let mut next = 0usize;
    // (node, position of the next edge to look at)
    let mut frames: Vec<(usize, usize)> = Vec::new();
    for root in 0..count {
        if !active[root] || index[root] != UNSEEN {
            continue;
        }
        frames.push((root, 0));
        index[root] = next;
        low[root] = next;
        next += 1;
        stack.push(root);
        on_stack[root] = true;
        while let Some(frame) = frames.last_mut() {
            let node = frame.0;
            if let Some(&target) = edges[node].get(frame.1) {
                frame.1 += 1;
                if !active[target] {
                    continue;
                }
                if index[target] == UNSEEN {
                    index[target] = next;
                    low[target] = next;
                    next += 1;
                    stack.push(target);
                    on_stack[target] = true;
                    frames.push((target, 0));
                } else if on_stack[target] {
                    low[node] = low[node].min(index[target]);
                }
                continue;
            }
            frames.pop();
            if let Some(&(parent, _)) = frames.last() {
                low[parent] = low[parent].min(low[node]);
            }
            if low[node] == index[node] {
                while let Some(member) = stack.pop() {
                    on_stack[member] = false;
                    components.push(member);
                    if member == node {
                        break;
                    }
                }
                components.open_mut().sort_unstable();
                components.close();
            }
        }
    }
    components
}

/// Cycles inside one strongly connected component, enough to name every
/// member: for each member not yet on a reported cycle (in order), the
/// shortest cycle through it. A component that is one simple cycle gives
/// exactly that cycle, starting at its first member.
fn cycles_in(component: &[usize], edges: &Lists<usize>) -> Vec<Vec<usize>> {
    let members: HashSet<usize> = component.iter().copied().collect();
    let mut covered: HashSet<usize> = HashSet::new();
    let mut cycles = Vec::new();
    for &start in component {
        if covered.contains(&start) {
            continue;
        }
        if let Some(path) = shortest_cycle(start, &members, edges) {
            covered.extend(path.iter().copied());
            cycles.push(path);
        }
    }
    cycles
}

fn shortest_cycle(
    start: usize,
    members: &HashSet<usize>,
    edges: &Lists<usize>,
) -> Option<Vec<usize>> {
    let mut parent: HashMap<usize, usize> = HashMap::new();
    let mut queue = VecDeque::from([start]);
    while let Some(node) = queue.pop_front() {
        for &next in &edges[node] {
            if !members.contains(&next) {
                continue;
            }
            if next == start {
                let mut path = vec![node];
                let mut cursor = node;
                while cursor != start {
                    let Some(&previous) = parent.get(&cursor) else {
                        break;
                    };
                    cursor = previous;
                    path.push(cursor);
                }
                path.reverse();
                return Some(path);
            }
            if let std::collections::hash_map::Entry::Vacant(slot) = parent.entry(next) {
                slot.insert(node);
                queue.push_back(next);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn table_of(values: &[(String, String)]) -> (Table<'static>, Vec<Node>) {
        let mut table = Table::default();
        let mut nodes = Vec::new();
        for (name, value) in values {
            let entry = table.set(name, Some(Value::String(value.clone())));
            if expr::needs_expansion(value) {
                nodes.push(Node {
                    entry,
                    scope: Scope::default(),
                    lazy: false,
                });
            }
        }
        (table, nodes)
    }

    fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
        items
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    fn names(table: &Table, path: &[usize]) -> Vec<String> {
        path.iter().map(|&e| table.key(e).to_string()).collect()
    }

    #[test]
    fn forward_and_backward_references() {
        let (table, nodes) = table_of(&pairs(&[
            ("later", "${d}/x"),
            ("n", "demo"),
            ("d", "${n}.example.com"),
        ]));
        let out = evaluate(&table, &nodes, &Cel::default());
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        assert_eq!(out.result(0).unwrap(), "demo.example.com/x");
    }

    #[test]
    fn two_cycle_reported_with_path() {
        let (table, nodes) = table_of(&pairs(&[("a", "x${b}"), ("b", "y${a}")]));
        let out = evaluate(&table, &nodes, &Cel::default());
        let cycles: Vec<Vec<String>> = out
            .problems
            .iter()
            .filter_map(|p| match p {
                ExpandProblem::Cycle { path } => Some(names(&table, path)),
                _ => None,
            })
            .collect();
        assert_eq!(cycles, vec![vec!["a".to_string(), "b".to_string()]]);
    }

    #[test]
    fn self_reference_is_a_cycle() {
        let (table, nodes) = table_of(&pairs(&[("a", "${a}")]));
        let out = evaluate(&table, &nodes, &Cel::default());
        assert_eq!(out.problems, vec![ExpandProblem::Cycle { path: vec![0] }]);
    }

    #[test]
    fn cel_reads_create_edges() {
        let (table, nodes) = table_of(&pairs(&[
            ("t", "#{dns.name == 'demo'}"),
            ("dns.name", "${base}"),
            ("base", "demo"),
        ]));
        let out = evaluate(&table, &nodes, &Cel::default());
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        assert_eq!(out.result(0).unwrap(), "true");
    }

    #[test]
    fn long_chain_without_recursion() {
        let count = 10_000;
        let mut values: Vec<(String, String)> = (0..count)
            .map(|i| (format!("p{i}"), format!("${{p{}}}", i + 1)))
            .collect();
        values.push((format!("p{count}"), "end".into()));
        let (table, nodes) = table_of(&values);
        let out = evaluate(&table, &nodes, &Cel::default());
        assert!(out.problems.is_empty());
        assert!((0..count).all(|i| out.result(i).unwrap() == "end"));
    }

    #[test]
    fn long_cycle_reported_whole() {
        let count = 10_000;
        let values: Vec<(String, String)> = (0..count)
            .map(|i| (format!("p{i}"), format!("${{p{}}}", (i + 1) % count)))
            .collect();
        let (table, nodes) = table_of(&values);
        let out = evaluate(&table, &nodes, &Cel::default());
        assert_eq!(
            out.problems,
            vec![ExpandProblem::Cycle {
                path: (0..count).collect()
            }]
        );
    }

    #[test]
    fn secrets_taint_their_readers() {
        let (table, nodes) = table_of(&pairs(&[
            ("db.password", "hunter2"),
            ("dsn", "u:${db.password}@h"),
            ("copy", "${dsn}"),
        ]));
        let out = evaluate(&table, &nodes, &Cel::default());
        assert!(out.is_tainted(1) && out.is_tainted(2));
    }

    /// A random graph: `size` parameters, each referencing some earlier ones
    /// (acyclic by construction), plus planted disjoint cycles over chosen
    /// members that only ever point back to the same cycle.
    fn acyclic_refs() -> impl Strategy<Value = Vec<Vec<usize>>> {
        (1usize..40).prop_flat_map(|size| {
            (0..size)
                .map(|i| {
                    proptest::collection::vec(0..i.max(1), 0..3).prop_map(move |refs| {
                        if i == 0 {
                            Vec::new()
                        } else {
                            refs
                        }
                    })
                })
                .collect::<Vec<_>>()
        })
    }

    fn values_for(refs: &[Vec<usize>], extra: &[(usize, usize)]) -> Vec<(String, String)> {
        refs.iter()
            .enumerate()
            .map(|(i, targets)| {
                let mut value = format!("v{i}");
                for t in targets {
                    value.push_str(&format!("-${{p{t}}}"));
                }
                for &(from, to) in extra {
                    if from == i {
                        value.push_str(&format!("-${{p{to}}}"));
                    }
                }
                (format!("p{i}"), value)
            })
            .collect()
    }

    proptest! {
        #[test]
        fn acyclic_graphs_always_resolve(refs in acyclic_refs()) {
            let (table, nodes) = table_of(&values_for(&refs, &[]));
            let out = evaluate(&table, &nodes, &Cel::default());
            prop_assert!(out.problems.is_empty());
            prop_assert_eq!(out.result_count(), nodes.len());
            for (entry, text) in (0..table.len()).filter_map(|e| out.result(e).map(|t| (e, t))) {
                prop_assert!(!text.contains("${"), "{} = {}", table.key(entry), text);
                let prefix = format!("v{entry}");
                prop_assert!(text.starts_with(&prefix));
            }
        }

        #[test]
        fn planted_cycles_are_reported_exactly(
            refs in acyclic_refs(),
            lengths in proptest::collection::vec(1usize..5, 1..4),
        ) {
            // Cycles go over fresh parameters appended after the acyclic
            // ones; acyclic parameters may point into cycles, never back.
            let base = refs.len();
            let mut all = refs.clone();
            let mut extra = Vec::new();
            let mut expected = Vec::new();
            let mut next = base;
            for len in &lengths {
                let members: Vec<usize> = (next..next + len).collect();
                for (k, &m) in members.iter().enumerate() {
                    all.push(Vec::new());
                    extra.push((m, members[(k + 1) % len]));
                }
                expected.push(members);
                next += len;
            }
            for (i, targets) in all.iter_mut().enumerate().take(base) {
                if i % 3 == 0 {
                    targets.push(base + i % (next - base));
                }
            }
            let (table, nodes) = table_of(&values_for(&all, &extra));
            let out = evaluate(&table, &nodes, &Cel::default());
            let mut cycles: Vec<Vec<usize>> = out.problems.iter().map(|p| match p {
                ExpandProblem::Cycle { path } => path.clone(),
                other => panic!("unexpected {other:?}"),
            }).collect();
            cycles.sort();
            prop_assert_eq!(cycles, expected);
        }
    }
}
