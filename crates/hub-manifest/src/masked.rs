//! The one masking choke point of the `hub` process: every value that
//! came from the runner and every value hub knows to be secret, replaced
//! by [`MASK`] in all text hub writes.
//!
//! What it masks is learnt as the run goes: when the binary starts
//! ([`enable`]), the credentials hub knows, the CI tokens and every
//! variable whose name looks secret, and the values of `-e`/`--mask`;
//! then each value a [`SecretMasker`] of the run is given (`kind: secret`
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

use crate::redact::{SecretMasker, MASK};
use crate::secrets::{looks_secret, CREDENTIAL_VARIABLES};
use std::borrow::Cow;
use std::sync::RwLock;

/// The process's masker; `None` until [`enable`].
static RUNNER: RwLock<Option<SecretMasker>> = RwLock::new(None);

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
const SECRET_PARTS: [&str; 6] = ["SECRET", "TOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE"];

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

/// Starts masking: learns the secret variables of `env` and the secret
/// values of the command line `args` (`-e NAME=value`, `--mask`).
pub fn enable(env: impl IntoIterator<Item = (String, String)>, args: &[String]) {
    let mut masker = SecretMasker::new(false);
    for (name, value) in env {
        if secret_variable(&name) {
            masker.add_here(&value);
        }
    }
    crate::redact::learn_args(args, &mut masker);
    if let Ok(mut runner) = RUNNER.write() {
        *runner = Some(masker);
    }
}

/// Whether [`enable`] was called.
pub fn enabled() -> bool {
    RUNNER.read().map(|r| r.is_some()).unwrap_or(false)
}

/// Masks `value` from now on in everything hub writes (a no-op before
/// [`enable`]).
pub fn learn(value: &str) {
    if value.chars().count() < SecretMasker::MIN_LEN {
        return;
    }
    if let Ok(mut runner) = RUNNER.write() {
        if let Some(masker) = runner.as_mut().filter(|m| !m.masks(value)) {
            masker.add_here(value);
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
