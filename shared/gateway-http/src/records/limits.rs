//! Limits of the write route, read from the configuration map (`gateway.rest.write.*`, dotted or
//! environment form). Other keys are left to their owners; an unknown key under
//! `gateway.rest.write.` is an error, so a typo cannot silently keep a default.

use std::collections::BTreeMap;

use gateway_core::GatewayError;

use crate::middleware::DEFAULT_MAX_REQUEST_BYTES;
use gateway_core::settings::{self, Slot};

pub use gateway_core::settings::keys::write::{
    MAX_CONCURRENT_KEY, MAX_REQUEST_BYTES_KEY, MAX_ROWS_KEY,
};
/// Default max rows (as the Fluss Gateway).
pub const DEFAULT_MAX_ROWS: usize = 10_000;
/// Default body cap outside Lambda, as the Fluss Gateway's: the standalone server has no payload
/// limit in front of it. In Lambda (and under `cargo lambda watch`) the default is
/// [`DEFAULT_MAX_REQUEST_BYTES`], the synchronous payload limit no larger body passes.
pub const DEFAULT_STANDALONE_MAX_REQUEST_BYTES: usize = 32 * 1024 * 1024;
/// Default concurrent writes (as the Fluss Gateway); a Lambda container serves one at a time,
/// the standalone server many.
pub const DEFAULT_MAX_CONCURRENT: usize = 64;

const NAMESPACE: &str = "gateway.rest.write.";

/// Limits of `POST …/records`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteLimits {
    /// More entries → 413 `limit_exceeded`.
    pub max_rows: usize,
    /// A larger body → 413 `limit_exceeded` (default 6 MiB in Lambda, its payload limit; 32 MiB
    /// standalone).
    pub max_request_bytes: usize,
    /// Writes in flight beyond this → 429 `resource_exhausted`.
    pub max_concurrent: usize,
}

impl Default for WriteLimits {
    fn default() -> Self {
        WriteLimits {
            max_rows: DEFAULT_MAX_ROWS,
            max_request_bytes: DEFAULT_MAX_REQUEST_BYTES,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
        }
    }
}

impl WriteLimits {
    /// Reads the limits from `map`; every problem is reported at once, by key. The body cap's
    /// default depends on where the function runs ([`gateway_runtime::in_lambda`]).
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut limits = WriteLimits::default();
        if !gateway_runtime::in_lambda(map) {
            limits.max_request_bytes = DEFAULT_STANDALONE_MAX_REQUEST_BYTES;
        }
        settings::read(
            map,
            &[NAMESPACE],
            &mut [
                (MAX_ROWS_KEY, Slot::Count(&mut limits.max_rows)),
                (
                    MAX_REQUEST_BYTES_KEY,
                    Slot::Bytes(&mut limits.max_request_bytes),
                ),
                (MAX_CONCURRENT_KEY, Slot::Count(&mut limits.max_concurrent)),
            ],
            "write",
        )?;
        Ok(limits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use gateway_core::settings::map_of as map;

    #[test]
    fn defaults_and_both_key_forms() {
        assert_eq!(
            WriteLimits::from_map(&map(&[("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001")])).unwrap(),
            WriteLimits::default()
        );
        assert_eq!(
            WriteLimits::from_map(&map(&[("PATH", "/bin")]))
                .unwrap()
                .max_request_bytes,
            32 * 1024 * 1024,
            "standalone, as the Fluss Gateway"
        );
        let l = WriteLimits::from_map(&map(&[
            ("FLUSS_GATEWAY__REST__WRITE__MAX_ROWS", "5"),
            ("gateway.rest.write.max-request-bytes", "1mb"),
            ("FLUSS_GATEWAY__REST__WRITE__MAX_CONCURRENT_REQUESTS", "2"),
        ]))
        .unwrap();
        assert_eq!(
            l,
            WriteLimits {
                max_rows: 5,
                max_request_bytes: 1024 * 1024,
                max_concurrent: 2
            }
        );
    }

    #[test]
    fn every_problem_is_reported_by_key() {
        let e = WriteLimits::from_map(&map(&[
            ("gateway.rest.write.max-rows", "0"),
            ("FLUSS_GATEWAY__REST__WRITE__MAX_ROWZ", "1"),
            ("gateway.rest.write.max-concurrent-requests", "many"),
        ]))
        .unwrap_err();
        let m = e.message();
        assert!(
            m.contains("`gateway.rest.write.max-rows`: must be greater than 0"),
            "{m}"
        );
        assert!(
            m.contains("`FLUSS_GATEWAY__REST__WRITE__MAX_ROWZ`: unknown key"),
            "{m}"
        );
        assert!(
            m.contains("`gateway.rest.write.max-concurrent-requests`"),
            "{m}"
        );
    }
}
