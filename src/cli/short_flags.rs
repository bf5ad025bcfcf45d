//! One meaning per short flag across every command: the table of short
//! flags, made from the command line itself, and the check that a letter
//! names one long flag wherever it is listed. `docs/src/command-line.md`
//! holds the table; a test keeps it equal to what the binary accepts.

use clap::{Arg, Command};
use std::collections::BTreeMap;

/// Long names that mean one thing: `-c` selects components, one
/// (`--component`, explain, params, render) or several (`--components`).
const SAME_MEANING: &[(&str, &str)] = &[("component", "components")];

/// A short flag as one command has it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Short {
    pub letter: char,
    /// The long flag it stands for (`--offset`).
    pub long: String,
    /// `deploy`, `state list`; `hub` for a global flag.
    pub command: String,
    pub kind: Kind,
}

/// How a short flag is offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kind {
    /// Listed in `--help`: the letter's one meaning.
    Listed,
    /// The Hub CLI's letter for this command's flag: accepted, not listed.
    HubCli,
    /// A flag hidden on this command (`pipeline -n`): accepted, not listed.
    Unlisted,
    /// An old spelling of this project: accepted with a warning.
    Deprecated,
}

/// Every short flag of every command of `root`.
pub(crate) fn shorts(root: &Command) -> Vec<Short> {
    let mut found = Vec::new();
    walk(root, "hub", true, &mut found);
    found
}

fn walk(command: &Command, path: &str, root: bool, found: &mut Vec<Short>) {
    for arg in command.get_arguments() {
        if arg.is_global_set() && !root {
            continue;
        }
        found.extend(arg_shorts(arg, path));
    }
    for sub in command.get_subcommands() {
        let name = match root {
            true => sub.get_name().to_string(),
            false => format!("{path} {}", sub.get_name()),
        };
        walk(sub, &name, false, found);
    }
}

fn arg_shorts(arg: &Arg, command: &str) -> Vec<Short> {
    let make = |letter, long: &str, kind| Short {
        letter,
        long: long.to_string(),
        command: command.to_string(),
        kind,
    };
    let mut shorts = Vec::new();
    let long = arg.get_long().unwrap_or_default();
    if let Some(letter) = arg.get_short() {
        match (arg.is_hide_set(), deprecated_of(arg)) {
            (false, _) => shorts.push(make(letter, long, Kind::Listed)),
            (true, Some(flag)) => shorts.push(make(letter, &flag, Kind::Deprecated)),
            (true, None) => shorts.push(make(letter, long, Kind::Unlisted)),
        }
    }
    for letter in arg.get_short_and_visible_aliases().unwrap_or_default() {
        if Some(letter) != arg.get_short() {
            shorts.push(make(letter, long, Kind::Listed));
        }
    }
    for letter in all_short_aliases(arg) {
        shorts.push(make(letter, long, Kind::HubCli));
    }
    shorts
}

/// The hidden short aliases (`short_alias`): the visible ones are listed.
fn all_short_aliases(arg: &Arg) -> Vec<char> {
    let visible = arg.get_visible_short_aliases().unwrap_or_default();
    arg.get_all_short_aliases()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| !visible.contains(c))
        .collect()
}

/// `yaml` of a hidden arg whose help says "Deprecated spelling of --yaml".
fn deprecated_of(arg: &Arg) -> Option<String> {
    let help = arg.get_help()?.to_string();
    let rest = help.strip_prefix("Deprecated spelling of --")?;
    let flag = rest
        .split(|c: char| !c.is_alphanumeric() && c != '-')
        .next()?;
    Some(flag.to_string())
}

fn meaning(long: &str) -> &str {
    SAME_MEANING
        .iter()
        .find(|(alias, _)| *alias == long)
        .map_or(long, |(_, meaning)| meaning)
}

