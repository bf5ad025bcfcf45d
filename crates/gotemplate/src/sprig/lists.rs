//! Sprig's list functions.

use super::{arg, list, Args, Out};
use crate::funcs::{at_least, want};
use crate::value::Value;

/// `list`, `tuple`.
pub(crate) fn list_of(_: &str, args: Args) -> Out {
    Ok(Value::List(args.to_vec()))
}

/// `push`, `append`.
pub(crate) fn push(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let mut items = list(&args[0])?;
    items.push(args[1].clone());
    Ok(Value::List(items))
}

/// `prepend`.
pub(crate) fn prepend(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let mut items = list(&args[0])?;
    items.insert(0, args[1].clone());
    Ok(Value::List(items))
}

/// `rest`.
pub(crate) fn rest(_: &str, args: Args) -> Out {
    Ok(Value::List(
        list(&arg(args, 0))?.into_iter().skip(1).collect(),
    ))
}

/// `last`.
pub(crate) fn last(_: &str, args: Args) -> Out {
    Ok(list(&arg(args, 0))?.pop().unwrap_or(Value::Nil))
}

/// `initial`.
pub(crate) fn initial(_: &str, args: Args) -> Out {
    let mut items = list(&arg(args, 0))?;
    items.pop();
    Ok(Value::List(items))
}

/// `reverse`.
pub(crate) fn reverse(_: &str, args: Args) -> Out {
    Ok(Value::List(
        list(&arg(args, 0))?.into_iter().rev().collect(),
    ))
}

/// `uniq`.
pub(crate) fn uniq(_: &str, args: Args) -> Out {
    let mut out: Vec<Value> = Vec::new();
    for item in list(&arg(args, 0))? {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    Ok(Value::List(out))
}

/// `without`.
pub(crate) fn without(name: &str, args: Args) -> Out {
    at_least(name, args, 1)?;
    Ok(Value::List(
        list(&args[0])?
            .into_iter()
            .filter(|i| !args[1..].contains(i))
            .collect(),
    ))
}

/// `has`.
pub(crate) fn has(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    Ok(Value::Bool(list(&args[1])?.contains(&args[0])))
}

/// `concat`.
pub(crate) fn concat(_: &str, args: Args) -> Out {
    let mut out = Vec::new();
    for a in args {
        out.extend(list(a)?);
    }
    Ok(Value::List(out))
}
