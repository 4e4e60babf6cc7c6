//! The suites that stop, freeze or kill processes, each on a PRIVATE cluster of its own
//! (`integration_tests::private_stack`, one at a time), plus the soak and the Managed Instances
//! test, which load the machine: a binary of their own, so the shared-stack suites never run
//! beside them.

// Only the launcher and the ingest helpers serve these suites; the rest of the harness is
// there for the shared-stack binary.
#[allow(dead_code, unused_imports)]
#[path = "../support/mod.rs"]
mod support;

/// A `[suite]` figure line, written to stderr past the test harness's capture (as
/// `integration_tests::progress` does) so that `make test` prints the suite's figures.
macro_rules! suite {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

mod cluster_safety;
mod durability;
mod ingest_disruptive;
mod managed_instances;
mod pool_disruptive;
mod reads;
mod reliability;
mod write_disruptive;
mod write_load;
