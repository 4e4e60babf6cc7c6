//! The middleware every router of the gateway runs behind, and [`build_router`], which applies
//! it. Owns the request context (request id, the call context with principal, identity and
//! deadline, set once here), the access log line, the rendering of handler errors and the
//! re-enveloping of the framework's own errors; refuses anything route-specific.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderValue, Method};
use axum::middleware::{self, Next};
use axum::response::Response;
use tracing::Instrument;

use fluss_ops::Call;
use fluss_pool::DeadlinePolicy;
use gateway_auth::{Authenticator, Caller, Object, Presented};
use gateway_core::routes;

use crate::context::RequestCtx;
use crate::error::PendingError;
use crate::error::{Enveloped, REQUEST_ID_HEADER, error_response, framework_error};

/// Default cap on request bodies: 6 MiB, the Lambda synchronous payload limit (a larger body
/// never reaches a function in Lambda, so the standalone server should not accept it either).
pub const DEFAULT_MAX_REQUEST_BYTES: usize = 6 * 1024 * 1024;

/// Wraps `routes` in the gateway's middleware, outermost first:
///
/// 1. request context: a fresh request id (`x-request-id` on every response), the access log
///    line (method, route template, request id, status, elapsed ms; never bodies or secrets),
///    and re-enveloping of any error response not rendered by `error_response` (the
///    framework's 404, 405, 413, 415 and extractor rejections); a panicking handler answers
///    500 `internal` in the envelope (the panic text stays out of the body);
/// 2. body codings: a `gzip`, `deflate` or `zstd` body (`Content-Encoding`) is decoded as it is
///    read, any other coding is 415; a response is compressed when the caller accepts it
///    (`Accept-Encoding`);
/// 3. body limit: a declared `Content-Length` beyond `max_request_bytes` (beyond what a body
///    coding's overhead can explain, when the body is compressed) is 413 before any byte is
///    read; otherwise `max_request_bytes` of the decoded body for extractors that read it (413);
/// 4. the routes, plus a fallback answering unknown paths with 404 `not_found`.
///
/// `deadlines` gives every request its deadline, stamped once in the request context. Every
/// caller is anonymous (`trust` mode); `build_secured_router` authenticates.
pub fn build_router(routes: Router, max_request_bytes: usize, deadlines: DeadlinePolicy) -> Router {
    build_secured_router(routes, max_request_bytes, deadlines, Authenticator::trust())
}

/// [`build_router`] with authentication and authorization in the request-context layer: every
/// matched route except `/health` and `/ready` needs a caller `auth` accepts (401
/// `unauthenticated` with `WWW-Authenticate` otherwise), whose scopes grant the route's
/// operation class on the cluster, database and table of its path (403 `unauthorized`
/// otherwise), before the handler runs. The caller's principal and Fluss identity go into the
/// call context.
pub fn build_secured_router(
    routes: Router,
    max_request_bytes: usize,
    deadlines: DeadlinePolicy,
    auth: Authenticator,
) -> Router {
    let guard = Arc::new(Guard { deadlines, auth });
    routes
        .fallback(unknown_route)
        .layer(DefaultBodyLimit::max(max_request_bytes))
        // Inside the body limit's reach: the extractors read the decoded body, so the limit
        // counts decoded bytes and a small body that inflates past it stops at the limit (413)
        // without being inflated in full.
        .layer(tower::util::MapRequestLayer::new(
            crate::body_coding::decoded,
        ))
        // Outside the decoding: it still sees the declared (encoded) length and coding.
        .layer(middleware::from_fn_with_state(
            max_request_bytes,
            refuse_declared_oversize,
        ))
        .layer(tower_http::compression::CompressionLayer::new())
        .layer(middleware::from_fn_with_state(guard, request_context))
}

