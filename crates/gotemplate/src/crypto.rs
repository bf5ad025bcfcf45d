//! Sprig's `derivePassword` (the Master Password algorithm) and
//! `encryptAES`/`decryptAES` (AES-256-CBC, a random IV before the
//! ciphertext, base64).

use aes::cipher::{block_padding::Pkcs7, BlockDecryptMut, BlockEncryptMut, KeyIvInit};
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use hmac::{Hmac, Mac};
use sha2::Sha256;

const SEED: &str = "com.lyndir.masterpassword";

fn templates(kind: &str) -> Option<&'static [&'static str]> {
    Some(match kind {
        "maximum" => &["anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"],
        "long" => &[
            "CvcvnoCvcvCvcv",
            "CvcvCvcvnoCvcv",
            "CvcvCvcvCvcvno",
            "CvccnoCvcvCvcv",
            "CvccCvcvnoCvcv",
            "CvccCvcvCvcvno",
            "CvcvnoCvccCvcv",
            "CvcvCvccnoCvcv",
            "CvcvCvccCvcvno",
            "CvcvnoCvcvCvcc",
            "CvcvCvcvnoCvcc",
            "CvcvCvcvCvccno",
            "CvccnoCvccCvcv",
            "CvccCvccnoCvcv",
            "CvccCvccCvcvno",
            "CvcvnoCvccCvcc",
            "CvcvCvccnoCvcc",
            "CvcvCvccCvccno",
            "CvccnoCvcvCvcc",
            "CvccCvcvnoCvcc",
            "CvccCvcvCvccno",
        ],
        "medium" => &["CvcnoCvc", "CvcCvcno"],
        "short" => &["Cvcn"],
        "basic" => &["aaanaaan", "aannaaan", "aaannaaa"],
        "pin" => &["nnnn"],
        _ => return None,
    })
}

fn characters(class: char) -> &'static [u8] {
    match class {
        'V' => b"AEIOU",
        'C' => b"BCDFGHJKLMNPQRSTVWXYZ",
        'v' => b"aeiou",
        'c' => b"bcdfghjklmnpqrstvwxyz",
        'A' => b"AEIOUBCDFGHJKLMNPQRSTVWXYZ",
        'a' => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz",
        'n' => b"0123456789",
        'o' => b"@&%?,=[]_:-+*$#!'^~;()/.",
        _ => b"AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()",
    }
}

fn with_length(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&(text.len() as u32).to_be_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// The site password for `user` at `site` (an unknown type prints as
/// Sprig prints it, not as an error).
pub fn derive_password(
    counter: u32,
    kind: &str,
    password: &str,
    user: &str,
    site: &str,
) -> Result<String, String> {
    let Some(templates) = templates(kind) else {
        return Ok(format!("cannot find password template {kind}"));
    };
    let mut salt = SEED.as_bytes().to_vec();
    with_length(&mut salt, user);
    let params = scrypt::Params::new(15, 8, 2, 64).map_err(|e| e.to_string())?;
    let mut key = [0u8; 64];
    scrypt::scrypt(password.as_bytes(), &salt, &params, &mut key).map_err(|e| e.to_string())?;
    let mut message = SEED.as_bytes().to_vec();
    with_length(&mut message, site);
    message.extend_from_slice(&counter.to_be_bytes());
    let mut mac = Hmac::<Sha256>::new_from_slice(&key).map_err(|e| e.to_string())?;
    mac.update(&message);
    let seed = mac.finalize().into_bytes();
    let template = templates[seed[0] as usize % templates.len()];
    Ok(template
        .chars()
        .enumerate()
        .map(|(i, class)| {
            let chars = characters(class);
            chars[seed[i + 1] as usize % chars.len()] as char
        })
        .collect())
}

/// SHA-1 of `data`, in hex (Sprig's `sha1sum`; no crate for one digest).
pub fn sha1_hex(data: &[u8]) -> String {
    let mut h: [u32; 5] = [0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0];
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&((data.len() as u64) * 8).to_be_bytes());
    for block in message.chunks(64) {
        let mut w = [0u32; 80];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..80 {
            w[i] = (w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16]).rotate_left(1);
        }
        let [mut a, mut b, mut c, mut d, mut e] = h;
        for (i, word) in w.iter().enumerate() {
            let (f, k) = match i {
                0..=19 => ((b & c) | (!b & d), 0x5A827999),
                20..=39 => (b ^ c ^ d, 0x6ED9EBA1),
                40..=59 => ((b & c) | (b & d) | (c & d), 0x8F1BBCDC),
                _ => (b ^ c ^ d, 0xCA62C1D6),
            };
            let next = a
                .rotate_left(5)
                .wrapping_add(f)
                .wrapping_add(e)
                .wrapping_add(k)
                .wrapping_add(*word);
            (e, d, c, b, a) = (d, c, b.rotate_left(30), a, next);
        }
        for (slot, value) in h.iter_mut().zip([a, b, c, d, e]) {
            *slot = slot.wrapping_add(value);
        }
    }
    h.iter().map(|word| format!("{word:08x}")).collect()
}

