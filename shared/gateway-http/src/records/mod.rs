//! `POST /v1/clusters/{cluster}/databases/{database}/tables/{table}/records`: batch writes with
//! per-entry outcomes, wire-compatible with the Fluss Gateway 1.0.
//!
//! The handler runs the cheap checks first (query string, content type, `Accept`, body size,
//! body shape, row count, then the cluster and the concurrency gate), then hands the batch to the write operation
//! ([`fluss_ops::write::write`]), which event ingestion calls too. A request with an
//! `Idempotency-Key` claims its key before the write and keeps its response after it (see
//! [`idempotency`]).

pub mod idempotency;
pub mod limits;

use std::time::Instant;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use fluss_pool::Pool;
use gateway_core::GatewayError;
use gateway_core::codec::arrow::{ArrowBody, ArrowLimits};
use gateway_core::routes::RECORDS;
use gateway_core::wire::{NdjsonBody, WriteRequest, WriteResponse, ensure_row_limit};

use crate::admission::{Gate, admit};
use crate::context::RequestCtx;
use crate::error::ApiError;
use crate::extract::Routed;
use crate::middleware::elapsed_ms;
use crate::table_route::TableParams;
use idempotency::{Claim, Idempotency, Kept, ScopedKey};
pub use limits::WriteLimits;

/// Everything the write route shares across requests; built once per container.
#[derive(Clone)]
pub struct WriteState {
    pool: Pool,
    limits: WriteLimits,
    /// Writes in flight; a full gate answers 429 instead of queueing behind the deadline.
    gate: Gate,
    /// The `Idempotency-Key` store, when the deployment keeps one.
    idempotency: Option<Idempotency>,
}

impl WriteState {
    /// State over `pool`, with the route's `limits`.
    pub fn new(pool: Pool, limits: WriteLimits) -> Self {
        WriteState {
            pool,
            limits,
            gate: Gate::new(limits.max_concurrent, "write"),
            idempotency: None,
        }
    }

    /// The same state keeping `Idempotency-Key` records in `idempotency` (`None`: the header
    /// is refused).
    pub fn with_idempotency(mut self, idempotency: Option<Idempotency>) -> Self {
        self.idempotency = idempotency;
        self
    }

    /// The limits in force.
    pub fn limits(&self) -> WriteLimits {
        self.limits
    }
}

/// The write route family. Wrap it with [`crate::build_router`] to serve it.
pub fn write_routes(state: WriteState) -> Router {
    let max_bytes = state.limits.max_request_bytes;
    Router::new()
        .route(RECORDS, post(write_records))
        .layer(DefaultBodyLimit::max(max_bytes))
        .with_state(state)
}

async fn write_records(
    State(state): State<WriteState>,
    Routed(ctx, params, input): Routed<TableParams>,
) -> Result<Response, ApiError> {
    let started = Instant::now();
    input.ensure_no_query()?;
    input.ensure_accepts_json()?;
    let path = params.path()?;
    let key = match idempotency::request_key(input.headers())? {
        None => None,
        Some(_) if state.idempotency.is_none() => {
            return Err(GatewayError::invalid(
                "this gateway keeps no Idempotency-Key records (gateway.rest.idempotency.table \
                 is not set): send the request without the header",
            )
            .into());
        }
        Some(key) => input.body().map(|body| {
            ScopedKey::new(
                ctx.call.principal.id(),
                &params.cluster,
                &path.to_string(),
                &key,
                input.content_type(),
                body,
            )
        }),
    };
    let max_rows = state.limits.max_rows;
    let minimal = prefers_minimal(input.headers());
    let body = if input.is_ndjson() {
        let lines = input.ndjson()?;
        ensure_row_limit(lines.len(), max_rows)?;
        Body::Lines(lines)
    } else if input.is_arrow() {
        Body::Arrow(input.arrow(ArrowLimits {
            max_rows,
            max_decoded_bytes: state.limits.max_request_bytes,
        })?)
    } else {
        // Decoded against the table's schema once the table is known (fluss-ops).
        Body::Json(input.json_bytes()?)
    };
    let refine = body.refiner(max_rows);
    // Before any I/O, the Idempotency-Key claim included.
    let permit = admit(&state.pool, &state.gate, &params.cluster).map_err(&refine)?;
    let run = {
        let (pool, call, cluster, path) = (
            state.pool.clone(),
            ctx.call.clone(),
            params.cluster.clone(),
            path.clone(),
        );
        async move {
            let _permit = permit;
            write_body(&pool, &call, &cluster, &path, body, max_rows, minimal).await
        }
    };
    let (response, replayed) = match (&state.idempotency, key) {
        (Some(store), Some(key)) => idempotent(store, &ctx, key, run, refine).await?,
        _ => (render(&run.await?), None),
    };
    // One line per request, never per row; no row values.
    tracing::info!(
        request_id = %ctx.request_id,
        cluster = %params.cluster,
        table = %path,
        rows = response.row_count,
        successes = response.success_count,
        failures = response.error_count,
        replayed = replayed.is_some(),
        elapsed_ms = elapsed_ms(started),
        "write"
    );
    let mut response = json_response(response.body, replayed);
    if minimal {
        response
            .headers_mut()
            .insert(PREFERENCE_APPLIED, HeaderValue::from_static(RETURN_MINIMAL));
    }
    Ok(response)
}

