//! What the catalog routes share across requests ([`CatalogState`]) and the gated catalog
//! session each request opens from it. Apart from the parent module, which assembles the routes,
//! so that the route modules depend on it and never back on their parent.

use std::time::Instant;

use axum::extract::{FromRequest, Request};
use axum::response::{IntoResponse, Response};
use fluss_ops::catalog::Session;
use fluss_pool::Pool;
use gateway_core::GatewayError;
use serde::de::DeserializeOwned;
use tokio::sync::OwnedSemaphorePermit;

use super::options::CatalogOptions;
use crate::admission::{Gate, admit};
use crate::context::RequestCtx;
use crate::error::ApiError;
use crate::extract::{Input, Routed};

/// Everything the catalog routes share across requests; built once per container.
#[derive(Clone)]
pub struct CatalogState {
    pub(super) pool: Pool,
    options: CatalogOptions,
    /// Catalog requests in flight; a full gate answers 429 instead of queueing behind the
    /// deadline (every DDL call goes to the one coordinator).
    pub(super) gate: Gate,
    /// When the container started, for `GET /health`'s `uptime_ms`.
    pub(super) started: Instant,
}

impl CatalogState {
    /// State over `pool`, with the gate size of
    /// `options`. Build it at init: its creation time is the `uptime_ms` origin of `/health`.
    pub fn new(pool: Pool, options: CatalogOptions) -> Self {
        CatalogState {
            pool,
            options,
            gate: Gate::new(options.max_concurrent, "catalog"),
            started: Instant::now(),
        }
    }

    /// The options in force.
    pub fn options(&self) -> CatalogOptions {
        self.options
    }

    /// Admits one request for `cluster` through the metadata gate, before anything else about
    /// the request is judged (as the Fluss Gateway orders it: an unknown cluster is 404 before
    /// a missing content type or a bad page parameter): 404 `cluster_not_found` and 429
    /// `resource_exhausted`, both without I/O.
    fn admit(&self, cluster: &str) -> Result<Admitted, GatewayError> {
        Ok(Admitted {
            pool: self.pool.clone(),
            cluster: cluster.to_owned(),
            permit: admit(&self.pool, &self.gate, cluster)?,
        })
    }
}

/// A request admitted through the metadata gate: its session is opened once the request's
/// own checks have passed.
pub(super) struct Admitted {
    pool: Pool,
    cluster: String,
    permit: OwnedSemaphorePermit,
}

impl Admitted {
    /// The cluster's catalog session for the request, holding the gate's permit.
    pub(super) async fn session(self, ctx: &RequestCtx) -> Result<Gated, GatewayError> {
        Ok(Gated {
            session: Session::open(&self.pool, &ctx.call, &self.cluster).await?,
            _permit: self.permit,
        })
    }
}

/// Path parameters that name the cluster a catalog request is for.
pub(super) trait ClusterScoped {
    /// The `{cluster}` segment, as sent.
    fn cluster(&self) -> &str;
}

/// One catalog request as every catalog handler takes it, admitted: the body is received (not
/// judged) and the request admitted through the metadata gate by [`CatalogState::admit`] before
/// the handler runs, so every catalog route refuses an unknown cluster or a full gate first, in
/// one place.
pub(super) struct CatalogCall<P> {
    /// The request context.
    pub(super) ctx: RequestCtx,
    /// The path parameters, names not yet checked.
    pub(super) params: P,
    /// The query, headers and body, read but not judged.
    pub(super) input: Input,
    /// The admission; [`Admitted::session`] opens the session once the handler's checks pass.
    pub(super) admitted: Admitted,
}

impl<P> FromRequest<CatalogState> for CatalogCall<P>
where
    P: DeserializeOwned + ClusterScoped + Send,
{
    type Rejection = Response;

    async fn from_request(req: Request, state: &CatalogState) -> Result<Self, Response> {
        let Routed(ctx, params, input) = Routed::<P>::from_request(req, state).await?;
        let admitted = state
            .admit(params.cluster())
            .map_err(|e| ApiError(e).into_response())?;
        Ok(CatalogCall {
            ctx,
            params,
            input,
            admitted,
        })
    }
}

/// A catalog session holding a permit of the metadata gate (released when the request ends).
pub(super) struct Gated {
    session: Session,
    _permit: OwnedSemaphorePermit,
}

impl std::ops::Deref for Gated {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}
