//! The digest a cached text is kept under: the SHA-256 of the value's
//! serde form.
//!
//! Every text the renderer caches is written from the value's serde form
//! (`yaml_serde::to_value`), so two values whose serde forms are the same
//! write the same text: the form is exactly what the cache must tell
//! apart. It is streamed into the hasher as a self-delimiting encoding:
//! every call of the data model starts with its own tag byte, strings and
//! names carry their length, fields their name, and sequences, maps and
//! structs end with a tag no value starts with. Two different forms
//! therefore never write the same bytes (None and `Some("")`, an empty
//! list and an absent one, `"a\"b"` and `"a", "b"` all differ), and
//! strings are hashed in bulk rather than character by character as
//! `Debug` formatting wrote them.

use serde::ser::{self, Serialize};
use sha2::{Digest as _, Sha256};

/// The SHA-256 of `value`'s serde form; `None` when it cannot be
/// serialised (a value that is never the same as another).
pub(super) fn digest_serde(value: &impl Serialize) -> Option<[u8; 32]> {
    let mut hashing = Hashing(Sha256::new());
    value.serialize(&mut hashing).ok()?;
    Some(hashing.0.finalize().into())
}

/// A serializer that writes into a hasher.
struct Hashing(Sha256);

/// The first byte of each call of the data model, and the end of a list.
#[repr(u8)]
#[derive(Clone, Copy)]
enum Tag {
    End,
    Bool,
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F32,
    F64,
    Char,
    Str,
    Bytes,
    None,
    Some,
    Unit,
    UnitStruct,
    UnitVariant,
    NewtypeStruct,
    NewtypeVariant,
    Seq,
    Tuple,
    TupleStruct,
    TupleVariant,
    Map,
    Struct,
    StructVariant,
    /// Before each field of a struct (then its name and value).
    Field,
}

/// Why a value could not be hashed (a `Serialize` that failed itself).
#[derive(Debug)]
pub(super) struct Unhashable(String);

impl std::fmt::Display for Unhashable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unhashable {}

impl ser::Error for Unhashable {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        Unhashable(msg.to_string())
    }
}

impl Hashing {
    fn tag(&mut self, tag: Tag) {
        self.0.update([tag as u8]);
    }

    fn len(&mut self, len: usize) {
        self.0.update((len as u64).to_le_bytes());
    }

    fn text(&mut self, text: &[u8]) {
        self.len(text.len());
        self.0.update(text);
    }

    fn variant(&mut self, tag: Tag, name: &str, index: u32, variant: &str) {
        self.tag(tag);
        self.text(name.as_bytes());
        self.0.update(index.to_le_bytes());
        self.text(variant.as_bytes());
    }
}

macro_rules! numbers {
    ($($method:ident: $ty:ty => $tag:ident),* $(,)?) => {
        $(
            fn $method(self, v: $ty) -> Result<(), Unhashable> {
                self.tag(Tag::$tag);
                self.0.update(v.to_le_bytes());
                Ok(())
            }
        )*
    };
}

impl ser::Serializer for &mut Hashing {
    type Ok = ();
    type Error = Unhashable;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    numbers! {
        serialize_i8: i8 => I8,
        serialize_i16: i16 => I16,
        serialize_i32: i32 => I32,
        serialize_i64: i64 => I64,
        serialize_i128: i128 => I128,
        serialize_u8: u8 => U8,
        serialize_u16: u16 => U16,
        serialize_u32: u32 => U32,
        serialize_u64: u64 => U64,
        serialize_u128: u128 => U128,
    }

    fn serialize_bool(self, v: bool) -> Result<(), Unhashable> {
        self.tag(Tag::Bool);
        self.0.update([u8::from(v)]);
        Ok(())
    }

    // Floats by their bits: 0.0 and -0.0 are written differently.
    fn serialize_f32(self, v: f32) -> Result<(), Unhashable> {
        self.tag(Tag::F32);
        self.0.update(v.to_bits().to_le_bytes());
        Ok(())
    }

