//! `hub`: a component lifecycle deployer compatible with Hub CLI stacks.
//!
//! Data flows one way: files → [`manifest`] types → [`elaborate`]d stack →
//! (later) locked parameters → execution plan → runs → state.

pub mod cli;
pub mod commands;
pub mod diag;
pub mod elaborate;
pub mod error;
pub mod manifest;
pub mod secrets;

pub use error::Error;
