//! The values of the `--format` flags, as the command line takes them:
//! each command matches on a type, never on the flag's text. The help
//! lists them as `[possible values: …]`; none has a doc comment, so that
//! `--help` shows them on the flag's line.

/// `hub plan --format` and `hub policy test --format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
    // A pull-request comment: secrets always masked.
    Markdown,
}

/// `hub check --format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum CheckFormat {
    #[default]
    Text,
    // An issue's body.
    Markdown,
}

/// `hub params --format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ParamsFormat {
    #[default]
    Yaml,
    Json,
}

/// `hub graph --format`: the graph view's formats
/// ([`hub_engine::view::graph::Format`], which knows nothing of clap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    #[default]
    Dot,
    Mermaid,
}

impl From<GraphFormat> for hub_engine::view::graph::Format {
    fn from(format: GraphFormat) -> Self {
        match format {
            GraphFormat::Dot => hub_engine::view::graph::Format::Dot,
            GraphFormat::Mermaid => hub_engine::view::graph::Format::Mermaid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Each format's value on the command line is the text the flag took
    /// before it was a type, and the default is the same.
    #[test]
    fn the_values_are_the_words_of_the_flags() {
        fn words<T: ValueEnum>() -> Vec<String> {
            T::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value())
                .map(|v| v.get_name().to_string())
                .collect()
        }
        assert_eq!(words::<OutputFormat>(), ["text", "json", "markdown"]);
        assert_eq!(words::<CheckFormat>(), ["text", "markdown"]);
        assert_eq!(words::<ParamsFormat>(), ["yaml", "json"]);
        assert_eq!(words::<GraphFormat>(), ["dot", "mermaid"]);
        for format in GraphFormat::value_variants() {
            let name = format.to_possible_value().map(|v| v.get_name().to_string());
            let view = hub_engine::view::graph::Format::parse(name.as_deref().unwrap_or(""));
            assert_eq!(view, Some((*format).into()));
        }
    }
}
