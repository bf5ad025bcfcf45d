//! Timestamps and operation ids, each pinnable through the environment so
//! that state files can be reproduced byte for byte in tests:
//!
//! * `HUB_NOW` — an RFC 3339 time used for every timestamp the run writes.
//! * `HUB_OPERATION_ID` — the id of the operation the run records.
//! * `HUB_LINEAGE` — the lineage of a state written for the first time.

use super::StateError;
use std::time::{SystemTime, UNIX_EPOCH};

pub const NOW_VARIABLE: &str = "HUB_NOW";
pub const OPERATION_ID_VARIABLE: &str = "HUB_OPERATION_ID";
/// Pins the lineage given to a state written for the first time.
pub const LINEAGE_VARIABLE: &str = "HUB_LINEAGE";

/// Where timestamps come from: the system clock, or a pinned time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Clock {
    pinned: Option<String>,
}

impl Clock {
    /// The system clock.
    pub fn system() -> Self {
        Clock { pinned: None }
    }

    /// Always `time`, which must be an RFC 3339 date and time.
    pub fn pinned(time: &str) -> Result<Self, StateError> {
        if !is_rfc3339(time) {
            return Err(StateError::BadTime {
                variable: NOW_VARIABLE,
                value: time.to_string(),
            });
        }
        Ok(Clock {
            pinned: Some(time.to_string()),
        })
    }

