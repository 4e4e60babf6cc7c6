//! The heart of the Fluss Lambda Gateway, free of I/O: the error model shared by every route.
//!
//! Everything here is pure and deterministic so it can be unit-, property- and fuzz-tested in
//! isolation; the crates that talk to Fluss (`fluss-pool`) and HTTP (`gateway-http`) build on it.
#![warn(missing_docs)]

pub mod error;

pub use error::{ErrorCode, GatewayError};
