//! The lookup table expressions read from, and the lookup chain.

use indexmap::map::MutableKeys;
use indexmap::IndexMap;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use yaml_serde::Value;

/// FNV-1a: parameter names are short and come from the user's own files,
/// so a fast hash beats a DoS-resistant one.
#[derive(Debug, Clone, Copy)]
pub struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.0 ^= u64::from(byte);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}

pub type FastHash = BuildHasherDefault<Fnv>;
pub type FastMap<K, V> = HashMap<K, V, FastHash>;

/// A key of the lookup chain (`name|qualifier`, `dep:name` or `name`)
/// in up to three pieces, with the hash the text they make would have in
/// a [`FastHash`] map: looked up without being built, hashed once for a
/// table and its base.
pub struct Key<'k> {
    pieces: [&'k str; 3],
    pub hash: u64,
}

impl<'k> Key<'k> {
    pub fn new(pieces: [&'k str; 3]) -> Key<'k> {
        let mut hasher = Fnv::default();
        for piece in pieces {
            hasher.write(piece.as_bytes());
        }
        // As `str`'s `Hash` ends its text (`Hasher::write_str`).
        hasher.write_u8(0xff);
        Key {
            pieces,
            hash: hasher.finish(),
        }
    }

    /// The text the pieces make is `text`.
    pub fn is(&self, text: &str) -> bool {
        let [a, b, c] = self.pieces;
        text.len() == a.len() + b.len() + c.len()
            && text.starts_with(a)
            && text[a.len()..].starts_with(b)
            && text.ends_with(c)
    }

    /// The text the pieces make (for a base that looks keys up by text).
    pub fn text(&self) -> String {
        self.pieces.concat()
    }
}

/// Where a name is looked up from: the component qualifier of the
/// parameter being expanded (empty at stack level for unqualified
/// parameters) and the `depends` list of its component.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scope {
    pub qualifier: String,
    pub depends: Vec<String>,
}

impl Scope {
    pub fn qualified(qualifier: &str) -> Self {
        Scope {
            qualifier: qualifier.to_string(),
            depends: Vec::new(),
        }
    }
}

/// Entries a [`Table`] is layered on: read-only, numbered from 0, and
/// shared by many tables (the locked stack parameters, under every
/// component's own values).
pub trait Base: Sync {
    fn len(&self) -> usize;
    fn entry(&self, key: &str) -> Option<usize>;
    /// [`Base::entry`] of the text `key` makes; a base hashed with
    /// [`FastHash`] uses the key's hash instead of building the text.
    fn entry_of(&self, key: &Key<'_>) -> Option<usize> {
        self.entry(&key.text())
    }
    fn key(&self, entry: usize) -> &str;
    fn value(&self, entry: usize) -> Option<&Value>;
}

/// Named values in insertion order; a key set twice keeps its first
/// position and takes the new value.
///
/// A table may sit on a [`Base`]: the base's entries come first (numbers
/// `0..base.len()`), its own after them. Setting a key the base holds adds
/// an own entry that hides the base's, so building a component's table
/// costs what the component sets, not what the stack holds.
#[derive(Clone, Default)]
pub struct Table<'b> {
    base: Option<&'b dyn Base>,
    entries: IndexMap<String, Option<Value>, FastHash>,
}

impl std::fmt::Debug for Table<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Table")
            .field("base_len", &self.base_len())
            .field("entries", &self.entries)
            .finish()
    }
}

/// A table's own keys and values by entry number, each key moved out at
/// most once ([`Table::into_entries`]).
pub struct Entries {
    entries: IndexMap<String, Option<Value>, FastHash>,
    taken: Vec<bool>,
}

impl Entries {
    /// The key of `entry`, unless it was taken before.
    pub fn take_key(&mut self, entry: usize) -> Option<String> {
        let taken = self.taken.get_mut(entry)?;
        if std::mem::replace(taken, true) {
            return None;
        }
        let (key, _) = self.entries.get_index_mut2(entry)?;
        Some(std::mem::take(key))
    }

    /// The value of `entry`, moved out (`None` the second time).
    pub fn take_value(&mut self, entry: usize) -> Option<Value> {
        self.entries.get_index_mut(entry)?.1.take()
    }
}

impl<'b> Table<'b> {
    pub fn with_capacity(capacity: usize) -> Self {
        Table {
            base: None,
            entries: IndexMap::with_capacity_and_hasher(capacity, Default::default()),
        }
    }

    /// An empty table on `base`, with room for `capacity` entries of its
    /// own.
    pub fn on(base: &'b dyn Base, capacity: usize) -> Self {
        Table {
            base: Some(base),
            entries: IndexMap::with_capacity_and_hasher(capacity, Default::default()),
        }
    }

    /// How many entries come from the base: the first own entry's number.
    pub fn base_len(&self) -> usize {
        self.base.map_or(0, |base| base.len())
    }

