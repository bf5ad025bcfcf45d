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
/// (`hub_view::graph::Format`, which knows nothing of clap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GraphFormat {
    #[default]
    Dot,
    Mermaid,
}

/// Each format turns into the workflows' twin, variant for variant.
macro_rules! twin {
    ($name:ident { $($variant:ident),* $(,)? }) => {
        impl From<$name> for hub_workflow::format::$name {
            fn from(format: $name) -> Self {
                match format {
                    $($name::$variant => Self::$variant),*
                }
            }
        }
    };
}

twin!(OutputFormat {
    Text,
    Json,
    Markdown
});
twin!(CheckFormat { Text, Markdown });
twin!(ParamsFormat { Yaml, Json });
twin!(GraphFormat { Dot, Mermaid });

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
            let view = hub_view::graph::Format::parse(name.as_deref().unwrap_or(""));
            let twin: hub_workflow::format::GraphFormat = (*format).into();
            assert_eq!(view, Some(twin.into()));
        }
    }
}
