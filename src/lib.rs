//! `hub`: a component lifecycle deployer compatible with Hub CLI stacks.
//!
//! Data flows one way: files → [`manifest`] types → [`elaborate`]d stack →
//! (later) locked parameters → execution plan → runs → state.

pub mod cli;
pub mod commands;
pub mod console;
pub mod diag;
pub mod elaborate;
pub mod error;
pub mod explain;
pub mod lifecycle;
pub mod manifest;
pub mod params;
pub mod redact;
pub mod secrets;
pub mod state;

pub use error::Error;
