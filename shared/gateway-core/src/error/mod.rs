//! One error type for the whole gateway, with one table mapping it to the wire.
//!
//! Every failure a caller can see is a [`GatewayError`]: an [`ErrorCode`] (which fixes the HTTP
//! status, the stable snake_case wire code and any `Retry-After`) plus a client-safe message.
//! The codes and statuses are those of the Apache Fluss Gateway 1.0, so its clients can match on
//! them unchanged. Internal detail (addresses, server stack traces) never goes into the message:
//! log it where the error is created.
//!
//! The mapping of fluss-rs errors, and the rule for which server text a caller may see, is
//! `fluss` (the submodule; `::fluss` is the crate).

mod fluss;

use std::fmt;

use ::fluss::rpc::FlussError;
use serde::Serialize;

pub use self::fluss::{code_for_fluss_api_error, is_client_safe};

/// The stable wire codes. Each variant's row in [`ErrorCode::spec`] gives its HTTP status, its
/// code string and whether a `Retry-After` header goes with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// 400: the request is malformed or names something invalid.
    InvalidArgument,
    /// 401: no or bad credentials.
    Unauthenticated,
    /// 403: the caller may not do this.
    Unauthorized,
    /// 404: no such route or resource of an unnamed kind.
    NotFound,
    /// 404: the `{cluster}` path segment names no configured cluster.
    ClusterNotFound,
    /// 404: no such database.
    DatabaseNotFound,
    /// 404: no such table.
    TableNotFound,
    /// 404: no such partition.
    PartitionNotFound,
    /// 405: the route exists but not for this method.
    MethodNotAllowed,
    /// 406: the `Accept` header excludes JSON.
    NotAcceptable,
    /// 409: the resource exists already (unnamed kind).
    AlreadyExists,
    /// 409: the database exists already.
    DatabaseAlreadyExists,
    /// 409: the table exists already.
    TableAlreadyExists,
    /// 409: the partition exists already.
    PartitionAlreadyExists,
    /// 409: the resource is not in the state the request needs.
    FailedPrecondition,
    /// 409: the database still has tables.
    DatabaseNotEmpty,
    /// 409: a request with this `Idempotency-Key` is still running; retry after a second.
    IdempotencyKeyInUse,
    /// 413: a size or count limit was exceeded.
    LimitExceeded,
    /// 415: the body is not JSON.
    UnsupportedMediaType,
    /// 422: this `Idempotency-Key` was used with a different request body.
    IdempotencyKeyReused,
    /// 429: a gateway limit (concurrency gate, writer buffer) is full; retry after a second.
    ResourceExhausted,
    /// 429: Fluss refused a KV write under storage backpressure; retry after a second.
    StorageBackpressure,
    /// 499: the caller went away.
    Cancelled,
    /// 500: an unclassified failure reported by Fluss.
    Backend,
    /// 500: a bug in the gateway.
    Internal,
    /// 501: not supported by this gateway or by the Fluss server.
    Unsupported,
    /// 503: Fluss is unreachable or temporarily unable to serve; retry after a second.
    Unavailable,
    /// 504: the deadline passed before Fluss answered; for writes the outcome is unknown.
    Timeout,
}

/// Static description of one [`ErrorCode`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorSpec {
    /// HTTP status.
    pub status: u16,
    /// Stable snake_case wire code.
    pub code: &'static str,
    /// Seconds for `Retry-After`, when the error invites a retry.
    pub retry_after_secs: Option<u32>,
}

const fn spec(status: u16, code: &'static str, retry_after_secs: Option<u32>) -> ErrorSpec {
    ErrorSpec {
        status,
        code,
        retry_after_secs,
    }
}

impl ErrorCode {
    /// Every code, for tests and documentation checks that must not forget one.
    pub const ALL: [ErrorCode; 28] = [
        ErrorCode::InvalidArgument,
        ErrorCode::Unauthenticated,
        ErrorCode::Unauthorized,
        ErrorCode::NotFound,
        ErrorCode::ClusterNotFound,
        ErrorCode::DatabaseNotFound,
        ErrorCode::TableNotFound,
        ErrorCode::PartitionNotFound,
        ErrorCode::MethodNotAllowed,
        ErrorCode::NotAcceptable,
        ErrorCode::AlreadyExists,
        ErrorCode::DatabaseAlreadyExists,
        ErrorCode::TableAlreadyExists,
        ErrorCode::PartitionAlreadyExists,
        ErrorCode::FailedPrecondition,
        ErrorCode::DatabaseNotEmpty,
        ErrorCode::IdempotencyKeyInUse,
        ErrorCode::LimitExceeded,
        ErrorCode::UnsupportedMediaType,
        ErrorCode::IdempotencyKeyReused,
        ErrorCode::ResourceExhausted,
        ErrorCode::StorageBackpressure,
        ErrorCode::Cancelled,
        ErrorCode::Backend,
        ErrorCode::Internal,
        ErrorCode::Unsupported,
        ErrorCode::Unavailable,
        ErrorCode::Timeout,
    ];

