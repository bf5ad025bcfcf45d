//! The connection to an object store, from the variables users already
//! have: `AWS_*` for S3 (and S3-compatible stores through
//! `AWS_ENDPOINT_URL`), `GOOGLE_*` for GCS, `AZURE_*` for Azure.
//!
//! `object_store` is asynchronous; a [`Client`] owns a small
//! current-thread runtime and blocks on each call, so the rest of hub
//! stays synchronous.

use super::location::{RemoteLocation, Scheme};
use super::profile;
use crate::StateError;
use futures_util::TryStreamExt;
use object_store::aws::{AmazonS3Builder, S3ConditionalPut};
use object_store::azure::MicrosoftAzureBuilder;
use object_store::gcp::GoogleCloudStorageBuilder;
use object_store::path::Path as ObjectPath;
use object_store::{
    BackoffConfig, ClientOptions, ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload,
    RetryConfig, UpdateVersion,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a failing request is retried (with exponential backoff from
/// 100 ms to 5 s) before its error is reported; `HUB_REMOTE_RETRY_TIMEOUT`
/// (seconds) changes it.
pub const RETRY_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_RETRIES: usize = 10;

/// How a put treats an object already there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Whatever is there is replaced.
    Overwrite,
    /// Only when there is nothing (`If-None-Match: *`).
    Create,
    /// Only when the object is still this revision: `If-Match` on its
    /// ETag (S3, Azure), or on its generation (GCS).
    Update(Revision),
}

/// What a conditional put did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Put {
    /// Written: the new revision.
    Written(Revision),
    /// The condition failed: someone else wrote (or removed) the object.
    Conflict,
}

/// A revision of an object, as a read or a put that went through
/// returned it: its ETag and its version (S3 and Azure: the version ID,
/// only when the bucket keeps versions; GCS: the generation, always).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revision {
    pub etag: Option<String>,
    pub version: Option<String>,
}

/// An object as read: its bytes and revision.
pub struct Object {
    pub bytes: Vec<u8>,
    pub revision: Revision,
}

/// Whether an object's version shows a bucket that keeps every version.
/// S3 gives `null` to objects written while versioning is suspended, which
/// the next write replaces. A GCS generation says nothing of the bucket's
/// versioning (every object has one), so GCS is taken as keeping none.
pub fn keeps_versions(scheme: Scheme, version: Option<&str>) -> bool {
    scheme != Scheme::Gcs && version.is_some_and(|v| !v.is_empty() && v != "null")
}

/// An object as listed.
pub struct Listed {
    pub key: String,
    pub size: u64,
    /// Seconds since the epoch.
    pub modified: i64,
}

pub struct Client {
    runtime: tokio::runtime::Runtime,
    store: Arc<dyn ObjectStore>,
    location: RemoteLocation,
}