    /// Sets `key` and returns its entry number.
    pub fn set(&mut self, key: &str, value: Option<Value>) -> usize {
        let base_len = self.base_len();
        if let Some(slot) = self.entries.get_full_mut(key) {
            *slot.2 = value;
            return base_len + slot.0;
        }
        base_len + self.entries.insert_full(key.to_string(), value).0
    }

    /// [`Table::set`] with a key the caller owns: nothing is copied.
    pub fn set_owned(&mut self, key: String, value: Option<Value>) -> usize {
        let base_len = self.base_len();
        match self.entries.entry(key) {
            indexmap::map::Entry::Occupied(mut slot) => {
                *slot.get_mut() = value;
                base_len + slot.index()
            }
            indexmap::map::Entry::Vacant(slot) => {
                let entry = slot.index();
                slot.insert(value);
                base_len + entry
            }
        }
    }

    /// Gives own `entry` the value `value` and returns the one it held
    /// (`None` for an entry of the base or none at all).
    pub fn replace(&mut self, entry: usize, value: Option<Value>) -> Option<Value> {
        let own = self.own(entry).ok()?;
        let (_, slot) = self.entries.get_index_mut(own)?;
        std::mem::replace(slot, value)
    }

    /// Every own key and value by entry number, to be moved out one at a
    /// time (a table on a base gives only its own). The entries stay where
    /// they are: no second list of them is made.
    pub fn into_entries(self) -> Entries {
        let entries = self.entries;
        let taken = vec![false; entries.len()];
        Entries { entries, taken }
    }

    /// The entry of `key`: an own one first, else the base's.
    pub fn entry(&self, key: &str) -> Option<usize> {
        match self.entries.get_index_of(key) {
            Some(own) => Some(self.base_len() + own),
            None => self.base.and_then(|base| base.entry(key)),
        }
    }

    pub fn key(&self, entry: usize) -> &str {
        match self.own(entry) {
            Ok(own) => self
                .entries
                .get_index(own)
                .map(|(k, _)| k.as_str())
                .unwrap_or_default(),
            Err(base) => base.key(entry),
        }
    }

    pub fn value(&self, entry: usize) -> Option<&Value> {
        match self.own(entry) {
            Ok(own) => self.entries.get_index(own).and_then(|(_, v)| v.as_ref()),
            Err(base) => base.value(entry),
        }
    }

    /// The own index of `entry`, or the base that holds it.
    fn own(&self, entry: usize) -> Result<usize, &'b dyn Base> {
        match self.base {
            Some(base) if entry < base.len() => Err(base),
            Some(base) => Ok(entry - base.len()),
            None => Ok(entry),
        }
    }

    pub fn len(&self) -> usize {
        self.base_len() + self.entries.len()
    }

    /// Where `entry` would stand in one table holding the base's entries
    /// and then its own: an own entry that hides a base entry takes that
    /// entry's place. Templates are expanded in this order, so that which
    /// cycles are reported does not depend on the layering.
    pub fn position(&self, entry: usize) -> usize {
        match (self.own(entry), self.base) {
            (Ok(_), Some(base)) => base.entry(self.key(entry)).unwrap_or(entry),
            _ => entry,
        }
    }

    /// The lookup chain: `name|qualifier` (when there is a qualifier), then
    /// `dep:name` for each dependency in order, then plain `name`.
    ///
    /// The keys tried are not built: each is hashed once, from its pieces,
    /// and compared piece by piece, in the table and in its base.
    pub fn find(&self, name: &str, scope: &Scope) -> Option<usize> {
        if !scope.qualifier.is_empty() {
            let key = Key::new([name, "|", &scope.qualifier]);
            if let Some(entry) = self.entry_of(&key) {
                return Some(entry);
            }
        }
        for dep in &scope.depends {
            if let Some(entry) = self.entry_of(&Key::new([dep, ":", name])) {
                return Some(entry);
            }
        }
        self.entry_of(&Key::new([name, "", ""]))
    }

    /// [`Table::entry`] of the text `key` makes.
    fn entry_of(&self, key: &Key<'_>) -> Option<usize> {
        use indexmap::map::RawEntryApiV1;
        let own = self.entries.raw_entry_v1();
        match own.index_from_hash(key.hash, |k| key.is(k)) {
            Some(own) => Some(self.base_len() + own),
            None => self.base.and_then(|base| base.entry_of(key)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookup_chain_order() {
        let mut table = Table::default();
        let plain = table.set("x", None);
        let dep = table.set("a:x", None);
        let qualified = table.set("x|c", None);
        let with_dep = Scope {
            qualifier: "c".into(),
            depends: vec!["a".into()],
        };
        assert_eq!(table.find("x", &with_dep), Some(qualified));
        assert_eq!(
            table.find(
                "x",
                &Scope {
                    qualifier: "d".into(),
                    depends: vec!["a".into()]
                }
            ),
            Some(dep)
        );
        assert_eq!(table.find("x", &Scope::default()), Some(plain));
        assert_eq!(table.find("y", &with_dep), None);
    }
}
