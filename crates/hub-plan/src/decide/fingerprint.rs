//! Component fingerprints: what a component's deploy was made of, so that
//! `hub deploy --changed` can skip a component whose folder, expanded
//! parameters and upstream outputs are all as they were at its last
//! successful deploy (kept in the state as [`Fingerprint`]).
//!
//! Every digest is `sha256:<hex>` over length-prefixed fields, so that no
//! two different inputs can run together into the same bytes.
//!
//! * The folder digest covers every file and symbolic link under the
//!   folder, hidden and git-ignored ones included (a `.terraform.lock.hcl`
//!   matters), except what a `.hubignore` file (gitignore syntax, in the
//!   folder or any subfolder) excludes and `.git` entries. Per entry: its
//!   path relative to the folder (with `/`), its kind, its executable bit,
//!   and its content — a file's bytes, a link's target text (links are not
//!   followed). Entries are taken in name order.
//! * The parameters digest covers each expanded parameter's name, env name
//!   and value text, in order — except `hub.provides`, which grows as the
//!   rest of the stack deploys (a first deploy sees fewer capabilities than
//!   the next one) and would make every component look changed; what a
//!   component gets from the others is covered by the upstream digests.
//! * An upstream digest covers one dependency's outputs (name and value
//!   text), sorted by name.
//!
//! Values are compared as the text a component receives (see
//! [`substitution_text`]): `5` and `"5"` are the same value.
//!
//! A file's content is read only when the command's [`digest_cache`] has
//! no digest for it under its current size, time and inode: the digests
//! are the same with or without the cache.

use super::digest_cache::{self, DigestCache};
use hub_manifest::diag::Location;
use hub_params::format::substitution_text;
use hub_params::ExpandedParam;
use hub_state::{
    CapturedOutput, ComponentState, ComponentStatus, Fingerprint, Recorded, StateParameter,
};
use indexmap::IndexMap;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

/// The file whose patterns leave files out of a folder's digest.
pub(crate) const IGNORE_FILE: &str = ".hubignore";

