//! What a row's write error says about the row: refused unwritten (it may be sent again) or
//! sent with its outcome open (reported `timeout`). The write path ([`crate::write`]) decides
//! each row's outcome by these two rules.

/// Whether a row's error says that the server refused it unwritten and a later send can
/// succeed: no leader took it, or (with the idempotent writer) its sequence followed a refused
/// batch. fluss-rs retries the leader errors itself, but a few times without backoff, which a
/// table created outside the gateway (whose leaders are still being elected) or a leader moving
/// after a TabletServer restart outlasts; a sequence error resets its writer id, and a batch
/// the server had already committed is reported a success by fluss-rs, never this error.
/// `SchemaNotExist` is the same window after a schema change: the gateway writes with the new
/// schema id as soon as the coordinator has it, and a TabletServer that has not heard of it yet
/// refuses the batch whole (seen in tests/write_route.rs, a column added outside the gateway).
pub(crate) fn refused_unwritten(e: &fluss::error::Error) -> bool {
    use fluss::rpc::FlussError;
    matches!(
        e.api_error(),
        Some(
            FlussError::NotLeaderOrFollower
                | FlussError::LeaderNotAvailableException
                | FlussError::SchemaNotExist
                | FlussError::OutOfOrderSequenceException
                | FlussError::UnknownWriterIdException
        )
    )
}

/// Whether a row's error leaves its outcome open: the leader may have appended it (and a
/// follower copied it) although no ack came. Reported as `timeout` (may or may not be
/// written), never as a failure that says the row was not written: a caller that takes such a
/// failure at its word and moves on would be wrong, and one that retries may write a duplicate,
/// which a `timeout` tells it to expect. Leader errors before the append
/// ([`refused_unwritten`]), `NotEnoughReplicas` (checked before the append) and refusals of
/// the row itself stay failures.
pub(crate) fn outcome_unknown(e: &fluss::error::Error) -> bool {
    use fluss::rpc::FlussError;
    match e.api_error() {
        Some(api) => matches!(
            api,
            FlussError::NotEnoughReplicasAfterAppendException
                | FlussError::RequestTimeOut
                | FlussError::NetworkException
        ),
        // The connection broke, or the writer was closed or aborted its batches (a connection
        // rebuilt under load force-closes the old writer) with the batch possibly in flight:
        // the request may have reached the leader. Only a batch aborted because no writer id
        // could be allocated was certainly never sent (fluss-rs sends nothing without one).
        None => match e {
            fluss::error::Error::RpcError { .. } | fluss::error::Error::WriterClosed { .. } => true,
            fluss::error::Error::UnexpectedError { message, .. } => {
                !message.starts_with("Writer ID allocation failed")
            }
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_after_the_append_or_a_broken_connection_leaves_the_outcome_open() {
        use fluss::rpc::{ApiError, FlussError};
        let api = |e: FlussError| fluss::error::Error::FlussAPIError {
            api_error: ApiError {
                code: e.code(),
                message: String::new(),
            },
        };
        assert!(outcome_unknown(&api(
            FlussError::NotEnoughReplicasAfterAppendException
        )));
        assert!(outcome_unknown(&api(FlussError::RequestTimeOut)));
        assert!(outcome_unknown(&fluss::error::Error::WriterClosed {
            message: String::new()
        }));
        let unexpected = |message: &str| fluss::error::Error::UnexpectedError {
            message: message.to_owned(),
            source: None,
        };
        assert!(outcome_unknown(&unexpected(
            "Writer force closed (shutdown timeout exceeded)"
        )));
        assert!(!outcome_unknown(&unexpected(
            "Writer ID allocation failed: no server"
        )));
        // Refused before the append: not written, and said so.
        assert!(!outcome_unknown(&api(
            FlussError::NotEnoughReplicasException
        )));
        assert!(!outcome_unknown(&api(FlussError::RecordTooLargeException)));
        assert!(!outcome_unknown(&api(FlussError::NotLeaderOrFollower)));
    }
}
