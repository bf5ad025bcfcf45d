//! A `hub …` command in a pull-request comment: its first line,
//! `hub plan [-c a,b]`, `hub apply` or `hub unlock`.

/// What a comment asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommentVerb {
    Plan,
    Apply,
    Unlock,
}

impl CommentVerb {
    pub fn as_str(self) -> &'static str {
        match self {
            CommentVerb::Plan => "plan",
            CommentVerb::Apply => "apply",
            CommentVerb::Unlock => "unlock",
        }
    }
}

/// A comment's command: its verb and, for a plan, the `-c` components
/// (empty: all).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub verb: CommentVerb,
    pub components: Vec<String>,
}

const KNOWN: &str = "hub understands `hub plan [-c a,b]`, `hub apply` and `hub unlock`";

/// The command of a comment whose first line starts with the word `hub`:
/// `None` for any other comment, an error (the reason, for the answer)
/// for a `hub` line that is not a command hub knows. The reason never
/// quotes the comment: the answer is posted by the bot, and whatever the
/// commenter wrote would be said in its name.
pub fn parse_command(body: &str) -> Option<Result<Command, String>> {
    let first = body.lines().next().unwrap_or_default();
    let mut words = first.split_whitespace();
    if words.next() != Some("hub") {
        return None;
    }
    Some(parse_words(words.collect()))
}

fn parse_words(words: Vec<&str>) -> Result<Command, String> {
    let (verb, rest) = match words.split_first() {
        Some((&"plan", rest)) => (CommentVerb::Plan, rest),
        Some((&"apply", rest)) => (CommentVerb::Apply, rest),
        Some((&"unlock", rest)) => (CommentVerb::Unlock, rest),
        Some(_) => {
            return Err(format!(
                "the comment's `hub` line names no command hub knows; {KNOWN}"
            ))
        }
        None => {
            return Err(format!(
                "the comment's `hub` line names no command; {KNOWN}"
            ))
        }
    };
    let mut components = Vec::new();
    let mut rest = rest.iter();
    while let Some(word) = rest.next() {
        let list = match *word {
            "-c" | "--components" => *rest
                .next()
                .ok_or_else(|| format!("`-c` needs a list of components; {KNOWN}"))?,
            other => match other
                .strip_prefix("--components=")
                .or_else(|| other.strip_prefix("-c="))
                .or_else(|| other.strip_prefix("-c").filter(|l| !l.is_empty()))
            {
                Some(list) => list,
                None => {
                    return Err(format!(
                        "`hub {}` is given a flag hub does not know; {KNOWN}",
                        verb.as_str()
                    ))
                }
            },
        };
        for entry in list.split(',').filter(|e| !e.is_empty()) {
            hub_manifest::names::selection_arg(entry).map_err(|_| {
                "a name of `-c` cannot be a component name: a name may not hold `/`, `\\` or control characters, nor be `.` or `..`".to_string()
            })?;
            components.push(entry.to_string());
        }
    }
    match verb {
        CommentVerb::Apply if !components.is_empty() => Err(String::from(
            "`hub apply` applies the change's latest plan, whatever it selected, and takes no `-c`: plan a selection with `hub plan -c a,b`, then `hub apply`"
        )),
        CommentVerb::Unlock if !components.is_empty() => Err(String::from(
            "`hub unlock` releases the change's apply lock on the whole stack and takes no `-c`"
        )),
        _ => Ok(Command { verb, components }),
    }
}
