//! The error of parsing or executing a template: a line and a message.

/// A parse or execution error at a line of the template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoError {
    pub line: usize,
    pub message: String,
    /// The missing key's path (`.svc.undeclared`) when that is the error.
    pub key: Option<String>,
}

impl std::fmt::Display for GoError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for GoError {}

impl GoError {
    pub fn new(line: usize, message: impl Into<String>) -> Self {
        GoError {
            line,
            message: message.into(),
            key: None,
        }
    }

    pub(crate) fn key(mut self, key: String) -> Self {
        self.key = Some(key);
        self
    }
}
