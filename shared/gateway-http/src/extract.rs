//! What a handler takes: the request context (one extractor gives request id, principal,
//! identity and deadline), and the request's query, headers and body read but not judged, so
//! each handler runs its checks in the order its route documents. Handlers return
//! `Result<_, ApiError>`; the request-context middleware renders the error with the request id.
//!
//! Refuses: deciding statuses (they come from `gateway_core::ErrorCode`) and route logic.

use std::convert::Infallible;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{FromRequest, FromRequestParts, Path, Request};
use axum::http::{HeaderMap, Uri};
use axum::response::{IntoResponse, Response};
use gateway_core::GatewayError;
use gateway_core::codec::arrow::{ArrowBody, ArrowLimits};
use gateway_core::wire::{
    AlterClusterConfigsRequest, AlterTableRequest, CreateDatabaseRequest, CreatePartitionRequest,
    CreateTableRequest, LookupRequest, NdjsonBody, PrefixLookupRequest, ReadRequest, ScanRequest,
    WriteRequest,
};
use serde::de::DeserializeOwned;

use crate::checks::{
    JSON, body_error, ensure_accepts_json, ensure_json_content_type, ensure_no_query, negotiate,
};
use crate::context::RequestCtx;

/// The query, headers and body of a request, read but not judged.
pub struct Input {
    uri: Uri,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
}

impl<S: Send + Sync> FromRequest<S> for Input {
    type Rejection = Infallible;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let uri = req.uri().clone();
        let headers = req.headers().clone();
        // The body limit of the router applies here (a rejection becomes 413 when read).
        let body = Bytes::from_request(req, state).await;
        Ok(Input { uri, headers, body })
    }
}

/// What every route handler takes besides its family's state, extracted in one order: the
/// request context, the path parameters `P` (as sent, names not yet checked) and the input.
pub struct Routed<P>(pub RequestCtx, pub P, pub Input);

impl<S: Send + Sync, P: DeserializeOwned + Send> FromRequest<S> for Routed<P> {
    type Rejection = Response;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let (mut parts, body) = req.into_parts();
        let ctx = RequestCtx::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let Path(params) = Path::<P>::from_request_parts(&mut parts, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let input = match Input::from_request(Request::from_parts(parts, body), state).await {
            Ok(input) => input,
            Err(never) => match never {},
        };
        Ok(Routed(ctx, params, input))
    }
}

impl Input {
    /// The raw query string, if any.
    pub fn query(&self) -> Option<&str> {
        self.uri.query()
    }

    /// The request headers.
    pub fn headers(&self) -> &HeaderMap {
        &self.headers
    }

    /// 400 when the route takes no query parameters and got some.
    pub fn ensure_no_query(&self) -> Result<(), GatewayError> {
        ensure_no_query(&self.uri)
    }

    /// The checks every JSON POST on a table runs before reading its body: no query string
    /// (400), a JSON body (415), a JSON answer acceptable (406).
    pub fn ensure_json_post(&self) -> Result<(), GatewayError> {
        self.ensure_json_post_answering(&[JSON]).map(|_| ())
    }

    /// As [`Input::ensure_json_post`] for a route that can answer in any of `offered`: the
    /// media type `Accept` prefers (406 when none).
    pub fn ensure_json_post_answering(
        &self,
        offered: &[&'static str],
    ) -> Result<&'static str, GatewayError> {
        ensure_no_query(&self.uri)?;
        ensure_json_content_type(&self.headers)?;
        negotiate(&self.headers, offered)
    }

    /// 406 unless the caller accepts a JSON answer.
    pub fn ensure_accepts_json(&self) -> Result<(), GatewayError> {
        ensure_accepts_json(&self.headers)
    }

