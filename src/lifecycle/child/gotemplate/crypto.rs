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
