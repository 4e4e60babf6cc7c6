//! The one render path of errors: every non-2xx answer of the gateway leaves here, in the
//! `{"error":{"code","message","request_id"}}` envelope, with `Retry-After` where the code asks
//! for it. This module refuses to decide codes: they come from `gateway_core::ErrorCode`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use gateway_core::{ErrorCode, GatewayError};

/// Response extension marking a body that already is our envelope, so the normalising layer
/// leaves it alone (a framework 404/405/413 carries no such mark and is re-rendered).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Enveloped;

/// Header carrying the request id on every response.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// Renders `error` for the request `request_id`: its status, the JSON envelope, `Retry-After`
/// when the code is retryable, and `x-request-id`.
pub fn error_response(error: &GatewayError, request_id: &str) -> Response {
    if let Some(detail) = error.detail() {
        // What Fluss said, withheld from the caller; the request id joins it to the answer.
        // (Fluss server text, or why a credential was refused.)
        tracing::warn!(request_id, code = %error.code(), detail, "error detail withheld from the caller");
    }
    let status =
        StatusCode::from_u16(error.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    // Serialising a struct of strings cannot fail; the fallback keeps the path panic-free anyway.
    let body = serde_json::to_vec(&error.envelope(request_id)).unwrap_or_else(|_| {
        br#"{"error":{"code":"internal","message":"error rendering failed","request_id":""}}"#
            .to_vec()
    });
    let mut response = (
        status,
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response();
    let headers = response.headers_mut();
    if let Some(secs) = error.code().retry_after_secs() {
        headers.insert(header::RETRY_AFTER, HeaderValue::from(secs));
    }
    if let Ok(v) = HeaderValue::from_str(request_id) {
        headers.insert(REQUEST_ID_HEADER, v);
    }
    response.extensions_mut().insert(Enveloped);
    response
}

/// Our error for a status the framework answered by itself (no route, wrong method, an
/// extractor's rejection). Its own body is plain text meant for developers, so it is replaced
/// by a fixed client-safe message. `unrouted`, the path of a request no route serves, is
/// named as the Fluss Gateway names it (`no route for GET /v2/x`), cut to a bounded length.
pub(crate) fn framework_error(
    status: StatusCode,
    method: &str,
    unrouted: Option<&str>,
) -> GatewayError {
    let (code, message) = match status {
        StatusCode::NOT_FOUND => (
            ErrorCode::NotFound,
            match unrouted {
                Some(path) => format!("no route for {method} {}", clip_path(path)),
                None => "no such route".to_owned(),
            },
        ),
        StatusCode::METHOD_NOT_ALLOWED => (
            ErrorCode::MethodNotAllowed,
            format!("method {method} is not allowed on this route"),
        ),
        StatusCode::NOT_ACCEPTABLE => (
            ErrorCode::NotAcceptable,
            "the response can only be application/json".to_owned(),
        ),
        StatusCode::PAYLOAD_TOO_LARGE => (
            ErrorCode::LimitExceeded,
            "the request body is too large".to_owned(),
        ),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => (
            ErrorCode::UnsupportedMediaType,
            "Content-Type must be application/json or application/*+json".to_owned(),
        ),
        StatusCode::TOO_MANY_REQUESTS => (
            ErrorCode::ResourceExhausted,
            "too many concurrent requests; retry later".to_owned(),
        ),
        StatusCode::SERVICE_UNAVAILABLE => (
            ErrorCode::Unavailable,
            "the service is unavailable".to_owned(),
        ),
        StatusCode::GATEWAY_TIMEOUT => (ErrorCode::Timeout, "request deadline exceeded".to_owned()),
        s if s.is_client_error() => (
            ErrorCode::InvalidArgument,
            "the request is malformed".to_owned(),
        ),
        _ => (ErrorCode::Internal, "internal error".to_owned()),
    };
    GatewayError::new(code, message)
}

/// The longest path a 404 repeats: a request line may be kilobytes long, an answer stays short.
const MAX_SHOWN_PATH: usize = 200;

/// `path` as an answer shows it: at most [`MAX_SHOWN_PATH`] characters, then `…`.
fn clip_path(path: &str) -> std::borrow::Cow<'_, str> {
    match path.char_indices().nth(MAX_SHOWN_PATH) {
        Some((end, _)) => format!("{}…", &path[..end]).into(),
        None => path.into(),
    }
}

/// A handler's error: rendered by the request-context middleware, the one place that knows the
/// request id, through `crate::error_response`.
#[derive(Debug)]
pub struct ApiError(pub GatewayError);

impl From<GatewayError> for ApiError {
    fn from(e: GatewayError) -> Self {
        ApiError(e)
    }
}

/// The error a handler returned, carried in the response extensions to the middleware.
#[derive(Debug, Clone)]
pub(crate) struct PendingError(pub(crate) GatewayError);

impl axum::response::IntoResponse for ApiError {
    fn into_response(self) -> axum::response::Response {
        let status = axum::http::StatusCode::from_u16(self.0.http_status())
            .unwrap_or(axum::http::StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = status.into_response();
        response.extensions_mut().insert(PendingError(self.0));
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::to_bytes;

    #[tokio::test]
    async fn retryable_errors_carry_retry_after_and_every_error_the_request_id() {
        let err = GatewayError::new(ErrorCode::ResourceExhausted, "busy");
        let resp = error_response(&err, "rid-1");
        assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(resp.headers()[header::RETRY_AFTER], "1");
        assert_eq!(resp.headers()[REQUEST_ID_HEADER], "rid-1");
        let body: serde_json::Value =
            serde_json::from_slice(&to_bytes(resp.into_body(), 4096).await.unwrap()).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"error":{"code":"resource_exhausted","message":"busy","request_id":"rid-1"}})
        );

        let resp = error_response(&GatewayError::invalid("bad"), "rid-2");
        assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
        assert!(resp.headers().get(header::RETRY_AFTER).is_none());
    }

    #[test]
    fn framework_statuses_map_to_wire_codes() {
        for (status, code) in [
            (StatusCode::NOT_FOUND, ErrorCode::NotFound),
            (StatusCode::METHOD_NOT_ALLOWED, ErrorCode::MethodNotAllowed),
            (StatusCode::PAYLOAD_TOO_LARGE, ErrorCode::LimitExceeded),
            (
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                ErrorCode::UnsupportedMediaType,
            ),
            (StatusCode::UNPROCESSABLE_ENTITY, ErrorCode::InvalidArgument),
            (StatusCode::INTERNAL_SERVER_ERROR, ErrorCode::Internal),
        ] {
            assert_eq!(
                framework_error(status, "GET", None).code(),
                code,
                "{status}"
            );
        }
    }
}
