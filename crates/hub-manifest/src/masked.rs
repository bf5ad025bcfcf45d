//! The one masking choke point of the `hub` process: every value that
//! came from the runner and every value hub knows to be secret, replaced
//! by [`MASK`] in all text hub writes.
//!
//! What it masks is learnt as the run goes: when the binary starts
//! ([`enable`]), the credentials hub knows, the CI tokens and every
//! variable whose name looks secret, and the values of `-e`/`--mask`;
//! then each value a [`crate::redact::SecretMasker`] of the run is given (`kind: secret`
//! and secret-looking parameters and outputs), and each `fromEnv` value
//! read from a variable that holds a secret ([`learn`]).
//!
//! The writers take it rather than each message masking itself: hub's
//! stdout and stderr ([`crate::console`]), every warning
//! ([`crate::diag::Warnings`]), the files hub writes for people (comments,
//! reports, saved plans: [`crate::write_private_output`]), the change
//! registry's records, the state's messages and logs, and the trace's
//! spans. A new message cannot forget it: it reaches a writer.
//!
//! Until [`enable`] is called (library users, unit tests) nothing is
//! learnt and nothing is masked here.

use crate::secrets::{looks_secret, CREDENTIAL_VARIABLES};
use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::RwLock;

/// What a masked value is replaced by.
pub const MASK: &str = "(masked)";

/// The shortest value that is masked (see
/// [`crate::redact::SecretMasker::MIN_LEN`]).
const MIN_LEN: usize = 4;

/// Values that stand for a secret without being one: Terraform's
/// placeholder for a sensitive output is quoted by the error that
/// refuses it.
const PLACEHOLDERS: [&str; 1] = ["<sensitive>"];

/// The process's masker; `None` until [`enable`]. Process-wide on
/// purpose: whatever writes (the console, logs, files, reports, from any
/// thread) is masked with what the process learnt.
static RUNNER: RwLock<Option<Runner>> = RwLock::new(None);

/// The values learnt, and the automaton that finds them (built again
/// when a value is added, on the next use).
#[derive(Default)]
struct Runner {
    values: Vec<String>,
    known: HashSet<String>,
    matcher: std::sync::OnceLock<Option<aho_corasick::AhoCorasick>>,
}

impl Runner {
    /// Adds `value` and each of its lines, when long enough.
    fn add(&mut self, value: &str) {
        let lines = value.lines().map(|line| line.trim_end_matches('\r'));
        for part in std::iter::once(value).chain(lines) {
            if part.chars().count() >= MIN_LEN && self.known.insert(part.to_string()) {
                self.values.push(part.to_string());
                self.matcher = std::sync::OnceLock::new();
            }
        }
    }

    /// `text` with every value replaced, longest first.
    fn mask<'a>(&self, text: &'a str) -> Cow<'a, str> {
        let matcher = self.matcher.get_or_init(|| {
            (!self.values.is_empty())
                .then(|| {
                    aho_corasick::AhoCorasick::builder()
                        .match_kind(aho_corasick::MatchKind::LeftmostLongest)
                        .build(&self.values)
                        .ok()
                })
                .flatten()
        });
        match matcher {
            Some(matcher) if matcher.is_match(text) => {
                Cow::Owned(matcher.replace_all(text, &vec![MASK; self.values.len()]))
            }
            _ => Cow::Borrowed(text),
        }
    }
}

/// Tokens CI systems give every job, whose names do not all look secret.
pub const CI_TOKENS: &[&str] = &[
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "ACTIONS_RUNTIME_TOKEN",
    "ACTIONS_ID_TOKEN_REQUEST_TOKEN",
    "CI_JOB_TOKEN",
    "CI_JOB_JWT",
    "CI_JOB_JWT_V1",
    "CI_JOB_JWT_V2",
    "CI_BUILD_TOKEN",
    "CI_REGISTRY_PASSWORD",
    "CI_DEPENDENCY_PROXY_PASSWORD",
    "CI_DEPLOY_PASSWORD",
    "CI_REPOSITORY_URL",
    "GITLAB_TOKEN",
    "HUB_NOTES_TOKEN",
    "HUB_CI_TOKEN",
    "HUB_CI_RELAY_KEY",
];