    /// The one table from code to wire: status, code string, `Retry-After`.
    pub const fn spec(self) -> ErrorSpec {
        use ErrorCode::*;
        match self {
            InvalidArgument => spec(400, "invalid_argument", None),
            Unauthenticated => spec(401, "unauthenticated", None),
            Unauthorized => spec(403, "unauthorized", None),
            NotFound => spec(404, "not_found", None),
            ClusterNotFound => spec(404, "cluster_not_found", None),
            DatabaseNotFound => spec(404, "database_not_found", None),
            TableNotFound => spec(404, "table_not_found", None),
            PartitionNotFound => spec(404, "partition_not_found", None),
            MethodNotAllowed => spec(405, "method_not_allowed", None),
            NotAcceptable => spec(406, "not_acceptable", None),
            AlreadyExists => spec(409, "already_exists", None),
            DatabaseAlreadyExists => spec(409, "database_already_exists", None),
            TableAlreadyExists => spec(409, "table_already_exists", None),
            PartitionAlreadyExists => spec(409, "partition_already_exists", None),
            FailedPrecondition => spec(409, "failed_precondition", None),
            DatabaseNotEmpty => spec(409, "database_not_empty", None),
            IdempotencyKeyInUse => spec(409, "idempotency_key_in_use", Some(1)),
            LimitExceeded => spec(413, "limit_exceeded", None),
            UnsupportedMediaType => spec(415, "unsupported_media_type", None),
            IdempotencyKeyReused => spec(422, "idempotency_key_reused", None),
            ResourceExhausted => spec(429, "resource_exhausted", Some(1)),
            StorageBackpressure => spec(429, "storage_backpressure", Some(1)),
            Cancelled => spec(499, "cancelled", None),
            Backend => spec(500, "backend", None),
            Internal => spec(500, "internal", None),
            Unsupported => spec(501, "unsupported", None),
            Unavailable => spec(503, "unavailable", Some(1)),
            Timeout => spec(504, "timeout", Some(1)),
        }
    }

    /// HTTP status of this code.
    pub const fn http_status(self) -> u16 {
        self.spec().status
    }

    /// The snake_case wire code.
    pub const fn as_str(self) -> &'static str {
        self.spec().code
    }

    /// Seconds for the `Retry-After` header, if any.
    pub const fn retry_after_secs(self) -> Option<u32> {
        self.spec().retry_after_secs
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for ErrorCode {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// A failure as the caller sees it: a code and a client-safe message, plus, for the log only,
/// the server text it replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayError {
    code: ErrorCode,
    message: String,
    /// What Fluss said, when it was not fit for the caller (Java class names, internal paths,
    /// addresses). Never rendered; the render path logs it with the request id.
    detail: Option<String>,
    /// Whether cached table metadata may explain the failure. Never rendered.
    stale: Staleness,
}

/// Why a failure may come from cached table metadata that is out of date: the table layer
/// reloads the table once on such an error before the caller sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Staleness {
    /// Nothing points at stale metadata.
    No,
    /// The input named a column the cached schema lacks: a newer schema (a column added
    /// outside the gateway) may have it.
    Column,
    /// A server did not know the table id (UNKNOWN_TABLE_OR_BUCKET): the table may have been
    /// dropped or recreated outside the gateway.
    TableId,
}

/// UNKNOWN_TABLE_OR_BUCKET_EXCEPTION: a server does not know the table id (or bucket) sent.
const UNKNOWN_TABLE_OR_BUCKET: i32 = FlussError::UnknownTableOrBucketException as i32;

