//! The function binaries as processes (`cargo build --workspace --bins`): exit codes, SIGTERM,
//! the standalone server's connection limits, whose timing is what they check, its HTTPS and
//! its Prometheus `/metrics`; a binary of
//! their own, so the shared-stack suites do not compete for the two cores.

mod process;
mod prometheus;
mod server_limits;
mod tls;
