//! `POST …/tables/{table}/records/lookup`, `POST …/records/prefix-lookup`,
//! `POST …/records/scan` and `POST …/records/read`: key and key-prefix reads, bounded scans and
//! log reads with cursors, served directly by the
//! Fluss client (an extension: the Fluss Gateway 1.0 has no read path; lookup shapes from its
//! FIP-49 design). One function serves every read: they share the `read` scope, the pool's
//! connections and the concurrency gate.
//!
//! The handlers run the cheap checks first (query string, content type, `Accept`, body shape,
//! key count and bytes, then the cluster and the concurrency gate), then call the lookup operations of
//! [`fluss_ops::lookup`]. A missing key is `found: false`, never a 404; a log table is 501
//! `unsupported`; the deadline answers 504 `timeout`; an answer over the response limit is 413.

mod arrow;
pub mod limits;
mod read;

use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use fluss::metadata::TablePath;
use fluss_ops::read::{KeptScanners, ReadSpec, Start};
use fluss_pool::Pool;
use gateway_core::GatewayError;
use gateway_core::routes::{LOOKUP, PREFIX_LOOKUP, READ, SCAN};
use gateway_core::wire::{
    LookupRequest, LookupResponse, PrefixLookupRequest, PrefixLookupResponse, ReadRequest,
    ScanRequest, ScanResponse,
};
use tokio::sync::OwnedSemaphorePermit;

use crate::admission::{Gate, admit};
use crate::checks::{ARROW_STREAM, JSON};
use crate::error::ApiError;
use crate::extract::{Input, ParseBody, Routed};
use crate::middleware::elapsed_ms;
use crate::table_route::TableParams;
use arrow::ArrowRecords;
pub use limits::LookupLimits;
use read::{Begin, JsonRecords, begin};

/// Everything the lookup routes share across requests; built once per container.
#[derive(Clone)]
pub struct LookupState {
    pool: Pool,
    limits: LookupLimits,
    /// Lookup requests in flight (both routes); a full gate answers 429 instead of queueing
    /// behind the deadline.
    gate: Gate,
    /// Log scanners kept between a consumer's reads.
    kept_scanners: KeptScanners,
}

