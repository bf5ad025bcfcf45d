//! What the commands print: stdout (a closed pipe is no error), and an
//! error with where and how to fix it.

use crate::error::Error;
use std::path::PathBuf;

/// A closed pipe (`hub elaborate -o - | head`) is not an error.
pub fn write_stdout(bytes: &[u8]) -> Result<(), Error> {
    hub_manifest::console::out(bytes).map_err(|source| Error::Write {
        path: PathBuf::from("-"),
        source,
    })
}

/// `error: …`, then where, then how to fix it.
pub fn render_error(error: &Error) -> String {
    render(&error.to_string(), error.location(), error.hint())
}

pub(crate) fn render(
    message: &str,
    location: Option<hub_manifest::diag::Location>,
    hint: Option<String>,
) -> String {
    let mut out = format!("error: {message}");
    if let Some(location) = location {
        out.push_str(&format!("\n  --> {location}"));
    }
    if let Some(hint) = hint {
        out.push_str(&format!("\n  help: {hint}"));
    }
    out
}
