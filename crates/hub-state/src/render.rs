//! Rendering one state again and again during a run.
//!
//! A run writes its state twice per component, and the state grows with
//! the stack: rendering the whole document from scratch every time makes a
//! run quadratic in the number of components. [`Renderer`] keeps the text
//! of every large part (the order, the parameter and output lists, each
//! component entry, each operation and each of its phases) together with
//! the value it was rendered from, and renders a part again only when its
//! value changed. The text is the same as [`super::render`] produces: the
//! parts are written by the same writer ([`hub_manifest::emit`]), in the same
//! canonical order, and each cached text is reused only when its value is
//! equal to the one it was rendered from.
//!
//! Comparing every component entry on every write is itself linear in the
//! stack's size (and slow: the strings compared are spread over the heap).
//! A write after a change to one component says so ([`Changed::Only`]):
//! the other entries' texts are then reused without comparing them. Debug
//! builds (the tests) compare them anyway and panic when the promise was
//! broken.

use super::layout::StateFormat;
use super::model::{
    CapturedOutput, ComponentState, Operation, Phase, State, StateLifecycle, StateParameter,
};
use super::sink::Sink;
use super::snapshot::Snapshot;
use super::StateError;
use digest::digest_serde;
use hub_manifest::emit;
use hub_manifest::parallel;
use indexmap::IndexMap;
use packed::Packed;
use serde::Serialize;
use shared::{Anchors, Scope, ValueDigest};
use std::collections::{HashMap, HashSet};
use yaml_serde::Value;

/// The `stackParameters` entry, each long value under its anchor or as an
/// alias (see [`shared`]).
///
/// Written one parameter at a time, as `emit::entry` writes the whole
/// list: a stack with 20 parameters per component holds 200,000 of them at
/// 10,000 components, and their value tree (about 20 times their text)
/// was the peak of every run's last state write.
fn stack_parameters_text(
    parameters: &[StateParameter],
    scope: &mut Scope<'_>,
) -> Result<String, StateError> {
    if parameters.is_empty() {
        return keyed_shared("stackParameters", &parameters, scope);
    }
    let mut sorted: Vec<(String, &StateParameter)> =
        parameters.iter().map(|p| (p.qualified_name(), p)).collect();
    // Stable, as the list was sorted before: equal names keep their order.
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    // Room for a typical parameter's lines at once: the text of 200,000
    // stack parameters (10,000 components) otherwise grows by doubling.
    let mut text = String::with_capacity(64 * sorted.len());
    text.push_str("stackParameters:\n");
    let mut item = String::new();
    // A window's parameters are turned into text on several threads, but
    // for those holding a long value: the anchors are decided in order, on
    // this thread. Windows keep the texts waiting to be copied few.
    for window in sorted.chunks(PARAMETERS_WINDOW) {
        let settled = parallel::map(window, PARAMETERS_SPREAD, |(_, parameter)| {
            parameter_text(parameter)
        });
        for settled in settled {
            match settled? {
                ParameterText::Plain(own) => text.push_str(&own),
                ParameterText::Shares(mut value) => {
                    scope.mark(&mut value);
                    item.clear();
                    emit::item(&value, 0, &mut item);
                    scope.fill_onto(&item, &mut text);
                }
            }
        }
    }
    Ok(text)
}

/// Stack parameters rendered at once, at most.
const PARAMETERS_WINDOW: usize = 4096;

/// Stack parameters per thread at least, and threads at most.
const PARAMETERS_SPREAD: parallel::Spread = parallel::Spread {
    smallest_share: 512,
    most_threads: 4,
};

/// A stack parameter's lines, or its value when it holds a value long
/// enough to be shared (written under an anchor, or as an alias).
enum ParameterText {
    Plain(String),
    Shares(Value),
}

fn parameter_text(parameter: &StateParameter) -> Result<ParameterText, StateError> {
    let value = yaml_serde::to_value(parameter)?;
    let mut longs = Vec::new();
    shared::long_strings(&value, &mut longs);
    if !longs.is_empty() {
        return Ok(ParameterText::Shares(value));
    }
    let mut text = String::new();
    emit::item(&value, 0, &mut text);
    Ok(ParameterText::Plain(text))
}

