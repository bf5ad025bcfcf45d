//! One component's process.
//!
//! * [`env`](mod@env) — the environment a component runs in;
//!   [`otp`] — one-time values handed to it.
//! * [`templates`] — the templates rendered before it runs, with the
//!   [`gotemplate`] engine for `kind: go` and [`mustache`] for `_mustache`.
//! * [`process`] — running it: signals, prefixed and masked output;
//!   [`interrupt`] — SIGINT and SIGTERM counted while components run;
//!   [`spawn`] — starting it at a cost independent of hub's size;
//!   [`capture`] — the `Outputs:` it prints; [`kept`] — the bounded part
//!   of its stdout hub keeps in memory; [`planned`] — the outputs its plan
//!   step says it will produce. Where its lines go and where each
//!   run's part of its log file begins are in `hub_plan::outcome`, which
//!   the views read too.

pub mod capture;
pub mod interrupt;
pub mod kept;
pub(crate) mod mustache;
pub mod otp;
pub mod planned;
pub mod process;
pub(crate) mod secret_lines;
pub(crate) mod spawn;
pub mod templates;