impl Client {
    /// A client for the bucket of `location`; nothing is sent yet (see
    /// [`Client::check`]).
    pub fn new(location: &RemoteLocation) -> Result<Client, StateError> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| access_error(location, "start the client", &e.to_string()))?;
        let store = build(location)
            .map_err(|e| access_error(location, "configure the client", &e.to_string()))?;
        Ok(Client {
            runtime,
            store,
            location: location.clone(),
        })
    }

    pub fn location(&self) -> &RemoteLocation {
        &self.location
    }

    /// Lists the state's folder: a missing bucket, refused credentials or
    /// an unreachable endpoint fail here, before anything runs.
    pub fn check(&self) -> Result<(), StateError> {
        let parent = self
            .location
            .key
            .rsplit_once('/')
            .map(|(folder, _)| ObjectPath::from(folder));
        let store = &self.store;
        let started = Instant::now();
        let listed = self
            .runtime
            .block_on(store.list_with_delimiter(parent.as_ref()));
        self.trace(
            "LIST",
            parent.as_ref().map_or("", |p| p.as_ref()),
            started,
            &listed,
        );
        listed
            .map(|_| ())
            .map_err(|e| self.error("reach the bucket", e))
    }

    /// The object `key`; `None` when there is none.
    pub fn get(&self, key: &str) -> Result<Option<Object>, StateError> {
        let path = ObjectPath::from(key);
        let store = &self.store;
        let started = Instant::now();
        let read = self.runtime.block_on(async {
            let got = store.get(&path).await?;
            let revision = Revision {
                etag: got.meta.e_tag.clone(),
                version: got.meta.version.clone(),
            };
            let bytes = got.bytes().await?;
            Ok::<_, object_store::Error>(Object {
                bytes: bytes.to_vec(),
                revision,
            })
        });
        self.trace("GET", key, started, &read);
        match read {
            Ok(object) => Ok(Some(object)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error_at(key, "read", e)),
        }
    }

    /// Writes `bytes` to `key` as `mode` says.
    pub fn put(&self, key: &str, bytes: Vec<u8>, mode: Write) -> Result<Put, StateError> {
        let path = ObjectPath::from(key);
        let mode = match mode {
            Write::Overwrite => PutMode::Overwrite,
            Write::Create => PutMode::Create,
            Write::Update(revision) => PutMode::Update(UpdateVersion {
                e_tag: revision.etag,
                version: revision.version,
            }),
        };
        // A conditional update of an object that is gone failed its
        // condition too.
        let update = matches!(mode, PutMode::Update(_));
        let store = &self.store;
        let options = PutOptions::from(mode);
        let started = Instant::now();
        let put = self
            .runtime
            .block_on(store.put_opts(&path, PutPayload::from(bytes), options));
        self.trace("PUT", key, started, &put);
        match put {
            Ok(result) => Ok(Put::Written(Revision {
                etag: result.e_tag,
                version: result.version,
            })),
            Err(object_store::Error::AlreadyExists { .. })
            | Err(object_store::Error::Precondition { .. }) => Ok(Put::Conflict),
            Err(object_store::Error::NotFound { .. }) if update => Ok(Put::Conflict),
            Err(e) => Err(self.error_at(key, "write", e)),
        }
    }

    /// Removes `key`; a missing object is no error.
    pub fn delete(&self, key: &str) -> Result<(), StateError> {
        let path = ObjectPath::from(key);
        let store = &self.store;
        let started = Instant::now();
        let deleted = self.runtime.block_on(store.delete(&path));
        self.trace("DELETE", key, started, &deleted);
        match deleted {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(self.error_at(key, "remove", e)),
        }
    }

    /// The objects below `folder` (`folder/…`), in key order.
    pub fn list(&self, folder: &str) -> Result<Vec<Listed>, StateError> {
        let path = ObjectPath::from(folder);
        let store = &self.store;
        let started = Instant::now();
        let listed = self.runtime.block_on(async {
            let metas: Vec<_> = store.list(Some(&path)).try_collect().await?;
            Ok::<_, object_store::Error>(metas)
        });
        self.trace("LIST", folder, started, &listed);
        let mut objects: Vec<Listed> = listed
            .map_err(|e| self.error_at(folder, "list", e))?
            .into_iter()
            .map(|meta| Listed {
                key: meta.location.to_string(),
                size: meta.size,
                modified: meta.last_modified.timestamp(),
            })
            .collect();
        objects.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(objects)
    }

    /// The revision of `key` now (a HEAD); `None` when there is none.
    pub fn revision(&self, key: &str) -> Result<Option<Revision>, StateError> {
        Ok(self.meta(key)?.map(|meta| Revision {
            etag: meta.e_tag,
            version: meta.version,
        }))
    }

    /// Size and modification time of `key`; `None` when there is none.
    pub fn head(&self, key: &str) -> Result<Option<Listed>, StateError> {
        Ok(self.meta(key)?.map(|meta| Listed {
            key: key.to_string(),
            size: meta.size,
            modified: meta.last_modified.timestamp(),
        }))
    }

    /// What a HEAD of `key` says; `None` when there is no such object.
    fn meta(&self, key: &str) -> Result<Option<object_store::ObjectMeta>, StateError> {
        let path = ObjectPath::from(key);
        let started = Instant::now();
        let head = self.runtime.block_on(self.store.head(&path));
        self.trace("HEAD", key, started, &head);
        match head {
            Ok(meta) => Ok(Some(meta)),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error_at(key, "look at", e)),
        }
    }

    /// The `--debug` line of one call: never its URL, which a store may
    /// sign, only the object's key and the outcome, cleaned of secrets.
    fn trace<T>(
        &self,
        call: &str,
        key: &str,
        started: Instant,
        outcome: &Result<T, object_store::Error>,
    ) {
        hub_manifest::diag::debug(|| {
            let outcome = match outcome {
                Ok(_) => "done".to_string(),
                Err(object_store::Error::NotFound { .. }) => "not found".to_string(),
                Err(object_store::Error::AlreadyExists { .. })
                | Err(object_store::Error::Precondition { .. }) => "condition failed".to_string(),
                Err(e) => redact(&e.to_string()),
            };
            format!(
                "{}: {call} `{key}`: {outcome} ({} ms)",
                self.location,
                started.elapsed().as_millis()
            )
        });
    }

    fn error(&self, action: &str, error: object_store::Error) -> StateError {
        access_error(&self.location, action, &error.to_string())
    }

    fn error_at(&self, key: &str, action: &str, error: object_store::Error) -> StateError {
        let action = format!("{action} `{key}`");
        access_error(&self.location, &action, &error.to_string())
    }
}

