//! The action plan, made by the planning crate ([`hub_plan::plan`]), with
//! `hub plan`'s preparation ([`prepare`](hub_plan::plan::prepare)), and
//! re-exported here (a transition, issue 40 item 1).

pub use hub_plan::plan::*;
