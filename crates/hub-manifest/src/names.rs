//! Component names are names, not paths: `STATE.logs/NAME.log` and every
//! other per-component path is built from one, so a name with `/` (or one
//! that is `..`) would reach outside the folder meant for it. Names are
//! checked where they enter: stacks, states, command-line arguments.

/// Why a name cannot be a component's name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Problem {
    Empty,
    Dots,
    Slash,
    Backslash,
    Control,
}

impl Problem {
    fn text(self) -> &'static str {
        match self {
            Problem::Empty => "it is empty",
            Problem::Dots => "`.` and `..` name folders",
            Problem::Slash => "it holds `/`",
            Problem::Backslash => "it holds `\\`",
            Problem::Control => "it holds a NUL or another control character",
        }
    }
}

/// A component name that is refused, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{}` cannot be a component name: {}; a name may not hold `/`, `\\` or control characters, nor be `.` or `..`", name.escape_debug(), problem.text())]
pub struct BadComponentName {
    pub name: String,
    pub problem: Problem,
}

/// `name` as a component name: refused when it is empty, `.` or `..`, or
/// holds `/`, `\`, NUL or another control character.
pub fn check_component_name(name: &str) -> Result<(), BadComponentName> {
    let problem = match name {
        "" => Some(Problem::Empty),
        "." | ".." => Some(Problem::Dots),
        _ if name.contains('/') => Some(Problem::Slash),
        _ if name.contains('\\') => Some(Problem::Backslash),
        _ if name.chars().any(char::is_control) => Some(Problem::Control),
        _ => None,
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
            ("", Problem::Empty),
            (".", Problem::Dots),
            ("..", Problem::Dots),
            ("../../escaped", Problem::Slash),
            ("a/b", Problem::Slash),
            ("a\\b", Problem::Backslash),
            ("a\0b", Problem::Control),
            ("a\nb", Problem::Control),
            ("a\u{1b}[31m", Problem::Control),
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
            "app", "kube-dns", "a.b", "...", ".hidden", "x_1", "é", "a b",
        ] {
            assert_eq!(check_component_name(name), Ok(()), "{name}");
        }
    }
}
