//! Running an operation on one table: the pooled connection of the call's identity, the cached
//! table handle (retried once on a refreshed one when the cached table was recreated), and a
//! missing table told apart from a missing database.

use std::sync::Arc;

use fluss::metadata::TablePath;
use fluss_pool::{Pool, PooledConnection, TableHandle};
use gateway_core::{ErrorCode, GatewayError};

use crate::call::Call;

/// Runs `op` on `path` of `cluster` for `call`: 404 for an unknown cluster before any I/O, one
/// retry on a refreshed handle when the cached table proved stale, and a missing table told
/// apart from a missing database.
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
    pool.cluster(cluster)?;
    let outcome = pool
        .with_table(cluster, &call.identity, path, &call.deadline, op)
        .await;
    match outcome {
        Err(e) => Err(refine_not_found(pool, call, cluster, path, e).await),
        ok => ok,
    }
}

/// A missing table may be a missing database: say which (404 `database_not_found`), as the
/// Fluss Gateway does. Any failure of the extra check keeps the original error.
async fn refine_not_found(
    pool: &Pool,
    call: &Call,
    cluster: &str,
    path: &TablePath,
    not_found: GatewayError,
) -> GatewayError {
    if not_found.code() != ErrorCode::TableNotFound {
        return not_found;
    }
    let Ok(conn) = pool
        .connection(cluster, &call.identity, &call.deadline)
        .await
    else {
        return not_found;
    };
    let Ok(admin) = conn.admin() else {
        return not_found;
    };
    match conn
        .call(
            &call.deadline,
            "checking the database",
            admin.database_exists(path.database()),
        )
        .await
    {
        Ok(false) => GatewayError::new(
            ErrorCode::DatabaseNotFound,
            format!("database `{}` does not exist", path.database()),
        ),
        _ => not_found,
    }
}
