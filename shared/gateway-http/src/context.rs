//! The request context: what a handler knows about its request besides the request itself,
//! stamped by the middleware (`build_router`) and taken by handlers as an argument.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use fluss_ops::Call;
use gateway_core::GatewayError;

use crate::error::ApiError;

/// What a handler knows about its request besides the request itself, inserted by
/// [`build_router`]'s middleware; a handler takes it as an argument. Always called `ctx`.
#[derive(Debug, Clone)]
pub struct RequestCtx {
    /// Fresh UUID v4 per request, echoed in `x-request-id` and in error envelopes.
    pub request_id: String,
    /// The call context every operation takes: the principal (anonymous until an
    /// authentication layer sets it), the Fluss identity it acts as, and the deadline —
    /// min(configured request timeout, Lambda's remaining time − margin) from the moment the
    /// request arrived.
    pub call: Call,
}

impl<S: Send + Sync> FromRequestParts<S> for RequestCtx {
    type Rejection = ApiError;

    /// The context the middleware stamped; a router built without it is a wiring bug (500).
    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<RequestCtx>()
            .cloned()
            .ok_or_else(|| ApiError(GatewayError::internal("the request context is missing")))
    }
}
