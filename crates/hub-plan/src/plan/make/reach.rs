//! What reaches a component in a parallel plan: the outputs and
//! capabilities of its upstream only, as in the engine.

use super::{Action, Walk};
use hub_state as state;
use indexmap::IndexMap;

impl Walk<'_> {
    /// Whether a component's outputs and capabilities reach `name`: in a
    /// parallel run (`-j` > 1) only those of its upstream do, as in the
    /// engine.
    pub(super) fn reaches(&self, name: &str) -> impl Fn(&str) -> bool + '_ {
        let plan = self.plan;
        let upstream = (self.options.concurrency > 1).then(|| {
            self.ancestry
                .borrow_mut()
                .upstream(name, &|n| plan.after(n))
        });
        move |other: &str| match &upstream {
            None => true,
            Some(bits) => self
                .ancestry
                .borrow()
                .position(other)
                .is_some_and(|at| bits.contains(at)),
        }
    }

    /// The provides map `name` is checked against: the initial one with
    /// what the components taken before it would provide (or stop
    /// providing).
    pub(super) fn visible_provides(&self, name: &str) -> IndexMap<String, Vec<String>> {
        if self.options.concurrency <= 1 {
            return self.provides.now.clone();
        }
        let reaches = self.reaches(name);
        let mut provides = self.provides.initial.clone();
        let providing = self
            .taken
            .providing
            .iter()
            .filter_map(|&at| self.taken.actions.get_index(at));
        for (other, action) in providing {
            match action {
                action if action.keeps_outputs() && reaches(other) => {
                    for capability in self.capabilities(other) {
                        state::add_provider(&mut provides, capability, other);
                    }
                }
                Action::Delete => state::remove_provider(&mut provides, other),
                _ => {}
            }
        }
        provides
    }

    pub(super) fn capabilities(&self, name: &str) -> &[String] {
        self.stack
            .elaborated
            .component(name)
            .map(|m| m.provides.as_slice())
            .unwrap_or_default()
    }
}