fn build(location: &RemoteLocation) -> Result<Arc<dyn ObjectStore>, object_store::Error> {
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(5),
            base: 2.0,
        },
        max_retries: MAX_RETRIES,
        retry_timeout: retry_timeout(),
    };
    let options = ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout(Duration::from_secs(30));
    Ok(match location.scheme {
        Scheme::S3 => Arc::new(s3_builder(location, options)?.with_retry(retry).build()?),
        Scheme::Gcs => Arc::new(
            GoogleCloudStorageBuilder::from_env()
                .with_bucket_name(&location.bucket)
                .with_client_options(options)
                .with_retry(retry)
                .build()?,
        ),
        Scheme::Azure => Arc::new(
            MicrosoftAzureBuilder::from_env()
                .with_container_name(&location.bucket)
                .with_client_options(options)
                .with_retry(retry)
                .build()?,
        ),
    })
}

fn s3_builder(
    location: &RemoteLocation,
    options: ClientOptions,
) -> Result<AmazonS3Builder, object_store::Error> {
    let mut builder = AmazonS3Builder::from_env()
        .with_bucket_name(&location.bucket)
        .with_conditional_put(S3ConditionalPut::ETagMatch);
    let endpoint = env("AWS_ENDPOINT_URL_S3").or_else(|| env("AWS_ENDPOINT_URL"));
    let mut options = options;
    if let Some(endpoint) = &endpoint {
        // S3-compatible stores: path-style addressing, plain HTTP allowed
        // for the endpoint the user named.
        builder = builder
            .with_endpoint(endpoint)
            .with_virtual_hosted_style_request(false);
        options = options.with_allow_http(endpoint.starts_with("http://"));
    }
    if env("AWS_ACCESS_KEY_ID").is_none() {
        if let Some(keys) = profile::from_files()? {
            builder = builder
                .with_access_key_id(keys.access_key_id)
                .with_secret_access_key(keys.secret_access_key);
            if let Some(token) = keys.session_token {
                builder = builder.with_token(token);
            }
            if env("AWS_REGION").is_none() && env("AWS_DEFAULT_REGION").is_none() {
                if let Some(region) = keys.region {
                    builder = builder.with_region(region);
                }
            }
        }
    }
    Ok(builder.with_client_options(options))
}

