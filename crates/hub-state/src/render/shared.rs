//! Long values written once per state file, as YAML anchors and aliases.
//!
//! A component's output is held in several places of the state: its raw
//! output and its snapshot, the stack's captured outputs, a stack output
//! naming it, the parameters of the components reading it. A string of
//! [`SHARED_VALUE_BYTES`] or more is written whole at its first place in
//! the file, under an anchor, and as an alias of that anchor everywhere
//! after. Every YAML reader (the reference tool's among them) gives an
//! alias the anchored value, so each place reads back whole, while a
//! 1 MiB output costs about 1 MiB of file.
//!
//! Anchors are named after the value's SHA-256, so that a part of the file
//! rendered earlier in a run (see [`super::Renderer`]) still names the same
//! anchor: `hub-<hex>` for a value first written in the head (stack
//! parameters, captured outputs, stack outputs), which the component
//! entries after it alias; `hub-<hex>-<hex>` for one first written in a
//! component entry (the second part names the component), which only that
//! entry aliases. Every anchor is so defined once, and only letters,
//! digits and `-` are used, which every YAML reader accepts.

use hub_manifest::emit;
use sha2::{Digest as _, Sha256};
use std::collections::HashSet;
use std::sync::LazyLock;
use yaml_serde::Value;

/// A string value at least this long is written once per state file:
/// under an anchor where it first appears, as an alias after.
pub const SHARED_VALUE_BYTES: usize = 4096;

/// The SHA-256 of a long value.
pub(crate) type ValueDigest = [u8; 32];

fn digest(text: &str) -> ValueDigest {
    Sha256::digest(text.as_bytes()).into()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The digests of the long strings in `value`, at any depth, in order.
pub(crate) fn long_strings(value: &Value, out: &mut Vec<ValueDigest>) {
    match value {
        Value::String(text) if text.len() >= SHARED_VALUE_BYTES => out.push(digest(text)),
        Value::Sequence(items) => items.iter().for_each(|item| long_strings(item, out)),
        Value::Mapping(map) => map.values().for_each(|item| long_strings(item, out)),
        Value::Tagged(tagged) => long_strings(&tagged.value, out),
        _ => {}
    }
}

/// What the file says at a placeholder's place.
enum Action {
    Alias(String),
    Define(String, String),
}

/// A random part of every placeholder, so that no value a component
/// printed can be taken for one.
static NONCE: LazyLock<String> = LazyLock::new(|| {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", hasher.finish())
});

/// Which long values of a part were aliases of the head's and which it
/// defined itself: a cached part is still right while the head defines the
/// first and none of the second.
#[derive(Debug, Clone, Default)]
pub(crate) struct Anchors {
    pub(crate) from_head: Vec<ValueDigest>,
    pub(crate) own: Vec<ValueDigest>,
}

impl Anchors {
    pub(crate) fn hold(&self, head: &HashSet<ValueDigest>) -> bool {
        self.from_head.iter().all(|d| head.contains(d))
            && !self.own.iter().any(|d| head.contains(d))
    }
}

/// The long values of one part of the file, replaced by placeholders in
/// its value tree before it is emitted, and written as anchors and aliases
/// into its text after ([`Scope::fill`]).
pub(crate) struct Scope<'h> {
    /// Defined by the head before this part.
    head: &'h HashSet<ValueDigest>,
    /// `None` in the head; the component's part of the anchor's name.
    entry: Option<String>,
    defined: HashSet<ValueDigest>,
    actions: Vec<Action>,
    pub(crate) anchors: Anchors,
}

