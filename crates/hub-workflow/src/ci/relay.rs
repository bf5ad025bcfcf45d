//! The proof that a GitLab pipeline was started by the job that relays
//! merge-request comments and events (the relay), and not by the merge
//! request's own files: an HMAC-SHA256, with a key only the relay and the
//! protected pipelines hold (`HUB_CI_RELAY_KEY`), over every variable the
//! relay passes ([`FIELDS`]), in the canonical form of [`message`].
//!
//! A pipeline's variables can be set by whoever edits `.gitlab-ci.yml` or
//! starts a pipeline by hand, `CI_PIPELINE_SOURCE` included; the key is a
//! protected, masked variable, which GitLab gives only to pipelines of
//! protected branches: a merge request's pipeline has none, so it cannot
//! sign. The relay's time (`HUB_CI_RELAY_TIME`) bounds how long a signed
//! request can be replayed; the signed fields bind it to one project, one
//! merge request, one commit and one command.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use std::time::Duration;

/// The first line of the signed message: the version of its form.
pub const VERSION: &str = "hub-ci-relay-v1";

/// The variable that holds the key (protected and masked).
pub const KEY: &str = "HUB_CI_RELAY_KEY";

/// The variable that holds the signature (lowercase hex of 32 bytes).
pub(crate) const SIGNATURE: &str = "HUB_CI_RELAY_SIGNATURE";

/// The variable that holds the relay's time, in seconds since 1970 (UTC).
pub const TIME: &str = "HUB_CI_RELAY_TIME";

/// The variables the message is made of, in its order: each is one line
/// `NAME=VALUE`, with an empty value when the relay does not pass it.
pub(crate) const FIELDS: [&str; 11] = [
    "CI_PROJECT_ID",
    "CI_MERGE_REQUEST_IID",
    "HUB_CI_SHA",
    "HUB_CI_EVENT",
    "HUB_CI_COMMAND",
    "HUB_CI_AUTHOR",
    "HUB_CI_ASSOCIATION",
    "HUB_CI_MR_STATE",
    "HUB_CI_FORK",
    TIME,
    // The pipeline source the relay starts (`trigger` or `api`): signed
    // so that a signature made for one cannot be used by the other.
    "CI_PIPELINE_SOURCE",
];

/// Variables the relay may pass, signed when it does: each one set (not
/// empty) adds its line `NAME=VALUE` after those of [`FIELDS`], in this
/// order; unset, the message is that of a relay that does not know it.
pub(crate) const OPTIONAL_FIELDS: [&str; 6] = [
    "HUB_CI_MR_AUTHOR",
    "HUB_CI_MERGEABLE",
    "HUB_CI_BASE_SHA",
    "HUB_CI_MERGE_SHA",
    // A merge train's pipeline: `merge_train`, and the merge request's
    // head (`HUB_CI_SHA` is then the train's commit).
    "CI_MERGE_REQUEST_EVENT_TYPE",
    "HUB_CI_MR_SHA",
];

/// Variables that only a relay passes: one of them set in a pipeline is a
/// relayed request, honoured only with a valid signature.
pub(crate) const RELAYED: [&str; 13] = [
    "HUB_CI_MR_SHA",
    "HUB_CI_MR_AUTHOR",
    "HUB_CI_MERGE_SHA",
    "HUB_CI_MERGEABLE",
    "HUB_CI_BASE_SHA",
    "HUB_CI_EVENT",
    "HUB_CI_COMMAND",
    "HUB_CI_AUTHOR",
    "HUB_CI_ASSOCIATION",
    "HUB_CI_MR_STATE",
    "HUB_CI_FORK",
    TIME,
    SIGNATURE,
];

/// How far ahead of this job's clock a relay's time may be (clocks drift).
const SKEW: u64 = 60;

/// The message the relay signs: [`VERSION`], then one `NAME=VALUE` line
/// per variable of [`FIELDS`], then one per variable of
/// [`OPTIONAL_FIELDS`] that is set; each line ended by `\n` (UTF-8, no `\r`).
/// A value that holds a line break cannot be signed unambiguously:
/// `Err(name)`.
pub fn message(set: &dyn Fn(&str) -> Option<String>) -> Result<String, &'static str> {
    let mut out = format!("{VERSION}\n");
    let optional = OPTIONAL_FIELDS
        .into_iter()
        .filter(|name| set(name).is_some_and(|v| !v.is_empty()));
    for name in FIELDS.into_iter().chain(optional) {
        let value = set(name).unwrap_or_default();
        if value.contains(['\n', '\r']) {
            return Err(name);
        }
        out.push_str(name);
        out.push('=');
        out.push_str(&value);
        out.push('\n');
    }
    Ok(out)
}

