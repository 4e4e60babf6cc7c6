//! The heart of the Fluss Lambda Gateway, free of I/O: the types on the wire, one error model and
//! the schema-aware JSON ⇄ Fluss row codec, compatible with the Apache Fluss Gateway 1.0.
//!
//! Everything here is pure and deterministic so it can be unit-, property- and fuzz-tested in
//! isolation; the crates that talk to Fluss (`fluss-pool`) and HTTP (`gateway-http`) build on it.

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod codec;
pub mod cursor;
pub mod error;
pub mod names;
pub mod otlp;
pub mod redact;
pub mod routes;
pub mod settings;
pub mod types;
pub mod wire;

pub use error::{ErrorCode, GatewayError};
