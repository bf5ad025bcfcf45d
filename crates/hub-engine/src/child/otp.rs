//! The one-time pad that carries secret outputs from a component to hub
//! (deploy.md §7.4).
//!
//! Before each invocation hub draws N random bytes (the pad) and exports
//! them as `HUB_RANDOM`: standard base64 without `=` padding. Inside the
//! component, `hub util otp` XORs its standard input (zero-padded to the
//! pad's length) with the pad and prints `secrets = <base64>`; hub decodes
//! that raw output with the same pad after the run.
//!
//! `HUB_RANDOM_SEED`: when set, [`random_pad`] draws its bytes from a
//! deterministic generator seeded by that value instead of the operating
//! system, so that tests get reproducible pads. Never set it for real
//! deployments: the pad is then predictable.

use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD};
use base64::Engine;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that makes [`random_pad`] deterministic.
pub(crate) const SEED_VARIABLE: &str = "HUB_RANDOM_SEED";
/// The environment variable holding the pad in the component's environment.
pub const PAD_VARIABLE: &str = "HUB_RANDOM";
/// The pad length when `lifecycle.options.random.bytes` is not set.
pub(crate) const DEFAULT_PAD_BYTES: usize = 128;

/// The pad size a component asks for (`lifecycle.options.random.bytes`),
/// else [`DEFAULT_PAD_BYTES`].
pub(crate) fn pad_bytes(asked: i64) -> usize {
    match asked {
        n if n > 0 => n as usize,
        _ => DEFAULT_PAD_BYTES,
    }
}

#[derive(thiserror::Error, Debug)]
pub enum OtpError {
    #[error("`HUB_RANDOM` is not set")]
    MissingPad,
    #[error("`HUB_RANDOM` is empty")]
    EmptyPad,
    #[error("`HUB_RANDOM` is not base64: {0}")]
    BadPad(base64::DecodeError),
    #[error("the input is {input} bytes long, longer than the {pad}-byte one-time pad")]
    TooLong { input: usize, pad: usize },
    #[error("the secrets blob is not base64: {0}")]
    BadBlob(base64::DecodeError),
    #[error("the secrets blob decodes to {blob} bytes, but the one-time pad has {pad}")]
    LengthMismatch { blob: usize, pad: usize },
    #[error("cannot read standard input: {0}")]
    Stdin(std::io::Error),
}

impl OtpError {
    pub fn hint(&self) -> Option<String> {
        match self {
            OtpError::MissingPad | OtpError::EmptyPad | OtpError::BadPad(_) => Some(
                "run `hub util otp` from a component script started by `hub deploy`, which exports `HUB_RANDOM`"
                    .into(),
            ),
            OtpError::TooLong { input, .. } => Some(format!(
                "raise `lifecycle.options.random.bytes` in the component manifest to at least {input}"
            )),
            OtpError::LengthMismatch { .. } => Some(
                "call `hub util otp` once per component run: all secrets in one input".into(),
            ),
            _ => None,
        }
    }
}

/// `bytes` random bytes: from the operating system, or from a
/// deterministic generator when `HUB_RANDOM_SEED` is set (see the module
/// documentation). Successive calls in one process give different pads in
/// both cases.
pub(crate) fn random_pad(bytes: usize) -> Vec<u8> {
    match std::env::var(SEED_VARIABLE) {
        Ok(seed) => seeded_pad(&seed, bytes),
        Err(_) => os_pad(bytes),
    }
}

fn os_pad(bytes: usize) -> Vec<u8> {
    let mut pad = vec![0u8; bytes];
    // The operating system's random source does not fail on supported
    // platforms; a pad that is not random must never be used.
    getrandom::fill(&mut pad).expect("the operating system's random source is unavailable");
    pad
}

/// How many pads this process drew with a seed: mixed into the next one.
static SEEDED_DRAWS: AtomicU64 = AtomicU64::new(0);

fn seeded_pad(seed: &str, bytes: usize) -> Vec<u8> {
    let draw = SEEDED_DRAWS.fetch_add(1, Ordering::Relaxed);
    seeded_pad_at(seed, draw, bytes)
}

/// The pad of the `draw`-th call with `seed` (splitmix64 stream).
fn seeded_pad_at(seed: &str, draw: u64, bytes: usize) -> Vec<u8> {
    let mut state = seed_number(seed) ^ draw.wrapping_mul(0xA076_1D64_78BD_642F);
    let mut pad = Vec::with_capacity(bytes + 8);
    while pad.len() < bytes {
        pad.extend_from_slice(&splitmix64(&mut state).to_le_bytes());
    }
    pad.truncate(bytes);
    pad
}

/// A number seed as it is; any other text hashed (FNV-1a).
fn seed_number(seed: &str) -> u64 {
    seed.trim().parse().unwrap_or_else(|_| {
        seed.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        })
    })
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The pad as exported in `HUB_RANDOM`: standard base64, no padding.
pub fn pad_to_env(pad: &[u8]) -> String {
    STANDARD_NO_PAD.encode(pad)
}

/// Reads `HUB_RANDOM`; surrounding whitespace and `=` padding are accepted.
pub fn pad_from_env(text: &str) -> Result<Vec<u8>, OtpError> {
    let pad = decode_lenient(text).map_err(OtpError::BadPad)?;
    if pad.is_empty() {
        return Err(OtpError::EmptyPad);
    }
    Ok(pad)
}

