//! Component names are names, not paths: `STATE.logs/NAME.log` and every
//! other per-component path is built from one, so a name with `/` (or one
//! that is `..`) would reach outside the folder meant for it. Names are
//! checked where they enter: stacks, states, command-line arguments.
//!
//! Names also reach generated pipelines (job names, shell lines, runner
//! tags), where a line break starts a new YAML line (U+2028 and U+2029 are
//! line breaks to YAML 1.1 readers), `${{` is a GitHub expression, and
//! `,` splits the lists of `-c`: none of them is part of a name
//! ([`check_name`]).

/// Why a name cannot be a component's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameProblem {
    Empty,
    Dots,
    Slash,
    Backslash,
    Control,
    /// U+2028 or U+2029: line breaks to YAML 1.1 readers.
    LineSeparator,
    /// `${{`: an expression to GitHub Actions.
    Expression,
    /// `,`: it separates the names of `-c`.
    Comma,
}

impl NameProblem {
    fn text(self) -> &'static str {
        match self {
            NameProblem::Empty => "it is empty",
            NameProblem::Dots => "`.` and `..` name folders",
            NameProblem::Slash => "it holds `/`",
            NameProblem::Backslash => "it holds `\\`",
            NameProblem::Control => "it holds a NUL or another control character",
            NameProblem::LineSeparator => "it holds a line separator (U+2028 or U+2029)",
            NameProblem::Expression => "it holds `${{`, which GitHub Actions evaluates",
            NameProblem::Comma => "it holds `,`, which separates the names of `-c`",
        }
    }
}

impl std::fmt::Display for NameProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.text())
    }
}

/// Why `text` cannot be a name that reaches a generated pipeline (a
/// stack's `meta.name`, a runner tag, an environment variable's name):
/// it holds a control character (CR, LF, NUL, U+0085, ...), a line
/// separator (U+2028, U+2029) or `${{`.
pub fn check_name(text: &str) -> Result<(), NameProblem> {
    if text.chars().any(char::is_control) {
        return Err(NameProblem::Control);
    }
    if text.contains(['\u{2028}', '\u{2029}']) {
        return Err(NameProblem::LineSeparator);
    }
    if text.contains("${{") {
        return Err(NameProblem::Expression);
    }
    Ok(())
}

/// A component name that is refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` cannot be a component name: {}; a name may not hold `/`, `\\`, `,`, `${{{{`, control characters or line separators, nor be `.` or `..`", name.escape_debug(), problem.text())]
pub struct BadComponentName {
    pub name: String,
    pub problem: NameProblem,
}

/// `name` as a component name: refused when it is empty, `.` or `..`, or
/// holds `/`, `\`, `,`, or what [`check_name`] refuses.
pub fn check_component_name(name: &str) -> Result<(), BadComponentName> {
    let problem = match name {
        "" => Some(NameProblem::Empty),
        "." | ".." => Some(NameProblem::Dots),
        _ if name.contains('/') => Some(NameProblem::Slash),
        _ if name.contains('\\') => Some(NameProblem::Backslash),
        _ if name.contains(',') => Some(NameProblem::Comma),
        _ => check_name(name).err(),
    };
    match problem {
        Some(problem) => Err(BadComponentName {
            name: name.to_string(),
            problem,
        }),
        None => Ok(()),
    }
}

/// For command-line arguments naming a component (`clap` value parser).
pub fn component_arg(value: &str) -> Result<String, BadComponentName> {
    check_component_name(value).map(|()| value.to_string())
}

/// For `-c` of a run (`clap` value parser): a component name, with `+`
/// before it (what depends on it) or after it (what it depends on).
pub fn selection_arg(value: &str) -> Result<String, BadComponentName> {
    let name = value.strip_prefix('+').unwrap_or(value);
    let name = name.strip_suffix('+').unwrap_or(name);
    check_component_name(name).map(|()| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_and_controls_are_not_names() {
        for (name, problem) in [
            ("", NameProblem::Empty),
            (".", NameProblem::Dots),
            ("..", NameProblem::Dots),
            ("../../escaped", NameProblem::Slash),
            ("a/b", NameProblem::Slash),
            ("a\\b", NameProblem::Backslash),
            ("a\0b", NameProblem::Control),
            ("a\nb", NameProblem::Control),
            ("a\u{1b}[31m", NameProblem::Control),
            ("a\rb", NameProblem::Control),
            ("a\u{85}b", NameProblem::Control),
            ("a\u{2028}b", NameProblem::LineSeparator),
            ("a\u{2029}b", NameProblem::LineSeparator),
            ("z${{ secrets.X }}", NameProblem::Expression),
            ("a,b", NameProblem::Comma),
        ] {
            let error = check_component_name(name).expect_err(name);
            assert_eq!(error.problem, problem, "{name:?}");
        }
        assert!(check_component_name("a\nb")
            .unwrap_err()
            .to_string()
            .starts_with("`a\\nb` cannot"));
    }

    #[test]
    fn ordinary_names_pass() {
        for name in [
            "app", "kube-dns", "a.b", "...", ".hidden", "x_1", "é", "a b", "$x", "{{ y }}",
        ] {
            assert_eq!(check_component_name(name), Ok(()), "{name}");
        }
    }

    #[test]
    fn names_of_pipelines_hold_no_line_break_nor_expression() {
        for (name, problem) in [
            ("shop\rinjected:", NameProblem::Control),
            ("a\nb", NameProblem::Control),
            ("a\u{2028}b", NameProblem::LineSeparator),
            ("${{ secrets.X }}", NameProblem::Expression),
        ] {
            assert_eq!(check_name(name), Err(problem), "{name:?}");
        }
        for name in ["shop", "gpu,large", "a b", "$HOME", "{{x}}", "é"] {
            assert_eq!(check_name(name), Ok(()), "{name}");
        }
    }
}
