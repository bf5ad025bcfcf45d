//! `AWS_PROFILE`: keys and region from `~/.aws/credentials` and
//! `~/.aws/config` (or `AWS_SHARED_CREDENTIALS_FILE`, `AWS_CONFIG_FILE`),
//! which `object_store` does not read. Static keys only: a profile that
//! assumes a role or uses SSO is not followed.

use std::path::PathBuf;

#[derive(Debug, PartialEq, Eq)]
pub struct ProfileKeys {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
    pub region: Option<String>,
}

/// The keys of `AWS_PROFILE` (or `default`); `None` when the files hold
/// none for it. A named profile that is missing is an error.
pub fn from_files() -> Result<Option<ProfileKeys>, object_store::Error> {
    let named = std::env::var("AWS_PROFILE").ok().filter(|p| !p.is_empty());
    let profile = named.clone().unwrap_or_else(|| "default".into());
    let credentials = read(file("AWS_SHARED_CREDENTIALS_FILE", "credentials"));
    let config = read(file("AWS_CONFIG_FILE", "config"));
    let keys = keys_of(&profile, &credentials, &config);
    if keys.is_none() && named.is_some() {
        return Err(object_store::Error::Generic {
            store: "S3",
            source: format!(
                "AWS_PROFILE names the profile `{profile}`, which has no aws_access_key_id and aws_secret_access_key in ~/.aws/credentials or ~/.aws/config"
            )
            .into(),
        });
    }
    Ok(keys)
}

fn file(variable: &str, name: &str) -> Option<PathBuf> {
    if let Some(path) = std::env::var_os(variable).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".aws").join(name))
}

fn read(path: Option<PathBuf>) -> String {
    path.and_then(|p| std::fs::read_to_string(p).ok())
        .unwrap_or_default()
}

/// The profile's keys: `credentials` has sections `[NAME]`, `config` has
/// `[profile NAME]` (and `[default]`); the credentials file wins.
fn keys_of(profile: &str, credentials: &str, config: &str) -> Option<ProfileKeys> {
    let config_section = match profile {
        "default" => "default".to_string(),
        name => format!("profile {name}"),
    };
    let from_credentials = section(credentials, profile);
    let from_config = section(config, &config_section);
    let value = |key: &str| lookup(&from_credentials, key).or_else(|| lookup(&from_config, key));
    Some(ProfileKeys {
        access_key_id: value("aws_access_key_id")?,
        secret_access_key: value("aws_secret_access_key")?,
        session_token: value("aws_session_token"),
        region: lookup(&from_config, "region").or_else(|| lookup(&from_credentials, "region")),
    })
}

fn section(text: &str, name: &str) -> Vec<(String, String)> {
    let mut inside = false;
    let mut pairs = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            inside = header.trim() == name;
            continue;
        }
        if inside {
            if let Some((key, value)) = line.split_once('=') {
                pairs.push((key.trim().to_string(), value.trim().to_string()));
            }
        }
    }
    pairs
}

fn lookup(pairs: &[(String, String)], key: &str) -> Option<String> {
    pairs
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.clone())
        .filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREDENTIALS: &str = "[default]\naws_access_key_id = AKD\naws_secret_access_key = skd\n\n[ci]\naws_access_key_id=AKC\naws_secret_access_key=skc\naws_session_token=tok\n";
    const CONFIG: &str = "[default]\nregion = eu-west-1\n[profile ci]\nregion = us-east-2\n# a comment\n[profile cfg-only]\naws_access_key_id = AKO\naws_secret_access_key = sko\n";

    #[test]
    fn a_profile_takes_keys_from_credentials_and_region_from_config() {
        let keys = keys_of("ci", CREDENTIALS, CONFIG).expect("keys");
        assert_eq!(keys.access_key_id, "AKC");
        assert_eq!(keys.session_token.as_deref(), Some("tok"));
        assert_eq!(keys.region.as_deref(), Some("us-east-2"));
        let default = keys_of("default", CREDENTIALS, CONFIG).expect("keys");
        assert_eq!(default.secret_access_key, "skd");
        assert_eq!(default.region.as_deref(), Some("eu-west-1"));
        assert_eq!(
            keys_of("cfg-only", CREDENTIALS, CONFIG).map(|k| k.access_key_id),
            Some("AKO".into())
        );
        assert_eq!(keys_of("missing", CREDENTIALS, CONFIG), None);
    }
}