/// Why a component runs: one reason among possibly several.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The state has no entry for it.
    NeverDeployed,
    /// Its entry's status is not `deployed` (error, undeployed, deploying…).
    NotDeployed { status: Recorded<ComponentStatus> },
    /// Deployed by a tool or version that kept no fingerprint.
    NoFingerprint,
    /// The folder's content differs.
    Folder,
    /// Parameters added, removed or changed compared with the entry's
    /// `parameters`; empty when only the digest tells (an order change, or
    /// an entry whose parameters are not those of the fingerprint).
    Parameters { names: Vec<String> },
    /// Dependencies whose outputs differ, or that were added or removed.
    Upstream { components: Vec<String> },
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::NeverDeployed => f.write_str("never deployed"),
            Change::NotDeployed { status } => match status.known() {
                Some(ComponentStatus::Error) => write!(f, "its last run failed (`{status}`)"),
                Some(ComponentStatus::Deploying | ComponentStatus::Undeploying) => {
                    write!(f, "its last run was interrupted (`{status}`)")
                }
                _ => write!(f, "last status `{status}`"),
            },
            Change::NoFingerprint => f.write_str("no fingerprint recorded"),
            Change::Folder => f.write_str("folder content changed"),
            Change::Parameters { names } if names.is_empty() => f.write_str("parameters changed"),
            Change::Parameters { names } => write!(f, "parameters changed: {}", names.join(", ")),
            Change::Upstream { components } if components.is_empty() => {
                f.write_str("upstream outputs changed")
            }
            Change::Upstream { components } => {
                let quoted: Vec<String> = components.iter().map(|c| format!("`{c}`")).collect();
                write!(f, "outputs of {} changed", quoted.join(", "))
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum FingerprintError {
    #[error("component folder `{}` does not exist or is not a folder", path.display())]
    NoFolder { path: PathBuf },
    #[error("cannot read `{}` to fingerprint the component: {source}", path.display())]
    Read { path: PathBuf, source: io::Error },
    #[error("cannot read `{}` to fingerprint the component: {message}", path.display())]
    Walk { path: PathBuf, message: String },
}

impl FingerprintError {
    /// The file or folder concerned.
    pub fn location(&self) -> Location {
        match self {
            FingerprintError::NoFolder { path }
            | FingerprintError::Read { path, .. }
            | FingerprintError::Walk { path, .. } => Location::file(path),
        }
    }

    pub fn hint(&self) -> Option<String> {
        match self {
            FingerprintError::NoFolder { .. } => Some(crate::source::stack::COMPONENT_FOLDER_HINT.into()),
            FingerprintError::Read { .. } | FingerprintError::Walk { .. } => Some(format!(
                "check the permissions; a file the deploy does not depend on can be listed in a `{IGNORE_FILE}` of the component folder"
            )),
        }
    }
}

/// Field tags of the folder digest.
const FILE: &[u8] = b"file";
const SYMLINK: &[u8] = b"symlink";

/// `sha256:<hex>` of the files under `dir`, every file read; see the
/// module documentation. A run's fingerprints use
/// [`folder_digest_with`] and the run's [`digest_cache`].
pub fn folder_digest(dir: &Path) -> Result<String, FingerprintError> {
    folder_digest_with(dir, None)
}

/// [`folder_digest`], with the contents of unchanged files taken from
/// `cache` when there is one.
pub fn folder_digest_with(
    dir: &Path,
    cache: Option<&DigestCache>,
) -> Result<String, FingerprintError> {
    if !dir.is_dir() {
        return Err(FingerprintError::NoFolder {
            path: dir.to_path_buf(),
        });
    }
    // A folder given through a symbolic link is walked, not taken as a
    // link: the walk starts from its real path.
    let dir = &dir
        .canonicalize()
        .map_err(|source| read_error(dir, source))?;
    let mut hasher = Sha256::new();
    for entry in walk(dir) {
        let entry = entry.map_err(|e| walk_error(dir, &e))?;
        if let Some(error) = entry.error() {
            return Err(walk_error(entry.path(), error));
        }
        let Some(kind) = entry.file_type() else {
            continue;
        };
        let relative = relative_bytes(dir, entry.path());
        if kind.is_symlink() {
            hash_symlink(&mut hasher, entry.path(), &relative)?;
        } else if kind.is_file() {
            hash_file(&mut hasher, entry.path(), &relative, cache)?;
        }
    }
    if let Some(cache) = cache {
        cache.walked(dir);
    }
    Ok(hex_digest(hasher))
}

fn walk(dir: &Path) -> ignore::Walk {
    ignore::WalkBuilder::new(dir)
        .standard_filters(false)
        .add_custom_ignore_filename(IGNORE_FILE)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        // `.git` holds the repository, not the component: a `.git` file
        // (a submodule's) only points into the parent's.
        .filter_entry(|entry| entry.file_name() != ".git")
        .build()
}

/// The path below `dir`, its components joined with `/`.
fn relative_bytes(dir: &Path, path: &Path) -> Vec<u8> {
    let relative = path.strip_prefix(dir).unwrap_or(path);
    let mut bytes = Vec::new();
    for (i, part) in relative.iter().enumerate() {
        if i > 0 {
            bytes.push(b'/');
        }
        bytes.extend_from_slice(part.as_encoded_bytes());
    }
    bytes
}

fn hash_symlink(hasher: &mut Sha256, path: &Path, relative: &[u8]) -> Result<(), FingerprintError> {
    let target = std::fs::read_link(path).map_err(|source| read_error(path, source))?;
    field(hasher, SYMLINK);
    field(hasher, relative);
    field(hasher, &[0]);
    field(hasher, target.as_os_str().as_encoded_bytes());
    Ok(())
}

/// The content is streamed into a digest of its own, then added with the
/// number of bytes read: its length need not be known before reading.
fn hash_file(
    hasher: &mut Sha256,
    path: &Path,
    relative: &[u8],
    cache: Option<&DigestCache>,
) -> Result<(), FingerprintError> {
    let content = match cache {
        Some(cache) => cached_content(cache, path)?,
        None => read_content(path)?,
    };
    field(hasher, FILE);
    field(hasher, relative);
    field(hasher, &[u8::from(content.executable)]);
    hasher.update(content.length.to_le_bytes());
    field(hasher, &content.digest);
    Ok(())
}

/// What the folder digest takes from a file.
struct Content {
    executable: bool,
    length: u64,
    digest: digest_cache::Digest,
}

/// The file's content digest from `cache` when its `lstat` is the one
/// recorded; else read (and recorded, with the `fstat` taken after the
/// reading, so that a change while reading is not cached as clean).
fn cached_content(cache: &DigestCache, path: &Path) -> Result<Content, FingerprintError> {
    let metadata = std::fs::symlink_metadata(path).map_err(|source| read_error(path, source))?;
    if let Some(digest) = cache.lookup(path, &metadata) {
        return Ok(Content {
            executable: is_executable(&metadata),
            length: metadata.len(),
            digest,
        });
    }
    let (content, after) = read_file(path)?;
    if after.len() == content.length {
        cache.insert(path, &after, content.digest);
    }
    Ok(content)
}

fn read_content(path: &Path) -> Result<Content, FingerprintError> {
    read_file(path).map(|(content, _)| content)
}

/// Reads the file; also returns its metadata as of the end of the reading.
fn read_file(path: &Path) -> Result<(Content, std::fs::Metadata), FingerprintError> {
    let mut file = File::open(path).map_err(|source| read_error(path, source))?;
    let mut hasher = Sha256::new();
    let length = io::copy(&mut file, &mut hasher).map_err(|source| read_error(path, source))?;
    let metadata = file.metadata().map_err(|source| read_error(path, source))?;
    let content = Content {
        executable: is_executable(&metadata),
        length,
        digest: hasher.finalize().into(),
    };
    Ok((content, metadata))
}

#[cfg(unix)]
fn is_executable(metadata: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    metadata.permissions().mode() & 0o111 != 0
}

#[cfg(not(unix))]
fn is_executable(_: &std::fs::Metadata) -> bool {
    false
}

fn read_error(path: &Path, source: io::Error) -> FingerprintError {
    FingerprintError::Read {
        path: path.to_path_buf(),
        source,
    }
}

/// A walk error, named by the path it carries (else `fallback`) and its
/// innermost message.
fn walk_error(fallback: &Path, error: &ignore::Error) -> FingerprintError {
    let mut path = fallback.to_path_buf();
    let mut error = error;
    loop {
        match error {
            ignore::Error::WithPath { path: inner, err } => {
                path = inner.clone();
                error = err;
            }
            ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
                error = err;
            }
            ignore::Error::Partial(errors) if errors.len() == 1 => error = &errors[0],
            _ => break,
        }
    }
    FingerprintError::Walk {
        path,
        message: error.to_string(),
    }
}

