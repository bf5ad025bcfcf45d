use super::*;
use hub_state::test_support::{keys, Dice};

fn output(component: &str, value: &str) -> CapturedOutput {
    CapturedOutput {
        component: component.into(),
        name: "out".into(),
        value: yaml_serde::Value::String(value.into()),
        ..CapturedOutput::default()
    }
}

fn values(outputs: &[CapturedOutput]) -> Vec<String> {
    outputs
        .iter()
        .map(|o| {
            format!(
                "{}={}",
                o.component,
                hub_params::format::substitution_text(Some(&o.value))
            )
        })
        .collect()
}

/// One output of `component` named `name`.
fn named(component: &str, name: &str, value: &str) -> CapturedOutput {
    CapturedOutput {
        name: name.into(),
        ..output(component, value)
    }
}

#[test]
fn overlay_replaces_and_moves_to_the_end_as_one_push_at_a_time_would() {
    let naive = |mut base: Vec<CapturedOutput>, new: &[CapturedOutput]| {
        for o in new {
            base.retain(|b| b.qualified_name() != o.qualified_name());
            base.push(o.clone());
        }
        base
    };
    let base = vec![
        named("a", "x", "1"),
        named("b", "x", "2"),
        named("a", "y", "3"),
        named("", "x", "4"),
    ];
    let new = vec![
        named("a", "x", "5"),
        named("c", "z", "6"),
        named("a", "x", "7"),
        named("", "x", "8"),
    ];
    let fast = overlay(base.clone(), &new);
    assert_eq!(fast, naive(base.clone(), &new));
    assert_eq!(values(&fast), ["b=2", "a=3", "c=6", "a=7", "=8"]);
    assert_eq!(overlay(base.clone(), &[]), base);
}

#[test]
fn what_a_component_produced_is_kept_as_overlay_keeps_it_and_shared_not_copied() {
    let produced = vec![
        named("a", "x", "1"),
        named("c", "z", "2"),
        named("a", "x", "3"),
        named("", "x", "4"),
        named("c", "z", "5"),
    ];
    let kept = last_of_each(produced.clone());
    let plain: Vec<CapturedOutput> = kept.iter().map(|o| CapturedOutput::clone(o)).collect();
    assert_eq!(plain, overlay(Vec::new(), &produced));
    assert_eq!(values(&plain), ["a=3", "=4", "c=5"]);
    // A snapshot built on them holds the same outputs, not copies.
    let snapshot = Snapshot::changed_shared(&Snapshot::default(), kept.clone(), Vec::new());
    let found = snapshot.find("a:x").expect("a:x is set");
    assert!(kept.iter().any(|o| std::ptr::eq(&**o, found)));
}

#[test]
fn only_the_outputs_read_reach_the_expansion_and_what_their_values_name() {
    let outputs = vec![
        named("db", "host", "h"),
        named("db", "port", "5432"),
        named("web", "url", "http://${dns.name}:#{api.port + 1}"),
        named("dns", "dns.name", "example.com"),
        named("api", "api.port", "80"),
        named("api", "api.key", "k"),
        named("other", "unrelated", "x"),
    ];
    let reads: HashSet<String> = ["db:port", "url"].iter().map(|s| s.to_string()).collect();
    let names: Vec<String> = outputs_read(&outputs, &reads)
        .iter()
        .map(|o| format!("{}:{}", o.component, o.name))
        .collect();
    assert_eq!(
        names,
        ["db:port", "web:url", "dns:dns.name", "api:api.port"]
    );
    assert!(outputs_read(&outputs, &HashSet::new()).is_empty());
}

/// The upstream of a parallel run's component, as positions.
fn bits(positions: &[usize]) -> Option<Rc<Bits>> {
    let mut bits = Bits::new(8);
    for &at in positions {
        bits.insert(at);
    }
    Some(Rc::new(bits))
}

#[test]
fn one_at_a_time_everything_known_so_far_is_seen() {
    let mut known = Known::new(vec![output("a", "old")], IndexMap::new(), false);
    known.produced(0, "a", vec![output("a", "new")], vec!["vpc".into()], None);
    known.produced(1, "b", vec![output("b", "1")], vec![], None);
    let view = known.visible("c", 2, None);
    assert_eq!(values(&known.all(&view)), ["a=new", "b=1"]);
    assert_eq!(known.provides_for(&view)["vpc"], ["a"]);
}

#[test]
fn in_parallel_only_upstream_outputs_are_seen_whatever_finished_first() {
    let mut known = Known::new(vec![output("x", "start")], IndexMap::new(), true);
    // `x` (position 2) finishes before `a` (position 0).
    known.produced(
        2,
        "x",
        vec![output("x", "new")],
        vec!["dns".into()],
        bits(&[]),
    );
    known.produced(
        0,
        "a",
        vec![output("a", "1")],
        vec!["vpc".into()],
        bits(&[]),
    );
    let b = known.visible("b", 1, bits(&[0]));
    assert_eq!(values(&known.all(&b)), ["x=start", "a=1"]);
    let provides = known.provides_for(&b);
    assert_eq!(provides.keys().collect::<Vec<_>>(), ["vpc"]);
    // The totals follow the run's order, not the order of the ends.
    assert_eq!(values(&known.outputs()), ["a=1", "x=new"]);
    assert_eq!(known.provides.keys().collect::<Vec<_>>(), ["vpc", "dns"]);
    assert_eq!(known.output_names(2), ["out"]);
}