/// `Prefer: return=minimal` (RFC 7240): the answer leaves out the list of successes (the
/// counts and every failure stay), which for 10,000 rows is most of its bytes and of the
/// work of making it.
const RETURN_MINIMAL: &str = "return=minimal";
/// The header that says a preference was applied (RFC 7240).
const PREFERENCE_APPLIED: &str = "preference-applied";

/// Whether the request asks for the minimal answer (any `Prefer` header naming
/// `return=minimal`, case-insensitively, among its preferences).
fn prefers_minimal(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get_all("prefer")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim().eq_ignore_ascii_case(RETURN_MINIMAL))
}

/// The outcome of a write as answered: the counts (for the log line) and the JSON body.
struct Answer {
    row_count: u64,
    success_count: u64,
    error_count: u64,
    body: Vec<u8>,
}

fn render(response: &WriteResponse) -> Answer {
    answer(response, response.to_json_vec())
}

fn answer(response: &WriteResponse, body: Vec<u8>) -> Answer {
    Answer {
        row_count: response.row_count,
        success_count: response.success_count,
        error_count: response.error_count,
        body,
    }
}

/// Runs `run` under `key`: a completed earlier request is replayed (its kept answer and
/// whether the kept body is partial), a running one is 409, another body under the key 422.
/// Claim, write and completion run in a task of their own: a caller that drops the connection
/// cancels only its wait, never the sequence between the claim and the record's completion
/// (a cancelled claim would hold the key until it expires, a cancelled completion would leave
/// rows written under a key that a retry runs again).
async fn idempotent(
    store: &Idempotency,
    ctx: &RequestCtx,
    key: ScopedKey,
    run: impl std::future::Future<Output = Result<WriteResponse, GatewayError>> + Send + 'static,
    refine: impl Fn(GatewayError) -> GatewayError + Send + 'static,
) -> Result<(Answer, Option<bool>), GatewayError> {
    let store = store.clone();
    let request_id = ctx.request_id.clone();
    let remaining = ctx.call.deadline.remaining();
    let task = tokio::spawn(async move {
        let owner = uuid::Uuid::new_v4().to_string();
        match store.claim(&key, &owner, remaining).await.map_err(refine)? {
            Claim::Run => {}
            Claim::Replay(Kept { body, partial, .. }) => {
                let kept: WriteResponse = serde_json::from_slice(&body).map_err(|e| {
                    GatewayError::internal(format!("a kept write response does not parse: {e}"))
                })?;
                return Ok((answer(&kept, body), Some(partial)));
            }
            Claim::InUse => {
                return Err(GatewayError::new(
                    gateway_core::ErrorCode::IdempotencyKeyInUse,
                    "a request with this Idempotency-Key is still running; retry after \
                     Retry-After seconds to get its response",
                ));
            }
            Claim::Reused => {
                return Err(GatewayError::new(
                    gateway_core::ErrorCode::IdempotencyKeyReused,
                    "this Idempotency-Key was used with a different request body; use a new \
                     key for a new request",
                ));
            }
        }
        match run.await {
            Ok(response) => {
                let (body, kept) = idempotency::keep(&response)?;
                store.complete(&key, &owner, &kept, &request_id).await;
                Ok((answer(&response, body), None))
            }
            Err(e) => {
                store.release(&key, &owner, &request_id).await;
                Err(e)
            }
        }
    });
    task.await
        .map_err(|e| GatewayError::internal(format!("the write task failed: {e}")))?
}

