//! State on object storage, against a real S3-compatible server.

mod server;

mod conditional;
mod runs;
