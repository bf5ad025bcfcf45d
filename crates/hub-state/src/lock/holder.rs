//! Whether the holder of a lock still runs (its process, start time and
//! the host's boot id), and the holder this process makes.

use super::info::LockInfo;
use crate::clock::{random_uuid, Clock};
use std::sync::Mutex;

/// Ids of the locks this process holds, to tell a lock of this process
/// from one left by an earlier process that had the same pid: process-wide
/// because a lock file names its holder by process (pid, start time).
pub(super) static HELD: Mutex<Vec<String>> = Mutex::new(Vec::new());

impl LockInfo {
    /// This process, about to run `operation`.
    pub fn current(operation: &str, clock: &Clock) -> Self {
        LockInfo {
            pid: std::process::id(),
            host: hostname(),
            user: user_name(),
            operation: operation.to_string(),
            started: clock.now(),
            id: random_uuid(),
            process_start: process_start(std::process::id()),
            boot_id: boot_id(),
        }
    }
}

/// Whether a lock's holder still runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Liveness {
    Alive,
    /// Ran on this host and is gone.
    Dead,
    /// Runs on another host: cannot be checked.
    Elsewhere,
}

/// Checks the holder's process, on this host only.
pub fn liveness(holder: &LockInfo) -> Liveness {
    if holder.host != hostname() {
        return Liveness::Elsewhere;
    }
    if holder.pid == std::process::id() {
        let held = HELD
            .lock()
            .map(|ids| ids.contains(&holder.id))
            .unwrap_or(true);
        return if held {
            Liveness::Alive
        } else {
            Liveness::Dead
        };
    }
    let rebooted = matches!((&holder.boot_id, boot_id()), (Some(then), Some(now)) if *then != now);
    if rebooted || !process_exists(holder.pid) {
        return Liveness::Dead;
    }
    match (holder.process_start, process_start(holder.pid)) {
        (Some(then), Some(now)) if then != now => Liveness::Dead,
        _ => Liveness::Alive,
    }
}

/// Field 22 of `/proc/PID/stat`: when the process started, in clock ticks
/// after boot. `None` where there is no such file.
pub(super) fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may hold anything.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
}

fn boot_id() -> Option<String> {
    let id = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
    Some(id.trim().to_string()).filter(|id| !id.is_empty())
}

fn process_exists(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: signal 0 only checks that the process exists; nothing is sent.
    let result = unsafe { libc::kill(pid, 0) };
    result == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

/// The host name, as the kernel reports it.
pub fn hostname() -> String {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is valid for its length; gethostname writes at most
    // that many bytes.
    let result = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if result == 0 {
        let end = buffer.iter().position(|&b| b == 0).unwrap_or(buffer.len());
        let name = String::from_utf8_lossy(&buffer[..end]).into_owned();
        if !name.is_empty() {
            return name;
        }
    }
    std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into())
}

/// `$USER`, else `$LOGNAME`, else `uid N`.
pub fn user_name() -> String {
    for variable in ["USER", "LOGNAME"] {
        if let Some(name) = std::env::var(variable).ok().filter(|n| !n.is_empty()) {
            return name;
        }
    }
    // SAFETY: getuid cannot fail and has no preconditions.
    format!("uid {}", unsafe { libc::getuid() })
}
