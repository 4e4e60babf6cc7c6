//! One error type for the whole gateway, with one table mapping it to the wire.
//!
//! Every failure a caller can see is a [`GatewayError`]: an [`ErrorCode`] (which fixes the HTTP
//! status, the stable snake_case wire code and any `Retry-After`) plus a client-safe message.
//! The codes and statuses are those of the Apache Fluss Gateway 1.0, so its clients can match on
//! them unchanged. Internal detail (addresses, server stack traces) never goes into the message:
//! log it where the error is created.

use std::fmt;

use fluss::error::Error as FlussClientError;
use fluss::rpc::FlussError;
use serde::Serialize;

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

/// Fluss server codes unknown to fluss-rs 1.0.0 (they collapse to `UnknownServerError`), kept as
/// raw integers by admin calls: NOT_COORDINATOR_LEADER, DISK_WRITE_LOCKED,
/// INSUFFICIENT_KV_LEADER_REPLICA_CAPACITY and HISTORICAL_PARTITION_THROTTLED are transient.
const UNNAMED_TRANSIENT_CODES: [i32; 4] = [65, 70, 71, 73];
/// CONFIG_EXCEPTION: a cluster config change the server refused.
const UNNAMED_CONFIG_EXCEPTION: i32 = 64;

/// Longest server message passed on to callers; the rest is cut (it goes to the log anyway).
const MAX_SERVER_MESSAGE_CHARS: usize = 300;

/// The code a Fluss server error code maps to.
pub fn code_for_fluss_api_error(raw_code: i32) -> ErrorCode {
    use FlussError as F;
    if UNNAMED_TRANSIENT_CODES.contains(&raw_code) {
        return ErrorCode::Unavailable;
    }
    if raw_code == UNNAMED_CONFIG_EXCEPTION {
        return ErrorCode::InvalidArgument;
    }
    let f = FlussError::for_code(raw_code);
    match f {
        F::DatabaseNotExist => ErrorCode::DatabaseNotFound,
        F::TableNotExist => ErrorCode::TableNotFound,
        F::PartitionNotExists => ErrorCode::PartitionNotFound,
        // Right after an ALTER TABLE the servers briefly disagree on the latest schema id: a
        // retry succeeds, so this is 503, not 404.
        F::SchemaNotExist => ErrorCode::Unavailable,
        F::KvSnapshotNotExist | F::LakeSnapshotNotExist => ErrorCode::NotFound,
        F::DatabaseAlreadyExist => ErrorCode::DatabaseAlreadyExists,
        F::TableAlreadyExist => ErrorCode::TableAlreadyExists,
        F::PartitionAlreadyExists => ErrorCode::PartitionAlreadyExists,
        F::LakeTableAlreadyExist => ErrorCode::AlreadyExists,
        F::DatabaseNotEmpty => ErrorCode::DatabaseNotEmpty,
        F::InvalidUpdateVersionException | F::FencedTieringEpochException => {
            ErrorCode::FailedPrecondition
        }
        F::InvalidTableException
        | F::InvalidDatabaseException
        | F::InvalidReplicationFactor
        | F::InvalidRequiredAcks
        | F::NonPrimaryKeyTableException
        | F::InvalidColumnProjection
        | F::InvalidTargetColumn
        | F::TableNotPartitionedException
        | F::InvalidTimestampException
        | F::InvalidConfigException
        | F::LakeStorageNotConfiguredException
        | F::PartitionSpecInvalidException
        | F::PartitionMaxNumException
        | F::BucketMaxNumException
        | F::InvalidServerRackInfoException
        | F::IneligibleReplicaException
        | F::InvalidAlterTableException
        | F::SecurityDisabledException
        | F::DeletionDisabledException => ErrorCode::InvalidArgument,
        F::RecordTooLargeException => ErrorCode::LimitExceeded,
        F::AuthenticateException => ErrorCode::Unauthenticated,
        F::AuthorizationException => ErrorCode::Unauthorized,
        F::StorageBackpressureException => ErrorCode::StorageBackpressure,
        F::RequestTimeOut => ErrorCode::Timeout,
        F::UnsupportedVersion => ErrorCode::Unsupported,
        F::None => ErrorCode::Internal,
        f if f.is_retriable() => ErrorCode::Unavailable,
        F::InvalidCoordinatorException
        | F::FencedLeaderEpochException
        | F::OperationNotAttemptedException
        | F::UnknownWriterIdException
        | F::RetriableAuthenticateException => ErrorCode::Unavailable,
        _ => ErrorCode::Backend,
    }
}

