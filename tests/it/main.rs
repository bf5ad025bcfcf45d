//! One integration-test binary; one module per area. Every test runs the
//! real `hub` binary on real files.

mod common;
mod elaborate_cli;