/// The letters listed with more than one meaning: `-y: --dry (deploy),
/// --yes (unlock)`.
pub(crate) fn clashes(shorts: &[Short]) -> Vec<String> {
    let mut by_letter: BTreeMap<char, BTreeMap<&str, Vec<&str>>> = BTreeMap::new();
    for short in shorts.iter().filter(|s| s.kind == Kind::Listed) {
        by_letter
            .entry(short.letter)
            .or_default()
            .entry(meaning(&short.long))
            .or_default()
            .push(&short.command);
    }
    by_letter
        .into_iter()
        .filter(|(_, meanings)| meanings.len() > 1)
        .map(|(letter, meanings)| {
            let listed: Vec<String> = meanings
                .iter()
                .map(|(long, commands)| format!("--{long} ({})", commands.join(", ")))
                .collect();
            format!("-{letter}: {}", listed.join(", "))
        })
        .collect()
}

/// The markdown table of `shorts`: one row per letter and meaning, the
/// commands that have it, and how.
pub(crate) fn table(shorts: &[Short]) -> String {
    let mut rows: BTreeMap<(char, Kind, String), Vec<String>> = BTreeMap::new();
    for short in shorts {
        let key = (short.letter, short.kind, short.long.clone());
        rows.entry(key).or_default().push(short.command.clone());
    }
    let mut text = String::from("| Flag | Means | Commands | How |\n|---|---|---|---|\n");
    for ((letter, kind, long), commands) in rows {
        let how = match kind {
            Kind::Listed => "listed",
            Kind::HubCli => "accepted, not listed (the Hub CLI's letter)",
            Kind::Unlisted => "accepted, not listed",
            Kind::Deprecated => "deprecated: warns",
        };
        let commands = match commands.as_slice() {
            [only] if only == "hub" => "every command".to_string(),
            _ => commands.join(", "),
        };
        text.push_str(&format!(
            "| `-{letter}` | `--{long}` | {commands} | {how} |\n"
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{clashes, shorts, table, Kind};
    use crate::cli::Cli;
    use clap::CommandFactory;

    const BEGIN: &str = "<!-- short-flags:begin -->\n";
    const END: &str = "<!-- short-flags:end -->";

    /// No letter is listed with two meanings, on any two commands.
    #[test]
    fn one_meaning_per_short_flag() {
        let found = shorts(&Cli::command());
        assert!(found.iter().any(|s| s.kind == Kind::HubCli));
        let clashes = clashes(&found);
        assert!(
            clashes.is_empty(),
            "short flags with two meanings:\n{}",
            clashes.join("\n")
        );
    }

    /// Every short flag stands for a long one, and a deprecated spelling
    /// names it (its help says `Deprecated spelling of --FLAG`).
    #[test]
    fn every_short_flag_has_a_long_one() {
        for short in shorts(&Cli::command()) {
            assert!(!short.long.is_empty(), "{short:?} has no long flag");
        }
    }

    /// The guide's table is the command line's.
    #[test]
    fn the_guide_lists_every_short_flag() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/src/command-line.md");
        let page = std::fs::read_to_string(path).expect("docs/src/command-line.md");
        let start = page.find(BEGIN).expect("the begin marker") + BEGIN.len();
        let end = page.find(END).expect("the end marker");
        let expected = table(&shorts(&Cli::command()));
        assert!(
            page[start..end] == expected,
            "docs/src/command-line.md's table is not the command line's; it should be:\n{expected}"
        );
    }

    /// Two commands that give one letter two meanings are found.
    #[test]
    fn a_clash_is_found() {
        let command = clap::Command::new("hub")
            .subcommand(
                clap::Command::new("deploy").arg(clap::Arg::new("dry").short('y').long("dry")),
            )
            .subcommand(
                clap::Command::new("unlock").arg(clap::Arg::new("yes").short('y').long("yes")),
            );
        assert_eq!(
            clashes(&shorts(&command)),
            ["-y: --dry (deploy), --yes (unlock)"]
        );
    }
}
