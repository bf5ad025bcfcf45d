//! States on object storage: `-s s3://BUCKET/KEY` (and `gs://`, `az://`).
//!
//! * [`location`] parses a location; [`client`] connects to its store
//!   from the standard variables (`object_store`, blocking);
//! * [`store`] is the [`super::StateStore`] of a remote location: the
//!   folded state, its backup and one object per journal record, every
//!   write of the state conditional on its ETag (fencing);
//! * [`lock`] is the remote lock, with a lease renewed while the run goes
//!   on.

pub mod client;
pub mod errored;
pub mod location;
pub mod lock;
mod profile;
pub mod store;

pub use location::RemoteLocation;
pub use lock::{check_unheld, Fence, HeldLocks, RemoteLock, RemoteUnlocked};
pub use store::RemoteStore;

use std::path::Path;

/// `s3://`, `gs://`, `az://` and any other `scheme://`.
pub fn is_remote(path: &Path) -> bool {
    path.to_str().is_some_and(|p| p.contains("://"))
}