/// 413 `limit_exceeded` when the declared `Content-Length` already exceeds `max_request_bytes`,
/// before a byte of the body is read: a client announcing a terabyte learns at once, instead of
/// holding a connection (and, standalone, a slot) until enough bytes arrive to cross the limit.
/// A compressed body is judged by its decoded size, which may be within the limit while the
/// encoded one is not, so it is allowed the worst overhead of gzip, deflate or zstd on an
/// incompressible body (stored blocks: a few bytes per 64 KiB, plus headers).
async fn refuse_declared_oversize(
    State(max_request_bytes): State<usize>,
    req: Request,
    next: Next,
) -> Response {
    let declared = req
        .headers()
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    let allowed = if req
        .headers()
        .contains_key(axum::http::header::CONTENT_ENCODING)
    {
        max_request_bytes.saturating_add(max_request_bytes / 1024 + 1024)
    } else {
        max_request_bytes
    };
    match declared {
        Some(length) if length > u64::try_from(allowed).unwrap_or(u64::MAX) => {
            axum::response::IntoResponse::into_response(crate::error::ApiError(
                gateway_core::GatewayError::limit(format!(
                    "request body of {length} bytes exceeds the limit of {max_request_bytes} \
                     bytes (as its `Content-Length` declares)"
                )),
            ))
        }
        _ => next.run(req).await,
    }
}

/// What the request-context layer needs besides the request.
struct Guard {
    deadlines: DeadlinePolicy,
    auth: Authenticator,
}

/// 404 for a path no route serves; the request-context layer renders it in the envelope.
async fn unknown_route() -> axum::http::StatusCode {
    axum::http::StatusCode::NOT_FOUND
}

/// Request id, request span, access log, request metrics and error normalisation (see
/// [`build_router`]).
async fn request_context(State(guard): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let request_id = uuid::Uuid::new_v4().to_string();
    // In a block: `&Request` is not `Send` and must not live across the await below.
    let (lambda_deadline_ms, method, matched, route, cluster, span) = {
        let lambda = req.extensions().get::<lambda_http::Context>();
        let lambda_deadline_ms = lambda.map(|c| c.deadline);
        let lambda_request_id = lambda.map(|c| c.request_id.clone()).unwrap_or_default();
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
        let trace_id = gateway_telemetry::trace::trace_id(
            header("traceparent"),
            &[
                header("x-amzn-trace-id"),
                lambda.and_then(|c| c.xray_trace_id.as_deref()),
            ],
        );
        let method = req.method().clone();
        // The template, never the raw URI: bounded cardinality and no caller data in the log.
        // `None` only for the fallback (a path no route serves).
        let matched = req
            .extensions()
            .get::<MatchedPath>()
            .map(|m| m.as_str().to_owned());
        let route = matched.clone().unwrap_or_else(|| "unmatched".to_owned());
        // A configured id, `unknown` or `none`: whatever cluster a caller names, the label (and
        // the log field) stays within the configuration.
        let cluster =
            gateway_telemetry::families::cluster_label(path_cluster(&route, req.uri().path()));
        let span = tracing::info_span!(
            "request",
            request_id = %request_id,
            lambda_request_id = %lambda_request_id,
            method = %method,
            route = %route,
            cluster = %cluster,
            trace_id = trace_id.as_deref().unwrap_or(""),
        );
        (lambda_deadline_ms, method, matched, route, cluster, span)
    };
    let ctx = RequestCtx {
        call: Call::service(
            request_id.clone(),
            guard.deadlines.deadline(lambda_deadline_ms),
        ),
        request_id,
    };
    let mut inflight = Inflight::start(span.clone(), started);
    let (response, principal) = serve_request(&guard, ctx, req, next, &method, matched.as_deref())
        .instrument(span.clone())
        .await;
    inflight.answered();
    let status = response.status().as_u16();
    gateway_telemetry::families::rest_request(
        &cluster,
        method.as_str(),
        &route,
        status,
        started.elapsed(),
    );
    let _entered = span.enter();
    tracing::info!(
        method = %method,
        route = %route,
        principal,
        status,
        elapsed_ms = elapsed_ms(started),
        "request"
    );
    response
}

