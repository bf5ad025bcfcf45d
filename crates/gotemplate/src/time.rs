//! Go's `time` as Sprig's date functions use it: layouts written with the
//! reference time (`2006-01-02 15:04:05 MST`), IANA zones read from the
//! system's time zone database (as Go does; hub's built-in copy where there is none), durations like `90m` or `-48h`.

/// An instant with the zone it is shown in.
#[derive(Debug, Clone, PartialEq)]
pub struct Time {
    /// Seconds since the Unix epoch (UTC).
    pub seconds: i64,
    pub nanos: u32,
    /// The zone's offset from UTC in seconds, and its abbreviation.
    pub offset: i32,
    pub zone: String,
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

// The calendar arithmetic is this crate's own (it depends on no other crate
// of hub's); hub's state formats its timestamps with the same algorithm.

/// Days since 1970-01-01 of a civil date (proleptic Gregorian).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let (year, month, day) = (
        if month <= 2 { year - 1 } else { year },
        i64::from(month),
        i64::from(day),
    );
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// Days since 1970-01-01 → (year, month, day), proleptic Gregorian.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let shifted = days + 719_468;
    let era = shifted.div_euclid(146_097);
    let day_of_era = shifted.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let march_month = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * march_month + 2) / 5 + 1) as u32;
    let month = if march_month < 10 {
        march_month + 3
    } else {
        march_month - 9
    } as u32;
    (year_of_era + era * 400 + i64::from(month <= 2), month, day)
}

struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    weekday: usize,
    yday: u32,
}

impl Time {
    fn civil(&self) -> Civil {
        let local = self.seconds + self.offset as i64;
        let days = local.div_euclid(86400);
        let rest = local.rem_euclid(86400);
        let (year, month, day) = civil_from_days(days);
        Civil {
            year,
            month,
            day,
            hour: (rest / 3600) as u32,
            minute: (rest % 3600 / 60) as u32,
            second: (rest % 60) as u32,
            weekday: (days + 4).rem_euclid(7) as usize,
            yday: (days - days_from_civil(year, 1, 1) + 1) as u32,
        }
    }

    /// The same instant shown in `zone` (`UTC`, `Local` or an IANA name).
    pub fn in_zone(&self, zone: &str) -> Result<Time, String> {
        let (offset, abbreviation) = zone_at(zone, self.seconds)?;
        Ok(Time {
            offset,
            zone: abbreviation,
            ..self.clone()
        })
    }

    /// What Go's `time.Time.String` prints.
    pub fn go_string(&self) -> String {
        format(
            if self.nanos == 0 {
                "2006-01-02 15:04:05 -0700 MST"
            } else {
                "2006-01-02 15:04:05.999999999 -0700 MST"
            },
            self,
        )
    }
}

/// Layout elements, longest first where one is a prefix of another.
const TOKENS: &[&str] = &[
    "January",
    "Jan",
    "Monday",
    "Mon",
    "MST",
    "2006",
    "002",
    "01",
    "02",
    "03",
    "04",
    "05",
    "06",
    "15",
    "__2",
    "_2",
    "1",
    "2",
    "3",
    "4",
    "5",
    "PM",
    "pm",
    "-07:00:00",
    "-070000",
    "-07:00",
    "-0700",
    "-07",
    "Z07:00:00",
    "Z070000",
    "Z07:00",
    "Z0700",
    "Z07",
];

/// Splits a layout into literal text and elements (`.000`/`.999`
/// fractions included).
fn chunks(layout: &str) -> Vec<(bool, String)> {
    let mut out: Vec<(bool, String)> = Vec::new();
    let mut rest = layout;
    while !rest.is_empty() {
        if let Some(fraction) = fraction_token(rest) {
            out.push((true, fraction.to_string()));
            rest = &rest[fraction.len()..];
            continue;
        }
        if let Some(token) = TOKENS.iter().find(|t| rest.starts_with(**t)) {
            out.push((true, token.to_string()));
            rest = &rest[token.len()..];
            continue;
        }
        let c = rest.chars().next().unwrap_or(' ');
        match out.last_mut() {
            Some((false, text)) => text.push(c),
            _ => out.push((false, c.to_string())),
        }
        rest = &rest[c.len_utf8()..];
    }
    out
}

fn fraction_token(rest: &str) -> Option<&str> {
    let mut chars = rest.chars();
    if !matches!(chars.next(), Some('.' | ',')) {
        return None;
    }
    let digit = chars.next().filter(|c| *c == '0' || *c == '9')?;
    let len = 2 + rest[2..].chars().take_while(|c| *c == digit).count();
    let after = rest[len..].chars().next();
    (!after.is_some_and(|c| c.is_ascii_digit())).then_some(&rest[..len])
}

