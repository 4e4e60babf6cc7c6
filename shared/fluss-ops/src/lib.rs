//! The operations the Fluss Lambda Gateway performs on Fluss, below every entry point: write a
//! batch with per-row outcomes, point and prefix lookups, bounded scans, catalog calls and cluster dynamic
//! configuration. Each takes a [`Call`] (who is calling,
//! as which Fluss identity, until when) and returns `Result<_, GatewayError>`.
//!
//! No HTTP and no Lambda event types here: the HTTP handlers of `gateway-http` and the event
//! handlers of an ingest function call the same operations, so a row written from an SQS record
//! follows exactly the path of a row written over HTTPS (decode first, truthful outcomes,
//! deadlines, one retry on a recreated table).
//!
//! Refuses: request parsing, admission (concurrency gates), response rendering and sizes, which
//! belong to the entry points.

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod built;
pub mod call;
pub mod catalog;
pub mod lookup;
pub mod otlp;
mod partitions;
pub mod read;
mod read_keep;
mod read_scanner;
mod read_sink;
pub mod scan;
mod table;
pub mod write;
mod write_acks;
mod write_arrow;
mod write_errors;

pub use call::{Call, Principal};
