//! Integration tests: elaborate_spec.