/// `time.Time.Format`.
pub fn format(layout: &str, time: &Time) -> String {
    let c = time.civil();
    let mut out = String::new();
    for (is_token, text) in chunks(layout) {
        if !is_token {
            out.push_str(&text);
            continue;
        }
        let hour12 = match c.hour % 12 {
            0 => 12,
            h => h,
        };
        let offset =
            |colon: bool, seconds: bool, z: bool| format_offset(time.offset, colon, seconds, z);
        let piece = match text.as_str() {
            "January" => MONTHS[c.month as usize - 1].to_string(),
            "Jan" => MONTHS[c.month as usize - 1][..3].to_string(),
            "Monday" => DAYS[c.weekday].to_string(),
            "Mon" => DAYS[c.weekday][..3].to_string(),
            "MST" => time.zone.clone(),
            "2006" => format!("{:04}", c.year),
            "06" => format!("{:02}", c.year.rem_euclid(100)),
            "01" => format!("{:02}", c.month),
            "1" => c.month.to_string(),
            "02" => format!("{:02}", c.day),
            "2" => c.day.to_string(),
            "_2" => format!("{:>2}", c.day),
            "__2" => format!("{:>3}", c.yday),
            "002" => format!("{:03}", c.yday),
            "15" => format!("{:02}", c.hour),
            "03" => format!("{hour12:02}"),
            "3" => hour12.to_string(),
            "04" => format!("{:02}", c.minute),
            "4" => c.minute.to_string(),
            "05" => format!("{:02}", c.second),
            "5" => c.second.to_string(),
            "PM" => if c.hour >= 12 { "PM" } else { "AM" }.to_string(),
            "pm" => if c.hour >= 12 { "pm" } else { "am" }.to_string(),
            "-07:00:00" => offset(true, true, false),
            "-070000" => offset(false, true, false),
            "-07:00" => offset(true, false, false),
            "-0700" => offset(false, false, false),
            "-07" => offset(false, false, false)[..3].to_string(),
            "Z07:00:00" => offset(true, true, true),
            "Z070000" => offset(false, true, true),
            "Z07:00" => offset(true, false, true),
            "Z0700" => offset(false, false, true),
            "Z07" => {
                let full = offset(false, false, true);
                full.get(..3).unwrap_or(&full).to_string()
            }
            fraction => format_fraction(fraction, time.nanos),
        };
        out.push_str(&piece);
    }
    out
}

/// A zone offset as `-07:00:00` and its shorter forms show it: with a
/// colon, with seconds, `Z` for UTC when `z`.
fn format_offset(offset: i32, colon: bool, seconds: bool, z: bool) -> String {
    if z && offset == 0 {
        return "Z".to_string();
    }
    let sign = if offset < 0 { '-' } else { '+' };
    let abs = offset.unsigned_abs();
    let (h, m, s) = (abs / 3600, abs % 3600 / 60, abs % 60);
    let sep = if colon { ":" } else { "" };
    let mut text = format!("{sign}{h:02}{sep}{m:02}");
    if seconds {
        text.push_str(&format!("{sep}{s:02}"));
    }
    text
}

/// The fraction of a second as a layout's `.000` (fixed digits) or `.999`
/// (trailing zeros dropped) shows it.
fn format_fraction(fraction: &str, nanos: u32) -> String {
    let digits = fraction.len() - 1;
    let all = format!("{:09}", nanos);
    let shown = &all[..digits.min(9)];
    if fraction.as_bytes()[1] == b'9' {
        let trimmed = shown.trim_end_matches('0');
        if trimmed.is_empty() {
            String::new()
        } else {
            format!("{}{trimmed}", &fraction[..1])
        }
    } else {
        format!("{}{shown}", &fraction[..1])
    }
}

/// `time.Parse`: numeric elements, month and day names, offsets, zone
/// abbreviations (`UTC` only as a known zone) and fractions.
pub fn parse(layout: &str, text: &str) -> Result<Time, String> {
    let mut reader = Reader {
        layout,
        text,
        rest: text,
    };
    let mut parsed = Parsed::default();
    for (is_token, element) in chunks(layout) {
        if !is_token {
            reader.rest = reader
                .rest
                .strip_prefix(element.as_str())
                .ok_or_else(|| reader.bad())?;
            continue;
        }
        parsed.read(&element, &mut reader)?;
    }
    if !reader.rest.is_empty() {
        return Err(format!(
            "parsing time {text:?} as {layout:?}: extra text {:?}",
            reader.rest
        ));
    }
    parsed.into_time(text)
}