/// The HMAC-SHA256 of `message` with `key`, before it is finalised;
/// `None` for a key HMAC refuses (it takes keys of any length).
fn mac(key: &[u8], message: &str) -> Option<Hmac<Sha256>> {
    let mut mac = Hmac::<Sha256>::new_from_slice(key).ok()?;
    mac.update(message.as_bytes());
    Some(mac)
}

/// Lowercase hex of the HMAC-SHA256 of `message` with `key`: what the
/// relay passes as `HUB_CI_RELAY_SIGNATURE`.
pub fn sign(key: &[u8], message: &str) -> String {
    mac(key, message)
        .map(|mac| mac.finalize().into_bytes().to_vec())
        .unwrap_or_default()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a relayed request is not honoured.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayError {
    #[error("`{name}` is set in a `{pipeline}` pipeline: hub honours a relayed comment or event only in a pipeline the relay started (`CI_PIPELINE_SOURCE` `trigger` or `api`), signed in `HUB_CI_RELAY_SIGNATURE`")]
    NotRelayPipeline {
        name: &'static str,
        pipeline: String,
    },
    #[error("`HUB_CI_RELAY_KEY` is not set in this job: hub cannot check the relay's signature; keep the key the relay signs with in a protected, masked CI/CD variable `HUB_CI_RELAY_KEY` of the project, and run the relayed pipelines on a protected branch")]
    NoKey,
    #[error("`HUB_CI_RELAY_SIGNATURE` is not set: the relay signs the variables it passes (HMAC-SHA256 with `HUB_CI_RELAY_KEY`, the form of the guide's Security model page) and passes the signature as `HUB_CI_RELAY_SIGNATURE`")]
    NoSignature,
    #[error("`HUB_CI_RELAY_SIGNATURE` does not match the relayed variables: they were not signed with this project's `HUB_CI_RELAY_KEY`, or were changed after they were signed")]
    BadSignature,
    #[error("`{0}` holds a line break: the relay passes one line (a comment's first line)")]
    LineBreak(&'static str),
    #[error("`HUB_CI_RELAY_TIME` is `{0}`: the relay passes the time it signed, in seconds since 1970 (UTC)")]
    BadTime(String),
    #[error("the relay signed this request {age}s ago, more than `--relay-max-age` ({max}s) allows: a signed request is not replayed; the relay starts a new pipeline for each comment")]
    Expired { age: u64, max: u64 },
    #[error("the relay's time is {ahead}s ahead of this job's clock: check the relay's clock")]
    Future { ahead: u64 },
}

/// Checks that the relayed variables of `set` are signed with the key of
/// `HUB_CI_RELAY_KEY`, in the relay's time and at most `max_age` before
/// `now` (seconds since 1970).
pub fn verify(
    set: &dyn Fn(&str) -> Option<String>,
    now: i64,
    max_age: Duration,
) -> Result<(), RelayError> {
    let key = set(KEY).ok_or(RelayError::NoKey)?;
    let signature = set(SIGNATURE).ok_or(RelayError::NoSignature)?;
    let message = message(set).map_err(RelayError::LineBreak)?;
    let given = decode_hex(signature.trim()).ok_or(RelayError::BadSignature)?;
    let mac = mac(key.as_bytes(), &message).ok_or(RelayError::BadSignature)?;
    // `verify_slice` compares in constant time.
    mac.verify_slice(&given)
        .map_err(|_| RelayError::BadSignature)?;
    // Only a signed time is looked at.
    let text = set(TIME).unwrap_or_default();
    let time: i64 = text
        .parse()
        .map_err(|_| RelayError::BadTime(text.clone()))?;
    if time > now {
        let ahead = (time - now) as u64;
        if ahead > SKEW {
            return Err(RelayError::Future { ahead });
        }
        return Ok(());
    }
    let age = (now - time) as u64;
    if age > max_age.as_secs() {
        return Err(RelayError::Expired {
            age,
            max: max_age.as_secs(),
        });
    }
    Ok(())
}

/// The bytes of a hex text; `None` when it is not hex.
fn decode_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}
