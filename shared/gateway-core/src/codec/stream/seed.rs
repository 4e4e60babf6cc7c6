//! What the seeds of `body`, `row` and `value` share: giving up to the reference path
//! ([`give_up`]) and matching a key by its bytes ([`same_bytes`]). A leaf: the seeds depend on
//! it, never on the parent module that runs them.

use serde::de;

/// The streaming path gives up: the reference path decides. No message: it is never shown.
pub(super) fn give_up<E: de::Error>() -> E {
    E::custom("not for the streaming path")
}

/// `a == b` for the short keys of a write body, without a call to `memcmp` per comparison
/// (a tenth of the decoder's time went to it on 10-column rows).
#[inline]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() > 32 {
        return a == b;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}
