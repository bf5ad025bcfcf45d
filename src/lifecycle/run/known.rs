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

use crate::state::{self, CapturedOutput};
use indexmap::IndexMap;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

pub struct Known {
    parallel: bool,
    /// Every output known, oldest first (in a parallel run: in the run's
    /// order).
    pub outputs: Vec<CapturedOutput>,
    /// Capability → providers.
    pub provides: IndexMap<String, Vec<String>>,
    initial_outputs: Vec<CapturedOutput>,
    initial_provides: IndexMap<String, Vec<String>>,
    /// Parallel runs: the outputs preloaded for a component (`-c`, `-o`).
    preloaded: HashMap<String, Vec<CapturedOutput>>,
    /// What each component produced in this run, by position in the run.
    produced: BTreeMap<usize, Produced>,
    /// Parallel undeploys: the components undeployed, by position.
    undeployed: BTreeMap<usize, String>,
}

struct Produced {
    name: String,
    outputs: Vec<CapturedOutput>,
    capabilities: Vec<String>,
}

impl Known {
    pub fn new(
        outputs: Vec<CapturedOutput>,
        provides: IndexMap<String, Vec<String>>,
        parallel: bool,
    ) -> Known {
        Known {
            parallel,
            initial_outputs: outputs.clone(),
            initial_provides: provides.clone(),
            outputs,
            provides,
            preloaded: HashMap::new(),
            produced: BTreeMap::new(),
            undeployed: BTreeMap::new(),
        }
    }

    /// The outputs a run starting at `name` sees (§4.3): from now on (one
    /// at a time), or for `name` alone (parallel).
    pub fn preload(&mut self, name: &str, outputs: Vec<CapturedOutput>) {
        match self.parallel {
            true => {
                self.preloaded.insert(name.to_string(), outputs);
            }
            false => self.outputs = outputs,
        }
    }

    /// The outputs `name` is expanded with; `upstream`: the components it
    /// runs after, directly or not (only looked at in a parallel run).
    pub fn outputs_for(&self, name: &str, upstream: &BTreeSet<String>) -> Vec<CapturedOutput> {
        if !self.parallel {
            return self.outputs.clone();
        }
        let base = self.preloaded.get(name).unwrap_or(&self.initial_outputs);
        let produced = self
            .produced
            .values()
            .filter(|p| upstream.contains(&p.name));
        overlay(base.clone(), produced.flat_map(|p| &p.outputs))
    }

    /// The capabilities a component's requirements are checked against.
    pub fn provides_for(&self, upstream: &BTreeSet<String>) -> IndexMap<String, Vec<String>> {
        if !self.parallel {
            return self.provides.clone();
        }
        self.replay_provides(&|p| upstream.contains(p))
    }

    /// Records what the component at `position` produced; returns the
    /// outputs known right after it ran (its snapshot in the state).
    pub fn produced(
        &mut self,
        position: usize,
        name: &str,
        outputs: Vec<CapturedOutput>,
        capabilities: Vec<String>,
        upstream: &BTreeSet<String>,
    ) -> Vec<CapturedOutput> {
        let snapshot = match self.parallel {
            true => overlay(self.outputs_for(name, upstream), &outputs),
            false => {
                self.outputs = overlay(std::mem::take(&mut self.outputs), &outputs);
                for capability in &capabilities {
                    state::add_provider(&mut self.provides, capability, name);
                }
                self.outputs.clone()
            }
        };
        let produced = Produced {
            name: name.to_string(),
            outputs,
            capabilities,
        };
        self.produced.insert(position, produced);
        if self.parallel {
            let all = self.produced.values().flat_map(|p| &p.outputs);
            self.outputs = overlay(self.initial_outputs.clone(), all);
            self.provides = self.replay_provides(&|_| true);
        }
        snapshot
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
            .map(|p| p.outputs.iter().map(|o| o.name.clone()).collect())
            .unwrap_or_default()
    }

