//! The action plan, made by the planning crate ([`hub_plan::plan`]), with
//! `hub plan`'s preparation ([`prepare`](hub_plan::plan::prepare)), and
//! re-exported here for the engine's own paths (`crate::plan::…`; a
//! transition, issue 40 item 1: the command line imports `hub_plan`).

pub use hub_plan::plan::*;
