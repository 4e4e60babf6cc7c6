//! What every route on one table's records shares (writes, lookups): the path parameters, the
//! cheap request checks, the concurrency gate, body-read errors, the configuration parser of
//! route limits, and telling a missing database from a missing table. It owns no route.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::http::{HeaderMap, Uri};
use fluss::metadata::TablePath;
use fluss_pool::config::{env_var_name, parse_size};
use fluss_pool::{Deadline, Identity, Pool};
use gateway_core::{ErrorCode, GatewayError};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

pub(crate) use crate::checks::body_error;
use crate::checks::{ensure_accepts_json, ensure_json_content_type, ensure_no_query};

/// Path parameters of the routes under `…/tables/{table}/records`.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct TableParams {
    pub(crate) cluster: String,
    pub(crate) database: String,
    pub(crate) table: String,
}

impl TableParams {
    /// `database.table`.
    pub(crate) fn path(&self) -> TablePath {
        TablePath::new(self.database.clone(), self.table.clone())
    }
}

/// The checks every JSON POST on a table runs before reading its body: no query string (400),
/// a JSON body (415), a JSON answer acceptable (406).
pub(crate) fn ensure_json_post(uri: &Uri, headers: &HeaderMap) -> Result<(), GatewayError> {
    ensure_no_query(uri)?;
    ensure_json_content_type(headers)?;
    ensure_accepts_json(headers)
}

/// A permit of `gate`, or 429 `resource_exhausted` at once: a full gate must not queue requests
/// behind the deadline. `what` names the requests ("write", "lookup").
pub(crate) fn enter_gate(
    gate: &Arc<Semaphore>,
    what: &str,
) -> Result<OwnedSemaphorePermit, GatewayError> {
    gate.clone().try_acquire_owned().map_err(|_| {
        GatewayError::new(
            ErrorCode::ResourceExhausted,
            format!("too many concurrent {what} requests; retry later"),
        )
    })
}

/// A missing table may be a missing database: say which (404 `database_not_found`), as the
/// Fluss Gateway does. Any failure of the extra check keeps the original error.
pub(crate) async fn refine_not_found(
    pool: &Pool,
    params: &TableParams,
    deadline: &Deadline,
    not_found: GatewayError,
) -> GatewayError {
    if not_found.code() != ErrorCode::TableNotFound {
        return not_found;
    }
    let Ok(conn) = pool
        .connection(&params.cluster, &Identity::Service, deadline)
        .await
    else {
        return not_found;
    };
    let Ok(admin) = conn.admin() else {
        return not_found;
    };
    match conn
        .call(
            deadline,
            "checking the database",
            admin.database_exists(&params.database),
        )
        .await
    {
        Ok(false) => GatewayError::new(
            ErrorCode::DatabaseNotFound,
            format!("database `{}` does not exist", params.database),
        ),
        _ => not_found,
    }
}

/// How a limit's value is written.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Unit {
    /// A plain count (`128`).
    Count,
    /// A size with an optional unit (`1mb`).
    Bytes,
}

/// One limit: its dotted key, where its value goes, and how it is written.
pub(crate) struct Setting<'a> {
    pub(crate) key: &'static str,
    pub(crate) slot: &'a mut usize,
    pub(crate) unit: Unit,
}

/// Reads route limits from `map` (dotted or environment form) into their slots. Every key under
/// one of `namespaces` (dotted, ending in `.`) must be a listed setting, so a typo cannot
/// silently keep a default; every value must be a positive number. All problems are reported at
/// once, by key (never by value), as ``invalid {what} configuration: …``.
pub(crate) fn read_limits(
    map: &BTreeMap<String, String>,
    namespaces: &[&str],
    settings: &mut [Setting<'_>],
    what: &str,
) -> Result<(), GatewayError> {
    let mut problems = Vec::new();
    let env_namespaces: Vec<String> = namespaces
        .iter()
        .map(|n| env_var_name(n.trim_end_matches('.')) + "__")
        .collect();
    for name in map.keys() {
        let ours = namespaces.iter().any(|n| name.starts_with(n))
            || env_namespaces.iter().any(|n| name.starts_with(n.as_str()));
        let listed = settings
            .iter()
            .any(|s| name == s.key || *name == env_var_name(s.key));
        if ours && !listed {
            problems.push(format!("`{name}`: unknown key"));
        }
    }
    for setting in settings.iter_mut() {
        let env = env_var_name(setting.key);
        for (name, value) in [
            (setting.key, map.get(setting.key)),
            (env.as_str(), map.get(&env)),
        ] {
            let Some(value) = value else { continue };
            let parsed = match setting.unit {
                Unit::Bytes => {
                    parse_size(value).and_then(|n| usize::try_from(n).map_err(|e| e.to_string()))
                }
                Unit::Count => value.trim().parse::<usize>().map_err(|e| e.to_string()),
            };
            match parsed {
                Ok(0) => problems.push(format!("`{name}`: must be greater than 0")),
                Ok(n) => *setting.slot = n,
                Err(e) => problems.push(format!("`{name}`: {e}")),
            }
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(GatewayError::invalid(format!(
            "invalid {what} configuration: {}",
            problems.join("; ")
        )))
    }
}
