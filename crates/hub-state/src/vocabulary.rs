//! The words a state file uses for statuses: of a component entry, of the
//! whole stack, of an operation and its phases, and of a component's last
//! check; and [`Recorded`], a status field as a file holds it.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;

/// A closed list of status words, each with its text in a state file.
pub trait Vocabulary: Copy + Sized {
    fn as_str(self) -> &'static str;
    /// `None` for text outside the vocabulary.
    fn parse(text: &str) -> Option<Self>;
}

macro_rules! vocabulary {
    ($(#[$doc:meta])* $name:ident { $($variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant),+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// `None` for text outside the vocabulary.
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl Vocabulary for $name {
            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }

            fn parse(text: &str) -> Option<Self> {
                $name::parse(text)
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

vocabulary!(
    /// Status of a component entry.
    ComponentStatus {
        Deploying => "deploying",
        Deployed => "deployed",
        Undeploying => "undeploying",
        Undeployed => "undeployed",
        Error => "error",
    }
);

vocabulary!(
    /// Status of the whole stack.
    StackStatus {
        Deploying => "deploying",
        Undeploying => "undeploying",
        Deployed => "deployed",
        Undeployed => "undeployed",
        Incomplete => "incomplete",
    }
);

vocabulary!(
    /// Status of an operation and of each of its phases.
    OperationStatus {
        InProgress => "in-progress",
        Success => "success",
        Error => "error",
    }
);

vocabulary!(
    /// What a component's last check (`hub check`) found.
    HealthStatus {
        Healthy => "healthy",
        Drifted => "drifted",
        Failed => "failed",
        Unverifiable => "unverifiable",
    }
);

/// A status field as a state file holds it: empty (never set), a word of
/// the vocabulary `T`, or text outside it (written by another tool or
/// another version), kept as read so that a state round-trips byte for
/// byte. Read leniently (a number or boolean as its text, `null` as
/// empty) and written as its text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub enum Recorded<T> {
    #[default]
    Empty,
    Known(T),
    Other(String),
}

impl<T: Vocabulary> Recorded<T> {
    /// The status `text` stands for.
    pub fn from_text(text: String) -> Self {
        if text.is_empty() {
            Recorded::Empty
        } else if let Some(word) = T::parse(&text) {
            Recorded::Known(word)
        } else {
            Recorded::Other(text)
        }
    }

    /// The text written to the file.
    pub fn as_str(&self) -> &str {
        match self {
            Recorded::Empty => "",
            Recorded::Known(word) => word.as_str(),
            Recorded::Other(text) => text,
        }
    }

    pub fn is_empty(&self) -> bool {
        matches!(self, Recorded::Empty)
    }

    /// The word, when the text is one of the vocabulary.
    pub fn known(&self) -> Option<T> {
        match self {
            Recorded::Known(word) => Some(*word),
            _ => None,
        }
    }
}

impl<T: Vocabulary> From<T> for Recorded<T> {
    fn from(word: T) -> Self {
        Recorded::Known(word)
    }
}

impl<T: Vocabulary> From<String> for Recorded<T> {
    fn from(text: String) -> Self {
        Recorded::from_text(text)
    }
}

impl<T: Vocabulary> From<&str> for Recorded<T> {
    fn from(text: &str) -> Self {
        Recorded::from_text(text.to_string())
    }
}

impl<T: Vocabulary> PartialEq<str> for Recorded<T> {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl<T: Vocabulary> PartialEq<&str> for Recorded<T> {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl<T: Vocabulary> fmt::Display for Recorded<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl<T: Vocabulary> Serialize for Recorded<T> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de, T: Vocabulary> Deserialize<'de> for Recorded<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        crate::model::de::text(deserializer).map(Recorded::from_text)
    }
}

#[cfg(test)]
mod tests;
