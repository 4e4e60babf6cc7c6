//! The `gateway.security.*` keys: the authentication mode and where the key document lives.

use std::collections::BTreeMap;

use gateway_core::GatewayError;
use gateway_core::settings::{self, Key, Kind, Slot};

use crate::store::StoreSettings;

/// `gateway.security.authentication` (the Fluss Gateway's key).
pub const AUTHENTICATION_KEY: &str = "gateway.security.authentication";
/// `gateway.security.secret-id`: the Secrets Manager secret holding keys and users.
pub const SECRET_ID_KEY: &str = "gateway.security.secret-id";
/// `gateway.security.cache-ttl`: how long the document is used before it is read again.
pub const CACHE_TTL_KEY: &str = "gateway.security.cache-ttl";
/// `gateway.security.refresh-interval`: least time between reads forced by unknown key ids.
pub const REFRESH_INTERVAL_KEY: &str = "gateway.security.refresh-interval";

/// `gateway.security.max-stale`: how long past the TTL the last document keeps serving while
/// Secrets Manager cannot be read.
pub const MAX_STALE_KEY: &str = "gateway.security.max-stale";
/// `gateway.security.refresh-timeout`: the longest one read of Secrets Manager may take.
pub const REFRESH_TIMEOUT_KEY: &str = "gateway.security.refresh-timeout";

/// Set by the Lambda service and by `cargo lambda watch`.
const LAMBDA_RUNTIME_API_ENV: &str = "AWS_LAMBDA_RUNTIME_API";

/// The keys this crate owns, for the settings registry.
pub const KEYS: &[Key] = &[
    Key::new(
        AUTHENTICATION_KEY,
        Kind::Text,
        "trust",
        "who may call: `trust` (anyone, as the service account), `api-key`, `password` (HTTP Basic) or `authorizer` (a Lambda authorizer decided; Lambda only)",
    ),
    Key::new(
        SECRET_ID_KEY,
        Kind::Text,
        "",
        "Secrets Manager name or ARN of the key and user document; required for `api-key` and `password`, and for SASL identities under `authorizer`",
    ),
    Key::new(
        CACHE_TTL_KEY,
        Kind::Duration,
        "60s",
        "how long the key document and SASL identities are used before they are read again: the revocation latency",
    ),
    Key::new(
        REFRESH_INTERVAL_KEY,
        Kind::Duration,
        "2s",
        "least time between two reads of the key document caused by an unknown key id (how soon a new key works; at most the TTL)",
    ),
    Key::new(
        MAX_STALE_KEY,
        Kind::Duration,
        "1h",
        "how long past the TTL the last key document and SASL identities keep serving while Secrets Manager cannot be read (a refresh runs in the background meanwhile); past it, requests get 503 until a read succeeds. Also how long a revoked key may stay valid during an outage",
    ),
    Key::new(
        REFRESH_TIMEOUT_KEY,
        Kind::Duration,
        "2s",
        "the longest one read of the key document or a SASL identity may take before it is abandoned (a hanging Secrets Manager never holds a request whose key is cached)",
    ),
];

/// How callers are authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Everyone, anonymously, as the service account (the default outside `make run`).
    Trust,
    /// API keys in `x-api-key` or `Authorization: Bearer`.
    ApiKey,
    /// HTTP Basic users.
    Password,
    /// A Lambda authorizer checked the key; the route reads its context.
    Authorizer,
}

impl Mode {
    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Trust => "trust",
            Mode::ApiKey => "api-key",
            Mode::Password => "password",
            Mode::Authorizer => "authorizer",
        }
    }
}

/// The parsed `gateway.security.*` keys.
#[derive(Debug, Clone)]
pub struct AuthSettings {
    /// The mode.
    pub mode: Mode,
    /// Where the key document is, when a secret id is set.
    pub store: Option<StoreSettings>,
}

