//! Running an operation on one table: the pooled connection of the call's identity, the cached
//! table handle (retried once on a refreshed one when the cached table was recreated), and a
//! missing table told apart from a missing database.

use std::sync::Arc;

use fluss::metadata::TablePath;
use fluss_pool::{Deadline, Pool, PooledConnection, TableHandle};
use gateway_core::{ErrorCode, GatewayError};

use crate::call::Call;

/// Runs `op` on `path` of `cluster` for `call`: one retry on a refreshed handle when the cached
/// table proved stale, and a missing table told apart from a missing database. An unknown
/// cluster is the pool's 404, before any I/O (the HTTP entry points have answered it already,
/// in their admission).
pub(crate) async fn on_table<T, F, Fut>(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    op: F,
) -> Result<T, GatewayError>
where
    F: Fn(Arc<PooledConnection>, Arc<TableHandle>) -> Fut,
    Fut: Future<Output = Result<T, GatewayError>>,
{
    let conn = pool
        .connection(cluster, &call.identity, &call.deadline)
        .await?;
    let outcome = pool.with_table_on(&conn, path, &call.deadline, op).await;
    match outcome {
        Err(e) => Err(refine_not_found(&conn, &call.deadline, path.database(), e).await),
        ok => ok,
    }
}

/// A missing table may be a missing database: say which (404 `database_not_found`), as the
/// Fluss Gateway does, asking on `conn`, the connection the failed call used. Any failure of
/// the extra check keeps the original error.
pub(crate) async fn refine_not_found(
    conn: &PooledConnection,
    deadline: &Deadline,
    database: &str,
    not_found: GatewayError,
) -> GatewayError {
    if not_found.code() != ErrorCode::TableNotFound {
        return not_found;
    }
    let Ok(admin) = conn.admin() else {
        return not_found;
    };
    match conn
        .call(
            deadline,
            "checking the database",
            admin.database_exists(database),
        )
        .await
    {
        Ok(false) => database_not_found(database),
        _ => not_found,
    }
}

/// 404 `database_not_found` in the gateway's words.
pub fn database_not_found(database: &str) -> GatewayError {
    GatewayError::new(
        ErrorCode::DatabaseNotFound,
        format!("database `{database}` does not exist"),
    )
}
