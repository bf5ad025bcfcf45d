//! One integration-test binary; one module per area. Every test runs the
//! real `hub` binary on real files.

mod bad_input;
mod capture;
mod clouds;
mod common;
mod conformance;
mod crash;
mod deploy;
mod elaborate_cli;
mod elaborate_spec;
mod elaborated_files;
mod explain;
mod graph;
mod help;
mod hooks;
mod incremental;
mod journal;
mod messages;
mod ordering;
mod parallel;
mod params_spec;
mod plan;
mod plan_review;
mod process;
mod remote;
mod safety;
mod selection;
mod shapes;
mod state;
mod state_drift;
mod state_layout;
mod templates;
mod typos;
mod validate;