    /// `HUB_NOW` when set and not empty, else the system clock.
    pub fn from_env(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Self, StateError> {
        match lookup(NOW_VARIABLE).filter(|v| !v.is_empty()) {
            Some(time) => Clock::pinned(&time),
            None => Ok(Clock::system()),
        }
    }

    /// The current time in RFC 3339 with nanoseconds (trailing zeros
    /// dropped), UTC.
    pub fn now(&self) -> String {
        match &self.pinned {
            Some(time) => time.clone(),
            None => format_rfc3339(SystemTime::now()),
        }
    }
}

/// `HUB_OPERATION_ID` when set and not empty, else a random UUID v4.
pub fn operation_id(lookup: &dyn Fn(&str) -> Option<String>) -> String {
    lookup(OPERATION_ID_VARIABLE)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(random_uuid)
}

/// `HUB_LINEAGE` when set and not empty, else a random UUID v4.
pub fn new_lineage(lookup: &dyn Fn(&str) -> Option<String>) -> String {
    lookup(LINEAGE_VARIABLE)
        .filter(|v| !v.is_empty())
        .unwrap_or_else(random_uuid)
}

/// A random UUID v4.
pub fn random_uuid() -> String {
    uuid::Uuid::new_v4().to_string()
}

/// `2024-05-01T08:00:12.3456789Z`: UTC, nanoseconds without trailing zeros.
pub fn format_rfc3339(time: SystemTime) -> String {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let seconds = since.as_secs();
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    let rest = seconds % 86_400;
    let mut out = format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    );
    let nanos = since.subsec_nanos();
    if nanos > 0 {
        let fraction = format!("{nanos:09}");
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
    out.push('Z');
    out
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Seconds and nanoseconds since 1970 of
/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`; `None` when malformed.
pub fn rfc3339_to_unix(text: &str) -> Option<(i64, u32)> {
    let number = |range: std::ops::Range<usize>| -> Option<i64> {
        let part = text.get(range)?;
        part.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| part.parse().ok())?
    };
    let bytes = text.as_bytes();
    if bytes.len() < 20
        || bytes[4] != b'-'
        || bytes[7] != b'-'
        || !matches!(bytes[10], b'T' | b't')
        || bytes[13] != b':'
        || bytes[16] != b':'
    {
        return None;
    }
    let (year, month, day) = (number(0..4)?, number(5..7)?, number(8..10)?);
    let (hour, minute, second) = (number(11..13)?, number(14..16)?, number(17..19)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut rest = &text[19..];
    let mut nanos = 0u32;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        nanos = fraction[..digits].parse::<u32>().ok()? * 10u32.pow(9 - digits as u32);
        rest = &fraction[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes().first()? {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            if rest.len() != 6 || rest.as_bytes()[3] != b':' {
                return None;
            }
            let hours: i64 = rest[1..3].parse().ok()?;
            let minutes: i64 = rest[4..6].parse().ok()?;
            sign * (hours * 3600 + minutes * 60)
        }
    };
    let seconds =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some((seconds, nanos))
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
pub fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month_index = (month + 9) % 12;
    let day_of_year = (153 * month_index + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`, fields in range.
pub fn is_rfc3339(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() < 20 {
        return false;
    }
    let digits = |range: std::ops::Range<usize>| bytes[range].iter().all(u8::is_ascii_digit);
    let number = |range: std::ops::Range<usize>| text[range].parse::<u32>().unwrap_or(99);
    let shape = digits(0..4)
        && bytes[4] == b'-'
        && digits(5..7)
        && bytes[7] == b'-'
        && digits(8..10)
        && matches!(bytes[10], b'T' | b't')
        && digits(11..13)
        && bytes[13] == b':'
        && digits(14..16)
        && bytes[16] == b':'
        && digits(17..19);
    if !shape {
        return false;
    }
    let in_range = (1..=12).contains(&number(5..7))
        && (1..=31).contains(&number(8..10))
        && number(11..13) < 24
        && number(14..16) < 60
        && number(17..19) < 61;
    in_range && valid_zone(&text[19..])
}

/// `.fraction` (optional) then `Z` or `±HH:MM`.
fn valid_zone(rest: &str) -> bool {
    let rest = match rest.strip_prefix('.') {
        Some(fraction) => {
            let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
            if digits == 0 {
                return false;
            }
            &fraction[digits..]
        }
        None => rest,
    };
    if rest == "Z" || rest == "z" {
        return true;
    }
    let bytes = rest.as_bytes();
    bytes.len() == 6
        && matches!(bytes[0], b'+' | b'-')
        && bytes[1..3].iter().all(u8::is_ascii_digit)
        && bytes[3] == b':'
        && bytes[4..6].iter().all(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn formats_utc_with_trimmed_nanoseconds() {
        let time = UNIX_EPOCH + Duration::new(1_714_550_412, 345_678_900);
        assert_eq!(format_rfc3339(time), "2024-05-01T08:00:12.3456789Z");
        assert_eq!(format_rfc3339(UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let leap_day = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(format_rfc3339(leap_day), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn the_system_clock_writes_valid_times() {
        assert!(is_rfc3339(&Clock::system().now()));
    }

    #[test]
    fn accepts_rfc3339_and_rejects_the_rest() {
        for good in [
            "2024-05-01T10:00:12.345678901+02:00",
            "2024-05-01T10:00:12Z",
            "0001-01-01T00:00:00Z",
        ] {
            assert!(is_rfc3339(good), "{good}");
        }
        for bad in [
            "2024-05-01",
            "2024-13-01T10:00:00Z",
            "2024-05-01T10:00:00",
            "2024-05-01T10:00:00.Z",
            "yesterday",
        ] {
            assert!(!is_rfc3339(bad), "{bad}");
        }
    }

    #[test]
    fn hub_now_pins_the_clock() {
        let lookup =
            |name: &str| (name == NOW_VARIABLE).then(|| "2024-05-01T10:00:00Z".to_string());
        let clock = Clock::from_env(&lookup).expect("clock");
        assert_eq!(clock.now(), "2024-05-01T10:00:00Z");
        let bad = |_: &str| Some("noon".to_string());
        let error = Clock::from_env(&bad).unwrap_err();
        assert!(error.to_string().contains("HUB_NOW"), "{error}");
    }

    #[test]
    fn operation_ids_are_uuids_unless_pinned() {
        let id = operation_id(&|_| None);
        assert_eq!(id.len(), 36);
        assert_eq!(&id[14..15], "4");
        assert!(matches!(&id[19..20], "8" | "9" | "a" | "b"), "{id}");
        assert_ne!(id, operation_id(&|_| None));
        assert_eq!(operation_id(&|_| Some("op-1".into())), "op-1");
    }
}
