//! Authentication and authorization of the Fluss Lambda Gateway.
//!
//! - [`Mode`] (`gateway.security.authentication`): `trust` (everyone is anonymous and acts as
//!   the service account), `api-key` (`x-api-key` or `Authorization: Bearer`), `password`
//!   (HTTP Basic, argon2id hashes), or `authorizer` (an API Gateway Lambda authorizer already
//!   checked the key; its context is read from the request).
//! - The keys and users live hashed in one Secrets Manager secret ([`document`]); [`KeyStore`]
//!   caches it for a TTL and refreshes it early for an unknown key id.
//! - [`Scope`]s grant operation classes on (cluster, database, table) patterns; a matched
//!   route's class and path object are checked before any Fluss I/O ([`Caller::authorize`]).
//! - Each key or user acts as the service account or as its own SASL user ([`IdentityRef`]),
//!   so Fluss ACLs apply per caller.
//!
//! Refuses: printing a key, a password or a SASL secret anywhere; HTTP types (the HTTP layer
//! hands over header values, the authorizer its request's).

// A unit test may be one long table of cases; production functions keep to clippy.toml's limit.
#![cfg_attr(test, allow(clippy::too_many_lines))]

pub mod config;
pub mod document;
mod grant;
pub mod key;
pub mod password;
pub mod scope;
pub mod store;

use gateway_aws::{SecretSource, SecretsManager};
use std::collections::BTreeMap;
use std::sync::Arc;

use base64::Engine;
use fluss_ops::Principal;
use fluss_pool::Identity;
use gateway_core::routes::Operation;
use gateway_core::{ErrorCode, GatewayError};

pub use config::{AuthSettings, Mode};
pub use document::{Document, IdentityRef, KeyRecord, UserRecord};
pub use grant::{Grant, context_keys};
pub use password::hash_password;
pub use scope::{Object, Scope};
pub use store::{KeyStore, StoreSettings};

/// The credentials a request presented, from its `x-api-key` and `Authorization` headers.
#[derive(Clone, PartialEq, Eq)]
pub enum Presented<'a> {
    /// Nothing.
    Nothing,
    /// An API key (`x-api-key`, or `Authorization: Bearer`).
    ApiKey(&'a str),
    /// HTTP Basic user and password.
    Basic(String, String),
    /// An `Authorization` header this gateway cannot read (why, never the value).
    Unreadable(&'static str),
    /// More than one credential (a header twice, a joined value, or `x-api-key` and an
    /// `Authorization` naming another credential): refused with 400 rather than one picked.
    Conflicting(&'static str),
}

impl std::fmt::Debug for Presented<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Presented::Nothing => "Nothing",
            Presented::ApiKey(_) => "ApiKey(******)",
            Presented::Basic(..) => "Basic(******)",
            Presented::Unreadable(why) | Presented::Conflicting(why) => why,
        })
    }
}

impl<'a> Presented<'a> {
    /// Reads every value of the two headers: one credential, or [`Presented::Conflicting`]
    /// when a header comes twice, a value holds a comma (how API Gateway joins repeated
    /// headers; no key, Bearer token or Basic credential has one), or `x-api-key` and an
    /// `Authorization` other than `Bearer` with the same key are both sent.
    pub fn from_header_values(x_api_key: &[&'a str], authorization: &[&'a str]) -> Self {
        if x_api_key.len() > 1 || x_api_key.iter().any(|v| v.contains(',')) {
            return Presented::Conflicting(
                "send one credential: `x-api-key` holds more than one value",
            );
        }
        if authorization.len() > 1 || authorization.iter().any(|v| v.contains(',')) {
            return Presented::Conflicting(
                "send one credential: `Authorization` holds more than one value",
            );
        }
        let (key, authorization) = (x_api_key.first().copied(), authorization.first().copied());
        let from_authorization = Self::from_headers(None, authorization);
        match (key, &from_authorization) {
            (Some(key), Presented::ApiKey(bearer)) if key.trim() == *bearer => from_authorization,
            (Some(_), Presented::Nothing) | (None, _) => Self::from_headers(key, authorization),
            (Some(_), _) => Presented::Conflicting(
                "send one credential: `x-api-key` and `Authorization` name different credentials",
            ),
        }
    }

    /// Reads one value of each header (`x-api-key` wins when both are sent); requests go
    /// through [`Presented::from_header_values`], which refuses two credentials.
    pub fn from_headers(x_api_key: Option<&'a str>, authorization: Option<&'a str>) -> Self {
        if let Some(key) = x_api_key {
            return Presented::ApiKey(key.trim());
        }
        let Some(auth) = authorization else {
            return Presented::Nothing;
        };
        let (scheme, rest) = auth.trim().split_once(' ').unwrap_or((auth.trim(), ""));
        if scheme.eq_ignore_ascii_case("bearer") {
            return Presented::ApiKey(rest.trim());
        }
        if scheme.eq_ignore_ascii_case("basic") {
            let Ok(bytes) = base64::engine::general_purpose::STANDARD.decode(rest.trim()) else {
                return Presented::Unreadable("the Basic credentials are not base64");
            };
            let Ok(text) = String::from_utf8(bytes) else {
                return Presented::Unreadable("the Basic credentials are not UTF-8");
            };
            return match text.split_once(':') {
                Some((user, password)) => Presented::Basic(user.to_owned(), password.to_owned()),
                None => Presented::Unreadable("the Basic credentials lack `user:password`"),
            };
        }
        Presented::Unreadable("the Authorization scheme must be Bearer or Basic")
    }
}

