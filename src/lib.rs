//! `hub`: a component lifecycle deployer compatible with Hub CLI stacks.
//!
//! This crate is the command line: its definitions ([`cli`]), the commands
//! that read files, call the rooms below and print ([`commands`]), the
//! top-level error with its exit codes ([`error`]) and `hub explain`
//! ([`explain`]). The work itself lives in the workspace's crates, each
//! depending only on those before it (see `ARCHITECTURE.md`):
//! `gotemplate` → `hub-manifest` → `hub-state` → `hub-params` →
//! `hub-elaborate` → `hub-plan` (deciding) → `hub-engine` (running) → `hub`.

pub mod cli;
pub mod commands;
pub mod error;
pub mod explain;

pub use error::Error;