/// The digests of the long values of a head part, and the key its text is
/// cached under: its content and which of its long values an earlier part
/// of the head defines (its text aliases those).
fn head_part<'v, T: Serialize>(
    part: &T,
    values: impl Iterator<Item = &'v Value>,
    head: &HashSet<ValueDigest>,
) -> (Vec<ValueDigest>, Digest) {
    let mut longs = Vec::new();
    values.for_each(|value| shared::long_strings(value, &mut longs));
    let mut before: Vec<ValueDigest> = longs
        .iter()
        .filter(|d| head.contains(*d))
        .copied()
        .collect();
    before.sort_unstable();
    let key = digest_serde(&(part, before));
    (longs, key)
}

/// A part of the document and the value it was rendered from.
struct Cached<T> {
    value: T,
    text: Packed,
}

/// An operation's text without its phases, and each phase's text.
struct CachedOperation {
    head: Option<Cached<Operation>>,
    phases: Vec<Option<Cached<Phase>>>,
}

/// The component entries, by their position in `State::components`.
#[derive(Default)]
struct ComponentsCache {
    /// The names, in the map's order, as of the previous call.
    names: Vec<String>,
    /// Positions in `names`, sorted by name (the order they are written in).
    sorted: Vec<usize>,
    /// By position in `names`.
    entries: Vec<Option<Cached<Entry>>>,
}

/// What the text of a component entry was rendered from: the entry's
/// fields but its snapshot, as a digest (a copy of every entry would
/// double a run's memory for its state), its snapshot, and the name and
/// snapshot of its base in the linear layout (empty otherwise).
#[derive(Clone)]
struct Entry {
    /// `None`: not digested (see [`digest_of`]): never the same.
    digest: Option<[u8; 32]>,
    captured_outputs: Snapshot,
    base: String,
    base_snapshot: Snapshot,
    /// What its text aliases from the head and defines itself: derived
    /// from the rest, not compared.
    anchors: Anchors,
}

/// Snapshots compare as the same node, not as equal outputs: comparing
/// outputs would cost as much as the stack is large. Equal snapshots built
/// apart only render the entry again.
impl PartialEq for Entry {
    fn eq(&self, other: &Entry) -> bool {
        self.base == other.base
            && self.base_snapshot.same(&other.base_snapshot)
            && self.captured_outputs.same(&other.captured_outputs)
            && self.digest.is_some()
            && self.digest == other.digest
    }
}

/// The digest of the entry's fields but its snapshot (see [`digest`]:
/// their serde form, which tells every value from every other); `None`
/// when they cannot be written.
fn digest_of(state: &ComponentState) -> Option<[u8; 32]> {
    digest_serde(&without_snapshot(state))
}

/// The entry with its snapshot left out, for comparisons.
fn without_snapshot(state: &ComponentState) -> impl Serialize + '_ {
    // Every field named: a new one must be compared too.
    let ComponentState {
        timestamp,
        timestamps,
        status,
        version,
        meta,
        message,
        parameters,
        raw_outputs,
        captured_outputs: _,
        captured_outputs_base,
        captured_outputs_removed,
        fingerprint,
        dir,
        depends,
        health,
    } = state;
    (
        (timestamp, timestamps, status, version, meta, message),
        (parameters, raw_outputs),
        (captured_outputs_base, captured_outputs_removed, fingerprint),
        (dir, depends, health),
    )
}

