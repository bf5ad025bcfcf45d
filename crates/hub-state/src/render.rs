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

use super::layout::{snapshot_bases, StateFormat};
use super::model::{
    CapturedOutput, ComponentState, Operation, Phase, StackOutput, State, StateLifecycle,
    StateParameter,
};
use super::sink::Sink;
use super::snapshot::Snapshot;
use super::StateError;
use hub_manifest::emit;
use indexmap::IndexMap;
use serde::Serialize;
use std::collections::HashMap;
use yaml_serde::Value;

/// A string value at least this long that a component entry shares with a
/// stack parameter is written once: in `stackParameters`, under a YAML
/// anchor, and as an alias of it in the entry (see [`Shared`]).
pub const SHARED_VALUE_BYTES: usize = 4096;

/// The stack parameters whose values are written once, under an anchor:
/// string values of [`SHARED_VALUE_BYTES`] or more, by qualified name.
/// YAML readers (the reference tool's among them) give an alias the
/// anchored value, so every reader sees each entry's parameters whole,
/// while the file holds one copy: seven components reading one 10 MiB
/// parameter write about 10 MiB, not 80.
struct Shared<'s> {
    by_name: HashMap<String, (String, &'s str)>,
}

impl<'s> Shared<'s> {
    fn of(parameters: &'s [StateParameter]) -> Shared<'s> {
        let by_name = parameters
            .iter()
            .filter_map(|p| match &p.value {
                Value::String(text) if text.len() >= SHARED_VALUE_BYTES => {
                    let name = p.qualified_name();
                    Some((name.clone(), (anchor(&name), text.as_str())))
                }
                _ => None,
            })
            .collect();
        Shared { by_name }
    }

    /// The anchor of the stack parameter a parameter of `component` takes
    /// its value from, when that value is shared and equal.
    fn anchor_for(&self, component: &str, parameter: &StateParameter) -> Option<&str> {
        let Value::String(text) = &parameter.value else {
            return None;
        };
        let own = format!("{}|{component}", parameter.name);
        self.by_name
            .get(&own)
            .or_else(|| self.by_name.get(&parameter.name))
            .filter(|(_, shared)| *shared == text)
            .map(|(anchor, _)| anchor.as_str())
    }
}

/// A YAML anchor for the stack parameter `qualified_name`: the same for
/// the same name in every write, so that entries rendered earlier in a run
/// still name it.
fn anchor(qualified_name: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(qualified_name.as_bytes());
    let hex: String = digest[..6].iter().map(|b| format!("{b:02x}")).collect();
    format!("hub-{hex}")
}

/// What stands for a value while its entry is emitted, replaced with the
/// alias (or the anchored value) afterwards: a plain scalar no emitter
/// quotes.
fn placeholder(kind: &str, anchor: &str) -> String {
    format!("hub-{kind}-placeholder-{anchor}")
}

/// `text` (an emitted entry) with each parameter value that stood for a
/// shared one written as an alias of its anchor.
fn with_aliases(mut text: String, anchors: &[String]) -> String {
    for anchor in anchors {
        let from = format!("value: {}\n", placeholder("alias", anchor));
        text = text.replacen(&from, &format!("value: *{anchor}\n"), 1);
    }
    text
}

/// The `stackParameters` entry, each shared value under its anchor.
///
/// Written one parameter at a time, as `emit::entry` writes the whole
/// list: a stack with 20 parameters per component holds 200,000 of them at
/// 10,000 components, and their value tree (about 20 times their text)
/// was the peak of every run's last state write.
fn stack_parameters_text(
    parameters: &[StateParameter],
    shared: &Shared<'_>,
) -> Result<String, StateError> {
    if parameters.is_empty() {
        return keyed("stackParameters", &parameters);
    }
    let mut sorted: Vec<(String, &StateParameter)> =
        parameters.iter().map(|p| (p.qualified_name(), p)).collect();
    // Stable, as the list was sorted before: equal names keep their order.
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = String::from("stackParameters:\n");
    for (name, parameter) in sorted {
        let Some((anchor, _)) = shared.by_name.get(&name) else {
            emit::item(&yaml_serde::to_value(parameter)?, 0, &mut text);
            continue;
        };
        let mut parameter = parameter.clone();
        let value = std::mem::replace(
            &mut parameter.value,
            Value::String(placeholder("anchor", anchor)),
        );
        let mut item = String::new();
        emit::item(&yaml_serde::to_value(&parameter)?, 0, &mut item);
        let mut entry = String::new();
        emit::entry(&Value::String("value".into()), &value, 2, &mut entry);
        let entry = entry.replacen("value: ", &format!("value: &{anchor} "), 1);
        let from = format!("  value: {}\n", placeholder("anchor", anchor));
        text.push_str(&item.replacen(&from, &entry, 1));
    }
    Ok(text)
}

/// A part of the document and the value it was rendered from.
struct Cached<T> {
    value: T,
    text: String,
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

/// The SHA-256 of the entry's fields but its snapshot, as `Debug` writes
/// them (which tells every value from every other: strings quoted, each
/// variant named); `None` when they cannot be written.
fn digest_of(state: &ComponentState) -> Option<[u8; 32]> {
    digest_debug(&without_snapshot(state))
}

/// The SHA-256 of `value` as `Debug` writes it (see [`digest_of`]).
fn digest_debug(value: &impl std::fmt::Debug) -> Option<[u8; 32]> {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    struct Hashing(Sha256);
    impl Write for Hashing {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0.update(s.as_bytes());
            Ok(())
        }
    }
    let mut hashing = Hashing(Sha256::new());
    write!(hashing, "{value:?}").ok()?;
    Some(hashing.0.finalize().into())
}

/// The entry with its snapshot left out, for comparisons.
fn without_snapshot(state: &ComponentState) -> impl std::fmt::Debug + '_ {
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
    stack_outputs: Option<Cached<Vec<StackOutput>>>,
    provides: Option<Cached<IndexMap<String, Vec<String>>>>,
    components: ComponentsCache,
    operations: Vec<CachedOperation>,
}

