//! Masking secrets in everything hub prints.
//!
//! Values of names that look like secrets (see [`crate::secrets`]), values
//! computed from them, and outputs of `kind: secret...` are printed as
//! `(masked)` unless the user asked to see them (`--reveal`).

use crate::secrets::looks_secret;
use std::borrow::Cow;

pub const MASK: &str = "(masked)";

/// Decides, for each printed value, whether it is shown.
#[derive(Debug, Clone, Copy, Default)]
pub struct Redactor {
    reveal: bool,
}

impl Redactor {
    pub fn new(reveal: bool) -> Self {
        Redactor { reveal }
    }

    /// Whether a value with this name, output kind and secret flag is
    /// hidden.
    pub fn hides(&self, name: &str, kind: &str, secret: bool) -> bool {
        !self.reveal && (secret || looks_secret(name) || kind.starts_with("secret"))
    }

    /// `text`, or the mask.
    pub fn text<'a>(&self, name: &str, kind: &str, secret: bool, text: &'a str) -> Cow<'a, str> {
        if self.hides(name, kind, secret) {
            Cow::Borrowed(MASK)
        } else {
            Cow::Borrowed(text)
        }
    }

    /// A YAML value, or the mask as a string.
    pub fn value(
        &self,
        name: &str,
        kind: &str,
        secret: bool,
        value: Option<&yaml_serde::Value>,
    ) -> yaml_serde::Value {
        if self.hides(name, kind, secret) {
            yaml_serde::Value::String(MASK.into())
        } else {
            value.cloned().unwrap_or(yaml_serde::Value::Null)
        }
    }
}

/// Replaces every known secret *value* in free text (a component's output
/// lines, log files) by [`MASK`].
///
/// Values shorter than [`SecretMasker::MIN_LEN`] characters are not
/// masked: a secret `1` or `yes` would turn every such character or word of
/// every line into `(masked)`, making output unreadable while hiding
/// nothing an attacker could not guess anyway. A value spanning several
/// lines is also masked line by line, since output is masked one line at a
/// time. Overlapping values mask the longest one first.
#[derive(Clone, Default)]
pub struct SecretMasker {
    reveal: bool,
    secrets: Vec<String>,
    matcher: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>>,
}

impl SecretMasker {
    /// The shortest value that is masked.
    pub const MIN_LEN: usize = 4;

    /// `reveal`: mask nothing (`--reveal`, `--trace`).
    pub fn new(reveal: bool) -> Self {
        SecretMasker {
            reveal,
            ..SecretMasker::default()
        }
    }

    /// Adds a value to mask; values shorter than [`Self::MIN_LEN`] are
    /// ignored.
    pub fn add(&mut self, secret: &str) {
        let lines = secret.lines().map(|line| line.trim_end_matches('\r'));
        for value in std::iter::once(secret).chain(lines) {
            if value.chars().count() >= Self::MIN_LEN && !self.secrets.iter().any(|s| s == value) {
                self.secrets.push(value.to_string());
                self.matcher = std::sync::OnceLock::new();
            }
        }
    }

    /// How many values are masked (including the lines of multi-line
    /// values).
    pub fn len(&self) -> usize {
        self.secrets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// `text` with every known secret value replaced by [`MASK`].
    pub fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        if self.reveal {
            return Cow::Borrowed(text);
        }
        match self.matcher() {
            Some(matcher) if matcher.is_match(text) => {
                Cow::Owned(matcher.replace_all(text, &vec![MASK; self.secrets.len()]))
            }
            _ => Cow::Borrowed(text),
        }
    }

    fn matcher(&self) -> Option<&aho_corasick::AhoCorasick> {
        self.matcher
            .get_or_init(|| {
                if self.secrets.is_empty() {
                    return None;
                }
                aho_corasick::AhoCorasick::builder()
                    .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                    .build(&self.secrets)
                    .ok()
            })
            .as_ref()
    }
}

/// Never prints the values themselves.
impl std::fmt::Debug for SecretMasker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretMasker")
            .field("reveal", &self.reveal)
            .field("values", &self.secrets.len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_unless_revealed() {
        let hidden = Redactor::new(false);
        assert_eq!(hidden.text("db.password", "", false, "hunter2"), MASK);
        assert_eq!(hidden.text("url", "secret/token", false, "x"), MASK);
        assert_eq!(hidden.text("dsn", "", true, "x"), MASK);
        assert_eq!(hidden.text("host", "", false, "h"), "h");
        assert_eq!(
            Redactor::new(true).text("db.password", "", false, "hunter2"),
            "hunter2"
        );
    }

    #[test]
    fn secret_masker_masks_values_longest_first() {
        let mut masker = SecretMasker::new(false);
        masker.add("hunter2");
        masker.add("hunter2-extended");
        masker.add("abc");
        masker.add("");
        assert_eq!(masker.len(), 2);
        assert_eq!(
            masker.mask("pw=hunter2-extended, old=hunter2, short=abc"),
            "pw=(masked), old=(masked), short=abc"
        );
        assert!(matches!(masker.mask("nothing here"), Cow::Borrowed(_)));
        assert_eq!(SecretMasker::new(false).mask("hunter2"), "hunter2");
    }

    #[test]
    fn secret_masker_masks_each_line_of_multiline_values() {
        let mut masker = SecretMasker::new(false);
        masker.add("-----BEGIN KEY-----\r\nc2VjcmV0\nx\n");
        assert_eq!(masker.mask("line c2VjcmV0 end"), "line (masked) end");
        assert_eq!(masker.mask("-----BEGIN KEY-----"), MASK);
        assert_eq!(masker.mask("x"), "x");
    }

    #[test]
    fn secret_masker_reveals_and_hides_values_from_debug() {
        let mut revealed = SecretMasker::new(true);
        revealed.add("hunter2");
        assert_eq!(revealed.mask("hunter2"), "hunter2");
        assert!(!format!("{revealed:?}").contains("hunter2"));
    }
}
