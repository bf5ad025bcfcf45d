//! An elaborated file older than a file it was made from: the run would use
//! the values of the last `hub elaborate`, not the edited ones.

use super::stack::Stack;
use hub_manifest::diag::{Location, Warnings};
use hub_manifest::provenance::recorded_command;
use std::path::PathBuf;

/// How many changed files the warning names.
const NAMED: usize = 3;

/// Warns when a source of the stack's elaborated file (recorded by `hub
/// elaborate`) was modified after the file was written. One `stat` per
/// source; a stack elaborated in memory is never stale.
pub fn warn_if_stale(stack: &Stack, warnings: &mut Warnings) {
    let (Some(file), Some(source)) = (&stack.file, stack.source()) else {
        return;
    };
    let Ok(written) = std::fs::metadata(file).and_then(|m| m.modified()) else {
        return;
    };
    let changed = stack.elaborated.provenance.changed_since(written);
    if changed.is_empty() {
        return;
    }
    let command = recorded_command(&source.text).map(|args| shell_line(&args));
    warnings.warn(Some(Location::file(file)), message(&changed, command));
}

fn message(changed: &[PathBuf], command: Option<String>) -> String {
    let mut names: Vec<String> = changed
        .iter()
        .take(NAMED)
        .map(|p| format!("`{}`", p.display()))
        .collect();
    if changed.len() > NAMED {
        names.push(format!("{} more", changed.len() - NAMED));
    }
    let again = match command {
        Some(command) => format!("run `{command}`"),
        None => "run `hub elaborate` again with the arguments it was made with".into(),
    };
    format!(
        "the elaborated file is older than {} it was made from, so this run uses the values \
         it was elaborated with; to take the changes, {again}",
        names.join(", ")
    )
}

/// `args` as one line a POSIX shell reads back into the same arguments.
fn shell_line(args: &[String]) -> String {
    args.iter()
        .map(|a| shell_word(a))
        .collect::<Vec<_>>()
        .join(" ")
}

fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "_-./=,:@%+".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        let args = ["hub", "elaborate", "/a b/hub.yaml", "it's", "", "ENV=dev"].map(String::from);
        assert_eq!(
            shell_line(&args),
            r"hub elaborate '/a b/hub.yaml' 'it'\''s' '' ENV=dev"
        );
    }

    #[test]
    fn names_at_most_three_files() {
        let changed: Vec<PathBuf> = ["a", "b", "c", "d", "e"].map(PathBuf::from).into();
        let text = message(&changed, None);
        assert!(
            text.contains("`a`, `b`, `c`, 2 more it was made from"),
            "{text}"
        );
        assert!(text.ends_with("run `hub elaborate` again with the arguments it was made with"));
        let text = message(&changed[..1], Some("hub elaborate x".into()));
        assert!(text.contains("older than `a` it was made from"), "{text}");
        assert!(text.ends_with("run `hub elaborate x`"), "{text}");
    }
}
