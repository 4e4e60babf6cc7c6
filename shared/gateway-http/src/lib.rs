//! HTTP serving layer of the Fluss Lambda Gateway.
//!
//! Every Lambda function of the gateway is an axum [`Router`](axum::Router) built from the route
//! families in this crate, served by [`run`]: through the Lambda runtime API when the process runs
//! inside Lambda (or under `cargo lambda watch`), or as a plain HTTP server otherwise. One code path
//! is therefore exercised locally, in tests and in production.
//!
//! The gateway keeps no state between requests other than warm connections and caches: any
//! container may serve any request.
#![warn(missing_docs)]

mod health;
mod serve;

pub use health::health_routes;
pub use serve::{LISTEN_ENV, ServeError, run, serve};