/// `sha256:<hex>` of the expanded parameters: name, env name and value
/// text of each, in order.
pub fn parameters_digest(params: &[ExpandedParam]) -> String {
    let mut hasher = Sha256::new();
    for param in params.iter().filter(|p| fingerprinted(&p.name)) {
        field(&mut hasher, param.name.as_bytes());
        field(&mut hasher, param.env.as_bytes());
        field(
            &mut hasher,
            substitution_text(param.value.as_ref()).as_bytes(),
        );
    }
    hex_digest(hasher)
}

/// The parameter that lists the capabilities provided so far is left out
/// (and a plan does not count its difference from the state as a change).
pub(crate) fn fingerprinted(name: &str) -> bool {
    name != "hub.provides"
}

/// For each name in `depends`, in that order (also when it has no output):
/// the digest of the outputs in `outputs` whose `component` is that name.
pub fn upstream_digests(
    depends: &[String],
    outputs: &[CapturedOutput],
) -> IndexMap<String, String> {
    depends
        .iter()
        .map(|name| (name.clone(), outputs_digest(name, outputs)))
        .collect()
}

/// By output name; a name captured twice counts with its latest value.
fn outputs_digest(component: &str, outputs: &[CapturedOutput]) -> String {
    let values: BTreeMap<&str, String> = outputs
        .iter()
        .filter(|output| output.component == component)
        .map(|output| {
            (
                output.name.as_str(),
                substitution_text(output.non_null_value()),
            )
        })
        .collect();
    let mut hasher = Sha256::new();
    for (name, value) in values {
        field(&mut hasher, name.as_bytes());
        field(&mut hasher, value.as_bytes());
    }
    hex_digest(hasher)
}

