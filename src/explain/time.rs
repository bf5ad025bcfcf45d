//! The seconds between two RFC 3339 timestamps of a state, for the
//! duration column of the text view.

/// `end - start` in seconds; `None` when either is missing or malformed.
pub fn seconds_between(start: &str, end: &str) -> Option<f64> {
    let (start, end) = (epoch_seconds(start)?, epoch_seconds(end)?);
    (end >= start).then_some(end - start)
}

/// Seconds since 1970 of `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`.
fn epoch_seconds(text: &str) -> Option<f64> {
    if !crate::state::is_rfc3339(text) {
        return None;
    }
    let number = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let days = days_from_civil(number(0..4)?, number(5..7)?, number(8..10)?);
    let clock = number(11..13)? * 3600 + number(14..16)? * 60 + number(17..19)?;
    let rest = &text[19..];
    let zone_at = rest.find(['Z', 'z', '+', '-']).unwrap_or(rest.len());
    let fraction: f64 = match rest[..zone_at].strip_prefix('.') {
        Some(digits) => format!("0.{digits}").parse().ok()?,
        None => 0.0,
    };
    let zone = &rest[zone_at..];
    let offset = match zone.as_bytes().first() {
        Some(sign @ (b'+' | b'-')) => {
            let minutes =
                zone.get(1..3)?.parse::<i64>().ok()? * 60 + zone.get(4..6)?.parse::<i64>().ok()?;
            if *sign == b'+' {
                minutes * 60
            } else {
                -minutes * 60
            }
        }
        _ => 0,
    };
    Some((days * 86_400 + clock - offset) as f64 + fraction)
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::seconds_between;

    #[test]
    fn durations_across_zones_and_fractions() {
        let at = |a, b| seconds_between(a, b).map(|s| (s * 1000.0).round() / 1000.0);
        assert_eq!(
            at("2026-01-01T00:00:00Z", "2026-01-01T00:00:01.5Z"),
            Some(1.5)
        );
        assert_eq!(
            at("2025-12-31T23:59:59Z", "2026-01-01T00:00:01Z"),
            Some(2.0)
        );
        assert_eq!(
            at("2026-01-01T02:00:00+02:00", "2026-01-01T00:00:03Z"),
            Some(3.0)
        );
        assert_eq!(at("2026-01-01T00:00:03Z", "2026-01-01T00:00:00Z"), None);
        assert_eq!(at("", "2026-01-01T00:00:00Z"), None);
    }
}
