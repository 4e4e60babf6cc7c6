//! Limits of the read routes, read from the configuration map (`gateway.rest.lookup.*`,
//! `gateway.rest.prefix-lookup.*`, `gateway.rest.scan.*` and `gateway.rest.read.*`, dotted or
//! environment form). An unknown key under either
//! namespace is an error, so a typo cannot silently keep a default. Also owns the checks of a
//! request against them, which need no schema: key count (413) and key bytes (413).

use std::collections::BTreeMap;
use std::time::Duration;

use gateway_core::GatewayError;
use gateway_core::wire::Row;

use gateway_core::settings::{self, Slot};

pub use gateway_core::settings::keys::lookup::{
    LOOKUP_MAX_CONCURRENT_KEY, LOOKUP_MAX_KEY_BYTES_KEY, LOOKUP_MAX_KEYS_KEY,
    LOOKUP_MAX_RESPONSE_BYTES_KEY, PREFIX_MAX_PREFIXES_KEY, PREFIX_MAX_ROWS_KEY,
    READ_KEEP_SCANNERS_FOR_KEY, READ_KEPT_SCANNERS_KEY, READ_MAX_RECORDS_KEY, READ_MAX_WAIT_KEY,
    SCAN_MAX_ROWS_KEY,
};

/// Default keys per request (as the Fluss Gateway design): one fluss-rs lookup batch.
pub const DEFAULT_LOOKUP_MAX_KEYS: usize = 128;
/// Default key bytes per request: 1 MiB.
pub const DEFAULT_LOOKUP_MAX_KEY_BYTES: usize = 1024 * 1024;
/// Default concurrent lookup requests, as for writes.
pub const DEFAULT_LOOKUP_MAX_CONCURRENT: usize = 64;
/// Default answer size: 4 MiB. A synchronous Lambda response may carry 6 MB, and API Gateway's
/// envelope holds the body as an escaped JSON string (every `"` becomes `\"`), so a third is
/// left for the envelope and the escaping; an answer over the Lambda limit never arrives at all.
pub const DEFAULT_LOOKUP_MAX_RESPONSE_BYTES: usize = 4 * 1024 * 1024;
/// Default prefixes per request.
pub const DEFAULT_PREFIX_MAX_PREFIXES: usize = 16;
/// Default rows per prefix.
pub const DEFAULT_PREFIX_MAX_ROWS: usize = 1000;
/// Default rows of one bounded scan.
pub const DEFAULT_SCAN_MAX_ROWS: usize = 1000;

/// Default records of one log read.
pub const DEFAULT_READ_MAX_RECORDS: usize = 100_000;
/// Default longest long poll of a log read.
pub const DEFAULT_READ_MAX_WAIT: Duration = Duration::from_secs(20);
/// Default log scanners kept between reads: a few consumers per container (Lambda serves one
/// request at a time), each holding up to a fetch (1 MiB per bucket) it has not answered yet.
pub const DEFAULT_READ_KEPT_SCANNERS: usize = 4;
/// Default time a kept scanner waits for its consumer's next read.
pub const DEFAULT_READ_KEEP_SCANNERS_FOR: Duration = Duration::from_secs(10);

const NAMESPACES: [&str; 4] = [
    "gateway.rest.lookup.",
    "gateway.rest.prefix-lookup.",
    "gateway.rest.scan.",
    "gateway.rest.read.",
];

/// Limits of `POST …/records/lookup` and `POST …/records/prefix-lookup`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupLimits {
    /// More keys → 413 `limit_exceeded`.
    pub max_keys: usize,
    /// More JSON bytes of keys (or prefixes) in one request → 413 `limit_exceeded`.
    pub max_key_bytes: usize,
    /// Lookup requests in flight beyond this → 429 `resource_exhausted`.
    pub max_concurrent: usize,
    /// An answer larger than this as JSON → 413 `limit_exceeded` (instead of a response the
    /// Lambda runtime cannot deliver).
    pub max_response_bytes: usize,
    /// More prefixes → 413 `limit_exceeded`.
    pub max_prefixes: usize,
    /// Rows returned per prefix at most (and the default of the request's
    /// `max_rows_per_prefix`); more matching rows set `truncated`.
    pub max_rows_per_prefix: usize,
    /// Rows one bounded scan returns at most (and its default `limit`).
    pub max_scan_rows: usize,
    /// Records one log read returns at most (and its default `max_records`).
    pub max_read_records: usize,
    /// The longest a log read waits for a first record.
    pub max_read_wait: Duration,
    /// Log scanners kept between a consumer's reads.
    pub kept_scanners: usize,
    /// How long a kept scanner waits for the next read (zero keeps none).
    pub keep_scanners_for: Duration,
}

