//! The `components` part of a render: each entry's cached text when it
//! is still right, else the entry rendered again.
//!
//! The entries are taken a window at a time, in the order they are
//! written. Which cached texts are still right without looking at the
//! entry (a write that says what changed) is decided first; the entries
//! left are digested, compared and rendered on several threads
//! ([`hub_manifest::parallel`]), each from its own value and anchors; then the
//! window's texts are written in order and its slots updated. A fold of a
//! 10,000-component state renders nearly every entry, on a processor that
//! is otherwise idle; a write after one component's change renders one.

use super::shared::{Scope, ValueDigest};
use super::{as_written, digest_of, Cached, Changed, ComponentsCache, Entry, Packed, Renderer};
use crate::layout::{snapshot_bases, StateFormat};
use crate::model::{ComponentState, State};
use crate::sink::Sink;
use crate::snapshot::Snapshot;
use crate::StateError;
use hub_manifest::emit;
use hub_manifest::parallel::{self, Spread};
use std::collections::{HashMap, HashSet};
use yaml_serde::Value;

/// Entries settled together: enough to share between threads, few enough
/// that their texts, held until written, stay a few megabytes.
const WINDOW: usize = 256;

/// A thread renders 16 entries at least, and four threads at most write
/// their texts for this one to write out.
const SPREAD: Spread = Spread {
    smallest_share: 16,
    most_threads: 4,
};

/// An entry whose cached text could not be taken on trust.
struct Work<'s> {
    /// Its position in `State::components` (and the cache's slots).
    at: usize,
    name: &'s str,
    component: &'s ComponentState,
    base: &'s str,
    base_snapshot: Snapshot,
}

/// What became of such an entry.
enum Settled {
    /// Its cached text is still right.
    Kept,
    /// Rendered again: its text, and what its slot keeps (nothing on a
    /// last render).
    Rendered {
        text: String,
        cached: Option<Cached<Entry>>,
    },
}

impl Renderer {
    pub(super) fn components<S: Sink + ?Sized>(
        &mut self,
        state: &State,
        changed: Changed<'_>,
        head: &HashSet<ValueDigest>,
        out: &mut S,
    ) -> Result<(), StateError> {
        out.push_str("components:\n");
        let bases = match self.format {
            StateFormat::Linear => snapshot_bases(state),
            StateFormat::Reference => HashMap::new(),
        };
        let last = self.last;
        let cache = &mut self.components;
        cache.follow(&state.components);
        let sorted = std::mem::take(&mut cache.sorted);
        let mut result = Ok(());
        for window in sorted.chunks(WINDOW) {
            let sides = (state, &bases, head);
            let (trusted, work) = cache.sort_window(window, sides, changed);
            let slots = &cache.entries;
            let settled = parallel::map(&work, SPREAD, |work| settle(work, slots, head, last));
            result = cache.write_window(window, trusted, work.iter().zip(settled), (last, out));
            if result.is_err() {
                break;
            }
        }
        cache.sorted = sorted;
        result
    }
}

impl ComponentsCache {
    /// For each entry of `window` (positions in `State::components`),
    /// whether its cached text is taken on trust (the write said it did
    /// not change), and the work left on the others.
    fn sort_window<'s>(
        &mut self,
        window: &[usize],
        (state, bases, head): (&'s State, &HashMap<&'s str, &'s str>, &HashSet<ValueDigest>),
        changed: Changed<'_>,
    ) -> (Vec<bool>, Vec<Work<'s>>) {
        let mut trusted = Vec::with_capacity(window.len());
        let mut work = Vec::new();
        for &at in window {
            let (name, component) = state
                .components
                .get_index(at)
                .expect("the cache follows the map");
            let base = bases.get(name.as_str()).copied().unwrap_or_default();
            let base_snapshot = state
                .components
                .get(base)
                .map(|entry| entry.captured_outputs.clone())
                .unwrap_or_default();
            let slot = &mut self.entries[at];
            if slot.as_ref().is_some_and(|c| !c.value.anchors.hold(head)) {
                // The head no longer defines what the text aliases, or now
                // defines what the text defines.
                *slot = None;
            }
            let same_base = |cached: &&Cached<Entry>| {
                cached.value.base == base && cached.value.base_snapshot.same(&base_snapshot)
            };
            let trust = slot
                .as_ref()
                .filter(|_| !changed.may_have_changed(name))
                .filter(same_base);
            if let Some(cached) = trust {
                debug_assert!(
                    cached.value.digest == digest_of(component)
                        && cached
                            .value
                            .captured_outputs
                            .same(&component.captured_outputs),
                    "the entry of `{name}` changed, but the write said it did not ({changed:?})"
                );
            }
            trusted.push(trust.is_some());
            if trust.is_none() {
                work.push(Work {
                    at,
                    name,
                    component,
                    base,
                    base_snapshot,
                });
            }
        }
        (trusted, work)
    }

    /// Writes the entries of `window` in order: a text taken on trust or
    /// kept from its slot, or the one just rendered (the slot then keeps
    /// what `settled` says); a `last` write empties every slot.
    fn write_window<'w, S: Sink + ?Sized>(
        &mut self,
        window: &[usize],
        trusted: Vec<bool>,
        mut settled: impl Iterator<Item = (&'w Work<'w>, Result<Settled, StateError>)>,
        (last, out): (bool, &mut S),
    ) -> Result<(), StateError> {
        for (&at, trusted) in window.iter().zip(trusted) {
            if !trusted {
                let (work, settled) = settled.next().expect("one per entry not trusted");
                debug_assert_eq!(work.at, at);
                if let Settled::Rendered { text, cached } = settled? {
                    out.push_str(&text);
                    self.entries[at] = cached;
                    continue;
                }
            }
            let slot = &mut self.entries[at];
            if let Some(cached) = slot {
                cached.text.push_to(out);
            }
            if last {
                *slot = None;
            }
        }
        Ok(())
    }
}

/// Whether the slot of `work`'s entry still holds its text, else the
/// entry rendered.
fn settle(
    work: &Work<'_>,
    slots: &[Option<Cached<Entry>>],
    head: &HashSet<ValueDigest>,
    last: bool,
) -> Result<Settled, StateError> {
    let entry = Entry {
        digest: digest_of(work.component),
        captured_outputs: work.component.captured_outputs.clone(),
        base: work.base.to_string(),
        base_snapshot: work.base_snapshot.clone(),
        anchors: Default::default(),
    };
    if slots[work.at]
        .as_ref()
        .is_some_and(|cached| cached.value == entry)
    {
        return Ok(Settled::Kept);
    }
    let mut scope = Scope::entry(head, work.name);
    let mut value = yaml_serde::to_value(as_written(work.component, &entry))?;
    scope.mark(&mut value);
    let mut text = String::new();
    emit::entry(&Value::String(work.name.to_string()), &value, 2, &mut text);
    let text = scope.fill(&text);
    let anchors = scope.anchors;
    let cached = (!last).then(|| Cached {
        value: Entry { anchors, ..entry },
        text: Packed::new(text.clone()),
    });
    Ok(Settled::Rendered { text, cached })
}