    /// The `Content-Type` as sent (empty when absent or not text).
    pub fn content_type(&self) -> &str {
        self.headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    /// The body bytes, decoded, when they could be read (a body over the limit is not).
    pub fn body(&self) -> Option<&[u8]> {
        self.body.as_ref().ok().map(|b| b.as_ref())
    }

    /// Whether the body is declared newline-delimited JSON (`application/x-ndjson`).
    pub fn is_ndjson(&self) -> bool {
        self.headers
            .get(axum::http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(crate::checks::is_ndjson_media_type)
    }

    /// Whether the body is declared an Arrow IPC stream (`application/vnd.apache.arrow.stream`).
    pub fn is_arrow(&self) -> bool {
        crate::checks::is_arrow_media_type(self.content_type())
    }

    /// The body as an Arrow IPC stream (the caller checked [`Input::is_arrow`]), read within
    /// `limits`: 413/400 when unreadable, over a limit or malformed.
    pub fn arrow(self, limits: ArrowLimits) -> Result<ArrowBody, GatewayError> {
        let body = self.body.map_err(body_error)?;
        ArrowBody::read(body, limits)
    }

    /// The body as NDJSON write lines (the caller checked [`Input::is_ndjson`]): 413/400 when
    /// unreadable, 400 naming the line that does not parse.
    pub fn ndjson(self) -> Result<NdjsonBody, GatewayError> {
        let body = self.body.map_err(body_error)?;
        NdjsonBody::parse(&body)
    }

    /// The body bytes of a JSON body, unparsed (the write route decodes them against the table
    /// schema): 415 unless declared JSON, 413/400 when unreadable.
    pub fn json_bytes(self) -> Result<Bytes, GatewayError> {
        // The write route's refusal names its one more type, NDJSON, after the official words.
        ensure_json_content_type(&self.headers).map_err(|e| {
            GatewayError::new(
                e.code(),
                format!(
                    "{}, application/x-ndjson or {}",
                    e.message(),
                    crate::checks::ARROW_STREAM
                ),
            )
        })?;
        self.body.map_err(body_error)
    }

    /// The body as `T`: 415 unless declared JSON, 413/400 when unreadable, 400 naming the
    /// problem when it does not parse (see [`ParseBody`]).
    pub fn json<T: ParseBody>(self) -> Result<T, GatewayError> {
        ensure_json_content_type(&self.headers)?;
        let body = self.body.map_err(body_error)?;
        T::parse(&body)
    }
}

/// A request body type and how it is parsed: serde's shape, then the type's own checks. Every
/// route parses its body through this one trait.
pub trait ParseBody: Sized {
    /// Parses and checks `body`; every problem is a 400 naming it.
    fn parse(body: &[u8]) -> Result<Self, GatewayError>;
}

/// serde's reading of `body` as `T`; a failure is 400 naming the request kind and serde's reason
/// (field, line, column — never the body itself).
pub fn serde_body<T: DeserializeOwned>(body: &[u8], what: &str) -> Result<T, GatewayError> {
    serde_json::from_slice(body).map_err(|e| {
        GatewayError::invalid(format!(
            "the request body is not a valid {what} request: {e}"
        ))
    })
}

impl ParseBody for WriteRequest {
    fn parse(body: &[u8]) -> Result<Self, GatewayError> {
        WriteRequest::from_json_slice(body)
    }
}

macro_rules! serde_bodies {
    ($($ty:ty => $what:literal),* $(,)?) => {
        $(impl ParseBody for $ty {
            fn parse(body: &[u8]) -> Result<Self, GatewayError> {
                serde_body(body, $what)
            }
        })*
    };
}

impl ParseBody for LookupRequest {
    fn parse(body: &[u8]) -> Result<Self, GatewayError> {
        serde_body::<Self>(body, "lookup").map(|r| r.with_number_texts(body))
    }
}

impl ParseBody for PrefixLookupRequest {
    fn parse(body: &[u8]) -> Result<Self, GatewayError> {
        serde_body::<Self>(body, "prefix lookup").map(|r| r.with_number_texts(body))
    }
}

serde_bodies! {
    CreateDatabaseRequest => "create database",
    CreateTableRequest => "create table",
    AlterTableRequest => "alter table",
    CreatePartitionRequest => "create partition",
    ScanRequest => "scan",
    ReadRequest => "read",
}

impl ParseBody for AlterClusterConfigsRequest {
    fn parse(body: &[u8]) -> Result<Self, GatewayError> {
        let request: AlterClusterConfigsRequest = serde_body(body, "cluster configs")?;
        request.ensure_valid()?;
        if let Some(position) = request
            .changes
            .iter()
            .position(|c| c.key().trim().is_empty())
        {
            return Err(GatewayError::invalid(format!(
                "`changes[{position}].key` must not be empty"
            )));
        }
        Ok(request)
    }
}
