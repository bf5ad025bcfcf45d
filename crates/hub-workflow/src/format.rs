//! The values of the `--format` flags: each workflow matches on a type,
//! never on the flag's text. The command line parses them into its own
//! twins (with clap's `ValueEnum`) and converts them into these.

/// `hub plan --format` and `hub policy test --format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
    /// A pull-request comment: secrets always masked.
    Markdown,
}

/// `hub check --format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CheckFormat {
    #[default]
    Text,
    /// An issue's body.
    Markdown,
}

/// `hub params --format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ParamsFormat {
    #[default]
    Yaml,
    Json,
}

/// `hub graph --format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum GraphFormat {
    #[default]
    Dot,
    Mermaid,
}

impl From<GraphFormat> for hub_view::graph::Format {
    fn from(format: GraphFormat) -> Self {
        match format {
            GraphFormat::Dot => hub_view::graph::Format::Dot,
            GraphFormat::Mermaid => hub_view::graph::Format::Mermaid,
        }
    }
}
