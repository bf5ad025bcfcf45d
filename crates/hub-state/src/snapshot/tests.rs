//! Tests of output snapshots: lookups and walks through the ladders against
//! the whole reconstructed snapshots.

use super::*;
use crate::test_support::{keys, text_output as output, Dice};

fn names(snapshot: &Snapshot) -> Vec<String> {
    keys(&snapshot.to_vec())
}

/// Lookups through the ladders see what the whole reconstructed
/// snapshot holds, on long random chains of sets and removals, and
/// visit few nodes.
#[test]
fn lookups_through_ladders_equal_the_whole_snapshot() {
    let mut dice = Dice(0x1add_e125);
    let universe: Vec<String> = (0..12)
        .flat_map(|c| (0..3).map(move |n| format!("c{c}:o{n}")))
        .collect();
    for _ in 0..20 {
        let mut snapshot = Snapshot::default();
        let mut chain = Vec::new();
        for step in 0..150 {
            let current = snapshot.to_vec();
            let mut delta = Delta::default();
            for _ in 0..1 + dice.roll(3) {
                let key = &universe[dice.roll(universe.len())];
                let (component, name) = key.split_once(':').unwrap_or_default();
                let held = current.iter().any(|o| o.qualified_name() == *key);
                if held && dice.roll(3) == 0 {
                    delta.removed.push(key.clone());
                } else if !delta.set.iter().any(|o| o.qualified_name() == *key) {
                    delta.set.push(output(component, name, &step.to_string()));
                }
            }
            delta
                .removed
                .retain(|r| !delta.set.iter().any(|o| o.qualified_name() == *r));
            snapshot = Snapshot::apply(&snapshot, delta);
            chain.push(snapshot.clone());
        }
        for snapshot in &chain {
            let whole = snapshot.to_vec();
            for key in &universe {
                let expected = whole.iter().find(|o| o.qualified_name() == *key);
                assert_eq!(snapshot.find(key), expected, "{key}");
            }
            let mut visited = 0;
            let mut at = snapshot.0.as_deref();
            while let Some(node) = at {
                visited += 1;
                at = node.covers().2 .0.as_deref();
            }
            assert!(
                visited <= 8,
                "{visited} nodes visited for depth {}",
                snapshot.depth()
            );
        }
    }
}

/// [`Snapshot::outputs_of`] as it was before the ladders: every node
/// of the chain visited.
fn outputs_of_by_chain(snapshot: &Snapshot, component: &str) -> Vec<CapturedOutput> {
    let prefix = format!("{component}:");
    let mut decided: HashSet<&str> = HashSet::new();
    let mut removed: HashSet<&str> = HashSet::new();
    let mut outputs: Vec<&CapturedOutput> = Vec::new();
    for node in snapshot.chain() {
        for output in node.set.iter().filter(|o| o.component == component) {
            if decided.insert(output.name.as_str()) && !removed.contains(output.name.as_str()) {
                outputs.push(output);
            }
        }
        removed.extend(node.removed.iter().filter_map(|r| r.strip_prefix(&prefix)));
    }
    outputs.sort_by(|a, b| qualified_cmp(a, b));
    outputs.into_iter().cloned().collect()
}

/// A component's outputs found through the ladders are those the walk
/// of the whole chain finds, on random chains of sets, changes and
/// removals (derived, applied and whole snapshots, names that share
/// a prefix, repeated outputs in a whole one).
#[test]
fn a_components_outputs_through_ladders_equal_the_walk_of_the_chain() {
    let mut dice = Dice(0x0a7b_e11e);
    let components = ["a", "a.b", "ab", "b", "c", ""];
    let names = ["x", "y", "x:z", ""];
    for _ in 0..12 {
        let mut snapshot = Snapshot::default();
        let mut chain = Vec::new();
        for step in 0..120 {
            let mut outputs = snapshot.to_vec();
            for _ in 0..1 + dice.roll(4) {
                let component = components[dice.roll(components.len())];
                let name = names[dice.roll(names.len())];
                outputs.retain(|o| !(o.component == component && o.name == name));
                if dice.roll(4) > 0 {
                    outputs.push(output(component, name, &step.to_string()));
                }
            }
            snapshot = match dice.roll(25) {
                0 => {
                    let mut whole = outputs.clone();
                    if let Some(first) = outputs.first() {
                        whole.push(first.clone());
                    }
                    Snapshot::from_outputs(whole)
                }
                1 => Snapshot::apply(
                    &snapshot,
                    diff(&snapshot.refs(), &{
                        outputs.sort_by(qualified_cmp);
                        outputs
                    }),
                ),
                _ => Snapshot::derive(&snapshot, outputs),
            };
            chain.push(snapshot.clone());
        }
        for snapshot in &chain {
            for component in components.iter().filter(|c| !c.is_empty()) {
                assert_eq!(
                    snapshot.outputs_of(component),
                    outputs_of_by_chain(snapshot, component),
                    "{component}"
                );
            }
        }
    }
}

