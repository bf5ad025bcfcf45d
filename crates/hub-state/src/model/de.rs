//! Lenient reading of the state document: text from any scalar, `null` as
//! empty, version and serial as text; and the skip tests of empty fields.

use indexmap::IndexMap;
use serde::{Deserialize, Deserializer};
use std::fmt;
use yaml_serde::Value;

pub(crate) fn is_empty_str(s: &str) -> bool {
    s.is_empty()
}

pub(crate) fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub(crate) fn non_null(value: &Value) -> Option<&Value> {
    (!value.is_null()).then_some(value)
}

/// Text fields: a string, a number or boolean (as its text), or null (as
/// empty). Anything else is an error.
pub(crate) fn text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    struct TextVisitor;
    impl<'de> serde::de::Visitor<'de> for TextVisitor {
        type Value = String;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("text")
        }
        fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_string<E: serde::de::Error>(self, v: String) -> Result<String, E> {
            Ok(v)
        }
        fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<String, E> {
            Ok(v.to_string())
        }
        fn visit_unit<E: serde::de::Error>(self) -> Result<String, E> {
            Ok(String::new())
        }
        fn visit_none<E: serde::de::Error>(self) -> Result<String, E> {
            Ok(String::new())
        }
        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
            text(d)
        }
    }
    deserializer.deserialize_any(TextVisitor)
}

/// Lists and maps: `null` reads as empty. A list gives back the room it
/// grew into while read (a component's 20 parameter records took room
/// for 32): it is kept for the run's length.
pub(crate) fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Vec<T>, D::Error> {
    let mut list = Option::<Vec<T>>::deserialize(deserializer)?.unwrap_or_default();
    list.shrink_to_fit();
    Ok(list)
}

pub(crate) fn map<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<IndexMap<String, T>, D::Error> {
    Ok(Option::<IndexMap<String, T>>::deserialize(deserializer)?.unwrap_or_default())
}

/// `version`: an integer, or text holding one (`"1"`); other text reads as
/// 0 so that the reader reports the wrong version rather than a type error.
pub(crate) fn lenient_int<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
    let raw = text(deserializer)?;
    Ok(raw.trim().parse().unwrap_or(0))
}

pub(crate) fn lenient_serial<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
    let raw = text(deserializer)?;
    if raw.trim().is_empty() {
        return Ok(0);
    }
    raw.trim().parse().map_err(|_| {
        serde::de::Error::custom(format!("`serial` must be a whole number, found `{raw}`"))
    })
}
