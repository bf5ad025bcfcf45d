//! The seconds between two RFC 3339 timestamps of a state, for the
//! duration column of the text view.

/// `end - start` in seconds; `None` when either is missing or malformed.
pub fn seconds_between(start: &str, end: &str) -> Option<f64> {
    let seconds = |text: &str| {
        hub_state::rfc3339_to_unix(text)
            .map(|(seconds, nanos)| seconds as f64 + f64::from(nanos) / 1e9)
    };
    let (start, end) = (seconds(start)?, seconds(end)?);
    (end >= start).then_some(end - start)
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
