//! Masking the values of secret outputs as a component prints them: a
//! line of an `Outputs:` block on stdout whose key names a secret output
//! (see [`SecretMasker::names_secret_output`]) is shown as `key =
//! (masked)`, and its value joins the values masked in every later line of
//! the run, on stdout and stderr. Blocks are found with the reading of
//! [`super::capture::parse_outputs`], one line at a time, so the output
//! stays streamed.
//!
//! The one-time-pad `secrets = <blob>` line is opened as it is printed
//! (hub holds the pad it gave the component) and every value it carries
//! is learnt at once, so a secret sent through `hub util otp` is masked in
//! the lines printed after it, not only after the run.
//!
//! What is learnt is bounded, so that a component printing huge or
//! countless secret lines cannot make masking slow or hub's memory grow:
//! a value longer than [`MAX_LEARNT_VALUE`] bytes, or past
//! [`MAX_LEARNT_VALUES`] values or [`MAX_LEARNT_BYTES`] bytes in all, is
//! masked in its own line only.

use super::capture::{clean, parse_lines, unquote, BlockLine, Blocks, SECRETS_KEY};
use super::otp;
use hub_manifest::redact::{SecretMasker, MASK};
use std::borrow::Cow;

/// The longest value learnt.
pub(crate) const MAX_LEARNT_VALUE: usize = 64 << 10;
/// The most values learnt from one stdout.
pub(crate) const MAX_LEARNT_VALUES: usize = 256;
/// The most bytes of values learnt from one stdout.
pub(crate) const MAX_LEARNT_BYTES: usize = 1 << 20;

/// Follows the `Outputs:` blocks of one stdout.
#[derive(Debug, Default)]
pub(crate) struct SecretLines {
    blocks: Blocks,
    /// The previous piece was cut from a longer line (see
    /// [`super::process::MAX_LINE`]): this one continues it.
    continuing: bool,
    /// ... and that line holds a secret value: the whole piece is masked.
    continuing_secret: bool,
    /// The lines that follow belong to a secret output's multi-line value
    /// (a Terraform list, map or heredoc): each is masked.
    in_secret_value: bool,
    learnt_values: usize,
    learnt_bytes: usize,
    /// The one-time pad the component was given, to open its `secrets`.
    pad: Option<Vec<u8>>,
}

impl SecretLines {
    /// Follows a stdout whose component was given `pad` (`HUB_RANDOM`).
    pub fn with_pad(pad: Option<Vec<u8>>) -> SecretLines {
        SecretLines {
            pad,
            ..SecretLines::default()
        }
    }

    /// One stdout line (or, with `whole` false, a piece of a longer one):
    /// the text to show instead when it holds a secret output's value,
    /// which `masker` learns.
    pub fn line<'m>(
        &mut self,
        line: &str,
        whole: bool,
        masker: &mut Cow<'m, SecretMasker>,
    ) -> Option<String> {
        let continuing = std::mem::replace(&mut self.continuing, !whole);
        if continuing {
            let secret = self.continuing_secret;
            self.continuing_secret &= !whole;
            return secret.then(|| MASK.to_string());
        }
        self.continuing_secret = false;
        match self.blocks.step(line) {
            BlockLine::Entry => {
                let shown = self.secret_value(line, whole, masker);
                self.in_secret_value = shown.is_some() && self.blocks.in_value();
                shown
            }
            BlockLine::Continued if self.in_secret_value => {
                self.learn(line.trim_matches([' ', '\r', ',']), masker);
                self.continuing_secret = !whole;
                Some(MASK.to_string())
            }
            _ => {
                self.in_secret_value = false;
                None
            }
        }
    }

    /// A `key = value` line of a block naming a secret output: shown as
    /// `key = (masked)`.
    fn secret_value(
        &mut self,
        line: &str,
        whole: bool,
        masker: &mut Cow<'_, SecretMasker>,
    ) -> Option<String> {
        if line.starts_with('#') {
            return None;
        }
        let (key, value) = line.split_once('=')?;
        if clean(key) == SECRETS_KEY {
            self.open_secrets(&unquote(&clean(value)), masker);
            return None;
        }
        if !masker.names_secret_output(&clean(key)) {
            return None;
        }
        self.learn(&unquote(&clean(value)), masker);
        self.learn(value.trim(), masker);
        self.continuing_secret = !whole;
        Some(format!("{key}= {MASK}"))
    }
}

