//! fluss-rs errors as [`GatewayError`]s: the code each Fluss server error maps to, and which
//! server text reaches the caller (an allow-list of codes about the caller's own request, and
//! only text free of internals); anything withheld is kept as the log-only detail.

use fluss::error::Error as FlussClientError;
use fluss::rpc::FlussError;

use super::{ErrorCode, GatewayError};

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
        // The idempotent writer's sequence no longer matches the server's (a leader moved, a
        // server restarted): the batch was refused unwritten and the writer starts a new
        // sequence, so a retry succeeds. It was `backend` (seen per row in the durability suite
        // when a row's resends ran out during a leader kill), which tells a caller not to retry.
        | F::OutOfOrderSequenceException
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
            (31, ErrorCode::Unavailable),
            (33, ErrorCode::Unavailable),
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