/// The cluster segment of `path` when its route template has one (`/v1/clusters/{cluster}…`).
fn path_cluster<'a>(template: &str, path: &'a str) -> Option<&'a str> {
    template
        .starts_with("/v1/clusters/{cluster}")
        .then(|| path.split('/').nth(3))
        .flatten()
}

/// Counts a request in flight until dropped (also when the caller goes away mid-request), and
/// says so when it went away: the request line is never written then, and a caller's timeout
/// would otherwise leave no trace on our side.
struct Inflight {
    span: tracing::Span,
    started: Instant,
    answered: bool,
}

impl Inflight {
    fn start(span: tracing::Span, started: Instant) -> Self {
        gateway_telemetry::families::rest_inflight(true);
        Inflight {
            span,
            started,
            answered: false,
        }
    }

    fn answered(&mut self) {
        self.answered = true;
    }
}

impl Drop for Inflight {
    fn drop(&mut self) {
        gateway_telemetry::families::rest_inflight(false);
        if !self.answered {
            let _entered = self.span.enter();
            tracing::info!(
                elapsed_ms = elapsed_ms(self.started),
                "the caller went away before the answer"
            );
        }
    }
}

/// Admission (credentials, scopes) then the handler, inside the request's span; answers the
/// normalised response and the caller's principal for the access log.
async fn serve_request(
    guard: &Guard,
    mut ctx: RequestCtx,
    req: Request,
    next: Next,
    method: &Method,
    template: Option<&str>,
) -> (Response, String) {
    let route = template.unwrap_or("unmatched");
    let request_id = ctx.request_id.clone();
    let (mut parts, body) = req.into_parts();
    // A path no route serves is named in the 404, as the Fluss Gateway names it.
    let unrouted = template.is_none().then(|| parts.uri.path().to_owned());
    // An OTLP route answers every error in its request's encoding (the OTLP specification).
    let otlp_content_type = routes::otlp_signal(route).and_then(|_| {
        parts
            .headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned)
    });
    // A slow Secrets Manager read must not outlive the request's deadline.
    let admitted = ctx
        .call
        .deadline
        .bound(
            "checking credentials",
            admit(&guard.auth, &mut parts, method, template),
        )
        .await
        .and_then(|admitted| admitted);
    let response = match admitted {
        Err(error) => {
            let mut response = error_response(&error, &request_id);
            if error.code() == gateway_core::ErrorCode::MethodNotAllowed
                && let Ok(allow) = HeaderValue::from_str(&routes::allowed_methods(route).join(", "))
            {
                response
                    .headers_mut()
                    .insert(axum::http::header::ALLOW, allow);
            }
            if error.code() == gateway_core::ErrorCode::Unauthenticated
                && let Some(challenge) = guard.auth.challenge()
            {
                response.headers_mut().insert(
                    axum::http::header::WWW_AUTHENTICATE,
                    HeaderValue::from_static(challenge),
                );
            }
            response
        }
        Ok(_) if let Err(error) = canonical_encoding(&mut parts.headers) => {
            error_response(&error, &request_id)
        }
        Ok(caller) => {
            ctx.call.principal = caller.principal;
            ctx.call.identity = caller.identity;
            let mut req = Request::from_parts(parts, body);
            req.extensions_mut().insert(ctx.clone());
            match CatchPanic(Box::pin(next.run(req))).await {
                Some(response) => response,
                None => {
                    tracing::error!(request_id = %request_id, route = %route, "handler panicked");
                    error_response(
                        &gateway_core::GatewayError::internal("internal error"),
                        &request_id,
                    )
                }
            }
        }
    };
    let mut response = normalise(response, method, unrouted.as_deref(), &request_id);
    if routes::otlp_signal(route).is_some() {
        response = crate::otlp::status::as_status(response, otlp_content_type.as_deref()).await;
    }
    (response, ctx.call.principal.id().to_owned())
}

