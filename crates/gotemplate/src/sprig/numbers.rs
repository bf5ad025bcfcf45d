//! Sprig's integer and float arithmetic and ranges.

use super::{arg, float, int, Args, Out};
use crate::value::Value;

/// `add`.
pub(crate) fn add(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).sum()))
}

/// `add1`.
pub(crate) fn add1(_: &str, args: Args) -> Out {
    Ok(Value::Int(int(&arg(args, 0)) + 1))
}

/// `sub`.
pub(crate) fn sub(_: &str, args: Args) -> Out {
    Ok(Value::Int(int(&arg(args, 0)) - int(&arg(args, 1))))
}

/// `mul`.
pub(crate) fn mul(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).product()))
}

/// `div`, `mod`.
pub(crate) fn div(name: &str, args: Args) -> Out {
    let divisor = int(&arg(args, 1));
    if divisor == 0 {
        return Err("integer divide by zero".into());
    }
    Ok(Value::Int(if name == "div" {
        int(&arg(args, 0)) / divisor
    } else {
        int(&arg(args, 0)) % divisor
    }))
}

/// `max`, `biggest`.
pub(crate) fn max(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).max().unwrap_or(0)))
}

/// `min`.
pub(crate) fn min(_: &str, args: Args) -> Out {
    Ok(Value::Int(args.iter().map(int).min().unwrap_or(0)))
}

/// `ceil`.
pub(crate) fn ceil(_: &str, args: Args) -> Out {
    Ok(Value::Float(float(&arg(args, 0)).ceil()))
}

/// `floor`.
pub(crate) fn floor(_: &str, args: Args) -> Out {
    Ok(Value::Float(float(&arg(args, 0)).floor()))
}

/// `round`.
pub(crate) fn round(_: &str, args: Args) -> Out {
    let places = int(&arg(args, 1)) as i32;
    let factor = 10f64.powi(places);
    Ok(Value::Float(
        (float(&arg(args, 0)) * factor).round() / factor,
    ))
}

/// `until`.
pub(crate) fn until(_: &str, args: Args) -> Out {
    Ok(Value::List(range_step(
        0,
        int(&arg(args, 0)),
        if int(&arg(args, 0)) < 0 { -1 } else { 1 },
    )))
}

/// `untilStep`.
pub(crate) fn until_step(_: &str, args: Args) -> Out {
    Ok(Value::List(range_step(
        int(&arg(args, 0)),
        int(&arg(args, 1)),
        int(&arg(args, 2)),
    )))
}

pub(super) fn range_step(start: i64, stop: i64, step: i64) -> Vec<Value> {
    let mut out = Vec::new();
    if step == 0 {
        return out;
    }
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(Value::Int(i));
        i += step;
    }
    out
}