#[test]
fn in_parallel_preloads_belong_to_their_component() {
    let mut known = Known::new(Vec::new(), IndexMap::new(), true);
    known.preload("b", 1, vec![output("z", "from the state")]);
    let b = known.visible("b", 1, bits(&[]));
    assert_eq!(values(&known.all(&b)), ["z=from the state"]);
    assert!(known.all(&known.visible("c", 2, bits(&[]))).is_empty());
}

#[test]
fn undeployed_components_provide_nothing() {
    let mut provides = IndexMap::new();
    provides.insert("vpc".to_string(), vec!["a".to_string(), "b".to_string()]);
    for parallel in [false, true] {
        let mut known = Known::new(Vec::new(), provides.clone(), parallel);
        known.undeployed(1, "b");
        assert_eq!(known.provides["vpc"], ["a"], "parallel: {parallel}");
    }
}

// ---- against the whole lists the engine used to build ----------------

/// What a run knew, computed as before views: every list whole.
struct Lists {
    parallel: bool,
    outputs: Vec<CapturedOutput>,
    initial: Vec<CapturedOutput>,
    preloaded: HashMap<String, Vec<CapturedOutput>>,
    produced: BTreeMap<usize, (String, Vec<CapturedOutput>)>,
}

impl Lists {
    fn outputs_for(&self, name: &str, upstream: &[usize]) -> Vec<CapturedOutput> {
        if !self.parallel {
            return self.outputs.clone();
        }
        let base = self.preloaded.get(name).unwrap_or(&self.initial);
        let produced = self
            .produced
            .iter()
            .filter(|(at, _)| upstream.contains(at))
            .flat_map(|(_, (_, outputs))| outputs);
        overlay(base.clone(), produced)
    }

    fn produced(
        &mut self,
        at: usize,
        name: &str,
        outputs: Vec<CapturedOutput>,
        upstream: &[usize],
    ) -> Vec<CapturedOutput> {
        let snapshot = match self.parallel {
            true => overlay(self.outputs_for(name, upstream), &outputs),
            false => {
                self.outputs = overlay(std::mem::take(&mut self.outputs), &outputs);
                self.outputs.clone()
            }
        };
        self.produced.insert(at, (name.to_string(), outputs));
        if self.parallel {
            let all = self.produced.values().flat_map(|(_, o)| o);
            self.outputs = overlay(self.initial.clone(), all);
        }
        snapshot
    }
}

/// Outputs of `component`: shared names, own names, values that name
/// other outputs; now and then the same name twice.
fn outputs_of(dice: &mut Dice, component: &str) -> Vec<CapturedOutput> {
    (0..dice.roll(4))
        .map(|_| {
            let name = match dice.roll(3) {
                0 => "shared".to_string(),
                1 => format!("{component}.out"),
                _ => format!("o{}", dice.roll(3)),
            };
            let value = match dice.roll(5) {
                0 => format!("${{c{}.out}}", dice.roll(12)),
                _ => format!("v{}", dice.roll(3)),
            };
            named(component, &name, &value)
        })
        .collect()
}

fn refs(outputs: Vec<&CapturedOutput>) -> Vec<CapturedOutput> {
    outputs.into_iter().cloned().collect()
}

/// The snapshot of `view` against `against` holds what the state
/// built from the whole list `expected`, and is written the same.
fn check_snapshot(
    known: &mut Known,
    (view, preferred): (&View, Option<&Snapshot>),
    expected: Vec<CapturedOutput>,
    against: &Snapshot,
    context: &str,
) -> Snapshot {
    let snapshot = known.snapshot_on(view, preferred, against);
    let whole = Snapshot::derive(against, expected);
    assert_eq!(keys(&snapshot.to_vec()), keys(&whole.to_vec()), "{context}");
    let written = snapshot.delta_from(against);
    assert_eq!(written, whole.delta_from(against), "{context}");
    snapshot
}

