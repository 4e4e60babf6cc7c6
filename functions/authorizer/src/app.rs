//! The `fluss-authorizer` function: an API Gateway HTTP API (payload 2.0) REQUEST authorizer with
//! simple responses. It checks the caller's API key (or Basic user) as the route functions would
//! in `api-key` / `password` mode and answers `{"isAuthorized", "context"}`; the context carries
//! the principal, key id, scopes and identity (never a secret), and route functions in
//! `authorizer` mode authorize each route from it. Scopes are not checked here: API Gateway
//! caches a decision per identity source (the key), not per route, so a per-route answer would
//! leak to other routes.

use std::collections::BTreeMap;

use gateway_auth::{AuthSettings, Authenticator, Mode, Presented};
use gateway_core::ErrorCode;
use lambda_runtime::{Diagnostic, LambdaEvent};
use serde_json::{Value, json};

use gateway_runtime::App;

/// The authorizer function's app, from its environment: `gateway.security.authentication` must
/// be `api-key` or `password` (what it checks); the key document is read during init.
pub async fn authorizer_app(env: &BTreeMap<String, String>) -> Result<App, String> {
    gateway_runtime::check_unknown_keys(env).map_err(|e| e.message().to_owned())?;
    let settings = AuthSettings::from_map(env).map_err(|e| e.message().to_owned())?;
    if !matches!(settings.mode, Mode::ApiKey | Mode::Password) {
        return Err(format!(
            "`gateway.security.authentication` is `{}`; the authorizer checks `api-key` or `password` credentials",
            settings.mode.as_str()
        ));
    }
    let auth = Authenticator::from_settings(&settings, env);
    if let Some(store) = auth.store()
        && let Err(e) = store.preload().await
    {
        tracing::warn!(
            problem = e.message(),
            detail = e.detail().unwrap_or_default(),
            "key document not readable at start-up"
        );
    }
    Ok(App::events(move |event| {
        let auth = auth.clone();
        async move { decide(&auth, event).await }
    }))
}

/// One authorizer invocation. A refused credential is `isAuthorized: false` (API Gateway
/// answers 403); credentials that cannot be checked now are an invocation error (API Gateway
/// answers 500, and nothing is cached), so a Secrets Manager outage never looks like a revoked
/// key.
async fn decide(auth: &Authenticator, event: LambdaEvent<Value>) -> Result<Value, Diagnostic> {
    let request_id = event.context.request_id.clone();
    let headers = &event.payload["headers"];
    // HTTP API lower-cases header names in payload 2.0.
    let header = |name: &str| headers.get(name).and_then(Value::as_str);
    let values = |name: &str| header(name).into_iter().collect::<Vec<_>>();
    let presented = Presented::from_header_values(&values("x-api-key"), &values("authorization"));
    // The grant only: the route functions resolve the Fluss identity, the authorizer never
    // reads a SASL secret.
    match auth.grant(presented, None).await {
        Ok(Some(grant)) => {
            tracing::info!(
                request_id,
                principal = %grant.principal,
                key_id = grant.key_id.as_deref().unwrap_or("-"),
                "authorized"
            );
            Ok(json!({"isAuthorized": true, "context": grant.to_context()}))
        }
        Ok(None) => Err(Diagnostic {
            error_type: "Misconfigured".to_owned(),
            error_message: "the authorizer runs in trust mode".to_owned(),
        }),
        // Two credentials in one request are refused as a bad key is (API Gateway answers 403).
        Err(e)
            if matches!(
                e.code(),
                ErrorCode::Unauthenticated | ErrorCode::InvalidArgument
            ) =>
        {
            tracing::warn!(
                request_id,
                reason = e.detail().unwrap_or_default(),
                "credential refused"
            );
            Ok(json!({"isAuthorized": false}))
        }
        Err(e) => {
            tracing::error!(
                request_id,
                problem = e.message(),
                detail = e.detail().unwrap_or_default(),
                "credentials cannot be checked"
            );
            Err(Diagnostic {
                error_type: "Unavailable".to_owned(),
                error_message: e.message().to_owned(),
            })
        }
    }
}
