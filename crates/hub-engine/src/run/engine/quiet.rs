//! A `deploy --changed` that changes nothing leaves the state file as it
//! is: no write at the run's start, none at its end.
//!
//! Such a run starts quiet when it may: one local location, no journal
//! beside it (a journal is folded by the run that ends), the file's form
//! not asked to change (`--compressed`, `--state-format`), no `moved`
//! rename, and the state's head (lineage, stack, order, stack parameters)
//! as the run would record it. The start of the run's operation is then
//! not written: the first write of the run, whatever it is (a
//! component's start, a failure, an interrupt), writes it with the rest,
//! and ends the quiet (see [`Run::write_state`]); so does a change made in
//! memory without a write (a skipped component's empty entry dropped).
//! At the end a run still quiet compares what its end changes (status,
//! stack outputs, provides) with what the state held, and writes nothing
//! when they are the same: the file keeps its content, serial and time,
//! and the run's operation is not recorded, as nothing happened.

use super::Run;
use hub_plan::Verb;
use hub_state::{self as state, State};
use indexmap::IndexMap;

/// What a run's end may change in a state that nothing else changed.
pub(super) struct Head {
    status: hub_state::Recorded<hub_state::StackStatus>,
    message: String,
    captured_outputs: Vec<state::CapturedOutput>,
    stack_outputs: Vec<state::StackOutput>,
    provides: IndexMap<String, Vec<String>>,
}

impl Head {
    pub(super) fn of(state: &State) -> Head {
        Head {
            status: state.status.clone(),
            message: state.message.clone(),
            captured_outputs: state.captured_outputs.clone(),
            stack_outputs: state.stack_outputs.clone(),
            provides: state.provides.clone(),
        }
    }

    pub(super) fn same_as(&self, state: &State) -> bool {
        self.status == state.status
            && self.message == state.message
            && same_sorted(&self.captured_outputs, &state.captured_outputs, |o| {
                o.qualified_name()
            })
            && self.stack_outputs == state.stack_outputs
            && self.provides == state.provides
    }
}

impl<'a> Run<'a> {
    /// Whether the run's start may stay unwritten (see the module's
    /// documentation): `order` is what the start records, and
    /// `same_parameters` whether the stack parameters it records are the
    /// state's.
    pub(super) fn starts_quiet(&self, same_parameters: bool, order: &[String]) -> bool {
        let (Some(state), Some(locations)) = (&self.ledger.state, &self.ledger.locations) else {
            return false;
        };
        let options = self.options;
        let asks_form = options.running.write != state::WriteOptions::default();
        let [path] = locations.paths() else {
            return false;
        };
        if !self.ledger.quiet
            || self.verb != Verb::Deploy
            || !options.scope.changed
            || options.dry
            || asks_form
            || state::is_remote(path)
            || state::journal_path(&state::real_location(path)).exists()
        {
            return false;
        }
        let stack = &self.stack.elaborated.stack;
        !state.lineage.is_empty()
            && state.meta.kind == stack.kind
            && state.meta.name == stack.meta.name
            && state.lifecycle.order == order
            && same_parameters
    }
}

/// The same items in whatever order: a state writes its stack parameters
/// and outputs sorted by qualified name (a stable sort).
fn same_sorted<T: PartialEq>(a: &[T], b: &[T], name: impl Fn(&T) -> String) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let sorted = |list: &[T]| {
        let mut keyed: Vec<(String, usize)> = list
            .iter()
            .enumerate()
            .map(|(at, item)| (name(item), at))
            .collect();
        keyed.sort_unstable();
        keyed
    };
    let (a_keys, b_keys) = (sorted(a), sorted(b));
    a_keys
        .iter()
        .zip(&b_keys)
        .all(|((a_name, i), (b_name, j))| a_name == b_name && a[*i] == b[*j])
}

#[cfg(test)]
mod tests {
    use super::same_sorted;
    use hub_state::StateParameter;
    use yaml_serde::Value;

    fn param(name: &str, component: &str, value: &str) -> StateParameter {
        StateParameter::qualified(name, component, Value::String(value.into()), "")
    }

    fn same_parameters(a: &[StateParameter], b: &[StateParameter]) -> bool {
        same_sorted(a, b, StateParameter::qualified_name)
    }

    #[test]
    fn parameters_compare_whatever_their_order() {
        let recorded = [
            param("a", "", "1"),
            param("a", "x", "2"),
            param("b", "", "3"),
        ];
        let new = [
            param("b", "", "3"),
            param("a", "", "1"),
            param("a", "x", "2"),
        ];
        assert!(same_parameters(&recorded, &new));
        let changed = [
            param("b", "", "3"),
            param("a", "", "1"),
            param("a", "x", "9"),
        ];
        assert!(!same_parameters(&recorded, &changed));
        let renamed = [
            param("b", "", "3"),
            param("a", "", "1"),
            param("a", "y", "2"),
        ];
        assert!(!same_parameters(&recorded, &renamed));
        assert!(!same_parameters(&recorded, &new[..2]));
    }
}
