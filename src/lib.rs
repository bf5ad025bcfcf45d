//! `hub`: a component lifecycle deployer compatible with Hub CLI stacks.
//!
//! This crate is the command line: its definitions ([`cli`]), turned into
//! the workflows' typed requests (`cli/request.rs`), and the commands that
//! are about hub itself ([`commands`]: version, completions, man pages).
//! What each command does lives in `hub_workflow`, and the work below it
//! in the workspace's crates, each depending only on those before it (see
//! `ARCHITECTURE.md`): `gotemplate` → `hub-manifest` → `hub-state` →
//! `hub-params` → `hub-elaborate` → `hub-plan` (deciding) → `hub-engine`
//! (running) → `hub-workflow` → `hub`.

pub mod cli;
pub mod commands;

pub use hub_workflow::Error;
