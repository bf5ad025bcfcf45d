//! Integration tests: validate.