impl AuthSettings {
    /// Reads and checks the keys (either form); every problem at once, by key.
    pub fn from_map(map: &BTreeMap<String, String>) -> Result<Self, GatewayError> {
        let mut mode_text = "trust".to_owned();
        let mut secret_id = String::new();
        let mut ttl = StoreSettings::new("").ttl;
        let defaults = StoreSettings::new("");
        let mut refresh_interval = defaults.refresh_interval;
        let mut max_stale = defaults.max_stale;
        let mut refresh_timeout = defaults.refresh_timeout;
        settings::read(
            map,
            &["gateway.security."],
            &mut [
                (AUTHENTICATION_KEY, Slot::Text(&mut mode_text)),
                (SECRET_ID_KEY, Slot::Text(&mut secret_id)),
                (
                    CACHE_TTL_KEY,
                    Slot::Duration {
                        slot: &mut ttl,
                        allow_zero: false,
                    },
                ),
                (
                    REFRESH_INTERVAL_KEY,
                    Slot::Duration {
                        slot: &mut refresh_interval,
                        allow_zero: false,
                    },
                ),
                (
                    MAX_STALE_KEY,
                    Slot::Duration {
                        slot: &mut max_stale,
                        allow_zero: true,
                    },
                ),
                (
                    REFRESH_TIMEOUT_KEY,
                    Slot::Duration {
                        slot: &mut refresh_timeout,
                        allow_zero: false,
                    },
                ),
            ],
            "security",
        )?;
        let problem = |p: String| {
            Err(GatewayError::invalid(format!(
                "invalid security configuration: {p}"
            )))
        };
        let mode = match mode_text.to_ascii_lowercase().as_str() {
            "trust" => Mode::Trust,
            "api-key" => Mode::ApiKey,
            "password" => Mode::Password,
            "authorizer" => Mode::Authorizer,
            "token" => {
                return problem(format!(
                    "`{AUTHENTICATION_KEY}`: `token` is spelled `api-key` here (keys kept hashed in Secrets Manager)"
                ));
            }
            other => {
                return problem(format!(
                    "`{AUTHENTICATION_KEY}`: {} is not one of trust, api-key, password, authorizer",
                    gateway_core::names::shown(other)
                ));
            }
        };
        if matches!(mode, Mode::ApiKey | Mode::Password) && secret_id.is_empty() {
            return problem(format!(
                "`{SECRET_ID_KEY}`: required when `{AUTHENTICATION_KEY}` is `{}`",
                mode.as_str()
            ));
        }
        if mode == Mode::Authorizer && !map.contains_key(LAMBDA_RUNTIME_API_ENV) {
            return problem(format!(
                "`{AUTHENTICATION_KEY}`: `authorizer` trusts the request context API Gateway sets, so it runs only in Lambda ({LAMBDA_RUNTIME_API_ENV} is not set)"
            ));
        }
        if refresh_interval > ttl {
            return problem(format!(
                "`{REFRESH_INTERVAL_KEY}`: must not exceed `{CACHE_TTL_KEY}`"
            ));
        }
        let store = (!secret_id.is_empty()).then_some(StoreSettings {
            secret_id,
            ttl,
            refresh_interval,
            max_stale,
            refresh_timeout,
        });
        Ok(AuthSettings { mode, store })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gateway_core::settings::map_of;
    use std::time::Duration;

    #[test]
    fn modes_and_their_requirements() {
        let s = AuthSettings::from_map(&map_of(&[])).unwrap();
        assert_eq!(s.mode, Mode::Trust);
        assert!(s.store.is_none());
        let s = AuthSettings::from_map(&map_of(&[
            ("FLUSS_GATEWAY__SECURITY__AUTHENTICATION", "api-key"),
            ("FLUSS_GATEWAY__SECURITY__SECRET_ID", "gw/keys"),
            ("gateway.security.cache-ttl", "5s"),
        ]))
        .unwrap();
        assert_eq!(s.mode, Mode::ApiKey);
        assert_eq!(s.store.unwrap().ttl, Duration::from_secs(5));
        for (env, needle) in [
            (
                vec![(AUTHENTICATION_KEY, "api-key")],
                "secret-id`: required",
            ),
            (vec![(AUTHENTICATION_KEY, "kerberos")], "not one of"),
            (vec![(AUTHENTICATION_KEY, "token")], "spelled `api-key`"),
            (vec![(AUTHENTICATION_KEY, "authorizer")], "only in Lambda"),
            (vec![("gateway.security.secret-idd", "x")], "did you mean"),
            (
                vec![
                    (SECRET_ID_KEY, "x"),
                    (CACHE_TTL_KEY, "1s"),
                    (REFRESH_INTERVAL_KEY, "2s"),
                ],
                "must not exceed",
            ),
        ] {
            let e = AuthSettings::from_map(&map_of(&env)).unwrap_err();
            assert!(e.message().contains(needle), "{env:?}: {}", e.message());
        }
        let lambda = map_of(&[
            (AUTHENTICATION_KEY, "authorizer"),
            ("AWS_LAMBDA_RUNTIME_API", "127.0.0.1:9001"),
        ]);
        assert_eq!(
            AuthSettings::from_map(&lambda).unwrap().mode,
            Mode::Authorizer
        );
    }
}