fn server_message(raw: &str) -> String {
    // First line only: Java servers append stack traces after it.
    let first = raw.lines().next().unwrap_or("").trim();
    let mut out: String = first.chars().take(MAX_SERVER_MESSAGE_CHARS).collect();
    if first.chars().count() > MAX_SERVER_MESSAGE_CHARS {
        out.push('…');
    }
    out
}

/// The codes whose server messages are passed on: they describe the caller's own request or
/// resource ("The config key a.b is not allowed to be changed dynamically."). Everything else
/// (unavailable, timeouts, unclassified server failures) gets a message of ours.
const fn passes_server_text(code: ErrorCode) -> bool {
    use ErrorCode as C;
    matches!(
        code,
        C::InvalidArgument
            | C::NotFound
            | C::DatabaseNotFound
            | C::TableNotFound
            | C::PartitionNotFound
            | C::AlreadyExists
            | C::DatabaseAlreadyExists
            | C::TableAlreadyExists
            | C::PartitionAlreadyExists
            | C::DatabaseNotEmpty
            | C::FailedPrecondition
            | C::LimitExceeded
            | C::Unsupported
            | C::Unauthorized
            | C::Unauthenticated
            | C::StorageBackpressure
    )
}

/// Marks of server internals no caller may see: Java class and package names, stack frames,
/// ZooKeeper and file paths.
const INTERNAL_MARKS: [&str; 8] = [
    "Exception",
    "java.",
    "org.apache",
    "/fluss/",
    "\tat ",
    "Caused by",
    "zookeeper",
    "ZooKeeper",
];

/// Whether a (first-line, bounded) server text may reach the caller verbatim: no internal marks,
/// no control characters, no path with two or more segments, no IPv4 address.
pub fn is_client_safe(text: &str) -> bool {
    if text.is_empty() || text.chars().any(char::is_control) {
        return false;
    }
    if INTERNAL_MARKS.iter().any(|m| text.contains(m)) {
        return false;
    }
    !text.split_whitespace().any(|token| {
        let token = token.trim_matches(|c: char| "`'\"()[]{},;".contains(c));
        token.matches('/').count() >= 2 || looks_like_ipv4(token)
    })
}

fn looks_like_ipv4(token: &str) -> bool {
    let host = token.split(':').next().unwrap_or("");
    let parts: Vec<&str> = host.split('.').collect();
    parts.len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 3 && p.bytes().all(|b| b.is_ascii_digit()))
}

/// Our own words for a server failure whose text is withheld.
fn withheld_message(code: ErrorCode, raw_code: i32) -> String {
    match code {
        ErrorCode::Unavailable => {
            format!("the Fluss cluster is unavailable; retry later (server error code {raw_code})")
        }
        ErrorCode::Timeout => {
            format!("Fluss did not answer in time (server error code {raw_code})")
        }
        _ => format!("Fluss could not complete the request (server error code {raw_code})"),
    }
}

impl From<&FlussClientError> for GatewayError {
    /// Maps a fluss-rs error to the wire. Server messages reach the caller only through an
    /// allow-list (a code whose message is about the caller's request, and a text free of
    /// internals, first line, bounded); otherwise the message is ours and the server's text is
    /// kept as the log-only detail. Client-side failures get fixed messages because theirs may
    /// hold addresses.
    fn from(e: &FlussClientError) -> Self {
        match e {
            FlussClientError::FlussAPIError { api_error } => {
                let code = code_for_fluss_api_error(api_error.code);
                let msg = server_message(&api_error.message);
                if code == ErrorCode::Backend
                    && let Some(reason) = refused_config_reason(&msg)
                    && is_client_safe(&reason)
                {
                    return GatewayError::invalid(reason);
                }
                if passes_server_text(code) && is_client_safe(&msg) {
                    return GatewayError::new(code, msg).with_server_code(api_error.code);
                }
                let error = GatewayError::new(code, withheld_message(code, api_error.code))
                    .with_server_code(api_error.code);
                if msg.is_empty() {
                    error
                } else {
                    error.with_detail(msg)
                }
            }
            FlussClientError::IllegalArgument { message }
            | FlussClientError::RowConvertError { message } => client_text(
                ErrorCode::InvalidArgument,
                message,
                "the Fluss client refused the request",
            ),
            FlussClientError::UnsupportedOperation { message } => client_text(
                ErrorCode::Unsupported,
                message,
                "the Fluss client does not support this operation",
            ),
            FlussClientError::UnsupportedVersion { .. } => GatewayError::new(
                ErrorCode::Unsupported,
                "the Fluss server does not support this operation",
            ),
            FlussClientError::BufferExhausted { .. } => GatewayError::new(
                ErrorCode::ResourceExhausted,
                "the gateway's write buffer is full; retry later",
            ),
            FlussClientError::RpcError { .. } | FlussClientError::WriterClosed { .. } => {
                GatewayError::new(ErrorCode::Unavailable, "the Fluss cluster is unavailable")
                    .with_detail(e.to_string())
            }
            _ => GatewayError::new(ErrorCode::Backend, "the Fluss client failed")
                .with_detail(e.to_string()),
        }
    }
}

