//! What the registry accepts as a change id, a commit and an author; how
//! a change id becomes a folder name; and how text read from the registry
//! is shown so that it cannot forge a line.
//!
//! The registry's own documents (`apply-lock.json`, `apply-waiting.json`)
//! live at its top; the records of change `ID` live under `changes/`, in a
//! folder named after the id ([`folder_name`]), so no id, whatever it is,
//! names one of the registry's own files. Registries written before
//! (`ID/000001.json` at the top) are still read: see [`super::Registry`].

use super::field::Field;
use super::ChangeError;

/// The longest id, author and shown value.
const MAX: usize = 100;

fn refuse(field: Field, given: &str, value: &str, reason: &'static str) -> ChangeError {
    ChangeError::BadValue {
        field,
        given: given.to_string(),
        shown: inert_bounded(value),
        reason,
    }
}

/// A change id, as given to `given` (`--change`, `ID`): letters, digits,
/// `.`, `_`, `-` (not first), at most 100 characters.
pub fn check_id_from(id: &str, given: &str) -> Result<(), ChangeError> {
    let bad = |reason| refuse(Field::Change, given, id, reason);
    if id.is_empty() || id.len() > MAX {
        return Err(bad("it must have 1 to 100 characters"));
    }
    if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        return Err(bad("it may hold only letters, digits, `.`, `_` and `-`"));
    }
    if id.starts_with(['.', '-']) {
        return Err(bad("it must not start with `.` or `-`"));
    }
    Ok(())
}

/// [`check_id_from`] for an id given to `--change`.
pub fn check_id(id: &str) -> Result<(), ChangeError> {
    check_id_from(id, "--change")
}

/// A commit id: 7 to 64 hexadecimal digits (an abbreviated or full SHA-1
/// or SHA-256).
pub fn check_sha(sha: &str, given: &str) -> Result<(), ChangeError> {
    if !(7..=64).contains(&sha.len()) {
        return Err(refuse(
            Field::Sha,
            given,
            sha,
            "it must have 7 to 64 hexadecimal digits",
        ));
    }
    if !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(refuse(
            Field::Sha,
            given,
            sha,
            "it may hold only hexadecimal digits",
        ));
    }
    Ok(())
}

/// A login as GitHub and GitLab allow them (and user names): letters,
/// digits, `-`, `_`, `.`, not first `-` or `.`, at most 100 characters; a
/// GitHub App's ends in `[bot]`.
pub fn check_author(author: &str, given: &str) -> Result<(), ChangeError> {
    let bad = |reason| refuse(Field::Author, given, author, reason);
    let name = author.strip_suffix("[bot]").unwrap_or(author);
    if name.is_empty() || author.len() > MAX {
        return Err(bad("it must have 1 to 100 characters"));
    }
    if !name
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    {
        return Err(bad(
            "it may hold only letters, digits, `-`, `_` and `.` (and end in `[bot]`)",
        ));
    }
    if name.starts_with(['-', '.']) {
        return Err(bad("it must not start with `-` or `.`"));
    }
    Ok(())
}

/// The folder under `changes/` of a (checked) id: lower-case letters,
/// digits, `.` and `-` as they are; an upper-case letter `X` as `_x` and
/// `_` as `__`, so that ids differing in case keep apart on file systems
/// that ignore case.
pub(super) fn folder_name(id: &str) -> String {
    let mut name = String::with_capacity(id.len() + 4);
    for c in id.chars() {
        match c {
            '_' => name.push_str("__"),
            c if c.is_ascii_uppercase() => {
                name.push('_');
                name.push(c.to_ascii_lowercase());
            }
            c => name.push(c),
        }
    }
    name
}

/// The id of a folder under `changes/`; `None` for a name
/// [`folder_name`] does not make.
pub(super) fn id_of_folder(name: &str) -> Option<String> {
    let mut id = String::with_capacity(name.len());
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        match c {
            '_' => match chars.next()? {
                '_' => id.push('_'),
                c if c.is_ascii_lowercase() => id.push(c.to_ascii_uppercase()),
                _ => return None,
            },
            c if c.is_ascii_uppercase() => return None,
            c => id.push(c),
        }
    }
    (check_id(&id).is_ok() && folder_name(&id) == name).then_some(id)
}

