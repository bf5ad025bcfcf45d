//! One component's process.
//!
//! * [`env`](mod@env) — the environment a component runs in;
//!   [`otp`] — one-time values handed to it.
//! * [`templates`] — the templates rendered before it runs.
//! * [`process`] — spawning, signals, prefixed and masked output;
//!   [`capture`] — the `Outputs:` it prints; [`kept`] — the bounded part
//!   of its stdout hub keeps in memory.

pub mod capture;
pub mod env;
pub mod kept;
pub mod otp;
pub mod process;
pub mod templates;