/// The caller of a matched route, authorized for its operation class on its path object.
/// Only `/health`, `/ready` and paths no route serves (the fallback's 404 says nothing) are
/// open. Every other method on a served path is resolved by the route table's one rule
/// ([`routes::resolve`]): `HEAD` is admitted exactly as the `GET` whose handler answers it, and
/// a method the table does not list is 405 before any handler runs, so no method reaches a
/// handler as the anonymous caller.
async fn admit(
    auth: &Authenticator,
    parts: &mut axum::http::request::Parts,
    method: &Method,
    template: Option<&str>,
) -> Result<Caller, gateway_core::GatewayError> {
    let Some(template) = template else {
        return Ok(Caller::anonymous());
    };
    let route = match routes::resolve(method.as_str(), template) {
        routes::Resolved::Route(route) => route,
        routes::Resolved::MethodNotAllowed(_) => {
            return Err(framework_error(
                axum::http::StatusCode::METHOD_NOT_ALLOWED,
                method.as_str(),
                None,
            ));
        }
        // In `trust` mode every caller is the anonymous one anyway (routers of tests and
        // benchmarks serve paths of their own).
        routes::Resolved::NotInTable if auth.mode() == gateway_auth::Mode::Trust => {
            return Ok(Caller::anonymous());
        }
        routes::Resolved::NotInTable => {
            tracing::error!(route = %template, "a served route is not in the route table; refused");
            return Err(framework_error(
                axum::http::StatusCode::NOT_FOUND,
                method.as_str(),
                None,
            ));
        }
    };
    if route.path == routes::HEALTH || route.path == routes::READY {
        return Ok(Caller::anonymous());
    }
    let presented = presented(&parts.headers);
    let context = authorizer_context(&parts.extensions);
    let caller = auth.authenticate(presented, context).await?;
    // The decoded values the handler will act on, not the raw (percent-encoded) path.
    use axum::RequestPartsExt;
    let params = parts
        .extract::<axum::extract::Path<std::collections::BTreeMap<String, String>>>()
        .await
        .map_err(|_| {
            gateway_core::GatewayError::invalid("the path holds a value that is not valid UTF-8")
        })?;
    let object = Object {
        cluster: params.get("cluster").map(String::as_str),
        database: params.get("database").map(String::as_str),
        table: params.get("table").map(String::as_str),
    };
    match crate::otlp::status::target_tables(route.path, &params) {
        // An export writes to tables its path does not name: each must be granted.
        Some(tables) => {
            for table in &tables {
                let object = Object {
                    table: Some(table),
                    ..object
                };
                caller.authorize(route.operation, &object)?;
            }
        }
        None => caller.authorize(route.operation, &object)?,
    }
    Ok(caller)
}

/// The credentials of `headers`: every `x-api-key` and `Authorization` value, so that two of
/// them are refused rather than one picked (API Gateway joins repeated headers, so the first
/// one winning here would make local and deployed answers differ). A value that is not
/// visible ASCII cannot be a credential: it counts as unreadable.
fn presented(headers: &axum::http::HeaderMap) -> Presented<'_> {
    let values = |name: &str| -> Option<Vec<&str>> {
        headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().ok())
            .collect()
    };
    match (values("x-api-key"), values("authorization")) {
        (Some(keys), Some(authorization)) => Presented::from_header_values(&keys, &authorization),
        _ => Presented::Unreadable("a credential header holds bytes that are not visible ASCII"),
    }
}

/// The context a Lambda authorizer attached (HTTP API `authorizer.lambda`, REST API
/// `authorizer`), when the request came through API Gateway.
fn authorizer_context(
    extensions: &axum::http::Extensions,
) -> Option<&std::collections::HashMap<String, serde_json::Value>> {
    use lambda_http::request::RequestContext;
    match extensions.get::<RequestContext>()? {
        RequestContext::ApiGatewayV2(c) => c.authorizer.as_ref().map(|a| &a.fields),
        RequestContext::ApiGatewayV1(c) => Some(&c.authorizer.fields),
        _ => None,
    }
}

