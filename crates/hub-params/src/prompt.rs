//! Asking for `kind: user` parameters that still have no value.
//!
//! The engine talks to a [`Prompter`]; the command line passes a
//! [`TerminalPrompter`] only when [`interactive`] says both stdin and stderr
//! are terminals, and tests pass their own answers.

use std::io::IsTerminal;

/// What to ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptRequest {
    pub qualified_name: String,
    pub brief: String,
    /// Shown in brackets; an empty answer falls through to it.
    pub default: Option<String>,
    /// Hide the typed text.
    pub secret: bool,
}

impl PromptRequest {
    /// `Enter value for <brief> (<qname>) [<default>]`.
    pub fn text(&self) -> String {
        let mut text = String::from("Enter value for ");
        if self.brief.is_empty() {
            text.push_str(&self.qualified_name);
        } else {
            text.push_str(&format!("{} ({})", self.brief, self.qualified_name));
        }
        if let Some(default) = &self.default {
            text.push_str(&format!(" [{default}]"));
        }
        text
    }
}

pub trait Prompter {
    /// The whole line typed, without its newline; `Ok(None)` for an empty
    /// line, which moves on to the default.
    fn ask(&mut self, request: &PromptRequest) -> Result<Option<String>, String>;
}

/// Hub may prompt only when a person can answer: stdin and stderr are
/// both terminals.
pub fn interactive() -> bool {
    std::io::stdin().is_terminal() && std::io::stderr().is_terminal()
}

/// Prompts on the terminal with `dialoguer` (on stderr), hiding the
/// answer for secret-looking names.
#[derive(Debug, Default)]
pub struct TerminalPrompter;

impl Prompter for TerminalPrompter {
    fn ask(&mut self, request: &PromptRequest) -> Result<Option<String>, String> {
        let answer = if request.secret {
            dialoguer::Password::new()
                .with_prompt(request.text())
                .allow_empty_password(true)
                .interact()
        } else {
            dialoguer::Input::<String>::new()
                .with_prompt(request.text())
                .allow_empty(true)
                .interact_text()
        };
        match answer {
            Ok(line) if line.is_empty() => Ok(None),
            Ok(line) => Ok(Some(line)),
            Err(error) => {
                // An interrupted prompt may leave the cursor hidden.
                let _ = dialoguer::console::Term::stderr().show_cursor();
                Err(error.to_string())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_text() {
        let mut request = PromptRequest {
            qualified_name: "p2".into(),
            brief: "Second".into(),
            default: Some("d".into()),
            secret: false,
        };
        assert_eq!(request.text(), "Enter value for Second (p2) [d]");
        request.brief.clear();
        request.default = None;
        assert_eq!(request.text(), "Enter value for p2");
    }
}