/// Adler-32 of `data`, in decimal (Sprig's `adler32sum`).
pub fn adler32(data: &[u8]) -> String {
    let (mut a, mut b) = (1u32, 0u32);
    for &byte in data {
        a = (a + byte as u32) % 65521;
        b = (b + a) % 65521;
    }
    ((b << 16) | a).to_string()
}

fn key(password: &str) -> [u8; 32] {
    let mut key = [0u8; 32];
    let bytes = password.as_bytes();
    let n = bytes.len().min(32);
    key[..n].copy_from_slice(&bytes[..n]);
    key
}

pub fn encrypt_aes(password: &str, plain: &str) -> Result<String, String> {
    if plain.is_empty() {
        return Ok(String::new());
    }
    let mut iv = [0u8; 16];
    getrandom::fill(&mut iv).map_err(|e| e.to_string())?;
    let cipher = cbc::Encryptor::<aes::Aes256>::new(&key(password).into(), &iv.into());
    let encrypted = cipher.encrypt_padded_vec_mut::<Pkcs7>(plain.as_bytes());
    let mut out = iv.to_vec();
    out.extend_from_slice(&encrypted);
    Ok(STANDARD.encode(out))
}

pub fn decrypt_aes(password: &str, encoded: &str) -> Result<String, String> {
    let bytes = STANDARD.decode(encoded.trim()).map_err(|e| e.to_string())?;
    if bytes.len() < 16 || bytes.len() % 16 != 0 {
        return Err("ciphertext is not a multiple of the block size".into());
    }
    let (iv, data) = bytes.split_at(16);
    let iv: [u8; 16] = iv.try_into().map_err(|_| "bad IV".to_string())?;
    let cipher = cbc::Decryptor::<aes::Aes256>::new(&key(password).into(), &iv.into());
    let plain = cipher
        .decrypt_padded_vec_mut::<Pkcs7>(data)
        .map_err(|_| "wrong key or corrupt ciphertext".to_string())?;
    Ok(String::from_utf8_lossy(&plain).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests() {
        assert_eq!(sha1_hex(b"abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(sha1_hex(b""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
        assert_eq!(adler32(b"Wikipedia"), "300286872");
    }

    #[test]
    fn aes_round_trips() {
        let sealed = encrypt_aes("key", "<a&b>").expect("encrypt");
        assert_ne!(
            sealed,
            encrypt_aes("key", "<a&b>").expect("encrypt"),
            "a fresh IV each time"
        );
        assert_eq!(decrypt_aes("key", &sealed).expect("decrypt"), "<a&b>");
        assert!(
            decrypt_aes("other", &sealed).is_err()
                || decrypt_aes("other", &sealed).expect("x") != "<a&b>"
        );
    }
}
