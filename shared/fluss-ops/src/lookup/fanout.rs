//! Puts every lookup of a request in flight at once and collects the answers in input order,
//! all bounded by the request's deadline.
//!
//! fluss-rs's `lookup` takes `&mut self` and its `LookupClient` batches whatever is queued
//! within its linger window, so each key gets its own (cheap, RPC-free) lookuper and its own
//! task: the keys of one request then share one batch per tablet server instead of one round
//! trip each, sent as soon as the last key is queued ([`LookupBatch`]) rather than at the end
//! of the window. On expiry the remaining tasks are aborted (fluss-rs may still retry them in the
//! background, a bounded number of times set by `client.lookup.retries`) and the request
//! answers 504 `timeout`; a lookup never hangs a request.

use std::future::Future;

use fluss_pool::{Deadline, LookupBatch, PooledConnection};
use gateway_core::error::code_for_fluss_api_error;
use gateway_core::{ErrorCode, GatewayError};
use tokio::task::JoinSet;

/// Why one lookup failed: in fluss-rs (feeds the connection's health) or in the gateway
/// (decoding the answer).
pub(crate) enum Failure {
    /// The lookup call itself failed.
    Fluss(fluss::error::Error),
    /// The answer could not be turned into JSON.
    Gateway(GatewayError),
}

impl From<fluss::error::Error> for Failure {
    fn from(e: fluss::error::Error) -> Self {
        Failure::Fluss(e)
    }
}

impl From<GatewayError> for Failure {
    fn from(e: GatewayError) -> Self {
        Failure::Gateway(e)
    }
}

/// Runs `op` on every input concurrently (one task each) and returns the outputs in input
/// order. The first failure fails the request (the other tasks are aborted); so does the
/// deadline, with `timeout`. The connection's health learns the outcome once per request.
pub(crate) async fn all_in_flight<I, T, F, Fut>(
    conn: &PooledConnection,
    deadline: &Deadline,
    inputs: Vec<I>,
    op: F,
) -> Result<Vec<T>, GatewayError>
where
    F: Fn(I) -> Fut,
    Fut: Future<Output = Result<T, Failure>> + Send + 'static,
    T: Send + 'static,
{
    if deadline.is_expired() {
        return Err(deadline.timeout_error("lookup"));
    }
    let count = inputs.len();
    let batch = LookupBatch::new(conn.fluss(), count);
    let mut tasks = JoinSet::new();
    for (index, input) in inputs.into_iter().enumerate() {
        let lookup = batch.run(op(input));
        tasks.spawn(async move { (index, lookup.await) });
    }
    let mut outputs: Vec<Option<T>> = (0..count).map(|_| None).collect();
    let collected = deadline
        .race(async {
            while let Some(joined) = tasks.join_next().await {
                let (index, outcome) = joined.map_err(|_| {
                    Failure::Gateway(GatewayError::internal("a lookup task failed"))
                })?;
                if let Some(slot) = outputs.get_mut(index) {
                    *slot = Some(outcome?);
                }
            }
            Ok::<(), Failure>(())
        })
        .await;
    match collected {
        None => {
            conn.record_timeout("lookup");
            Err(deadline.timeout_error("lookup"))
        }
        Some(Err(Failure::Fluss(e))) => {
            conn.record_error("lookup", &e);
            Err(lookup_error(&e))
        }
        Some(Err(Failure::Gateway(e))) => Err(e),
        Some(Ok(())) => {
            conn.record_success();
            outputs
                .into_iter()
                .map(|o| o.ok_or_else(|| GatewayError::internal("a lookup gave no answer")))
                .collect()
        }
    }
}

/// Maps a lookup failure to the wire. fluss-rs reports every server-side lookup failure as
/// `UnexpectedError` with the server's code only inside its text (`…code=7, message=…`), so
/// the code is read back from there; anything else maps as other fluss-rs errors do. The
/// server's message is not passed on: it names internal buckets and servers.
pub(crate) fn lookup_error(e: &fluss::error::Error) -> GatewayError {
    if let fluss::error::Error::UnexpectedError { message, .. } = e
        && let Some(code) = server_code(message)
    {
        let mapped = code_for_fluss_api_error(code);
        let mapped = if mapped == ErrorCode::Internal {
            ErrorCode::Backend
        } else {
            mapped
        };
        return GatewayError::new(
            mapped,
            format!("the lookup failed in Fluss (server error code {code})"),
        )
        .with_server_code(code)
        .with_detail(message.lines().next().unwrap_or_default().to_owned());
    }
    // Without a server code, fluss-rs's lookup client failed on its own side: a tablet server
    // it cannot reach, a response missing from a server, a batch it could not queue again, its
    // channel closed while the connection was rebuilt. Every one is a server restarting or
    // its buckets moving (seen in the durability suite during TabletServer failovers), so the
    // answer is 503 with `Retry-After`, never a 500; the text stays in the log.
    if let fluss::error::Error::UnexpectedError { message, .. } = e {
        return GatewayError::new(
            ErrorCode::Unavailable,
            "the Fluss tablet server holding the key is unreachable or moving its buckets; retry \
             later",
        )
        .with_detail(message.lines().next().unwrap_or_default().to_owned());
    }
    GatewayError::from(e)
}

/// The integer after `code=` in a fluss-rs lookup error text.
fn server_code(message: &str) -> Option<i32> {
    let rest = &message[message.find("code=")? + "code=".len()..];
    let end = rest
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(rest.len(), |(i, _)| i);
    rest[..end].parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unexpected(message: &str) -> fluss::error::Error {
        fluss::error::Error::UnexpectedError {
            message: message.to_owned(),
            source: None,
        }
    }

    #[test]
    fn server_codes_are_read_back_from_lookup_error_texts() {
        assert_eq!(
            server_code("Lookup error for bucket TableBucket{1}: code=7, message=gone"),
            Some(7)
        );
        assert_eq!(server_code("code=-1, message=x"), Some(-1));
        assert_eq!(server_code("code=12"), Some(12));
        assert_eq!(server_code("no code here"), None);
        assert_eq!(server_code("code=, message"), None);
    }

    #[test]
    fn lookup_errors_map_by_server_code_without_the_server_text() {
        let e = lookup_error(&unexpected(
            "Lookup error for bucket TableBucket{table_id=3}: code=7, message=secret-host:9123",
        ));
        assert_eq!(e.code(), ErrorCode::TableNotFound);
        assert!(!e.message().contains("secret-host"), "{}", e.message());
        for text in [
            "Failed to re-enqueue lookup: channel closed",
            "Bucket 2 lookup response missing from server 1",
            "Lookup client is closed",
        ] {
            let e = lookup_error(&unexpected(text));
            assert_eq!(e.code(), ErrorCode::Unavailable, "{text}");
            assert!(!e.message().contains("server 1"), "{}", e.message());
        }
        let e = lookup_error(&unexpected(
            "Failed to get connection to server 0: connection error: Connection refused",
        ));
        assert_eq!(e.code(), ErrorCode::Unavailable);
        assert!(!e.message().contains("refused"), "{}", e.message());
    }
}