/// The fingerprint of a component about to be deployed (or just deployed).
pub fn take(
    dir: &Path,
    params: &[ExpandedParam],
    depends: &[String],
    outputs: &[CapturedOutput],
) -> Result<Fingerprint, FingerprintError> {
    Ok(Fingerprint {
        folder: folder_digest(dir)?,
        parameters: parameters_digest(params),
        upstream: upstream_digests(depends, outputs),
    })
}

/// Why the component must run, compared with its state entry; empty when
/// nothing changed (it may be skipped).
pub fn changes(
    entry: Option<&ComponentState>,
    current: &Fingerprint,
    params: &[ExpandedParam],
) -> Vec<Change> {
    let Some(entry) = entry else {
        return vec![Change::NeverDeployed];
    };
    if !entry.status.is_empty() && entry.status.known() != Some(ComponentStatus::Deployed) {
        return vec![Change::NotDeployed {
            status: entry.status.clone(),
        }];
    }
    let Some(recorded) = &entry.fingerprint else {
        return vec![Change::NoFingerprint];
    };
    let mut found = Vec::new();
    if recorded.folder != current.folder {
        found.push(Change::Folder);
    }
    if recorded.parameters != current.parameters {
        found.push(Change::Parameters {
            names: changed_parameters(&entry.parameters, params),
        });
    }
    let components = changed_upstream(&recorded.upstream, &current.upstream);
    if !components.is_empty() {
        found.push(Change::Upstream { components });
    }
    found
}

/// Names whose env names or values differ, in `current`'s order, then the
/// names only `recorded` has.
fn changed_parameters(recorded: &[StateParameter], current: &[ExpandedParam]) -> Vec<String> {
    let mut before: IndexMap<&str, Vec<(&str, String)>> = IndexMap::new();
    for p in recorded.iter().filter(|p| fingerprinted(p.name())) {
        before
            .entry(p.name())
            .or_default()
            .push((p.env(), substitution_text(p.non_null_value())));
    }
    let mut after: IndexMap<&str, Vec<(&str, String)>> = IndexMap::new();
    for p in current.iter().filter(|p| fingerprinted(&p.name)) {
        after
            .entry(p.name.as_str())
            .or_default()
            .push((p.env.as_str(), substitution_text(p.value.as_ref())));
    }
    let changed = after
        .iter()
        .filter(|(name, now)| before.get(*name) != Some(now))
        .map(|(name, _)| name);
    let removed = before.keys().filter(|name| !after.contains_key(*name));
    changed
        .chain(removed)
        .map(|name| name.to_string())
        .collect()
}

/// Dependencies whose digests differ or that are new, in `current`'s
/// order, then those no longer there.
fn changed_upstream(
    recorded: &IndexMap<String, String>,
    current: &IndexMap<String, String>,
) -> Vec<String> {
    let changed = current
        .iter()
        .filter(|(name, digest)| recorded.get(*name) != Some(digest))
        .map(|(name, _)| name);
    let removed = recorded.keys().filter(|name| !current.contains_key(*name));
    changed.chain(removed).cloned().collect()
}

/// A length-prefixed field.
fn field(hasher: &mut Sha256, bytes: &[u8]) {
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn hex_digest(hasher: Sha256) -> String {
    let mut text = String::from("sha256:");
    for byte in hasher.finalize() {
        text.push_str(&format!("{byte:02x}"));
    }
    text
}

#[cfg(test)]
mod tests;
