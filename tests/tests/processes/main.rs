//! The function binaries as processes (`cargo build --workspace --bins`): exit codes, SIGTERM,
//! and the standalone server's connection limits, whose timing is what they check; a binary of
//! their own, so the shared-stack suites do not compete for the two cores.

mod process;
mod server_limits;