impl Default for LookupLimits {
    fn default() -> Self {
        LookupLimits {
            max_keys: DEFAULT_LOOKUP_MAX_KEYS,
            max_key_bytes: DEFAULT_LOOKUP_MAX_KEY_BYTES,
            max_concurrent: DEFAULT_LOOKUP_MAX_CONCURRENT,
            max_response_bytes: DEFAULT_LOOKUP_MAX_RESPONSE_BYTES,
            max_prefixes: DEFAULT_PREFIX_MAX_PREFIXES,
            max_rows_per_prefix: DEFAULT_PREFIX_MAX_ROWS,
            max_scan_rows: DEFAULT_SCAN_MAX_ROWS,
            max_read_records: DEFAULT_READ_MAX_RECORDS,
            max_read_wait: DEFAULT_READ_MAX_WAIT,
            kept_scanners: DEFAULT_READ_KEPT_SCANNERS,
            keep_scanners_for: DEFAULT_READ_KEEP_SCANNERS_FOR,
        }
    }
}

impl LookupLimits {
    /// Reads the limits from `map`; every problem is reported at once, by key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut l = LookupLimits::default();
        settings::read(
            map,
            &NAMESPACES,
            &mut [
                (LOOKUP_MAX_KEYS_KEY, Slot::Count(&mut l.max_keys)),
                (LOOKUP_MAX_KEY_BYTES_KEY, Slot::Bytes(&mut l.max_key_bytes)),
                (
                    LOOKUP_MAX_CONCURRENT_KEY,
                    Slot::Count(&mut l.max_concurrent),
                ),
                (
                    LOOKUP_MAX_RESPONSE_BYTES_KEY,
                    Slot::Bytes(&mut l.max_response_bytes),
                ),
                (PREFIX_MAX_PREFIXES_KEY, Slot::Count(&mut l.max_prefixes)),
                (PREFIX_MAX_ROWS_KEY, Slot::Count(&mut l.max_rows_per_prefix)),
                (SCAN_MAX_ROWS_KEY, Slot::Count(&mut l.max_scan_rows)),
                (READ_MAX_RECORDS_KEY, Slot::Count(&mut l.max_read_records)),
                (
                    READ_MAX_WAIT_KEY,
                    Slot::Duration {
                        slot: &mut l.max_read_wait,
                        allow_zero: true,
                    },
                ),
                (READ_KEPT_SCANNERS_KEY, Slot::Count(&mut l.kept_scanners)),
                (
                    READ_KEEP_SCANNERS_FOR_KEY,
                    Slot::Duration {
                        slot: &mut l.keep_scanners_for,
                        allow_zero: true,
                    },
                ),
            ],
            "lookup",
        )?;
        Ok(l)
    }

    /// 400 for no keys, 413 for more than `max` keys or more than `max_key_bytes` of them.
    /// `what` names the list (`keys`, `prefixes`).
    pub(crate) fn ensure_keys(
        &self,
        keys: &[Row],
        what: &str,
        max: usize,
    ) -> Result<(), GatewayError> {
        if keys.is_empty() {
            return Err(GatewayError::invalid(format!(
                "`{what}` must hold at least one entry"
            )));
        }
        if keys.len() > max {
            return Err(GatewayError::limit(format!(
                "the request has {} {what}; at most {max} are allowed",
                keys.len()
            )));
        }
        let bytes = key_bytes(keys);
        if bytes > self.max_key_bytes {
            return Err(GatewayError::limit(format!(
                "the {what} of the request take {bytes} bytes as JSON; at most {} are allowed",
                self.max_key_bytes
            )));
        }
        Ok(())
    }

    /// The rows per prefix a request gets: its own `max_rows_per_prefix`, which must be between
    /// 1 and the configured maximum (400 otherwise, naming the bound), or the maximum.
    pub(crate) fn rows_per_prefix(&self, requested: Option<u32>) -> Result<usize, GatewayError> {
        bounded_count("max_rows_per_prefix", requested, self.max_rows_per_prefix)
    }

    /// The rows a scan gets: its own `limit`, between 1 and the configured maximum (400
    /// otherwise, naming the bound), or the maximum.
    pub(crate) fn scan_limit(&self, requested: Option<u32>) -> Result<usize, GatewayError> {
        bounded_count("limit", requested, self.max_scan_rows)
    }

    /// What one log read may return and wait: its own `max_records` (1 to the configured
    /// maximum), `max_bytes` (1 to the answer limit) and `wait_ms` (0 to the configured longest
    /// wait), each 400 naming the bound when out of range, the maximum when absent (no wait).
    pub(crate) fn read_bounds(
        &self,
        max_records: Option<u32>,
        max_bytes: Option<u64>,
        wait_ms: Option<u64>,
    ) -> Result<ReadBounds, GatewayError> {
        let records = bounded_count("max_records", max_records, self.max_read_records)?;
        let bytes = match max_bytes {
            None => self.max_response_bytes,
            Some(b) => match usize::try_from(b) {
                Ok(b) if (1..=self.max_response_bytes).contains(&b) => b,
                _ => {
                    return Err(GatewayError::invalid(format!(
                        "`max_bytes` must be between 1 and {} (`{LOOKUP_MAX_RESPONSE_BYTES_KEY}`)",
                        self.max_response_bytes
                    )));
                }
            },
        };
        let wait = Duration::from_millis(wait_ms.unwrap_or(0));
        if wait > self.max_read_wait {
            return Err(GatewayError::invalid(format!(
                "`wait_ms` must be between 0 and {} (`{READ_MAX_WAIT_KEY}`)",
                self.max_read_wait.as_millis()
            )));
        }
        Ok(ReadBounds {
            records,
            bytes,
            wait,
        })
    }
}

