//! One component's process.
//!
//! * [`env`](mod@env) — the environment a component runs in;
//!   [`otp`] — one-time values handed to it.
//! * [`templates`] — the templates rendered before it runs.
//! * [`process`] — spawning, signals, prefixed and masked output;
//!   [`capture`] — the `Outputs:` it prints.

pub mod capture;
pub mod env;
pub mod otp;
pub mod process;
pub mod templates;
