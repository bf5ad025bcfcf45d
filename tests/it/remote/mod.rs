//! State on object storage, against a real S3-compatible server (moto)
//! and a real Azure Blob Storage emulator (Azurite).

pub(crate) mod azurite;
pub(crate) mod server;

mod azure;
mod conditional;
mod runs;
mod shared_values;
