//! The commands about hub itself, which read the command line's own
//! definitions: `hub version`, `hub completions`, `hub man`.

mod about;
pub mod man;

pub use about::{completions, version};
