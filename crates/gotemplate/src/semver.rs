//! Sprig's `semver` and `semverCompare` (Masterminds semver v1 rules): a
//! constraint is `||`-separated alternatives of comma- or space-separated
//! comparisons (`=`, `!=`, `>`, `<`, `>=`, `<=`, `~`, `^`); a version with
//! a pre-release matches only a comparison that names one.

use super::funcs::map_of;
use super::value::Value;
use std::cmp::Ordering;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    major: u64,
    minor: u64,
    patch: u64,
    pre: String,
    meta: String,
    original: String,
}

impl Version {
    pub fn to_value(&self) -> Value {
        map_of(
            [
                ("Major", Value::Int(self.major as i64)),
                ("Minor", Value::Int(self.minor as i64)),
                ("Patch", Value::Int(self.patch as i64)),
                ("Prerelease", Value::str(&self.pre)),
                ("Metadata", Value::str(&self.meta)),
                ("Original", Value::str(&self.original)),
            ]
            .map(|(k, v)| (k.to_string(), v)),
        )
    }

    fn cmp(&self, other: &Version) -> Ordering {
        (self.major, self.minor, self.patch)
            .cmp(&(other.major, other.minor, other.patch))
            .then_with(|| compare_pre(&self.pre, &other.pre))
    }
}

fn compare_pre(a: &str, b: &str) -> Ordering {
    match (a.is_empty(), b.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        _ => {}
    }
    let mut left = a.split('.');
    let mut right = b.split('.');
    loop {
        match (left.next(), right.next()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) => {
                let ordering = match (x.parse::<u64>(), y.parse::<u64>()) {
                    (Ok(m), Ok(n)) => m.cmp(&n),
                    (Ok(_), Err(_)) => Ordering::Less,
                    (Err(_), Ok(_)) => Ordering::Greater,
                    _ => x.cmp(y),
                };
                if ordering != Ordering::Equal {
                    return ordering;
                }
            }
        }
    }
}

pub fn parse(text: &str) -> Result<Version, String> {
    let invalid = || format!("invalid semantic version {text:?}");
    let trimmed = text.trim().trim_start_matches('v');
    let (rest, meta) = trimmed.split_once('+').unwrap_or((trimmed, ""));
    let (core, pre) = rest.split_once('-').unwrap_or((rest, ""));
    let mut numbers = core.split('.');
    let mut next = || -> Result<u64, String> {
        match numbers.next() {
            None => Ok(0),
            Some(n) => n.parse().map_err(|_| invalid()),
        }
    };
    let (major, minor, patch) = (next()?, next()?, next()?);
    if numbers.next().is_some() || core.is_empty() {
        return Err(invalid());
    }
    Ok(Version {
        major,
        minor,
        patch,
        pre: pre.to_string(),
        meta: meta.to_string(),
        original: text.to_string(),
    })
}

pub fn matches(constraint: &str, version: &str) -> Result<bool, String> {
    let version = parse(version)?;
    for alternative in constraint.split("||") {
        let mut all = true;
        for comparison in alternative
            .split([',', ' '])
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            if !check(comparison, &version)? {
                all = false;
                break;
            }
        }
        if all {
            return Ok(true);
        }
    }
    Ok(false)
}

fn check(comparison: &str, version: &Version) -> Result<bool, String> {
    let split = comparison
        .find(|c: char| c.is_ascii_digit() || c == 'v' || c == 'x' || c == '*')
        .unwrap_or(comparison.len());
    let (op, target) = comparison.split_at(split);
    let wildcard_parts = target
        .split('.')
        .take_while(|p| !matches!(*p, "x" | "X" | "*"))
        .count();
    let given_parts = target
        .split(['-', '+'])
        .next()
        .unwrap_or("")
        .split('.')
        .count()
        .min(wildcard_parts);
    let target_text = target
        .split('.')
        .take(wildcard_parts.max(1))
        .collect::<Vec<_>>()
        .join(".");
    let wanted = parse(if target_text.is_empty() {
        "0"
    } else {
        &target_text
    })?;
    if !version.pre.is_empty() && wanted.pre.is_empty() {
        return Ok(false);
    }
    let ordering = version.cmp(&wanted);
    let upper = |level: usize| -> Version {
        let mut bound = wanted.clone();
        bound.pre = String::new();
        match level {
            0 => (bound.major, bound.minor, bound.patch) = (bound.major + 1, 0, 0),
            1 => (bound.minor, bound.patch) = (bound.minor + 1, 0),
            _ => bound.patch += 1,
        }
        bound
    };
    Ok(match op.trim() {
        "" | "=" if given_parts < 3 => {
            ordering != Ordering::Less
                && version.cmp(&upper(given_parts.saturating_sub(1))) == Ordering::Less
        }
        "" | "=" => ordering == Ordering::Equal,
        "!=" => ordering != Ordering::Equal,
        ">" => ordering == Ordering::Greater,
        "<" => ordering == Ordering::Less,
        ">=" | "=>" => ordering != Ordering::Less,
        "<=" | "=<" => ordering != Ordering::Greater,
        "~" | "~>" => {
            let level = if given_parts <= 1 { 0 } else { 1 };
            ordering != Ordering::Less && version.cmp(&upper(level)) == Ordering::Less
        }
        "^" => {
            let level = if wanted.major > 0 || given_parts == 1 {
                0
            } else if wanted.minor > 0 || given_parts == 2 {
                1
            } else {
                2
            };
            ordering != Ordering::Less && version.cmp(&upper(level)) == Ordering::Less
        }
        other => return Err(format!("improper constraint operator {other:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constraints() {
        assert!(matches(">=2.10.0-0", "2.11.0-rc.3+build.7").expect("check"));
        assert!(matches("~2.11", "2.11.9").expect("check"));
        assert!(!matches("~2.11", "2.12.0").expect("check"));
        assert!(!matches("<2.0", "2.11.0-rc.3").expect("check"));
        assert!(matches("^1.2", "1.9.0").expect("check"));
        assert!(matches(">1.0, <2", "1.5.0").expect("check"));
        assert!(matches("<1 || >=3", "3.0.0").expect("check"));
    }
}