impl<'h> Scope<'h> {
    /// A part of the head: its values defined by earlier parts are in `head`.
    pub(crate) fn head(head: &'h HashSet<ValueDigest>) -> Scope<'h> {
        Scope::new(head, None)
    }

    /// The entry of `component`: `head` holds every value the head defines.
    pub(crate) fn entry(head: &'h HashSet<ValueDigest>, component: &str) -> Scope<'h> {
        let name = hex(&Sha256::digest(component.as_bytes())[..4]);
        Scope::new(head, Some(name))
    }

    fn new(head: &'h HashSet<ValueDigest>, entry: Option<String>) -> Scope<'h> {
        Scope {
            head,
            entry,
            defined: HashSet::new(),
            actions: Vec::new(),
            anchors: Anchors::default(),
        }
    }

    fn anchor(&self, value: &ValueDigest, in_head: bool) -> String {
        let name = format!("hub-{}", hex(&value[..12]));
        match &self.entry {
            Some(entry) if !in_head => format!("{name}-{entry}"),
            _ => name,
        }
    }

    /// Replaces every long string of `value` with a placeholder, in the
    /// order the emitter writes them.
    pub(crate) fn mark(&mut self, value: &mut Value) {
        match value {
            Value::String(text) if text.len() >= SHARED_VALUE_BYTES => {
                let d = digest(text);
                let action = if self.head.contains(&d) {
                    self.anchors.from_head.push(d);
                    Action::Alias(self.anchor(&d, true))
                } else if self.defined.contains(&d) {
                    Action::Alias(self.anchor(&d, false))
                } else {
                    self.defined.insert(d);
                    self.anchors.own.push(d);
                    Action::Define(self.anchor(&d, false), emit::string(text))
                };
                *text = placeholder(self.actions.len());
                self.actions.push(action);
            }
            Value::Sequence(items) => items.iter_mut().for_each(|item| self.mark(item)),
            Value::Mapping(map) => map.values_mut().for_each(|item| self.mark(item)),
            Value::Tagged(tagged) => self.mark(&mut tagged.value),
            _ => {}
        }
    }

    /// `text`, emitted from the marked value, with each placeholder written
    /// as its anchored value or its alias.
    pub(crate) fn fill(&mut self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        self.fill_onto(text, &mut out);
        out
    }

    /// [`Scope::fill`], appended to `out`.
    pub(crate) fn fill_onto(&mut self, text: &str, out: &mut String) {
        if self.actions.is_empty() {
            out.push_str(text);
            return;
        }
        let mut rest = text;
        for (at, action) in self.actions.drain(..).enumerate() {
            let mark = placeholder(at);
            let Some(start) = rest.find(&mark) else {
                continue;
            };
            out.push_str(&rest[..start]);
            match action {
                Action::Alias(anchor) => {
                    out.push('*');
                    out.push_str(&anchor);
                }
                Action::Define(anchor, value) => {
                    out.push('&');
                    out.push_str(&anchor);
                    out.push(' ');
                    out.push_str(&value);
                }
            }
            rest = &rest[start + mark.len()..];
        }
        out.push_str(rest);
    }
}

/// A plain scalar the emitter writes bare, standing for the `at`th long
/// value of a part.
fn placeholder(at: usize) -> String {
    format!("hub-shared-{}-{at}", *NONCE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_value_is_defined_once_and_aliased_after() {
        let long = "v".repeat(SHARED_VALUE_BYTES);
        let head = HashSet::new();
        let mut scope = Scope::entry(&head, "app");
        let mut value: Value =
            yaml_serde::from_str(&format!("a: {long}\nb: [{long}, short]\nc: {long}\n"))
                .expect("yaml");
        scope.mark(&mut value);
        let mut text = String::new();
        emit::entry(&Value::String("x".into()), &value, 0, &mut text);
        let text = scope.fill(&text);
        assert_eq!(text.matches(&long).count(), 1, "{text}");
        assert_eq!(text.matches(" *hub-").count(), 2, "{text}");
        let back: Value = yaml_serde::from_str(&text).expect("reads back");
        let expected: Value = yaml_serde::from_str(&format!(
            "x:\n  a: {long}\n  b: [{long}, short]\n  c: {long}\n"
        ))
        .expect("yaml");
        assert_eq!(back, expected);
    }

    #[test]
    fn a_value_the_head_defines_is_only_aliased() {
        let long = "w".repeat(SHARED_VALUE_BYTES + 1);
        let mut in_head = Vec::new();
        long_strings(&Value::String(long.clone()), &mut in_head);
        let head: HashSet<_> = in_head.iter().copied().collect();
        let mut scope = Scope::entry(&head, "app");
        let mut value = Value::String(long);
        scope.mark(&mut value);
        let mut text = String::new();
        emit::entry(&Value::String("x".into()), &value, 0, &mut text);
        let text = scope.fill(&text);
        assert_eq!(text, format!("x: *hub-{}\n", hex(&in_head[0][..12])));
        assert_eq!(scope.anchors.from_head, in_head);
        assert!(scope.anchors.hold(&head));
        assert!(!scope.anchors.hold(&HashSet::new()));
    }
}
