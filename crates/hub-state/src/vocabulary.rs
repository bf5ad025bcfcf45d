//! The words a state file uses for statuses: of a component entry, of the
//! whole stack, of an operation and its phases, and of a component's last
//! check.

use std::fmt;

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