impl SecretLines {
    /// Learns every value of the one-time-pad encrypted `blob`; the blob
    /// itself shows nothing. A blob the pad cannot open is left to the
    /// capture, which warns about it.
    fn open_secrets(&mut self, blob: &str, masker: &mut Cow<'_, SecretMasker>) {
        let Some(plain) = self
            .pad
            .as_deref()
            .and_then(|pad| otp::decode(blob, pad).ok())
        else {
            return;
        };
        let text = String::from_utf8_lossy(&plain).into_owned();
        for (_, value) in parse_lines(&text) {
            self.learn(&value, masker);
        }
    }

    fn learn(&mut self, value: &str, masker: &mut Cow<'_, SecretMasker>) {
        let within = value.len() <= MAX_LEARNT_VALUE
            && self.learnt_values < MAX_LEARNT_VALUES
            && self.learnt_bytes + value.len() <= MAX_LEARNT_BYTES;
        if !within || value.len() < SecretMasker::MIN_LEN || masker.masks(value) {
            return;
        }
        masker.to_mut().add(value);
        self.learnt_values += 1;
        self.learnt_bytes += value.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hub_manifest::Output;

    fn masker() -> SecretMasker {
        let mut masker = SecretMasker::new(false);
        masker.add_secret_outputs(&[Output {
            name: "dsn".into(),
            kind: "secret".into(),
            from_tf_var: "db_dsn".into(),
            ..Default::default()
        }]);
        masker
    }

    /// Each line as shown, masked as the run masks it.
    fn shown(lines: &[(&str, bool)]) -> Vec<String> {
        let base = masker();
        let mut masker = Cow::Borrowed(&base);
        let mut watch = SecretLines::default();
        lines
            .iter()
            .map(
                |(line, whole)| match watch.line(line, *whole, &mut masker) {
                    Some(shown) => shown,
                    None => masker.mask(line).into_owned(),
                },
            )
            .collect()
    }

    #[test]
    fn every_line_of_a_secret_multi_line_value_is_masked() {
        let lines = [
            ("Outputs:", true),
            ("", true),
            ("db_dsn = <<EOT", true),
            ("pg://user:pw@host", true),
            ("", true),
            ("EOT", true),
            ("host = db.local", true),
            ("later pg://user:pw@host", true),
        ];
        assert_eq!(
            shown(&lines),
            [
                "Outputs:",
                "",
                "db_dsn = (masked)",
                "(masked)",
                "(masked)",
                "(masked)",
                "host = db.local",
                "later (masked)",
            ]
        );
    }

    #[test]
    fn a_secret_output_is_masked_in_its_line_and_every_later_one() {
        let lines = [
            ("db_dsn = before-block-not-known", true),
            ("Outputs:", true),
            ("", true),
            ("host = db.local", true),
            ("\u{1b}[1mdb_dsn\u{1b}[0m = \"pg://u:pw@db\"", true),
            ("admin_password = ab", true),
            ("", true),
            ("echo pg://u:pw@db again", true),
        ];
        assert_eq!(
            shown(&lines),
            [
                "db_dsn = before-block-not-known",
                "Outputs:",
                "",
                "host = db.local",
                "\u{1b}[1mdb_dsn\u{1b}[0m = (masked)",
                "admin_password = (masked)",
                "",
                "echo (masked) again",
            ]
        );
    }

    #[test]
    fn every_piece_of_a_cut_secret_line_is_masked() {
        let lines = [
            ("Outputs:", true),
            ("db_dsn = aaaa", false),
            ("bbbb", false),
            ("cc", true),
            ("host = h", true),
        ];
        assert_eq!(
            shown(&lines),
            [
                "Outputs:",
                "db_dsn = (masked)",
                "(masked)",
                "(masked)",
                "host = h"
            ]
        );
    }

    #[test]
    fn learning_is_bounded() {
        let base = masker();
        let mut masker = Cow::Borrowed(&base);
        let mut watch = SecretLines::default();
        watch.line("Outputs:", true, &mut masker);
        let huge = "h".repeat(MAX_LEARNT_VALUE + 1);
        let shown = watch.line(&format!("db_dsn = {huge}"), true, &mut masker);
        assert_eq!(shown.as_deref(), Some("db_dsn = (masked)"));
        assert_eq!(masker.len(), 0, "a value past the limit is not learnt");
        for i in 0..MAX_LEARNT_VALUES + 10 {
            watch.line(&format!("db_dsn = value-{i}"), true, &mut masker);
        }
        assert_eq!(masker.len(), MAX_LEARNT_VALUES);
        assert_eq!(masker.mask("value-3"), "(masked)");
    }

    #[test]
    fn nothing_is_masked_with_reveal() {
        let base = SecretMasker::new(true);
        let mut masker = Cow::Borrowed(&base);
        let mut watch = SecretLines::default();
        assert_eq!(watch.line("Outputs:", true, &mut masker), None);
        assert_eq!(watch.line("api_token = t0k3n", true, &mut masker), None);
    }
}
