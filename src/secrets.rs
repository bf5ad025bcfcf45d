//! Which names look like secrets.

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