impl GatewayError {
    /// An error with `code` and a message that is safe to show to the caller.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        GatewayError {
            code,
            message: message.into(),
            detail: None,
            stale: Staleness::No,
        }
    }

    /// 400 `invalid_argument` for input naming a column the table's schema lacks; the table
    /// layer reloads a cached schema once on it before the caller sees it.
    pub fn unknown_column(message: impl Into<String>) -> Self {
        GatewayError {
            stale: Staleness::Column,
            ..Self::invalid(message)
        }
    }

    /// Whether this error names a column the schema it was checked against lacks.
    pub fn is_unknown_column(&self) -> bool {
        self.stale == Staleness::Column
    }

    /// The same error, marked as a possible sign of a stale table id when the server's
    /// `raw_code` is UNKNOWN_TABLE_OR_BUCKET (the table was dropped or recreated elsewhere).
    pub fn with_server_code(mut self, raw_code: i32) -> Self {
        if raw_code == UNKNOWN_TABLE_OR_BUCKET {
            self.stale = Staleness::TableId;
        }
        self
    }

    /// Whether a server did not know the table id this error's call used: a cached table
    /// handle may be stale (dropped or recreated outside the gateway).
    pub fn is_unknown_table_id(&self) -> bool {
        self.stale == Staleness::TableId
    }

    /// The same error carrying `detail` for the log (never for the caller).
    pub fn with_detail(mut self, detail: impl Into<String>) -> Self {
        self.detail = Some(detail.into());
        self
    }

    /// The server text withheld from the caller, if any: for the log line of this request.
    pub fn detail(&self) -> Option<&str> {
        self.detail.as_deref()
    }

    /// 400 `invalid_argument`.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidArgument, message)
    }

    /// 413 `limit_exceeded`.
    pub fn limit(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::LimitExceeded, message)
    }

    /// 500 `internal`, for states the gateway should never reach.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Internal, message)
    }

    /// The wire code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The client-safe message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// HTTP status to answer with.
    pub fn http_status(&self) -> u16 {
        self.code.http_status()
    }

    /// The JSON envelope `{"error":{"code","message","request_id"}}`.
    pub fn envelope<'a>(&'a self, request_id: &'a str) -> ErrorEnvelope<'a> {
        ErrorEnvelope {
            error: ErrorBody {
                code: self.code,
                message: &self.message,
                request_id,
            },
        }
    }
}

impl fmt::Display for GatewayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for GatewayError {}

/// The error body on the wire.
#[derive(Debug, Serialize)]
pub struct ErrorEnvelope<'a> {
    /// The error itself.
    pub error: ErrorBody<'a>,
}

/// Content of [`ErrorEnvelope`].
#[derive(Debug, Serialize)]
pub struct ErrorBody<'a> {
    /// Stable wire code.
    pub code: ErrorCode,
    /// Client-safe message.
    pub message: &'a str,
    /// Id of the request, also sent as the `x-request-id` header.
    pub request_id: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_table_is_frozen() {
        let table: Vec<(u16, &str, Option<u32>)> = ErrorCode::ALL
            .iter()
            .map(|c| (c.http_status(), c.as_str(), c.retry_after_secs()))
            .collect();
        assert_eq!(
            table,
            vec![
                (400, "invalid_argument", None),
                (401, "unauthenticated", None),
                (403, "unauthorized", None),
                (404, "not_found", None),
                (404, "cluster_not_found", None),
                (404, "database_not_found", None),
                (404, "table_not_found", None),
                (404, "partition_not_found", None),
                (405, "method_not_allowed", None),
                (406, "not_acceptable", None),
                (409, "already_exists", None),
                (409, "database_already_exists", None),
                (409, "table_already_exists", None),
                (409, "partition_already_exists", None),
                (409, "failed_precondition", None),
                (409, "database_not_empty", None),
                (409, "idempotency_key_in_use", Some(1)),
                (413, "limit_exceeded", None),
                (415, "unsupported_media_type", None),
                (422, "idempotency_key_reused", None),
                (429, "resource_exhausted", Some(1)),
                (429, "storage_backpressure", Some(1)),
                (499, "cancelled", None),
                (500, "backend", None),
                (500, "internal", None),
                (501, "unsupported", None),
                (503, "unavailable", Some(1)),
                (504, "timeout", Some(1)),
            ]
        );
    }

    #[test]
    fn envelope_has_exactly_code_message_and_request_id() {
        let e = GatewayError::new(ErrorCode::TableNotFound, "table `db.t` does not exist");
        let json = serde_json::to_value(e.envelope("req-1")).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"error":{"code":"table_not_found","message":"table `db.t` does not exist","request_id":"req-1"}})
        );
    }
}