impl Renderer {
    pub fn new(format: StateFormat) -> Renderer {
        Renderer {
            format,
            ..Renderer::default()
        }
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
        let head = State {
            version: *version,
            kind: kind.clone(),
            timestamp: timestamp.clone(),
            serial: *serial,
            lineage: lineage.clone(),
            status: status.clone(),
            message: message.clone(),
            meta: meta.clone(),
            ..State::default()
        };
        out.push_str(&emit::document(&yaml_serde::to_value(&head)?));
        if !state.lifecycle.order.is_empty() {
            out.push_str(reuse(&mut self.lifecycle, &state.lifecycle, |l| {
                keyed("lifecycle", l)
            })?);
        }
        let shared = Shared::of(&state.stack_parameters);
        let parameters = digest_debug(&state.stack_parameters);
        let parameters_changed = parameters.is_none()
            || self
                .stack_parameters
                .as_ref()
                .is_none_or(|cached| cached.value != parameters);
        if parameters_changed {
            // Entries rendered before may alias values that changed.
            self.components = ComponentsCache::default();
        }
        if !state.stack_parameters.is_empty() {
            out.push_str(reuse_digested(
                &mut self.stack_parameters,
                parameters,
                &state.stack_parameters,
                |p| stack_parameters_text(p, &shared),
            )?);
        }
        if !state.captured_outputs.is_empty() {
            out.push_str(reuse_digested(
                &mut self.captured_outputs,
                digest_debug(&state.captured_outputs),
                &state.captured_outputs,
                |o| {
                    let mut o = o.clone();
                    o.sort_by_cached_key(CapturedOutput::qualified_name);
                    keyed("capturedOutputs", &o)
                },
            )?);
        }
        if !state.stack_outputs.is_empty() {
            out.push_str(reuse(&mut self.stack_outputs, &state.stack_outputs, |o| {
                keyed("stackOutputs", o)
            })?);
        }
        if !state.provides.is_empty() {
            out.push_str(reuse(&mut self.provides, &state.provides, |p| {
                let mut p = p.clone();
                p.sort_keys();
                keyed("provides", &p)
            })?);
        }
        if !state.components.is_empty() {
            self.components(state, changed, &shared, out)?;
        }
        if !state.operations.is_empty() {
            self.operations(state, out)?;
        }
        Ok(())
    }