/// What [`parse`] has still to read of `text`, and the words for its errors.
struct Reader<'a> {
    layout: &'a str,
    text: &'a str,
    rest: &'a str,
}

impl Reader<'_> {
    fn bad(&self) -> String {
        format!(
            "parsing time {:?} as {:?}: cannot parse",
            self.text, self.layout
        )
    }

    /// A decimal number of `min` to `max` digits.
    fn number(&mut self, min: usize, max: usize) -> Result<i64, String> {
        let digits = self
            .rest
            .chars()
            .take(max)
            .take_while(char::is_ascii_digit)
            .count();
        if digits < min {
            return Err(self.bad());
        }
        let value = self.rest[..digits].parse().map_err(|_| self.bad())?;
        self.rest = &self.rest[digits..];
        Ok(value)
    }
}

/// The parts of a time [`parse`] has read so far.
struct Parsed {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    nanos: u32,
    pm: Option<bool>,
    offset: Option<i32>,
    zone: String,
}

impl Default for Parsed {
    fn default() -> Self {
        Parsed {
            year: 1,
            month: 1,
            day: 1,
            hour: 0,
            minute: 0,
            second: 0,
            nanos: 0,
            pm: None,
            offset: None,
            zone: String::from("UTC"),
        }
    }
}

impl Parsed {
    /// Reads the layout element `element` off the reader.
    fn read(&mut self, element: &str, r: &mut Reader) -> Result<(), String> {
        match element {
            "2006" => self.year = r.number(4, 4)?,
            "06" => {
                // Go: 69-99 are 1969-1999, 00-68 are 2000-2068.
                let two = r.number(2, 2)?;
                self.year = if two >= 69 { 1900 + two } else { 2000 + two };
            }
            "01" => self.month = r.number(2, 2)? as u32,
            "1" => self.month = r.number(1, 2)? as u32,
            "02" => self.day = r.number(2, 2)? as u32,
            "2" | "_2" => {
                r.rest = r.rest.trim_start_matches(' ');
                self.day = r.number(1, 2)? as u32
            }
            "15" => self.hour = r.number(2, 2)? as u32,
            "03" | "3" => self.hour = r.number(1, 2)? as u32,
            "04" | "4" => self.minute = r.number(1, 2)? as u32,
            "05" | "5" => self.second = r.number(1, 2)? as u32,
            "PM" | "pm" => {
                let word = r.rest.get(..2).ok_or_else(|| r.bad())?.to_ascii_uppercase();
                self.pm = Some(word == "PM");
                r.rest = &r.rest[2..];
            }
            "January" | "Jan" | "Monday" | "Mon" => self.read_name(element, r)?,
            "MST" => {
                let len = r
                    .rest
                    .chars()
                    .take_while(|c| c.is_ascii_uppercase())
                    .count();
                self.zone = r.rest[..len].to_string();
                if self.zone == "UTC" || self.zone == "GMT" {
                    self.offset = Some(0);
                }
                r.rest = &r.rest[len..];
            }
            z if z.starts_with('Z') && r.rest.starts_with('Z') => {
                self.offset = Some(0);
                r.rest = &r.rest[1..];
            }
            z if z.starts_with('Z') || z.starts_with('-') => {
                self.offset = Some(read_offset(z, r)?);
            }
            fraction => {
                let sep = &fraction[..1];
                if let Some(after) = r.rest.strip_prefix(sep) {
                    let digits = after.chars().take_while(char::is_ascii_digit).count();
                    let text = format!("{:0<9}", &after[..digits.min(9)]);
                    self.nanos = text.parse().map_err(|_| r.bad())?;
                    r.rest = &after[digits..];
                }
            }
        }
        Ok(())
    }

    /// A month or day name, whole or in three letters (a day is read and
    /// dropped).
    fn read_name(&mut self, element: &str, r: &mut Reader) -> Result<(), String> {
        let (list, short) = match element.starts_with('J') {
            true => (&MONTHS[..], element == "Jan"),
            false => (&DAYS[..], element == "Mon"),
        };
        let names: Vec<String> = list
            .iter()
            .map(|name| match short {
                true => name[..3].to_string(),
                false => name.to_string(),
            })
            .collect();
        let found = names
            .iter()
            .position(|n| r.rest.starts_with(n.as_str()))
            .ok_or_else(|| r.bad())?;
        if element.starts_with('J') {
            self.month = found as u32 + 1;
        }
        r.rest = &r.rest[names[found].len()..];
        Ok(())
    }