/// An authenticated (or, in `trust` mode, anonymous) caller.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Who.
    pub principal: Principal,
    /// The key id, when an API key was used (for logs).
    pub key_id: Option<String>,
    /// What the caller may do; `None` in `trust` mode (everything).
    pub scopes: Option<Vec<Scope>>,
    /// The Fluss principal every call of the request acts as.
    pub identity: Identity,
}

impl Caller {
    /// The anonymous caller of `trust` mode.
    pub fn anonymous() -> Self {
        Caller {
            principal: Principal::Anonymous,
            key_id: None,
            scopes: None,
            identity: Identity::Service,
        }
    }

    /// 403 `unauthorized` unless the caller's scopes grant `operation` on `object`; names the
    /// class and the object, never the key.
    pub fn authorize(&self, operation: Operation, object: &Object<'_>) -> Result<(), GatewayError> {
        match &self.scopes {
            None => Ok(()),
            Some(scopes) if scope::any_allows(scopes, operation, object) => Ok(()),
            Some(_) => Err(GatewayError::new(
                ErrorCode::Unauthorized,
                format!(
                    "this caller's scopes do not allow `{}` on {object}",
                    operation.scope()
                ),
            )
            .with_detail(format!(
                "principal {} key {}",
                self.principal.id(),
                self.key_id.as_deref().unwrap_or("-")
            ))),
        }
    }
}

/// Decides who a request's caller is, per the configured [`Mode`]; shared by every request of
/// a container (and by the authorizer function).
#[derive(Debug, Clone)]
pub struct Authenticator {
    mode: Mode,
    store: Option<Arc<KeyStore>>,
}

impl Authenticator {
    /// `trust` mode: every caller is anonymous.
    pub fn trust() -> Self {
        Authenticator {
            mode: Mode::Trust,
            store: None,
        }
    }

    /// The authenticator `settings` describe, reading secrets from `source`.
    pub fn new(settings: &AuthSettings, source: Arc<dyn SecretSource>) -> Self {
        let store = settings
            .store
            .clone()
            .map(|s| Arc::new(KeyStore::new(source, s)));
        Authenticator {
            mode: settings.mode,
            store,
        }
    }

    /// The authenticator `settings` describe, reading secrets from Secrets Manager as the AWS
    /// variables of `env` (the function's environment) direct.
    pub fn from_settings(settings: &AuthSettings, env: &BTreeMap<String, String>) -> Self {
        Authenticator::new(settings, Arc::new(SecretsManager::from_map(env)))
    }

    /// The mode.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// The key store, when the mode reads one.
    pub fn store(&self) -> Option<&Arc<KeyStore>> {
        self.store.as_ref()
    }

