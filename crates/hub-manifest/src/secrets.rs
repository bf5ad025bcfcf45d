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

/// The variables that give the headers of hub's OTLP trace exports
/// (`key=value,key=value`, values percent-encoded): often an API key or a
/// bearer token of the collector. They are not passed to components, and
/// every header's value is masked like a credential's
/// ([`header_values`]).
pub const HEADER_VARIABLES: &[&str] = &[
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
];

/// The values of an OTLP headers variable, each as written and, when it
/// differs, percent-decoded (the collector sees the decoded one).
pub fn header_values(text: &str) -> Vec<String> {
    let mut values = Vec::new();
    for pair in text.split(',') {
        let Some((_, value)) = pair.split_once('=') else {
            continue;
        };
        let value = value.trim();
        values.push(value.to_string());
        let decoded = percent_decoded(value);
        if decoded != value {
            values.push(decoded);
        }
    }
    values
}

/// `%XX` sequences decoded; the text as it is where it is not valid.
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        let hex = bytes
            .get(at + 1..at + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[at], hex) {
            (b'%', Some(byte)) => {
                out.push(byte);
                at += 3;
            }
            (byte, _) => {
                out.push(byte);
                at += 1;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// The parameters that configure Terraform's backend (`terraform.backend.bucket`,
/// `.key`, `.role_arn`, ...): where the state lives and how to reach it.
/// Their values are secret whatever their names.
pub const BACKEND_PREFIX: &str = "terraform.backend.";

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
/// every value an expression reads, so it does not allocate. Every
/// `terraform.backend.*` parameter is secret ([`BACKEND_PREFIX`]).
pub fn looks_secret(name: &str) -> bool {
    let name = name.split('|').next().unwrap_or(name);
    if name.starts_with(BACKEND_PREFIX) {
        return true;
    }
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
    use super::{header_values, looks_secret};

    #[test]
    fn examples() {
        for name in [
            "db.password",
            "api_token",
            "someKEY",
            "component.a.apiKey",
            "x.kubeconfig",
            "db.token|c",
            "terraform.backend.bucket",
            "terraform.backend.region|net",
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

    #[test]
    fn every_header_value_is_found_as_written_and_decoded() {
        assert_eq!(
            header_values("api-key=abc%3D%3D, x-team = blue ,broken,=lone"),
            ["abc%3D%3D", "abc==", "blue", "lone"]
        );
        assert_eq!(header_values("k=100%"), ["100%"]);
    }
}
