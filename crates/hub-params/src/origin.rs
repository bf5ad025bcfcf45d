//! Where a parameter's value came from, as `hub params` and the lock
//! report it.

/// Where a parameter's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The `value:` of its declaration.
    Value,
    /// `fromEnv: VAR`, from `-e` when `overridden`, else from the process
    /// environment.
    FromEnv { variable: String, overridden: bool },
    /// `fromFile: PATH`, the file's content.
    FromFile { path: String },
    /// Typed at the terminal.
    Prompt,
    /// The declaration's `default:`.
    Default,
    /// `empty: allow` with nothing else: the empty string.
    EmptyAllowed,
    /// The stack parameters of the state file.
    State,
    /// Computed by hub (`hub.deploymentId`, `hub.stackName`,
    /// `hub.componentName`, `hub.provides`).
    Implicit,
    /// A stack parameter without a value.
    Unset,
    /// A stack parameter or an output found by a component parameter.
    Found { key: String },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Value => f.write_str("value"),
            Origin::FromEnv {
                variable,
                overridden: true,
            } => write!(f, "fromEnv {variable} (-e)"),
            Origin::FromEnv {
                variable,
                overridden: false,
            } => write!(f, "fromEnv {variable} (environment)"),
            Origin::FromFile { path } => write!(f, "fromFile {path}"),
            Origin::Prompt => f.write_str("prompt"),
            Origin::Default => f.write_str("default"),
            Origin::EmptyAllowed => f.write_str("empty: allow"),
            Origin::State => f.write_str("state"),
            Origin::Implicit => f.write_str("implicit"),
            Origin::Unset => f.write_str("unset"),
            Origin::Found { key } => write!(f, "{key}"),
        }
    }
}
