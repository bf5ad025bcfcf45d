//! The action plan, made by the planning crate ([`hub_plan::plan`]) and
//! re-exported here (a transition, issue 40 item 1), with `hub plan`'s
//! preparation ([`prepare`]), which still runs the engine's checks and
//! reads before its first component.

pub use hub_plan::plan::*;
pub mod prepare;
#[cfg(test)]
mod tests;
