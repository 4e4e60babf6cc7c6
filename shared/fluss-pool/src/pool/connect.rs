//! Making one Fluss connection, bounded as fluss-rs does not, with its failure in client-safe
//! words.

use fluss::client::FlussConnection;
use fluss::rpc::FlussError as FlussCode;
use gateway_core::{ErrorCode, GatewayError};

use crate::Deadline;
use crate::config::{ClusterConfig, format_duration};
use crate::identity::Identity;

/// Why a connect failed, and whether that says anything about the cluster.
pub(super) struct ConnectFailure {
    pub(super) error: GatewayError,
    /// The caller's own deadline ended the attempt: it says nothing about the cluster.
    pub(super) by_caller_deadline: bool,
}

/// A connection to `config`'s cluster as `identity`, the whole connect bounded by the
/// cluster's `connect-timeout` and by `deadline`.
pub(super) async fn connect(
    config: &ClusterConfig,
    identity: &Identity,
    deadline: &Deadline,
) -> Result<FlussConnection, ConnectFailure> {
    let client_config = config
        .client_config(identity)
        .map_err(|error| ConnectFailure {
            error,
            by_caller_deadline: false,
        })?;
    // fluss-rs bounds only the TCP connect; a server that accepts and never answers would
    // hang the handshake forever, so the whole connect is bounded here.
    let by_caller_deadline =
        deadline.instant() <= tokio::time::Instant::now() + config.connect_timeout;
    let bound = deadline.capped(config.connect_timeout);
    match bound.race(FlussConnection::new(client_config)).await {
        Some(Ok(conn)) => Ok(conn),
        None if by_caller_deadline => Err(ConnectFailure {
            error: deadline.timeout_error("connecting to Fluss"),
            by_caller_deadline: true,
        }),
        None => {
            tracing::warn!(
                cluster = %config.id,
                timeout = %format_duration(config.connect_timeout),
                "Fluss connect timed out"
            );
            Err(ConnectFailure {
                error: GatewayError::new(
                    ErrorCode::Unavailable,
                    format!(
                        "cluster `{}` did not answer within {}",
                        config.id,
                        format_duration(config.connect_timeout)
                    ),
                ),
                by_caller_deadline: false,
            })
        }
        Some(Err(e)) => {
            tracing::warn!(cluster = %config.id, error = %e, "Fluss connect failed");
            Err(ConnectFailure {
                error: connect_error(&config.id, identity, &e),
                by_caller_deadline: false,
            })
        }
    }
}

/// A failed connect in client-safe words: the caller did nothing wrong unless it brought its
/// own (rejected) credentials.
fn connect_error(cluster: &str, identity: &Identity, e: &fluss::error::Error) -> GatewayError {
    let code = match e {
        fluss::error::Error::FlussAPIError { api_error } => {
            Some(FlussCode::for_code(api_error.code))
        }
        _ => None,
    };
    match (code, identity) {
        (Some(FlussCode::AuthenticateException), Identity::User(_)) => GatewayError::new(
            ErrorCode::Unauthenticated,
            format!("cluster `{cluster}` rejected the caller's Fluss credentials"),
        ),
        (Some(FlussCode::AuthenticateException | FlussCode::AuthorizationException), _) => {
            GatewayError::new(
                ErrorCode::Unavailable,
                format!("the gateway could not authenticate to cluster `{cluster}`"),
            )
        }
        _ => GatewayError::new(
            ErrorCode::Unavailable,
            format!("cluster `{cluster}` is unreachable"),
        ),
    }
}