/// A fluss-rs client-side message: passed on when it is free of internals, else `fallback`.
fn client_text(code: ErrorCode, raw: &str, fallback: &str) -> GatewayError {
    let msg = server_message(raw);
    if is_client_safe(&msg) {
        GatewayError::new(code, msg)
    } else {
        GatewayError::new(code, fallback).with_detail(msg)
    }
}

/// Java exceptions a Fluss server raises for a refused configuration (a table property, a
/// cluster config). Fluss 0.9.1 sends some of them as an unclassified server error whose text
/// starts with the class name; they are the caller's mistake, so 400, not 500.
const CONFIG_EXCEPTION_NAMES: [&str; 2] = [
    "org.apache.fluss.exception.ConfigException",
    "org.apache.fluss.exception.InvalidConfigException",
];

/// The server's reason without the Java class name, when `message` reports a refused config.
fn refused_config_reason(message: &str) -> Option<String> {
    CONFIG_EXCEPTION_NAMES.iter().find_map(|name| {
        let reason = message.strip_prefix(name)?;
        // `…ConfigExceptionX` is another class, not this one.
        if !(reason.is_empty() || reason.starts_with(':')) {
            return None;
        }
        let reason = reason.trim_start_matches(':').trim();
        Some(if reason.is_empty() {
            "the cluster refused the configuration".to_owned()
        } else {
            reason.to_owned()
        })
    })
}

