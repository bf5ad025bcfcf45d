//! A remote state location: `s3://BUCKET/KEY`, `gs://BUCKET/KEY` or
//! `az://CONTAINER/KEY`.

use super::super::StateError;
use std::fmt;
use std::path::Path;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    S3,
    Gcs,
    Azure,
}

impl Scheme {
    fn prefix(self) -> &'static str {
        match self {
            Scheme::S3 => "s3",
            Scheme::Gcs => "gs",
            Scheme::Azure => "az",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteLocation {
    pub scheme: Scheme,
    pub bucket: String,
    /// The state object's key, without a leading `/`.
    pub key: String,
}

impl fmt::Display for RemoteLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}/{}", self.scheme.prefix(), self.bucket, self.key)
    }
}

impl RemoteLocation {
    /// Parses `s3://BUCKET/KEY` (or `gs://`, `az://`).
    pub fn parse(given: &str) -> Result<RemoteLocation, StateError> {
        let bad = |reason: &str| StateError::RemoteLocation {
            given: given.to_string(),
            reason: reason.to_string(),
        };
        let (scheme, rest) = given
            .split_once("://")
            .ok_or_else(|| bad("it has no `scheme://`"))?;
        let scheme = match scheme {
            "s3" => Scheme::S3,
            "gs" => Scheme::Gcs,
            "az" => Scheme::Azure,
            _ => return Err(bad("only `s3://`, `gs://` and `az://` are supported")),
        };
        let (bucket, key) = rest
            .split_once('/')
            .ok_or_else(|| bad("it names a bucket but no key"))?;
        let key = key.trim_start_matches('/');
        if bucket.is_empty() {
            return Err(bad("its bucket is empty"));
        }
        if key.is_empty() || key.ends_with('/') {
            return Err(bad("its key is empty or ends with `/`"));
        }
        Ok(RemoteLocation {
            scheme,
            bucket: bucket.to_string(),
            key: key.to_string(),
        })
    }

    /// [`RemoteLocation::parse`] of a `-s` path.
    pub fn of_path(path: &Path) -> Result<RemoteLocation, StateError> {
        RemoteLocation::parse(&path.to_string_lossy())
    }

    /// The key of an object beside the state's: `KEY.backup`, `KEY.lock`.
    pub fn sibling(&self, suffix: &str) -> String {
        format!("{}{suffix}", self.key)
    }

    /// The state's last path segment: the base of `KEY-BASENAME.errored`.
    pub fn basename(&self) -> &str {
        self.key.rsplit('/').next().unwrap_or(&self.key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_three_schemes_parse_and_print_back() {
        for given in ["s3://b/k", "gs://bucket/a/b/state.yaml", "az://c/x"] {
            let location = RemoteLocation::parse(given).expect(given);
            assert_eq!(location.to_string(), given);
        }
        let location = RemoteLocation::parse("s3://team/envs/dev/hub.state").expect("parse");
        assert_eq!(location.scheme, Scheme::S3);
        assert_eq!(location.bucket, "team");
        assert_eq!(location.key, "envs/dev/hub.state");
        assert_eq!(location.sibling(".lock"), "envs/dev/hub.state.lock");
        assert_eq!(location.basename(), "hub.state");
    }

    #[test]
    fn malformed_locations_say_why() {
        for (given, reason) in [
            ("s3://bucket", "no key"),
            ("s3:///key", "bucket is empty"),
            ("s3://bucket/", "key is empty"),
            ("s3://bucket/dir/", "ends with"),
            ("ftp://bucket/key", "only `s3://`"),
        ] {
            let error = RemoteLocation::parse(given).expect_err(given);
            assert!(error.to_string().contains(reason), "{given}: {error}");
        }
    }
}
