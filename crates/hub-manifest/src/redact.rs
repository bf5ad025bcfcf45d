//! Masking secrets in everything hub prints.
//!
//! Values of names that look like secrets (see [`crate::secrets`]), values
//! computed from them, and outputs of `kind: secret...` are printed as
//! `(masked)` unless the user asked to see them (`--reveal`).

use crate::secrets::{header_values, looks_secret, CREDENTIAL_VARIABLES, HEADER_VARIABLES};
use std::borrow::Cow;

pub const MASK: &str = crate::masked::MASK;

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
    /// In the order added, for the automaton.
    secrets: Vec<String>,
    /// The same values, to find one without a scan: a rerun adds every
    /// secret output of the state.
    known: std::collections::HashSet<String>,
    /// Raw output keys whose values, printed in an `Outputs:` block, are
    /// secret (see [`SecretMasker::names_secret_output`]).
    output_keys: Vec<String>,
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
    /// ignored. Unless revealed, the process masks it too in everything
    /// it writes ([`crate::masked`]).
    pub fn add(&mut self, secret: &str) {
        if !self.reveal {
            crate::masked::learn(secret);
        }
        self.add_here(secret);
    }

    /// [`SecretMasker::add`] for this masker alone.
    fn add_here(&mut self, secret: &str) {
        let lines = secret.lines().map(|line| line.trim_end_matches('\r'));
        for value in std::iter::once(secret).chain(lines) {
            if value.chars().count() >= Self::MIN_LEN && self.known.insert(value.to_string()) {
                self.secrets.push(value.to_string());
                self.matcher = std::sync::OnceLock::new();
            }
        }
    }

    /// Adds the values of the credential variables hub knows
    /// ([`CREDENTIAL_VARIABLES`]) that `var` gives, and each header's value
    /// of the OTLP headers variables ([`HEADER_VARIABLES`]).
    pub fn add_credentials(&mut self, var: impl Fn(&str) -> Option<String>) {
        for name in CREDENTIAL_VARIABLES {
            if let Some(value) = var(name) {
                self.add(&value);
            }
        }
        for name in HEADER_VARIABLES {
            if let Some(text) = var(name) {
                self.add(&text);
                for value in header_values(&text) {
                    self.add(&value);
                }
            }
        }
    }

    /// [`SecretMasker::add_credentials`] from an environment's pairs.
    pub fn add_credentials_in(&mut self, env: &[(String, String)]) {
        self.add_credentials(|name| {
            env.iter()
                .find(|(variable, _)| variable == name)
                .map(|(_, value)| value.clone())
        });
    }

    /// Learns which raw outputs of a component are secret: the raw key
    /// (`fromTfVar`, before any `/encoding`) of each declared output of
    /// `kind: secret...` or with a secret-looking name.
    pub fn add_secret_outputs(&mut self, outputs: &[crate::Output]) {
        let secret = |o: &&crate::Output| o.kind.starts_with("secret") || looks_secret(&o.name);
        for output in outputs.iter().filter(secret) {
            let raw_key = output.from_tf_var.split('/').next().unwrap_or_default();
            if !raw_key.is_empty() && !self.output_keys.iter().any(|k| k == raw_key) {
                self.output_keys.push(raw_key.to_string());
            }
        }
    }

    /// Whether the value of raw output `raw_key`, printed in an `Outputs:`
    /// block, is secret: a declared secret output reads it, or the key
    /// itself looks secret. Always false with `--reveal`.
    pub fn names_secret_output(&self, raw_key: &str) -> bool {
        !self.reveal && (looks_secret(raw_key) || self.output_keys.iter().any(|k| k == raw_key))
    }

    /// Whether `value` is one of the values masked already.
    pub fn masks(&self, value: &str) -> bool {
        self.known.contains(value)
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

/// The command line as hub records it (remote lock objects, the state's
/// operations): the value of each `-e`/`--environment`/`--env` pair
/// becomes `NAME=(masked)`, each `--mask` value `(masked)`, and any
/// argument holding one of those values or a credential from hub's
/// environment ([`CREDENTIAL_VARIABLES`]) is masked too.
pub fn recorded_args(args: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut masker = SecretMasker::new(false);
    masker.add_credentials(|name| std::env::var(name).ok());
    record_args(args, &mut masker)
}

/// Learns the values of `-e`/`--environment`/`--env` pairs and `--mask`
/// of a command line: the process masks them in everything it writes
/// ([`crate::masked`]).
pub fn learn_args(args: &[String]) {
    record_args(args.iter().cloned(), &mut SecretMasker::new(false));
}

fn record_args(args: impl IntoIterator<Item = String>, masker: &mut SecretMasker) -> Vec<String> {
    let mut recorded = Vec::new();
    let mut pending: Option<Flag> = None;
    for arg in args {
        if let Some(flag) = pending.take() {
            recorded.push(flag.mask(&arg, masker));
            continue;
        }
        match Flag::of(&arg) {
            Some((flag, None)) => {
                pending = Some(flag);
                recorded.push(arg);
            }
            Some((flag, Some((prefix, value)))) => {
                recorded.push(format!("{prefix}{}", flag.mask(value, masker)));
            }
            None => recorded.push(arg),
        }
    }
    recorded
        .iter()
        .map(|arg| masker.mask(arg).into_owned())
        .collect()
}

/// A flag whose value hub never records.
#[derive(Clone, Copy)]
enum Flag {
    /// `NAME=VALUE[,NAME=VALUE]`: the names stay.
    Pairs,
    /// A bare secret value.
    Value,
}

impl Flag {
    /// The flag `arg` is, and the value attached to it (`-eK=V`,
    /// `--environment=K=V`) split as (the flag part, the value).
    fn of(arg: &str) -> Option<(Flag, Option<(&str, &str)>)> {
        for (name, flag) in [
            ("--environment", Flag::Pairs),
            ("--env", Flag::Pairs),
            ("--additional-parameters", Flag::Pairs),
            ("--mask", Flag::Value),
        ] {
            if arg == name {
                return Some((flag, None));
            }
            if let Some(value) = arg.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
                return Some((flag, Some((&arg[..name.len() + 1], value))));
            }
        }
        Flag::short(arg)
    }

    /// `-e`/`-a` (`-e K=V`, `-eK=V`, `-e=K=V`), also after switches in
    /// one cluster (`-fe K=V`).
    fn short(arg: &str) -> Option<(Flag, Option<(&str, &str)>)> {
        const SWITCHES: &str = "dfgny";
        let cluster = arg.strip_prefix('-').filter(|c| !c.starts_with('-'))?;
        let at = cluster.find(|c: char| !SWITCHES.contains(c))?;
        if !cluster[at..].starts_with(['e', 'a']) {
            return None;
        }
        let (prefix, value) = arg.split_at(at + 2);
        match value {
            "" => Some((Flag::Pairs, None)),
            value => Some((Flag::Pairs, Some((prefix, value.trim_start_matches('='))))),
        }
    }

    /// `value` with its secret parts masked; they are learnt by `masker`.
    fn mask(self, value: &str, masker: &mut SecretMasker) -> String {
        match self {
            Flag::Value => {
                masker.add(value);
                MASK.to_string()
            }
            Flag::Pairs => value
                .split(',')
                .map(|pair| match pair.split_once('=') {
                    Some((name, value)) => {
                        masker.add(value);
                        format!("{name}={MASK}")
                    }
                    None => {
                        // Not a value but a malformed pair (`-e NAME`):
                        // masked where recorded, not in every message.
                        masker.add_here(pair);
                        MASK.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(","),
        }
    }
}

/// Never prints the values themselves.
impl std::fmt::Debug for SecretMasker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretMasker")
            .field("reveal", &self.reveal)
            .field("values", &self.secrets.len())
            .field("output_keys", &self.output_keys)
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
    fn recorded_args_mask_environment_values_and_mask_flags() {
        let args = [
            "hub",
            "deploy",
            "-e",
            "DB_PASS=hunter22,ENV=prod",
            "-eK=v1v1v1",
            "--environment=X=long-one",
            "--mask",
            "s3cr3t!",
            "--mask=other",
            "--note",
            "hunter22 again",
            "-s",
            "state.yaml",
            "-fe",
            "A=first-value",
            "-dfeB=second-value",
            "-a",
            "C=third-value",
            "-shome",
        ];
        let recorded = recorded_args(args.iter().map(|a| a.to_string()));
        assert_eq!(
            recorded.join(" "),
            "hub deploy -e DB_PASS=(masked),ENV=(masked) -eK=(masked) --environment=X=(masked) \
             --mask (masked) --mask=(masked) --note (masked) again -s state.yaml \
             -fe A=(masked) -dfeB=(masked) -a C=(masked) -shome"
        );
    }

    #[test]
    fn secret_outputs_are_named_by_their_raw_keys() {
        let output = |name: &str, kind: &str, raw: &str| crate::Output {
            name: name.into(),
            kind: kind.into(),
            from_tf_var: raw.into(),
            ..Default::default()
        };
        let mut masker = SecretMasker::new(false);
        masker.add_secret_outputs(&[
            output("dsn", "secret", "db_dsn/base64"),
            output("host", "", "db_host"),
            output("api.token", "", "tok"),
        ]);
        assert!(masker.names_secret_output("db_dsn"));
        assert!(masker.names_secret_output("tok"));
        assert!(masker.names_secret_output("admin_password"));
        assert!(!masker.names_secret_output("db_host"));
        let mut revealed = SecretMasker::new(true);
        revealed.add_secret_outputs(&[output("dsn", "secret", "db_dsn")]);
        assert!(!revealed.names_secret_output("db_dsn"));
    }

    #[test]
    fn secret_masker_reveals_and_hides_values_from_debug() {
        let mut revealed = SecretMasker::new(true);
        revealed.add("hunter2");
        assert_eq!(revealed.mask("hunter2"), "hunter2");
        assert!(!format!("{revealed:?}").contains("hunter2"));
    }
}
