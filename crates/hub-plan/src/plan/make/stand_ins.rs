//! The stand-ins of a deploy's plan: an output a component deploying
//! earlier in the run declares and the state does not hold is only known
//! after that deploy.

use super::{expand, Walk};
use hub_state::CapturedOutput;
use std::collections::HashSet;

impl Walk<'_> {
    /// An output declared by a component that deploys earlier in this run
    /// and not among the outputs seen (`holds`) is only known after that
    /// deploy: its stand-in. Only
    /// the outputs the component may read, and those of its `depends`
    /// (their digests say whether it runs again), are needed: they are
    /// looked up by name, so the cost does not grow with the stack.
    pub(super) fn stand_ins(
        &self,
        name: &str,
        depends: &[String],
        holds: &dyn Fn(&str, &str) -> bool,
    ) -> Vec<CapturedOutput> {
        let reaches = self.reaches(name);
        let mut wanted: Vec<(usize, usize, &str)> = Vec::new();
        let mut want = |producer: &str, output: &str| {
            let taken = self.taken.actions.get_full(producer);
            let Some((at, _, action)) = taken else {
                return;
            };
            if !action.keeps_outputs() {
                return;
            }
            let manifest = self.stack.elaborated.component(producer);
            let declared = manifest.and_then(|m| m.outputs.iter().position(|o| o.name == output));
            if let (Some(index), true) = (declared, reaches(producer)) {
                wanted.push((
                    at,
                    index,
                    self.taken.actions.get_index(at).map_or("", |(k, _)| k),
                ));
            }
        };
        // Every component of the plan has its reads.
        for read in self.plan.reads(name).into_iter().flatten() {
            for producer in self.declarations.by_name.get(read).into_iter().flatten() {
                want(producer, read);
            }
            if let Some((producer, output)) = read.split_once(':') {
                want(producer, output);
            }
        }
        for dependency in depends {
            for output in self.declared(dependency) {
                want(dependency, &output.name);
            }
        }
        // In the run's order, as one at a time would have found them.
        wanted.sort_unstable();
        wanted.dedup();
        let mut known: HashSet<(String, String)> = HashSet::new();
        let mut stand_ins = Vec::new();
        for (_, index, producer) in wanted {
            let Some(manifest) = self.stack.elaborated.component(producer) else {
                continue;
            };
            let declared = &manifest.outputs[index];
            let key = (producer.to_string(), declared.name.clone());
            if known.contains(&key) || holds(producer, &declared.name) {
                continue;
            }
            known.insert(key);
            stand_ins.push(CapturedOutput {
                component: producer.to_string(),
                component_kind: manifest.meta.kind.clone(),
                name: declared.name.clone(),
                value: expand::stand_in(producer, &declared.name),
                kind: declared.kind.clone(),
                ..CapturedOutput::default()
            });
        }
        stand_ins
    }
}