impl LookupState {
    /// State over `pool`, with the routes' `limits`.
    pub fn new(pool: Pool, limits: LookupLimits) -> Self {
        LookupState {
            pool,
            limits,
            gate: Gate::new(limits.max_concurrent, "lookup"),
            kept_scanners: KeptScanners::new(limits.kept_scanners, limits.keep_scanners_for),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> LookupLimits {
        self.limits
    }

    /// What every read route runs before Fluss, in order: query string, content type and
    /// `Accept`, the names, the body's shape, the request's own limits (`check`, which gives
    /// what the operation needs of them), then admission (the cluster, the gate). The request's
    /// clock starts here, before the first check.
    fn admit<R: ParseBody, T>(
        &self,
        params: &TableParams,
        input: Input,
        check: impl FnOnce(&R, LookupLimits) -> Result<T, GatewayError>,
    ) -> Result<Admitted<R, T>, GatewayError> {
        self.admit_answering(params, input, &[JSON], check)
    }

    /// As [`LookupState::admit`] for a route that can answer in any of `offered`.
    fn admit_answering<R: ParseBody, T>(
        &self,
        params: &TableParams,
        input: Input,
        offered: &[&'static str],
        check: impl FnOnce(&R, LookupLimits) -> Result<T, GatewayError>,
    ) -> Result<Admitted<R, T>, GatewayError> {
        let started = Instant::now();
        let answer = input.ensure_json_post_answering(offered)?;
        let path = params.path()?;
        let req: R = input.json()?;
        let checked = check(&req, self.limits)?;
        let permit = admit(&self.pool, &self.gate, &params.cluster)?;
        Ok(Admitted {
            started,
            path,
            req,
            checked,
            answer,
            _permit: permit,
        })
    }
}

/// A lookup request past every check and admitted; its permit is held as long as it is.
struct Admitted<R, T> {
    started: Instant,
    path: TablePath,
    req: R,
    /// What the route's own check gave back.
    checked: T,
    /// The media type of the answer.
    answer: &'static str,
    _permit: OwnedSemaphorePermit,
}

/// The lookup route family. Wrap it with [`crate::build_router`] to serve it.
pub fn lookup_routes(state: LookupState) -> Router {
    Router::new()
        .route(LOOKUP, post(lookup_records))
        .route(PREFIX_LOOKUP, post(prefix_lookup_records))
        .route(SCAN, post(scan_records))
        .route(READ, post(read_records))
        .with_state(state)
}

async fn lookup_records(
    State(state): State<LookupState>,
    Routed(ctx, params, input): Routed<TableParams>,
) -> Result<Response, ApiError> {
    let offered = [JSON, ARROW_STREAM];
    let admitted =
        state.admit_answering(&params, input, &offered, |req: &LookupRequest, limits| {
            limits.ensure_keys(&req.keys, "keys", limits.max_keys)
        })?;
    let (path, req) = (&admitted.path, &admitted.req);
    let keys = fluss_ops::lookup::Keys::new(&req.keys, req.number_texts.as_ref());
    if admitted.answer == ARROW_STREAM {
        let (row_type, rows) =
            fluss_ops::lookup::lookup_rows(&state.pool, &ctx.call, &params.cluster, path, keys)
                .await?;
        let (count, found) = (rows.len(), rows.iter().flatten().count());
        let response = arrow::lookup_answer(&row_type, rows, state.limits.max_response_bytes)?;
        tracing::info!(
            request_id = %ctx.request_id,
            cluster = %params.cluster,
            table = %path,
            keys = count,
            found,
            answer = ARROW_STREAM,
            elapsed_ms = elapsed_ms(admitted.started),
            "lookup"
        );
        return Ok(response);
    }
    let results =
        fluss_ops::lookup::lookup_keys(&state.pool, &ctx.call, &params.cluster, path, keys).await?;
    let (count, found) = (results.len(), results.iter().filter(|r| r.found).count());
    let body = state.limits.json_body(&LookupResponse { results })?;
    // One line per request, never per key; no key or row values.
    tracing::info!(
        request_id = %ctx.request_id,
        cluster = %params.cluster,
        table = %path,
        keys = count,
        found,
        elapsed_ms = elapsed_ms(admitted.started),
        "lookup"
    );
    Ok(json_answer(body))
}

async fn prefix_lookup_records(
    State(state): State<LookupState>,
    Routed(ctx, params, input): Routed<TableParams>,
) -> Result<Response, ApiError> {
    let admitted = state.admit(&params, input, |req: &PrefixLookupRequest, limits| {
        limits.ensure_keys(&req.prefixes, "prefixes", limits.max_prefixes)?;
        limits.rows_per_prefix(req.max_rows_per_prefix)
    })?;
    let (path, req, max_rows) = (&admitted.path, &admitted.req, admitted.checked);
    let results = fluss_ops::lookup::lookup_prefixes(
        &state.pool,
        &ctx.call,
        &params.cluster,
        path,
        &req.prefix_columns,
        fluss_ops::lookup::Keys::new(&req.prefixes, req.number_texts.as_ref()),
        max_rows,
    )
    .await?;
    let prefixes = results.len();
    let rows: usize = results.iter().map(|r| r.rows.len()).sum();
    let truncated = results.iter().filter(|r| r.truncated).count();
    let body = state.limits.json_body(&PrefixLookupResponse {
        max_rows_per_prefix: fluss_ops::lookup::input_index(max_rows),
        results,
    })?;
    tracing::info!(
        request_id = %ctx.request_id,
        cluster = %params.cluster,
        table = %path,
        prefixes,
        rows,
        truncated,
        elapsed_ms = elapsed_ms(admitted.started),
        "prefix lookup"
    );
    Ok(json_answer(body))
}

async fn scan_records(
    State(state): State<LookupState>,
    Routed(ctx, params, input): Routed<TableParams>,
) -> Result<Response, ApiError> {
    let admitted = state.admit(&params, input, |req: &ScanRequest, limits| {
        limits.scan_limit(req.limit)
    })?;
    let (path, req, limit) = (&admitted.path, &admitted.req, admitted.checked);
    let spec = fluss_ops::scan::ScanSpec {
        limit,
        columns: req.columns.as_deref(),
        partition: req.partition.as_ref(),
    };
    let rows = fluss_ops::scan::scan(&state.pool, &ctx.call, &params.cluster, path, spec).await?;
    let count = rows.len();
    let body = state.limits.json_body(&ScanResponse {
        limit: fluss_ops::lookup::input_index(limit),
        row_count: fluss_ops::lookup::input_index(count),
        rows,
    })?;
    tracing::info!(
        request_id = %ctx.request_id,
        cluster = %params.cluster,
        table = %path,
        rows = count,
        elapsed_ms = elapsed_ms(admitted.started),
        "scan"
    );
    Ok(json_answer(body))
}

/// A 200 with `body`, JSON already rendered (and bounded) by `LookupLimits::json_body`.
fn json_answer(body: Vec<u8>) -> Response {
    (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, JSON)],
        body,
    )
        .into_response()
}

/// A typical record as fetched, to size a read's fetches by its record bound.
const TYPICAL_RECORD_BYTES: usize = 64;

async fn read_records(
    State(state): State<LookupState>,
    Routed(ctx, params, input): Routed<TableParams>,
) -> Result<Response, ApiError> {
    let offered = [JSON, ARROW_STREAM];
    let admitted =
        state.admit_answering(&params, input, &offered, |req: &ReadRequest, limits| {
            let bounds = limits.read_bounds(req.max_records, req.max_bytes, req.wait_ms)?;
            Ok((bounds, begin(req)?))
        })?;
    let (path, req) = (&admitted.path, &admitted.req);
    let (bounds, begin) = &admitted.checked;
    let start = match begin {
        Begin::Cursor(c) => Start::Cursor(c.clone()),
        Begin::From(from) => Start::From {
            from,
            partition: req.partition.as_ref(),
        },
    };
    let spec = ReadSpec {
        start,
        columns: req.columns.as_deref(),
        wait: bounds.wait,
        answer_bytes: bounds
            .bytes
            .min(bounds.records.saturating_mul(TYPICAL_RECORD_BYTES)),
    };
    let (pool, call, cluster) = (&state.pool, &ctx.call, params.cluster.as_str());
    let kept = &state.kept_scanners;
    let (response, end, bytes) = if admitted.answer == ARROW_STREAM {
        let sink = Mutex::new(ArrowRecords::new(*bounds));
        let end = fluss_ops::read::read(pool, call, cluster, path, &spec, kept, &sink).await?;
        let sink = sink.into_inner().unwrap_or_else(PoisonError::into_inner);
        let bytes = sink.len();
        (sink.into_response(&end.cursor.encode())?, end, bytes)
    } else {
        let sink = Mutex::new(JsonRecords::new(*bounds));
        let end = fluss_ops::read::read(pool, call, cluster, path, &spec, kept, &sink).await?;
        let sink = sink.into_inner().unwrap_or_else(PoisonError::into_inner);
        let bytes = sink.buf.len();
        (sink.into_response(&end.cursor.encode()), end, bytes)
    };
    tracing::info!(
        request_id = %ctx.request_id,
        cluster = %params.cluster,
        table = %path,
        answer = admitted.answer,
        records = end.taken,
        bytes,
        kept_scanner = end.warm,
        elapsed_ms = elapsed_ms(admitted.started),
        "read"
    );
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        call, expect_event_reaches_handler, post_json, served, unreachable_pool,
    };
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    const URL: &str = "/v1/clusters/default/databases/db/tables/t/records/lookup";
    const PREFIX_URL: &str = "/v1/clusters/default/databases/db/tables/t/records/prefix-lookup";
    const ONE_KEY: &str = r#"{"keys":[{"id":1}]}"#;
    const ONE_PREFIX: &str = r#"{"prefix_columns":["tenant"],"prefixes":[{"tenant":1}]}"#;
    const SCAN_URL: &str = "/v1/clusters/default/databases/db/tables/t/records/scan";
    const A_SCAN: &str = r#"{"limit":10}"#;
    const READ_URL: &str = "/v1/clusters/default/databases/db/tables/t/records/read";
    const A_READ: &str = r#"{"from":"earliest"}"#;

