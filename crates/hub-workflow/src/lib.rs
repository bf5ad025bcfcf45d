//! `hub`'s workflows: what each command does, from a typed request
//! ([`request`]: the flags as plain data, no clap) to a typed result or
//! the top-level [`Error`].
//!
//! The command line (`src/`) parses the flags, chooses the function and
//! prints; everything between (the stack and the state loaded, the plan
//! made with its change record, policies, report and saved form, the
//! apply of a saved plan once its checks hold, the open-run checks,
//! pipelines, changes, states, `hub explain`) is here, so that `hub ci`
//! calls the same functions in process. Depends on `hub-engine`,
//! `hub-plan` and below; nothing below depends on it.

pub mod ci;
mod commands;
pub mod error;
pub mod explain;
pub mod format;
pub mod request;

pub use commands::*;
pub use error::{ChangeCommandError, Error, StateCommandError};
