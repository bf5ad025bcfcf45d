//! Writing a document whose bulk is a few long lists without building the
//! value tree of the whole document (about twenty times its text): each
//! field of the top-level struct is turned into a value and written on its
//! own, and the items of the long lists one at a time, in exactly the text
//! `emit::document` writes for the whole document's value.

use super::emit;
use serde::ser::{self, Impossible, Serialize, SerializeSeq, SerializeStruct, Serializer};
use yaml_serde::{Error, Value};

/// Writes `value` (a struct) as a YAML document into `out`, the fields
/// named in `long` an item at a time. Anything but a struct is written
/// through one value, as before.
pub fn document<T: Serialize>(value: &T, long: &[&str], out: &mut String) -> Result<(), Error> {
    let start = out.len();
    let mut fields = Fields {
        out,
        long,
        written: 0,
    };
    match value.serialize(&mut fields) {
        Ok(()) if fields.written > 0 => Ok(()),
        Ok(()) => {
            out.truncate(start);
            out.push_str(&emit::document(&yaml_serde::to_value(value)?));
            Ok(())
        }
        Err(error) if out.len() == start && is_refusal(&error) => {
            out.push_str(&emit::document(&yaml_serde::to_value(value)?));
            Ok(())
        }
        Err(error) => Err(error),
    }
}

const REFUSAL: &str = "not the shape written a piece at a time";

fn refusal() -> Error {
    ser::Error::custom(REFUSAL)
}

fn is_refusal(error: &Error) -> bool {
    error.to_string().contains(REFUSAL)
}

/// The top-level struct: each field written as an entry at the margin.
struct Fields<'o, 'l> {
    out: &'o mut String,
    long: &'l [&'l str],
    written: usize,
}

impl SerializeStruct for &mut Fields<'_, '_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<V: ?Sized + Serialize>(
        &mut self,
        key: &'static str,
        value: &V,
    ) -> Result<(), Error> {
        self.written += 1;
        if self.long.contains(&key) {
            let start = self.out.len();
            let mut items = Items {
                out: self.out,
                key,
                count: 0,
            };
            match value.serialize(&mut items) {
                Ok(()) => return Ok(()),
                Err(error) if !(self.out.len() == start && is_refusal(&error)) => {
                    return Err(error)
                }
                Err(_) => {}
            }
        }
        let key = Value::String(key.to_string());
        emit::entry(&key, &yaml_serde::to_value(value)?, 0, self.out);
        Ok(())
    }

    fn end(self) -> Result<(), Error> {
        Ok(())
    }
}

/// A long list: `key:` then each item, as `emit::entry` writes a
/// non-empty sequence under a key at the margin (`key: []` when empty).
struct Items<'o> {
    out: &'o mut String,
    key: &'static str,
    count: usize,
}

impl SerializeSeq for &mut Items<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<V: ?Sized + Serialize>(&mut self, value: &V) -> Result<(), Error> {
        let value = yaml_serde::to_value(value)?;
        if self.count == 0 {
            self.out.push_str(&emit::string(self.key));
            self.out.push_str(":\n");
        }
        self.count += 1;
        emit::item(&value, 0, self.out);
        Ok(())
    }

    fn end(self) -> Result<(), Error> {
        if self.count == 0 {
            self.out.push_str(&emit::string(self.key));
            self.out.push_str(": []\n");
        }
        Ok(())
    }
}

/// The serializer methods of the shapes refused by both serializers
/// (all but a struct for [`Fields`], a sequence for [`Items`]).
macro_rules! refuse_scalars {
    () => {
        fn serialize_bool(self, _: bool) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_i8(self, _: i8) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_i16(self, _: i16) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_i32(self, _: i32) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_i64(self, _: i64) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_u8(self, _: u8) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_u16(self, _: u16) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_u32(self, _: u32) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_u64(self, _: u64) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_f32(self, _: f32) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_f64(self, _: f64) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_char(self, _: char) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_str(self, _: &str) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_bytes(self, _: &[u8]) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_none(self) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_some<V: ?Sized + Serialize>(self, _: &V) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_unit(self) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_unit_struct(self, _: &'static str) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_unit_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
        ) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_newtype_struct<V: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: &V,
        ) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_newtype_variant<V: ?Sized + Serialize>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &V,
        ) -> Result<(), Error> {
            Err(refusal())
        }
        fn serialize_tuple(self, _: usize) -> Result<Impossible<(), Error>, Error> {
            Err(refusal())
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Impossible<(), Error>, Error> {
            Err(refusal())
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Impossible<(), Error>, Error> {
            Err(refusal())
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Impossible<(), Error>, Error> {
            Err(refusal())
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Impossible<(), Error>, Error> {
            Err(refusal())
        }
    };
}

impl<'a, 'o, 'l> Serializer for &'a mut Fields<'o, 'l> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Impossible<(), Error>;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Error>;

    refuse_scalars!();

    fn serialize_seq(self, _: Option<usize>) -> Result<Impossible<(), Error>, Error> {
        Err(refusal())
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Error> {
        Ok(self)
    }
}

impl<'a, 'o> Serializer for &'a mut Items<'o> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Self;
    type SerializeTuple = Impossible<(), Error>;
    type SerializeTupleStruct = Impossible<(), Error>;
    type SerializeTupleVariant = Impossible<(), Error>;
    type SerializeMap = Impossible<(), Error>;
    type SerializeStruct = Impossible<(), Error>;
    type SerializeStructVariant = Impossible<(), Error>;

    refuse_scalars!();

    fn serialize_seq(self, _: Option<usize>) -> Result<Self, Error> {
        Ok(self)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Impossible<(), Error>, Error> {
        Err(refusal())
    }
}

#[cfg(test)]
mod tests;
