//! What the integration tests of this crate share: where the checkout under test is.

// Each test file is a crate of its own and uses a part of this.
#![allow(dead_code, clippy::panic)]

use std::path::PathBuf;

/// The repository root of the checkout under test. `cargo test` sets `CARGO_MANIFEST_DIR` for
/// the process it starts, and that is preferred over the compile-time value: cargo hashes
/// workspace crates independently of where the checkout lives, so a test binary built in
/// another clone sharing the target directory (CI's, say) may be reused here with that
/// clone's path baked in (make test on 9ec9f20 read `/check/work/main/docs/architecture.md`).
pub fn repo() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
        .join("../..")
}

/// The text of `relative` (to the repository root); a missing file fails the test naming it.
pub fn read_doc(relative: &str) -> String {
    let path = repo().join(relative);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}