/// Random stacks run in random valid orders, in parallel or one at a
/// time, with and without preloads: each view holds the list the
/// engine built before, the looked-up outputs are those a scan of that
/// list finds, and each snapshot holds the list and is written as the
/// same difference from the one it is recorded against.
#[test]
fn views_and_snapshots_equal_the_whole_lists() {
    for seed in 0..300u64 {
        let mut dice = Dice(seed);
        let parallel = seed % 2 == 0;
        let size = 2 + dice.roll(10);
        // Each component's direct predecessors: random earlier ones.
        let picks: Vec<Vec<usize>> = (0..size)
            .map(|_| (0..dice.roll(3)).map(|_| dice.roll(usize::MAX)).collect())
            .collect();
        run_against_lists(&picks, &mut dice, parallel, &format!("seed {seed}"));
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// What each component sees, on graphs proptest draws (and shrinks):
    /// each component's direct predecessors picked among the earlier
    /// ones, wide or deep, up to 40 components (a component of a deep
    /// graph sees most of the stack), against the whole lists the
    /// engine used to copy for every component.
    #[test]
    fn what_each_component_sees_on_random_graphs_equals_the_copied_lists(
        picks in proptest::collection::vec(
            proptest::collection::vec(proptest::prelude::any::<usize>(), 0..5),
            2..40,
        ),
        seed in proptest::prelude::any::<u64>(),
        parallel in proptest::prelude::any::<bool>(),
    ) {
        run_against_lists(&picks, &mut Dice(seed), parallel, &format!("seed {seed}"));
    }
}

/// One run on the graph whose component `i` runs after `picks[i]` (each
/// taken modulo `i`: an earlier component), its outputs, preloads,
/// reads and order drawn from `dice`; every view, lookup and snapshot
/// checked against [`Lists`].
fn run_against_lists(picks: &[Vec<usize>], dice: &mut Dice, parallel: bool, seed: &str) {
    let dice = &mut *dice;
    {
        let size = picks.len();
        let names: Vec<String> = (0..size).map(|i| format!("c{i}")).collect();
        // Each component's upstream: the closure of its predecessors.
        let mut upstream: Vec<Vec<usize>> = Vec::new();
        for (i, before) in picks.iter().enumerate() {
            let mut set: BTreeSet<usize> = BTreeSet::new();
            for &pick in before.iter().filter(|_| i > 0) {
                let before = pick % i;
                set.insert(before);
                set.extend(upstream[before].iter().copied());
            }
            upstream.push(set.into_iter().collect());
        }
        let initial: Vec<CapturedOutput> = (0..dice.roll(size))
            .flat_map(|_| {
                let owner = format!("c{}", dice.roll(size + 2));
                outputs_of(dice, &owner)
            })
            .collect();
        let initial = overlay(Vec::new(), &initial);
        let mut known = Known::new(initial.clone(), IndexMap::new(), parallel);
        let mut lists = Lists {
            parallel,
            outputs: initial.clone(),
            initial,
            preloaded: HashMap::new(),
            produced: BTreeMap::new(),
        };
        // Parallel: any order in which each runs after its upstream.
        let mut order: Vec<usize> = (0..size).collect();
        if parallel {
            let mut done: Vec<usize> = Vec::new();
            while done.len() < size {
                let ready: Vec<usize> = (0..size)
                    .filter(|i| !done.contains(i) && upstream[*i].iter().all(|u| done.contains(u)))
                    .collect();
                done.push(ready[dice.roll(ready.len())]);
            }
            order = done;
        }
        let mut handed: Vec<Snapshot> = vec![Snapshot::default()];
        for at in order {
            let name = &names[at];
            if dice.roll(8) == 0 {
                let preload = outputs_of(dice, "p");
                known.preload(name, at, preload.clone());
                match parallel {
                    true => drop(lists.preloaded.insert(name.clone(), preload)),
                    false => lists.outputs = preload,
                }
            }
            let bits = parallel.then(|| {
                let mut bits = Bits::new(size);
                upstream[at].iter().for_each(|&u| bits.insert(u));
                Rc::new(bits)
            });
            let view = known.visible(name, at, bits.clone());
            let expected = lists.outputs_for(name, &upstream[at]);
            let context = format!("{seed}, {name}");
            assert_eq!(keys(&known.all(&view)), keys(&expected), "{context}");
            let reads: HashSet<String> = (0..dice.roll(4))
                .map(|_| match dice.roll(4) {
                    0 => "shared".to_string(),
                    1 => format!("c{}:o{}", dice.roll(size), dice.roll(3)),
                    _ => format!("c{}.out", dice.roll(size)),
                })
                .collect();
            let read = refs(known.read(&view, &reads));
            assert_eq!(
                keys(&read),
                keys(&refs(outputs_read(&expected, &reads))),
                "{context}"
            );
            let depends: Vec<String> = (0..dice.roll(3))
                .map(|_| format!("c{}", dice.roll(size)))
                .collect();
            let mut of_depends = expected.clone();
            of_depends.retain(|o| depends.contains(&o.component));
            assert_eq!(
                keys(&known.of_components(&view, &depends)),
                keys(&of_depends),
                "{context}"
            );
            let against = handed[dice.roll(handed.len())].clone();
            handed.push(check_snapshot(
                &mut known,
                (&view, None),
                expected,
                &against,
                &context,
            ));
            let outputs = outputs_of(dice, name);
            let after = known.produced(at, name, outputs.clone(), Vec::new(), bits);
            let expected = lists.produced(at, name, outputs, &upstream[at]);
            assert_eq!(keys(&known.all(&after)), keys(&expected), "{context} after");
            let against = handed[dice.roll(handed.len())].clone();
            let context = format!("{context} after");
            // After it ran, built on what it saw while running.
            let running = handed.last().cloned();
            handed.push(check_snapshot(
                &mut known,
                (&after, running.as_ref()),
                expected,
                &against,
                &context,
            ));
        }
        assert_eq!(
            keys(&known.outputs()),
            keys(&lists.outputs),
            "{seed}: totals"
        );
    }
}