/// Words that make a variable's name a secret's wherever they stand in
/// it (`AWS_SECRET_ACCESS_KEY`, `DB_PASSWORD_FILE_CONTENT`).
const SECRET_PARTS: [&str; 6] = [
    "SECRET",
    "TOKEN",
    "PASSWORD",
    "PASSWD",
    "CREDENTIAL",
    "PRIVATE",
];

/// Whether the value of environment variable `name` is the runner's
/// secret: a credential hub knows, a CI token, or a name that looks
/// secret.
pub fn secret_variable(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    CREDENTIAL_VARIABLES.contains(&name)
        || CI_TOKENS.contains(&name)
        || looks_secret(name)
        || SECRET_PARTS.iter().any(|part| upper.contains(part))
}

/// Starts masking: learns the secret variables of `env`. The caller
/// then learns its command line's secret values
/// ([`crate::redact::learn_args`]).
pub fn enable(env: impl IntoIterator<Item = (String, String)>) {
    let mut runner = Runner::default();
    for (name, value) in env {
        if secret_variable(&name) {
            runner.add(&value);
        }
    }
    if let Ok(mut slot) = RUNNER.write() {
        *slot = Some(runner);
    }
}

/// Whether [`enable`] was called.
pub fn enabled() -> bool {
    RUNNER.read().map(|r| r.is_some()).unwrap_or(false)
}

/// Masks `value` from now on in everything hub writes (a no-op before
/// [`enable`]).
pub fn learn(value: &str) {
    if value.chars().count() < MIN_LEN || PLACEHOLDERS.contains(&value) {
        return;
    }
    let known = |runner: &Runner| runner.known.contains(value);
    if RUNNER
        .read()
        .map(|r| r.as_ref().is_none_or(known))
        .unwrap_or(true)
    {
        return;
    }
    if let Ok(mut runner) = RUNNER.write() {
        if let Some(runner) = runner.as_mut() {
            runner.add(value);
        }
    }
}

/// `text` with every value learnt replaced by [`MASK`].
pub fn text(text: &str) -> Cow<'_, str> {
    let Ok(runner) = RUNNER.read() else {
        return Cow::Owned(MASK.to_string());
    };
    match runner.as_ref() {
        Some(masker) => match masker.mask(text) {
            Cow::Borrowed(_) => Cow::Borrowed(text),
            Cow::Owned(masked) => Cow::Owned(masked),
        },
        None => Cow::Borrowed(text),
    }
}

/// [`text`] of an owned string.
pub fn string(text: String) -> String {
    match self::text(&text) {
        Cow::Borrowed(_) => text,
        Cow::Owned(masked) => masked,
    }
}

/// `bytes` with every value learnt masked; bytes that are not UTF-8 are
/// masked in their lossy reading.
pub fn bytes(bytes: &[u8]) -> Cow<'_, [u8]> {
    if !enabled() {
        return Cow::Borrowed(bytes);
    }
    match std::str::from_utf8(bytes) {
        Ok(utf8) => match text(utf8) {
            Cow::Borrowed(_) => Cow::Borrowed(bytes),
            Cow::Owned(masked) => Cow::Owned(masked.into_bytes()),
        },
        Err(_) => {
            let lossy = String::from_utf8_lossy(bytes);
            match text(&lossy) {
                Cow::Owned(masked) => Cow::Owned(masked.into_bytes()),
                Cow::Borrowed(_) => Cow::Borrowed(bytes),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_runner_masks_each_value_and_line_longest_first() {
        let mut runner = Runner::default();
        runner.add("tok-1234");
        runner.add("tok-1234-long");
        runner.add("abc");
        runner.add("line-one\r\nline-two");
        assert_eq!(
            runner.mask("a tok-1234-long b tok-1234 c abc line-two"),
            "a (masked) b (masked) c abc (masked)"
        );
        assert!(matches!(runner.mask("nothing"), Cow::Borrowed(_)));
        assert!(matches!(
            Runner::default().mask("tok-1234"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn secret_variables() {
        for name in [
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
            "CI_JOB_JWT",
            "DB_PASSWORD",
            "MY_PRIVATE_THING",
            "deployKey",
        ] {
            assert!(secret_variable(name), "{name}");
        }
        for name in ["USER", "HOME", "PATH", "CI_COMMIT_SHA", "GITHUB_EVENT_NAME"] {
            assert!(!secret_variable(name), "{name}");
        }
    }
}