#[test]
fn one_components_outputs_are_those_of_the_whole_snapshot() {
    let root = Snapshot::from_outputs(vec![
        output("a", "x", "1"),
        output("a", "y", "1"),
        output("b", "x", "1"),
    ]);
    let changed = Snapshot::derive(
        &root,
        vec![
            output("a", "x", "2"),
            output("b", "x", "1"),
            output("a", "z", "3"),
        ],
    );
    let again = Snapshot::derive(
        &changed,
        vec![
            output("a", "y", "4"),
            output("a", "z", "3"),
            output("b", "x", "5"),
        ],
    );
    for snapshot in [&root, &changed, &again] {
        for component in ["a", "b", "c"] {
            let mut slow = snapshot.to_vec();
            slow.retain(|o| o.component == component);
            assert_eq!(snapshot.outputs_of(component), slow, "{component}");
        }
    }
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

/// A base holding a name twice (as a preloaded list may): a snapshot
/// derived from it that keeps the name keeps it once, and one that drops
/// it drops it.
#[test]
fn a_snapshot_derived_from_a_base_holding_a_name_twice_keeps_that_name() {
    let base = Snapshot::from_outputs(vec![
        output("p", "shared", "2"),
        output("p", "shared", "2"),
        output("c", "x", "1"),
    ]);
    let kept = Snapshot::derive(
        &base,
        vec![output("p", "shared", "2"), output("c", "x", "1")],
    );
    assert_eq!(names(&kept), ["c:x=1", "p:shared=2"]);
    let changed = Snapshot::derive(
        &base,
        vec![output("p", "shared", "3"), output("c", "x", "1")],
    );
    assert_eq!(names(&changed), ["c:x=1", "p:shared=3"]);
    let dropped = Snapshot::derive(&base, vec![output("c", "x", "2"), output("d", "y", "1")]);
    assert_eq!(names(&dropped), ["c:x=2", "d:y=1"]);
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
fn deltas_through_a_near_ancestor_equal_full_comparisons() {
    let root = Snapshot::from_outputs((0..6).map(|i| output("r", &format!("o{i}"), "0")).collect());
    let mut snapshots = vec![root.clone()];
    // Siblings and descendants that add, change and drop outputs: long
    // chains (deeper than the ladders' first rungs and the fewest steps
    // looked down) with branches off them.
    for step in 0..90usize {
        let base = match step % 5 {
            0 => snapshots[step / 3].clone(),
            _ => snapshots[step].clone(),
        };
        let mut outputs = base.to_vec();
        outputs.retain(|o| o.name != format!("o{}", step % 6));
        outputs.push(output(&format!("c{step}"), "out", &step.to_string()));
        if let Some(first) = outputs.first_mut() {
            first.value = yaml_serde::Value::String(format!("changed by {step}"));
        }
        snapshots.push(Snapshot::derive(&base, outputs));
    }
    for a in &snapshots {
        for b in &snapshots {
            let expected = diff(&b.refs(), &a.refs());
            if let Some(near) = a.delta_near(b) {
                assert_eq!(near, expected);
            }
            assert_eq!(a.delta_from(b), expected);
            assert_eq!(Snapshot::apply(b, a.delta_from(b)), *a);
        }
    }
}

#[test]
fn each_components_outputs_in_one_walk_are_those_asked_one_at_a_time() {
    let mut snapshots = vec![Snapshot::from_outputs(vec![
        output("c0", "x", "0"),
        output("c1", "x", "0"),
    ])];
    // Chained, whole and unrelated snapshots that add, change and drop.
    for step in 1..40usize {
        let base = snapshots[step - 1].clone();
        let mut outputs = base.to_vec();
        outputs.retain(|o| o.component != format!("c{}", (step * 7) % 5));
        outputs.push(output(&format!("c{}", step % 6), "x", &step.to_string()));
        outputs.push(output(&format!("c{}", step % 4), &format!("y{step}"), "1"));
        snapshots.push(match step % 9 {
            0 => Snapshot::from_outputs(outputs),
            4 => Snapshot::from_outputs(vec![output("c4", "z", "9")]),
            _ => Snapshot::derive(&base, outputs),
        });
    }
    let names: Vec<String> = (0..snapshots.len())
        .map(|i| format!("c{}", i % 6))
        .collect();
    let walk: Vec<(&str, &Snapshot)> = names.iter().map(String::as_str).zip(&snapshots).collect();
    let each = outputs_of_each(&walk).expect("no repeats");
    for ((component, snapshot), found) in walk.iter().zip(each) {
        assert_eq!(found, snapshot.outputs_of(component), "{component}");
    }
    let repeated = Snapshot::from_outputs(vec![output("a", "x", "1"), output("a", "x", "2")]);
    assert!(outputs_of_each(&[("a", &repeated)]).is_none());
}

#[test]
fn outputs_are_ordered_as_their_qualified_names() {
    let mut outputs = vec![
        output("a", "x", "1"),
        output("a.b", "y", "2"),
        output("", "a:z", "3"),
        output("", "b", "4"),
        output("a", "", "5"),
    ];
    let mut expected = outputs.clone();
    expected.sort_by_cached_key(CapturedOutput::qualified_name);
    outputs.sort_by(qualified_cmp);
    assert_eq!(outputs, expected);
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

/// A snapshot as read from a file hands its outputs over to the snapshot
/// a reader chains it into: the same outputs, not copies; one that shares
/// its node with another gives copies, and leaves the other whole.
#[test]
fn a_read_snapshot_hands_its_outputs_over_without_copies() {
    let read = Snapshot::from_outputs(vec![output("b", "y", "2"), output("a", "x", "1")]);
    let held: Vec<*const CapturedOutput> = read.chain()[0].set.iter().map(Arc::as_ptr).collect();
    let shared = read.into_shared();
    assert_eq!(shared.iter().map(Arc::as_ptr).collect::<Vec<_>>(), held);
    assert_eq!(
        keys(&shared.iter().map(|o| (**o).clone()).collect::<Vec<_>>()),
        ["a:x=1", "b:y=2"]
    );

    let kept = Snapshot::from_outputs(vec![output("a", "x", "1")]);
    let copied = kept.clone().into_shared();
    assert_eq!(*copied[0], output("a", "x", "1"));
    assert!(!std::ptr::eq(&*copied[0], &*kept.chain()[0].set[0]));
    assert_eq!(names(&kept), ["a:x=1"]);
}
