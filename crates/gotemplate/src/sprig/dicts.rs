//! Sprig's dict functions.

use super::{arg, arg_text, dict, empty, strings, Args, Out};
use crate::funcs::{at_least, map_of, text, want};
use crate::value::Value;
use std::collections::BTreeMap;

/// `dict`.
pub(crate) fn dict_of(_: &str, args: Args) -> Out {
    Ok(map_of(args.chunks(2).map(|pair| {
        (text(&pair[0]), pair.get(1).cloned().unwrap_or(Value::Nil))
    })))
}

/// `get`.
pub(crate) fn get(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(dict(&args[0])?
        .remove(&arg_text(args, 1))
        .unwrap_or(Value::Str(String::new())))
}

/// `set`.
pub(crate) fn set(name: &str, args: Args) -> Out {
    want(name, args, 3)?;
    let mut map = dict(&args[0])?;
    map.insert(arg_text(args, 1), args[2].clone());
    Ok(Value::Map(map))
}

/// `unset`.
pub(crate) fn unset(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let mut map = dict(&args[0])?;
    map.remove(&arg_text(args, 1));
    Ok(Value::Map(map))
}

/// `hasKey`.
pub(crate) fn has_key(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(Value::Bool(
        dict(&args[0])?.contains_key(&arg_text(args, 1)),
    ))
}

/// `pluck`.
pub(crate) fn pluck(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    let key = arg_text(args, 0);
    let mut out = Vec::new();
    for d in &args[1..] {
        if let Some(v) = dict(d)?.remove(&key) {
            out.push(v);
        }
    }
    Ok(Value::List(out))
}

/// `keys`.
pub(crate) fn keys(_: &str, args: Args) -> Out {
    let mut out = Vec::new();
    for d in args {
        out.extend(dict(d)?.into_keys().map(Value::Str));
    }
    Ok(Value::List(out))
}

/// `values`.
pub(crate) fn values(_: &str, args: Args) -> Out {
    Ok(Value::List(dict(&arg(args, 0))?.into_values().collect()))
}

/// `pick`, `omit`.
pub(crate) fn pick(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    let wanted = strings(&args[1..]);
    let keep = name == "pick";
    Ok(Value::Map(
        dict(&args[0])?
            .into_iter()
            .filter(|(k, _)| wanted.contains(k) == keep)
            .collect(),
    ))
}

/// `merge`, `mergeOverwrite`.
pub(crate) fn merge(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    let mut out = dict(&args[0])?;
    for source in &args[1..] {
        merge_into(&mut out, &dict(source)?, name == "mergeOverwrite");
    }
    Ok(Value::Map(out))
}

/// `deepCopy`.
pub(crate) fn deep_copy(_: &str, args: Args) -> Out {
    Ok(arg(args, 0))
}

/// Whole maps of `source` merged into `target`; `overwrite` lets the
/// source win on leaves.
pub(super) fn merge_into(
    target: &mut BTreeMap<String, Value>,
    source: &BTreeMap<String, Value>,
    overwrite: bool,
) {
    for (key, value) in source {
        match (target.get_mut(key), value) {
            (Some(Value::Map(inner)), Value::Map(more)) => merge_into(inner, more, overwrite),
            (Some(slot), _) if overwrite => *slot = value.clone(),
            (Some(slot), _) if empty(slot) => *slot = value.clone(),
            (Some(_), _) => {}
            (None, _) => {
                target.insert(key.clone(), value.clone());
            }
        }
    }
}