    fn serialize_f64(self, v: f64) -> Result<(), Unhashable> {
        self.tag(Tag::F64);
        self.0.update(v.to_bits().to_le_bytes());
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Unhashable> {
        self.tag(Tag::Char);
        self.0.update(u32::from(v).to_le_bytes());
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<(), Unhashable> {
        self.tag(Tag::Str);
        self.text(v.as_bytes());
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Unhashable> {
        self.tag(Tag::Bytes);
        self.text(v);
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Unhashable> {
        self.tag(Tag::None);
        Ok(())
    }

    fn serialize_some<T: ?Sized + Serialize>(self, value: &T) -> Result<(), Unhashable> {
        self.tag(Tag::Some);
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Unhashable> {
        self.tag(Tag::Unit);
        Ok(())
    }

    fn serialize_unit_struct(self, name: &'static str) -> Result<(), Unhashable> {
        self.tag(Tag::UnitStruct);
        self.text(name.as_bytes());
        Ok(())
    }

    fn serialize_unit_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
    ) -> Result<(), Unhashable> {
        self.variant(Tag::UnitVariant, name, index, variant);
        Ok(())
    }

    fn serialize_newtype_struct<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<(), Unhashable> {
        self.tag(Tag::NewtypeStruct);
        self.text(name.as_bytes());
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: ?Sized + Serialize>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Unhashable> {
        self.variant(Tag::NewtypeVariant, name, index, variant);
        value.serialize(self)
    }

    // Lists end with `Tag::End`, which no value starts with: their length
    // need not be known in advance.
    fn serialize_seq(self, _len: Option<usize>) -> Result<Self, Unhashable> {
        self.tag(Tag::Seq);
        Ok(self)
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self, Unhashable> {
        self.tag(Tag::Tuple);
        Ok(self)
    }

    fn serialize_tuple_struct(self, name: &'static str, _len: usize) -> Result<Self, Unhashable> {
        self.tag(Tag::TupleStruct);
        self.text(name.as_bytes());
        Ok(self)
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self, Unhashable> {
        self.variant(Tag::TupleVariant, name, index, variant);
        Ok(self)
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self, Unhashable> {
        self.tag(Tag::Map);
        Ok(self)
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Self, Unhashable> {
        self.tag(Tag::Struct);
        self.text(name.as_bytes());
        Ok(self)
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self, Unhashable> {
        self.variant(Tag::StructVariant, name, index, variant);
        Ok(self)
    }
}

/// The parts of sequences, tuples and maps: each element (a key and a
/// value are two) is a value, self-delimiting; `Tag::End` closes them.
macro_rules! elements {
    ($($trait:ident :: $method:ident),* $(,)?) => {
        $(
            impl ser::$trait for &mut Hashing {
                type Ok = ();
                type Error = Unhashable;

                fn $method<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Unhashable> {
                    value.serialize(&mut **self)
                }

                fn end(self) -> Result<(), Unhashable> {
                    self.tag(Tag::End);
                    Ok(())
                }
            }
        )*
    };
}

elements! {
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field,
}

impl ser::SerializeMap for &mut Hashing {
    type Ok = ();
    type Error = Unhashable;

    fn serialize_key<T: ?Sized + Serialize>(&mut self, key: &T) -> Result<(), Unhashable> {
        key.serialize(&mut **self)
    }

    fn serialize_value<T: ?Sized + Serialize>(&mut self, value: &T) -> Result<(), Unhashable> {
        value.serialize(&mut **self)
    }

    fn end(self) -> Result<(), Unhashable> {
        self.tag(Tag::End);
        Ok(())
    }
}

/// Fields: `Tag::Field`, the name, the value; a skipped field is absent,
/// and the names tell which ones were written.
macro_rules! fields {
    ($($trait:ident),* $(,)?) => {
        $(
            impl ser::$trait for &mut Hashing {
                type Ok = ();
                type Error = Unhashable;

                fn serialize_field<T: ?Sized + Serialize>(
                    &mut self,
                    key: &'static str,
                    value: &T,
                ) -> Result<(), Unhashable> {
                    self.tag(Tag::Field);
                    self.text(key.as_bytes());
                    value.serialize(&mut **self)
                }

                fn end(self) -> Result<(), Unhashable> {
                    self.tag(Tag::End);
                    Ok(())
                }
            }
        )*
    };
}

fields!(SerializeStruct, SerializeStructVariant);

#[cfg(test)]
mod tests {
    use super::digest_serde;
    use serde::Serialize;
    use std::collections::BTreeMap;

    fn differ<A: Serialize, B: Serialize>(a: A, b: B) {
        assert_ne!(digest_serde(&a), digest_serde(&b));
    }

    #[test]
    fn equal_values_digest_equal() {
        let value = (vec!["a".to_string()], Some(""), 1u64, -0.5f64);
        assert_eq!(digest_serde(&value), digest_serde(&value.clone()));
        assert!(digest_serde(&value).is_some());
    }

    #[test]
    fn values_debug_told_apart_still_differ() {
        // Where one string ends and the next begins.
        differ(("a\"b", "c"), ("a", "\"b c"));
        differ(vec!["a, b"], vec!["a", "b"]);
        differ(("ab", ""), ("a", "b"));
        differ(vec!["a\u{0}"], vec!["a", ""]);
        // None, Some of nothing, an empty list, no list.
        differ(None::<&str>, Some(""));
        differ(Some(Vec::<String>::new()), None::<Vec<String>>);
        differ(Vec::<String>::new(), vec![String::new()]);
        differ(Vec::<Vec<u8>>::new(), vec![Vec::<u8>::new()]);
        differ(((), ()), ((),));
        // Numbers of one value but different types, and their signs.
        differ(1u64, 1i64);
        differ(1u64, 1.0f64);
        differ(0.0f64, -0.0f64);
        differ("1", 1u64);
        differ(true, 1u8);
        // Nested lists and maps.
        differ(vec![vec!["a"], vec![]], vec![vec![], vec!["a"]]);
        let one: BTreeMap<&str, &str> = [("a", "b")].into();
        let other: BTreeMap<&str, &str> = [("b", "a")].into();
        differ(&one, &other);
        differ(&one, vec!["a", "b"]);
    }

    #[derive(Serialize)]
    struct Entry {
        #[serde(skip_serializing_if = "String::is_empty")]
        first: String,
        #[serde(skip_serializing_if = "String::is_empty")]
        second: String,
    }

    #[derive(Serialize)]
    #[serde(untagged)]
    enum Loose {
        Text(String),
        List(Vec<String>),
        Nothing(()),
    }

    #[test]
    fn skipped_fields_and_untagged_variants_differ() {
        let entry = |first: &str, second: &str| Entry {
            first: first.into(),
            second: second.into(),
        };
        differ(entry("x", ""), entry("", "x"));
        differ(entry("", ""), entry("", "x"));
        differ(Loose::Text(String::new()), Loose::List(Vec::new()));
        differ(Loose::List(Vec::new()), Loose::Nothing(()));
        differ(Loose::Text("a".into()), Loose::List(vec!["a".into()]));
    }

    #[test]
    fn yaml_values_of_different_kinds_differ() {
        use yaml_serde::Value;
        let parse = |text: &str| yaml_serde::from_str::<Value>(text).expect("yaml");
        let values = [
            "~", "''", "'~'", "0", "'0'", "0.0", "-0.0", "[]", "{}", "[~]", "{a: ~}", "{a: ''}",
            "[a, b]", "['a, b']", "{a: b}", "{b: a}", "!t a", "a",
        ];
        for (i, a) in values.iter().enumerate() {
            for b in &values[i + 1..] {
                differ(parse(a), parse(b));
            }
            assert_eq!(digest_serde(&parse(a)), digest_serde(&parse(a)));
        }
    }
}
