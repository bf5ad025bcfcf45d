//! Which names look like secrets, and which environment variables hub
//! knows to hold credentials.

/// The environment variables hub itself reads as credentials: the object
/// stores' keys and tokens (`s3://`, `gs://`, `az://` states) and the
/// password of state encryption. Their values are masked in everything a
/// component prints and in the command lines hub records.
pub const CREDENTIAL_VARIABLES: &[&str] = &[
    "AWS_SECRET_ACCESS_KEY",
    "AWS_SESSION_TOKEN",
    "AWS_TOKEN",
    "HUB_CRYPTO_PASSWORD",
    "AZURE_CLIENT_SECRET",
    "AZURE_STORAGE_ACCESS_KEY",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_CLIENT_SECRET",
    "AZURE_STORAGE_ENCRYPTION_KEY",
    "AZURE_STORAGE_MASTER_KEY",
    "AZURE_STORAGE_SAS_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_TOKEN",
    "AZURE_FABRIC_SESSION_TOKEN",
    "GOOGLE_SERVICE_ACCOUNT_KEY",
    "GOOGLE_BEARER_TOKEN",
];

const SECRET_WORDS: [&str; 7] = [
    "password",
    "secret",
    "key",
    "cert",
    "token",
    "cookie",
    "kubeconfig",
];

/// A name (the part before any `|component`) looks secret when it ends with
/// `.word`, `_word`, `Word` or `WORD` for one of the secret words; the
/// well-known `cloud.sshKey` is public. It runs for every parameter and
/// every value an expression reads, so it does not allocate.
pub fn looks_secret(name: &str) -> bool {
    let name = name.split('|').next().unwrap_or(name);
    if name == "cloud.sshKey" {
        return false;
    }
    let bytes = name.as_bytes();
    SECRET_WORDS.iter().any(|word| {
        let word = word.as_bytes();
        let Some(start) = bytes.len().checked_sub(word.len()) else {
            return false;
        };
        let tail = &bytes[start..];
        let lower = tail == word && start > 0 && matches!(bytes[start - 1], b'.' | b'_');
        let title = tail[0] == word[0].to_ascii_uppercase() && tail[1..] == word[1..];
        let upper = tail
            .iter()
            .zip(word)
            .all(|(t, w)| *t == w.to_ascii_uppercase());
        lower || title || upper
    })
}

#[cfg(test)]
mod tests {
    use super::looks_secret;

    #[test]
    fn examples() {
        for name in [
            "db.password",
            "api_token",
            "someKEY",
            "component.a.apiKey",
            "x.kubeconfig",
            "db.token|c",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "cloud.sshKey",
            "notsecret.keys",
            "password",
            "host",
            "keyring",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
    }
}