impl From<FlussClientError> for GatewayError {
    fn from(e: FlussClientError) -> Self {
        GatewayError::from(&e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fluss::rpc::ApiError;

    fn api(code: i32, message: &str) -> FlussClientError {
        FlussClientError::FlussAPIError {
            api_error: ApiError {
                code,
                message: message.to_owned(),
            },
        }
    }

    #[test]
    fn only_an_unknown_table_id_marks_a_possibly_stale_table() {
        let unknown = GatewayError::from(api(21, "This server does not know this table ID 19."));
        assert!(unknown.is_unknown_table_id());
        assert_eq!(unknown.code(), ErrorCode::Unavailable);
        assert!(!unknown.is_unknown_column());
        for code in [7, 1, 22, -1] {
            assert!(
                !GatewayError::from(api(code, "x")).is_unknown_table_id(),
                "{code}"
            );
        }
        let column = GatewayError::unknown_column("row 0: unknown column `x`");
        assert!(column.is_unknown_column() && !column.is_unknown_table_id());
        // The mark is never rendered: the caller sees our words for a 503.
        assert_eq!(
            unknown.message(),
            "the Fluss cluster is unavailable; retry later (server error code 21)"
        );
    }

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

    #[test]
    fn fluss_resource_errors_map_to_resource_codes() {
        for (raw, code) in [
            (4, ErrorCode::DatabaseNotFound),
            (5, ErrorCode::DatabaseNotEmpty),
            (6, ErrorCode::DatabaseAlreadyExists),
            (7, ErrorCode::TableNotFound),
            (8, ErrorCode::TableAlreadyExists),
            (36, ErrorCode::PartitionNotFound),
            (42, ErrorCode::PartitionAlreadyExists),
            (39, ErrorCode::InvalidArgument),
            (43, ErrorCode::InvalidArgument),
            (13, ErrorCode::LimitExceeded),
            (46, ErrorCode::Unauthenticated),
            (48, ErrorCode::Unauthorized),
            (72, ErrorCode::StorageBackpressure),
            (25, ErrorCode::Timeout),
            (2, ErrorCode::Unsupported),
            (12, ErrorCode::Unavailable),
            (44, ErrorCode::Unavailable),
            (9, ErrorCode::Unavailable),
            (65, ErrorCode::Unavailable),
            (73, ErrorCode::Unavailable),
            (64, ErrorCode::InvalidArgument),
            (-1, ErrorCode::Backend),
            (9999, ErrorCode::Backend),
        ] {
            let e = GatewayError::from(api(raw, "boom"));
            assert_eq!(e.code(), code, "Fluss code {raw}");
            // Server text reaches the caller only for codes about the caller's own request.
            if passes_server_text(code) {
                assert_eq!(e.message(), "boom");
            } else {
                assert!(
                    e.message().contains(&format!("server error code {raw}")),
                    "{e}"
                );
                assert_eq!(e.detail(), Some("boom"));
            }
        }
    }

    #[test]
    fn server_text_with_internals_never_reaches_the_caller() {
        for (raw, text) in [
            (39, "org.apache.fluss.exception.InvalidTableException: bad"),
            (
                7,
                "KeeperErrorCode = NoNode for /fluss/metadata/databases/d/tables/t",
            ),
            (
                -1,
                "java.lang.IllegalArgumentException: Invalid path string",
            ),
            (39, "Failed to create node /a/b/c"),
            (12, "leader 10.0.0.7:9123 not reachable"),
            (39, "NullPointerException"),
            (39, "line with a \u{1} control character"),
        ] {
            let e = GatewayError::from(api(raw, text));
            for mark in [
                "Exception",
                "java.",
                "org.apache",
                "/fluss/",
                "10.0.0.7",
                "/a/b",
            ] {
                assert!(
                    !e.message().contains(mark),
                    "{raw} {text:?} -> {}",
                    e.message()
                );
            }
            assert_eq!(e.detail(), Some(server_message(text).as_str()), "{text}");
        }
        let plain = GatewayError::from(api(39, "Table name must not be empty."));
        assert_eq!(plain.message(), "Table name must not be empty.");
        assert_eq!(plain.detail(), None);
        assert!(is_client_safe(
            "partition `2026-12-03` of table `db.t` does not exist"
        ));
    }

    #[test]
    fn server_messages_lose_stack_traces_and_are_bounded() {
        let long = format!(
            "first line {}\n\tat org.apache.Foo(Foo.java:1)",
            "x".repeat(1000)
        );
        let e = GatewayError::from(api(39, &long));
        assert!(!e.message().contains("Foo.java"), "{}", e.message());
        assert!(e.message().chars().count() <= MAX_SERVER_MESSAGE_CHARS + 1);
    }

    #[test]
    fn client_side_failures_hide_addresses() {
        let e = GatewayError::from(FlussClientError::UnexpectedError {
            message: "connect to 10.1.2.3:9123 failed".into(),
            source: None,
        });
        assert_eq!(e.code(), ErrorCode::Backend);
        assert!(!e.message().contains("10.1.2.3"));
        let e = GatewayError::from(FlussClientError::BufferExhausted {
            message: "x".into(),
        });
        assert_eq!(e.code(), ErrorCode::ResourceExhausted);
        assert_eq!(e.code().retry_after_secs(), Some(1));
    }

    #[test]
    fn refused_configs_sent_as_unclassified_errors_are_400_without_the_class_name() {
        let e = GatewayError::from(&api(
            -1,
            "org.apache.fluss.exception.ConfigException: The config key a.b is not allowed to be changed dynamically.",
        ));
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        assert_eq!(
            e.message(),
            "The config key a.b is not allowed to be changed dynamically."
        );
        let e = GatewayError::from(&api(
            -1,
            "org.apache.fluss.exception.InvalidConfigException",
        ));
        assert_eq!(e.code(), ErrorCode::InvalidArgument);
        let other = GatewayError::from(&api(-1, "java.lang.NullPointerException"));
        assert_eq!(other.code(), ErrorCode::Backend);
        let lookalike =
            GatewayError::from(&api(-1, "org.apache.fluss.exception.ConfigExceptionX: y"));
        assert_eq!(lookalike.code(), ErrorCode::Backend);
    }
}
