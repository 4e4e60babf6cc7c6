//! Builders of the catalog router tests: the production router over clusters nobody listens
//! on, so every test answers before (or without) Fluss I/O.

use axum::Router;
use fluss_pool::config::ClusterConfig;
use fluss_pool::{Pool, PoolConfig};

pub(super) use crate::test_support::{bad, call, delete, expect_errors, get, with_json};

use super::{CatalogOptions, CatalogState, catalog_routes};

/// State over clusters `default` and `other`, both on a port nobody listens on.
pub(super) fn state(options: CatalogOptions) -> CatalogState {
    let pool = Pool::new(
        PoolConfig::new(vec![
            ClusterConfig::plaintext("other", "127.0.0.1:1"),
            ClusterConfig::plaintext("default", "127.0.0.1:1"),
        ])
        .unwrap(),
    );
    CatalogState::new(pool, options)
}

/// The served router with default options.
pub(super) fn app() -> Router {
    router(state(CatalogOptions::default()))
}

/// The served router over `state`.
pub(super) fn router(state: CatalogState) -> Router {
    crate::test_support::served(catalog_routes(state))
}