impl LookupLimits {
    /// `body` as JSON, serialised once: 413 `limit_exceeded` when it would take more than
    /// `max_response_bytes`, the writing stopped at the first byte past the limit, so an
    /// oversize answer is never serialised whole. (It was counted first and serialised again
    /// for the response: two passes over every row of every answer.)
    pub(crate) fn json_body<T: serde::Serialize>(&self, body: &T) -> Result<Vec<u8>, GatewayError> {
        let mut out = Capped {
            bytes: Vec::with_capacity(INITIAL_ANSWER_BYTES.min(self.max_response_bytes)),
            max: self.max_response_bytes,
            over: false,
        };
        match serde_json::to_writer(&mut out, body) {
            Ok(()) => Ok(out.bytes),
            Err(_) if out.over => Err(GatewayError::limit(format!(
                "the answer would take more than {} bytes as JSON \
                 (`{LOOKUP_MAX_RESPONSE_BYTES_KEY}`); ask for fewer keys or rows per request",
                self.max_response_bytes
            ))),
            Err(e) => Err(GatewayError::internal(format!(
                "the answer could not be rendered as JSON: {e}"
            ))),
        }
    }
}

/// First allocation of an answer's text; it grows by doubling past that.
const INITIAL_ANSWER_BYTES: usize = 4096;

/// A buffer that refuses to grow past `max` bytes.
struct Capped {
    bytes: Vec<u8>,
    max: usize,
    over: bool,
}

impl std::io::Write for Capped {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if self.bytes.len().saturating_add(buf.len()) > self.max {
            self.over = true;
            return Err(std::io::Error::other("answer limit"));
        }
        self.bytes.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What one log read may return and how long it may wait, after the checks of
/// [`LookupLimits::read_bounds`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ReadBounds {
    /// Most records.
    pub records: usize,
    /// Most bytes of the records as JSON.
    pub bytes: usize,
    /// The longest wait for a first record.
    pub wait: Duration,
}

