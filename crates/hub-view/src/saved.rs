//! Saved plans (`plan --out`, `deploy --plan`): the format and its
//! staleness check live with the plan ([`crate::plan::saved`]).

pub use crate::plan::saved::*;
