//! The OTLP form of answers and the tables an export is authorized for: what the
//! request-context middleware needs of the OTLP routes (kept apart from their handlers, which
//! use the middleware).

use std::collections::BTreeMap;

use axum::http::{HeaderValue, header};
use axum::response::Response;
use gateway_core::GatewayError;
use gateway_core::otlp::{DEFAULT_PREFIX, Encoding, status_body};

use crate::error::error_response;

/// `error` as the OTLP specification answers it: its status and headers (`Retry-After`,
/// `x-request-id`) as every route renders them, the body a `google.rpc.Status` in `encoding`.
pub(crate) fn status_response(
    error: &GatewayError,
    request_id: &str,
    encoding: Encoding,
) -> Response {
    let mut response = error_response(error, request_id);
    let body = status_body(response.status().as_u16(), error.message(), encoding);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(encoding.content_type()),
    );
    response.extensions_mut().insert(OtlpAnswer);
    let (parts, _) = response.into_parts();
    Response::from_parts(parts, axum::body::Body::from(body))
}

/// The tables an export route writes to, for authorization: the caller needs the `write` scope
/// on each (`None` for any other route). Names are composed, not checked, here: the handler
/// checks them before any Fluss call.
pub(crate) fn target_tables(
    template: &str,
    params: &BTreeMap<String, String>,
) -> Option<Vec<String>> {
    let signal = gateway_core::routes::otlp_signal(template)?;
    let prefix = params.get("prefix").map_or(DEFAULT_PREFIX, String::as_str);
    Some(signal.tables().iter().map(|t| t.name(prefix)).collect())
}

/// Marks an answer already in the OTLP form, so [`as_status`] leaves it alone.
#[derive(Debug, Clone, Copy)]
struct OtlpAnswer;

/// An error answered before the handler (401, 403, 405, 413, a body that does not decompress)
/// in the OTLP form: the same status and headers, the envelope's message in a
/// `google.rpc.Status` in the request's encoding.
pub(crate) async fn as_status(response: Response, content_type: Option<&str>) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error())
        || response.extensions().get::<OtlpAnswer>().is_some()
    {
        return response;
    }
    let encoding = Encoding::from_content_type(content_type).unwrap_or(Encoding::Json);
    let (mut parts, body) = response.into_parts();
    // Our envelope is a few hundred bytes; anything longer is cut, never buffered whole.
    let bytes = axum::body::to_bytes(body, 64 * 1024)
        .await
        .unwrap_or_default();
    let message = serde_json::from_slice::<serde_json::Value>(&bytes)
        .ok()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
        .unwrap_or_else(|| status.canonical_reason().unwrap_or("error").to_owned());
    parts.headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(encoding.content_type()),
    );
    parts.headers.remove(header::CONTENT_LENGTH);
    parts.headers.remove(header::CONTENT_ENCODING);
    let body = status_body(status.as_u16(), &message, encoding);
    Response::from_parts(parts, axum::body::Body::from(body))
}
