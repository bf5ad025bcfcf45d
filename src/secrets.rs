//! Which names look like secrets.

const SECRET_WORDS: [&str; 7] = ["password", "secret", "key", "cert", "token", "cookie", "kubeconfig"];

/// A name (the part before any `|component`) looks secret when it ends with
/// `.word`, `_word`, `Word` or `WORD` for one of the secret words; the
/// well-known `cloud.sshKey` is public.
pub fn looks_secret(name: &str) -> bool {
    let name = name.split('|').next().unwrap_or(name);
    if name == "cloud.sshKey" {
        return false;
    }
    SECRET_WORDS.iter().any(|word| {
        let title = format!("{}{}", word[..1].to_uppercase(), &word[1..]);
        name.ends_with(&format!(".{word}"))
            || name.ends_with(&format!("_{word}"))
            || name.ends_with(&title)
            || name.ends_with(&word.to_uppercase())
    })
}

#[cfg(test)]
mod tests {
    use super::looks_secret;

    #[test]
    fn examples() {
        for name in ["db.password", "api_token", "someKEY", "component.a.apiKey", "x.kubeconfig", "db.token|c"] {
            assert!(looks_secret(name), "{name}");
        }
        for name in ["cloud.sshKey", "notsecret.keys", "password", "host", "keyring"] {
            assert!(!looks_secret(name), "{name}");
        }
    }
}
