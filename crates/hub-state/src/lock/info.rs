//! Who holds a lock: the content of a lock file, and how an error names
//! its holder. Below the lock and the state's errors, which both carry it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// Who holds a lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LockInfo {
    pub pid: u32,
    pub host: String,
    pub user: String,
    /// `deploy`, `undeploy`, `invoke`.
    pub operation: String,
    /// RFC 3339 time the lock was taken.
    pub started: String,
    /// Random; identifies this particular lock.
    pub id: String,
    /// When the holder's process started, in clock ticks after boot
    /// (Linux); tells it from a later process with the same pid.
    #[serde(rename = "processStart", skip_serializing_if = "Option::is_none")]
    pub process_start: Option<u64>,
    /// The kernel's boot id when the lock was taken (Linux).
    #[serde(rename = "bootId", skip_serializing_if = "Option::is_none")]
    pub boot_id: Option<String>,
}

impl fmt::Display for LockInfo {
    /// `` `deploy` started by alice at 2024-… (process 4242 on host build-7) ``
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.operation.is_empty() {
            f.write_str("a hub run")?;
        } else {
            write!(f, "`{}`", self.operation)?;
        }
        if !self.user.is_empty() || !self.started.is_empty() {
            f.write_str(" started")?;
        }
        if !self.user.is_empty() {
            write!(f, " by {}", self.user)?;
        }
        if !self.started.is_empty() {
            write!(f, " at {}", self.started)?;
        }
        write!(f, " (process {}", self.pid)?;
        if !self.host.is_empty() {
            write!(f, " on host {}", self.host)?;
        }
        f.write_str(")")
    }
}