/// Resolves to `None` instead of unwinding when the wrapped future panics, so one bad request
/// costs its caller a 500 envelope, not the connection (or, in Lambda, a bare runtime error).
struct CatchPanic<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchPanic<F> {
    type Output = Option<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        // The future is dropped right after a panic and never polled again, so no broken
        // invariant inside it can be observed.
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Ready(v)) => Poll::Ready(Some(v)),
            Ok(Poll::Pending) => Poll::Pending,
            Err(_) => Poll::Ready(None),
        }
    }
}

/// Renders a handler's error, re-renders a framework error in our envelope, and stamps the
/// request id on every response. `unrouted` is the path of a request no route serves.
fn normalise(
    response: Response,
    method: &Method,
    unrouted: Option<&str>,
    request_id: &str,
) -> Response {
    if let Some(PendingError(error)) = response.extensions().get::<PendingError>().cloned() {
        return error_response(&error, request_id);
    }
    let status = response.status();
    let mut response = if (status.is_client_error() || status.is_server_error())
        && response.extensions().get::<Enveloped>().is_none()
    {
        // The `Allow` header of a 405 tells the caller what would work: keep it.
        let allow = response.headers().get(axum::http::header::ALLOW).cloned();
        let error = framework_error(status, method.as_str(), unrouted);
        let mut rendered = error_response(&error, request_id);
        if let Some(allow) = allow {
            rendered
                .headers_mut()
                .insert(axum::http::header::ALLOW, allow);
        }
        rendered
    } else {
        response
    };
    if let Ok(v) = HeaderValue::from_str(request_id) {
        response.headers_mut().insert(REQUEST_ID_HEADER, v);
    }
    response
}

/// Refuses a `Content-Encoding` the decompression layer would not decode (415 in our envelope,
/// naming it) and writes the one it decodes in the form that layer matches (`gzip`, `deflate`,
/// `zstd`).
fn canonical_encoding(
    headers: &mut axum::http::HeaderMap,
) -> Result<(), gateway_core::GatewayError> {
    match crate::checks::supported_encoding(headers)? {
        Some(coding) => {
            headers.insert(
                axum::http::header::CONTENT_ENCODING,
                HeaderValue::from_static(coding),
            );
        }
        None => {
            headers.remove(axum::http::header::CONTENT_ENCODING);
        }
    }
    Ok(())
}

