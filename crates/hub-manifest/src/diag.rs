//! Locations in user files and the warnings collected while reading them.
//!
//! The library never prints: it returns errors and reports warnings into
//! a [`Warnings`] collector that the command line renders at the end.
//!
//! Every warning reaches the user: code that reports takes the caller's
//! collector (`&mut Warnings`), or makes its own with [`Warnings::new`] and
//! hands what it collected back ([`Warnings::append`]) or inspects it. The
//! one way to drop warnings is [`Warnings::already_reported`], for work done
//! again whose warnings the first pass reported, with a comment saying
//! where. Production code never calls `Warnings::default()` (a test in
//! `tests/it/warnings.rs` checks).

use indexmap::IndexSet;
use std::fmt;
use std::path::Path;
use std::sync::Arc;

/// A place in a file the user wrote; line and column are 1-based.
///
/// The path is shared: the locations of one file's items (a stack's
/// 200,000 locked parameters at scale) point at one copy of it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Location {
    pub file: Arc<Path>,
    pub line: Option<usize>,
    pub column: Option<usize>,
}

impl Location {
    pub fn file(file: &Path) -> Self {
        Location {
            file: Arc::from(file),
            line: None,
            column: None,
        }
    }

    pub fn at(file: &Path, line: usize, column: usize) -> Self {
        Location {
            file: Arc::from(file),
            line: Some(line),
            column: Some(column),
        }
    }
}

impl Location {
    /// Line `line` of `file`, sharing its path.
    pub fn line_of(file: &Arc<Path>, line: usize) -> Self {
        Location {
            file: Arc::clone(file),
            line: Some(line),
            column: None,
        }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
            if let Some(column) = self.column {
                write!(f, ":{column}")?;
            }
        }
        Ok(())
    }
}

/// Who wrote the file a key was read from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Origin {
    /// A file of the user's own stack: the stack file, its parameters
    /// files, a `fromStack` parent in the same repository, an elaborated
    /// file.
    #[default]
    Own,
    /// A component manifest, or a `fromStack` parent in another
    /// repository: usually written by someone else.
    Foreign,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Warning {
    pub location: Option<Location>,
    pub message: String,
    /// An unknown key within a typo of a known one: whether it stops a
    /// command is [`crate::typos::is_refused`]'s decision.
    pub near_typo: bool,
    /// Who wrote the file of a near typo (see [`crate::typos`]).
    pub origin: Origin,
    /// What the warning is about: its hint when it stops a command, and
    /// how `hub validate` picks out the ones it reports after elaborating.
    pub topic: Topic,
}

/// What a warning is about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum Topic {
    /// Anything else, unknown keys included.
    #[default]
    General,
    /// A stack parameter set in a file that nothing reads (see
    /// `hub_elaborate`'s `unread`), with or without a read name it may
    /// stand for.
    UnreadParameter,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.location {
            Some(location) => write!(f, "{location}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// The collector warnings are reported into: in the order they were first
/// raised, each once.
#[derive(Debug, Default)]
pub struct Warnings {
    seen: IndexSet<Warning>,
}

impl Warnings {
    /// An empty collector, whose warnings its maker hands on (see the
    /// module documentation).
    pub fn new() -> Self {
        Warnings {
            seen: IndexSet::new(),
        }
    }

    /// A collector whose warnings are dropped, for work done again whose
    /// warnings were reported the first time (the same file read again to
    /// locate an error, a plan made again): the caller says where in a
    /// comment.
    pub fn already_reported() -> Self {
        Warnings::new()
    }

    pub fn warn(&mut self, location: Option<Location>, message: impl Into<String>) {
        self.push(Warning {
            location,
            message: message.into(),
            near_typo: false,
            origin: Default::default(),
            topic: Topic::General,
        });
    }

    /// An unknown key that looks like a typo of a known key.
    pub fn warn_near_typo(&mut self, location: Option<Location>, message: impl Into<String>) {
        self.push(Warning {
            location,
            message: message.into(),
            near_typo: true,
            origin: Default::default(),
            topic: Topic::General,
        });
    }

    /// Adds a warning, its message masked ([`crate::masked`]): warnings
    /// reach the terminal, the state, reports and comments.
    pub fn push(&mut self, mut warning: Warning) {
        warning.message = crate::masked::string(warning.message);
        self.seen.insert(warning);
    }

    /// Removes the near typos, in the order they were raised.
    pub fn take_near_typos(&mut self) -> Vec<Warning> {
        self.take_near_typos_where(|_| true)
    }

    /// Removes the near typos for which `refused` holds, in the order they
    /// were raised.
    pub fn take_near_typos_where(&mut self, refused: impl Fn(&Warning) -> bool) -> Vec<Warning> {
        let (typos, rest): (IndexSet<Warning>, IndexSet<Warning>) = std::mem::take(&mut self.seen)
            .into_iter()
            .partition(|w| w.near_typo && refused(w));
        self.seen = rest;
        typos.into_iter().collect()
    }

    /// The warnings, in order, taken out of the sink.
    pub fn into_warnings(self) -> impl Iterator<Item = Warning> {
        self.seen.into_iter()
    }

    /// Adds the warnings of another sink, keeping their order.
    pub fn append(&mut self, other: Warnings) {
        self.seen.extend(other.seen);
    }

    pub fn iter(&self) -> impl Iterator<Item = &Warning> {
        self.seen.iter()
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

/// `--debug`: process-wide, like the stderr its traces go to.
static DEBUG: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Turns the `--debug` traces on or off for the whole process.
pub fn set_debug(on: bool) {
    DEBUG.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// One `--debug` trace line on stderr; nothing without `--debug`.
pub fn debug(line: impl FnOnce() -> String) {
    if DEBUG.load(std::sync::atomic::Ordering::Relaxed) {
        crate::console::err_line(&format!("debug: {}", line()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_typos_are_taken_out_in_order() {
        let mut warnings = Warnings::default();
        warnings.warn(None, "plain");
        warnings.warn_near_typo(None, "first typo");
        warnings.warn_near_typo(None, "second typo");
        let typos: Vec<String> = warnings
            .take_near_typos()
            .into_iter()
            .map(|w| w.message)
            .collect();
        assert_eq!(typos, ["first typo", "second typo"]);
        let rest: Vec<&str> = warnings.iter().map(|w| w.message.as_str()).collect();
        assert_eq!(rest, ["plain"]);
        assert!(warnings.take_near_typos().is_empty());
    }
}
