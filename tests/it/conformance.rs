//! Integration tests: conformance.
