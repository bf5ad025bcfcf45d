//! What a refused value of the registry was meant to be.

/// Which value was refused, and what it must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// A change id: `--change ID`, or `hub change … ID`.
    Change,
    /// `--sha`: a commit id.
    Sha,
    /// `--author` (or the variable it defaults to): a login.
    Author,
}

impl Field {
    /// What the value must be, for messages.
    pub fn what(self) -> &'static str {
        match self {
            Field::Change => "a change id",
            Field::Sha => "a commit id",
            Field::Author => "a login",
        }
    }

    /// How to give a good one.
    pub fn fix(self) -> &'static str {
        match self {
            Field::Change => "give the pull or merge request's number (`--change 42`), or a name of 1 to 100 letters, digits, `.`, `_` and `-` that does not start with `.` or `-`",
            Field::Sha => "give the commit the change is at, 7 to 64 hexadecimal digits: `--sha \"$(git rev-parse HEAD)\"`",
            Field::Author => "give the login of who plans or applies (1 to 100 letters, digits, `-`, `_` and `.`, a bot's ending in `[bot]`): `--author \"$GITHUB_ACTOR\"`",
        }
    }
}
