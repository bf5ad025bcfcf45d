//! The edge between the command line and the library: turns parsed
//! arguments into validated options, runs the step, writes the result.

use crate::cli::{ElaborateArgs, ValidateArgs};
use crate::diag::Warnings;
use crate::elaborate::{self, Options};
use crate::error::Error;
use crate::manifest::{render_elaborated, write_output};
use indexmap::IndexMap;
use std::io::Write;
use std::path::PathBuf;

pub fn elaborate(args: ElaborateArgs, warnings: &mut Warnings) -> Result<(), Error> {
    let options = Options {
        stack: args.stack,
        params: args.params,
        overrides: parse_overrides(&args.environment)?,
        base_dir: args.base_dir,
        platform_provides: split_list(&args.platform_provides),
        env_name: std::env::var("ENV").ok(),
    };
    let elaborated = elaborate::elaborate(&options, warnings)?;
    let text = render_elaborated(&elaborated)?;
    for target in args.output.split(',').filter(|t| !t.is_empty()) {
        if target == "-" {
            write_stdout(text.as_bytes())?;
        } else {
            let path = PathBuf::from(target);
            write_output(&path, text.as_bytes(), args.compressed).map_err(|source| Error::Write { path, source })?;
        }
    }
    Ok(())
}

pub fn validate(args: ValidateArgs, warnings: &mut Warnings) -> Result<(), Error> {
    crate::manifest::validate::validate_files(&args.files, warnings)
}

/// `K=V,K=V` (the flag may also be repeated); the value may contain `=`.
pub fn parse_overrides(flags: &[String]) -> Result<IndexMap<String, String>, Error> {
    let mut out = IndexMap::new();
    for pair in flags.iter().flat_map(|f| f.split(',')).filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').ok_or_else(|| Error::Usage {
            flag: "-e",
            value: pair.to_string(),
            reason: "expected NAME=value".into(),
        })?;
        out.insert(key.to_string(), value.to_string());
    }
    Ok(out)
}

fn split_list(flags: &[String]) -> Vec<String> {
    flags
        .iter()
        .flat_map(|f| f.split(','))
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect()
}

/// A closed pipe (`hub elaborate -o - | head`) is not an error.
fn write_stdout(bytes: &[u8]) -> Result<(), Error> {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Error::Write {
            path: PathBuf::from("-"),
            source: e,
        }),
        _ => Ok(()),
    }
}

/// `error: …`, then where, then how to fix it.
pub fn render_error(error: &Error) -> String {
    if let Error::Invalid { errors } = error {
        let mut out: Vec<String> = errors
            .iter()
            .map(|e| render(&e.to_string(), e.location(), e.hint()))
            .collect();
        out.push(format!("error: {error}"));
        return out.join("\n");
    }
    render(&error.to_string(), error.location(), error.hint())
}

fn render(message: &str, location: Option<crate::diag::Location>, hint: Option<String>) -> String {
    let mut out = format!("error: {message}");
    if let Some(location) = location {
        out.push_str(&format!("\n  --> {location}"));
    }
    if let Some(hint) = hint {
        out.push_str(&format!("\n  help: {hint}"));
    }
    out
}