impl ComponentsCache {
    /// Follows the map's names: entries added at its end (as a run adds
    /// them) are inserted in the sorted order; any other change rebuilds
    /// the positions, keeping the entries of the names still present.
    fn follow(&mut self, components: &IndexMap<String, ComponentState>) {
        let kept = self.names.len() <= components.len()
            && self
                .names
                .iter()
                .zip(components.keys())
                .all(|(cached, name)| cached == name);
        if !kept {
            let mut old: HashMap<String, Option<Cached<Entry>>> =
                self.names.drain(..).zip(self.entries.drain(..)).collect();
            self.sorted.clear();
            for name in components.keys() {
                self.entries.push(old.remove(name).flatten());
                self.names.push(name.clone());
            }
            let names = &self.names;
            self.sorted = (0..names.len()).collect();
            self.sorted
                .sort_unstable_by(|&a, &b| names[a].cmp(&names[b]));
            return;
        }
        for name in components.keys().skip(self.names.len()) {
            let names = &self.names;
            let at = self
                .sorted
                .partition_point(|&i| names[i].as_str() < name.as_str());
            self.sorted.insert(at, names.len());
            self.names.push(name.clone());
            self.entries.push(None);
        }
    }
}

/// Which component entries a write may have changed since the previous
/// write of the same [`Renderer`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Changed<'a> {
    /// Any of them: every entry is compared with the one last written.
    Any,
    /// This component's entry only (others may have been removed, this one
    /// added): the other entries are not compared. Debug builds check the
    /// promise.
    Only(&'a str),
    /// These components' entries only, as with [`Changed::Only`].
    Several(&'a [String]),
    /// As [`Changed::Several`], for many names.
    Set(&'a std::collections::HashSet<String>),
}

impl Changed<'_> {
    /// The entry of `name` may differ from the one last written.
    fn may_have_changed(self, name: &str) -> bool {
        match self {
            Changed::Any => true,
            Changed::Only(only) => only == name,
            Changed::Several(names) => names.iter().any(|n| n == name),
            Changed::Set(names) => names.contains(name),
        }
    }
}

/// Renders states, reusing the text of the parts that did not change since
/// the previous call.
#[derive(Default)]
pub struct Renderer {
    format: StateFormat,
    lifecycle: Option<Cached<StateLifecycle>>,
    /// The two largest lists of the head, as the digest of what their
    /// text was rendered from (a copy would double them for a run).
    stack_parameters: Option<Cached<Digest>>,
    captured_outputs: Option<Cached<Digest>>,
    stack_outputs: Option<Cached<Digest>>,
    provides: Option<Cached<IndexMap<String, Vec<String>>>>,
    components: ComponentsCache,
    operations: Vec<CachedOperation>,
    /// No later render will reuse a text: each part is written as it is
    /// rendered and dropped (see [`Renderer::keep_no_texts`]).
    last: bool,
}

impl Renderer {
    pub fn new(format: StateFormat) -> Renderer {
        Renderer {
            format,
            ..Renderer::default()
        }
    }

    /// From now on, keeps no text for a next render: a run's last write
    /// renders the parts that changed without deflating them for a write
    /// that will not come, and lets go of the kept texts as it writes them.
    /// A render after it is still right, rendering every part again.
    pub fn keep_no_texts(&mut self) {
        self.last = true;
    }

    /// The YAML text of `state`, equal to [`super::render`]'s in the
    /// reference layout.
    pub fn render(&mut self, state: &State) -> Result<String, StateError> {
        let mut out = String::new();
        self.render_into(state, Changed::Any, &mut out)?;
        Ok(out)
    }

    /// Replaces the content of `out` (a buffer kept from one call to the
    /// next) with the YAML text of `state`; `changed` says which component
    /// entries may differ from the previous call's.
    pub fn render_into<S: Sink + ?Sized>(
        &mut self,
        state: &State,
        changed: Changed<'_>,
        out: &mut S,
    ) -> Result<(), StateError> {
        out.clear();
        out.push_str(&emit::document(&yaml_serde::to_value(head_of(state))?));
        if !state.lifecycle.order.is_empty() {
            reuse(&mut self.lifecycle, &state.lifecycle, self.last, out, |l| {
                keyed("lifecycle", l)
            })?;
        }
        let head = self.head_parts(state, out)?;
        if !state.provides.is_empty() {
            reuse(&mut self.provides, &state.provides, self.last, out, |p| {
                let mut p = p.clone();
                p.sort_keys();
                keyed("provides", &p)
            })?;
        }
        if !state.components.is_empty() {
            self.components(state, changed, &head, out)?;
        }
        if !state.operations.is_empty() {
            self.operations(state, out)?;
        }
        Ok(())
    }

    /// The stack parameters, captured outputs and stack outputs; returns
    /// the long values they define (see [`shared`]), part after part.
    fn head_parts<S: Sink + ?Sized>(
        &mut self,
        state: &State,
        out: &mut S,
    ) -> Result<HashSet<ValueDigest>, StateError> {
        let mut head = HashSet::new();
        let parameter_values = state.stack_parameters.iter().map(|p| &p.value);
        let (longs, key) = head_part(&state.stack_parameters, parameter_values, &head);
        if !state.stack_parameters.is_empty() {
            reuse_digested(
                (&mut self.stack_parameters, key, self.last),
                &state.stack_parameters,
                out,
                |p| stack_parameters_text(p, &mut Scope::head(&head)),
            )?;
        }
        head.extend(longs);
        let output_values = state.captured_outputs.iter().map(|o| &o.value);
        let (longs, key) = head_part(&state.captured_outputs, output_values, &head);
        if !state.captured_outputs.is_empty() {
            reuse_digested(
                (&mut self.captured_outputs, key, self.last),
                &state.captured_outputs,
                out,
                |o| {
                    let mut o = o.clone();
                    o.sort_by_cached_key(CapturedOutput::qualified_name);
                    keyed_shared("capturedOutputs", &o, &mut Scope::head(&head))
                },
            )?;
        }
        head.extend(longs);
        let stack_values = state.stack_outputs.iter().map(|o| &o.value);
        let (longs, key) = head_part(&state.stack_outputs, stack_values, &head);
        if !state.stack_outputs.is_empty() {
            reuse_digested(
                (&mut self.stack_outputs, key, self.last),
                &state.stack_outputs,
                out,
                |o| keyed_shared("stackOutputs", o, &mut Scope::head(&head)),
            )?;
        }
        head.extend(longs);
        Ok(head)
    }

    fn operations<S: Sink + ?Sized>(
        &mut self,
        state: &State,
        out: &mut S,
    ) -> Result<(), StateError> {
        out.push_str("operations:\n");
        self.operations
            .resize_with(state.operations.len(), || CachedOperation {
                head: None,
                phases: Vec::new(),
            });
        for (operation, cached) in state.operations.iter().zip(&mut self.operations) {
            let head = Operation {
                id: operation.id.clone(),
                operation: operation.operation.clone(),
                timestamp: operation.timestamp.clone(),
                status: operation.status.clone(),
                options: operation.options.clone(),
                description: operation.description.clone(),
                initiator: operation.initiator.clone(),
                logs: operation.logs.clone(),
                phases: Vec::new(),
            };
            reuse(&mut cached.head, &head, self.last, out, |head| {
                let mut head = head.clone();
                head.options.sort_keys();
                let mut text = String::new();
                emit::item(&yaml_serde::to_value(&head)?, 0, &mut text);
                Ok(text)
            })?;
            if operation.phases.is_empty() {
                continue;
            }
            // `phases` is an operation's last key: its items follow the
            // rest of the operation's entries.
            out.push_str("  phases:\n");
            cached.phases.resize_with(operation.phases.len(), || None);
            for (phase, slot) in operation.phases.iter().zip(&mut cached.phases) {
                reuse(slot, phase, self.last, out, |phase| {
                    let mut text = String::new();
                    emit::item(&yaml_serde::to_value(phase)?, 2, &mut text);
                    Ok(text)
                })?;
            }
        }
        Ok(())
    }
}

/// Writes to `out` the cached text when `value` is what it was rendered
/// from, else the text `render` gives, which is kept for next time unless
/// this is the `last` render (which lets go of the cached text too).
fn reuse<T: PartialEq + Clone, S: Sink + ?Sized>(
    slot: &mut Option<Cached<T>>,
    value: &T,
    last: bool,
    out: &mut S,
    render: impl FnOnce(&T) -> Result<String, StateError>,
) -> Result<(), StateError> {
    let fresh = slot.as_ref().is_some_and(|cached| cached.value == *value);
    write_part(slot, fresh, (last, out), || value.clone(), || render(value))
}

/// A digest of a value (see [`digest`]); `None`: never the same.
type Digest = Option<[u8; 32]>;

/// [`reuse`] keeping `digest`, the value's, instead of a copy of it.
fn reuse_digested<T, S: Sink + ?Sized>(
    (slot, digest, last): (&mut Option<Cached<Digest>>, Digest, bool),
    value: &T,
    out: &mut S,
    render: impl FnOnce(&T) -> Result<String, StateError>,
) -> Result<(), StateError> {
    let fresh = digest.is_some() && slot.as_ref().is_some_and(|c| c.value == digest);
    write_part(slot, fresh, (last, out), || digest, || render(value))
}

/// Writes the slot's text when it is `fresh`, else the text `render` gives,
/// kept under `key()` unless this is the `last` render, which empties the
/// slot either way.
fn write_part<K, S: Sink + ?Sized>(
    slot: &mut Option<Cached<K>>,
    fresh: bool,
    (last, out): (bool, &mut S),
    key: impl FnOnce() -> K,
    render: impl FnOnce() -> Result<String, StateError>,
) -> Result<(), StateError> {
    match slot.as_ref().filter(|_| fresh) {
        Some(cached) => cached.text.push_to(out),
        None => {
            let text = render()?;
            out.push_str(&text);
            if !last {
                *slot = Some(Cached {
                    value: key(),
                    text: Packed::new(text),
                });
            }
        }
    }
    if last {
        *slot = None;
    }
    Ok(())
}

/// The entry as the file holds it: its snapshot whole, or as a difference
/// against its base's.
fn as_written(state: &ComponentState, entry: &Entry) -> ComponentState {
    let mut written = state.clone();
    if entry.base.is_empty() {
        return written;
    }
    let delta = state.captured_outputs.delta_from(&entry.base_snapshot);
    written.captured_outputs = Snapshot::from_outputs(delta.set);
    written.captured_outputs_base = entry.base.clone();
    written.captured_outputs_removed = delta.removed;
    written
}

/// A top-level `key:` entry with its value.
fn keyed<T: Serialize>(key: &str, value: &T) -> Result<String, StateError> {
    let mut out = String::new();
    emit::entry(
        &Value::String(key.to_string()),
        &yaml_serde::to_value(value)?,
        0,
        &mut out,
    );
    Ok(out)
}

/// [`keyed`], its long values written as `scope` says.
fn keyed_shared<T: Serialize>(
    key: &str,
    value: &T,
    scope: &mut Scope<'_>,
) -> Result<String, StateError> {
    let mut value = yaml_serde::to_value(value)?;
    scope.mark(&mut value);
    let mut out = String::new();
    emit::entry(&Value::String(key.to_string()), &value, 0, &mut out);
    Ok(scope.fill(&out))
}

mod components;
mod digest;
mod packed;
mod shared;
pub use shared::SHARED_VALUE_BYTES;

/// The state's first lines: its own fields, without the parts written
/// after them.
fn head_of(state: &State) -> State {
    // Every field named: a new one must be placed here too.
    let State {
        version,
        kind,
        timestamp,
        serial,
        lineage,
        status,
        message,
        meta,
        lifecycle: _,
        stack_parameters: _,
        captured_outputs: _,
        stack_outputs: _,
        provides: _,
        components: _,
        operations: _,
    } = state;
    State {
        version: *version,
        kind: kind.clone(),
        timestamp: timestamp.clone(),
        serial: *serial,
        lineage: lineage.clone(),
        status: status.clone(),
        message: message.clone(),
        meta: meta.clone(),
        ..State::default()
    }
}

#[cfg(test)]
mod tests;