fn retry_timeout() -> Duration {
    env("HUB_REMOTE_RETRY_TIMEOUT")
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map_or(RETRY_TIMEOUT, Duration::from_secs_f64)
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A failed call, with what to check; the store's message is cleaned of
/// anything secret first.
pub(super) fn access_error(location: &RemoteLocation, action: &str, message: &str) -> StateError {
    let reason = redact(message);
    let hint = hint_for(location, &reason);
    StateError::RemoteAccess {
        location: location.to_string(),
        action: action.to_string(),
        reason,
        hint,
    }
}

fn hint_for(location: &RemoteLocation, reason: &str) -> String {
    let has = |words: &[&str]| words.iter().any(|w| reason.contains(w));
    let credentials = match location.scheme {
        Scheme::S3 => "AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)",
        Scheme::Gcs => "GOOGLE_SERVICE_ACCOUNT (or GOOGLE_APPLICATION_CREDENTIALS)",
        Scheme::Azure => "AZURE_STORAGE_ACCOUNT_NAME and AZURE_STORAGE_ACCOUNT_KEY",
    };
    if has(&["NoSuchBucket", "ContainerNotFound", "bucket does not exist"]) {
        format!(
            "the bucket `{}` does not exist: create it, or check the bucket's name and region",
            location.bucket
        )
    } else if has(&[
        "InvalidAccessKeyId",
        "SignatureDoesNotMatch",
        "AccessDenied",
        "Forbidden",
        "Unauthorized",
        "403",
        "401",
        "credential",
        "Credential",
    ]) {
        format!("check the credentials ({credentials}) and that they may read and write the bucket `{}`", location.bucket)
    } else if has(&[
        "error sending request",
        "connect",
        "Connection refused",
        "dns",
        "timed out",
        "retries",
    ]) {
        match (
            location.scheme,
            env("AWS_ENDPOINT_URL_S3").or_else(|| env("AWS_ENDPOINT_URL")),
        ) {
            (Scheme::S3, Some(endpoint)) => format!(
                "check that the endpoint `{}` (AWS_ENDPOINT_URL) is reachable",
                redact(&endpoint)
            ),
            _ => "check the network and the store's endpoint".to_string(),
        }
    } else {
        format!("check the location, the bucket and the credentials ({credentials})")
    }
}

/// `message` without query strings (a signed URL's signature, an Azure
/// SAS token) and without the value of any credential variable.
pub fn redact(message: &str) -> String {
    let message = summarise_xml(message);
    let mut text = String::with_capacity(message.len());
    let mut in_query = false;
    let mut word_start = 0;
    for c in message.chars() {
        if c.is_whitespace() || c == '(' {
            word_start = text.len() + c.len_utf8();
        }
        match c {
            '?' if !in_query && text[word_start.min(text.len())..].contains("://") => {
                in_query = true;
                text.push_str("?…");
            }
            c if in_query && (c.is_whitespace() || matches!(c, '"' | '\'' | ')' | '>')) => {
                in_query = false;
                text.push(c);
            }
            _ if in_query => {}
            c => text.push(c),
        }
    }
    for name in hub_manifest::secrets::CREDENTIAL_VARIABLES {
        if let Some(secret) = env(name).filter(|s| s.len() >= 4) {
            text = text.replace(&secret, "***");
        }
    }
    text
}

/// An S3 error document (`<Error><Code>…</Code><Message>…</Message>…`)
/// in a message, shortened to `Code: Message`.
fn summarise_xml(message: &str) -> String {
    let between = |open: &str, close: &str| {
        let start = message.find(open)? + open.len();
        let end = message[start..].find(close)? + start;
        Some(message[start..end].to_string())
    };
    let (Some(code), Some(start)) = (between("<Code>", "</Code>"), message.find("<?xml")) else {
        return message.to_string();
    };
    let detail = between("<Message>", "</Message>").unwrap_or_default();
    format!("{}{code}: {detail}", &message[..start])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gcs_generation_says_nothing_of_versioning() {
        assert!(keeps_versions(Scheme::S3, Some("3HL4kqtJlcpXroDTDmJ")));
        assert!(keeps_versions(
            Scheme::Azure,
            Some("2026-01-01T00:00:00.0Z")
        ));
        assert!(!keeps_versions(Scheme::S3, Some("null")));
        assert!(!keeps_versions(Scheme::S3, None));
        assert!(!keeps_versions(Scheme::Gcs, Some("1767225600000000")));
    }

    #[test]
    fn query_strings_are_cut_from_messages() {
        let text = redact(
            "error sending request for url (http://h/b/k?X-Amz-Signature=abc&sig=1): refused",
        );
        assert_eq!(
            text,
            "error sending request for url (http://h/b/k?…): refused"
        );
    }

    #[test]
    fn error_documents_are_shortened() {
        let text = redact("status code: 404 Not Found: <?xml version=\"1.0\"?>\n<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message><HostId>x</HostId></Error>");
        assert_eq!(
            text,
            "status code: 404 Not Found: NoSuchBucket: The specified bucket does not exist"
        );
    }

    #[test]
    fn hints_name_what_to_check() {
        let location = RemoteLocation::parse("s3://team/state").expect("parse");
        let hint = |reason: &str| hint_for(&location, reason);
        assert!(hint("NoSuchBucket: nope").contains("bucket `team` does not exist"));
        assert!(hint("InvalidAccessKeyId").contains("AWS_PROFILE"));
        assert!(hint("something else").contains("check the location"));
    }
}
