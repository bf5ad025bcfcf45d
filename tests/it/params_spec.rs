//! Integration tests: params_spec.