/// Standard base64 with or without `=` padding.
fn decode_lenient(text: &str) -> Result<Vec<u8>, base64::DecodeError> {
    let text = text.trim();
    match STANDARD_NO_PAD.decode(text.trim_end_matches('=')) {
        Ok(bytes) => Ok(bytes),
        Err(e) => STANDARD.decode(text).map_err(|_| e),
    }
}

/// The content of the `secrets = …` line for `input`: the input
/// zero-padded to the pad's length, XORed with the pad, in standard base64
/// without padding. `None` when the input is empty or only spaces, CR and
/// LF: there is nothing to hide.
pub fn encode(input: &[u8], pad: &[u8]) -> Result<Option<String>, OtpError> {
    if input.iter().all(|b| matches!(b, b' ' | b'\r' | b'\n')) {
        return Ok(None);
    }
    if input.len() > pad.len() {
        return Err(OtpError::TooLong {
            input: input.len(),
            pad: pad.len(),
        });
    }
    let mut block = input.to_vec();
    block.resize(pad.len(), 0);
    xor(&mut block, pad);
    Ok(Some(format!("secrets = {}", STANDARD_NO_PAD.encode(block))))
}

/// Reverses [`encode`] for the value of the `secrets` raw output: the
/// plain text up to its first NUL byte.
pub fn decode(blob: &str, pad: &[u8]) -> Result<Vec<u8>, OtpError> {
    let mut block = decode_lenient(blob).map_err(OtpError::BadBlob)?;
    if block.len() != pad.len() {
        return Err(OtpError::LengthMismatch {
            blob: block.len(),
            pad: pad.len(),
        });
    }
    xor(&mut block, pad);
    if let Some(end) = block.iter().position(|&b| b == 0) {
        block.truncate(end);
    }
    Ok(block)
}

fn xor(block: &mut [u8], pad: &[u8]) {
    for (b, p) in block.iter_mut().zip(pad) {
        *b ^= p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_without_a_pad_size_gets_the_default() {
        assert_eq!(pad_bytes(0), DEFAULT_PAD_BYTES);
        assert_eq!(pad_bytes(-3), DEFAULT_PAD_BYTES);
        assert_eq!(pad_bytes(64), 64);
    }

    #[test]
    fn deploy_case_21_pad_text_has_no_padding_and_round_trips() {
        let pad: Vec<u8> = (0..128u8).collect();
        let text = pad_to_env(&pad);
        assert_eq!(text.len(), 171);
        assert!(!text.contains('='));
        assert_eq!(pad_from_env(&text).expect("decodes"), pad);
        let short = pad_to_env(&pad[..16]);
        assert_eq!(short.len(), 22);
    }

    #[test]
    fn pad_from_env_accepts_padding_and_rejects_garbage() {
        assert_eq!(pad_from_env("AAE=").expect("padded"), vec![0, 1]);
        assert_eq!(pad_from_env(" AAE\n").expect("trimmed"), vec![0, 1]);
        assert!(matches!(pad_from_env("@@@"), Err(OtpError::BadPad(_))));
        assert!(matches!(pad_from_env(""), Err(OtpError::EmptyPad)));
    }

    #[test]
    fn seeded_pads_are_reproducible_per_seed_and_draw() {
        let a = seeded_pad_at("42", 0, 37);
        assert_eq!(a, seeded_pad_at("42", 0, 37));
        assert_eq!(a.len(), 37);
        assert_ne!(a, seeded_pad_at("42", 1, 37));
        assert_ne!(a, seeded_pad_at("43", 0, 37));
        assert_ne!(seeded_pad_at("x", 0, 8), seeded_pad_at("y", 0, 8));
    }

    #[test]
    fn os_pads_differ() {
        let a = os_pad(32);
        assert_eq!(a.len(), 32);
        assert_ne!(a, os_pad(32));
    }

    #[test]
    fn deploy_case_39_encode_then_decode_round_trips() {
        let pad = seeded_pad_at("7", 0, 64);
        let input = b"password = s3cret\nuser = admin\n";
        let line = encode(input, &pad).expect("fits").expect("not blank");
        let blob = line.strip_prefix("secrets = ").expect("prefix");
        assert!(!blob.contains('='));
        assert!(!line.contains("s3cret"));
        assert_eq!(decode(blob, &pad).expect("decodes"), input.to_vec());
    }

    #[test]
    fn blank_input_encodes_to_nothing() {
        let pad = [1u8; 8];
        assert_eq!(encode(b"", &pad).expect("ok"), None);
        assert_eq!(encode(b" \r\n\n ", &pad).expect("ok"), None);
        assert!(encode(b"\t", &pad).expect("ok").is_some());
    }

    #[test]
    fn input_longer_than_the_pad_is_an_error_with_a_hint() {
        let error = encode(b"123456789", &[0u8; 8]).expect_err("too long");
        assert!(matches!(error, OtpError::TooLong { input: 9, pad: 8 }));
        assert!(error.hint().expect("hint").contains("random.bytes"));
        assert!(encode(b"12345678", &[0u8; 8])
            .expect("fits exactly")
            .is_some());
    }

    #[test]
    fn decode_rejects_wrong_length_and_bad_base64() {
        let pad = [5u8; 8];
        assert!(matches!(
            decode("AAAA", &pad),
            Err(OtpError::LengthMismatch { blob: 3, pad: 8 })
        ));
        assert!(matches!(decode("a,b", &pad), Err(OtpError::BadBlob(_))));
    }
}