    /// The time the parts make, checked for range.
    fn into_time(self, text: &str) -> Result<Time, String> {
        let Parsed {
            year,
            month,
            day,
            mut hour,
            minute,
            second,
            nanos,
            pm,
            offset,
            zone,
        } = self;
        if let Some(pm) = pm {
            hour = (hour % 12) + if pm { 12 } else { 0 };
        }
        if month == 0
            || month > 12
            || day == 0
            || day > 31
            || hour > 23
            || minute > 59
            || second > 59
        {
            return Err(format!("parsing time {text:?}: value out of range"));
        }
        let local =
            days_from_civil(year, month, day) * 86400 + (hour * 3600 + minute * 60 + second) as i64;
        let offset = offset.unwrap_or(0);
        let zone = if offset == 0 && zone == "UTC" {
            zone
        } else if zone == "UTC" {
            String::new()
        } else {
            zone
        };
        Ok(Time {
            seconds: local - offset as i64,
            nanos,
            offset,
            zone,
        })
    }
}

/// A numeric zone offset (`-0700`, `-07:00`, `Z07:00:00`…) in seconds.
fn read_offset(z: &str, r: &mut Reader) -> Result<i32, String> {
    let sign = match r.rest.chars().next() {
        Some('+') => 1,
        Some('-') => -1,
        _ => return Err(r.bad()),
    };
    r.rest = &r.rest[1..];
    let h = r.number(2, 2)?;
    let mut m = 0;
    let mut s = 0;
    if z.contains("00") || z.ends_with(":00") {
        r.rest = r.rest.strip_prefix(':').unwrap_or(r.rest);
        m = r.number(2, 2)?;
        if z.matches("00").count() > 1 {
            r.rest = r.rest.strip_prefix(':').unwrap_or(r.rest);
            s = r.number(2, 2)?;
        }
    }
    Ok(sign * (h * 3600 + m * 60 + s) as i32)
}

/// `time.ParseDuration` in nanoseconds.
pub fn parse_duration(text: &str) -> Result<i128, String> {
    let bad = || format!("time: invalid duration {text:?}");
    let (negative, mut rest) = match text.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(bad());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let len = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .count();
        let value: f64 = rest[..len].parse().map_err(|_| bad())?;
        rest = &rest[len..];
        let unit_len = rest
            .chars()
            .take_while(|c| !c.is_ascii_digit() && *c != '.')
            .count();
        let unit = &rest[..unit_len];
        rest = &rest[unit_len..];
        let scale: f64 = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return Err(bad()),
        };
        total += value * scale;
    }
    Ok(if negative {
        -(total as i128)
    } else {
        total as i128
    })
}

/// The offset and abbreviation of `zone` at `seconds`. Zones come from the
/// system's time zone database, or from the copy built into hub when the
/// system has none, so a template renders the same on a bare container.
fn zone_at(zone: &str, seconds: i64) -> Result<(i32, String), String> {
    use jiff::tz::TimeZone;
    let tz = match zone {
        "" | "UTC" => return Ok((0, "UTC".into())),
        "Local" => TimeZone::try_system().unwrap_or(TimeZone::UTC),
        name => TimeZone::get(name).map_err(|_| format!("unknown time zone {name}"))?,
    };
    let at = jiff::Timestamp::from_second(seconds).map_err(|e| e.to_string())?;
    let info = tz.to_offset_info(at);
    Ok((info.offset().seconds(), info.abbreviation().to_string()))
}

pub fn now() -> Time {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let utc = Time {
        seconds: since.as_secs() as i64,
        nanos: since.subsec_nanos(),
        offset: 0,
        zone: "UTC".into(),
    };
    utc.in_zone("Local").unwrap_or(utc)
}

/// The time `nanos` later, in the same zone.
pub fn add(time: &Time, nanos: i128) -> Time {
    let total = time.seconds as i128 * 1_000_000_000 + time.nanos as i128 + nanos;
    Time {
        seconds: total.div_euclid(1_000_000_000) as i64,
        nanos: total.rem_euclid(1_000_000_000) as u32,
        ..time.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_parse_and_format() {
        let t = parse("2006-01-02T15:04:05Z07:00", "2021-03-04T05:06:07+02:00").expect("parse");
        assert_eq!(t.seconds, 1614827167);
        assert_eq!(
            format("2006-01-02 15:04:05 -0700", &t),
            "2021-03-04 05:06:07 +0200"
        );
        let utc = t.in_zone("UTC").expect("utc");
        assert_eq!(
            format("Mon Jan 2 15:04:05 MST 2006", &utc),
            "Thu Mar 4 03:06:07 UTC 2021"
        );
        assert_eq!(format("03:04PM .000", &utc), "03:06AM .000");
        assert_eq!(
            parse_duration("-1h30m").expect("duration"),
            -5_400_000_000_000
        );
    }
}