    /// The `WWW-Authenticate` challenge a 401 of this mode carries.
    pub fn challenge(&self) -> Option<&'static str> {
        match self.mode {
            Mode::ApiKey => Some("Bearer realm=\"fluss-gateway\""),
            Mode::Password => Some("Basic realm=\"fluss-gateway\", charset=\"UTF-8\""),
            Mode::Trust | Mode::Authorizer => None,
        }
    }

    /// The caller of a request that presented `presented` (and, in `authorizer` mode, carried
    /// `authorizer_context`): its grant, with the Fluss identity resolved. 401
    /// `unauthenticated` (reason and key id in the log-only detail), 503 when credentials
    /// cannot be checked now.
    pub async fn authenticate(
        &self,
        presented: Presented<'_>,
        authorizer_context: Option<&std::collections::HashMap<String, serde_json::Value>>,
    ) -> Result<Caller, GatewayError> {
        match self.grant(presented, authorizer_context).await? {
            None => Ok(Caller::anonymous()),
            Some(grant) => self.caller(grant).await,
        }
    }

    /// What `presented` grants, without resolving its Fluss identity (the authorizer needs no
    /// SASL secret); `None` in `trust` mode. Errors as [`Authenticator::authenticate`].
    pub async fn grant(
        &self,
        presented: Presented<'_>,
        authorizer_context: Option<&std::collections::HashMap<String, serde_json::Value>>,
    ) -> Result<Option<Grant>, GatewayError> {
        let grant = match (self.mode, &self.store) {
            (Mode::Trust, _) => return Ok(None),
            (Mode::Authorizer, _) => {
                let context = authorizer_context.ok_or_else(|| {
                    GatewayError::new(ErrorCode::Unauthenticated, "credentials required")
                        .with_detail("no authorizer context on the request")
                })?;
                Grant::from_context(context).map_err(|why| {
                    GatewayError::new(ErrorCode::Unauthenticated, "credentials required")
                        .with_detail(why)
                })?
            }
            (_, None) => return Err(GatewayError::internal("no key store configured")),
            (Mode::ApiKey, Some(store)) => match presented {
                Presented::ApiKey(key) => store.verify_key(key).await?,
                Presented::Nothing | Presented::Basic(..) => {
                    return Err(missing(
                        "an API key is required: send `x-api-key: <key>` or `Authorization: Bearer <key>`",
                    ));
                }
                Presented::Unreadable(why) => return Err(missing(why)),
                Presented::Conflicting(why) => return Err(GatewayError::invalid(why)),
            },
            (Mode::Password, Some(store)) => match presented {
                Presented::Basic(user, password) => store.verify_user(&user, &password).await?,
                Presented::Nothing | Presented::ApiKey(_) => {
                    return Err(missing(
                        "credentials are required: send `Authorization: Basic <base64 of user:password>`",
                    ));
                }
                Presented::Unreadable(why) => return Err(missing(why)),
                Presented::Conflicting(why) => return Err(GatewayError::invalid(why)),
            },
        };
        Ok(Some(grant))
    }

    /// The caller `grant` describes, its Fluss identity resolved (a SASL user's secret is read
    /// through the store's cache).
    async fn caller(&self, grant: Grant) -> Result<Caller, GatewayError> {
        let identity = match &self.store {
            Some(store) => store.identity(&grant.identity).await?,
            // Authorizer mode without a store (no secret id) acts only as the service.
            None => match &grant.identity {
                IdentityRef::Service => Identity::Service,
                IdentityRef::Sasl { .. } => {
                    return Err(GatewayError::new(
                        ErrorCode::Unavailable,
                        "the Fluss identity of this caller cannot be loaded",
                    )
                    .with_detail("a SASL identity needs a configured key store"));
                }
            },
        };
        Ok(Caller {
            principal: Principal::Named(grant.principal),
            key_id: grant.key_id,
            scopes: Some(grant.scopes),
            identity,
        })
    }

    /// Reads the key document during init, when the mode has one, so the first request pays
    /// nothing; a failure is logged, not fatal (requests get 503 until it can be read).
    pub async fn warm_up(&self) {
        let Some(store) = &self.store else { return };
        match store.preload().await {
            Ok((keys, users)) => {
                tracing::info!(
                    mode = self.mode.as_str(),
                    keys,
                    users,
                    "authentication ready"
                )
            }
            Err(e) => tracing::warn!(
                mode = self.mode.as_str(),
                problem = e.message(),
                detail = e.detail().unwrap_or_default(),
                "key document not readable at start-up"
            ),
        }
    }
}

fn missing(message: &str) -> GatewayError {
    GatewayError::new(ErrorCode::Unauthenticated, message).with_detail("no usable credentials")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_read_into_credentials() {
        assert_eq!(Presented::from_headers(None, None), Presented::Nothing);
        assert_eq!(
            Presented::from_headers(Some(" k "), Some("Basic x")),
            Presented::ApiKey("k")
        );
        assert_eq!(
            Presented::from_headers(None, Some("bearer k2")),
            Presented::ApiKey("k2")
        );
        assert_eq!(
            Presented::from_headers(None, Some("Basic YWxpY2U6cDpx")),
            Presented::Basic("alice".into(), "p:q".into())
        );
        assert!(matches!(
            Presented::from_headers(None, Some("Digest abc")),
            Presented::Unreadable(_)
        ));
        assert!(matches!(
            Presented::from_headers(None, Some("Basic !!")),
            Presented::Unreadable(_)
        ));
        let key = "flgw_abcdefghijkl_00";
        assert_eq!(
            Presented::from_header_values(&[key], &[]),
            Presented::ApiKey(key)
        );
        assert_eq!(
            Presented::from_header_values(&[key], &[&format!("Bearer {key}")]),
            Presented::ApiKey(key)
        );
        for (keys, authorization) in [
            (vec![key, key], vec![]),
            (vec!["a, b"], vec![]),
            (vec![], vec!["Bearer a", "Bearer b"]),
            (vec![], vec!["Bearer a,Bearer b"]),
            (vec![key], vec!["Bearer flgw_other"]),
            (vec![key], vec!["Basic YWxpY2U6cDpx"]),
        ] {
            assert!(
                matches!(
                    Presented::from_header_values(&keys, &authorization),
                    Presented::Conflicting(_)
                ),
                "{keys:?} {authorization:?}"
            );
        }
        let shown = format!("{:?}", Presented::Basic("alice".into(), "hunter2".into()));
        assert!(!shown.contains("hunter2"), "{shown}");
    }

    #[test]
    fn a_grant_travels_through_the_authorizer_context() {
        let grant = Grant {
            principal: "alice".into(),
            key_id: Some("abcdefghijkl".into()),
            scopes: vec![Scope::everything()],
            identity: IdentityRef::Sasl {
                secret_id: "fluss/alice".into(),
            },
        };
        let context: std::collections::HashMap<_, _> = grant.to_context().into_iter().collect();
        assert!(context.values().all(|v| v.is_string()));
        assert_eq!(Grant::from_context(&context).unwrap(), grant);
        assert!(Grant::from_context(&Default::default()).is_err());
    }
}