/// `requested` when it is between 1 and `max` (400 naming `field` and the bound otherwise), or
/// `max` when absent.
fn bounded_count(field: &str, requested: Option<u32>, max: usize) -> Result<usize, GatewayError> {
    let Some(n) = requested else {
        return Ok(max);
    };
    match usize::try_from(n) {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        _ => Err(GatewayError::invalid(format!(
            "`{field}` must be between 1 and {max}"
        ))),
    }
}

/// The size of `keys` as compact JSON (what a caller sent, give or take whitespace), counted
/// without building the text.
pub(crate) fn key_bytes(keys: &[Row]) -> usize {
    let mut counter = ByteCounter(0);
    for key in keys {
        // Writing to a counter cannot fail; a failure would only under-count this key.
        let _ = serde_json::to_writer(&mut counter, key);
    }
    counter.0
}

struct ByteCounter(usize);

impl std::io::Write for ByteCounter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 = self.0.saturating_add(buf.len());
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::ErrorCode;
    use serde_json::json;

    use gateway_core::settings::map_of as map;

    fn rows(v: serde_json::Value) -> Vec<Row> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn defaults_and_both_key_forms() {
        assert_eq!(
            LookupLimits::from_map(&map(&[("FLUSS_GATEWAY__REST__WRITE__MAX_ROWS", "5")])).unwrap(),
            LookupLimits::default()
        );
        let l = LookupLimits::from_map(&map(&[
            ("FLUSS_GATEWAY__REST__LOOKUP__MAX_KEYS", "5"),
            ("gateway.rest.lookup.max-key-bytes", "2kb"),
            ("FLUSS_GATEWAY__REST__LOOKUP__MAX_CONCURRENT_REQUESTS", "3"),
            ("gateway.rest.lookup.max-response-bytes", "1mb"),
            ("FLUSS_GATEWAY__REST__PREFIX_LOOKUP__MAX_PREFIXES", "4"),
            ("gateway.rest.prefix-lookup.max-rows-per-prefix", "7"),
            ("FLUSS_GATEWAY__REST__SCAN__MAX_ROWS", "9"),
            ("gateway.rest.read.max-records", "11"),
            ("FLUSS_GATEWAY__REST__READ__MAX_WAIT", "2s"),
            ("gateway.rest.read.kept-scanners", "2"),
            ("FLUSS_GATEWAY__REST__READ__KEEP_SCANNERS_FOR", "0"),
        ]))
        .unwrap();
        assert_eq!(
            l,
            LookupLimits {
                max_keys: 5,
                max_key_bytes: 2048,
                max_concurrent: 3,
                max_response_bytes: 1024 * 1024,
                max_prefixes: 4,
                max_rows_per_prefix: 7,
                max_scan_rows: 9,
                max_read_records: 11,
                max_read_wait: Duration::from_secs(2),
                kept_scanners: 2,
                keep_scanners_for: Duration::ZERO,
            }
        );
    }

    #[test]
    fn a_read_gets_its_own_bounds_within_the_configured_ones() {
        let l = LookupLimits {
            max_read_records: 100,
            max_response_bytes: 1000,
            max_read_wait: Duration::from_secs(2),
            ..LookupLimits::default()
        };
        let b = l.read_bounds(None, None, None).unwrap();
        assert_eq!((b.records, b.bytes, b.wait), (100, 1000, Duration::ZERO));
        let b = l.read_bounds(Some(5), Some(10), Some(2000)).unwrap();
        assert_eq!(
            (b.records, b.bytes, b.wait),
            (5, 10, Duration::from_secs(2))
        );
        for (records, bytes, wait, says) in [
            (
                Some(0),
                None,
                None,
                "`max_records` must be between 1 and 100",
            ),
            (Some(101), None, None, "`max_records`"),
            (
                None,
                Some(0),
                None,
                "`max_bytes` must be between 1 and 1000",
            ),
            (None, Some(u64::MAX), None, "`max_bytes`"),
            (
                None,
                None,
                Some(2001),
                "`wait_ms` must be between 0 and 2000",
            ),
        ] {
            let e = l.read_bounds(records, bytes, wait).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert!(e.message().contains(says), "{}", e.message());
        }
    }

    #[test]
    fn every_problem_is_reported_by_key_never_by_value() {
        let e = LookupLimits::from_map(&map(&[
            ("gateway.rest.lookup.max-keys", "0"),
            ("FLUSS_GATEWAY__REST__LOOKUP__MAX_KEYZ", "1"),
            ("gateway.rest.prefix-lookup.colour", "1"),
            ("FLUSS_GATEWAY__REST__PREFIX_LOOKUP__MAX_PREFIXES", "s3cret"),
        ]))
        .unwrap_err();
        let m = e.message();
        assert!(m.starts_with("invalid lookup configuration"), "{m}");
        assert!(
            m.contains("`gateway.rest.lookup.max-keys`: must be greater than 0"),
            "{m}"
        );
        assert!(
            m.contains("`FLUSS_GATEWAY__REST__LOOKUP__MAX_KEYZ`: unknown key"),
            "{m}"
        );
        assert!(
            m.contains("`gateway.rest.prefix-lookup.colour`: unknown key"),
            "{m}"
        );
        assert!(
            m.contains("`FLUSS_GATEWAY__REST__PREFIX_LOOKUP__MAX_PREFIXES`"),
            "{m}"
        );
        assert!(!m.contains("s3cret"), "{m}");
    }

    #[test]
    fn key_bytes_are_the_compact_json_size_of_the_keys() {
        let keys = rows(json!([{"id": 1}, {"id": "abc", "t": [1, 2]}]));
        let expected = r#"{"id":1}"#.len() + r#"{"id":"abc","t":[1,2]}"#.len();
        assert_eq!(key_bytes(&keys), expected);
        assert_eq!(key_bytes(&[]), 0);
    }

    #[test]
    fn key_count_and_bytes_are_checked_before_any_fluss_work() {
        let l = LookupLimits {
            max_key_bytes: 20,
            ..LookupLimits::default()
        };
        let e = l.ensure_keys(&[], "keys", 2).unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert!(e.message().contains("`keys`"), "{}", e.message());
        let three = rows(json!([{"a":1},{"a":2},{"a":3}]));
        let e = l.ensure_keys(&three, "keys", 2).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LimitExceeded);
        assert!(e.message().contains("at most 2"), "{}", e.message());
        let big = rows(json!([{"a":"0123456789012345678"}]));
        let e = l.ensure_keys(&big, "prefixes", 2).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LimitExceeded);
        assert!(e.message().contains("at most 20"), "{}", e.message());
        assert!(l.ensure_keys(&three[..2], "keys", 2).is_ok());
    }

    #[test]
    fn an_answer_over_the_response_limit_is_413_naming_the_key() {
        let l = LookupLimits {
            max_response_bytes: 100,
            ..LookupLimits::default()
        };
        let small = vec![json!({"row": "x".repeat(40)})];
        let text = l.json_body(&small).expect("fits");
        assert_eq!(text, serde_json::to_vec(&small).expect("json"));
        let big = vec![json!({"row": "x".repeat(40)}); 3];
        let e = l.json_body(&big).unwrap_err();
        assert_eq!(e.code(), ErrorCode::LimitExceeded);
        assert!(
            e.message().contains(LOOKUP_MAX_RESPONSE_BYTES_KEY),
            "{}",
            e.message()
        );
        const { assert!(DEFAULT_LOOKUP_MAX_RESPONSE_BYTES < 6_000_000 * 3 / 4) };
    }

    #[test]
    fn rows_per_prefix_defaults_to_the_maximum_and_is_bounded_by_it() {
        let l = LookupLimits {
            max_rows_per_prefix: 10,
            ..LookupLimits::default()
        };
        assert_eq!(l.rows_per_prefix(None), Ok(10));
        assert_eq!(l.rows_per_prefix(Some(3)), Ok(3));
        assert_eq!(l.rows_per_prefix(Some(10)), Ok(10));
        for bad in [0, 11] {
            let e = l.rows_per_prefix(Some(bad)).unwrap_err();
            assert_eq!(e.code(), ErrorCode::InvalidArgument);
            assert!(e.message().contains("between 1 and 10"), "{}", e.message());
        }
    }
}