/// 200 with the JSON `body`; a replay says so (and whether its body was shortened).
fn json_response(body: Vec<u8>, replayed: Option<bool>) -> Response {
    let mut response = (
        StatusCode::OK,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    if let Some(partial) = replayed {
        let headers = response.headers_mut();
        headers.insert(
            idempotency::REPLAYED_HEADER,
            HeaderValue::from_static("true"),
        );
        if partial {
            headers.insert(
                idempotency::PARTIAL_HEADER,
                HeaderValue::from_static("true"),
            );
        }
    }
    response
}

/// Writes `body` to `path`: a bare NDJSON row appends to a log table and upserts into a
/// primary-key table, the kind coming from the cached table handle the write uses too.
async fn write_body(
    pool: &Pool,
    call: &fluss_ops::Call,
    cluster: &str,
    path: &fluss::metadata::TablePath,
    body: Body,
    max_rows: usize,
    minimal: bool,
) -> Result<WriteResponse, GatewayError> {
    let outcomes = match body {
        Body::Json(bytes) => {
            fluss_ops::write::write_json(pool, call, cluster, path, &bytes, max_rows).await?
        }
        Body::Arrow(body) => {
            let ids = if minimal {
                fluss_ops::write::Ids::FailuresOnly
            } else {
                fluss_ops::write::Ids::Every
            };
            fluss_ops::write::write_arrow(pool, call, cluster, path, &body, ids).await?
        }
        Body::Lines(lines) => {
            let primary_key = lines.has_bare_rows()
                && fluss_ops::write::has_primary_key(pool, call, cluster, path).await?;
            fluss_ops::write::write(pool, call, cluster, path, &lines.resolve(primary_key)).await?
        }
    };
    Ok(if minimal {
        WriteResponse::from_outcomes_minimal(outcomes)
    } else {
        WriteResponse::from_outcomes(outcomes)
    })
}

/// A write body in either of its media types.
enum Body {
    /// `application/json`: the Fluss Gateway's form, as received; its rows are decoded straight
    /// from the bytes once the table's schema is known.
    Json(Bytes),
    /// `application/x-ndjson`: one row or entry per line, parsed and checked.
    Lines(NdjsonBody),
    /// `application/vnd.apache.arrow.stream`: record batches, read and checked; their rows
    /// are decoded against the table's columns once it is known.
    Arrow(ArrowBody),
}

impl Body {
    /// What turns a refusal raised before the rows are decoded (an unknown cluster, a full
    /// gate, an unreachable idempotency store) into the body's own 400 or 413 when the body is
    /// bad ([`WriteRequest::bad_body_or`]): the JSON body is only read with its table. An NDJSON
    /// body was parsed and checked already.
    fn refiner(&self, max_rows: usize) -> impl Fn(GatewayError) -> GatewayError + Send + 'static {
        let json = match self {
            Body::Json(bytes) => Some(bytes.clone()),
            Body::Lines(_) | Body::Arrow(_) => None,
        };
        move |refusal| match &json {
            Some(body) => WriteRequest::bad_body_or(refusal, body, max_rows).0,
            None => refusal,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{
        call, expect_errors, expect_event_reaches_handler, post_json, served, unreachable_pool,
    };
    use axum::body::Body;
    use axum::http::Request;
    use tower::ServiceExt;

    const URL: &str = "/v1/clusters/default/databases/db/tables/t/records";

    /// A router over a cluster nobody listens on: every test here must answer before any I/O.
    fn app(limits: WriteLimits) -> Router {
        served(write_routes(WriteState::new(
            unreachable_pool("default"),
            limits,
        )))
    }

    const ONE_ROW: &str = r#"{"entries":[{"id":"e1","upsert":{"id":1}}]}"#;

    #[test]
    fn prefer_return_minimal_is_read_among_other_preferences() {
        let with = |values: &[&str]| {
            let mut headers = axum::http::HeaderMap::new();
            for v in values {
                headers.append("prefer", v.parse().unwrap());
            }
            prefers_minimal(&headers)
        };
        assert!(with(&["return=minimal"]));
        assert!(with(&["respond-async, Return=Minimal"]));
        assert!(with(&["wait=5", "return=minimal"]));
        assert!(!with(&["return=representation"]));
        assert!(!with(&[]));
    }

    #[tokio::test]
    async fn cheap_checks_answer_before_touching_fluss() {
        let cases: Vec<(&str, Request<Body>, StatusCode, &str)> = vec![
            (
                "wrong content type",
                Request::post(URL)
                    .header("content-type", "text/plain")
                    .body(Body::from(ONE_ROW))
                    .unwrap(),
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
            ),
            (
                "query string",
                post_json(&format!("{URL}?x=1"), ONE_ROW),
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            (
                "unknown field",
                post_json(URL, r#"{"entries":[],"bogus":1}"#),
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            (
                "unknown cluster",
                post_json("/v1/clusters/nope/databases/db/tables/t/records", ONE_ROW),
                StatusCode::NOT_FOUND,
                "cluster_not_found",
            ),
            (
                "Idempotency-Key without a store",
                Request::post(URL)
                    .header("content-type", "application/json")
                    .header("idempotency-key", "k1")
                    .body(Body::from(ONE_ROW))
                    .unwrap(),
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            (
                "malformed Idempotency-Key",
                Request::post(URL)
                    .header("content-type", "application/json")
                    .header("idempotency-key", "two words")
                    .body(Body::from(ONE_ROW))
                    .unwrap(),
                StatusCode::BAD_REQUEST,
                "invalid_argument",
            ),
            (
                "GET on the route",
                Request::get(URL).body(Body::empty()).unwrap(),
                StatusCode::METHOD_NOT_ALLOWED,
                "method_not_allowed",
            ),
            (
                "JSON not acceptable",
                Request::post(URL)
                    .header("content-type", "application/json")
                    .header("accept", "text/html")
                    .body(Body::from(ONE_ROW))
                    .unwrap(),
                StatusCode::NOT_ACCEPTABLE,
                "not_acceptable",
            ),
        ];
        expect_errors(|| app(WriteLimits::default()), cases).await;
    }

    #[tokio::test]
    async fn too_many_rows_and_too_large_bodies_are_413() {
        let limits = WriteLimits {
            max_rows: 2,
            max_request_bytes: 200,
            ..WriteLimits::default()
        };
        let three =
            r#"{"entries":[{"id":"a","upsert":{}},{"id":"b","upsert":{}},{"id":"c","upsert":{}}]}"#;
        let (status, body) = call(app(limits), post_json(URL, three)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert_eq!(body["error"]["code"], "limit_exceeded");
        assert!(
            body["error"]["message"]
                .as_str()
                .unwrap()
                .contains("the limit is 2")
        );

        let big = format!(
            r#"{{"entries":[{{"id":"{}","upsert":{{}}}}]}}"#,
            "x".repeat(300)
        );
        let (status, body) = call(app(limits), post_json(URL, &big)).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        assert_eq!(body["error"]["code"], "limit_exceeded");
    }

    #[tokio::test]
    async fn the_sample_api_gateway_event_reaches_the_write_handler() {
        // The pool knows no cluster `default`.
        let state = WriteState::new(unreachable_pool("other"), WriteLimits::default());
        expect_event_reaches_handler(
            served(write_routes(state)),
            include_str!("../../../../events/write-upsert.json"),
        )
        .await;
    }

    #[tokio::test]
    async fn the_router_serves_every_write_route_of_the_route_table() {
        use gateway_core::routes::{FUNCTION_WRITE, routes_of};
        let manifest = include_str!("../../../../Cargo.toml");
        for route in routes_of(FUNCTION_WRITE) {
            let url = route
                .path
                .replace("{cluster}", "nope")
                .replace("{database}", "db")
                .replace("{table}", "t");
            let req = Request::builder()
                .method(route.method)
                .uri(url)
                .header("content-type", "application/json")
                .body(Body::from(ONE_ROW))
                .unwrap();
            // Reaching the handler: the (unconfigured) cluster is the first thing it rejects.
            let (status, body) = call(app(WriteLimits::default()), req).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{route:?}: {body}");
            assert_eq!(body["error"]["code"], "cluster_not_found", "{route:?}");
            // `make run` (cargo lambda watch) maps the public path to this function.
            let mapping = format!("\"{}\" = \"{FUNCTION_WRITE}\"", route.path);
            assert!(manifest.contains(&mapping), "Cargo.toml lacks {mapping}");
        }
    }

    #[tokio::test]
    async fn a_full_concurrency_gate_answers_429_with_retry_after() {
        let pool = unreachable_pool("default");
        let limits = WriteLimits {
            max_concurrent: 1,
            ..WriteLimits::default()
        };
        let state = WriteState::new(pool, limits);
        let _held = state.gate.hold();
        let app = served(write_routes(state));
        let resp = app.oneshot(post_json(URL, ONE_ROW)).await.unwrap();
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()["retry-after"], "1");
    }

    #[tokio::test]
    async fn an_unknown_cluster_is_404_even_when_the_gate_is_full() {
        let limits = WriteLimits {
            max_concurrent: 1,
            ..WriteLimits::default()
        };
        let state = WriteState::new(unreachable_pool("default"), limits);
        let _held = state.gate.hold();
        let app = served(write_routes(state));
        let url = URL.replace("/default/", "/nope/");
        let (status, body) = call(app.clone(), post_json(&url, ONE_ROW)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
        assert_eq!(body["error"]["code"], "cluster_not_found", "{body}");
        // A bad body still comes first, as it does before a full gate.
        let (status, body) = call(app, post_json(&url, r#"{"entries":[],"x":1}"#)).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert_eq!(body["error"]["code"], "invalid_argument", "{body}");
    }
}