/// Milliseconds since `started`, for log lines.
pub(crate) fn elapsed_ms(started: Instant) -> u64 {
    u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::{Body, to_bytes};
    use axum::http::{Request, StatusCode};
    use axum::routing::{get, post};
    use tower::ServiceExt;

    fn app() -> Router {
        let routes = Router::new()
            .route("/echo", post(|body: axum::body::Bytes| async move { body }))
            .route("/ok", get(|| async { "ok" }));
        build_router(routes, 16, DeadlinePolicy::default())
    }

    async fn envelope(resp: Response) -> serde_json::Value {
        let id = resp.headers()[REQUEST_ID_HEADER]
            .to_str()
            .unwrap()
            .to_owned();
        let body: serde_json::Value =
            serde_json::from_slice(&to_bytes(resp.into_body(), 4096).await.unwrap()).unwrap();
        assert_eq!(body["error"]["request_id"], id.as_str(), "{body}");
        body
    }

    #[tokio::test]
    async fn every_response_has_a_fresh_uuid_request_id() {
        let a = app()
            .oneshot(Request::get("/ok").body(Body::empty()).unwrap())
            .await
            .unwrap();
        let b = app()
            .oneshot(Request::get("/ok").body(Body::empty()).unwrap())
            .await
            .unwrap();
        let (a, b) = (
            &a.headers()[REQUEST_ID_HEADER],
            &b.headers()[REQUEST_ID_HEADER],
        );
        assert_ne!(a, b);
        let parsed = uuid::Uuid::parse_str(a.to_str().unwrap()).unwrap();
        assert_eq!(parsed.get_version_num(), 4);
    }

    #[tokio::test]
    async fn compressed_bodies_are_decoded_within_the_limit_and_answers_compressed_on_request() {
        use std::io::Write as _;
        let gz = |data: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        let post = |coding: &str, body: Vec<u8>| {
            Request::post("/echo")
                .header("content-encoding", coding)
                .body(Body::from(body))
                .unwrap()
        };
        // Decoded for the handler; `X-GZIP` is gzip.
        let resp = app().oneshot(post("X-GZIP", gz(b"hello"))).await.unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
        assert_eq!(to_bytes(resp.into_body(), 64).await.unwrap(), "hello");
        // 16 bytes is the limit: 17 decoded bytes are 413 although 17 zeros compress to fewer.
        let resp = app().oneshot(post("gzip", gz(&[b'0'; 17]))).await.unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(envelope(resp).await["error"]["code"], "limit_exceeded");
        let resp = app().oneshot(post("br", b"x".to_vec())).await.unwrap();
        assert_eq!(resp.status(), StatusCode::UNSUPPORTED_MEDIA_TYPE);
        let body = envelope(resp).await;
        assert_eq!(
            body["error"]["message"],
            "`Content-Encoding` `br` is not supported; send the body as is, or with one of gzip, deflate, zstd"
        );
        let resp = app()
            .oneshot(post("identity", b"plain".to_vec()))
            .await
            .unwrap();
        assert_eq!(to_bytes(resp.into_body(), 64).await.unwrap(), "plain");

        // A large enough answer is gzip when the caller accepts it.
        let big = vec![b'a'; 4096];
        let routes = Router::new().route("/big", get(move || async move { big.clone() }));
        let resp = build_router(routes, 16, DeadlinePolicy::default())
            .oneshot(
                Request::get("/big")
                    .header("accept-encoding", "gzip")
                    .body(Body::empty())
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(resp.headers()["content-encoding"], "gzip");
        let packed = to_bytes(resp.into_body(), 1 << 20).await.unwrap();
        assert!(packed.len() < 200, "{}", packed.len());
    }

    #[tokio::test]
    async fn unknown_routes_and_wrong_methods_answer_in_the_envelope() {
        let resp = app()
            .oneshot(Request::get("/nope").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
        let body = envelope(resp).await;
        assert_eq!(body["error"]["code"], "not_found");
        // Named as the Fluss Gateway names it; a long path is cut short.
        assert_eq!(body["error"]["message"], "no route for GET /nope");
        let long = format!("/{}", "a".repeat(5000));
        let resp = app()
            .oneshot(Request::delete(long.as_str()).body(Body::empty()).unwrap())
            .await
            .unwrap();
        let message = envelope(resp).await["error"]["message"].clone();
        assert_eq!(
            message,
            format!("no route for DELETE /{}…", "a".repeat(199))
        );

        let resp = app()
            .oneshot(Request::get("/echo").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::METHOD_NOT_ALLOWED);
        assert!(resp.headers().get("allow").is_some());
        let body = envelope(resp).await;
        assert_eq!(body["error"]["code"], "method_not_allowed");
        assert_eq!(
            body["error"]["message"],
            "method GET is not allowed on this route"
        );
    }

    #[tokio::test]
    async fn a_panicking_handler_answers_500_internal_without_the_panic_text() {
        let routes = Router::new().route(
            "/boom",
            get(|| async {
                if true {
                    panic!("secret detail");
                }
                "unreachable"
            }),
        );
        let resp = build_router(routes, 16, DeadlinePolicy::default())
            .oneshot(Request::get("/boom").body(Body::empty()).unwrap())
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = envelope(resp).await;
        assert_eq!(body["error"]["code"], "internal");
        assert!(!body.to_string().contains("secret detail"), "{body}");
    }

    #[tokio::test]
    async fn bodies_over_the_limit_answer_413_limit_exceeded() {
        let resp = app()
            .oneshot(
                Request::post("/echo")
                    .body(Body::from(vec![b'x'; 17]))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
        assert_eq!(envelope(resp).await["error"]["code"], "limit_exceeded");
        let resp = app()
            .oneshot(
                Request::post("/echo")
                    .body(Body::from(vec![b'x'; 16]))
                    .unwrap(),
            )
            .await
            .unwrap();
        assert_eq!(resp.status(), StatusCode::OK);
    }
}