    fn components<S: Sink + ?Sized>(
        &mut self,
        state: &State,
        changed: Changed<'_>,
        shared: &Shared<'_>,
        out: &mut S,
    ) -> Result<(), StateError> {
        out.push_str("components:\n");
        let bases = match self.format {
            StateFormat::Linear => snapshot_bases(state),
            StateFormat::Reference => HashMap::new(),
        };
        let cache = &mut self.components;
        cache.follow(&state.components);
        for &at in &cache.sorted {
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
            let slot = &mut cache.entries[at];
            let same_base = |cached: &&Cached<Entry>| {
                cached.value.base == base && cached.value.base_snapshot.same(&base_snapshot)
            };
            if let Some(cached) = slot
                .as_ref()
                .filter(|_| !changed.may_have_changed(name))
                .filter(same_base)
            {
                debug_assert!(
                    cached.value.digest == digest_of(component)
                        && cached
                            .value
                            .captured_outputs
                            .same(&component.captured_outputs),
                    "the entry of `{name}` changed, but the write said it did not ({changed:?})"
                );
                out.push_str(&cached.text);
                continue;
            }
            let entry = Entry {
                digest: digest_of(component),
                captured_outputs: component.captured_outputs.clone(),
                base: base.to_string(),
                base_snapshot,
            };
            out.push_str(reuse(slot, &entry, |entry| {
                let mut written = as_written(component, entry);
                let mut anchors = Vec::new();
                for parameter in &mut written.parameters {
                    if let Some(anchor) = shared.anchor_for(name, parameter) {
                        parameter.value = Value::String(placeholder("alias", anchor));
                        anchors.push(anchor.to_string());
                    }
                }
                let mut text = String::new();
                emit::entry(
                    &Value::String(name.clone()),
                    &yaml_serde::to_value(written)?,
                    2,
                    &mut text,
                );
                Ok(with_aliases(text, &anchors))
            })?);
        }
        Ok(())
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
            out.push_str(reuse(&mut cached.head, &head, |head| {
                let mut head = head.clone();
                head.options.sort_keys();
                let mut text = String::new();
                emit::item(&yaml_serde::to_value(&head)?, 0, &mut text);
                Ok(text)
            })?);
            if operation.phases.is_empty() {
                continue;
            }
            // `phases` is an operation's last key: its items follow the
            // rest of the operation's entries.
            out.push_str("  phases:\n");
            cached.phases.resize_with(operation.phases.len(), || None);
            for (phase, slot) in operation.phases.iter().zip(&mut cached.phases) {
                out.push_str(reuse(slot, phase, |phase| {
                    let mut text = String::new();
                    emit::item(&yaml_serde::to_value(phase)?, 2, &mut text);
                    Ok(text)
                })?);
            }
        }
        Ok(())
    }
}

/// The cached text when `value` is what it was rendered from, else the
/// text `render` gives, which is kept for next time.
fn reuse<'c, T: PartialEq + Clone>(
    slot: &'c mut Option<Cached<T>>,
    value: &T,
    render: impl FnOnce(&T) -> Result<String, StateError>,
) -> Result<&'c str, StateError> {
    let fresh = slot.as_ref().is_some_and(|cached| cached.value == *value);
    if !fresh {
        let text = render(value)?;
        *slot = Some(Cached {
            value: value.clone(),
            text,
        });
    }
    Ok(slot.as_ref().map_or("", |cached| cached.text.as_str()))
}

/// A digest of a value (see [`digest_debug`]); `None`: never the same.
type Digest = Option<[u8; 32]>;

/// [`reuse`] keeping `digest`, the value's, instead of a copy of it.
fn reuse_digested<'c, T>(
    slot: &'c mut Option<Cached<Digest>>,
    digest: Digest,
    value: &T,
    render: impl FnOnce(&T) -> Result<String, StateError>,
) -> Result<&'c str, StateError> {
    let fresh = digest.is_some() && slot.as_ref().is_some_and(|c| c.value == digest);
    if !fresh {
        let text = render(value)?;
        *slot = Some(Cached {
            value: digest,
            text,
        });
    }
    Ok(slot.as_ref().map_or("", |cached| cached.text.as_str()))
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

#[cfg(test)]
mod tests;