/// Whether a character would break or disguise a line where it is shown:
/// control characters (newline, carriage return, escape, …), the Unicode
/// line and paragraph separators, and the marks that reorder text.
fn unsafe_char(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{2028}' | '\u{2029}' | '\u{200e}' | '\u{200f}' | '\u{061c}'
        )
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c)
}

/// `text` as it may be shown on one line: every character of
/// [`unsafe_char`] written as an escape (`\n`, `\u{1b}`), a backslash
/// doubled, so that text read from the registry (written by an older
/// version, or by hand) cannot forge a line of `hub change show`.
pub fn inert(text: &str) -> String {
    if !text.chars().any(|c| unsafe_char(c) || c == '\\') {
        return text.to_string();
    }
    let mut shown = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            '\\' => shown.push_str("\\\\"),
            '\n' => shown.push_str("\\n"),
            '\r' => shown.push_str("\\r"),
            '\t' => shown.push_str("\\t"),
            c if unsafe_char(c) => shown.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => shown.push(c),
        }
    }
    shown
}

/// [`inert`], cut to about 100 characters: a refused value is shown, not
/// repeated whole.
fn inert_bounded(text: &str) -> String {
    let cut: String = text.chars().take(MAX).collect();
    let mut shown = inert(&cut);
    if cut.len() < text.len() {
        shown.push('…');
    }
    shown
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_pr_numbers_and_branch_like_names_pass_and_nothing_else() {
        for good in ["42", "feature-x", "Fix_1.2", "a", &"x".repeat(100)] {
            check_id(good).unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in [
            "",
            "../x",
            "a/b",
            ".hidden",
            "-rf",
            "1\n2",
            "x y",
            "é",
            &"x".repeat(101),
        ] {
            let error = check_id(bad).expect_err(bad);
            let text = error.to_string();
            assert!(text.contains("`--change`"), "{text}");
            assert!(!text.contains('\n'), "{text:?}");
        }
    }

    #[test]
    fn a_sha_is_hex_and_an_author_a_login() {
        check_sha("abc1234", "--sha").expect("short");
        check_sha(&"a".repeat(64), "--sha").expect("sha-256");
        for bad in ["abc123", "abc1234\n", "xyz1234", &"a".repeat(65)] {
            check_sha(bad, "--sha").expect_err(bad);
        }
        for good in ["alice", "dependabot[bot]", "john.doe", "a-b_c", "runner"] {
            check_author(good, "--author").unwrap_or_else(|e| panic!("{good}: {e}"));
        }
        for bad in ["", "a\nb", "a b", "[bot]", "-x", "a`b", "@team"] {
            check_author(bad, "--author").expect_err(bad);
        }
    }

    #[test]
    fn folder_names_keep_ids_apart_and_read_back() {
        let ids = [
            "42",
            "PR-1",
            "pr-1",
            "a_b",
            "A_b",
            "apply-lock.json",
            "changes",
        ];
        let names: Vec<String> = ids.iter().map(|id| folder_name(id)).collect();
        for (id, name) in ids.iter().zip(&names) {
            assert_eq!(id_of_folder(name).as_deref(), Some(*id), "{name}");
            let lower = name.to_ascii_lowercase();
            assert_eq!(lower, *name, "a folder name has no upper case: {name}");
        }
        let mut unique = names.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "{names:?}");
        for foreign in ["_", "a_", "_1", "A", ".x", "a/b"] {
            assert_eq!(id_of_folder(foreign), None, "{foreign}");
        }
    }

    #[test]
    fn shown_text_cannot_break_a_line() {
        assert_eq!(inert("plain text"), "plain text");
        assert_eq!(inert("a\nb\rc"), "a\\nb\\rc");
        assert_eq!(inert("\u{1b}[31m"), "\\u{1b}[31m");
        assert_eq!(inert("x\u{2028}y\u{202e}"), "x\\u{2028}y\\u{202e}");
        assert_eq!(inert("back\\slash"), "back\\\\slash");
    }
}