    /// A router over a cluster nobody listens on: every test here must answer before any I/O.
    fn app(limits: LookupLimits) -> Router {
        served(lookup_routes(LookupState::new(
            unreachable_pool("default"),
            limits,
        )))
    }

    #[tokio::test]
    async fn cheap_checks_answer_before_touching_fluss_on_both_routes() {
        for (url, valid) in [
            (URL, ONE_KEY),
            (PREFIX_URL, ONE_PREFIX),
            (SCAN_URL, A_SCAN),
            (READ_URL, A_READ),
        ] {
            let cases: Vec<(&str, Request<Body>, StatusCode, &str)> = vec![
                (
                    "wrong content type",
                    Request::post(url)
                        .header("content-type", "text/plain")
                        .body(Body::from(valid))
                        .unwrap(),
                    StatusCode::UNSUPPORTED_MEDIA_TYPE,
                    "unsupported_media_type",
                ),
                (
                    "query string",
                    post_json(&format!("{url}?x=1"), valid),
                    StatusCode::BAD_REQUEST,
                    "invalid_argument",
                ),
                (
                    "unknown field",
                    post_json(url, &valid.replacen('{', r#"{"bogus":1,"#, 1)),
                    StatusCode::BAD_REQUEST,
                    "invalid_argument",
                ),
                (
                    "not JSON",
                    post_json(url, "{"),
                    StatusCode::BAD_REQUEST,
                    "invalid_argument",
                ),
                (
                    "unknown cluster",
                    post_json(&url.replace("/default/", "/nope/"), valid),
                    StatusCode::NOT_FOUND,
                    "cluster_not_found",
                ),
                (
                    "GET on the route",
                    Request::get(url).body(Body::empty()).unwrap(),
                    StatusCode::METHOD_NOT_ALLOWED,
                    "method_not_allowed",
                ),
                (
                    "JSON not acceptable",
                    Request::post(url)
                        .header("content-type", "application/json")
                        .header("accept", "text/html")
                        .body(Body::from(valid))
                        .unwrap(),
                    StatusCode::NOT_ACCEPTABLE,
                    "not_acceptable",
                ),
            ];
            for (label, req, status, code) in cases {
                let (got, body) = call(app(LookupLimits::default()), req).await;
                assert_eq!(got, status, "{url} {label}: {body}");
                assert_eq!(body["error"]["code"], code, "{url} {label}: {body}");
            }
        }
    }

    #[tokio::test]
    async fn empty_and_oversized_requests_are_rejected_before_fluss() {
        let limits = LookupLimits {
            max_keys: 2,
            max_key_bytes: 64,
            max_prefixes: 1,
            max_rows_per_prefix: 5,
            max_scan_rows: 7,
            ..LookupLimits::default()
        };
        let cases = [
            (URL, r#"{"keys":[]}"#, StatusCode::BAD_REQUEST, "`keys`"),
            (
                URL,
                r#"{"keys":[{"id":1},{"id":2},{"id":3}]}"#,
                StatusCode::PAYLOAD_TOO_LARGE,
                "at most 2",
            ),
            (
                URL,
                &format!(r#"{{"keys":[{{"id":"{}"}}]}}"#, "x".repeat(100)),
                StatusCode::PAYLOAD_TOO_LARGE,
                "at most 64",
            ),
            (
                PREFIX_URL,
                r#"{"prefix_columns":["a"],"prefixes":[]}"#,
                StatusCode::BAD_REQUEST,
                "`prefixes`",
            ),
            (
                PREFIX_URL,
                r#"{"prefix_columns":["a"],"prefixes":[{"a":1},{"a":2}]}"#,
                StatusCode::PAYLOAD_TOO_LARGE,
                "at most 1",
            ),
            (
                PREFIX_URL,
                r#"{"prefix_columns":["a"],"prefixes":[{"a":1}],"max_rows_per_prefix":6}"#,
                StatusCode::BAD_REQUEST,
                "between 1 and 5",
            ),
            (
                SCAN_URL,
                r#"{"limit":0}"#,
                StatusCode::BAD_REQUEST,
                "`limit` must be between 1 and 7",
            ),
            (
                SCAN_URL,
                r#"{"limit":8}"#,
                StatusCode::BAD_REQUEST,
                "between 1 and 7",
            ),
            (
                SCAN_URL,
                r#"{"partition":{"dt":"a","dt":"b"}}"#,
                StatusCode::BAD_REQUEST,
                "duplicate partition column",
            ),
            (
                SCAN_URL,
                r#"{"partition":{"dt":1}}"#,
                StatusCode::BAD_REQUEST,
                "not a valid scan request",
            ),
        ];
        // Hostile and wrong reads: every one is refused before the pool is asked (it could
        // only answer 503 for this unreachable cluster).
        let huge_cursor = format!(r#"{{"cursor":"{}"}}"#, "A".repeat(1024 * 1024));
        let read_cases = [
            (
                r#"{"cursor":"AAAA"}"#,
                StatusCode::BAD_REQUEST,
                "not a cursor",
            ),
            (r#"{"cursor":"%%%"}"#, StatusCode::BAD_REQUEST, "base64url"),
            (
                r#"{"cursor":"AQUAAgAAv1pL8iN4Ug"}"#,
                StatusCode::BAD_REQUEST,
                "checksum",
            ),
            (&huge_cursor, StatusCode::BAD_REQUEST, "1048576 characters"),
            (r#"{"cursor":""}"#, StatusCode::BAD_REQUEST, "empty"),
            (
                r#"{"from":"earliest","cursor":"x"}"#,
                StatusCode::BAD_REQUEST,
                "not both",
            ),
            (r#"{}"#, StatusCode::BAD_REQUEST, "give `from`"),
            (
                r#"{"from":{"offsets":{"0":-1}}}"#,
                StatusCode::BAD_REQUEST,
                "`from.offsets.0`",
            ),
            (
                r#"{"from":"earliest","max_records":0}"#,
                StatusCode::BAD_REQUEST,
                "`max_records`",
            ),
            (
                r#"{"from":"earliest","max_bytes":0}"#,
                StatusCode::BAD_REQUEST,
                "`max_bytes`",
            ),
            (
                r#"{"from":"earliest","wait_ms":3600000}"#,
                StatusCode::BAD_REQUEST,
                "`wait_ms` must be between 0 and 20000",
            ),
            (
                r#"{"from":"earliest","partition":{"dt":"a","dt":"b"}}"#,
                StatusCode::BAD_REQUEST,
                "duplicate partition column",
            ),
        ];
        let cases = cases
            .iter()
            .map(|(u, b, s, n)| (*u, *b, *s, *n))
            .chain(read_cases.iter().map(|(b, s, n)| (READ_URL, *b, *s, *n)));
        for (url, body, status, needle) in cases {
            let (got, answer) = call(app(limits), post_json(url, body)).await;
            assert_eq!(got, status, "{body}: {answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(needle), "{body}: {message}");
        }
    }

    #[tokio::test]
    async fn a_full_concurrency_gate_answers_429_with_retry_after() {
        let pool = unreachable_pool("default");
        let limits = LookupLimits {
            max_concurrent: 1,
            ..LookupLimits::default()
        };
        let state = LookupState::new(pool, limits);
        let _held = state.gate.hold();
        let app = served(lookup_routes(state));
        for url in [URL, PREFIX_URL] {
            let body = if url == URL { ONE_KEY } else { ONE_PREFIX };
            let resp = app.clone().oneshot(post_json(url, body)).await.unwrap();
            assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS, "{url}");
            assert_eq!(resp.headers()["retry-after"], "1");
        }
    }

    #[tokio::test]
    async fn an_unknown_cluster_is_404_even_when_the_gate_is_full() {
        let limits = LookupLimits {
            max_concurrent: 1,
            ..LookupLimits::default()
        };
        let state = LookupState::new(unreachable_pool("default"), limits);
        let _held = state.gate.hold();
        let app = served(lookup_routes(state));
        for (url, body) in [(URL, ONE_KEY), (PREFIX_URL, ONE_PREFIX)] {
            let url = url.replace("/default/", "/nope/");
            let (status, answer) = call(app.clone(), post_json(&url, body)).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{url}: {answer}");
            assert_eq!(answer["error"]["code"], "cluster_not_found", "{url}");
        }
    }

    #[tokio::test]
    async fn the_router_serves_every_lookup_route_of_the_route_table() {
        use gateway_core::routes::{FUNCTION_LOOKUP, routes_of};
        let manifest = include_str!("../../../../Cargo.toml");
        let mut served = 0;
        for route in routes_of(FUNCTION_LOOKUP) {
            let url = route
                .path
                .replace("{cluster}", "nope")
                .replace("{database}", "db")
                .replace("{table}", "t");
            let body = match route.path {
                LOOKUP => ONE_KEY,
                PREFIX_LOOKUP => ONE_PREFIX,
                READ => A_READ,
                _ => A_SCAN,
            };
            let req = Request::builder()
                .method(route.method)
                .uri(url)
                .header("content-type", "application/json")
                .body(Body::from(body))
                .unwrap();
            // Reaching the handler: the (unconfigured) cluster is the first thing it rejects.
            let (status, answer) = call(app(LookupLimits::default()), req).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{route:?}: {answer}");
            assert_eq!(answer["error"]["code"], "cluster_not_found", "{route:?}");
            let mapping = format!("\"{}\" = \"{FUNCTION_LOOKUP}\"", route.path);
            assert!(manifest.contains(&mapping), "Cargo.toml lacks {mapping}");
            served += 1;
        }
        assert_eq!(served, 4);
    }

    #[tokio::test]
    async fn the_sample_api_gateway_event_reaches_the_lookup_handler() {
        // The pool knows no cluster `default`.
        let state = LookupState::new(unreachable_pool("other"), LookupLimits::default());
        expect_event_reaches_handler(
            served(lookup_routes(state)),
            include_str!("../../../../events/lookup.json"),
        )
        .await;
    }
}