    /// The capabilities at the start with what this run did, in its order.
    fn replay_provides(&self, include: &dyn Fn(&str) -> bool) -> IndexMap<String, Vec<String>> {
        let mut provides = self.initial_provides.clone();
        for produced in self.produced.values().filter(|p| include(&p.name)) {
            for capability in &produced.capabilities {
                state::add_provider(&mut provides, capability, &produced.name);
            }
        }
        for name in self.undeployed.values() {
            state::remove_provider(&mut provides, name);
        }
        provides
    }
}

/// The outputs among `outputs` that a component whose parameters look up
/// `reads` can see: those named in `reads`, plainly or as
/// `component:name`, and, since a value holding `${...}` or `#{...}` is
/// expanded again where it is used, the outputs such values name in turn.
/// Expanding with these alone gives the same values as with all of
/// `outputs`, and the table the expansion builds no longer grows with the
/// stack.
pub fn outputs_read<'o>(
    outputs: &'o [CapturedOutput],
    reads: &HashSet<String>,
) -> Vec<&'o CapturedOutput> {
    let mut wanted = Wanted::new(reads.iter().cloned());
    let mut cel = None;
    loop {
        let seen: Vec<&CapturedOutput> = outputs.iter().filter(|o| wanted.sees(o)).collect();
        let mut more = Vec::new();
        for output in &seen {
            if let yaml_serde::Value::String(text) = &output.value {
                if crate::params::expr::needs_expansion(text) {
                    let cel = cel.get_or_insert_with(crate::params::Cel::shared);
                    more.extend(crate::params::template_names(cel, text));
                }
            }
        }
        if !wanted.add(more) {
            return seen;
        }
    }
}

/// Names looked up: plain, and `component:name` split in two.
struct Wanted {
    plain: HashSet<String>,
    qualified: HashMap<String, HashSet<String>>,
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
/// the list and pushed, in turn). Linear in the lengths of both.
pub fn overlay<'o>(
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

#[cfg(test)]
mod tests {
    use super::*;

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
                    crate::params::format::substitution_text(Some(&o.value))
                )
            })
            .collect()
    }

    fn upstream(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
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

    #[test]
    fn one_at_a_time_everything_known_so_far_is_seen() {
        let mut known = Known::new(vec![output("a", "old")], IndexMap::new(), false);
        let none = BTreeSet::new();
        known.produced(0, "a", vec![output("a", "new")], vec!["vpc".into()], &none);
        known.produced(1, "b", vec![output("b", "1")], vec![], &none);
        assert_eq!(values(&known.outputs_for("c", &none)), ["a=new", "b=1"]);
        assert_eq!(known.provides_for(&none)["vpc"], ["a"]);
    }

    #[test]
    fn in_parallel_only_upstream_outputs_are_seen_whatever_finished_first() {
        let mut known = Known::new(vec![output("x", "start")], IndexMap::new(), true);
        let none = BTreeSet::new();
        // `x` (position 2) finishes before `a` (position 0).
        known.produced(2, "x", vec![output("x", "new")], vec!["dns".into()], &none);
        known.produced(0, "a", vec![output("a", "1")], vec!["vpc".into()], &none);
        let after_a = upstream(&["a"]);
        assert_eq!(
            values(&known.outputs_for("b", &after_a)),
            ["x=start", "a=1"]
        );
        let provides = known.provides_for(&after_a);
        assert_eq!(provides.keys().collect::<Vec<_>>(), ["vpc"]);
        // The totals follow the run's order, not the order of the ends.
        assert_eq!(values(&known.outputs), ["a=1", "x=new"]);
        assert_eq!(known.provides.keys().collect::<Vec<_>>(), ["vpc", "dns"]);
        assert_eq!(known.output_names(2), ["out"]);
    }

    #[test]
    fn in_parallel_preloads_belong_to_their_component() {
        let mut known = Known::new(Vec::new(), IndexMap::new(), true);
        known.preload("b", vec![output("z", "from the state")]);
        let none = BTreeSet::new();
        assert_eq!(values(&known.outputs_for("b", &none)), ["z=from the state"]);
        assert!(known.outputs_for("c", &none).is_empty());
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
}
