//! Sprig's date functions: parsing, formatting in a zone, arithmetic, durations.

use super::{arg, arg_text, int, s, Args, Out};
use crate::funcs::want;
use crate::time;
use crate::value::Value;

/// `toDate`, `mustToDate`.
pub(crate) fn to_date(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    time::parse(&arg_text(args, 0), &arg_text(args, 1)).map(|v| Value::Time(Box::new(v)))
}

/// `now`.
pub(crate) fn now(_: &str, _: Args) -> Out {
    Ok(Value::Time(Box::new(time::now())))
}

/// `date`, `htmlDate`.
pub(crate) fn date(name: &str, args: Args) -> Out {
    let (layout, at) = if name == "date" {
        (arg_text(args, 0), arg(args, 1))
    } else {
        ("2006-01-02".into(), arg(args, 0))
    };
    let when = crate::value::time_of(&at)?.in_zone("Local")?;
    s(time::format(&layout, &when))
}

/// `dateInZone`, `date_in_zone`, `htmlDateInZone`.
pub(crate) fn date_in_zone(name: &str, args: Args) -> Out {
    let (layout, at, zone) = if name == "htmlDateInZone" {
        ("2006-01-02".into(), arg(args, 0), arg_text(args, 1))
    } else {
        (arg_text(args, 0), arg(args, 1), arg_text(args, 2))
    };
    let when = crate::value::time_of(&at)?.in_zone(&zone)?;
    s(time::format(&layout, &when))
}

/// `unixEpoch`.
pub(crate) fn unix_epoch(_: &str, args: Args) -> Out {
    s(crate::value::time_of(&arg(args, 0))?.seconds.to_string())
}

/// `dateModify`, `date_modify`, `mustDateModify`.
pub(crate) fn date_modify(name: &str, args: Args) -> Out {
    want(name, args, 2)?;
    let when = crate::value::time_of(&args[1])?;
    match time::parse_duration(&arg_text(args, 0)) {
        Ok(nanos) => Ok(Value::Time(Box::new(time::add(&when, nanos)))),
        Err(e) if name == "mustDateModify" => Err(e),
        Err(_) => Ok(Value::Time(Box::new(when))),
    }
}

/// `ago`.
pub(crate) fn ago(_: &str, args: Args) -> Out {
    let when = crate::value::time_of(&arg(args, 0))?;
    let seconds = time::now().seconds - when.seconds;
    s(go_duration(seconds as i128 * 1_000_000_000))
}

/// `duration`.
pub(crate) fn duration(_: &str, args: Args) -> Out {
    s(go_duration(int(&arg(args, 0)) as i128 * 1_000_000_000))
}

/// `durationRound`.
pub(crate) fn duration_round(_: &str, args: Args) -> Out {
    let nanos = match arg(args, 0) {
        Value::Str(text) => time::parse_duration(&text).unwrap_or(0),
        Value::Int(n) => n as i128,
        Value::Time(at) => {
            let now = time::now();
            (now.seconds - at.seconds) as i128 * 1_000_000_000
        }
        _ => 0,
    };
    s(round_duration(nanos.unsigned_abs()))
}

/// Sprig's `durationRound`: the largest whole unit (`y` = 365 days, `mo`
/// = 30 days, `d`, `h`, `m`, `s`).
pub(super) fn round_duration(nanos: u128) -> String {
    const SECOND: u128 = 1_000_000_000;
    const UNITS: [(u128, &str); 6] = [
        (SECOND * 3600 * 24 * 365, "y"),
        (SECOND * 3600 * 24 * 30, "mo"),
        (SECOND * 3600 * 24, "d"),
        (SECOND * 3600, "h"),
        (SECOND * 60, "m"),
        (SECOND, "s"),
    ];
    UNITS
        .iter()
        .find(|(size, _)| nanos > *size)
        .map(|(size, unit)| format!("{}{unit}", nanos / size))
        .unwrap_or_else(|| "0s".into())
}

/// `time.Duration.String`: `1h30m0s`, `2m5s`, `0s`.
pub(super) fn go_duration(nanos: i128) -> String {
    if nanos == 0 {
        return "0s".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    let abs = nanos.unsigned_abs();
    if abs < 1_000_000_000 {
        return format!("{sign}{}s", crate::value::go_float(abs as f64 / 1e9));
    }
    let seconds = abs / 1_000_000_000;
    let fraction = abs % 1_000_000_000;
    let (h, m, s) = (seconds / 3600, seconds % 3600 / 60, seconds % 60);
    let s = if fraction == 0 {
        s.to_string()
    } else {
        format!("{s}.{}", format!("{fraction:09}").trim_end_matches('0'))
    };
    match (h, m) {
        (0, 0) => format!("{sign}{s}s"),
        (0, m) => format!("{sign}{m}m{s}s"),
        (h, m) => format!("{sign}{h}h{m}m{s}s"),
    }
}
